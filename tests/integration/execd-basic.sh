#!/usr/bin/env bash
# sandbox-execd: a real daemon and real clients. Allowed commands stream
# straight to the caller's fds (50 MB with a small daemon), exit statuses and
# signals pass through, refusals (unknown tool, wrong token, cwd outside the
# workspace through a symlink, '..' or a host path, malformed frames) are
# typed, audited, and the chain verifies; the token never reaches the log.
# shellcheck disable=SC2016,SC2119 # single-quoted eval bodies; helpers take optional args
set -uo pipefail
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=tests/integration/execd-common.sh
. "$SOURCE_DIR/tests/integration/execd-common.sh"
execd_reexec_in_ns "$@"
execd_setup
execd_conf
execd_start || { echo "Bail out! daemon did not start"; cat "$T/daemon.log"; exit 1; }

check "token file is 0600 and owned by the user" \
	"$(stat -c '%a %U' "$TOKEN")" = "600 $EXECD_USER"
check "socket directory is 0700" "$(stat -c '%a' "$T/run")" = "700"

out=$(cd "$T/ws/sub" && as_user "$T/bin/echo" hello 'wörld' 2>&1)
check "allowed command runs with its output on the caller's stdout" "$out" = "hello wörld"

touch "$T/ws/sub/a-workspace-file"
out=$(cd "$T/ws/sub" && as_user "$T/bin/sh" -c 'pwd; ls -A | wc -l; echo to-stderr >&2' 2>"$T/err")
# The rule (issue 9): no host tool runs in the workspace; each gets an empty
# private directory of its own.
check "the command runs in an empty private directory, not in the workspace" \
	"$(echo "$out" | sed -n 2p) $(case $(echo "$out" | head -n 1) in "$T"/ws*) echo in-ws ;; *) echo elsewhere ;; esac)" = "0 elsewhere"
check "stderr is the caller's stderr" "$(cat "$T/err")" = "to-stderr"
# A private directory may be reused once its command's pid namespace has
# ended (execd/privdir.c; without the spawn server never: execd-cgroup),
# but each command finds it empty: nothing of an earlier command's is left.
(cd "$T/ws" && as_user "$T/bin/sh" -c 'echo left >left-behind; mkdir -p d/e; echo x >d/e/f') >/dev/null 2>&1
n=$(cd "$T/ws" && as_user "$T/bin/sh" -c 'ls -A | wc -l')
check "the next command's private directory is empty (nothing the last one wrote)" "$n" = 0

out=$(cd "$T/ws" && echo from-stdin | as_user "$T/bin/cat")
check "stdin is the caller's stdin" "$out" = "from-stdin"

st=0
(cd "$T/ws" && as_user "$T/bin/sh" -c 'exit 42') || st=$?
check "exit status passes through" "$st" -eq 42
st=0
(cd "$T/ws" && as_user "$T/bin/sh" -c 'kill -TERM $$') || st=$?
check "death by signal is 128+N" "$st" -eq 143

st=0
(cd "$T/ws" && as_user "$WRAPPER" sh -c 'exit 3') || st=$?
check "sandbox-exec TOOL ARGS works like the link" "$st" -eq 3

rss0=$(execd_rss_kb)
bytes=$(cd "$T/ws" && as_user "$T/bin/sh" -c 'head -c 50000000 /dev/zero' | wc -c)
rss1=$(execd_rss_kb)
diag "daemon VmHWM before ${rss0} kB, after 50 MB through a pipe ${rss1} kB"
check "50 MB stream through the caller's pipe arrives complete" "$bytes" -eq 50000000
check "the daemon does not buffer the stream (VmHWM < 32 MB)" "$rss1" -lt 32768

env_out=$(cd "$T/ws" && as_user env SECRET_IN_CLIENT=1 "$T/bin/sh" -c 'env' | sort)
check "the command's environment is the allowlist, not the client's" \
	"$(echo "$env_out" | grep -c SECRET_IN_CLIENT)" -eq 0
check "PATH is fixed by the daemon" "$(echo "$env_out" | grep '^PATH=')" = "PATH=/usr/local/bin:/usr/bin:/bin"
for v in PAGER=cat EDITOR=false VISUAL=false LESSSECURE=1; do
	check "no pager, editor or prompt on the host: $v" "$(echo "$env_out" | grep -c "^$v\$")" -eq 1
done

n_before=$(audit_count)
st=0
(cd "$T/ws" && as_user "$T/bin/nope" 2>"$T/err") || st=$?
check "unknown tool: wrapper exits 123" "$st" -eq 123
check "unknown tool: one clear line" "$(grep -c 'unknown_tool' "$T/err")" -eq 1

