#!/usr/bin/env bash
# Per-command cgroups (execd/cgroup.c), as root, in the test's own cgroup v2
# subtree, delegated to the daemon's user the way systemd delegates (the
# directory and its cgroup.procs, cgroup.threads and cgroup.subtree_control
# chowned). Each command runs in a child cgroup of the daemon's, and
# cgroup.kill ends its setsid and double-fork descendants on timeout,
# disconnect and exit; the cgroup is removed afterwards. The second daemon
# has no sandbox-execd-reap beside it (no pid namespace: only the process
# group and the cgroup), so what dies there dies by cgroup.kill; the third,
# without a writable cgroup and without the reaper, is the control: its
# setsid descendant outlives the command.
# shellcheck disable=SC2119
set -uo pipefail
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=tests/integration/execd-common.sh
. "$SOURCE_DIR/tests/integration/execd-common.sh"
execd_reexec_in_ns "$@"

CG2=$(awk '{ for (i = 1; i < NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") { print $5; exit } ; break } }' /proc/self/mountinfo)
OWN=$(sed -n 's/^0:://p' /proc/self/cgroup)
if [ -z "$CG2" ] || [ -z "$OWN" ]; then
	echo "1..0 # SKIP no cgroup v2 hierarchy here"
	exit 77
fi
SUB=${CG2%/}${OWN%/}/cs-execd-cgroup-$$
if ! mkdir "$SUB" 2>/dev/null; then
	echo "1..0 # SKIP cannot create a cgroup under ${CG2%/}${OWN%/}"
	exit 77
fi
if [ ! -e "$SUB/cgroup.kill" ]; then
	rmdir "$SUB"
	echo "1..0 # SKIP no cgroup.kill (Linux before 5.14)"
	exit 77
