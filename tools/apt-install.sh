#!/usr/bin/env bash
# apt-get install PACKAGE... without starting any service the packages
# bring (openssh-server's sshd, for one): the tests start their own daemons
# in namespaces, never on this machine's own network. A policy-rc.d that
# refuses every start (exit 101, Debian's policy interface, which
# invoke-rc.d and deb-systemd-invoke honour) is in place for the install
# only, unless the machine already has one.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
policy=/usr/sbin/policy-rc.d
ours=0
if [ ! -e "$policy" ]; then
	printf '#!/bin/sh\n# tools/apt-install.sh: no service starts during this install\nexit 101\n' >"$policy"
	chmod 0755 "$policy"
	ours=1
fi
st=0
apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 "$@" || st=$?
if [ "$ours" = 1 ]; then rm -f "$policy"; fi
exit "$st"
