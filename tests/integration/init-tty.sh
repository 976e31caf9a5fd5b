#!/usr/bin/env bash
# With a terminal on stdin (script(1) provides a pty; sandbox-init is made
# its session leader with it as controlling terminal, as runc does for
# `docker run -t`), the agent gets it as its own controlling terminal and
# is the foreground process group: Ctrl-C reaches the agent, not PID 1.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
if ! command -v script >/dev/null 2>&1; then
	echo "1..0 # SKIP script(1) not installed"
	exit 77
fi
initenv_setup

# script -e returns the child's status; -f flushes the typescript at once.
ts=$IE/out/typescript
st=0
SHELL=/bin/bash script -qefc "$(IE_TTY=1 initenv_cmd HOST_UID=3200 HOST_GID=3200 -- "$PROBE" report)" \
	"$ts" </dev/null >/dev/null 2>&1 || st=$?
tr -d '\r' <"$ts" >"$IE/out/report"
out=$IE/out/report
check "agent on a terminal exits 0 ($st)" "$st" -eq 0
check "agent's stdin is a terminal" "$(kv "$out" stdin_tty)" = 1
check "agent has a controlling terminal" "$(kv "$out" ctty)" = 1
check "agent leads its own session" "$(kv "$out" session_leader)" = 1
check "agent is the terminal's foreground process group" "$(kv "$out" tty_foreground)" = 1
check "agent runs as 3200" "$(kv "$out" uid)" = 3200
check "agent still has only fds 0-2 ($(kv "$out" fds))" "$(kv "$out" fds)" = 0,1,2

# An interactive shell as the agent has job control: a background job can
# be brought to the foreground (fg needs the terminal's process group).
ts=$IE/out/typescript-jobs
st=0
SHELL=/bin/bash script -qefc "$(IE_TTY=1 initenv_cmd HOST_UID=3200 HOST_GID=3200 -- \
	/bin/bash --norc -ic 'sleep 0.3 & fg %1 >/dev/null && echo "JOBCTL=$?"')" "$ts" </dev/null >/dev/null 2>&1 || st=$?
check "interactive bash as the agent exits 0 ($st)" "$st" -eq 0
ok "interactive bash as the agent brings a job to the foreground" grep -q 'JOBCTL=0' "$ts"
nok "interactive bash as the agent has job control (no warning)" grep -qi 'no job control\|cannot set terminal process group' "$ts"

# Ctrl-C typed on the terminal: the kernel sends SIGINT to the foreground
# group (the agent), which dies of it: 130.
fifo=$IE/out/keys
mkfifo "$fifo"
ts=$IE/out/typescript2
# A background job of this script would start with SIGINT ignored (bash
# does that without job control); reset it, as an interactive shell's
# foreground job would have it (init-identity covers an inherited SIG_IGN).
SHELL=/bin/bash env --default-signal=INT,QUIT \
	script -qefc "$(IE_TTY=1 initenv_cmd HOST_UID=3200 HOST_GID=3200 -- "$PROBE" sleep 60)" \
	"$ts" <"$fifo" >/dev/null 2>&1 &
spid=$!
exec 3>"$fifo"
if wait_until 20 grep -q '^sleeping=' "$ts"; then
	printf '\003' >&3
	st=0
	wait "$spid" || st=$?
	check "Ctrl-C on the terminal ends the agent with SIGINT: 130 ($st)" "$st" -eq 130
else
	nok "agent started on the terminal" true
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
fi
exec 3>&-
tap_done
