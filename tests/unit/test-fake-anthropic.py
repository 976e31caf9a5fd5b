#!/usr/bin/env python3
"""The scripted fake Messages API (tests/support/fake-anthropic.py) speaks the
protocol the real claude expects: TLS with a CA made here, server-sent events
in the real API's order, tool_use input that reassembles from its
input_json_delta pieces, turns chosen by the number of assistant messages,
non-streaming JSON, count_tokens, 404 elsewhere, and a request log without
the key. Runs as any user on 127.0.0.1 (no namespaces, no engine); the
container tests drive the real claude with it.  TAP on stdout."""
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "..", "support", "fake-anthropic.py")

n = failed = 0


def ok(good, name, diag=""):
    global n, failed
    n += 1
    if not good:
        failed += 1
    print(f"{'ok' if good else 'not ok'} {n} - {name}")
    if not good and diag:
        for line in str(diag).splitlines():
            print(f"# {line}")


def certs(d):
    # Same shape as tests/support/fakeapi.sh: a CA and a server certificate
    # for the name the client asks for.
    run = lambda *a: subprocess.run(a, check=True, capture_output=True)
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-days", "2", "-subj", "/CN=test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem")
    run("openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-subj", "/CN=api.anthropic.com", "-keyout", f"{d}/server.key", "-out", f"{d}/server.csr")
    with open(f"{d}/ext.cnf", "w") as fh:
        fh.write("subjectAltName=DNS:api.anthropic.com\nextendedKeyUsage=serverAuth\n")
    run("openssl", "x509", "-req", "-in", f"{d}/server.csr", "-CA", f"{d}/ca.pem", "-CAkey", f"{d}/ca.key",
        "-CAcreateserial", "-days", "2", "-extfile", f"{d}/ext.cnf", "-out", f"{d}/server.pem")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Conn:
    def __init__(self, port, ca):
        ctx = ssl.create_default_context(cafile=ca)
        self.port, self.ctx = port, ctx

    def request(self, method, path, body=None):
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        tls = self.ctx.wrap_socket(raw, server_hostname="api.anthropic.com")  # verifies the chain and the name
        c = http.client.HTTPConnection("api.anthropic.com")
        c.sock = tls
        hdrs = {"x-api-key": "sk-ant-secret-value", "anthropic-version": "2023-06-01",
                "content-type": "application/json"}
        c.request(method, path, body=json.dumps(body) if body is not None else None, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r, data


def sse(data):
    events = []
    for block in data.decode().split("\n\n"):
        if not block.strip():
            continue
        ev = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((ev["event"], json.loads(ev["data"])))
    return events


def main():
    if not shutil.which("openssl"):
        print("1..0 # SKIP openssl not installed")
        return 77
    d = tempfile.mkdtemp(prefix="fake-anthropic-test.")
    proc = None
    try:
        certs(d)
        script = {"turns": [[{"text": "Writing it."}, {"tool": "Write", "input": {
            "file_path": "/workspace/x.txt", "content": "a \"quoted\" line\nand ünïcode, long enough to split"}}],
            [{"tool": "Bash", "input": {"command": "id -u"}}]], "final": "All done."}
        with open(f"{d}/script.json", "w") as fh:
            json.dump(script, fh)
        port = free_port()
        proc = subprocess.Popen([sys.executable, FAKE, "--listen", "127.0.0.1", "--port", str(port),
                                 "--cert", f"{d}/server.pem", "--key", f"{d}/server.key",
                                 "--script", f"{d}/script.json", "--log", f"{d}/log.jsonl",
                                 "--ready", f"{d}/ready"])
        deadline = time.monotonic() + 10
        while not os.path.exists(f"{d}/ready") and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        ok(os.path.exists(f"{d}/ready"), "the fake starts and reports ready")
        c = Conn(port, f"{d}/ca.pem")
        tools = [{"name": "Write", "input_schema": {}}, {"name": "Bash", "input_schema": {}}]
        user = {"role": "user", "content": "go"}

        r, data = c.request("POST", "/v1/messages?beta=true",
                            {"model": "claude-x", "stream": True, "messages": [user], "tools": tools})
        ok(r.status == 200 and r.getheader("Content-Type") == "text/event-stream",
           "streaming answer: 200 text/event-stream over TLS verified against the test CA",
           f"{r.status} {r.getheader('Content-Type')}")
        ev = sse(data)
        names = [e for e, _ in ev]
        want = ["message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta",
                "content_block_stop", "content_block_start"]
        ok(names[:len(want)] == want and names[-2:] == ["message_delta", "message_stop"],
           "events in the real API's order (message_start, blocks, message_delta, message_stop)", names)
        ok(all(d_["type"] == e for e, d_ in ev), "each event's data carries its own type")
        start = ev[0][1]["message"]
        ok(start["role"] == "assistant" and start["content"] == [] and start["stop_reason"] is None
           and "input_tokens" in start["usage"] and start["model"] == "claude-x",
           "message_start holds an empty assistant message with usage", start)
        text = "".join(d_["delta"]["text"] for e, d_ in ev if e == "content_block_delta" and d_["index"] == 0)
        ok(text == "Writing it.", "text deltas reassemble the scripted text", text)
        tu = [d_ for e, d_ in ev if e == "content_block_start" and d_["content_block"]["type"] == "tool_use"]
        ok(len(tu) == 1 and tu[0]["content_block"]["name"] == "Write" and tu[0]["content_block"]["input"] == {}
           and tu[0]["content_block"]["id"].startswith("toolu_"), "tool_use block starts with id, name, empty input", tu)
        pieces = [d_["delta"] for e, d_ in ev if e == "content_block_delta" and d_["index"] == 1]
        ok(len(pieces) > 1 and all(p["type"] == "input_json_delta" for p in pieces),
           "tool input streamed as several input_json_delta pieces", len(pieces))
        ok(json.loads("".join(p["partial_json"] for p in pieces)) == script["turns"][0][1]["input"],
           "the pieces reassemble the scripted tool input exactly")
        md = [d_ for e, d_ in ev if e == "message_delta"][0]
        ok(md["delta"]["stop_reason"] == "tool_use" and "output_tokens" in md["usage"],
           "message_delta: stop_reason tool_use with usage", md)

        tid = tu[0]["content_block"]["id"]
        msgs = [user, {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "Write", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": "File created",
                                              "is_error": False}]},
                {"role": "user", "content": [{"type": "text", "text": "<system-reminder>x</system-reminder>"}]}]
        r, data = c.request("POST", "/v1/messages", {"model": "m", "stream": True, "messages": msgs, "tools": tools})
        ev = sse(data)
        tu = [d_["content_block"]["name"] for e, d_ in ev if e == "content_block_start"
              and d_["content_block"]["type"] == "tool_use"]
        ok(tu == ["Bash"], "the turn follows the number of assistant messages (second turn: Bash)", tu)

        msgs2 = msgs + [{"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}]
        r, data = c.request("POST", "/v1/messages", {"model": "m", "stream": False, "messages": msgs2, "tools": tools})
        body = json.loads(data)
        ok(r.status == 200 and r.getheader("Content-Type") == "application/json" and body["type"] == "message"
           and body["stop_reason"] == "end_turn" and body["content"] == [{"type": "text", "text": "All done."}],
           "non-streaming: one JSON message; after the last turn the final text, end_turn", body)

        r, data = c.request("POST", "/v1/messages", {"model": "m", "stream": False, "messages": [user]})
        body = json.loads(data)
        ok(body["stop_reason"] == "end_turn" and body["content"][0]["type"] == "text",
           "a request offering no tools (a side query) gets plain text", body)
        r, data = c.request("POST", "/v1/messages/count_tokens", {"model": "m", "messages": [user]})
        ok(r.status == 200 and "input_tokens" in json.loads(data), "count_tokens answers input_tokens")
        r, data = c.request("GET", "/api/hello")
        ok(r.status == 404 and json.loads(data)["type"] == "error", "other endpoints: 404 with an error body")

        with open(f"{d}/log.jsonl") as fh:
            log = [json.loads(line) for line in fh]
        ok(len(log) == 6, "one log line per request", len(log))
        ok(all(rec.get("x-api-key") is True for rec in log) and "sk-ant-secret-value" not in open(f"{d}/log.jsonl").read(),
           "the log records that a key was sent, never its value")
        res = [rec["tool_results"] for rec in log if rec.get("turn") == 1]
        ok(res == [[{"tool_use_id": tid, "is_error": False, "content": "File created"}]],
           "the log holds the tool results sent after the last assistant message", res)
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
        shutil.rmtree(d, ignore_errors=True)
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
