#!/bin/sh
# Run inside the container as the agent: ordinary work that must produce
# no host-pivot warning (a new branch, edited sources, commits, tracking
# branches, a remote and push -u to a local bare repository mounted at
# /mnt/remote.git). With the argument "protect" (--protect-git-config) it
# also tries to set a key. Prints NAME=ok|failed per step; a step that
# printed an error but exited 0 is NAME=error.
G=/usr/bin/git
cd /workspace || exit 1
r() {
	if "$@" >/tmp/step.err 2>&1; then
		if grep -qi 'error\|fatal\|could not' /tmp/step.err; then echo "${T}=error"; else echo "${T}=ok"; fi
	else
		echo "${T}=failed"
	fi
}
T=checkout_b r $G checkout -q -b feature
echo 'int main(void) { return 0; }' >main.c
echo 'more' >>README
T=commit r sh -c "$G add main.c README && $G commit -qm 'feature: main.c'"
T=remote_add r $G remote add sbx /mnt/remote.git
T=push r $G push -q /mnt/remote.git feature
T=checkout_track r $G checkout -q -b tracking origin/main
T=branch_u r $G branch -q -u origin/main
T=branch_m r $G branch -m tracking tracking2
T=checkout r $G checkout -q feature
T=branch_d r $G branch -q -D tracking2
T=push_u r $G push -q -u sbx feature
T=stash r sh -c "echo x >>README && $G stash -q && $G stash pop -q && $G checkout -q README"
T=fetch r $G fetch -q sbx
[ "${1:-}" != protect ] || T=config_set r $G config core.fsmonitor "touch /tmp/x"
exit 0