echo "0000000000000000000000000000000000000000000000000000000000000000" >"$T/badtoken"
chmod 644 "$T/badtoken"
st=0
(cd "$T/ws" && as_user env SANDBOX_EXECD_TOKEN="$T/badtoken" "$T/bin/echo" should-not-run \
	>"$T/out" 2>"$T/err") || st=$?
check "wrong token: refused with 123" "$st" -eq 123
check "wrong token: command did not run" "$(cat "$T/out")" = ""
# Refusals before authentication are counted per peer and second (one
# "refused" record with the count), not written one by one.
ok "wrong token: counted in the audit log as unauthenticated" \
	wait_until 5 grep -q '"type":"refused","error":"unauthenticated","count":1,' "$AUDIT"
r=$(raw request --token "$(token)x" --tool echo --cwd "$T/ws" --arg=x)
case $r in "error unauthenticated"*) tap_result 0 "raw: token + 1 byte is unauthenticated" ;;
*) tap_result 1 "raw: token + 1 byte is unauthenticated ($r)" ;; esac

ln -s "$T/outside" "$T/ws/escape"
ln -s ../../../../../../../etc "$T/ws/relescape"
ln -s /proc/self/cwd "$T/ws/magic"
ln -s sub "$T/ws/inside"
for c in "$T/ws/escape" "$T/ws/relescape" "$T/ws/magic" "$T/ws/sub/.." "$T/ws/sub/../../outside" \
	"$T/outside" "$T/wsx" "/etc" "relative/path" "$T/ws/escape/deeper"; do
	r=$(raw request --token "$(token)" --tool echo --cwd "$c" --arg=x)
	case $r in "error path_outside_workspace"*) tap_result 0 "cwd '$c' is path_outside_workspace" ;;
	*) tap_result 1 "cwd '$c' is path_outside_workspace (got: $r)" ;; esac
done
r=$(raw request --token "$(token)" --tool sh --cwd "$T/ws/inside" --arg=-c --arg=true)
check "a symlink that stays inside the workspace is followed" "$r" = "exited 0"
st=0
(cd "$T/outside" && as_user "$T/bin/echo" x 2>/dev/null) || st=$?
check "wrapper in a directory outside the map: 123" "$st" -eq 123
r=$(raw request --token "$(token)" --tool echo --cwd "$T/ws/missing" --arg=x)
check "a cwd missing on the host is path_outside_workspace, saying so" \
	"$(echo "$r" | grep -c '^error path_outside_workspace .*does not exist')" -eq 1
r=$(raw request --token "$(token)" --tool $'x\n\e[2Jforged log line' --cwd "$T/ws" --arg=x)
check "a hostile tool name is unknown_tool" "$(echo "$r" | grep -c '^error unknown_tool')" -eq 1
check "... and does not reach the daemon's log raw" "$(grep -c 'forged log line' "$T/daemon.log")" -eq 0

for m in garbage trailing nofds; do
	r=$(raw "$m" --token "$(token)" --tool echo --cwd "$T/ws")
	check "frame '$m' is refused as malformed" "${r%% *} $(echo "$r" | cut -d' ' -f2)" = "error malformed"
done
r=$(raw oversized --token "$(token)" --tool echo --cwd "$T/ws")
check "oversized frame is refused as too_large" "$(echo "$r" | cut -d' ' -f1-2)" = "error too_large"

st=0
(cd "$T/ws" && as_user env SANDBOX_EXECD_SOCKET="$T/run/none.sock" "$T/bin/echo" x 2>/dev/null) || st=$?
check "no daemon: wrapper exits 121" "$st" -eq 121
st=0
(cd "$T/ws" && as_user env SANDBOX_EXECD_TOKEN="$T/missing" "$T/bin/echo" x 2>/dev/null) || st=$?
check "no token file: wrapper exits 124" "$st" -eq 124

# shellcheck disable=SC2016
(cd "$T/ws" && as_user "$T/bin/echo" $'evil\e[2J\x07\nline2' >/dev/null)
check "control characters in argv are escaped in the log" \
	"$(grep -c 'evil\\u001b\[2J\\u0007\\nline2' "$AUDIT")" -eq 1
# End records follow the replies by a moment (dispatch.c).
wait_until 5 eval 'tail -n 1 "$AUDIT" | grep -q "\"type\":\"end\""'
check "the token never appears in the audit log" "$(grep -c -F "$(token)" "$AUDIT")" -eq 0
check "every refusal after a frame arrived is audited" "$(audit_count)" -gt "$n_before"
ok "audit chain verifies" audit_verify
shown=$("$EXECD" --show-audit "$AUDIT")
check "--show-audit prints one line per record" "$(echo "$shown" | wc -l)" -eq "$(audit_count)"
check "--show-audit escapes terminal controls" "$(echo "$shown" | grep -c $'\e')" -eq 0

execd_stop
check "socket and token are removed at shutdown" "$(find "$T/run" -mindepth 1 | wc -l)" -eq 0
tap_done
