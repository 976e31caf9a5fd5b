#!/usr/bin/env bash
# sandbox-execd review findings, as an attacker in the container would try
# them: terraform -chdir taking a command out of the workspace that the
# daemon confined its cwd to; one container holding every request slot with
# connections that never send a frame; a command approved after its client
# left. (The git findings are gone with host-side git: tests/integration/
# gitrelay-*.sh.) Runs in a network
# namespace with loopback only: no packet leaves the machine.
# shellcheck disable=SC2119 # execd_conf/execd_start take optional arguments
set -uo pipefail
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
if [ -z "${EXECD_IN_NETNS:-}" ]; then
	exec unshare --net env EXECD_IN_NETNS=1 "$0" "$@"
fi
ip link set lo up
# shellcheck source=tests/integration/execd-common.sh
. "$SOURCE_DIR/tests/integration/execd-common.sh"
execd_reexec_in_ns "$@"
execd_setup
DENIED=120

ln -s "$WRAPPER" "$T/bin/terraform"
execd_conf "max_concurrent = 4" "max_concurrent_per_peer = 2" "request_read_timeout_ms = 15000" \
	"tool terraform = /bin/echo"
execd_start || { echo "Bail out! daemon did not start"; cat "$T/daemon.log"; exit 1; }

ln -s "$T/outside" "$T/ws/link"
R=$T/ws/repo
mkdir -p "$R/d" && chown -R "$EXECD_USER:" "$R"

st=0
(cd "$T/ws" && as_user "$T/bin/terraform" -chdir=link output >"$T/out" 2>&1) || st=$?
check "terraform -chdir=DIR (same escape as git -C): denied" "$st" -eq $DENIED
st=0
(cd "$T/ws" && as_user "$T/bin/terraform" plan -chdir=x >"$T/out" 2>&1) || st=$?
check "... but -chdir= after the subcommand is an ordinary argument" "$st" -eq 0

# --- one container cannot hold every slot before authenticating -----------
# Container A: four connections that never send a frame (max_concurrent 4,
# per container 2). Container B (another pid namespace) must still be served.
holders=()
for i in 1 2 3 4; do
	"${RUN_AS[@]}" env -i PATH=/usr/bin:/bin python3 "$RAWCLIENT" "$SOCK" hold >"$T/hold$i" &
	holders+=($!)
done
for i in 1 2 3 4; do wait_until 5 grep -qs holding "$T/hold$i"; done
st=0
out=$(cd "$R" && unshare --pid --fork --mount-proc "${RUN_AS[@]}" env -i PATH="$T/bin:/usr/bin:/bin" \
	HOME="$T/home" SANDBOX_EXECD_SOCKET="$SOCK" SANDBOX_EXECD_TOKEN="$TOKEN" \
	"$T/bin/echo" served 2>"$T/err") || st=$?
check "another container is served while one holds silent connections" "$st" -eq 0
check "... with the command's output" "$out" = served
exited() { local n=0 p; for p in "${holders[@]}"; do kill -0 "$p" 2>/dev/null || n=$((n + 1)); done; echo "$n"; }
wait_until 5 test "$(exited)" -ge 2
check "the silent container's connections beyond its share were answered at once" "$(exited)" -eq 2
kill "${holders[@]}" 2>/dev/null
wait "${holders[@]}" 2>/dev/null
execd_stop

# --- a client gone while the webhook deliberated: the command never starts --
# With the spawn server (binaries where the daemon's user can run them), so
# that nothing of the command that never started is left behind either.
execd_private_binaries
python3 "$SOURCE_DIR/tests/support/webhook-server.py" "$T/port" "$T/webhook.log" &
server=$!
wait_until 10 test -s "$T/port"
execd_conf "backend = webhook" "webhook_url = http://127.0.0.1:$(cat "$T/port")/decide" \
	"webhook_timeout_ms = 1000" "webhook_poll_ms = 300" "decision_timeout_ms = 10000"
execd_start || { echo "Bail out! daemon did not start (webhook)"; cat "$T/daemon.log"; exit 1; }
(cd "$T/ws" && exec "${RUN_AS[@]}" env -i PATH="$T/bin:/usr/bin:/bin" HOME="$T/home" \
	SANDBOX_EXECD_SOCKET="$SOCK" SANDBOX_EXECD_TOKEN="$TOKEN" SANDBOX_REASON=pending \
	"$T/bin/sh" -c "touch '$T/ws/ran-after-leave'") &
client=$!
wait_until 10 grep -qs '"pending"' "$T/webhook.log"
kill -9 "$client"
wait "$client" 2>/dev/null
ok "the approval that came after the client left is audited as disconnected" \
	wait_until 10 grep -q '"outcome":"disconnected_before_start"' "$AUDIT"
check "... and the command never ran" "$(test -e "$T/ws/ran-after-leave" && echo ran || echo no)" = no
at_most_two_children() { test "$(pgrep -P "$EXECD_PID" | wc -l)" -le 2; }
# The daemon's children: the spawn server and its one standby PID 1.
ok "... and no PID 1 is left for it" wait_until 5 at_most_two_children
diag "daemon children: $(pgrep -P "$EXECD_PID" | tr '\n' ' ')"
out=$(cd "$T/ws" && as_user env SANDBOX_REASON=pending "$T/bin/echo" still-served 2>&1)
check "a client that waits for the pending approval is served" "$out" = still-served
kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
tap_done
