"""A loopback stand-in of the Anthropic Messages API, for the real Claude
Code CLI offline (ANTHROPIC_BASE_URL=http://127.0.0.1:PORT).

Usage: messages_standin.py PORTFILE LOG TO BODY
Listens on 127.0.0.1, or STANDIN_HOST (e.g. 127.0.0.2, an address NO_PROXY
does not keep direct), on a free port, or STANDIN_PORT, written to PORTFILE
(STANDIN_PORT: for a URL that must be known before the stand-in runs, as in
an agent.json deployed first); appends one JSON
line per request to LOG. POST /v1/messages:
- when the request carries the tool_result of a call this stand-in made and
  has not seen answered yet: a text reply quoting it, end_turn;
- else, when it offers the tool `mcp__hyperhive__send`: a tool_use block
  calling it with {"to": TO, "body": BODY}, under an id of its own (so each
  turn of a resumed session, whose history holds the earlier turns' calls
  and results, calls the tool again, also after a restart of the stand-in);
- anything else (title generation, etc.): a short text reply.
Streaming requests get the SSE event sequence of the real API
(message_start, content_block_start/delta/stop, message_delta,
message_stop); others a JSON message. Other paths: 404 JSON error.
With STANDIN_STATUS=401 in the environment every POST /v1/messages is
answered 401 authentication_error instead (a CLI without a valid key).
With STANDIN_TLS_CERT and STANDIN_TLS_KEY (PEM files) it speaks HTTPS with
that certificate (a stand-in of api.anthropic.com behind the hive's model
gateway). STANDIN_MODEL names the model its answers say (default
claude-standin-1, which no price table knows). Each log line carries the credential headers the request came
with (x_api_key, authorization), so a test can say which key reached it.
"""

import json
import os
import ssl
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, LOG, TO, BODY = sys.argv[1:5]
TLS = None
if os.environ.get("STANDIN_TLS_CERT"):
    TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    TLS.load_cert_chain(os.environ["STANDIN_TLS_CERT"], os.environ["STANDIN_TLS_KEY"])
MODEL = os.environ.get("STANDIN_MODEL", "claude-standin-1")
TOOL = "mcp__hyperhive__send"
# The ids of the tool calls this process made whose result has not come back yet.
OPEN = set()
OPEN_LOCK = threading.Lock()


def tool_results(body):
    out = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, list):
            out += [c for c in content if isinstance(c, dict) and c.get("type") == "tool_result"]
    return out


def reply_blocks(body):
    tools = [t.get("name") for t in body.get("tools", []) or []]
    with OPEN_LOCK:
        answered = [r for r in tool_results(body) if r.get("tool_use_id") in OPEN]
        for r in answered:
            OPEN.discard(r.get("tool_use_id"))
        if not answered and TOOL in tools:
            call = f"toolu_standin_{uuid.uuid4().hex[:16]}"
            OPEN.add(call)
    if answered:
        return [{"type": "text", "text": "sent: " + json.dumps(answered[-1].get("content"))}], "end_turn"
    if TOOL in tools:
        return [{"type": "tool_use", "id": call, "name": TOOL,
                 "input": {"to": TO, "body": BODY}}], "tool_use"
    return [{"type": "text", "text": "ok"}], "end_turn"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.not_found()

    def not_found(self):
        data = json.dumps({"type": "error", "error": {"type": "not_found_error", "message": "stand-in"}}).encode()
        self.send_response(404)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def unauthorized(self):
        data = json.dumps({"type": "error", "error": {"type": "authentication_error",
                                                      "message": "invalid x-api-key"}}).encode()
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        with open(LOG, "a") as log:
            log.write(json.dumps({"path": self.path, "model": body.get("model"),
                                  "tools": [t.get("name") for t in body.get("tools", []) or []],
                                  "tool_results": tool_results(body),
                                  "stream": body.get("stream", False),
                                  "x_api_key": self.headers.get("x-api-key"),
                                  "authorization": self.headers.get("authorization")}) + "\n")
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            return self.not_found()
        if os.environ.get("STANDIN_STATUS") == "401":
            return self.unauthorized()
        blocks, stop = reply_blocks(body)
        if body.get("stream"):
            self.stream(blocks, stop)
        else:
            data = json.dumps({"id": "msg_standin", "type": "message", "role": "assistant", "model": MODEL,
                               "content": blocks, "stop_reason": stop, "stop_sequence": None,
                               "usage": {"input_tokens": 10, "output_tokens": 5}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    def stream(self, blocks, stop):
        # Over TLS the body is chunked, as the real API's: a body that ends
        # with the connection would be cut short for a client that (rightly)
        # wants TLS's close_notify, which Python's ssl does not send.
        chunked = TLS is not None
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        if chunked:
            self.send_header("transfer-encoding", "chunked")
        self.end_headers()

        def event(name, data):
            text = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            if chunked:
                text = b"%x\r\n%s\r\n" % (len(text), text)
            self.wfile.write(text)
            self.wfile.flush()

        event("message_start", {"type": "message_start", "message": {
            "id": "msg_standin", "type": "message", "role": "assistant", "model": MODEL, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}})
        for i, block in enumerate(blocks):
            if block["type"] == "tool_use":
                event("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}})
                event("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
            else:
                event("content_block_start", {"type": "content_block_start", "index": i,
                                              "content_block": {"type": "text", "text": ""}})
                event("content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "text_delta", "text": block["text"]}})
            event("content_block_stop", {"type": "content_block_stop", "index": i})
        event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                "usage": {"output_tokens": 5}})
        event("message_stop", {"type": "message_stop"})
        if chunked:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        self.close_connection = True


server = ThreadingHTTPServer((os.environ.get("STANDIN_HOST") or "127.0.0.1",
                              int(os.environ.get("STANDIN_PORT") or 0)), Handler)
if TLS is not None:
    server.socket = TLS.wrap_socket(server.socket, server_side=True)
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(PORTFILE + ".tmp", PORTFILE)
server.serve_forever()
