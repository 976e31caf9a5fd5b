#!/usr/bin/env bash
# The real image through bin/code-sandbox (podman, --network none: nothing
# leaves the machine): the read-only root leaves the agent exactly
# /workspace, its home and /tmp to write (SECURITY.md, "Writable paths on
# the read-only root"), sandbox-init's runtime files are reached through
# the image's links, resolv.conf names only the gate, and the agent's exit
# status is the launcher's. Skips (77) without root, podman or the image
# (CODE_SANDBOX_IMAGE, default localhost/code-sandbox:latest).
set -uo pipefail
SOURCE_DIR=${SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
img=${CODE_SANDBOX_IMAGE:-localhost/code-sandbox:latest}
if ! command -v podman >/dev/null 2>&1 || ! podman image inspect "$img" >/dev/null 2>&1; then
	echo "1..0 # SKIP no podman or no image $img (bin/code-sandbox build)"
	exit 77
fi
# podman's default rlimits may exceed this machine's (README.md, Troubleshooting).
[ "$(id -u)" != 0 ] || [ "${CONTAINER_ENGINE:-podman}" != podman ] || "$SOURCE_DIR/tools/podman-setup.sh" >&2
T=$(mktemp -d /tmp/cs-container-ro.XXXXXX)
chmod 0755 "$T"
mkdir -p "$T/proj" "$T/home" "$T/cfg" "$T/state"
chmod 0755 "$T/proj"
chown 4711:4711 "$T/proj"
launcher() {
	(cd "$T/proj" && env HOME="$T/home" XDG_CONFIG_HOME="$T/cfg" XDG_STATE_HOME="$T/state" CONTAINER_ENGINE=podman \
		CODE_SANDBOX_IMAGE="$img" CODE_SANDBOX_NETWORK=none CODE_SANDBOX_DNS=198.51.100.53 \
		CODE_SANDBOX_NAME="cs-pack-ro-$$" "$SOURCE_DIR/bin/code-sandbox" "$@" </dev/null)
}
cs() { launcher --no-daemon "$@"; }
cleanup() {
	# the project's home volume (and any container left)
	launcher clean >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

st=0
# shellcheck disable=SC2016 # expanded in the container
out=$(cs -- sh -c '
	# this script spans lines: the launcher passes such arguments intact
	echo "uid=$(id -u)"; echo "gid=$(id -g)"; echo "user=$(id -un)"
	awk "\$2 == \"/\" { print \"rootfs=\" \$4 }" /proc/mounts | cut -d, -f1
	echo "passwd=$(readlink /etc/passwd) group=$(readlink /etc/group) cc=$(readlink /etc/claude-code)"
	echo "managed=$(stat -c %U:%G:%a /etc/claude-code/managed-settings.json)"
	awk "\$1 == \"nameserver\" { print \"resolv=\" \$2 }" /etc/resolv.conf
	find / \( -path /proc -o -path /sys -o -path /dev \) -prune -o -writable -print 2>/dev/null |
		grep -v -e "^/workspace" -e "^/home/devuser" -e "^/tmp" | sed "s/^/writable=/"
	find / -xdev -perm /6000 -type f 2>/dev/null | sed "s/^/setid=/"
	for f in /etc/passwd /run/sandbox-init/passwd /etc/x /usr/bin/x /run/sandbox-init/x; do
		( : > "$f" ) 2>/dev/null && echo "wrote=$f"
	done
	echo hello > /workspace/from-agent; echo scratch > /tmp/t; echo keep > /home/devuser/k
	echo done
' 2>"$T/err") || st=$?
check "the agent ran (exit $st)" "$st" -eq 0
[ "$st" -eq 0 ] || diag "$(tail -n 5 "$T/err")"
v() { sed -n "s/^$1=//p" <<<"$out"; }
check "agent has the workspace owner's IDs ($(v uid) $(v gid))" "$(v uid):$(v gid):$(v user)" = 4711:4711:devuser
check "the root file system is read-only ($(v rootfs))" "$(v rootfs)" = ro
check "/etc/passwd, /etc/group, /etc/claude-code link into /run/sandbox-init" \
	"$(sed -n 's/^passwd=//p' <<<"$out")" = "/run/sandbox-init/passwd group=/run/sandbox-init/group cc=/run/sandbox-init/claude-code"
check "managed settings root:root 0444 ($(v managed))" "$(v managed)" = root:root:444
check "resolv.conf names only the DNS gate ($(v resolv | tr '\n' ' '))" "$(v resolv)" = 127.0.0.1
ran() { [ "$(tail -n 1 <<<"$out")" = "done" ]; } # the negative checks count only then
check "nothing writable by the agent outside /workspace, its home and /tmp" -z "$(v writable)" -a "$(ran && echo y)" = y
[ -z "$(v writable)" ] || diag "$(v writable | head -n 20)"
check "no setuid or setgid file" -z "$(v setid)" -a "$(ran && echo y)" = y
check "the agent could write none of /etc, /usr, /run/sandbox-init" -z "$(v wrote)" -a "$(ran && echo y)" = y
check "the agent's file is on the host, owned 4711" "$(stat -c %u:%g "$T/proj/from-agent" 2>&1)" = 4711:4711
check "the run finished" "$(tail -n 1 <<<"$out")" = "done"

for want in 3 42; do
	st=0
	cs -- sh -c "exit $want" >/dev/null 2>&1 || st=$?
	check "exit status $want is the launcher's ($st)" "$st" -eq "$want"
done
st=0
out=$(cs -- sh -c 'cat /home/devuser/k; ls /tmp' 2>/dev/null) || st=$?
check "the home volume persists between runs, /tmp does not" "$(tr '\n' ' ' <<<"$out")" = "keep "
tap_done
