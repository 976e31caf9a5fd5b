/* SPDX-License-Identifier: MIT */
#include "privdrop.h"

#include <cap-ng.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fail.h"
#include "log.h"
#include "macros.h"

/* Highest capability number we look at; the kernel answers EINVAL beyond
 * its own last one (cap_last_cap), which ends the loops early. */
#define PRIVDROP_CAP_LIMIT 64

/* The names Docker and podman take in --cap-add (CAP_ prefix off). */
static const char *const cap_names[] = {
	[CAP_CHOWN] = "CHOWN",
	[CAP_DAC_OVERRIDE] = "DAC_OVERRIDE",
	[CAP_DAC_READ_SEARCH] = "DAC_READ_SEARCH",
	[CAP_FOWNER] = "FOWNER",
	[CAP_FSETID] = "FSETID",
	[CAP_KILL] = "KILL",
	[CAP_SETGID] = "SETGID",
	[CAP_SETUID] = "SETUID",
	[CAP_SETPCAP] = "SETPCAP",
	[CAP_NET_BIND_SERVICE] = "NET_BIND_SERVICE",
	[CAP_NET_ADMIN] = "NET_ADMIN",
};

/* Line buffer for the missing-capability message: every capability named
 * twice (about 40 bytes each) fits. */
#define PRIVDROP_LINE_MAX 1024

#define MSG(...) (void)snprintf(msg, msg_size, __VA_ARGS__)

int privdrop_child(uid_t uid, gid_t gid, char *msg, size_t msg_size)
{
	int r;

	/* Supplementary groups first, while we still may: the agent gets none
	 * (an image adding devuser to a group must not smuggle in access). */
	if (setgroups(0, NULL) < 0) {
		r = -errno;
		MSG("setgroups(0) failed");
		return r;
	}
	/* Keep nothing across the ID change: libcap-ng applies what is
	 * selected (here, nothing) after setresgid/setresuid, and clears the
	 * bounding set while it still holds CAP_SETPCAP. */
	capng_clear(CAPNG_SELECT_BOTH);
	r = capng_change_id((int)uid, (int)gid, CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_BOUNDING);
	if (r != 0) {
		MSG("capng_change_id(%u, %u) failed with %d", (unsigned)uid, (unsigned)gid, r);
		return errno > 0 ? -errno : -EPERM;
	}
	/* Ambient capabilities would survive execve of non-setuid programs. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) {
		r = -errno;
		MSG("clearing the ambient set failed");
		return r;
	}
	/* No setuid/setgid/file-capability gains through execve, ever; also
	 * what lets an unprivileged process install a seccomp filter. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		r = -errno;
		MSG("PR_SET_NO_NEW_PRIVS failed");
		return r;
	}
	return 0;
}

int privdrop_verify(uid_t uid, gid_t gid, char *msg, size_t msg_size)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {0};
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	int n;

	if (getresuid(&ru, &eu, &su) < 0 || ru != uid || eu != uid || su != uid) {
		MSG("UIDs are %u/%u/%u, expected %u", (unsigned)ru, (unsigned)eu, (unsigned)su, (unsigned)uid);
		return -EPERM;
	}
	if (getresgid(&rg, &eg, &sg) < 0 || rg != gid || eg != gid || sg != gid) {
		MSG("GIDs are %u/%u/%u, expected %u", (unsigned)rg, (unsigned)eg, (unsigned)sg, (unsigned)gid);
		return -EPERM;
	}
	n = getgroups(0, NULL);
	if (n != 0) {
		MSG("%d supplementary groups remain", n);
		return -EPERM;
	}
	if (syscall(SYS_capget, &hdr, data) < 0) {
		MSG("capget failed");
		return -EPERM;
	}
	for (size_t i = 0; i < ELEMENTSOF(data); i++)
		if (data[i].effective || data[i].permitted || data[i].inheritable) {
			MSG("capability sets not empty (word %zu: eff %#x prm %#x inh %#x)", i,
			    data[i].effective, data[i].permitted, data[i].inheritable);
			return -EPERM;
		}
	for (int c = 0; c < PRIVDROP_CAP_LIMIT; c++) {
		int b = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		int a = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0);

		if (b < 0)
			break; /* EINVAL: past the kernel's last capability */
		if (b != 0 || a != 0) {
			MSG("capability %d still in the %s set", c, b != 0 ? "bounding" : "ambient");
			return -EPERM;
		}
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		MSG("NO_NEW_PRIVS is not set");
		return -EPERM;
	}
	/* The proof that matters: the way back to root is closed. */
	if (setuid(0) == 0) {
		MSG("setuid(0) succeeded");
		return -EPERM;
	}
	if (errno != EPERM) {
		MSG("setuid(0) failed with errno %d, expected EPERM", errno);
		return -EPERM;
	}
	return 0;
}

