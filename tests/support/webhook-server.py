#!/usr/bin/env python3
"""A real HTTP approval service for sandbox-execd's webhook backend (tests).

  webhook-server.py PORTFILE LOGFILE [--token TOKEN] [--tls CERT KEY]

Listens on 127.0.0.1 with an ephemeral port, writes the port to PORTFILE once
it accepts connections, and appends one JSON line per request to LOGFILE
(method, path, whether the bearer token matched, the request body). With
--token, a request without "Authorization: Bearer TOKEN" gets 401. With
--tls it speaks HTTPS with that certificate and key.

POST / answers according to the request's reason (SANDBOX_REASON); the
default approves `git status`/`git log` and `kubectl get` and denies everything else:

  approve        approved                 deny        denied with a reason
  env            approved with GH_TOKEN and AWS_SESSION_TOKEN in "env"
  pending        pending; GET /<id> answers pending twice, then approved
  pending-deny   pending; GET /<id> answers pending once, then denied
  forever        pending, and pending on every poll
  malformed      a body that is not JSON       extra   an unknown key
  slow           answers after 5 seconds      error500  HTTP 500
  redirect       302 to /approve-me (which would approve)
  huge           a 200 kB body                 badid   pending with id "../x"
  duplicate      {"decision":"denied","decision":"approved"} (json.loads takes the last)
"""
import argparse
import json
import os
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PARSER = argparse.ArgumentParser()
PARSER.add_argument("portfile")
PARSER.add_argument("logfile")
PARSER.add_argument("--token")
PARSER.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
ARGS = PARSER.parse_args()
PORTFILE, LOGFILE, TOKEN = ARGS.portfile, ARGS.logfile, ARGS.token
LOCK = threading.Lock()
POLLS = {}  # id -> [mode, count]


def decide_default(req):
    sub = req.get("subcommand") or []
    if req.get("tool") == "git" and sub[:1] in (["status"], ["log"]):
        return {"decision": "approved", "reason": "webhook approves git %s" % sub[0]}
    if req.get("tool") == "kubectl" and sub[:1] == ["get"]:
        return {"decision": "approved", "reason": "webhook approves kubectl get"}
    return {"decision": "denied", "reason": "webhook denies this command"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet
        pass

    def record(self, body):
        auth = self.headers.get("Authorization")
        entry = {"method": self.command, "path": self.path,
                 "token_ok": TOKEN is not None and auth == "Bearer " + TOKEN,
                 "has_auth": auth is not None, "body": body}
        with LOCK, open(LOGFILE, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def send(self, code, payload, headers=None):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def authorized(self):
        if TOKEN is None:
            return True
        if self.headers.get("Authorization") == "Bearer " + TOKEN:
            return True
        self.send(401, {"error": "unauthorized"})
        return False

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length).decode("utf-8", "replace")
        try:
            req = json.loads(raw)
        except ValueError:
            req = {}
        self.record(req)
        if not self.authorized():
            return
        mode = req.get("reason")
        if self.path == "/approve-me":
            self.send(200, {"decision": "approved"})
        elif mode == "approve":
            self.send(200, {"decision": "approved"})
        elif mode == "deny":
            self.send(200, {"decision": "denied", "reason": "the reviewer said no"})
        elif mode == "env":
            self.send(200, {"decision": "approved", "reason": "credentials issued",
                            "env": {"GH_TOKEN": "ghs_webhooksecret789",
                                    "AWS_SESSION_TOKEN": "sess-webhook-000"}})
        elif mode in ("pending", "pending-deny", "forever"):
            pid = "req-%s" % (req.get("request_id") or "x")
            with LOCK:
                POLLS[pid] = [mode, 0]
            self.send(200, {"decision": "pending", "id": pid})
        elif mode == "malformed":
            self.send(200, b"<html>approved</html>")
        elif mode == "extra":
            self.send(200, {"decision": "approved", "admin": True})
        elif mode == "duplicate":
            self.send(200, b'{"decision":"denied","decision":"approved"}')
        elif mode == "slow":
            time.sleep(5)
            self.send(200, {"decision": "approved"})
        elif mode == "error500":
            self.send(500, {"decision": "approved"})
        elif mode == "redirect":
            self.send(302, b"", {"Location": "/approve-me"})
        elif mode == "huge":
            self.send(200, {"decision": "approved", "reason": "x" * 200000})
        elif mode == "badid":
            self.send(200, {"decision": "pending", "id": "../x"})
        else:
            self.send(200, decide_default(req))

    def do_GET(self):
        self.record(None)
        if not self.authorized():
            return
        pid = self.path.rstrip("/").rsplit("/", 1)[-1]
        with LOCK:
            state = POLLS.get(pid)
            if state:
                state[1] += 1
        if not state:
            self.send(404, {"error": "unknown id"})
        elif state[0] == "forever" or (state[0] == "pending" and state[1] <= 2):
            self.send(200, {"decision": "pending", "id": pid})
        elif state[0] == "pending-deny" and state[1] <= 1:
            self.send(200, {"decision": "pending", "id": pid})
        elif state[0] == "pending-deny":
            self.send(200, {"decision": "denied", "reason": "rejected after review"})
        else:
            self.send(200, {"decision": "approved", "reason": "approved after review"})


class Server(ThreadingHTTPServer):
    # The default backlog of 5 drops concurrent connects, and a retried SYN
    # takes a second: longer than the tests' webhook_timeout_ms.
    request_queue_size = 128

    def handle_error(self, request, client_address):
        pass  # clients that abort (oversized answers, timeouts) are expected


def main():
    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if ARGS.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(ARGS.tls[0], ARGS.tls[1])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    tmp = PORTFILE + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, PORTFILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
