#!/usr/bin/env bash
# Rootless podman, for real: a test user with subordinate IDs runs
# bin/code-sandbox on a workspace of its own, with the image loaded into its
# own storage. The launcher detects the rootless engine and maps the user's
# UID and GID to themselves (--userns=keep-id, --user=0:0, --passwd=false:
# bin/code-sandbox, "Rootless engines"), so the agent's files in /workspace
# are the user's on the host, and sandbox-init still runs every step (the
# firewall, the ID remap, the drop) inside that user namespace. The control
# runs the same launch without the mapping (CODE_SANDBOX_ROOTLESS=0): the
# agent's file belongs to a subordinate UID there.
#
# Needs root (to create and remove the user), podman, newuidmap/newgidmap
# (uidmap) and useradd; otherwise one counted SKIP. The container runs with
# --network none (its own new namespace: nothing leaves it, no slirp4netns
# needed). TAP lines, then "N passed, M failed".
#   CODE_SANDBOX_IMAGE=localhost/code-sandbox:image tests/container-rootless.sh
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/support/tap.sh
. "$SRC/tests/support/tap.sh"
# shellcheck source=tests/support/stage.sh
. "$SRC/tests/support/stage.sh"
# shellcheck source=tests/support/sandbox-launch.sh
. "$SRC/tests/support/sandbox-launch.sh"

name=container-rootless
[ "$(id -u)" -eq 0 ] || cs_skip_all "$name" "needs root (creates a test user with subordinate IDs)"
for t in podman newuidmap newgidmap useradd userdel runuser; do
	command -v "$t" >/dev/null || cs_skip_all "$name" "needs $t (podman, uidmap, passwd, util-linux)"
done
podman info >/dev/null 2>&1 || cs_skip_all "$name" "podman does not work here"
CS_ENG=podman

