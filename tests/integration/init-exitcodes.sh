#!/usr/bin/env bash
# Every exit status 0..255 of the agent passes through PID 1 unchanged;
# death by signal N becomes 128+N; an agent that cannot be executed is 126,
# one that does not exist 127 (also the default command `claude`, absent
# from this test image).
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

for n in $(seq 0 255); do
	st=0
	initenv_run HOST_UID=2400 HOST_GID=2400 -- "$PROBE" exit "$n" >/dev/null 2>"$IE/out/err" || st=$?
	check "exit $n passes through ($st)" "$st" -eq "$n"
done

for sig in HUP INT QUIT ABRT KILL USR1 SEGV USR2 PIPE TERM; do
	num=$(kill -l "$sig")
	st=0
	initenv_run HOST_UID=2400 HOST_GID=2400 -- "$PROBE" kill-self "$sig" >/dev/null 2>"$IE/out/err" || st=$?
	check "death by SIG$sig is 128+$num ($st)" "$st" -eq $((128 + num))
done

printf '#!/bin/sh\nexit 0\n' >"$IE/out/not-executable"
chmod 0644 "$IE/out/not-executable"
st=0
initenv_run HOST_UID=2400 HOST_GID=2400 -- "$IE/out/not-executable" >/dev/null 2>"$IE/out/err" || st=$?
check "an agent that is not executable: 126 ($st)" "$st" -eq 126
ok "not executable: one 'sandbox-init: ' line says why" grep -q "^sandbox-init: .*not-executable" "$IE/out/err"
st=0
initenv_run HOST_UID=2400 HOST_GID=2400 -- "$IE/out" >/dev/null 2>"$IE/out/err" || st=$?
check "a directory as agent: 126 ($st)" "$st" -eq 126
st=0
initenv_run HOST_UID=2400 HOST_GID=2400 -- /nonexistent/agent >/dev/null 2>"$IE/out/err" || st=$?
check "an agent that does not exist: 127 ($st)" "$st" -eq 127
ok "not found: one 'sandbox-init: ' line says why" grep -q "^sandbox-init: .*/nonexistent/agent" "$IE/out/err"
st=0
initenv_run HOST_UID=2400 HOST_GID=2400 -- no-such-agent-in-path >/dev/null 2>"$IE/out/err" || st=$?
check "an agent not found in PATH: 127 ($st)" "$st" -eq 127
st=0
initenv_run HOST_UID=2400 HOST_GID=2400 >/dev/null 2>"$IE/out/err" || st=$?
check "the default command 'claude' is looked up (absent here: 127, $st)" "$st" -eq 127
tap_done
