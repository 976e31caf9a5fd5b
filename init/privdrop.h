/* SPDX-License-Identifier: MIT */
/* Dropping privilege: the agent's child drops to the host user with no
 * capabilities at all, and PID 1 keeps only what its loop needs. */
#ifndef CS_INIT_PRIVDROP_H
#define CS_INIT_PRIVDROP_H

#include <linux/capability.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PRIVDROP_MSG_MAX 160

/* Every capability a run needs, start-up steps' and loop's (bit N =
 * capability N, the kernel's numbers): CHOWN and DAC_OVERRIDE (home walk,
 * settings), SETUID, SETGID (the child's ID change), SETPCAP (clearing
 * bounding sets), NET_ADMIN (firewall, loop's set refresher),
 * NET_BIND_SERVICE (DNS gate on port 53), KILL (the loop signals the agent,
 * whose UID differs). SECURITY.md lists why each is needed. */
#define PRIVDROP_CAP_BIT(c) (UINT64_C(1) << (c))
#define PRIVDROP_RUN_CAPS                                                                          \
	(PRIVDROP_CAP_BIT(CAP_CHOWN) | PRIVDROP_CAP_BIT(CAP_DAC_OVERRIDE) |                        \
	 PRIVDROP_CAP_BIT(CAP_SETUID) | PRIVDROP_CAP_BIT(CAP_SETGID) |                             \
	 PRIVDROP_CAP_BIT(CAP_SETPCAP) | PRIVDROP_CAP_BIT(CAP_NET_ADMIN) |                         \
	 PRIVDROP_CAP_BIT(CAP_NET_BIND_SERVICE) | PRIVDROP_CAP_BIT(CAP_KILL))

/* In the agent's child, as root: no supplementary groups, then GID, then
 * UID (libcap-ng, all three of real/effective/saved), every capability set
 * and the bounding set cleared, ambient set cleared, NO_NEW_PRIVS set.
 * Returns 0, or a negative errno with a reason in msg (msg_size bytes). */
int privdrop_child(uid_t uid, gid_t gid, char *msg, size_t msg_size);

/* Checks, from the kernel's point of view, that privdrop_child() worked:
 * real/effective/saved UID and GID, no supplementary groups, permitted,
 * effective, inheritable, ambient and bounding sets empty, NO_NEW_PRIVS on,
 * and setuid(0) failing with EPERM. Returns 0, or -EPERM with what is wrong
 * in msg. */
int privdrop_verify(uid_t uid, gid_t gid, char *msg, size_t msg_size);

/* Before anything changes: every capability in need_mask must be in both
 * the bounding and the permitted set of the calling thread. Returns 0, or
 * -EPERM after printing one line naming each missing capability and the
 * engine option that grants it:
 *     sandbox-init: capabilities: missing CAP_KILL (add --cap-add=KILL)
 * (exit EXIT_INIT_PRIVDROP). A run that went on without one would fail half
 * way, or worse, leave PID 1 unable to drop to its loop set. */
int privdrop_check_caps(uint64_t need_mask);

/* PID 1 after the fork: keeps CAP_KILL plus the capabilities in keep_mask
 * (bit N = capability N) in its effective and permitted sets, clears the
 * inheritable and ambient sets, and removes everything else from the
 * bounding set too. Returns 0 or a negative errno. */
int privdrop_pid1(uint64_t keep_mask);

/* privdrop_pid1(), then checks from the kernel's side that the effective,
 * permitted and bounding sets are exactly CAP_KILL plus keep_mask. On any
 * failure PID 1 must not go on holding its start-up capabilities while the
 * agent runs: prints one "sandbox-init: privdrop: ..." line, sends SIGKILL
 * to agent (> 0) and reaps it, and returns a negative errno (exit
 * EXIT_INIT_PRIVDROP). Returns 0 when the drop is complete. */
int privdrop_pid1_or_kill(uint64_t keep_mask, pid_t agent);

#endif