USER_NAME=cs-rootless-$$
RUN_DIR="" PAUSE_PID="" TAR=""
cleanup() {
	local st=$?
	# The user's podman leaves its pause process (it holds the user
	# namespace between runs); ours, by the pid it recorded.
	if [ -n "$RUN_DIR" ] && [ -f "$RUN_DIR/libpod/tmp/pause.pid" ]; then
		PAUSE_PID=$(cat "$RUN_DIR/libpod/tmp/pause.pid" 2>/dev/null || true)
		case $PAUSE_PID in '' | *[!0-9]*) ;; *)
			[ "$(stat -c %U "/proc/$PAUSE_PID" 2>/dev/null)" != "$USER_NAME" ] || kill "$PAUSE_PID" 2>/dev/null || true ;;
		esac
		wait_until 5 sh -c "! kill -0 $PAUSE_PID 2>/dev/null" 2>/dev/null || true
	fi
	if getent passwd "$USER_NAME" >/dev/null; then
		# -r: the home, with the user's image storage (files of
		# subordinate UIDs, which root removes like any others).
		userdel -r "$USER_NAME" >/dev/null 2>&1 || echo "# could not remove user $USER_NAME" >&2
	fi
	# userdel removes the user's /etc/subuid and /etc/subgid lines; make sure.
	sed -i "/^$USER_NAME:/d" /etc/subuid /etc/subgid 2>/dev/null || true
	[ -z "$TAR" ] || rm -f "$TAR"
	stage_cleanup
	exit "$st"
}
trap cleanup EXIT
wait_until() { # wait_until SECONDS CMD...
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# --- the test user: a free UID, subordinate IDs, its own podman ------------
uid=4371
while getent passwd "$uid" >/dev/null || getent group "$uid" >/dev/null; do uid=$((uid + 1)); done
useradd -m -u "$uid" -U -s /bin/sh "$USER_NAME"
gid=$(id -g "$USER_NAME")
home=$(getent passwd "$USER_NAME" | cut -d: -f6)
# useradd adds a subordinate range when /etc/subuid exists; otherwise add one
# after every range already given out.
if ! grep -q "^$USER_NAME:" /etc/subuid 2>/dev/null || ! grep -q "^$USER_NAME:" /etc/subgid 2>/dev/null; then
	top=$(cat /etc/subuid /etc/subgid 2>/dev/null | awk -F: '$2 + $3 > m { m = $2 + $3 } END { print (m > 100000 ? m : 100000) }')
	usermod --add-subuids "$top-$((top + 65535))" --add-subgids "$top-$((top + 65535))" "$USER_NAME"
fi
stage_dir T cs-rootless
CS_T=$T
# The user's commands start in a directory it can enter (a checkout may
# sit in a 0700 home: podman then cannot chdir, issue 12).
cd "$T" || exit 1
RUN_DIR=$T/run
install -d -m 0700 -o "$uid" -g "$gid" "$RUN_DIR"
# Native overlay in the user namespace (Linux 5.13+); podman 4.3 picks vfs
# otherwise, a full copy of the image per layer.
install -d -m 0755 -o "$uid" -g "$gid" "$home/.config" "$home/.config/containers"
printf '[storage]\ndriver = "overlay"\n' >"$home/.config/containers/storage.conf"
chown "$uid:$gid" "$home/.config/containers/storage.conf"
as_user() { # as_user CMD...: CMD as the test user, in its own session environment
	runuser -u "$USER_NAME" -- env -i HOME="$home" USER="$USER_NAME" LOGNAME="$USER_NAME" \
		PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin XDG_RUNTIME_DIR="$RUN_DIR" "$@"
}

rl=$(as_user podman info --format '{{.Host.Security.Rootless}}/{{.Store.GraphDriverName}}' 2>/dev/null || true)
check "podman as $USER_NAME (uid $uid) is rootless, native overlay storage ($rl)" "$rl" = true/overlay

# --- the image in the user's storage; the launcher staged for the user ------
cs_image >&2 || { check "image $CS_IMAGE present (bin/code-sandbox build)" 1 -eq 0; tap_done; exit 1; }
TAR=$T/image.tar
podman save -o "$TAR" "$CS_IMAGE" >/dev/null 2>&1
chmod 0644 "$TAR"
ok "image $CS_IMAGE loaded into the user's storage" as_user podman load -q -i "$TAR"
rm -f "$TAR"
stage_binaries "$T/bin" "$SRC/bin/code-sandbox" "$SRC/bin/code-sandbox-pivots" || exit 1
WS=$T/ws
install -d -m 0755 -o "$uid" -g "$gid" "$WS"
launch() { # launch OUT ERR [VAR=VALUE...] -- LAUNCHER ARGS...: as the user, in WS
	local out=$1 err=$2 st=0
	shift 2
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	(cd "$WS" && as_user CODE_SANDBOX_IMAGE="$CS_IMAGE" CODE_SANDBOX_NETWORK=none \
		CODE_SANDBOX_DNS=198.51.100.53 CODE_SANDBOX_LOG=info "${envs[@]}" "$T/bin/code-sandbox" --no-daemon "$@") \
		>"$out" 2>"$err" </dev/null || st=$?
	return "$st"
}

# --- limits: refused where the rootless engine would ignore them ----------
# Rootless podman applies --memory/--pids-limit/--cpus only on cgroup v2
# with the memory and pids controllers delegated; on cgroup v1 (this VM) it
# ignores them and starts anyway, so the launcher refuses unless
# CODE_SANDBOX_ALLOW_NO_LIMITS=1 (bin/code-sandbox, refuse_no_limits).
cg=$(as_user podman info --format '{{.Host.CgroupsVersion}} {{range .Host.CgroupControllers}}{{.}} {{end}}' 2>/dev/null || true)
case " $cg " in
" v2 "*" memory "*" pids "* | " v2 "*" pids "*" memory "*) limits=apply ;;
*) limits=ignored ;;
esac
NL_OPT=()
if [ "$limits" = ignored ]; then
	cname=cs-rootless-$$-nolimits
	st=0
	launch "$T/nolim.out" "$T/nolim.err" CODE_SANDBOX_NAME="$cname" -- -- true || st=$?
	check "cgroups '$cg': the launcher refuses the start without limits (exit $st)" "$st" -eq 1
	check "... saying why and the opt-in ($(grep -o 'refusing to start: [^,]*' "$T/nolim.err" || true))" \
		-n "$(grep 'refusing to start: rootless podman .*CODE_SANDBOX_ALLOW_NO_LIMITS=1' "$T/nolim.err" || true)"
	check "... and no container was created" -z "$(as_user podman ps -a --filter "name=$cname" --format '{{.Names}}' 2>/dev/null || true)"
	NL_OPT=(CODE_SANDBOX_ALLOW_NO_LIMITS=1)
else
	diag "cgroups '$cg': the limits apply, no refusal expected"
fi

