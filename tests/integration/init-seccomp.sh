#!/usr/bin/env bash
# The agent's seccomp filter: every syscall the issue lists answers EPERM
# (clone3: ENOSYS or EPERM), and the same probe run under
# `sandbox-init --seccomp=off` (same uid, same empty capability sets) shows
# the filter is what refuses it: there the kernel answers something else.
# Where a capability check comes first (the control is EPERM too), the
# agent's filter is replayed in a root process with every capability.
# Everyday calls (fork, threads, inet/unix sockets, ioctl) keep working.
# The probe's source says, per syscall, which arguments prove what.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

on=$IE/out/filter
off=$IE/out/control
st_on=0 st_off=0
initenv_run HOST_UID=2000 HOST_GID=2000 -- "$PROBE" syscalls >"$on" 2>"$on.err" || st_on=$?
initenv_run HOST_UID=2000 HOST_GID=2000 -- --seccomp=off "$PROBE" syscalls >"$off" 2>"$off.err" || st_off=$?
initenv_run HOST_UID=2000 HOST_GID=2000 -- --seccomp=off "$PROBE" report >"$IE/out/report-off" 2>/dev/null
"$PROBE" syscalls --expect >"$IE/out/expect"

check "probe under the filter exits 0 ($st_on)" "$st_on" -eq 0
check "probe without the filter exits 0 ($st_off)" "$st_off" -eq 0
ok "--seccomp=off warns loudly on stderr" grep -qi 'seccomp' "$off.err"
nok "the filtered run printed no such warning" grep -qi 'seccomp.*off\|off.*seccomp' "$on.err"
check "control really runs without a filter (Seccomp=$(kv "$IE/out/report-off" Seccomp))" \
	"$(kv "$IE/out/report-off" Seccomp)" = 0
check "control has the same empty capability set (CapEff=$(kv "$IE/out/report-off" CapEff))" \
	"$(kv "$IE/out/report-off" CapEff)" = 0000000000000000

n_expect=$(grep -c = "$IE/out/expect")
check "the filter run reported all $n_expect cases ($(grep -c = "$on"))" "$(grep -c = "$on")" -eq "$n_expect"

while IFS='=' read -r name expect; do
	f=$(kv "$on" "$name")
	c=$(kv "$off" "$name")
	case $expect in
	blocked)
		check "$name: EPERM under the filter ($f), not EPERM without it ($c)" \
			"$f" = EPERM -a -n "$c" -a "$c" != EPERM
		;;
	blocked-cap)
		check "$name: EPERM under the filter ($f; unprivileged without it: $c, see the root replay below)" \
			"$f" = EPERM
		;;
	blocked-nosys)
		check "$name: refused as a whole under the filter ($f), let through or EINVAL without it ($c)" \
			"(" "$f" = EPERM -o "$f" = ENOSYS ")" -a -n "$c" -a "$c" != EPERM -a "$c" != ENOSYS
		;;
	allowed)
		check "$name: allowed under the filter ($f; without it: $c)" \
			-n "$f" -a "$f" != EPERM -a "${f#signal:}" = "$f"
		;;
	*)
		nok "$name: unknown expectation '$expect'" true
		;;
	esac
done <"$IE/out/expect"

# The privileged replay: the agent's filter, read back from the kernel,
# loaded into a root process with every capability (seccomp-replay, in
# fresh mount/pid/net namespaces) and the same process without it. Here no
# capability check can answer EPERM, so the filter is the only difference,
# also for the blocked-cap cases above.
replay=$BUILD_DIR/tests/support/seccomp-replay
initenv_start HOST_UID=2000 HOST_GID=2000 -- "$PROBE" sleep 120 >"$IE/out/sleep" 2>"$IE/out/sleep.err"
if wait_until 20 grep -q '^sleeping=' "$IE/out/sleep" && agent=$(initenv_agent_pid); then
	st_r=0 st_c=0
	(cd / && "$replay" "$agent" "$PROBE" syscalls) >"$IE/out/root-filter" 2>"$IE/out/root-filter.err" || st_r=$?
	(cd / && "$replay" --no-filter "$agent" "$PROBE" syscalls) >"$IE/out/root-control" 2>/dev/null || st_c=$?
	check "root probe under the agent's filter exits 0 ($st_r)" "$st_r" -eq 0
	[ "$st_r" -eq 0 ] || sed 's/^/# /' "$IE/out/root-filter.err"
	check "root probe without it exits 0 ($st_c)" "$st_c" -eq 0
	while IFS='=' read -r name expect; do
		f=$(kv "$IE/out/root-filter" "$name")
		c=$(kv "$IE/out/root-control" "$name")
		case $expect in
		blocked | blocked-cap)
			check "$name as root with every capability: EPERM under the agent's filter ($f), not without it ($c)" \
				"$f" = EPERM -a -n "$c" -a "$c" != EPERM
			;;
		blocked-nosys)
			check "$name as root: refused as a whole under the agent's filter ($f), not without it ($c)" \
				"(" "$f" = EPERM -o "$f" = ENOSYS ")" -a -n "$c" -a "$c" != EPERM -a "$c" != ENOSYS
			;;
		*) ;;
		esac
	done <"$IE/out/expect"
	p1=$(initenv_pid1) && kill -TERM "$p1"
	initenv_wait
else
	nok "agent started for the replay" true
fi

for name in fork pthread_create socket_inet_stream socket_unix personality_query; do
	check "$name: same result with and without the filter ($(kv "$on" "$name") / $(kv "$off" "$name"))" \
		"$(kv "$on" "$name")" = "$(kv "$off" "$name")"
done
tap_done
