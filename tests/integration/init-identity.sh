#!/usr/bin/env bash
# sandbox-init as PID 1: the agent runs as HOST_UID/HOST_GID with every
# capability set empty, NoNewPrivs, a seccomp filter, only fds 0-2 and a
# cleaned environment; PID 1 keeps only CAP_KILL; /etc/passwd, /etc/group
# and the home follow the new ids.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

out=$IE/out/report
err=$IE/out/report.err
st=0
# Stray descriptors (one writable, one on a root-only file) and PID 1's own
# variables, which must all stay out of the agent.
initenv_run HOST_UID=2345 HOST_GID=2345 CODE_SANDBOX_PROFILE=strict CODE_SANDBOX_DEBUG=1 \
	EXTRA_ALLOWED_DOMAINS= LD_LIBRARY_PATH=/nonexistent LD_CS_TEST=1 TERM=xterm \
	-- "$PROBE" report >"$out" 2>"$err" 7</dev/null 8>"$IE/out/leak" 9<"$IE/etc/shadow" 1000</dev/null || st=$?
check "agent exits 0 (status $st)" "$st" -eq 0
[ "$st" -eq 0 ] || sed 's/^/# /' "$err"

for k in uid euid suid gid egid sgid; do
	check "agent $k is 2345 ($(kv "$out" "$k"))" "$(kv "$out" "$k")" = 2345
done
groups=$(kv "$out" groups)
check "supplementary groups are at most devuser's own ('$groups')" "$groups" = "" -o "$groups" = 2345
for k in CapInh CapPrm CapEff CapBnd CapAmb; do
	check "agent $k is empty ($(kv "$out" "$k"))" "$(kv "$out" "$k")" = 0000000000000000
done
check "agent NoNewPrivs is 1" "$(kv "$out" NoNewPrivs)" = 1
check "agent Seccomp is 2 (filter mode)" "$(kv "$out" Seccomp)" = 2
check "setuid(0) fails with EPERM" "$(kv "$out" setuid0)" = EPERM
check "setgid(0) fails with EPERM" "$(kv "$out" setgid0)" = EPERM
check "only fds 0,1,2 are open ($(kv "$out" fds))" "$(kv "$out" fds)" = 0,1,2
check "signal mask is empty ($(kv "$out" SigBlk))" "$(kv "$out" SigBlk)" = 0000000000000000
check "no signal is ignored ($(kv "$out" SigIgn))" "$(kv "$out" SigIgn)" = 0000000000000000
check "agent is PID 1's child" "$(kv "$out" ppid)" = 1

agent_env=$(sed -n 's/^env\.//p' "$out")
leaked=$(printf '%s\n' "$agent_env" | grep -E '^(HOST_UID|HOST_GID|EXTRA_ALLOWED_DOMAINS|CODE_SANDBOX_[A-Z_]*|LD_[A-Z_]*)=' || true)
check "PID 1's variables and LD_* are removed ('${leaked//$'\n'/ }')" -z "$leaked"
check "HOME=/home/devuser" "$(kv "$out" env.HOME)" = /home/devuser
check "USER=devuser" "$(kv "$out" env.USER)" = devuser
check "LOGNAME=devuser" "$(kv "$out" env.LOGNAME)" = devuser
check "SHELL is devuser's login shell" "$(kv "$out" env.SHELL)" = /bin/bash
path=$(kv "$out" env.PATH)
path_is_absolute() { [ -n "$1" ] && ! printf '%s\n' "$1" | tr : '\n' | grep -qv '^/'; }
ok "PATH is set, absolute entries only ('$path')" path_is_absolute "$path"

ok "passwd: devuser is 2345:2345" grep -qx 'devuser:x:2345:2345:devuser:/home/devuser:/bin/bash' "$IE/etc/passwd"
ok "group: devuser is 2345" grep -qE '^devuser:x:2345:' "$IE/etc/group"
check "passwd keeps mode 0644 root:root" "$(stat -c %a:%U:%G "$IE/etc/passwd")" = 644:root:root
check "group keeps mode 0644 root:root" "$(stat -c %a:%U:%G "$IE/etc/group")" = 644:root:root
check "home is owned 2345:2345" "$(stat -c %u:%g "$IE/home/devuser")" = 2345:2345
check "home files are owned 2345:2345" "$(stat -c %u:%g "$IE/home/devuser/.profile")" = 2345:2345

# The agent cannot signal or trace PID 1 (root, in another session).
ok "the agent cannot signal PID 1" initenv_run HOST_UID=2345 HOST_GID=2345 -- /bin/sh -c '! kill -TERM 1 2>/dev/null'
ok "the agent cannot read PID 1's memory" initenv_run HOST_UID=2345 HOST_GID=2345 -- /bin/sh -c '! head -c1 /proc/1/mem 2>/dev/null'

