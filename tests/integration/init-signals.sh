#!/usr/bin/env bash
# PID 1 forwards SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH and
# SIGTERM to the agent (sent from outside the namespace to PID 1, received
# by the agent from PID 1); the agent's status after SIGTERM passes through.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

out=$IE/out/signals
initenv_start HOST_UID=2300 HOST_GID=2300 -- "$PROBE" signals >"$out" 2>"$out.err"
if ! wait_until 20 grep -q '^ready=1' "$out" || ! p1=$(initenv_pid1); then
	echo "Bail out! the agent did not start"
	sed 's/^/# /' "$out.err"
	exit 1
fi
for sig in INT HUP QUIT USR1 USR2 WINCH TERM; do
	kill -s "$sig" "$p1"
	ok "SIG$sig is forwarded to the agent, from PID 1" wait_until 10 grep -qx "got=SIG$sig from=1" "$out"
done
initenv_wait
check "agent's status after SIGTERM passes through: 3 ($IE_STATUS)" "$IE_STATUS" -eq 3
check "each signal arrived exactly once" "$(grep -c '^got=' "$out")" -eq 7

# A stopped and continued agent is not an exited one: PID 1 keeps waiting.
out=$IE/out/stopped
initenv_start HOST_UID=2300 HOST_GID=2300 -- "$PROBE" sleep 60 >"$out" 2>"$out.err"
if wait_until 20 grep -q '^sleeping=' "$out" && agent=$(initenv_agent_pid) && p1=$(initenv_pid1); then
	kill -STOP "$agent"
	ok "the agent stops" wait_until 10 grep -q '^State:.*T' "/proc/$agent/status"
	kill -CONT "$agent"
	running() { ! grep -q '^State:.*T' "/proc/$agent/status"; }
	ok "the agent continues" wait_until 10 running
	check "PID 1 is still there" -d "/proc/$p1"
	kill -TERM "$p1"
	initenv_wait
	check "then SIGTERM via PID 1 ends it: 143 ($IE_STATUS)" "$IE_STATUS" -eq 143
else
	nok "agent started" true
fi
tap_done
