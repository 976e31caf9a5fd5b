#!/bin/sh
# Makes podman usable on a CI or development VM (run as root, idempotent):
# podman's default rlimits exceed the hard limits of some VMs (every
# container then fails with "error setting rlimit type 7"), and crun, where
# installed, refuses a hybrid cgroup v1 layout. Writes one containers.conf
# drop-in and nothing else. See README.md, "Troubleshooting".
set -eu
dir=${CONTAINERS_CONF_DROPIN_DIR:-/etc/containers/containers.conf.d}
file=$dir/50-code-sandbox-vm.conf
want='# Written by tools/podman-setup.sh (code-sandbox CI): limits this VM allows.
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=4096:4096"]
[engine]
runtime = "runc"'
if [ -f "$file" ] && [ "$(cat "$file")" = "$want" ]; then exit 0; fi
mkdir -p "$dir"
printf '%s\n' "$want" >"$file.tmp"
mv "$file.tmp" "$file"
echo "podman-setup: wrote $file"
