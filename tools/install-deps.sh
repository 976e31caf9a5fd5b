#!/usr/bin/env bash
# Install the Debian packages listed in tools/packages.txt that are missing.
# Does nothing when all are present; needs root (or prints what is missing).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mapfile -t pkgs < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages.txt")
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages (run as root to install): ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# --error-on=any: plain apt-get update exits 0 even when every fetch failed.
apt-get update --error-on=any -q
"$here/apt-install.sh" "${missing[@]}"
