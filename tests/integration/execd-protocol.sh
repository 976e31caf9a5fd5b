#!/usr/bin/env bash
# sandbox-execd protocol and audit hardening, as an attacker in the container
# would try it: bytes after a request frame (answered `malformed`, the
# command stopped, not a connection reset), a flood of wrong-token requests
# (every one counted, a handful of records, a valid client still served), a
# 200 KB argument (the record is capped and says it was cut), characters
# that fool terminals and readers (C1, U+2028/9, bidi overrides: escaped in
# the JSON and in --show-audit), unknown "must understand" tags.
# Loopback Unix socket only, in fresh pid/mount namespaces.
# shellcheck disable=SC2016,SC2119
set -uo pipefail
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=tests/integration/execd-common.sh
. "$SOURCE_DIR/tests/integration/execd-common.sh"
execd_reexec_in_ns "$@"
execd_setup
execd_private_binaries
execd_conf "max_concurrent = 64" "max_concurrent_per_peer = 16"
execd_start || { echo "Bail out! daemon did not start"; cat "$T/daemon.log"; exit 1; }
load() { as_user python3 "$LOAD" "$SOCK" "$@"; }
kv() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; } # kv LINE KEY

# --- bytes after the frame -------------------------------------------------
r=$(raw extra --token "$(token)" --tool sh --cwd "$T/ws" --arg=-c --arg="touch '$T/ws/ran-extra'")
check "bytes after the frame in the same send: answered malformed (not a reset)" \
	"$(echo "$r" | cut -d' ' -f1-2)" = "error malformed"
check "... and the command did not run" "$(test -e "$T/ws/ran-extra" && echo ran || echo no)" = no
t0=$(date +%s%N)
r=$(raw late --token "$(token)" --tool sh --cwd "$T/ws" --arg=-c --arg="sleep 5; touch '$T/ws/ran-late'")
t1=$(date +%s%N)
check "bytes after the frame while it runs: answered malformed (not a reset)" \
	"$(echo "$r" | cut -d' ' -f1-2)" = "error malformed"
check "... within 3 s (the command was stopped)" $(((t1 - t0) / 1000000)) -lt 3000
sleep 6 # the command would have touched its marker after 5 s
check "... and its marker never appears" "$(test -e "$T/ws/ran-late" && echo ran || echo no)" = no
ok "... its end record says malformed" grep -q '"outcome":"malformed"' "$AUDIT"
r=$(raw request --token "$(token)" --tool echo --cwd "$T/ws" --arg=fine)
check "the control: the same request without extra bytes runs" "$r" = "fine
exited 0"

# --- wrong-token flood -------------------------------------------------------
wait_until 5 eval 'tail -n 1 "$AUDIT" | grep -q "\"type\":\"end\""'
before=$(audit_count)
load badtoken --token "0000$(token | cut -c5-)" --tool echo --cwd "$T/ws" --count 10000 --seconds 10 \
	--threads 8 >"$T/flood.out" &
flood=$!
load steady --token "$(token)" --tool true --cwd "$T/ws" --seconds 9 --interval-ms 100 >"$T/steady.out"
wait "$flood"
f=$(cat "$T/flood.out")
v=$(cat "$T/steady.out")
diag "flood: $f" "valid client meanwhile: $v"
check "10,000 wrong-token requests: all answered unauthenticated" "$(kv "$f" unauthenticated)" -eq 10000
check "... within about 10 s" "$(kv "$f" elapsed_s | cut -d. -f1)" -le 13
check "a valid client during the flood: no failure" "$(kv "$v" ok)" -eq "$(kv "$v" n)"
check "... p99 < 1 s" "$(kv "$v" p99_ms | cut -d. -f1)" -lt 1000
wait_until 5 eval '[ "$(grep -c "\"type\":\"refused\"" "$AUDIT")" -gt 0 ]'
sleep 1.5 # the last window closes after 1 s
grown=$(($(audit_count) - before))
counted=$(grep '"type":"refused"' "$AUDIT" | grep '"error":"unauthenticated"' |
	sed 's/.*"count":\([0-9]*\).*/\1/' | awk '{s += $1} END {print s + 0}')
