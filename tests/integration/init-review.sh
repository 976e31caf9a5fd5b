#!/usr/bin/env bash
# Review findings on sandbox-init, each a regression test: what an agent or
# a careless launcher could do to PID 1 or through it.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

# 1. Started with fds 0, 1 or 2 closed, PID 1's first descriptors (the
# signalfd, the firewall's sockets) would take those numbers; PID 1 puts
# /dev/null there first (and its own files are close-on-exec anyway): the
# agent never gets one of PID 1's. (The shell reads its own fds via $$.)
fdcheck() { # fdcheck FD: the agent's shell reports what its fd FD is
	# shellcheck disable=SC2016 # expanded by the agent's shell
	initenv_run HOST_UID=2345 HOST_GID=2345 -- /bin/sh -c \
		'exec 9>"$0"; readlink /proc/$$/fd/'"$1"' >&9 2>/dev/null || echo closed >&9' "$IE/out/fd$1"
}
for fd in 0 1 2; do
	st=0
	case $fd in
	0) fdcheck 0 0<&- >/dev/null 2>&1 || st=$? ;;
	1) fdcheck 1 </dev/null >&- 2>/dev/null || st=$? ;;
	*) fdcheck 2 </dev/null >/dev/null 2>&- || st=$? ;;
	esac
	got=$(cat "$IE/out/fd$fd" 2>/dev/null)
	# PID 1 holds a signalfd (anon_inode), sockets and netlink sockets.
	case $got in anon_inode:* | socket:* | "") good=0 ;; *) good=1 ;; esac
	check "PID 1 started with fd $fd closed: status 0 ($st), the agent's fd $fd is not PID 1's ('$got')" "$st:$good" = 0:1
done

# PID 1 itself, started without fds 0 and 2: its log lines (fd 2) would
# go into whatever it opened first (the signalfd, the firewall's netlink
# or DNS sockets). It must put /dev/null there before opening anything.
initenv_start HOST_UID=2345 HOST_GID=2345 -- "$PROBE" sleep 60 0<&- >"$IE/out/nofd" 2>&-
if wait_until 20 grep -q '^sleeping=' "$IE/out/nofd" && p1=$(initenv_pid1); then
	for fd in 0 2; do
		got=$(readlink "/proc/$p1/fd/$fd" 2>/dev/null || echo closed)
		check "PID 1 started with fd $fd closed has /dev/null there ('$got')" "$got" = /dev/null
	done
	kill -TERM "$p1"
	initenv_wait
else
	nok "agent started under a PID 1 without fds 0 and 2" true
	initenv_wait
fi

# 2. The agent owns the terminal PID 1 logs to. With its output suspended
# (Ctrl-S, tcflow(TCOOFF)) a blocking write would stop PID 1 in the middle
# of a log line: no reaping, no signal forwarding, no DNS answers, until
# the agent resumed output. PID 1 must drop the line and carry on. The
# agent stops output, asks the gate for a name outside the allowlist (PID 1
# logs the refusal) and waits for the REFUSED answer.
if command -v script >/dev/null 2>&1 && [ -x /usr/bin/python3 ]; then
	cat >"$IE/out/stopout.py" <<'PY'
import os, socket, struct, sys, termios
out = sys.argv[1]
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p for p in (b"blocked", b"example")) + b"\0" + struct.pack(">HH", 1, 1)
termios.tcflow(0, termios.TCOOFF)
res = []
for i in range(3):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    s.sendto(q, ("127.0.0.1", 53))
    try:
        a = s.recv(512)
        res.append("rcode%d" % (a[3] & 15))
    except socket.timeout:
        res.append("timeout")
    s.close()
termios.tcflow(0, termios.TCOON)
with open(out, "w") as f:
    f.write("answers=%s\n" % ",".join(res))
PY
	chmod 0644 "$IE/out/stopout.py"
	st=0
	SHELL=/bin/bash timeout 60 script -qefc "$(IE_TTY=1 initenv_cmd HOST_UID=3200 HOST_GID=3200 -- \
		/usr/bin/python3 "$IE/out/stopout.py" "$IE/out/stopout")" "$IE/out/typescript" </dev/null >/dev/null 2>&1 || st=$?
	got=$(kv "$IE/out/stopout" answers)
	check "agent with its terminal's output suspended: exits 0 ($st), every gate query answered REFUSED ('$got')" \
		"$st:$got" = 0:rcode5,rcode5,rcode5
else
	skip "PID 1 with the terminal's output suspended" "script(1) or /usr/bin/python3 not installed"
fi

# 3. Leftovers that ignore SIGTERM and fork without pause (orphans
# reparenting to PID 1 and dying, a SIGCHLD storm) after the agent exits:
# PID 1 still reaps, sends SIGKILL after its grace period and exits with
# the agent's status. RLIMIT_NPROC keeps the storm small.
if [ -x /usr/bin/python3 ]; then
	cat >"$IE/out/storm.py" <<'PY'
import os, resource, signal, sys, time
resource.setrlimit(resource.RLIMIT_NPROC, (300, 300))
for k in range(4):
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        os.setsid()
        end = time.time() + 60
        while time.time() < end:
            try:
                p = os.fork()
            except OSError:
                continue
            if p == 0:
                try:
                    if os.fork() == 0:
                        os._exit(0)
                except OSError:
                    pass
                os._exit(0)
            try:
                os.waitpid(p, 0)
            except OSError:
                pass
        os._exit(0)
time.sleep(0.5)
sys.exit(7)
PY
	chmod 0644 "$IE/out/storm.py"
	t0=$SECONDS
	st=0
	initenv_run HOST_UID=2345 HOST_GID=2345 -- /usr/bin/python3 "$IE/out/storm.py" >/dev/null 2>&1 || st=$?
	took=$((SECONDS - t0))
	check "fork storm left behind: PID 1 exits with the agent's status 7 ($st) within 20 s (${took} s)" \
		"$st" -eq 7 -a "$took" -le 20
else
	skip "PID 1 under a fork storm" "/usr/bin/python3 not installed"
fi

# PID 1 holds its start-up capabilities (CHOWN, DAC_OVERRIDE, SETUID,
# SETGID, SETPCAP, NET_BIND_SERVICE) only until it drops to its loop set
# (KILL, NET_ADMIN): the agent must never run while it still holds them, not
# even for the first instruction after its execve. The probe reads
# /proc/1/status before anything else; 30 starts (the window, when there
# was one, was seen in about every second start).
: >"$IE/out/early-caps"
bad=0 runs=0
for _ in $(seq 1 30); do
	st=0
	initenv_run HOST_UID=2345 HOST_GID=2345 -- "$PROBE" pid1-caps >"$IE/out/early" 2>/dev/null || st=$?
	[ "$st" -eq 0 ] || continue
	runs=$((runs + 1))
	cat "$IE/out/early" >>"$IE/out/early-caps"
	for k in CapPrm CapEff CapBnd; do
		v=$(sed -n "s/^pid1_$k=//p" "$IE/out/early")
		# anything but KILL (bit 5) and NET_ADMIN (bit 12)
		[ -n "$v" ] && [ $((16#$v & ~0x1020)) -eq 0 ] || bad=$((bad + 1))
	done
done
sort "$IE/out/early-caps" | uniq -c | sed 's/^/#   /'
check "30 starts ran the probe ($runs)" "$runs" -eq 30
check "the agent never saw PID 1 hold more than KILL and NET_ADMIN ($bad sets in $runs starts)" "$bad" -eq 0

tap_done
