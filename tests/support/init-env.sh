# shellcheck shell=bash
# shellcheck disable=SC2034 # PROBE, IE_STATUS and the like are for the sourcing script
# Sourced by tests/integration/init-*.sh and bench/init-*.sh (after tap.sh).
# Builds a throwaway "image" and runs sandbox-init in it as PID 1 of fresh
# pid, mount and network namespaces, the way a container would:
#
#   $IE/etc        a minimal image-like /etc (tests/support/etc-fixture.sh:
#                  root, daemon, nobody, node at 1000, the privileged groups;
#                  nothing from the host's accounts) plus a devuser account
#                  (1001:1001, home /home/devuser) and fixture profiles
#                  /etc/code-sandbox/profiles/{strict,permissive}.json
#   $IE/home       /home, with devuser's home owned 1001:1001
#   $IE/workspace  /workspace, owned 1001:1001
#   $IE/out        world-writable scratch for the agent's output files
#   $IE/bin/probe  a copy of the syscall probe, readable by any uid
#
# Each run builds a new root (tmpfs with bind mounts of /usr, /dev, ... and
# of the image's etc, home and workspace; /tmp is the host's so that paths
# under $IE are the same inside and out), pivots into it, mounts a fresh
# /proc, limits the capability bounding set to what the container grants
# PID 1, sets no_new_privs, clears the environment and execs sandbox-init.
#
#   initenv_setup                      create $IE; cleanup trapped on EXIT
#   initenv_run [VAR=VAL...] -- ARG... run sandbox-init ARG... in the
#                                      foreground; returns its exit status
#   initenv_start [VAR=VAL...] -- ARG... the same in the background
#   initenv_pid1                       host pid of that sandbox-init (PID 1)
#   initenv_agent_pid                  host pid of PID 1's child named probe
#   initenv_pid1_idle                  true once PID 1 waits in its poll loop
#   initenv_wait                       wait for the background run; sets IE_STATUS
#   initenv_tree_sum DIR [NAME...]     checksum of names, owners, modes,
#                                      inodes, ctimes and contents under DIR,
#                                      leaving out the top-level NAMEs
#
# Knobs (environment of the sourcing script, read at each run):
#   INIT_BIN    default $BUILD_DIR/init/sandbox-init
#   IE_T0_FILE  the inner shell writes $EPOCHREALTIME there just before
#               exec'ing the capability drop and sandbox-init (the start-up
#               benchmark's origin)
#   IE_BINDS    "SRC:DST ..." extra bind mounts in the new root (DST absolute
#               inside it), e.g. a foreign mount inside the home
#   IE_NOT_PID1 =1: the inner shell stays PID 1 and runs sandbox-init as its
#               child (for the not-PID-1 and --test-subreaper cases)
#   IE_TTY      =1: sandbox-init becomes a session leader with stdin as its
#               controlling terminal (setsid --ctty), as runc does for -t
#   IE_NETNS    run in this existing network namespace (ip netns exec)
#               instead of a fresh, empty one (the firewall tests use the
#               simulated internet's sbx namespace)
#   IE_SIGIGN   =1: sandbox-init starts with SIGINT, SIGQUIT and SIGPIPE
#               ignored (SIG_IGN survives execve), as under a launcher
#               started from a background job or by nohup
: "${BUILD_DIR:?BUILD_DIR must name the meson build directory}"
: "${SOURCE_DIR:?SOURCE_DIR must name the source tree}"
# shellcheck source=tests/support/etc-fixture.sh
. "$SOURCE_DIR/tests/support/etc-fixture.sh"

INIT_BIN=${INIT_BIN:-$BUILD_DIR/init/sandbox-init}
IE_DEV_UID=1001
IE_DEV_GID=1001
IE_DOCKER_GID=$ETCFIXTURE_DOCKER_GID
# What the container grants PID 1 (docker-compose.yml's cap_add).
IE_CAPS=-all,+chown,+dac_override,+fowner,+setuid,+setgid,+setpcap,+kill,+net_admin,+net_bind_service
IE_UNSHARE_PID=
IE_STATUS=

initenv_cleanup() {
	local p
	if [ -n "$IE_UNSHARE_PID" ] && kill -0 "$IE_UNSHARE_PID" 2>/dev/null; then
		p=$(initenv_pid1 2>/dev/null || true)
		# SIGKILL to a namespace's PID 1 ends every process in it.
		[ -n "$p" ] && kill -KILL "$p" 2>/dev/null
		kill -KILL "$IE_UNSHARE_PID" 2>/dev/null
		wait "$IE_UNSHARE_PID" 2>/dev/null
	fi
	if [ -n "${IE:-}" ] && [ -d "$IE" ]; then
		rm -rf --one-file-system "$IE"
	fi
	if declare -F initenv_cleanup_hook >/dev/null; then initenv_cleanup_hook; fi
	return 0
}

