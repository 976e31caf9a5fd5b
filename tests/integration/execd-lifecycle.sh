#!/usr/bin/env bash
# sandbox-execd under stress of the unhappy kind: a killed client kills its
# command; a hanging command times out with its whole process tree; limits
# answer `busy`; SIGKILL of the daemon mid-request loses no completed audit
# record and a torn last line is recovered; the socket directory must be
# private; systemd socket activation; --check explains a broken backend.
# shellcheck disable=SC2016,SC2119 # single-quoted eval bodies; helpers take optional args
set -uo pipefail
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=tests/integration/execd-common.sh
. "$SOURCE_DIR/tests/integration/execd-common.sh"
execd_reexec_in_ns "$@"
execd_setup

# Live (non-zombie) processes whose command line contains $1.
alive() {
	local p st
	for p in /proc/[0-9]*; do
		st=$(awk '{print $3}' "$p/stat" 2>/dev/null) || continue
		[ "$st" = Z ] && continue
		# Not the wrappers (their command line names the same words, and
		# they exist before the daemon has even read the request).
		tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -v -F -- "$T/bin/" | grep -q -- "$1" && return 0
	done
	return 1
}
not_alive() { ! alive "$1"; }
# The commands of the limits test running on the host (the tools' own
# processes, argv[0] their name: not the wrappers, whose argv[0] is a path,
# nor the daemon's spawn server and its standby PID 1).
daemon_children() { pgrep -fx 'sleep 130[12]' | wc -l; }
bg_client() { # bg_client CMD...: starts the wrapper in the background, sets CLIENT
	cd "$T/ws" || return 1
	"${RUN_AS[@]}" env -i PATH="$T/bin:/usr/bin:/bin" SANDBOX_EXECD_SOCKET="$SOCK" \
		SANDBOX_EXECD_TOKEN="$TOKEN" "$@" >/dev/null 2>&1 &
	CLIENT=$!
	cd - >/dev/null || return 1
}

# --- a killed client kills its command -------------------------------------
execd_conf "command_timeout_ms = 60000" "max_concurrent = 3" "max_concurrent_per_peer = 2"
execd_start || { echo "Bail out! daemon did not start"; exit 1; }
bg_client "$T/bin/sh" -c 'sleep 1201 & sleep 1202; wait'
ok "the command (and its child) started" wait_until 10 alive "sleep 1202"
kill -9 "$CLIENT"
wait "$CLIENT" 2>/dev/null
ok "killing the client kills its command within 5 s" wait_until 5 not_alive "sleep 1202"
ok "... and the command's background child" wait_until 5 not_alive "sleep 1201"
ok "the end is audited as disconnected" wait_until 5 grep -q '"outcome":"disconnected"' "$AUDIT"

# --- limits: busy per container, busy in total ------------------------------
bg_client "$T/bin/sleep" 1301
c1=$CLIENT
bg_client "$T/bin/sleep" 1302
c2=$CLIENT
ok "two commands run for one container" wait_until 10 eval 'test "$(daemon_children)" -eq 2'
st=0
(cd "$T/ws" && as_user "$T/bin/echo" third >/dev/null 2>"$T/err") || st=$?
check "a third from the same container is busy (123)" "$st" -eq 123
check "... with a 'busy' message" "$(grep -c '(busy)' "$T/err")" -eq 1
ok "... and it is counted in the audit log (refusals before authentication are aggregated)" \
	wait_until 5 grep -q '"type":"refused","error":"busy","count":1,' "$AUDIT"
as_user python3 "$RAWCLIENT" "$SOCK" hold >"$T/hold" &
holder=$!
wait_until 5 grep -qs holding "$T/hold"
r=$(raw request --token "$(token)" --tool echo --cwd "$T/ws" --arg=x)
case $r in "error busy"*) tap_result 0 "beyond max_concurrent in total: busy" ;;
*) tap_result 1 "beyond max_concurrent in total: busy (got: $r)" ;; esac
kill "$holder" "$c1" "$c2" 2>/dev/null
wait "$holder" "$c1" "$c2" 2>/dev/null
ok "after the clients left, nothing of theirs runs" wait_until 5 eval 'test "$(daemon_children)" -eq 0'
out=$(cd "$T/ws" && as_user "$T/bin/echo" again)
check "and requests are served again" "$out" = again
execd_stop

