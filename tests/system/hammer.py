#!/usr/bin/python3
"""Hammer a socket with one-request connections until a stop file appears.

usage: hammer.py SOCKET STOP_FILE [THREADS [REQUEST ANSWER_PREFIX]]
       (at most 60 s; also stops if STOP_FILE's directory goes)

REQUEST defaults to host.sock's {"cmd":"list"}, ANSWER_PREFIX to {"version":1,"ok":true;
an agent's socket: '{"cmd":"status"}' '{"kind":"status"'.

Each thread loops: connect, send {"cmd":"list"}, read one line. Every attempt prints one
line to stdout: "ok", or the errno name of a failed connect (ECONNREFUSED, ENOENT, ...),
or "bad <what was read>" for anything else. The system test reads these lines, so a
restart that refuses even one connection shows up as an ECONNREFUSED line.
"""
import errno
import os
import socket
import sys
import threading
import time

sock_path, stop_file = sys.argv[1], sys.argv[2]
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 4
request = (sys.argv[4] if len(sys.argv) > 4 else '{"cmd":"list"}').encode() + b"\n"
expect = (sys.argv[5] if len(sys.argv) > 5 else '{"version":1,"ok":true').encode()
out_lock = threading.Lock()


def emit(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def one_request():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)  # hivectl's budget: every non-streaming verb answers well inside it
    try:
        try:
            s.connect(sock_path)
        except OSError as e:
            return errno.errorcode.get(e.errno, str(e.errno)) if e.errno else repr(e)
        s.sendall(request)
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        if data.startswith(expect):
            return "ok"
        return "bad " + repr(data[:200])
    except OSError as e:
        return "bad " + repr(e)
    finally:
        s.close()


def loop():
    # Also stop when the bed's directory is gone (the harness was interrupted and tore the bed
    # down) or after a minute: never outlive the test.
    deadline = time.monotonic() + 60
    bed_dir = os.path.dirname(stop_file)
    while not os.path.exists(stop_file) and os.path.isdir(bed_dir) and time.monotonic() < deadline:
        emit(one_request())


workers = [threading.Thread(target=loop) for _ in range(threads)]
for w in workers:
    w.start()
for w in workers:
    w.join()
