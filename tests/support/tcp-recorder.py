#!/usr/bin/env python3
"""Loopback TCP listeners that record every connection and the first bytes
received (tests: a request that must never arrive).

  tcp-recorder.py LOGFILE READYFILE PORT...

Appends one line per connection to LOGFILE: "PORT <first 4 KiB, repr>".
Writes READYFILE once all ports listen. 127.0.0.1 only.
"""
import socket
import sys
import threading

LOG, READY, PORTS = sys.argv[1], sys.argv[2], [int(p) for p in sys.argv[3:]]
LOCK = threading.Lock()


def serve(sock, port):
    while True:
        c, _ = sock.accept()
        c.settimeout(2)
        data = b""
        try:
            data = c.recv(4096)
        except OSError:
            pass
        with LOCK, open(LOG, "a") as f:
            f.write("%d %r\n" % (port, data))
        c.close()


socks = []
for p in PORTS:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", p))
    s.listen(16)
    socks.append((s, p))
for s, p in socks:
    threading.Thread(target=serve, args=(s, p), daemon=True).start()
open(READY, "w").close()
threading.Event().wait()
