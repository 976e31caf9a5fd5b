#!/usr/bin/env bash
# PID 1 reaps every orphan: 100 double-forked grandchildren reparent to it
# and exit at once while the agent still runs; none may stay a zombie.
# When the agent exits, what it left behind gets SIGTERM, then SIGKILL, and
# PID 1 exits with the agent's status.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

out=$IE/out/orphans
st=0
initenv_run HOST_UID=2200 HOST_GID=2200 -- "$PROBE" orphans 100 >"$out" 2>"$out.err" || st=$?
check "orphans probe exits 0 ($st)" "$st" -eq 0
check "100 orphans created ($(kv "$out" orphans))" "$(kv "$out" orphans)" = 100
check "their reaper is PID 1 ($(kv "$out" reaper))" "$(kv "$out" reaper)" = 1
check "all 100 reparented to PID 1 ($(kv "$out" orphans_reparented))" "$(kv "$out" orphans_reparented)" = 100
check "none left after release ($(kv "$out" orphans_left))" "$(kv "$out" orphans_left)" = 0
check "no zombie in the pid namespace while the agent runs ($(kv "$out" zombies_after))" \
	"$(kv "$out" zombies_after)" = 0

# A process left behind that handles SIGTERM: it records SIGTERM, and PID 1
# still exits with the agent's own status 7.
rec=$IE/out/leftover-term
st=0
initenv_run HOST_UID=2200 HOST_GID=2200 -- "$PROBE" leave-behind "$rec" >"$IE/out/lb" 2>&1 || st=$?
check "agent status 7 passes through with a leftover process ($st)" "$st" -eq 7
ok "the leftover process got SIGTERM" grep -qx 'got=SIGTERM' "$rec"

# One that ignores SIGTERM: SIGKILL after the grace period, still status 7.
rec=$IE/out/leftover-ignore
st=0
start=$SECONDS
initenv_run HOST_UID=2200 HOST_GID=2200 -- "$PROBE" leave-behind "$rec" ignore-term >"$IE/out/lb2" 2>&1 || st=$?
check "agent status 7 passes through when the leftover ignores SIGTERM ($st)" "$st" -eq 7
check "PID 1 exits within 30 s ($((SECONDS - start)) s)" $((SECONDS - start)) -lt 30
tap_done
