#!/usr/bin/env python3
"""Hand-made sandbox-execd client for the integration tests: sends requests
the real wrapper never would (any cwd string, wrong fd counts, garbage,
oversized or trailing-byte frames) and prints the reply as one line:
  exited N | signaled N | error KIND MESSAGE | closed
Usage: execd-rawclient.py SOCKET MODE [options]
  MODE request  --token T --tool NAME --cwd PATH [--arg A]...
  MODE garbage | oversized | trailing | nofds | hold   (hold: connect, send nothing)
  MODE extra    a valid request frame followed by bytes in the same send
  MODE late     a valid request frame, then bytes 0.5 s later (while it runs)
  MODE gitstall --token T --url URL --want OID: a git relay fetch (frame type
                3) whose out fd is a pipe this client never reads, its err fd
                another; prints the reply when it comes
"""
import argparse
import os
import socket
import struct
import sys
import time

VERSION, T_REQ, T_REP, T_GIT = 1, 1, 2, 3
GIT_TAGS = {"token": 0x20, "op": 0x21, "url": 0x22, "want": 0x25}
GIT_FETCH = 2
TAGS = {"token": 1, "tool": 2, "arg": 3, "cwd": 4, "reason": 5}
ERRORS = ["malformed", "too_large", "unauthenticated", "unknown_tool", "policy_denied",
          "path_outside_workspace", "busy", "timeout", "internal"]


def field(tag, value):
    return struct.pack(">BI", tag, len(value)) + value


def frame(payload, nfds=3, ftype=T_REQ, length=None):
    n = len(payload) if length is None else length
    return struct.pack(">BBBBI", VERSION, ftype, nfds, 0, n) + payload


def request_payload(a):
    p = field(TAGS["token"], a.token.encode()) + field(TAGS["tool"], a.tool.encode())
    for arg in a.arg or []:
        p += field(TAGS["arg"], arg.encode())
    p += field(TAGS["cwd"], a.cwd.encode())
    return p


def git_fetch_payload(a):
    return (field(GIT_TAGS["token"], a.token.encode()) +
            field(GIT_TAGS["op"], struct.pack(">I", GIT_FETCH)) +
            field(GIT_TAGS["url"], a.url.encode()) + field(GIT_TAGS["want"], a.want.encode()))


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            return None
        b += c
    return b


def read_reply(s):
    h = recv_exact(s, 8)
    if h is None:
        return "closed"
    _, ftype, _, _, n = struct.unpack(">BBBBI", h)
    body = recv_exact(s, n)
    if ftype != T_REP or body is None:
        return "bad-reply"
    fields, i = {}, 0
    while i < len(body):
        tag, ln = struct.unpack(">BI", body[i:i + 5])
        fields[tag] = body[i + 5:i + 5 + ln]
        i += 5 + ln
    kind = struct.unpack(">I", fields[0x10])[0]
    if kind == 0:
        return "exited %d" % struct.unpack(">I", fields[0x11])[0]
    if kind == 1:
        return "signaled %d" % struct.unpack(">I", fields[0x11])[0]
    return "error %s %s" % (ERRORS[struct.unpack(">I", fields[0x12])[0]],
                            fields[0x13].decode(errors="replace"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("mode")
    ap.add_argument("--token", default="")
    ap.add_argument("--tool", default="echo")
    ap.add_argument("--cwd", default="/")
    ap.add_argument("--arg", action="append")
    ap.add_argument("--url", default="")
    ap.add_argument("--want", default="")
    a = ap.parse_args()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(a.socket)
    try:
        return send(a, s)
    except (BrokenPipeError, ConnectionResetError):
        # answered (busy) and closed before reading: the reply is queued
        print(read_reply(s))
        return 0


def send(a, s):
    fds = [0, 1, 2]
    if a.mode == "request":
        socket.send_fds(s, [frame(request_payload(a))], fds)
    elif a.mode == "garbage":
        socket.send_fds(s, [b"\x01\x01\x03\x00\x00\x00\x00\x06\x42\x00\x00\x00\x01x"], fds)
    elif a.mode == "oversized":
        socket.send_fds(s, [frame(b"", length=16 * 1024 * 1024)], fds)
    elif a.mode == "trailing":
        p = request_payload(a)
        socket.send_fds(s, [frame(p, length=len(p) - 1)], fds)
    elif a.mode == "extra":
        socket.send_fds(s, [frame(request_payload(a)) + b"junk"], fds)
    elif a.mode == "late":
        socket.send_fds(s, [frame(request_payload(a))], fds)
        time.sleep(0.5)
        s.sendall(b"junk")
    elif a.mode == "gitstall":
        # The pipe shrunk to one page; our copy of its write end kept, and
        # O_NONBLOCK cleared on the description we share with the daemon
        # over and over, so that whatever the daemon set, its write blocks.
        import fcntl
        import threading
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        fcntl.fcntl(out_w, 1031, 4096)  # F_SETPIPE_SZ
        null = os.open("/dev/null", os.O_RDONLY)
        socket.send_fds(s, [frame(git_fetch_payload(a), ftype=T_GIT)], [null, out_w, err_w])
        stop = time.time() + 2

        def clear():
            while time.time() < stop:
                fl = fcntl.fcntl(out_w, fcntl.F_GETFL)
                fcntl.fcntl(out_w, fcntl.F_SETFL, fl & ~os.O_NONBLOCK)
                time.sleep(0.005)
        threading.Thread(target=clear, daemon=True).start()
        time.sleep(0.5)
        os.read(out_r, 4096)  # one page, then never again
        print(read_reply(s))  # out_r and err_r stay open, never read
        return 0
    elif a.mode == "nofds":
        s.sendall(frame(request_payload(a)))
    elif a.mode == "hold":
        sys.stdout.write("holding\n")
        sys.stdout.flush()
        s.recv(1)
        return 0
    else:
        raise SystemExit("unknown mode")
    print(read_reply(s))
    return 0


if __name__ == "__main__":
    sys.exit(main())
