#!/usr/bin/env bash
# Image build time and size: a cold build (no cache: apt, npm and the C
# build from scratch), then a warm one (nothing changed: every layer
# cached), through `code-sandbox build`, and the image's size with what
# takes the space. Targets: image under 600 MB with git (the two agents'
# standalone binaries dominate; see the breakdown), cold build about 3 min.
#   bench/image-build.sh [--quick]   (podman; builds CODE_SANDBOX_IMAGE,
#                                     default localhost/code-sandbox:bench,
#                                     in quick mode the launcher's own
#                                     localhost/code-sandbox:latest, which
#                                     tests/run-all.sh has just built)
# --quick: no cold build (the minutes of downloads CI already spent once):
# a warm build of an image that exists, and the size. Skips (77) without
# podman or, in quick mode, without the image.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SOURCE_DIR=${SOURCE_DIR:-$(dirname "$here")}
quick=0
[ "${1:-}" != --quick ] || quick=1
eng=${CONTAINER_ENGINE:-podman}
if [ "$quick" = 1 ]; then
	img=${CODE_SANDBOX_IMAGE:-localhost/code-sandbox:latest}
else
	img=${CODE_SANDBOX_IMAGE:-localhost/code-sandbox:bench}
fi
export CONTAINER_ENGINE=$eng CODE_SANDBOX_IMAGE=$img
command -v "$eng" >/dev/null 2>&1 || { echo "SKIP: no $eng"; exit 77; }
if [ "$quick" = 1 ] && ! "$eng" image inspect "$img" >/dev/null 2>&1; then
	echo "SKIP: --quick needs the image $img (bin/code-sandbox build)"
	exit 77
fi
# podman's default rlimits may exceed this machine's (README.md, Troubleshooting).
[ "$(id -u)" != 0 ] || [ "${CONTAINER_ENGINE:-podman}" != podman ] || "$SOURCE_DIR/tools/podman-setup.sh" >&2
cs=$SOURCE_DIR/bin/code-sandbox
secs() { # secs CMD...: prints the seconds CMD took (its output to a log)
	local a b
	a=$(date +%s%N)
	"$@" >"$log" 2>&1 || { tail -n 20 "$log"; echo "build failed"; exit 1; }
	b=$(date +%s%N)
	awk -v d=$((b - a)) 'BEGIN { printf "%.1f", d / 1e9 }'
}
log=$(mktemp /tmp/cs-bench-build.XXXXXX)
trap 'rm -f "$log"' EXIT
if [ "$quick" = 0 ]; then
	cold=$(secs nice -n 10 "$cs" build --no-cache)
	echo "cold build (--no-cache): ${cold} s (target: about 180 s)"
fi
warm=$(secs "$cs" build)
echo "warm build (all layers cached): ${warm} s"
size=$("$eng" image inspect --format '{{.Size}}' "$img")
mb=$((size / 1000000))
echo "image $img: ${mb} MB (target < 600 MB with git)"
# What takes the space (kB, inside the image).
# shellcheck disable=SC2016 # expanded inside the container
"$eng" run --rm --network none --entrypoint /bin/sh "$img" -c '
	k() { du -skx "$@" 2>/dev/null | awk "{s += \$1} END {print s + 0}"; }
	total=$(k /)
	claude=$(k /usr/local/bin/claude)
	opencode=$(k /usr/local/bin/opencode)
	git=$(dpkg-query -Wf "\${Installed-Size}\n" git git-man liberror-perl perl perl-modules-5.36 libperl5.36 libcurl3-gnutls 2>/dev/null | awk "{s += \$1} END {print s + 0}")
	rg=$(k /usr/bin/rg)
	ours=$(k /usr/sbin/sandbox-init /usr/libexec/code-sandbox /etc/code-sandbox)
	echo "  claude (standalone binary)   $((claude / 1024)) MB"
	echo "  opencode (standalone binary) $((opencode / 1024)) MB"
	echo "  git with perl and libcurl     $((git / 1024)) MB"
	echo "  ripgrep                       $((rg / 1024)) MB"
	echo "  code-sandbox (init, wrappers, allowlist, profiles) $((ours / 1024)) MB"
	echo "  the rest (Debian slim base, runtime libraries, ca-certificates, bash) $(((total - claude - opencode - git - rg - ours) / 1024)) MB"
	echo "  total on disk                 $((total / 1024)) MB"'
[ "$quick" = 1 ] || [ "$mb" -lt 600 ] || echo "over 600 MB: build with OPENCODE_VERSION= (no opencode) for a claude-only image"