int privdrop_pid1(uint64_t keep_mask)
{
	int last = (int)CAP_LAST_CAP;

	keep_mask |= 1ULL << CAP_KILL;
	capng_clear(CAPNG_SELECT_BOTH);
	for (int c = 0; c <= last && c < PRIVDROP_CAP_LIMIT; c++)
		if (keep_mask & (1ULL << c))
			if (capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED | CAPNG_BOUNDING_SET,
					 (unsigned)c) < 0)
				return -EINVAL;
	/* Bounding set first (needs CAP_SETPCAP, which the capability sets
	 * about to be applied no longer hold), then the sets themselves. */
	if (capng_apply(CAPNG_SELECT_BOUNDS) < 0)
		return negative_errno();
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		return negative_errno();
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* The calling thread's capability sets, from the kernel (no libcap-ng
 * state involved): bit N = capability N. */
static int read_caps(uint64_t *ret_eff, uint64_t *ret_prm, uint64_t *ret_bnd)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {0};
	uint64_t bnd = 0;

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	for (int c = 0; c < PRIVDROP_CAP_LIMIT; c++) {
		int b = prctl(PR_CAPBSET_READ, c, 0, 0, 0);

		if (b < 0)
			break; /* EINVAL: past the kernel's last capability */
		if (b > 0)
			bnd |= UINT64_C(1) << c;
	}
	*ret_eff = (uint64_t)data[1].effective << 32 | data[0].effective;
	*ret_prm = (uint64_t)data[1].permitted << 32 | data[0].permitted;
	*ret_bnd = bnd;
	return 0;
}

/* Appends sep (unless buf is empty) and str to the NUL-terminated buf of
 * size bytes, truncating. */
static void append(char *buf, size_t size, const char *sep, const char *str)
{
	size_t l = strlen(buf);

	(void)snprintf(buf + l, size - l, "%s%s", l ? sep : "", str);
}

int privdrop_check_caps(uint64_t need_mask)
{
	char names[PRIVDROP_LINE_MAX / 2] = "", adds[PRIVDROP_LINE_MAX / 2] = "";
	uint64_t eff, prm, bnd, missing;
	int r;

	r = read_caps(&eff, &prm, &bnd);
	if (r < 0)
		return init_fail("capabilities", r, "cannot read PID 1's capability sets");
	missing = need_mask & ~(prm & bnd);
	if (missing == 0)
		return 0;
	for (int c = 0; c < PRIVDROP_CAP_LIMIT; c++) {
		const char *n = (size_t)c < ELEMENTSOF(cap_names) ? cap_names[c] : NULL;
		char one[48];

		if (!(missing & (UINT64_C(1) << c)))
			continue;
		if (n)
			(void)snprintf(one, sizeof(one), "CAP_%s", n);
		else
			(void)snprintf(one, sizeof(one), "capability %d", c);
		append(names, sizeof(names), ", ", one);
		if (n) {
			(void)snprintf(one, sizeof(one), "--cap-add=%s", n);
			append(adds, sizeof(adds), " ", one);
		}
	}
	(void)init_fail("capabilities", 0, "missing %s (add %s)", names, adds);
	return -EPERM;
}

int privdrop_pid1_or_kill(uint64_t keep_mask, pid_t agent)
{
	uint64_t want = keep_mask | UINT64_C(1) << CAP_KILL, eff = 0, prm = 0, bnd = 0;
	int r, status;

	r = privdrop_pid1(keep_mask);
	if (r < 0)
		(void)init_fail("privdrop", r, "PID 1 cannot drop to its loop capabilities (%#llx)",
				(unsigned long long)want);
	else {
		r = read_caps(&eff, &prm, &bnd);
		if (r < 0)
			(void)init_fail("privdrop", r, "cannot read PID 1's capability sets after the drop");
		else if (eff != want || prm != want || bnd != want) {
			r = -EPERM;
			(void)init_fail("privdrop",
					0, "PID 1 kept more than its loop capabilities (eff %#llx prm %#llx bnd %#llx, expected %#llx)",
					(unsigned long long)eff, (unsigned long long)prm,
					(unsigned long long)bnd, (unsigned long long)want);
		}
	}
	if (r >= 0)
		return 0;
	/* The agent already runs: it must not go on beside a PID 1 that holds
	 * its start-up capabilities. As a namespace's PID 1 our exit would
	 * kill it too; under --test-subreaper only this does. */
	if (agent > 0) {
		if (kill(agent, SIGKILL) < 0)
			(void)log_error_errno(-errno, "Cannot kill the agent (pid %d): %s", (int)agent, strerror(errno));
		else
			while (waitpid(agent, &status, 0) < 0 && errno == EINTR)
				;
	}
	return r;
}
