#!/usr/bin/env bash
# bin/code-sandbox's daemon and audit subcommands, as the user, with the
# default socket location ($XDG_RUNTIME_DIR/code-sandbox/execd.sock).
# shellcheck disable=SC2016 # single-quoted eval bodies
set -uo pipefail
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=tests/integration/execd-common.sh
. "$SOURCE_DIR/tests/integration/execd-common.sh"
execd_reexec_in_ns "$@"
execd_setup
CLI=$SOURCE_DIR/bin/code-sandbox
stage_vars "$T/prog" CLI || exit 1
mkdir -p "$T/xdg" "$T/home/.config/code-sandbox"
chmod 700 "$T/xdg"
chown -R "$EXECD_USER:" "$T/xdg" "$T/home"
cat >"$T/home/.config/code-sandbox/execd.conf" <<CONF
backend = allow_all
audit_log = $AUDIT
tool echo = /bin/echo
map $T/ws = $T/ws
CONF
SOCK=$T/xdg/code-sandbox/execd.sock
TOKEN=$T/xdg/code-sandbox/token
cli() {
	"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" XDG_RUNTIME_DIR="$T/xdg" \
		SANDBOX_EXECD="$EXECD" "$CLI" "$@"
}
daemon_pid_alive() { pid=$(cat "$T/xdg/code-sandbox-execd.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null; }
stop_daemon() { cli daemon stop >/dev/null 2>&1 || true; }
trap 'stop_daemon; execd_cleanup' EXIT

st=0
cli daemon status >/dev/null || st=$?
check "status before start: not running (3)" "$st" -eq 3
out=$(cli daemon start)
check "start reports the default socket" "$(echo "$out" | grep -c "$SOCK")" -eq 1
ok "the daemon runs" daemon_pid_alive
check "the socket directory was created 0700" "$(stat -c %a "$T/xdg/code-sandbox")" = 700
ok "status: running" cli daemon status
out=$(cli daemon start)
check "a second start is a no-op" "$(echo "$out" | grep -c 'already running')" -eq 1
out=$(cd "$T/ws" && as_user "$T/bin/echo" via-default-socket)
check "a wrapper reaches it" "$out" = via-default-socket
wait_until 5 eval 'test "$(audit_count)" -eq 2'
out=$(cli audit)
check "audit shows the records" "$(echo "$out" | grep -c 'via-default-socket')" -eq 1
ok "audit verify passes" cli audit verify
ok "audit verify FILE passes" cli audit verify "$AUDIT"
sed -i 's/via-default-socket/edited/' "$AUDIT"
(cd "$T/ws" && as_user "$T/bin/echo" x >/dev/null)
wait_until 5 eval 'test "$(audit_count)" -eq 4'
st=0
out=$(cli audit verify) || st=$?
check "audit verify detects the edit" "$st" -ne 0
check "... naming the line after it" "$(echo "$out" | grep -c 'FAILED at line 2')" -eq 1
out=$(cli daemon stop)
check "stop" "$(echo "$out" | grep -c stopped)" -eq 1
ok "the daemon is gone" wait_until 5 eval '! daemon_pid_alive'
check "the socket is gone" ! -e "$SOCK"
st=0
cli bogus >/dev/null 2>&1 || st=$?
check "an unknown subcommand is a usage error (2)" "$st" -eq 2
tap_done
