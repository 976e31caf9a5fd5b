#!/usr/bin/env python3
"""Load generator for sandbox-execd's load tests (loopback Unix socket only).

  execd-load.py SOCKET MODE [options]
  MODE burst     --clients N --within-ms W      N clients connecting within W ms, each
                                                one real request (fds: /dev/null)
  MODE steady    --seconds S --interval-ms I    one request every I ms for S seconds
  MODE connclose --seconds S [--threads K]      connect and close at once, as fast as possible
  MODE badtoken  --count N --seconds S [--threads K]  N wrong-token requests spread over S s

Request options: --token T --tool NAME --cwd PATH [--arg A]...
Prints one line of key=value pairs: ok, busy, error, other (counts),
max_ms, p50_ms, p99_ms (latency of the requests that were sent, connect to reply),
and for badtoken/connclose the number of attempts.
"""
import argparse
import os
import socket
import struct
import threading
import time

TAGS = {"token": 1, "tool": 2, "arg": 3, "cwd": 4}
ERRORS = ["malformed", "too_large", "unauthenticated", "unknown_tool", "policy_denied",
          "path_outside_workspace", "busy", "timeout", "internal"]


def field(tag, value):
    return struct.pack(">BI", tag, len(value)) + value


def request_frame(token, tool, cwd, args):
    p = field(TAGS["token"], token.encode()) + field(TAGS["tool"], tool.encode())
    for a in args:
        p += field(TAGS["arg"], a.encode())
    p += field(TAGS["cwd"], cwd.encode())
    return struct.pack(">BBBBI", 1, 1, 3, 0, len(p)) + p


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            return None
        b += c
    return b


def one(path, frame, nullfd):
    """Returns (result, seconds): result is 'ok', 'exited N', an error name or 'closed'."""
    t0 = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        try:
            socket.send_fds(s, [frame], [nullfd, nullfd, nullfd])
        except (BrokenPipeError, ConnectionResetError):
            pass
        h = recv_exact(s, 8)
        if h is None:
            return "closed", time.monotonic() - t0
        n = struct.unpack(">I", h[4:8])[0]
        body = recv_exact(s, n) or b""
        fields, i = {}, 0
        while i + 5 <= len(body):
            tag, ln = struct.unpack(">BI", body[i:i + 5])
            fields[tag] = body[i + 5:i + 5 + ln]
            i += 5 + ln
        kind = struct.unpack(">I", fields[0x10])[0]
        if kind == 0:
            code = struct.unpack(">I", fields[0x11])[0]
            res = "ok" if code == 0 else "exited %d" % code
        elif kind == 1:
            res = "signaled"
        else:
            res = ERRORS[struct.unpack(">I", fields[0x12])[0]]
        return res, time.monotonic() - t0
    except (ConnectionResetError, BrokenPipeError, ConnectionRefusedError, FileNotFoundError):
        return "closed", time.monotonic() - t0
    finally:
        s.close()


def summary(results, extra=""):
    lat = sorted(t for _, t in results)
    counts = {}
    for r, _ in results:
        k = r if r in ("ok", "busy", "closed", "unauthenticated") else ("error" if r in ERRORS else "other")
        counts[k] = counts.get(k, 0) + 1

    def pct(p):
        if not lat:
            return 0.0
        return lat[min(len(lat) - 1, int(len(lat) * p))] * 1000

    print("n=%d ok=%d busy=%d unauthenticated=%d closed=%d error=%d other=%d max_ms=%.1f p50_ms=%.1f "
          "p99_ms=%.1f%s" % (len(results), counts.get("ok", 0), counts.get("busy", 0),
                             counts.get("unauthenticated", 0), counts.get("closed", 0),
                             counts.get("error", 0), counts.get("other", 0),
                             lat[-1] * 1000 if lat else 0.0, pct(0.5), pct(0.99), extra), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("mode")
    ap.add_argument("--token", default="")
    ap.add_argument("--tool", default="true")
    ap.add_argument("--cwd", default="/")
    ap.add_argument("--arg", action="append", default=[])
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--within-ms", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--interval-ms", type=int, default=100)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--count", type=int, default=10000)
    a = ap.parse_args()
    nullfd = os.open("/dev/null", os.O_RDWR)
    frame = request_frame(a.token, a.tool, a.cwd, a.arg)
    results, lock = [], threading.Lock()

    def record(r):
        with lock:
            results.append(r)

    if a.mode == "burst":
        start = time.monotonic() + 0.2
        step = a.within_ms / 1000.0 / max(1, a.clients)

        def client(i):
            delay = start + i * step - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            record(one(a.socket, frame, nullfd))
        ts = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        summary(results)
    elif a.mode == "steady":
        end = time.monotonic() + a.seconds
        nxt = time.monotonic()
        while time.monotonic() < end:
            record(one(a.socket, frame, nullfd))
            nxt += a.interval_ms / 1000.0
            d = nxt - time.monotonic()
            if d > 0:
                time.sleep(d)
        summary(results)
    elif a.mode == "connclose":
        end = time.monotonic() + a.seconds
        attempts = [0] * a.threads

        def flood(k):
            while time.monotonic() < end:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(a.socket)
                except OSError:
                    pass
                s.close()
                attempts[k] += 1
        ts = [threading.Thread(target=flood, args=(k,)) for k in range(a.threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        print("attempts=%d" % sum(attempts), flush=True)
    elif a.mode == "badtoken":
        per = a.count // a.threads
        t_start = time.monotonic()

        def bad(k):
            for i in range(per):
                due = t_start + (i * a.threads + k) * a.seconds / a.count
                d = due - time.monotonic()
                if d > 0:
                    time.sleep(d)
                record(one(a.socket, frame, nullfd))
        ts = [threading.Thread(target=bad, args=(k,)) for k in range(a.threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        summary(results, " elapsed_s=%.1f" % (time.monotonic() - t_start))
    else:
        raise SystemExit("unknown mode")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
