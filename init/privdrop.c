/* SPDX-License-Identifier: MIT */
#include "privdrop.h"

#include <cap-ng.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macros.h"

/* Highest capability number we look at; the kernel answers EINVAL beyond
 * its own last one (cap_last_cap), which ends the loops early. */
#define PRIVDROP_CAP_LIMIT 64

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
