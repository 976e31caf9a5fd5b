#!/usr/bin/env bash
# Builds (or refreshes, from the build cache) the container images every
# container test uses, through bin/code-sandbox build, before the root suite
# runs: the container tests in that suite (container-readonly, the pivots
# suite) and test-sandbox.sh must test the images of this checkout, never
# stale ones left by an earlier run. Two variants (Dockerfile): the default
# image (Claude Code) and the opencode one (--with-opencode: the default's
# layers plus one, so seconds from the cache), which test-sandbox.sh runs
# opencode in. TAP lines; a counted SKIP (never a silent pass) without root
# or a working engine.
set -uo pipefail
# shellcheck source=tests/support/sandbox-launch.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/support/sandbox-launch.sh"

cs_need_root_and_engine container-image
[ "$CS_ENG" != podman ] || "$CS_SRC/tools/podman-setup.sh" >&2
home=$(mktemp -d /tmp/cs-image-home.XXXXXX) || exit 1
trap 'rm -rf "$home"' EXIT
n=0 st=0
tap() { # tap OK DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 1 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; st=1; fi
}
build() { # build IMAGE [--with-opencode]: 1 on success
	CONTAINER_ENGINE=$CS_ENG CODE_SANDBOX_IMAGE=$1 HOME=$home "$CS_SRC/bin/code-sandbox" build "${@:2}" >&2 && echo 1 || echo 0
}
label() { "$CS_ENG" image inspect --format '{{index .Config.Labels "io.code-sandbox.opencode"}}' "$1" 2>/dev/null; }
layers() { "$CS_ENG" image inspect --format '{{range .RootFS.Layers}}{{println .}}{{end}}' "$1" 2>/dev/null; }

# The base image: from the registry when one answers, else built from
# Debian's packages (--offline-base: CI machines may reach only the Debian
# mirror; a fresh one has no image at all).
base=()
if ! "$CS_ENG" image exists debian:bookworm-slim 2>/dev/null &&
	! "$CS_ENG" image inspect debian:bookworm-slim >/dev/null 2>&1 &&
	! "$CS_ENG" pull -q docker.io/library/debian:bookworm-slim >/dev/null 2>&1; then
	echo "# no debian:bookworm-slim and no registry: building it with --offline-base" >&2
	base=(--offline-base)
fi
start=$(date +%s)
ok=$(build "$CS_IMAGE" "${base[@]}")
tap "$ok" "image $CS_IMAGE built with $CS_ENG ($(($(date +%s) - start)) s)"
oc=$CS_IMAGE-opencode
[ -z "${CODE_SANDBOX_OPENCODE_IMAGE:-}" ] || oc=$CODE_SANDBOX_OPENCODE_IMAGE
start=$(date +%s)
ok=$(build "$oc" --with-opencode)
tap "$ok" "opencode variant $oc built with $CS_ENG ($(($(date +%s) - start)) s)"
tap "$([ "$(label "$CS_IMAGE"):$(label "$oc")" = 0:1 ] && echo 1 || echo 0)" \
	"labels: the default image without opencode, the variant with it ($(label "$CS_IMAGE"):$(label "$oc"))"
# The variant is the default image with opencode as its last layer: every
# layer of the default but the last is the variant's too, in order, and the
# default's last is the empty layer (the Dockerfile's COPY of an empty
# directory; sha256:5f70bf18..., the digest of an empty layer).
empty=sha256:5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef
d=$(layers "$CS_IMAGE")
v=$(layers "$oc")
nd=$(wc -l <<<"$d")
tap "$([ "$nd" -ge 2 ] && [ "$(head -n $((nd - 1)) <<<"$v")" = "$(head -n $((nd - 1)) <<<"$d")" ] && echo 1 || echo 0)" \
	"the variant shares the first $((nd - 1)) layers of the default image ($(wc -l <<<"$v") in all)"
tap "$([ "$(tail -n 1 <<<"$d")" = "$empty" ] && [ "$(tail -n 1 <<<"$v")" != "$empty" ] && echo 1 || echo 0)" \
	"the default's last layer is empty, the variant's is opencode ($(($("$CS_ENG" image inspect --format '{{.Size}}' "$oc") / 1000000 - $("$CS_ENG" image inspect --format '{{.Size}}' "$CS_IMAGE") / 1000000)) MB more)"
# The opencode stage's check of /agents (Dockerfile, "agents-check"): the
# layer the runtime copies in after its hardening step. Its RUN, taken from
# the Dockerfile, in a container of the image (as root, no network) on a
# planted /agents: passes on root's 0755 file, stops on each bad one.
chk=$(sed -n '/^# agents-check$/,/[^\\]$/p' "$CS_SRC/Dockerfile" | sed '1d; 2s/^RUN //; s/\\$//')
agents_check() { # agents_check SETUP: prints the check's status after SETUP (90: SETUP failed)
	local rc=0
	"$CS_ENG" run --rm --network none --user 0:0 --entrypoint /bin/sh "$CS_IMAGE" -c \
		"{ install -d -m 0755 /agents && cp /bin/true /agents/opencode && chmod 0755 /agents/opencode && $1; } || exit 90
		( $chk )" >/dev/null 2>&1 || rc=$?
	echo "$rc"
}
tap "$([ -n "$chk" ] && [ "$(agents_check true)" = 0 ] && echo 1 || echo 0)" "agents-check: a root 0755 binary passes"
for bad in "chmod 4755 /agents/opencode" "chmod 2755 /agents/opencode" "chmod 0775 /agents/opencode" \
	"chmod 0757 /agents/opencode" "chown 1000 /agents/opencode" "chgrp 1000 /agents/opencode" \
	"chmod 0777 /agents" "ln -s /tmp /agents/link"; do
	r=$(agents_check "$bad")
	tap "$([ -n "$chk" ] && [ "$r" = 1 ] && echo 1 || echo 0)" "agents-check: stops the build after '$bad' ($r)"
done
echo "1..$n"
exit "$st"
