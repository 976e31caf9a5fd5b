#!/usr/bin/env python3
"""A loopback git smart-HTTP remote over HTTPS with basic auth, for the git
relay tests and benchmarks: every request must carry the one credential
(user:password); the repositories under ROOT are served by the real
`git http-backend` (CGI), so clone, fetch and push behave as on a forge.

  git-https-server.py --root DIR --cert PEM --key PEM --user U --password P \
      --port-file FILE --log FILE [--readonly REPO]... [--bind ADDR] [--port N]

It listens on 127.0.0.1 (or --bind, e.g. a simulated internet's host
address), port 0 unless --port (the kernel picks; written to --port-file)
and logs one JSON line per request: method, path, whether the credential
matched, and the raw Authorization header when it did NOT match (so a test
can show that a canary credential never reached it)."""
import argparse
import base64
import json
import os
import ssl
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

P = argparse.ArgumentParser()
P.add_argument("--root", required=True)
P.add_argument("--cert", required=True)
P.add_argument("--key", required=True)
P.add_argument("--user", required=True)
P.add_argument("--password", required=True)
P.add_argument("--port-file", required=True)
P.add_argument("--log", required=True)
P.add_argument("--readonly", action="append", default=[])
P.add_argument("--bind", default="127.0.0.1")
P.add_argument("--port", type=int, default=0)
A = P.parse_args()
WANT = "Basic " + base64.b64encode(("%s:%s" % (A.user, A.password)).encode()).decode()
LOCK = threading.Lock()
GIT = "/usr/bin/git"


def log(entry):
    with LOCK, open(A.log, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        n = int(self.headers.get("Content-Length", "0") or "0")
        return self.rfile.read(n) if n else b""

    def deny(self, auth):
        log({"method": self.command, "path": self.path, "auth_ok": False,
             "authorization": auth})
        body = b"authentication required\n"
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="git"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_git(self):
        auth = self.headers.get("Authorization")
        body = self.read_body() if self.command == "POST" else b""
        if auth != WANT:
            self.deny(auth)
            return
        path, _, query = self.path.partition("?")
        repo = path.lstrip("/").split("/")[0]
        if (repo in A.readonly and ("git-receive-pack" in path or
                                    "service=git-receive-pack" in query)):
            log({"method": self.command, "path": self.path, "auth_ok": True, "refused": "readonly"})
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        env = {
            "PATH": "/usr/bin:/bin",
            "GIT_PROJECT_ROOT": A.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REMOTE_USER": A.user,
            "REMOTE_ADDR": self.client_address[0],
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "GIT_CONFIG_NOSYSTEM": "1",
            "HOME": A.root,
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        proc = subprocess.run([GIT, "http-backend"], input=body, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        out = proc.stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = out.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        log({"method": self.command, "path": self.path, "auth_ok": True, "status": status,
             "stderr": proc.stderr.decode("utf-8", "replace")[-500:]})
        self.send_response(status)
        for k, v in headers:
            if k.lower() not in ("content-length", "transfer-encoding"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = handle_git
    do_POST = handle_git


def main():
    srv = ThreadingHTTPServer((A.bind, A.port), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(A.cert, A.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = A.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, A.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
