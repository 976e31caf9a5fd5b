# shellcheck shell=bash
# A minimal image-like /etc for integration tests, built from scratch so no
# test depends on the machine's own accounts and groups (a laptop's second
# user at uid 1001, an admin group, a distribution's extra system users).
#
#   . "$SOURCE_DIR/tests/support/etc-fixture.sh"
#   etcfixture_build DIR     creates DIR (must not exist) holding:
#     passwd, group, shadow, gshadow: the accounts of a Debian-based agent
#       image: root, daemon, bin, sys, nobody, and node at 1000:1000 (the
#       image's own uid-1000 account, as in the node images), plus the
#       privileged groups (root, adm, tty, disk, kmem, wheel, sudo, shadow,
#       utmp, staff, docker, kvm, systemd-journal, ...) at fixed gids
#     hosts, hostname, nsswitch.conf (files only), resolv.conf (a
#       documentation address: nothing is ever sent there)
#     ld.so.cache, ld.so.conf, ld.so.conf.d, alternatives, services,
#       protocols: copied from the host, because the test roots bind-mount
#       the host's /usr and these describe it (no account data in them)
# Nothing else: a test adds its own accounts (devuser) and files.
#
# Fixed ids the tests may rely on (ETCFIXTURE_* below): sudo 27, disk 6,
# shadow 42, adm 4, docker 990, and uid/gid 1000 held by node.
# shellcheck disable=SC2034 # the constants are for the sourcing script
ETCFIXTURE_UID1000=node
ETCFIXTURE_DOCKER_GID=990

etcfixture_build() { # etcfixture_build DIR
	local d=${1:?usage: etcfixture_build DIR} f
	mkdir -m 0755 "$d" || return 1
	cat >"$d/passwd" <<-'EOF'
		root:x:0:0:root:/root:/bin/bash
		daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin
		bin:x:2:2:bin:/bin:/usr/sbin/nologin
		sys:x:3:3:sys:/dev:/usr/sbin/nologin
		sync:x:4:65534:sync:/bin:/bin/sync
		games:x:5:60:games:/usr/games:/usr/sbin/nologin
		man:x:6:12:man:/var/cache/man:/usr/sbin/nologin
		mail:x:8:8:mail:/var/mail:/usr/sbin/nologin
		www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin
		nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
		node:x:1000:1000::/home/node:/bin/bash
	EOF
	cat >"$d/group" <<-EOF
		root:x:0:
		daemon:x:1:
		bin:x:2:
		sys:x:3:
		adm:x:4:
		tty:x:5:
		disk:x:6:
		lp:x:7:
		mail:x:8:
		wheel:x:11:
		man:x:12:
		kmem:x:15:
		dialout:x:20:
		cdrom:x:24:
		floppy:x:25:
		tape:x:26:
		sudo:x:27:
		audio:x:29:
		dip:x:30:
		www-data:x:33:
		operator:x:37:
		shadow:x:42:
		utmp:x:43:
		video:x:44:
		plugdev:x:46:
		staff:x:50:
		games:x:60:
		users:x:100:
		docker:x:$ETCFIXTURE_DOCKER_GID:
		kvm:x:992:
		systemd-journal:x:999:
		nogroup:x:65534:
		node:x:1000:
	EOF
	cut -d: -f1 "$d/passwd" | sed 's/$/:*:20000:0:99999:7:::/' >"$d/shadow"
	cut -d: -f1 "$d/group" | sed 's/$/:*::/' >"$d/gshadow"
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$d/hosts"
	printf 'cs-test-image\n' >"$d/hostname"
	printf '%s\n' 'passwd: files' 'group: files' 'shadow: files' 'gshadow: files' \
		'hosts: files dns' 'networks: files' 'protocols: files' 'services: files' \
		'ethers: files' 'rpc: files' >"$d/nsswitch.conf"
	printf 'nameserver 192.0.2.53\n' >"$d/resolv.conf"
	chmod 0644 "$d/passwd" "$d/group" "$d/hosts" "$d/hostname" "$d/nsswitch.conf" "$d/resolv.conf"
	chown root:root "$d"/*
	chmod 0640 "$d/shadow" "$d/gshadow"
	chgrp 42 "$d/shadow" "$d/gshadow"
	for f in ld.so.cache ld.so.conf ld.so.conf.d alternatives services protocols; do
		[ ! -e "/etc/$f" ] || cp -a "/etc/$f" "$d/$f" || return 1
	done
}