# --- the launcher's arguments: detected, not configured ---------------------
launch "$T/dry.out" "$T/dry.err" "${NL_OPT[@]}" -- --dry-run -- true || true
args=$(grep -xE -- '--(userns|user|passwd)=.*' "$T/dry.out" | tr '\n' ' ' || true)
check "the launcher detects rootless podman: --userns=keep-id --user=0:0 --passwd=false ($args)" \
	"$args" = "--userns=keep-id --user=0:0 --passwd=false "
check "... and passes the user's own IDs as HOST_UID/HOST_GID" \
	"$(grep -cxE -- "--env=HOST_(UID=$uid|GID=$gid)" "$T/dry.out" || true)" = 2

# --- the real run ------------------------------------------------------------
# shellcheck disable=SC2016 # expanded inside the container
probe='
p1=$(cat /proc/1/comm)
echo "pid1=$p1"
echo "ids=$(id -u):$(id -g):$(id -G)"
echo "user=$(id -un):$HOME"
for f in CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs Seccomp; do
	echo "$f=$(sed -n "s/^$f:[[:space:]]*//p" /proc/self/status)"
done
echo "passwd_link=$(readlink /etc/passwd)"
echo "passwd_devuser=$(grep "^devuser:" /etc/passwd | cut -d: -f3,4)"
echo "uid_map=$(tr -s " " </proc/self/uid_map | sed "s/^ //" | paste -sd, -)"
echo "root_mount=$(awk '\''$5 == "/" {print $6}'\'' /proc/self/mountinfo | tr , "\n" | grep -x -E "ro|rw" | tail -n 1)"
nsenter_ok=$(unshare -Ur true 2>/dev/null && echo ok || echo refused); echo "unshare=$nsenter_ok"
echo hello >/workspace/agent-file && echo ws_write=ok
mkdir -p /workspace/sub && echo ws_mkdir=ok
'
st=0
launch "$T/run.out" "$T/run.err" "${NL_OPT[@]}" -- -- sh -c "$probe" || st=$?
check "rootless run through bin/code-sandbox exits 0 ($st)" "$st" -eq 0
[ "$st" -eq 0 ] || diag "$(tail -n 8 "$T/run.err")"
P() { sed -n "s/^$1=//p" "$T/run.out" | head -n 1; }
check "no sandbox-init step failed (no 'sandbox-init: STEP: REASON' line)" \
	-z "$(grep -E '^sandbox-init: [a-z-]+: ' "$T/run.err" | grep -v -E ': (info|debug):' || true)"
fwline=$(grep -o 'Firewall: table inet code_sandbox installed and verified.*' "$T/run.err" || true)
check "sandbox-init installed and verified the firewall in the user namespace (${fwline:-no such line})" -n "$fwline"
check "PID 1 is sandbox-init" "$(P pid1)" = sandbox-init
check "the agent runs as the user's UID and GID, no other group ($(P ids))" "$(P ids)" = "$uid:$gid:$gid"
check "the agent is devuser with HOME /home/devuser ($(P user))" "$(P user)" = devuser:/home/devuser
check "/etc/passwd is still the image's link into sandbox-init's tmpfs ($(P passwd_link))" \
	"$(P passwd_link)" = /run/sandbox-init/passwd
check "devuser remapped to the user's IDs in it ($(P passwd_devuser))" "$(P passwd_devuser)" = "$uid:$gid"
# Seen from inside: the container's UID $uid is the rootless namespace's 0,
# which is the user.
check "the user's UID is mapped to itself (uid_map '$(P uid_map)')" -n "$(P uid_map | tr , '\n' | grep -x "$uid 0 1" || true)"
for f in CapInh CapPrm CapEff CapBnd CapAmb; do
	check "agent $f is empty" "$(P "$f")" = 0000000000000000
done
check "agent NoNewPrivs 1, Seccomp 2 ($(P NoNewPrivs), $(P Seccomp))" "$(P NoNewPrivs):$(P Seccomp)" = 1:2
# The mount's own options (as test-sandbox.sh): a write to /etc fails for
# devuser whether or not the root is read-only.
check "root file system mounted read-only ($(P root_mount))" "$(P root_mount)" = ro
check "no nested user namespace for the agent" "$(P unshare)" = refused
check "a file the agent writes in /workspace is the user's on the host ($(stat -c %u:%g "$WS/agent-file" 2>/dev/null || echo missing))" \
	"$(stat -c %u:%g "$WS/agent-file" 2>/dev/null)" = "$uid:$gid"
