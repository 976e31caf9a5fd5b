#!/usr/bin/env bash
# Image build time and size, for both variants (Dockerfile): the default
# image (Claude Code, git) and the opencode one (the default plus one last
# layer). A cold build of the default (no cache: apt, npm and the C build
# from scratch), a warm one (every layer cached), the opencode variant from
# that cache, then each image's size against the target and what takes the
# space. Targets: default image under 600 MB with git; cold build about
# 3 min. The two agents' standalone binaries alone are about 590 MB, so the
# opencode variant cannot meet the size target (it is opt-in).
#   bench/image-build.sh [--quick]   (podman; builds CODE_SANDBOX_IMAGE,
#                                     default localhost/code-sandbox:bench,
#                                     and IMAGE-opencode; in quick mode the
#                                     launcher's own localhost/code-sandbox:latest
#                                     and latest-opencode, which
#                                     tests/run-all.sh has just built)
# --quick: no cold build (the minutes of downloads CI already spent once):
# warm builds of images that exist, and the sizes. Skips (77) without
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
oc=${CODE_SANDBOX_OPENCODE_IMAGE:-$img-opencode}
target_mb=600
export CONTAINER_ENGINE=$eng
command -v "$eng" >/dev/null 2>&1 || { echo "SKIP: no $eng"; exit 77; }
if [ "$quick" = 1 ] && ! "$eng" image inspect "$img" >/dev/null 2>&1; then
	echo "SKIP: --quick needs the image $img (bin/code-sandbox build)"
	exit 77
fi
# podman's default rlimits may exceed this machine's (README.md, Troubleshooting).
[ "$(id -u)" != 0 ] || [ "$eng" != podman ] || "$SOURCE_DIR/tools/podman-setup.sh" >&2
cs=$SOURCE_DIR/bin/code-sandbox
secs() { # secs IMAGE CMD...: prints the seconds CMD took (its output to a log)
	local a b i=$1
	shift
	a=$(date +%s%N)
	CODE_SANDBOX_IMAGE=$i "$@" >"$log" 2>&1 || { tail -n 20 "$log"; echo "build failed"; exit 1; }
	b=$(date +%s%N)
	awk -v d=$((b - a)) 'BEGIN { printf "%.1f", d / 1e9 }'
}
log=$(mktemp /tmp/cs-bench-build.XXXXXX)
trap 'rm -f "$log"' EXIT
echo "load: $(uptime | sed 's/.*load average/load average/')"
if [ "$quick" = 0 ]; then
	cold=$(secs "$img" nice -n 10 "$cs" build --no-cache)
	echo "cold build of the default image (--no-cache): ${cold} s (target: about 180 s)"
fi
warm=$(secs "$img" "$cs" build)
echo "warm build of the default image (all layers cached): ${warm} s"
ocb=$(secs "$oc" "$cs" build --with-opencode)
echo "opencode variant after the default (its layers cached; the first build ever also downloads opencode's npm package): ${ocb} s"

mb() { "$eng" image inspect --format '{{.Size}}' "$1" | awk '{ printf "%d", $1 / 1e6 }'; }
ratio() { awk -v a="$1" -v t="$target_mb" 'BEGIN { printf "%.2f", a / t }'; }
dmb=$(mb "$img")
omb=$(mb "$oc")
echo "default image $img: ${dmb} MB = $(ratio "$dmb")x the target (< ${target_mb} MB with git): $([ "$dmb" -lt "$target_mb" ] && echo met || echo MISSED)"
echo "opencode image $oc: ${omb} MB = $(ratio "$omb")x the target ($((omb - dmb)) MB more: opencode's layer; opt-in)"

# What takes the space (MB of 10^6 bytes, as the image sizes; on disk inside the opencode image, which holds
# everything the default has): the agents, the packages the runtime stage
# adds to the base (grouped), our own files, and the Debian slim base.
base=docker.io/library/debian:bookworm-slim
# shellcheck disable=SC2016 # dpkg-query expands it
basepk=$("$eng" run --rm --network none --entrypoint /bin/sh "$base" -c 'dpkg-query -Wf "\${Package}\n"' | sort -u)
basemb=$(mb "$base")
# shellcheck disable=SC2016 # expanded inside the container
"$eng" run --rm --network none --entrypoint /bin/sh --env "BASEPK=$basepk" --env "BASEMB=$basemb" "$oc" -c '
	k() { du -skx "$@" 2>/dev/null | awk "{s += \$1} END {print s + 0}"; }
	# pk PACKAGE...: kB of the regular files those packages installed (one du: hard links once)
	pk() { for p in "$@"; do dpkg -L "$p" 2>/dev/null; done | while read -r f; do
		[ -f "$f" ] && [ ! -L "$f" ] && printf "%s\0" "$f"; done | xargs -0 -r du -ckx 2>/dev/null |
		awk "\$2 == \"total\" {s += \$1} END {print s + 0}"; }
	mbs() { awk -v k="$1" "BEGIN { printf \"%6.1f\", k * 1024 / 1e6 }"; }
	added=$(dpkg-query -Wf "\${Package}\n" | sort -u | while read -r p; do
		printf "%s\n" "$BASEPK" | grep -qx "$p" || echo "$p"; done)
	gitpk="git git-man liberror-perl perl perl-modules-5.36 libperl5.36 libgdbm6 libgdbm-compat4 libcurl3-gnutls libexpat1 librtmp1 libssh2-1"
	rest=$(for p in $added; do case " $gitpk ripgrep " in *" $p "*) ;; *) echo "$p" ;; esac; done)
	total=$(k /)
	claude=$(k /usr/local/bin/claude)
	opencode=$(k /usr/local/bin/opencode)
	git=$(pk $gitpk)
	rg=$(pk ripgrep)
	libs=$(pk $rest)
	ours=$(k /usr/sbin/sandbox-init /usr/libexec/code-sandbox /usr/bin/sandbox-* /usr/bin/git-remote-sandbox /etc/code-sandbox)
	echo "what takes the space (MB on disk; the default image is all of it but opencode):"
	echo "  $(mbs "$claude")  Claude Code (standalone bun executable: runtime + embedded JS payload)"
	echo "  $(mbs "$opencode")  opencode (standalone binary, the variant only)"
	echo "  $(mbs "$git")  git with perl and libcurl3-gnutls (Debian: perl is a hard dependency)"
	echo "  $(mbs "$rg")  ripgrep"
	echo "  $(mbs "$libs")  runtime libraries and ca-certificates ($(echo $rest | wc -w) packages: $(echo $rest | tr " " ","))"
	echo "  $(mbs "$ours")  code-sandbox (init, wrappers, daemon, allowlist, profiles)"
	echo "  $(mbs $((BASEMB * 1000000 / 1024)))  the Debian slim base image (${BASEMB} MB)"
	echo "  $(mbs $((total - claude - opencode - git - rg - libs - ours - BASEMB * 1000000 / 1024)))  the rest (devuser, hardening, package database growth)"
	echo "  $(mbs "$total")  total on disk (du)"'