flood_lines=$((grown - 2 * $(kv "$v" n))) # the valid client's decision and end records aside
diag "audit grew by $grown lines ($flood_lines for the flood); refusals counted: $counted"
check "the flood grew the audit log by fewer than 100 lines" "$flood_lines" -lt 100
check "... and every wrong-token refusal is counted in it" "$counted" -eq 10000
check "... the valid requests have their full records" \
	"$(grep -c '"type":"decision".*"verdict":"allow"' "$AUDIT")" -ge "$(kv "$v" n)"
ok "the audit chain verifies" audit_verify

# --- record size cap ----------------------------------------------------------
big=$(head -c 50000 /dev/zero | tr '\0' 'A') # one argument is at most 64 KiB (WIRE_MAX_ARG)
(cd "$T/ws" && as_user "$T/bin/echo" "$big" "$big" "$big" "$big" >/dev/null)
line=$(grep '"type":"decision"' "$AUDIT" | tail -n 1)
check "200 KB of arguments: the decision record is at most 16 KiB" "${#line}" -le 16384
check "... and carries the truncation marker" "$(echo "$line" | grep -Ec '"truncated":\{"original_bytes":2[0-9]{5},')" -eq 1
check "... the readable form says so" "$("$EXECD" --show-audit "$AUDIT" | grep -c 'TRUNCATED')" -ge 1

# --- characters that fool readers ---------------------------------------------
(cd "$T/ws" && as_user "$T/bin/echo" $'c1\xc2\x9b31m' $'ls\xe2\x80\xa8sep' $'txt\xe2\x80\xaeexe.' $'iso\xe2\x81\xa6x' >/dev/null)
line=$(grep '"type":"decision"' "$AUDIT" | tail -n 1)
check "C1 control escaped in the JSON" "$(echo "$line" | grep -c 'c1\\u009b31m')" -eq 1
check "U+2028 escaped in the JSON" "$(echo "$line" | grep -c 'ls\\u2028sep')" -eq 1
check "bidi override U+202E escaped in the JSON" "$(echo "$line" | grep -c 'txt\\u202eexe.')" -eq 1
check "bidi isolate U+2066 escaped in the JSON" "$(echo "$line" | grep -c 'iso\\u2066x')" -eq 1
check "no raw U+2028 or U+202E anywhere in the log" "$(grep -c $'\xe2\x80\xa8\\|\xe2\x80\xae' "$AUDIT")" -eq 0
shown=$("$EXECD" --show-audit "$AUDIT")
check "--show-audit: no raw C1, U+2028 or bidi control" \
	"$(echo "$shown" | grep -c $'\xc2\x9b\\|\xe2\x80\xa8\\|\xe2\x80\xae\\|\xe2\x81\xa6')" -eq 0
check "--show-audit: shown escaped" "$(echo "$shown" | grep -c 'txt\\u202eexe')" -eq 1
ok "the audit chain verifies" audit_verify

# --- must understand ---------------------------------------------------------
r=$(as_user python3 - "$SOCK" "$(token)" "$T/ws" <<'PY'
import socket, struct, sys
def f(t, v): return struct.pack(">BI", t, len(v)) + v
sock, tok, cwd = sys.argv[1:]
for tag in (0x3f, 0xbf):
    p = f(1, tok.encode()) + f(2, b"true") + f(4, cwd.encode()) + f(tag, b"x")
    s = socket.socket(socket.AF_UNIX); s.connect(sock)
    socket.send_fds(s, [struct.pack(">BBBBI", 1, 1, 3, 0, len(p)) + p], [0, 1, 2])
    h = s.recv(8); b = s.recv(struct.unpack(">I", h[4:])[0])
    print("%#x:%s" % (tag, "error" if struct.unpack(">I", b[5:9])[0] == 2 else "ran"))
PY
)
check "an unknown tag without the optional bit (must understand): refused" "$(echo "$r" | head -n 1)" = "0x3f:error"
check "... with the optional bit 0x80: skipped, the request runs" "$(echo "$r" | tail -n 1)" = "0xbf:ran"

execd_stop
tap_done
