#!/usr/bin/env bash
# lib/ is pure code (STYLE.md): fail if the static library references any
# process, identity, socket or mount syscall wrapper.
set -euo pipefail
lib=${1:?usage: lib-symbols.sh LIBSANDBOX.a}
forbidden='^(fork|vfork|clone|clone3|execve|execv|execvp|execvpe|execl|execlp|execle|fexecve|system|popen|posix_spawn|posix_spawnp|setuid|setgid|seteuid|setegid|setresuid|setresgid|setreuid|setregid|setgroups|socket|socketpair|connect|bind|listen|accept|accept4|mount|umount|umount2|pivot_root|prctl|unshare|setns|kill|ptrace|capng_apply|capng_change_id|seccomp_load)$'
bad=$(nm -u "$lib" | awk '{print $2}' | sed 's/@.*//' | grep -E "$forbidden" | sort -u || true)
echo "1..1"
if [ -n "$bad" ]; then
	echo "not ok 1 - lib/ references forbidden symbols: $(echo "$bad" | tr '\n' ' ')"
	exit 1
fi
echo "ok 1 - lib/ references no process, identity, socket or mount calls"
