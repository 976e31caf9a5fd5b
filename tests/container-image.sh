#!/usr/bin/env bash
# Builds (or refreshes, from the build cache) the container image every
# container test uses, through bin/code-sandbox build, before the root suite
# runs: the container tests in that suite (container-readonly, the pivots
# suite) and test-sandbox.sh must test the image of this checkout, never a
# stale one left by an earlier run. One TAP line; a counted SKIP (never a
# silent pass) without root or a working engine.
set -uo pipefail
# shellcheck source=tests/support/sandbox-launch.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/support/sandbox-launch.sh"

cs_need_root_and_engine container-image
[ "$CS_ENG" != podman ] || "$CS_SRC/tools/podman-setup.sh" >&2
home=$(mktemp -d /tmp/cs-image-home.XXXXXX) || exit 1
trap 'rm -rf "$home"' EXIT
start=$(date +%s)
if CONTAINER_ENGINE=$CS_ENG CODE_SANDBOX_IMAGE=$CS_IMAGE HOME=$home "$CS_SRC/bin/code-sandbox" build >&2; then
	echo "ok 1 - image $CS_IMAGE built with $CS_ENG ($(($(date +%s) - start)) s)"
	st=0
else
	echo "not ok 1 - image $CS_IMAGE: bin/code-sandbox build failed with $CS_ENG"
	st=1
fi
echo "1..1"
exit "$st"
