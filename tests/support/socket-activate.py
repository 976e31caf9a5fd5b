#!/usr/bin/env python3
"""Minimal systemd-style socket activation for tests, like
`systemd-socket-activate -l PATH -- CMD...`: listens on a Unix socket and, at
the first connection, execs CMD with the listening socket as fd 3 and
LISTEN_PID/LISTEN_FDS set (sd_listen_fds(3)).
Usage: socket-activate.py SOCKET_PATH CMD [ARGS...]"""
import os
import select
import socket
import sys

path, cmd = sys.argv[1], sys.argv[2:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o600)
s.listen(16)
select.select([s], [], [])
os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS="1")
os.execv(cmd[0], cmd)