check "... and so is a directory it creates" "$(stat -c %u:%g "$WS/sub" 2>/dev/null)" = "$uid:$gid"
check "... with the agent's content" "$(cat "$WS/agent-file" 2>/dev/null)" = hello
if [ "$limits" = ignored ]; then
	check "with CODE_SANDBOX_ALLOW_NO_LIMITS=1 the run proceeds, and the launcher says it has no limits" \
		-n "$(grep 'starting without memory and process limits (CODE_SANDBOX_ALLOW_NO_LIMITS=1)' "$T/run.err" || true)"
fi

# --- a second terminal and stop: code-sandbox shell, SIGTERM -> 143 ---------
cname=cs-rootless-$$-term
st=0
launch "$T/term.out" "$T/term.err" CODE_SANDBOX_NAME="$cname" "${NL_OPT[@]}" -- -- sleep 300 &
lpid=$!
running() { as_user podman exec "$cname" sh -c 'grep -qx sleep /proc/[0-9]*/comm' >/dev/null 2>&1; }
if wait_until 60 running; then
	sh_out=$(cd "$WS" || exit 1
		printf '%s\n' 'id -u' 'grep -E "^NoNewPrivs:" /proc/self/status' |
			as_user CODE_SANDBOX_NAME="$cname" "$T/bin/code-sandbox" shell 2>&1) || true
	check "shell: attaches as the user's UID ($(head -n 1 <<<"$sh_out"))" "$(head -n 1 <<<"$sh_out")" = "$uid"
	check "shell: no_new_privs" -n "$(grep -xP 'NoNewPrivs:\t1' <<<"$sh_out" || true)"
	t0=$SECONDS
	as_user podman stop -t 20 "$cname" >/dev/null 2>&1 || true
	wait "$lpid" || st=$?
	check "stop forwards SIGTERM to the agent: exit 143 (got $st, $((SECONDS - t0)) s)" "$st" -eq 143
else
	wait "$lpid" || st=$?
	check "a rootless container to attach to (it never ran: $st)" 1 -eq 0
	diag "$(tail -n 5 "$T/term.err")"
fi

# --- doctor as the user: the rootless mapping and one hardened start ---------
st=0
(cd "$WS" && as_user CODE_SANDBOX_IMAGE="$CS_IMAGE" CODE_SANDBOX_DNS=198.51.100.53 "$T/bin/code-sandbox" doctor) \
	>"$T/doctor.out" 2>&1 </dev/null || st=$?
check "doctor as the user: the rootless mapping is reported" \
	-n "$(grep '^ok    rootless podman: your UID and GID mapped' "$T/doctor.out" || true)"
check "doctor as the user: the hardened start succeeds rootless" \
	-n "$(grep '^ok    hardened start' "$T/doctor.out" || true)"
[ -n "$(grep '^ok    hardened start' "$T/doctor.out" || true)" ] || diag "$(grep -E '^(FAIL|  )' "$T/doctor.out")"
if [ "$limits" = ignored ]; then
	check "doctor as the user: the missing limits are a problem with the opt-in named" \
		-n "$(grep -A1 '^FAIL  rootless podman .*every run refuses to start' "$T/doctor.out" | grep 'CODE_SANDBOX_ALLOW_NO_LIMITS=1' || true)"
fi

# --- control: the same launch without the mapping ----------------------------
# The engine's default rootless mapping: the user is the container's root,
# the agent's UID a subordinate one, so it cannot write the user's 0755
# workspace and what it writes in a 0777 directory is not the user's.
install -d -m 0777 -o "$uid" -g "$gid" "$WS/open"
st=0
launch "$T/ctl.out" "$T/ctl.err" CODE_SANDBOX_ROOTLESS=0 -- -- sh -c 'touch /workspace/ctl-file 2>/dev/null && echo ws=ok || echo ws=refused; touch /workspace/open/ctl-file; id -u' || st=$?
check "control: the run without the mapping exits 0 ($st)" "$st" -eq 0
check "control: the agent cannot write the user's workspace ($(sed -n 's/^ws=//p' "$T/ctl.out"))" \
	"$(sed -n 's/^ws=//p' "$T/ctl.out")" = refused
owner=$(stat -c %u "$WS/open/ctl-file" 2>/dev/null || echo missing)
check "control: its file in a 0777 directory belongs to a subordinate UID ($owner), not the user ($uid)" \
	"$owner" != "$uid" -a "$owner" != missing
echo "1..$TAP_N"
echo "$((TAP_N - TAP_FAILED)) passed, $TAP_FAILED failed"
[ "$TAP_FAILED" -eq 0 ]
