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
#   cs_image_opencode                 CS_OC_IMAGE (the opencode variant,
#                                     CODE_SANDBOX_OPENCODE_IMAGE, default
#                                     CS_IMAGE-opencode, or CS_IMAGE itself
#                                     when it has opencode) present, else
#                                     built with --with-opencode (from the
#                                     default image's cache: seconds)
#   cs_has_opencode IMAGE             true when IMAGE's label says opencode
#   cs_net_up                         after simnet_up: how containers join the
#                                     sandbox namespace (CS_NETWORK)
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
# build/gcc), CS_HOST_UID/CS_HOST_GID (4242), CS_NET_MODE: "ns" (podman's
# --network ns:/run/netns/SBX, the default with podman) or "holder" (the
# portable form, the default with Docker, which cannot join a named
# namespace: a holder container with --network none receives the simnet's
# veth, and containers join it with --network container:HOLDER; its
# namespace is then attached under SIMNET_SBX's name, so simnet_exec_sbx and
# the controls run in it).

CS_SRC=${CS_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CS_IMAGE=${CODE_SANDBOX_IMAGE:-localhost/code-sandbox:latest}
CS_HOST_UID=${CS_HOST_UID:-4242}
CS_HOST_GID=${CS_HOST_GID:-4242}
CS_ENG=""
CS_T=""
CS_WS=""
CS_NAMES=()
CS_RUN=0
CS_NETWORK=""
CS_NET_MODE=${CS_NET_MODE:-}

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

cs_has_opencode() { # cs_has_opencode IMAGE
	[ "$("$CS_ENG" image inspect --format '{{index .Config.Labels "io.code-sandbox.opencode"}}' "$1" 2>/dev/null)" = 1 ]
}

CS_OC_IMAGE=""
cs_image_opencode() {
	if [ -n "${CODE_SANDBOX_OPENCODE_IMAGE:-}" ]; then
		CS_OC_IMAGE=$CODE_SANDBOX_OPENCODE_IMAGE
	elif cs_has_opencode "$CS_IMAGE"; then
		CS_OC_IMAGE=$CS_IMAGE
	else
		CS_OC_IMAGE=$CS_IMAGE-opencode
	fi
	"$CS_ENG" image inspect "$CS_OC_IMAGE" >/dev/null 2>&1 && return 0
	echo "# image $CS_OC_IMAGE missing: building it with bin/code-sandbox build --with-opencode" >&2
	CONTAINER_ENGINE=$CS_ENG CODE_SANDBOX_IMAGE=$CS_OC_IMAGE HOME="$CS_T/hosthome" \
		"$CS_SRC/bin/code-sandbox" build --with-opencode >&2
}

cs_net_up() {
	local holder pid
	if [ -z "$CS_NET_MODE" ]; then
		if [ "$CS_ENG" = docker ]; then CS_NET_MODE=holder; else CS_NET_MODE=ns; fi
	fi
	case $CS_NET_MODE in
	ns)
		CS_NETWORK="ns:/run/netns/$SIMNET_SBX"
		return 0
		;;
	holder) ;;
	*)
		echo "CS_NET_MODE must be ns or holder" >&2
		return 1
		;;
	esac
	holder="cs-packtest-$$-holder"
	CS_NAMES+=("$holder")
	"$CS_ENG" run -d --rm --name "$holder" --network none --cap-drop ALL \
		--security-opt no-new-privileges --entrypoint sleep "$CS_IMAGE" infinity >/dev/null || return 1
	pid=$("$CS_ENG" inspect -f '{{.State.Pid}}' "$holder") || return 1
	# The veth leaves sbx for the holder (losing its addresses), and the
	# holder's namespace takes sbx's name.
	ip -n "$SIMNET_SBX" link set veth0 netns "$pid" &&
		ip netns delete "$SIMNET_SBX" &&
		ip netns attach "$SIMNET_SBX" "$pid" &&
		ip -n "$SIMNET_SBX" link set lo up &&
		ip -n "$SIMNET_SBX" addr add "$SIMNET_SBX_V4/24" dev veth0 &&
		ip -n "$SIMNET_SBX" addr add "$SIMNET_SBX_V6/64" dev veth0 nodad &&
		ip -n "$SIMNET_SBX" link set veth0 up &&
		ip -n "$SIMNET_SBX" route add 198.51.100.0/24 via "$SIMNET_SIM_V4" &&
		ip -n "$SIMNET_SBX" -6 route add 2001:db8::/32 via "$SIMNET_SIM_V6" || return 1
	if [ -n "$(ip -n "$SIMNET_SBX" route show default)$(ip -n "$SIMNET_SBX" -6 route show default)" ]; then
		echo "the holder's namespace has a default route" >&2
		return 1
	fi
	CS_NETWORK="container:$holder"
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
		CODE_SANDBOX_NETWORK="$CS_NETWORK" CODE_SANDBOX_DNS="$SIMNET_SIM_V4" \
		CODE_SANDBOX_EXTRA_CA="${FAKEAPI_CA:-}" CODE_SANDBOX_NAME="$name" \
		"${envs[@]}" "$CS_SRC/bin/code-sandbox" "$@") >"$out" 2>"$err" </dev/null || st=$?
	cs_flush_firewall
	return "$st"
}

cs_last_name() { echo "cs-packtest-$$-$CS_RUN"; }

cs_cleanup() {
	local n v=""
	for n in "${CS_NAMES[@]}"; do
		"$CS_ENG" rm -f "$n" >/dev/null 2>&1 || true
	done
	if [ -n "$CS_WS" ] && [ -d "$CS_WS" ] && [ -n "$CS_ENG" ]; then
		# The launcher's per-project home volume, named as the launcher
		# itself names it (its --dry-run prints the engine command).
		v=$(cd "$CS_WS" && HOME="$CS_T/hosthome" XDG_CONFIG_HOME="$CS_T/hosthome/.config" \
			XDG_STATE_HOME="$CS_T/hosthome/.state" CONTAINER_ENGINE="$CS_ENG" CODE_SANDBOX_DNS=198.51.100.53 \
			"$CS_SRC/bin/code-sandbox" --dry-run 2>/dev/null |
			sed -n 's|^--volume=\(code-sandbox-home-[^:]*\):/home/devuser$|\1|p') || true
		if [ -n "$v" ] && "$CS_ENG" volume inspect "$v" >/dev/null 2>&1; then
			"$CS_ENG" volume rm -f "$v" >/dev/null 2>&1 || echo "# could not remove volume $v" >&2
		fi
	fi
	[ -z "$CS_T" ] || rm -rf "$CS_T"
}
