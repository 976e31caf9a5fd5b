#!/usr/bin/env python3
"""A real policy program for sandbox-execd's exec backend (tests).

Reads the request JSON on stdin and writes one decision on stdout. It
approves `git status`, `git log`, `kubectl get` and `true`, and denies everything else, with
a reason. Misbehaviour for the tests is chosen by the request's own reason
(SANDBOX_REASON), so one program covers every case:

  hang      never answers (and leaves a child holding stdout open)
  garbage   prints something that is not JSON
  exit3     answers "approved" but exits with status 3
  crash     answers "approved" then dies of SIGSEGV
  env       approves with credentials in "env"
  badenv    approves with LD_PRELOAD in "env"
  huge      prints more than the backend accepts
  pending   answers "pending" (the exec backend does not poll)
  (named *noread*) answers "approved" without reading its input
  trailing  a valid approval followed by a second document
  extra     an approval with an unknown key
  duplicate {"decision":"denied","decision":"approved"}
"""
import json
import os
import signal
import sys
import time

APPROVED = {("git", "status"), ("git", "log"), ("kubectl", "get"), ("true", None)}


def answer(obj):
    sys.stdout.write(json.dumps(obj))
    sys.stdout.flush()


def main():
    # Installed under a name containing "noread", it answers without reading
    # its input (the daemon must survive the broken pipe).
    mode = "noread" if "noread" in os.path.basename(sys.argv[0]) else None
    if mode != "noread":
        req = json.load(sys.stdin)
        mode = req.get("reason")
    else:
        req = None
    if mode == "hang":
        if os.fork() == 0:
            time.sleep(3600)
            os._exit(0)
        time.sleep(3600)
        return 0
    if mode == "garbage":
        sys.stdout.write("approved, trust me\n")
        return 0
    if mode == "exit3":
        answer({"decision": "approved"})
        return 3
    if mode == "crash":
        answer({"decision": "approved"})
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "env":
        answer({"decision": "approved", "reason": "credentials issued",
                "env": {"GH_TOKEN": "ghs_exectoken123", "AWS_SESSION_TOKEN": "sess-456"}})
        return 0
    if mode == "badenv":
        answer({"decision": "approved", "env": {"LD_PRELOAD": "/tmp/x.so"}})
        return 0
    if mode == "huge":
        sys.stdout.write('{"decision":"approved","reason":"' + "x" * 200000 + '"}')
        return 0
    if mode == "pending":
        answer({"decision": "pending", "id": "abc"})
        return 0
    if mode == "trailing":
        sys.stdout.write('{"decision":"approved"}{"decision":"approved"}')
        return 0
    if mode == "extra":
        answer({"decision": "approved", "admin": True})
        return 0
    if mode == "duplicate":
        sys.stdout.write('{"decision":"denied","decision":"approved"}')
        return 0
    if req is None:
        answer({"decision": "approved", "reason": "did not read"})
        return 0
    sub = req["subcommand"][0] if req["subcommand"] else None
    if (req["tool"], sub) in APPROVED and req["parse"]["complete"]:
        answer({"decision": "approved", "reason": "exec-policy approves %s" % req["tool"]})
    else:
        answer({"decision": "denied",
                "reason": "exec-policy denies %s %s" % (req["tool"], sub or "")})
    return 0


if __name__ == "__main__":
    sys.exit(main())
