# shellcheck shell=bash
# Staging for tests that run something as another user (nobody, devuser, a
# test user). That user may not be able to reach the checkout or the build
# directory: a clone under a 0700 home or `mktemp -d` is the norm (issue 12),
# so never hand it a path under $SOURCE_DIR or $BUILD_DIR. Copy what it runs
# or reads into a directory it can reach, then use the copies:
#
#   . "$SOURCE_DIR/tests/support/stage.sh"
#   stage_dir T cs-mytest                 # T=new 0755 dir /tmp/cs-mytest.XXXXXX,
#                                         # removed by stage_cleanup
#   stage_binaries "$T/bin" "$BUILD_DIR/x/prog" "$SOURCE_DIR/tests/support/y.py"
#   stage_vars "$T/bin" PROG HELPER       # copies $PROG and $HELPER into
#                                         # $T/bin and points the variables
#                                         # at the copies
#   trap 'stage_cleanup; ...' EXIT        # removes every stage_dir
#
# stage_binaries and stage_vars fail ("Bail out!" on stdout, status 1) when
# DIR is not reachable by every user (e.g. under a private $TMPDIR) or is on
# a noexec mount, so the test stops with the reason instead of failing later
# with EACCES.
# Copies are mode 0755 (programs and scripts alike), the directory too.
STAGE_DIRS=()

# stage_reachable PATH: true when every directory from / down to PATH (PATH
# included) is searchable by others, so any uid can resolve PATH/NAME.
stage_reachable() {
	local p
	p=$(realpath -e -- "$1" 2>/dev/null) || return 1
	while :; do
		[ "$(($(stat -c '0%a' -- "$p") & 01))" -ne 0 ] || return 1
		[ "$p" != / ] || return 0
		p=$(dirname -- "$p")
	done
}

# stage_dir VAR PREFIX: sets VAR to a new 0755 directory /tmp/PREFIX.XXXXXX
# (not through $(...): the directory must be recorded in this shell).
stage_dir() {
	local _stage_d
	# /tmp, not $TMPDIR: a per-user TMPDIR is often 0700.
	_stage_d=$(mktemp -d "/tmp/${2:?usage: stage_dir VAR PREFIX}.XXXXXX") || return 1
	STAGE_DIRS+=("$_stage_d")
	chmod 0755 "$_stage_d" || return 1
	printf -v "$1" '%s' "$_stage_d"
}

stage_cleanup() { # removes every directory stage_dir made in this shell
	local d
	for d in "${STAGE_DIRS[@]}"; do
		rm -rf --one-file-system "$d"
	done
	STAGE_DIRS=()
	return 0
}

stage_binaries() { # stage_binaries DIR FILE...
	local dir=${1:?usage: stage_binaries DIR FILE...} f
	shift
	mkdir -p -- "$dir" && chmod 0755 -- "$dir" || return 1
	if ! stage_reachable "$dir"; then
		echo "Bail out! stage: $dir is not reachable by other users (a parent directory is private)"
		return 1
	fi
	case ,$(findmnt -n -o OPTIONS --target "$dir" 2>/dev/null), in
	*,noexec,*)
		echo "Bail out! stage: $dir is on a noexec mount"
		return 1
		;;
	*) ;;
	esac
	for f in "$@"; do
		if ! cp -f -- "$f" "$dir/" || ! chmod 0755 -- "$dir/${f##*/}"; then
			echo "Bail out! stage: cannot copy $f into $dir"
			return 1
		fi
	done
}

stage_vars() { # stage_vars DIR VAR...: stage_binaries DIR "${VAR}"..., then VAR=DIR/name
	local dir=${1:?usage: stage_vars DIR VAR...} v
	shift
	for v in "$@"; do
		stage_binaries "$dir" "${!v:?stage_vars: $v is empty}" || return 1
		printf -v "$v" '%s/%s' "$dir" "${!v##*/}"
	done
}
