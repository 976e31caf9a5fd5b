#!/usr/bin/env bash
# Launch overhead: `code-sandbox -- true` on a warm image (the whole
# launcher: refusals, settings, engine run with every hardening flag,
# sandbox-init's firewall, identity, settings lock, seccomp and privilege
# drop) against a plain `podman run --rm --entrypoint true IMAGE` (the
# engine's own start of the same image), same run, median of N.
# Both use --network none: nothing leaves the machine.
# Target: at most 1.25x.
#   bench/launch.sh [--quick]    (root or rootless podman; CODE_SANDBOX_IMAGE
#                                 or localhost/code-sandbox:latest must exist)
# --quick: 3 runs each, only checks that it works.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SOURCE_DIR=${SOURCE_DIR:-$(dirname "$here")}
quick=0
[ "${1:-}" != --quick ] || quick=1
runs=21
[ "$quick" = 0 ] || runs=3
eng=${CONTAINER_ENGINE:-podman}
img=${CODE_SANDBOX_IMAGE:-localhost/code-sandbox:latest}
if ! command -v "$eng" >/dev/null 2>&1 || ! "$eng" image inspect "$img" >/dev/null 2>&1; then
	echo "SKIP: no $eng or no image $img (build it: bin/code-sandbox build)"
	exit 77
fi
# podman's default rlimits may exceed this machine's (README.md, Troubleshooting).
[ "$(id -u)" != 0 ] || [ "${CONTAINER_ENGINE:-podman}" != podman ] || "$SOURCE_DIR/tools/podman-setup.sh" >&2
t=$(mktemp -d /tmp/cs-bench-launch.XXXXXX)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/proj" "$t/home" "$t/cfg" "$t/state"
chmod 0755 "$t" "$t/proj"
[ "$(id -u)" != 0 ] || chown 1000:1000 "$t/proj"
launch() {
	(cd "$t/proj" && HOME=$t/home XDG_CONFIG_HOME=$t/cfg XDG_STATE_HOME=$t/state CONTAINER_ENGINE=$eng \
		CODE_SANDBOX_IMAGE=$img CODE_SANDBOX_NETWORK=none CODE_SANDBOX_DNS=198.51.100.53 \
		"$SOURCE_DIR/bin/code-sandbox" --no-daemon -- true </dev/null >/dev/null 2>&1)
}
plain() { "$eng" run --rm --network none --entrypoint true "$img" </dev/null >/dev/null 2>&1; }
# For the breakdown: the launcher's exact engine command with `true` as the
# entrypoint (what the hardening flags cost the engine, without sandbox-init).
mapfile -t hard < <(cd "$t/proj" && HOME=$t/home XDG_CONFIG_HOME=$t/cfg XDG_STATE_HOME=$t/state CONTAINER_ENGINE=$eng \
	CODE_SANDBOX_IMAGE=$img CODE_SANDBOX_NETWORK=none CODE_SANDBOX_DNS=198.51.100.53 \
	"$SOURCE_DIR/bin/code-sandbox" --no-daemon --dry-run | tail -n +2 | sed "s|^$img\$|--entrypoint=true\n$img|")
hardened() { "$eng" "${hard[@]}" </dev/null >/dev/null 2>&1; }
ms() { # ms CMD: wall time of one run in ms
	local a b
	a=$(date +%s%N)
	"$@"
	b=$(date +%s%N)
	echo $(((b - a) / 1000000))
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : int((a[NR/2] + a[NR/2+1]) / 2)}'; }
# Warm-up: the home volume exists, the image's pages are cached.
launch || { echo "code-sandbox -- true failed"; exit 1; }
plain || { echo "$eng run --rm $img true failed"; exit 1; }
hardened || { echo "the hardened engine command failed"; exit 1; }
: >"$t/l"
: >"$t/p"
: >"$t/h"
for _ in $(seq "$runs"); do # interleaved: all see the same machine load
	ms launch >>"$t/l"
	ms plain >>"$t/p"
	ms hardened >>"$t/h"
done
l=$(median <"$t/l")
p=$(median <"$t/p")
h=$(median <"$t/h")
ratio=$(awk -v l="$l" -v p="$p" 'BEGIN { printf "%.2f", l / p }')
echo "code-sandbox -- true: ${l} ms median of $runs; $eng run --rm --entrypoint true: ${p} ms; ratio ${ratio}x (target <= 1.25x)"
echo "breakdown: the launcher's engine flags with entrypoint true: ${h} ms (engine cost of the hardening $((h - p)) ms; launcher + sandbox-init $((l - h)) ms)"
# The bench project's home volume.
(cd "$t/proj" && HOME=$t/home XDG_CONFIG_HOME=$t/cfg XDG_STATE_HOME=$t/state CONTAINER_ENGINE=$eng \
	"$SOURCE_DIR/bin/code-sandbox" clean >/dev/null 2>&1) || true
[ "$quick" = 1 ] || awk -v r="$ratio" 'BEGIN { exit !(r <= 1.25) }'