fi
cg_cleanup() { # everything in our subtree is ours: the daemons and their commands
	[ -d "$SUB" ] || return 0
	echo 1 >"$SUB/cgroup.kill" 2>/dev/null
	wait_until 5 grep -q 'populated 0' "$SUB/cgroup.events"
	for d in "$SUB"/*/; do [ -d "$d" ] && rmdir "$d"; done
	rmdir "$SUB"
}
execd_setup
trap 'execd_cleanup; cg_cleanup' EXIT
chown "$EXECD_USER:" "$SUB" "$SUB/cgroup.procs" "$SUB/cgroup.threads" "$SUB/cgroup.subtree_control"
execd_private_binaries

alive() { pgrep -f "^sleep $1\$" >/dev/null; }
gone() { for n in "$@"; do ! alive "$n" || return 1; done; }
no_cmd_cgroups() { ! compgen -G "$SUB/sandbox-execd-*" >/dev/null; }
tree() { # tree N: setsid and double-fork descendants, then the command waits
	echo "setsid sleep ${1}1 & (sleep ${1}2 &) ; sleep ${1}3"
}
# detached N: a command that exits once its setsid descendant has left its
# session and process group (a file it writes after setsid says so), and a
# double-forked one.
detached() {
	echo "setsid sh -c 'touch $T/ws/left-$1; exec sleep ${1}1' & (sleep ${1}2 &); while [ ! -e $T/ws/left-$1 ]; do :; done; exit 0"
}
# trees N: timeout, disconnect and normal exit with descendants
trees() {
	local n=$1 what=$2 c
	(cd "$T/ws" && as_user "$T/bin/sh" -c "$(tree "${n}1")" >/dev/null 2>&1) &
	c=$!
	wait_until 5 alive "${n}13"
	check "$what: control: the descendants were running" "$(alive "${n}11" && alive "${n}12" && echo yes)" = yes
	wait "$c"
	ok "$what: timeout: setsid and double-fork descendants gone within 1 s" wait_until 1 gone "${n}11" "${n}12" "${n}13"
	(cd "$T/ws" && exec "${RUN_AS[@]}" env -i PATH="$T/bin:/usr/bin:/bin" SANDBOX_EXECD_SOCKET="$SOCK" \
		SANDBOX_EXECD_TOKEN="$TOKEN" "$T/bin/sh" -c "$(tree "${n}2")" >/dev/null 2>&1) &
	c=$!
	wait_until 5 alive "${n}23"
	check "$what: control: the descendants were running" "$(alive "${n}21" && alive "${n}22" && echo yes)" = yes
	kill -9 "$c"
	wait "$c" 2>/dev/null
	ok "$what: disconnect: setsid and double-fork descendants gone within 1 s" wait_until 1 gone "${n}21" "${n}22" "${n}23"
	(cd "$T/ws" && as_user "$T/bin/sh" -c "$(detached "${n}3")" >/dev/null 2>&1)
	ok "$what: normal exit: descendants gone within 1 s" wait_until 1 gone "${n}31" "${n}32"
	ok "$what: no command cgroup is left behind" wait_until 2 no_cmd_cgroups
}

# The daemon into the delegated subtree, with its children (the spawn
# server and its ready PID 1): a delegation (systemd's Delegate=yes) starts
# them all there, and a command can only join a cgroup below the one its
# PID 1 came from.
into_sub() {
	local p
	for p in "$1" $(pgrep -P "$1"); do echo "$p" >"$SUB/cgroup.procs"; done
}

# --- 1: delegated subtree, with the reaper -----------------------------------
execd_conf "command_timeout_ms = 1500"
execd_start || { echo "Bail out! daemon did not start"; cat "$T/daemon.log"; exit 1; }
into_sub "$EXECD_PID"
OUT=$(cd "$T/ws" && as_user "$T/bin/sh" -c "cat /proc/self/cgroup; ls -d $SUB/sandbox-execd-*; cat $SUB/sandbox-execd-*/cgroup.procs" 2>&1)
diag "$OUT"
check "the command runs in a cgroup of its own below the daemon's, as the root of its cgroup namespace" \
	"$(echo "$OUT" | grep -c '^0::/$'):$(echo "$OUT" | grep -c "^$SUB/sandbox-execd-")" = "1:1"
check "... the cgroup holds the command's processes" "$(echo "$OUT" | grep -c '^[0-9][0-9]*$')" -ge 1
ok "... and the daemon said where" grep -q "Per-command cgroups under '$SUB'" "$T/daemon.log"
ok "... which is gone once the command is" wait_until 2 no_cmd_cgroups
# The delegated parent is the user's, and so is the command. Its cgroup
# namespace is rooted at its own cgroup, which stops it moving itself out
# where the cgroup2 mount has nsdelegate (systemd's default); without it
# the kernel does not check, and the pid namespace is what still ends it.
OUT=$(cd "$T/ws" && as_user "$T/bin/sh" -c "echo 0 >$SUB/cgroup.procs && echo escaped; $(detached 744)" 2>&1)
if awk -v m="$CG2" '$5 == m' /proc/self/mountinfo | grep -q nsdelegate; then
	check "a command cannot move itself out into the daemon's cgroup (nsdelegate)" \
		"$(echo "$OUT" | grep -c '^escaped$')" -eq 0
else
	skip "a command cannot move itself out into the daemon's cgroup" \
		"this cgroup2 mount has no nsdelegate: it can ($(echo "$OUT" | grep -c '^escaped$') escaped)"
fi
ok "... and whatever it started after is gone with its pid namespace" wait_until 1 gone 7441 7442
trees 71 "cgroup + namespace"
execd_stop

# --- 2: delegated subtree, no reaper: only the cgroup kills the tree --------
rm -f "$T/prog/sandbox-execd-reap"
: >"$T/daemon.log"
execd_start || { echo "Bail out! daemon did not start (no reaper)"; cat "$T/daemon.log"; exit 1; }
into_sub "$EXECD_PID"
ok "no reaper: the daemon says its commands get no pid namespace" grep -q 'without their own pid namespace' "$T/daemon.log"
trees 72 "cgroup alone"
execd_stop

# --- 3: control: no writable cgroup, no reaper -------------------------------
: >"$T/daemon.log"
execd_start || { echo "Bail out! daemon did not start (control)"; cat "$T/daemon.log"; exit 1; }
(cd "$T/ws" && as_user "$T/bin/sh" -c "$(detached 733)" >/dev/null 2>&1)
ok "control: the daemon found no usable cgroup" wait_until 2 grep -q 'No per-command cgroups' "$T/daemon.log"
sleep_pid=$(pgrep -f '^sleep 7331$')
check "control: without cgroup and namespace a setsid descendant outlives its command" -n "$sleep_pid"
[ -n "$sleep_pid" ] && kill "$sleep_pid"
execd_stop
ok "the audit chain verifies" audit_verify
tap_done
