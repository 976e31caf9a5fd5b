#!/usr/bin/env bash
# The git relay against plain git on the host, same loopback HTTPS remote
# (tests/support/git-https-server.py), same run:
#   clone of a 10,000-commit repository    (target <= 1.5x direct)
#   fetch of one new commit                (target <= 2x)
#   push of one small commit to it         (target <= 2x)
#   the daemon's peak memory (VmHWM) after all of it
# "direct" is the host user's own git with their credentials; "relay" is
# the agent's git through git-remote-sandbox and sandbox-execd (static
# policy, audit on). Medians of N runs; the relay's clone is shown cold (the
# daemon's cache emptied before each: the clone fills it) and warm.
#   bench/git-relay.sh [--quick]   (root: network namespace, setpriv)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SOURCE_DIR=${SOURCE_DIR:-$here/..}
BUILD_DIR=${BUILD_DIR:-$SOURCE_DIR/build}
export SOURCE_DIR BUILD_DIR
quick=0
[ "${1:-}" = --quick ] && quick=1
N=7 COMMITS=10000
if [ "$quick" = 1 ]; then N=1 COMMITS=300; fi
if [ "$(id -u)" -ne 0 ]; then echo "needs root (network namespace)"; exit 77; fi
if [ -z "${GR_IN_NS:-}" ]; then
	exec unshare --net --pid --fork --mount --mount-proc env GR_IN_NS=1 "$0" "$@"
fi
# shellcheck source=tests/support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
# shellcheck source=tests/integration/gitrelay-common.sh
. "$SOURCE_DIR/tests/integration/gitrelay-common.sh"
gr_setup >/dev/null
srv_big_history big "$COMMITS"
cat >"$T/policy.conf" <<POL
allow git ls-remote,fetch dest=127.0.0.1:$PORT/*
allow git push dest=127.0.0.1:$PORT/big ref=refs/heads/*
deny git push force=yes
deny git push default=yes
POL
chmod 644 "$T/policy.conf"
gr_conf "backend = static" "policy_file = $T/policy.conf"
gr_start || { cat "$T/daemon.log"; exit 1; }
host_git() { # the user's own git on the host: their HOME, their credentials
	"${GR_RUN_AS[@]}" env -i PATH=/usr/bin:/bin HOME="$T/home" LC_ALL=C GIT_CONFIG_NOSYSTEM=1 \
		git -c user.name=u -c user.email=u@u "$@"
}
ms() { # ms CMD...: wall milliseconds of CMD (it must succeed)
	local a b
	a=$(date +%s%N)
	"$@" >/dev/null 2>"$T/last.err" || { echo "failed: $*" >&2; cat "$T/last.err" >&2; exit 1; }
	b=$(date +%s%N)
	echo $(((b - a) / 1000000))
}
median() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cd "$T/ws" || exit 1

# Cold: the daemon's cache is emptied before each relay clone (the clone
# fills it); warm: the cache is there. Direct clones alternate with both.
d_clone=() r_cold_all=() r_warm_all=()
for i in $(seq "$N"); do
	d_clone+=("$(ms host_git clone -q "$BASE/big.git" "d$i")")
	rm -rf "$T/state/git-cache/"*
	r_cold_all+=("$(ms agent git clone -q "$BASE/big.git" "r$i")")
	d_clone+=("$(ms host_git clone -q "$BASE/big.git" "dw$i")")
	r_warm_all+=("$(ms agent git clone -q "$BASE/big.git" "rw$i")")
	[ "$i" = 1 ] || rm -rf "d$i" "dw$i" "r$i" "rw$i"
done
r_cold=$(echo "${r_cold_all[@]}" | median)
r_warm=$(echo "${r_warm_all[@]}" | median)
d_med=$(echo "${d_clone[@]}" | median)

d_fetch=() r_fetch=()
for i in $(seq "$N"); do
	srv_git -C "$T/srv/big.git" update-ref refs/heads/main "$(srv_git -C "$T/srv/big.git" commit-tree \
		-p main -m "new $i" "main^{tree}")"
	d_fetch+=("$(ms host_git -C d1 fetch -q origin)")
	r_fetch+=("$(ms agent git -C r1 fetch -q origin)")
done

d_push=() r_push=()
host_git -C d1 switch -q -c bench-direct
agent git -C r1 switch -q -c bench-relay
for i in $(seq "$N"); do
	echo "$i" >"$T/ws/d1/p.txt"; echo "$i" >"$T/ws/r1/p.txt"
	chown "$GR_USER:" "$T/ws/d1/p.txt" "$T/ws/r1/p.txt"
	host_git -C d1 add p.txt && host_git -C d1 commit -q -m "push $i"
	agent git -C r1 add p.txt && agent git -C r1 commit -q -m "push $i"
	d_push+=("$(ms host_git -C d1 push -q origin bench-direct)")
	r_push+=("$(ms agent git -C r1 push -q origin bench-relay)")
done
hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$GR_DAEMON_PID/status")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
rc=$(ratio "$r_warm" "$d_med") rcc=$(ratio "$r_cold" "$d_med")
df=$(echo "${d_fetch[@]}" | median) rf=$(echo "${r_fetch[@]}" | median)
dp=$(echo "${d_push[@]}" | median) rp=$(echo "${r_push[@]}" | median)
echo "git relay vs direct git, loopback HTTPS remote, $COMMITS commits, median of $N"
echo "clone:  direct $d_med ms, relay cold $r_cold ms (${rcc}x), relay warm $r_warm ms (${rc}x)   target <= 1.5x"
echo "fetch:  direct $df ms, relay $rf ms ($(ratio "$rf" "$df")x)   target <= 2x"
echo "push:   direct $dp ms, relay $rp ms ($(ratio "$rp" "$dp")x)   target <= 2x"
echo "daemon peak RSS (VmHWM): $hwm kB"
for op in ls-remote fetch push; do
	m=$(grep -o "git $op '[^']*': exited 0 after [0-9]* ms" "$T/daemon.log" | awk '{print $(NF-1)}' | tr '\n' ' ' | median)
	echo "  daemon time per '$op' request (median): ${m:-?} ms"
done
check_count=$(agent git -C r1 rev-list --count HEAD)
[ "$check_count" -gt "$COMMITS" ] || { echo "relay clone incomplete: $check_count"; exit 1; }
gr_stop
exit 0