# --- a hanging command times out with its whole tree -------------------------
execd_conf "command_timeout_ms = 1500"
execd_start || exit 1
st=0
start=$SECONDS
(cd "$T/ws" && as_user "$T/bin/sh" -c 'sleep 1401 & (sleep 1402 &); sleep 1403' 2>"$T/err") || st=$?
check "a hanging command is stopped: wrapper exits 123" "$st" -eq 123
check "... reporting a timeout" "$(grep -c '(timeout)' "$T/err")" -eq 1
check "... within a few seconds" "$((SECONDS - start))" -lt 10
ok "the whole tree is gone" wait_until 5 eval 'not_alive "sleep 1401" && not_alive "sleep 1402" && not_alive "sleep 1403"'
ok "the end is audited as timeout" wait_until 5 grep -q '"outcome":"timeout"' "$AUDIT"

# --- daemon shutdown stops running commands ----------------------------------
bg_client "$T/bin/sleep" 1451
wait_until 10 alive "sleep 1451"
execd_stop
ok "SIGTERM to the daemon kills the running command" wait_until 5 not_alive "sleep 1451"
st=0
wait "$CLIENT" || st=$?
check "... and its client is told (123; got $st)" "$st" -eq 123
ok "... the end is audited as shutdown" grep -q '"outcome":"shutdown"' "$AUDIT"
check "... the socket and token are gone" "$(find "$T/run" -mindepth 1 | wc -l)" -eq 0

# --- SIGKILL of the daemon mid-request ---------------------------------------
execd_conf
rm -f "$AUDIT"
execd_start || exit 1
for i in $(seq 20); do (cd "$T/ws" && as_user "$T/bin/true" "$i"); done
bg_client "$T/bin/sleep" 1501
wait_until 10 alive "sleep 1501"
ok "20 completed requests wrote 40 records, plus the running one's decision" \
	wait_until 10 eval 'test "$(audit_count)" -eq 41'
n_done=$(audit_count)
execd_kill9
wait "$CLIENT" 2>/dev/null
check "after SIGKILL every record is still there" "$(audit_count)" -eq "$n_done"
ok "and the chain verifies" audit_verify
ok "the running command died with the daemon (PR_SET_PDEATHSIG)" wait_until 5 not_alive "sleep 1501"
printf '{"seq":%d,"prev":"0' "$((n_done + 1))" >>"$AUDIT"
ok "a torn last line (crash mid-write) does not fail verification" audit_verify
check "... but is reported" "$("$EXECD" --verify-audit "$AUDIT" | grep -c 'torn')" -eq 1
execd_start || exit 1
check "restart truncates the torn line, with a warning" "$(grep -c 'torn line' "$T/daemon.log")" -ge 1
check "... and records the recovery" "$(tail -n 1 "$AUDIT" | grep -c '"type":"recovered"')" -eq 1
(cd "$T/ws" && as_user "$T/bin/true")
ok "records: before + recovery + 2" wait_until 10 eval 'test "$(audit_count)" -eq "$((n_done + 3))"'
ok "the chain continues and verifies" audit_verify
execd_stop
printf 'not json\n' >>"$AUDIT"
st=0
"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin "$EXECD" --config "$T/execd.conf" 2>"$T/err" || st=$?
check "a log whose last line is not a record: the daemon refuses to start" "$st" -ne 0
check "... saying why" "$(grep -c 'not an audit record' "$T/err")" -eq 1
mv "$AUDIT" "$AUDIT.bad"

# --- the socket directory must be private ------------------------------------
chmod 755 "$T/run"
st=0
"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin "$EXECD" --config "$T/execd.conf" 2>"$T/err" || st=$?
check "socket directory 0755: refused" "$st" -ne 0
check "... saying it must be 0700" "$(grep -c '0700' "$T/err")" -eq 1
chmod 700 "$T/run"
chown root: "$T/run"
st=0
"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin "$EXECD" --config "$T/execd.conf" 2>"$T/err" || st=$?
check "socket directory owned by someone else: refused" "$st" -ne 0
chown "$EXECD_USER:" "$T/run"
rmdir "$T/run" && ln -s "$T/outside" "$T/run"
st=0
"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin "$EXECD" --config "$T/execd.conf" 2>"$T/err" || st=$?
check "socket directory that is a symlink: refused" "$st" -ne 0
rm "$T/run" && mkdir -m 700 "$T/run" && chown "$EXECD_USER:" "$T/run"

