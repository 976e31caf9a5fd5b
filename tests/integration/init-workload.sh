#!/usr/bin/env bash
# Everyday developer work keeps working as the agent under the full
# hardening (uid drop, empty capabilities, NoNewPrivs, seccomp): git,
# gcc, make, python3 with threads, node with a worker thread, bash job
# control, pipelines, pthreads.
set -uo pipefail
# shellcheck source=../support/tap.sh
. "$SOURCE_DIR/tests/support/tap.sh"
tap_require_root
# shellcheck source=../support/init-env.sh
. "$SOURCE_DIR/tests/support/init-env.sh"
initenv_setup

work=$IE/out/workload
mkdir "$work"
chown 2100:2100 "$work"
out=$IE/out/workload.out
st=0
initenv_run HOST_UID=2100 HOST_GID=2100 -- "$PROBE" workload "$work" >"$out" 2>"$IE/out/workload.err" || st=$?
check "workload exits 0 ($st)" "$st" -eq 0
while IFS='=' read -r step result; do
	case $step in step.*) ;; *) continue ;; esac
	if [ "$result" = skip ]; then
		skip "${step#step.}" "not installed"
	else
		check "${step#step.}: $result" "$result" = ok
	fi
done <"$out"
for s in git_init git_commit gcc gcc_run make python3 bash_job_control pthread; do
	ok "step $s ran" grep -q "^step\.$s=" "$out"
done
check "the commit is the agent's" "$(stat -c %u "$work/repo/.git/HEAD" 2>/dev/null)" = 2100
[ "$st" -eq 0 ] || sed 's/^/# /' "$IE/out/workload.err" | tail -n 30
tap_done
