#!/usr/bin/env bash
# bench/kube-start.sh: time from start to the agent's first instruction
# (its `date +%s%N`), the Pod of `code-sandbox kube` under `podman kube play`
# (agent and sandbox-execd sidecar, adapted for podman 4.3 by
# tests/kube/podman-adapt.py) vs the single-container launcher
# (`bin/code-sandbox --no-daemon`), alternating, in the same run. Both run
# with --network none (nothing to resolve: the gate's upstream is an
# unroutable documentation address) so only the start is measured.
# Prints the medians and the ratio. Needs root and podman.
#   CODE_SANDBOX_IMAGE=localhost/code-sandbox:kube bench/kube-start.sh [RUNS]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
[ "${1:-}" != --quick ] || RUNS=1
IMAGE=${CODE_SANDBOX_IMAGE:-localhost/code-sandbox:latest}
if [ "$(id -u)" -ne 0 ] || ! podman info >/dev/null 2>&1 || ! podman image inspect "$IMAGE" >/dev/null 2>&1; then
	echo "SKIP: needs root, podman and the image $IMAGE"
	exit 77
fi
T=$(mktemp -d /tmp/cs-kube-bench.XXXXXX)
chmod 0755 "$T"
NAME=cs-kube-bench-$$
cleanup() {
	podman pod rm -f "$NAME" >/dev/null 2>&1 || true
	podman volume rm -f "$NAME-config" "$NAME-workspace" >/dev/null 2>&1 || true
	podman rm -f "$NAME-launcher" >/dev/null 2>&1 || true
	for v in $(podman volume ls --format '{{.Name}}' | grep -E '^code-sandbox-home-ws-' || true); do
		[ "$v" != "code-sandbox-home-ws-$(printf '%s' "$T/ws" | sha256sum | cut -c1-12)" ] || podman volume rm -f "$v" >/dev/null 2>&1 || true
	done
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/ws" "$T/creds" "$T/home"
chown 4242:4242 "$T/ws"
"$SRC/bin/code-sandbox-kube" pod --name "$NAME" --image "$IMAGE" --cluster-dns 198.51.100.53 --dns-search "" \
	--host-uid 4242 --host-gid 4242 --workspace-pvc "$NAME-workspace" -- sh -c 'date +%s%N' >"$T/pod.yaml"

median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
pod_ms=() launch_ms=()
for i in $(seq "$RUNS"); do
	rm -rf "$T"/emptydir-* "$T"/*.conf
	python3 "$SRC/tests/kube/podman-adapt.py" "$T/pod.yaml" "$T/play.yaml" "$T" "$T/ws" "$T/creds" 2>/dev/null
	t0=$(date +%s%N)
	podman kube play --network none "$T/play.yaml" >/dev/null
	podman wait "$NAME-agent" >/dev/null
	t1=$(podman logs "$NAME-agent" 2>/dev/null | tr -dc '0-9\n' | grep -E '^[0-9]{19}$' | head -1)
	pod_ms+=($(((t1 - t0) / 1000000)))
	podman kube down "$T/play.yaml" >/dev/null 2>&1 || true
	podman volume rm -f "$NAME-config" >/dev/null 2>&1 || true

	t0=$(date +%s%N)
	t1=$(cd "$T/ws" && HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config" XDG_STATE_HOME="$T/home/.state" \
		CONTAINER_ENGINE=podman CODE_SANDBOX_IMAGE="$IMAGE" CODE_SANDBOX_NETWORK=none CODE_SANDBOX_DNS=198.51.100.53 \
		CODE_SANDBOX_NAME="$NAME-launcher" "$SRC/bin/code-sandbox" --no-daemon -- sh -c 'date +%s%N' 2>/dev/null </dev/null |
		tr -dc '0-9\n' | head -1)
	launch_ms+=($(((t1 - t0) / 1000000)))
	echo "run $i: pod ${pod_ms[-1]} ms, launcher ${launch_ms[-1]} ms"
done
p=$(printf '%s\n' "${pod_ms[@]}" | median)
l=$(printf '%s\n' "${launch_ms[@]}" | median)
echo "start to the agent's exec, median of $RUNS: pod (podman kube play, agent + sidecar) $p ms, launcher $l ms, ratio $(awk -v p="$p" -v l="$l" 'BEGIN {printf "%.2f", p / l}')x"