# --- configuration and log must be the user's ---------------------------------
execd_conf
chmod 666 "$T/execd.conf"
st=0
"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin "$EXECD" --config "$T/execd.conf" --check >/dev/null 2>"$T/err" || st=$?
check "a world-writable execd.conf is refused" "$st" -ne 0
check "... saying why" "$(grep -c 'not writable by group or others' "$T/err")" -eq 1
chmod 644 "$T/execd.conf"
rm -f "$AUDIT" && touch "$AUDIT" && chmod 600 "$AUDIT" # root's, not the daemon user's
st=0
"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin timeout 10 "$EXECD" --config "$T/execd.conf" 2>"$T/err" || st=$?
check "an audit log owned by someone else is refused" "$st" -eq 1
check "... saying so" "$(grep -c "Failed to open audit log\|must be ours" "$T/err")" -eq 1
rm -f "$AUDIT"

# --- --check explains what a backend lacks -----------------------------------
execd_conf "backend = static"
st=0
"$EXECD" --config "$T/execd.conf" --check >"$T/out" 2>"$T/err" || st=$?
check "--check: static backend without policy_file fails" "$st" -ne 0
diag "$(cat "$T/err")"
check "... with a message naming the backend" "$(grep -c "backend 'static'" "$T/err")" -eq 1
execd_conf "backend = exec"
st=0
"$EXECD" --config "$T/execd.conf" --check >"$T/out" 2>"$T/err" || st=$?
check "--check: exec backend without exec_program fails" "$st" -ne 0
diag "$(cat "$T/err")"
execd_conf "tool bad = /nonexistent/tool"
st=0
"$EXECD" --config "$T/execd.conf" --check >"$T/out" 2>"$T/err" || st=$?
check "--check: a missing tool binary fails" "$st" -ne 0
execd_conf "tool git = /usr/bin/git"
st=0
"$EXECD" --config "$T/execd.conf" --check >"$T/out" 2>"$T/err" || st=$?
check "--check: a 'tool git' line fails (git goes through the relay, never host git on the workspace)" \
	"$st" -ne 0
check "... naming the relay" "$(grep -c "tool 'git' is not supported" "$T/err")" -eq 1
execd_conf "bogus = 1"
st=0
"$EXECD" --config "$T/execd.conf" --check >"$T/out" 2>"$T/err" || st=$?
check "--check: an unknown key names file:line" "$(grep -c "execd.conf:9: unknown key 'bogus'" "$T/err")" -eq 1
execd_conf
ok "--check: a good configuration passes and prints it" eval '"$EXECD" --config "$T/execd.conf" --check >"$T/out" 2>&1'
check "... with tools checked (executed at the configured path)" "$("$EXECD" --config "$T/execd.conf" --check | grep -c "^tool sh = /bin/sh   # executed at this path, argv\[0\] 'sh'")" -eq 1

# --- systemd socket activation -----------------------------------------------
# With systemd-socket-activate when installed (package systemd), and always
# with tests/support/socket-activate.py doing the same hand-over.
activation_test() { # activation_test NAME HELPER...
	local name=$1
	shift
	execd_conf
	rm -f "$SOCK" "$TOKEN"
	"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" \
		"$@" "$EXECD" --config "$T/execd.conf" 2>>"$T/daemon.log" &
	EXECD_PID=$!
	wait_until 10 test -S "$SOCK"
	as_user python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.close()' "$SOCK"
	ok "$name: the first connection starts the daemon, which writes the token" wait_until 10 test -s "$TOKEN"
	out=$(cd "$T/ws" && as_user "$T/bin/echo" activated)
	check "$name: requests are served on the inherited socket" "$out" = activated
	check "$name: the daemon says so" "$(grep -c 'socket activation' "$T/daemon.log")" -ge 1
	execd_stop
	check "$name: the socket (systemd's) stays, the token goes" "$(find "$T/run" -mindepth 1)" = "$SOCK"
}
ACTIVATE=$SOURCE_DIR/tests/support/socket-activate.py
stage_vars "$T/prog" ACTIVATE || exit 1 # runs as the user
activation_test "socket-activate.py" python3 "$ACTIVATE" "$SOCK"
if command -v systemd-socket-activate >/dev/null; then
	activation_test "systemd-socket-activate" systemd-socket-activate -l "$SOCK" --
else
	skip "systemd-socket-activate" "not installed (package systemd)"
fi
tap_done