initenv_setup() {
	if [ ! -x "$INIT_BIN" ]; then
		echo "Bail out! $INIT_BIN not built"
		exit 1
	fi
	IE=$(mktemp -d /tmp/cs-init-test.XXXXXX)
	trap initenv_cleanup EXIT
	chmod 0755 "$IE"
	etcfixture_build "$IE/etc" || exit 1
	printf 'devuser:x:%d:%d:devuser:/home/devuser:/bin/bash\n' "$IE_DEV_UID" "$IE_DEV_GID" >>"$IE/etc/passwd"
	printf 'devuser:x:%d:\n' "$IE_DEV_GID" >>"$IE/etc/group"
	printf 'devuser:!:20000:0:99999:7:::\n' >>"$IE/etc/shadow"
	printf 'devuser:!::\n' >>"$IE/etc/gshadow"
	mkdir -p "$IE/etc/code-sandbox/profiles"
	cat >"$IE/etc/code-sandbox/profiles/strict.json" <<-'EOF'
		{
		  "permissions": {
		    "defaultMode": "default",
		    "deny": ["Bash(curl:*)", "Read(~/.ssh/**)"]
		  },
		  "env": { "CODE_SANDBOX_FIXTURE": "strict" }
		}
	EOF
	cat >"$IE/etc/code-sandbox/profiles/permissive.json" <<-'EOF'
		{
		  "permissions": { "defaultMode": "acceptEdits" },
		  "env": { "CODE_SANDBOX_FIXTURE": "permissive" }
		}
	EOF
	chmod 0644 "$IE"/etc/code-sandbox/profiles/*.json
	# The firewall (step 3) needs an allowlist; a literal address only, so
	# nothing is resolved in the empty network namespace.
	printf '# init tests: no names to resolve\n198.51.100.1\n' >"$IE/etc/code-sandbox/allowlist"
	chmod 0644 "$IE/etc/code-sandbox/allowlist"
	mkdir -p "$IE/home/devuser" "$IE/workspace" "$IE/out" "$IE/root" "$IE/bin"
	printf 'export EDITOR=vi\n' >"$IE/home/devuser/.profile"
	chown -R "$IE_DEV_UID:$IE_DEV_GID" "$IE/home/devuser" "$IE/workspace"
	chmod 0755 "$IE/home/devuser"
	chmod 1777 "$IE/out"
	cp "$BUILD_DIR/tests/support/probe" "$IE/bin/probe"
	chmod 0755 "$IE/bin" "$IE/bin/probe"
	PROBE=$IE/bin/probe
}

# Runs inside the new namespaces as their PID 1 (bash), then execs
# sandbox-init in its place. Arguments: IE INIT_BIN CAPS T0_FILE BINDS
# MODE NENV VAR=VAL... (NENV of them) ARG...
_initenv_inner() {
	set -eu
	local ie=$1 init=$2 caps=$3 t0=$4 binds=$5 mode=$6 nenv=$7
	shift 7
	local envs=("${@:1:$nenv}")
	shift "$nenv"
	local root=$ie/root e
	mount --make-rprivate /
	# A container's loopback is up (the DNS gate listens there); a fresh
	# network namespace's is not.
	ip link set lo up
	mount -t tmpfs -o mode=0755 cs-init-root "$root"
	for e in usr bin sbin lib lib32 lib64 libx32 dev sys run var opt "${init#/}" "${ie#/}"; do
		e=/${e%%/*}
		[ -e "$root$e" ] && continue
		if [ -L "$e" ]; then
			ln -s "$(readlink "$e")" "$root$e"
		elif [ -d "$e" ] && [ "$e" != /tmp ]; then
			mkdir "$root$e"
			mount --rbind "$e" "$root$e"
		fi
	done
	mkdir "$root/etc" "$root/home" "$root/workspace" "$root/tmp" "$root/proc" "$root/.old"
	mount --bind "$ie/etc" "$root/etc"
	mount --bind "$ie/home" "$root/home"
	mount --bind "$ie/workspace" "$root/workspace"
	mount --bind /tmp "$root/tmp"
	mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
	for e in $binds; do
		mount --bind "${e%%:*}" "$root${e#*:}"
	done
	cd "$root"
	pivot_root . .old
	umount -l /.old
	rmdir /.old
	cd /
	local drop=(setpriv --nnp --inh-caps=-all --ambient-caps=-all --bounding-set="$caps")
	case $mode in *+sigign) trap '' INT QUIT PIPE ;; *) ;; esac
	case ${mode%+sigign} in
	not-pid1)
		# Stay PID 1 ourselves; pass sandbox-init's status on.
		set +e
		env -i "${envs[@]}" "${drop[@]}" "$init" "$@"
		exit $?
		;;
	tty) drop=(setsid --ctty "${drop[@]}") ;;
	*) ;;
	esac
	[ -z "$t0" ] || printf '%s\n' "$EPOCHREALTIME" >"$t0"
	exec env -i "${envs[@]}" "${drop[@]}" "$init" "$@"
}

# Splits "VAR=VAL... -- ARG..." into _IE_ENV and _IE_ARGS. PATH is the
# launcher's usual one; sanitizer options pass through for ASan builds.
_initenv_parse() {
	_IE_ENV=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
	local v
	for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
		[ -z "${!v:-}" ] || _IE_ENV+=("$v=${!v}")
	done
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		_IE_ENV+=("$1")
		shift
	done
	[ "${1:-}" = "--" ] && shift
	_IE_ARGS=("$@")
}

_initenv_argv() { # the command line that runs sandbox-init, in _IE_ARGV
	local mode=pid1
	[ "${IE_NOT_PID1:-}" != 1 ] || mode=not-pid1
	[ "${IE_TTY:-}" != 1 ] || mode="tty"
	[ "${IE_SIGIGN:-}" != 1 ] || mode+="+sigign"
	local ns=(unshare --pid --mount --net --fork)
	[ -z "${IE_NETNS:-}" ] || ns=(ip netns exec "$IE_NETNS" unshare --pid --mount --fork)
	_IE_ARGV=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin
		"${ns[@]}"
		bash -c "$(declare -f _initenv_inner)"'; _initenv_inner "$@"' _initenv_inner
		"$IE" "$INIT_BIN" "$IE_CAPS" "${IE_T0_FILE:-}" "${IE_BINDS:-}" "$mode"
		"${#_IE_ENV[@]}" "${_IE_ENV[@]}" "${_IE_ARGS[@]}")
}

_initenv_exec() {
	_initenv_argv
	exec "${_IE_ARGV[@]}"
}

# initenv_cmd [VAR=VAL...] -- ARG...: prints the run as one shell-quoted
# command line (for script(1), which takes a command string).
initenv_cmd() {
	_initenv_parse "$@"
	_initenv_argv
	printf '%q ' "${_IE_ARGV[@]}"
}

initenv_run() {
	_initenv_parse "$@"
	local st=0
	(_initenv_exec) || st=$?
	return "$st"
}

initenv_start() {
	_initenv_parse "$@"
	_initenv_exec &
	IE_UNSHARE_PID=$!
}

_initenv_child_named() { # PARENT COMM: first child of PARENT whose comm is COMM
	local c comm kids=()
	read -ra kids 2>/dev/null <"/proc/$1/task/$1/children" || true
	for c in "${kids[@]}"; do
		comm=$(cat "/proc/$c/comm" 2>/dev/null) || continue
		if [ "$comm" = "$2" ]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

initenv_pid1() {
	[ -n "$IE_UNSHARE_PID" ] || return 1
	_initenv_child_named "$IE_UNSHARE_PID" sandbox-init
}

initenv_agent_pid() {
	local p1
	p1=$(initenv_pid1) || return 1
	_initenv_child_named "$p1" probe
}

# True while PID 1 is blocked in its poll loop (poll, ppoll, epoll_wait or
# epoll_pwait in /proc/PID/syscall): start-up is over, the loop idles.
initenv_pid1_idle() {
	local p1 nr
	p1=$(initenv_pid1) || return 1
	read -r nr _ 2>/dev/null <"/proc/$p1/syscall" || return 1
	case $nr in 7 | 271 | 232 | 281) return 0 ;; *) return 1 ;; esac
}

initenv_wait() {
	IE_STATUS=0
	wait "$IE_UNSHARE_PID" || IE_STATUS=$?
	IE_UNSHARE_PID=
}

initenv_tree_sum() { # DIR [EXCLUDED-TOP-LEVEL-NAME...]
	local dir=$1 x prune=()
	shift
	for x in "$@"; do prune+=(-path "./$x" -prune -o); done
	(
		cd "$dir" || exit 1
		find . "${prune[@]}" -printf '%p %U:%G %m %i %C@ %s %l\n' | LC_ALL=C sort
		find . "${prune[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum
	) | sha256sum | cut -d' ' -f1
}


# kv FILE KEY: the value of the first KEY=... line in FILE.
kv() {
	sed -n "s/^$2=//p" "$1" | head -n1
}
