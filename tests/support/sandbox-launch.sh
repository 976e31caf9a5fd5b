#!/usr/bin/env bash
# Shared by test-sandbox.sh and tests/e2e-agent.sh: find a container engine,
# make sure the image exists (built through `bin/code-sandbox build`), and
# start containers exactly as the launcher does (`bin/code-sandbox`) in the
# simulated internet. Source after tap.sh, simnet.sh and fakeapi.sh.
#
#   cs_need_root_and_engine NAME      prints a counted SKIP line and exits 0
#                                     when not root or no engine works
#   cs_setup                          temp dirs, a workspace owned by
#                                     CS_HOST_UID:CS_HOST_GID
#   cs_image                          CS_IMAGE present, else built
#   cs_launch OUT ERR [VAR=VALUE...] -- [LAUNCHER OPTIONS] [-- CMD...]
#                                     runs bin/code-sandbox in CS_WS with the
#                                     test knobs; returns its status; the
#                                     firewall table is deleted afterwards
#   cs_cleanup                        containers, volumes, temp dirs (simnet_down
#                                     is the caller's)
#
# Knobs: CONTAINER_ENGINE (default: docker when `docker info` works, else
# podman), CODE_SANDBOX_IMAGE (default: what the launcher builds,
# localhost/code-sandbox:latest), BUILD_DIR (test binaries, default
# build/gcc), CS_HOST_UID/CS_HOST_GID (4242).

CS_SRC=${CS_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CS_IMAGE=${CODE_SANDBOX_IMAGE:-localhost/code-sandbox:latest}
CS_HOST_UID=${CS_HOST_UID:-4242}
CS_HOST_GID=${CS_HOST_GID:-4242}
CS_ENG=""
CS_T=""
CS_WS=""
CS_NAMES=()
CS_RUN=0

cs_skip_all() { # cs_skip_all NAME REASON: one counted SKIP, never a silent pass
	echo "SKIP: $1: $2" >&2
	echo "ok 1 - $1 # SKIP $2"
	echo "1..1"
	exit 0
}

cs_engine() {
	if [ -n "${CONTAINER_ENGINE:-}" ]; then
		command -v "$CONTAINER_ENGINE" >/dev/null 2>&1 && "$CONTAINER_ENGINE" info >/dev/null 2>&1 &&
			echo "$CONTAINER_ENGINE"
		return
	fi
	if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
		echo docker
	elif command -v podman >/dev/null 2>&1 && podman info >/dev/null 2>&1; then
		echo podman
	fi
}

cs_need_root_and_engine() { # cs_need_root_and_engine NAME
	[ "$(id -u)" -eq 0 ] || cs_skip_all "$1" "needs root (network namespaces of the simulated internet)"
	CS_ENG=$(cs_engine || true)
	[ -n "$CS_ENG" ] || cs_skip_all "$1" "no working container engine (podman or docker; CONTAINER_ENGINE=${CONTAINER_ENGINE:-unset})"
	local t
	for t in ip nft dnsmasq socat openssl dig; do
		command -v "$t" >/dev/null || cs_skip_all "$1" "needs $t"
	done
	if [ "$CS_ENG" = docker ] && [ -z "${CS_DOCKER_NETWORK:-}" ]; then
		# Docker cannot join a named network namespace (--network ns:...):
		# that needs the holder container of CONTAINERS.md, not written yet.
		cs_skip_all "$1" "docker: the simulated internet needs podman's --network ns: (set CONTAINER_ENGINE=podman)"
	fi
}

cs_setup() {
	CS_T=$(mktemp -d "/tmp/cs-packtest-$$.XXXXXX")
	chmod 0755 "$CS_T"
	CS_WS="$CS_T/ws"
	mkdir -p "$CS_WS" "$CS_T/hosthome" "$CS_T/bin"
	chown "$CS_HOST_UID:$CS_HOST_GID" "$CS_WS"
	# Test programs the agent runs, copied next to the workspace (the
	# checkout's parents need not be traversable by the host UID).
	local b
	for b in probe fw-probe; do
		if [ ! -x "${BUILD_DIR:-$CS_SRC/build/gcc}/tests/support/$b" ]; then
			ninja -C "${BUILD_DIR:-$CS_SRC/build/gcc}" "tests/support/$b" >&2 || return 1
		fi
		install -m 0755 "${BUILD_DIR:-$CS_SRC/build/gcc}/tests/support/$b" "$CS_T/bin/$b"
	done
}

cs_image() {
	"$CS_ENG" image inspect "$CS_IMAGE" >/dev/null 2>&1 && return 0
	echo "# image $CS_IMAGE missing: building it with bin/code-sandbox build" >&2
	CONTAINER_ENGINE=$CS_ENG CODE_SANDBOX_IMAGE=$CS_IMAGE HOME="$CS_T/hosthome" \
		"$CS_SRC/bin/code-sandbox" build >&2
}

# The table sandbox-init leaves in the named namespace: a later control run
# would be silently blocked by it (CONTAINERS.md).
cs_flush_firewall() {
	ip netns exec "$SIMNET_SBX" nft delete table inet code_sandbox 2>/dev/null || true
}

cs_launch() { # cs_launch OUT ERR [VAR=VALUE...] -- ARGS...
	local out=$1 err=$2 st=0 name
	shift 2
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		envs+=("$1")
		shift
	done
	[ "${1:-}" = -- ] && shift
	CS_RUN=$((CS_RUN + 1))
	name="cs-packtest-$$-$CS_RUN"
	CS_NAMES+=("$name")
	(cd "$CS_WS" && env HOME="$CS_T/hosthome" XDG_CONFIG_HOME="$CS_T/hosthome/.config" \
		XDG_STATE_HOME="$CS_T/hosthome/.state" XDG_RUNTIME_DIR="$CS_T/hosthome/.run" \
		CONTAINER_ENGINE="$CS_ENG" CODE_SANDBOX_IMAGE="$CS_IMAGE" \
		CODE_SANDBOX_NETWORK="ns:/run/netns/$SIMNET_SBX" CODE_SANDBOX_DNS="$SIMNET_SIM_V4" \
		CODE_SANDBOX_EXTRA_CA="${FAKEAPI_CA:-}" CODE_SANDBOX_NAME="$name" \
		"${envs[@]}" "$CS_SRC/bin/code-sandbox" "$@") >"$out" 2>"$err" </dev/null || st=$?
	cs_flush_firewall
	return "$st"
}

cs_last_name() { echo "cs-packtest-$$-$CS_RUN"; }

cs_cleanup() {
	local n v
	for n in "${CS_NAMES[@]}"; do
		"$CS_ENG" rm -f "$n" >/dev/null 2>&1 || true
	done
	if [ -n "$CS_WS" ] && [ -n "$CS_ENG" ]; then
		# The launcher's per-project home volume (named after the workspace).
		for v in $("$CS_ENG" volume ls --format '{{.Name}}' 2>/dev/null); do
			case $v in code-sandbox-home-ws-*) ;; *) continue ;; esac
			if [ "$(cs_volume_of_ws)" = "$v" ]; then "$CS_ENG" volume rm -f "$v" >/dev/null 2>&1 || true; fi
		done
	fi
	[ -z "$CS_T" ] || rm -rf "$CS_T"
}

# The home volume name the launcher uses for CS_WS (bin/code-sandbox,
# project_id: basename and the first 12 hex digits of the path's sha256).
cs_volume_of_ws() {
	printf 'code-sandbox-home-ws-%s\n' "$(printf '%s' "$CS_WS" | sha256sum | cut -c1-12)"
}