# NoNewPrivs in effect: a setuid-root program gives the agent nothing. The
# control runs the same program as an ordinary uid without sandbox-init.
cp "$PROBE" "$IE/bin/probe-suid"
chmod 4755 "$IE/bin/probe-suid"
ctl=$(setpriv --reuid 2345 --regid 2345 --clear-groups "$IE/bin/probe-suid" report 2>/dev/null | sed -n 's/^euid=//p')
check "control: the setuid-root program runs as euid 0 for an ordinary uid ($ctl)" "$ctl" = 0
initenv_run HOST_UID=2345 HOST_GID=2345 -- "$IE/bin/probe-suid" report >"$IE/out/suid" 2>/dev/null
check "as the agent it does not gain euid 0 ($(kv "$IE/out/suid" euid))" "$(kv "$IE/out/suid" euid)" = 2345
check "as the agent it gains no capability ($(kv "$IE/out/suid" CapEff))" "$(kv "$IE/out/suid" CapEff)" = 0000000000000000

# devuser listed as a member of other groups in the image (sudo among
# them): the agent still gets no supplementary group but its own.
cp -a "$IE/etc/group" "$IE/out/group.keep"
sed -i -E 's/^(sudo|users|audio):([^:]*):([^:]*):$/\1:\2:\3:devuser/' "$IE/etc/group"
ok "the image lists devuser as a member of sudo" grep -qx 'sudo:x:27:devuser' "$IE/etc/group"
initenv_run HOST_UID=2345 HOST_GID=2345 -- "$PROBE" report >"$IE/out/groups" 2>/dev/null
g=$(kv "$IE/out/groups" groups)
check "membership of sudo/users/audio in the image gives the agent no such group ('$g')" "$g" = "" -o "$g" = 2345
cp -a "$IE/out/group.keep" "$IE/etc/group"

# Without HOST_UID/HOST_GID, PID 1 refuses to start (init-hostids.sh has
# the details; only --test-subreaper keeps devuser's current ids).
st=0
initenv_run -- "$PROBE" report >"$out" 2>"$err" || st=$?
check "without HOST_UID/HOST_GID PID 1 refuses: exit 112 ($st)" "$st" -eq 112
check "without HOST_UID/HOST_GID the agent never ran" ! -s "$out"

# PID 1 while the agent runs: only CAP_KILL (bit 5) and CAP_NET_ADMIN (bit 12), one thread.
# sandbox-init itself starts with SIGINT, SIGQUIT and SIGPIPE ignored.
IE_SIGIGN=1 initenv_start HOST_UID=2345 HOST_GID=2345 -- "$PROBE" sleep 60 >"$out" 2>"$err"
if wait_until 20 grep -q '^sleeping=' "$out" && wait_until 10 initenv_pid1_idle && p1=$(initenv_pid1); then
	# CAP_KILL (0x20) to signal the agent, CAP_NET_ADMIN (0x1000) for the
	# firewall's set updates from the DNS gate (step 3 registers it).
	check "PID 1 CapEff is CAP_KILL and CAP_NET_ADMIN only ($(awk '/^CapEff/ {print $2}' "/proc/$p1/status"))" \
		"$(awk '/^CapEff/ {print $2}' "/proc/$p1/status")" = 0000000000001020
	check "PID 1 CapPrm is CAP_KILL and CAP_NET_ADMIN only ($(awk '/^CapPrm/ {print $2}' "/proc/$p1/status"))" \
		"$(awk '/^CapPrm/ {print $2}' "/proc/$p1/status")" = 0000000000001020
	check "PID 1 CapAmb and CapInh are empty" \
		"$(awk '/^Cap(Amb|Inh)/ {print $2}' "/proc/$p1/status" | sort -u)" = 0000000000000000
	check "PID 1 is single-threaded" "$(awk '/^Threads/ {print $2}' "/proc/$p1/status")" = 1
	diag "PID 1 also has CapBnd $(awk '/^CapBnd/ {print $2}' "/proc/$p1/status"), NoNewPrivs $(awk '/^NoNewPrivs/ {print $2}' "/proc/$p1/status"), Seccomp $(awk '/^Seccomp:/ {print $2}' "/proc/$p1/status")"
	check "PID 1 still runs as root (uid 0)" "$(awk '/^Uid/ {print $2}' "/proc/$p1/status")" = 0
	# SIG_IGN survives execve: the agent must get default dispositions all
	# the same, or Ctrl-C (and SIGPIPE on a closed pipe) stop working.
	if a=$(initenv_agent_pid); then
		check "agent of a PID 1 started with signals ignored ignores none (SigIgn $(awk '/^SigIgn/ {print $2}' "/proc/$a/status"), PID 1's $(awk '/^SigIgn/ {print $2}' "/proc/$p1/status"))" \
			"$(awk '/^SigIgn/ {print $2}' "/proc/$a/status")" = 0000000000000000
	else
		nok "agent found under PID 1" true
	fi
	kill -TERM "$p1"
	initenv_wait
	check "SIGTERM to PID 1 ends the agent: status 143 ($IE_STATUS)" "$IE_STATUS" -eq 143
else
	nok "agent started under PID 1" true
	sed 's/^/# /' "$err"
fi
tap_done
