#!/usr/bin/env python3
"""Sum test results over meson testlog.json files and plain TAP files.

A TAP test counts each of its `ok`/`not ok` lines (SKIP lines count as
skipped); a test whose output has no TAP lines counts once by its result.
Prints the closing line "N passed, M failed[, K skipped]" and exits 1 when
anything failed or nothing ran."""
import json
import re
import sys

# A TAP test line: "ok", "ok 3", "ok 3 - what", "ok - what", "ok # SKIP".
# Not a program's own output that happens to start with "ok" ("ok 0.5", a
# probe's reply passed through): that is no test and must not count.
TAP = re.compile(r"^(not ok|ok)(?=$|\s+(?:\d+(?:\s|$)|-|#))(.*)$")


def count_tap(text):
    p = f = s = 0
    seen = False
    for line in text.splitlines():
        m = TAP.match(line)
        if not m:
            continue
        seen = True
        if m.group(1) == "not ok":
            f += 1
        elif re.search(r"#\s*SKIP", m.group(2), re.I):
            s += 1
        else:
            p += 1
    return seen, p, f, s


def main(argv):
    passed = failed = skipped = 0
    taps = []
    logs = []
    it = iter(argv)
    for a in it:
        if a == "--tap":
            taps.extend(it)
        else:
            logs.append(a)
    for path in logs:
        try:
            fh = open(path, encoding="utf-8", errors="replace")
        except OSError:
            print(f"missing test log {path}", file=sys.stderr)
            failed += 1
            continue
        with fh:
            for line in fh:
                t = json.loads(line)
                res = t.get("result", "")
                if res == "EXPECTEDFAIL":
                    # should_fail (tap-selftest): its failing TAP lines are
                    # the point; the expected failure is one pass.
                    passed += 1
                    continue
                if res == "UNEXPECTEDPASS":
                    failed += 1
                    print(f"failed: {t.get('name')} passed but should fail", file=sys.stderr)
                    continue
                seen, p, f, s = count_tap(t.get("stdout") or "")
                if seen:
                    # A TAP test that crashed after its last line still fails.
                    if res in ("FAIL", "TIMEOUT", "ERROR") and f == 0:
                        f = 1
                    passed, failed, skipped = passed + p, failed + f, skipped + s
                elif res in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif res == "SKIP":
                    skipped += 1
                else:
                    failed += 1
                    print(f"failed: {t.get('name')} ({res})", file=sys.stderr)
    for path in taps:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                _, p, f, s = count_tap(fh.read())
        except OSError:
            continue
        passed, failed, skipped = passed + p, failed + f, skipped + s
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
