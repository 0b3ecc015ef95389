#!/usr/bin/python3
"""Turn latency as an operator sees it, for tests/agent_image.sh.

usage: turn_latency.py SOCKET AGENT REPLY N

N times, one after the other: send AGENT a message on host.sock (as `hivectl send` does), then
poll host.sock every 20 ms until the turn journal has a new turn of AGENT; it must be `ok`,
and the operator's inbox must have gained a message from AGENT whose body is REPLY (the
stand-in's answer, sent by Claude through the send tool). One line per turn:

    DONE_MS TOOK_MS REPLY_MS

DONE_MS: from the send to the turn recorded (what the operator waits for); TOOK_MS: the turn's
own duration in the turn journal (the harness's start of Claude to its end); REPLY_MS: from the
send to the reply seen in the inbox. Exits non-zero (saying why) on a turn that is not `ok`, a
missing reply or no turn within 120 s.
"""
import json
import socket
import sys
import time

sock_path, agent, reply, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def call(request):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect(sock_path)
        s.sendall(json.dumps(request).encode() + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    answer = json.loads(buf)
    if not answer.get("ok"):
        sys.exit(f"turn_latency: {request['cmd']} answered {answer}")
    return answer


def newest_turn():
    rows = call({"cmd": "turns", "name": agent, "limit": 1}).get("turns") or []
    return rows[0] if rows else None


def replies():
    rows = call({"cmd": "inbox", "limit": 50}).get("messages") or []
    return {m["id"] for m in rows if m.get("from") == agent and m.get("body") == reply}


for i in range(count):
    before = newest_turn()
    last = before["id"] if before else 0
    seen = replies()
    t0 = time.monotonic()
    call({"cmd": "send", "to": agent, "body": f"please greet the operator ({i + 1} of {count})"})
    reply_ms = turn = None
    while time.monotonic() - t0 < 120:
        if reply_ms is None and replies() - seen:
            reply_ms = (time.monotonic() - t0) * 1000
        row = newest_turn()
        if row and row["id"] > last:
            turn = row
            break
        time.sleep(0.02)
    done_ms = (time.monotonic() - t0) * 1000
    if turn is None:
        sys.exit(f"turn_latency: no turn of {agent} recorded within 120 s of message {i + 1}")
    if turn.get("outcome") != "ok":
        sys.exit(f"turn_latency: turn {turn['id']} of {agent} ended {turn.get('outcome')}: {turn.get('error')}")
    if reply_ms is None:
        if not replies() - seen:
            sys.exit(f"turn_latency: turn {turn['id']} of {agent} is recorded but {reply!r} is not in the inbox")
        reply_ms = done_ms
    took_ms = turn["ended_at_ms"] - turn["started_at_ms"]
    print(f"{done_ms:.0f} {took_ms} {reply_ms:.0f}", flush=True)
