#!/usr/bin/env python3
"""A scripted fake of the Anthropic Messages API, for driving the real
`claude -p` in the simulated internet (tests/support/simnet.sh).

  fake-anthropic.py --listen ADDR [--listen ADDR6] --port 443 \
      --cert CERT --key KEY --script SCRIPT.json --log LOG.jsonl [--ready FILE]

Serves HTTPS (TLS from CERT/KEY; the test makes a CA with openssl and gives it
to the agent as NODE_EXTRA_CA_CERTS):
  POST /v1/messages               streaming (server-sent events: message_start,
                                  content_block_start / ping / content_block_delta
                                  / content_block_stop per block, message_delta,
                                  message_stop) when "stream": true, else one
                                  JSON message
  POST /v1/messages/count_tokens  {"input_tokens": N}
  anything else                   404 JSON error (logged)

SCRIPT is a JSON object {"turns": [TURN, ...], "final": "text"}; TURN is a list
of blocks, {"text": "..."} or {"tool": "Bash", "input": {...}}. The turn to
answer is the number of assistant messages already in the request (so a
retried request gets the same answer and the server keeps no state). A turn
with a tool block ends with stop_reason "tool_use"; after the last turn the
answer is "final" with stop_reason "end_turn". SCRIPT is read again for every request, so a
test may replace it (rename a new file over it) between sessions. Requests that offer no tools
(Claude Code's own side queries: titles, summaries) get a short text.

LOG gets one JSON line per request: method, path, the headers that matter
(x-api-key is recorded as present or not, never its value), model, stream,
turn, tool names offered, and every tool_result of the last user message
({tool_use_id, is_error, content}), so a test can assert what each scripted
tool call did. With --ready, FILE is written once the sockets listen."""
import argparse
import http.server
import itertools
import json
import socket
import socketserver
import ssl
import sys
import threading

LOCK = threading.Lock()
IDS = itertools.count(1)


def log_line(path, rec):
    with LOCK, open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec, sort_keys=True) + "\n")


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(c.get("text", c.get("content", ""))) if isinstance(c, dict) else str(c)
                         for c in content)
    return str(content)


def tool_results(messages):
    """Every tool_result block of the user messages after the last
    assistant message (Claude Code may send more than one user message)."""
    out = []
    for m in reversed(messages):
        if not isinstance(m, dict) or m.get("role") == "assistant":
            break
        content = m.get("content")
        if not isinstance(content, list):
            continue
        out[:0] = [{"tool_use_id": c.get("tool_use_id"), "is_error": bool(c.get("is_error")),
                    "content": text_of(c.get("content", ""))}
                   for c in content if isinstance(c, dict) and c.get("type") == "tool_result"]
    return out


def blocks_for(script, turn):
    turns = script.get("turns", [])
    if turn < len(turns):
        out = []
        for b in turns[turn]:
            if "tool" in b:
                out.append({"type": "tool_use", "id": f"toolu_fake{turn:02d}{len(out):02d}{next(IDS):06d}",
                            "name": b["tool"], "input": b.get("input", {})})
            else:
                out.append({"type": "text", "text": b["text"]})
        return out
    return [{"type": "text", "text": script.get("final", "Done.")}]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic/1"

    def log_message(self, fmt, *args):  # keep stderr quiet; LOG has everything
        pass

    def send_json(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", f"req_fake{next(IDS):08d}")
        self.end_headers()
        self.wfile.write(body)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return None

    def record(self, **kw):
        rec = {"method": self.command, "path": self.path,
               "host": self.headers.get("Host"),
               "x-api-key": self.headers.get("x-api-key") is not None,
               "anthropic-version": self.headers.get("anthropic-version"),
               "user-agent": self.headers.get("User-Agent")}
        rec.update(kw)
        log_line(self.server.log_path, rec)

    def do_GET(self):
        self.record()
        self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "fake: no such endpoint"}})

    do_HEAD = do_GET

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        body = self.read_body()
        if body is None or not isinstance(body, dict):
            self.record(error="bad json")
            self.send_json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad json"}})
            return
        if path == "/v1/messages/count_tokens":
            self.record(kind="count_tokens")
            self.send_json(200, {"input_tokens": 42})
            return
        if path != "/v1/messages":
            self.record(kind="unknown")
            self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "fake: no such endpoint"}})
            return
        messages = body.get("messages") or []
        tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        turn = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
        main = bool(tools)
        if main:
            with open(self.server.script_path, encoding="utf-8") as fh:
                blocks = blocks_for(json.load(fh), turn)
        else:
            blocks = [{"type": "text", "text": "Scripted session"}]
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        self.record(kind="main" if main else "side", model=body.get("model"), stream=bool(body.get("stream")),
                    turn=turn, tools=tools, tool_results=tool_results(messages),
                    answer=[b.get("name") or "text" for b in blocks])
        msg = {"id": f"msg_fake{next(IDS):08d}", "type": "message", "role": "assistant",
               "model": body.get("model") or "claude-fake", "content": [], "stop_reason": None,
               "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1,
                                                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
        if not body.get("stream"):
            msg.update(content=blocks, stop_reason=stop)
            msg["usage"]["output_tokens"] = 5
            self.send_json(200, msg)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", f"req_fake{next(IDS):08d}")
        self.end_headers()
        self.event("message_start", {"type": "message_start", "message": msg})
        for i, b in enumerate(blocks):
            if b["type"] == "text":
                self.event("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "text", "text": ""}})
                self.event("ping", {"type": "ping"})
                words = b["text"].split(" ")
                for j, w in enumerate(words):
                    piece = w if j == len(words) - 1 else w + " "
                    self.event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "text_delta", "text": piece}})
            else:
                self.event("content_block_start", {"type": "content_block_start", "index": i,
                                                   "content_block": {"type": "tool_use", "id": b["id"],
                                                                     "name": b["name"], "input": {}}})
                js = json.dumps(b["input"])
                for k in range(0, len(js), 16):  # split like the real API does
                    self.event("content_block_delta", {"type": "content_block_delta", "index": i,
                                                       "delta": {"type": "input_json_delta",
                                                                 "partial_json": js[k:k + 16]}})
            self.event("content_block_stop", {"type": "content_block_stop", "index": i})
        self.event("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop, "stop_sequence": None},
                                     "usage": {"output_tokens": 5}})
        self.event("message_stop", {"type": "message_stop"})
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def event(self, name, data):
        chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self.wfile.flush()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, family, ctx, script_path, log_path):
        self.address_family = family
        self.script_path = script_path
        self.log_path = log_path
        self.ctx = ctx
        super().__init__(addr, Handler)

    def get_request(self):
        sock, addr = super().get_request()
        return self.ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=True), addr

    def handle_error(self, request, client_address):
        log_line(self.log_path, {"error": f"{sys.exc_info()[0].__name__}: {sys.exc_info()[1]}",
                                 "peer": str(client_address[0])})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", action="append", required=True)
    ap.add_argument("--port", type=int, default=443)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--ready")
    a = ap.parse_args()
    with open(a.script, encoding="utf-8") as fh:
        json.load(fh)  # fail at start on a broken script
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    ctx.set_alpn_protocols(["http/1.1"])
    servers = []
    for addr in a.listen:
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        servers.append(Server((addr, a.port), fam, ctx, a.script, a.log))
    for s in servers[1:]:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    if a.ready:
        with open(a.ready, "w", encoding="utf-8") as fh:
            fh.write("ready\n")
    servers[0].serve_forever()


if __name__ == "__main__":
    main()
