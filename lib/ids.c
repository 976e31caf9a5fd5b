/* SPDX-License-Identifier: MIT */
#include "ids.h"

#include <errno.h>
#include <string.h>

#include "decimal.h"
#include "macros.h"

/* Parses the decimal field [s, e): 0 on success. */
static int parse_field_id(const char *s, const char *e, unsigned *ret)
{
	uint64_t v;
	int r = decimal_parse(s, (size_t)(e - s), IDS_ID_MAX, &v);

	if (r < 0)
		return r;
	*ret = (unsigned)v;
	return 0;
}

int ids_parse_id(const char *s, unsigned *ret_id)
{
	if (!s)
		return -EINVAL;
	return parse_field_id(s, s + strlen(s), ret_id);
}

int ids_check_host_id(unsigned id, const unsigned *overflow_ids, size_t n, const char **reterr_why)
{
	const char *why = NULL;

	if (id == 0)
		why = "root";
	else if (id == IDS_KERNEL_OVERFLOW_ID)
		why = "nobody/nogroup, the kernel's overflow ID: every unmapped owner shows as it";
	else if (id == 65535U)
		why = "(uint16_t)-1, 'no ID' to 16-bit interfaces";
	else if (id > IDS_HOST_ID_MAX)
		why = "(uid_t)-2 or -1: 'nobody' of NFS, 'no change' to chown and setresuid";
	for (size_t i = 0; !why && overflow_ids && i < n; i++)
		if (id == overflow_ids[i])
			why = "the kernel's overflow ID (/proc/sys/kernel/overflowuid and the like)";
	if (!why)
		return 0;
	*reterr_why = why;
	return -EPERM;
}

/* Membership in any of these grants power beyond the user's own files:
 * root/sudo/wheel/admin administer the machine; adm and systemd-journal
 * read every log; shadow reads password hashes; disk and kmem reach raw
 * devices and kernel memory; tty writes to other users' terminals; utmp
 * forges login records; docker, podman, lxd, libvirt, libvirt-qemu and kvm
 * drive a hypervisor or a container engine (root-equivalent); staff writes
 * /usr/local, which root's PATH searches first; operator and lpadmin are
 * administrative roles on some distributions. */
static const char *const privileged_groups[] = {
	"root",    "sudo",   "wheel",  "admin",   "adm",          "shadow",
	"disk",    "kmem",   "tty",    "utmp",    "docker",       "podman",
	"lxd",     "libvirt", "libvirt-qemu", "kvm", "systemd-journal", "staff",
	"operator", "lpadmin",
};

bool ids_group_name_is_privileged(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(privileged_groups); i++)
		if (strcmp(name, privileged_groups[i]) == 0)
			return true;
	return false;
}

int ids_gid_is_privileged(const char *group_text, size_t len, unsigned gid, char *ret_name)
{
	const char *p = group_text, *end = group_text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *f[4], *q = p;
		size_t nf = 0;
		unsigned g;

		/* name:password:gid:members */
		f[nf++] = p;
		while (q < le && nf < ELEMENTSOF(f)) {
			if (*q == ':')
				f[nf++] = q + 1;
			q++;
		}
		if (nf == 4) {
			const char *name_end = f[1] - 1;
			size_t name_len = (size_t)(name_end - f[0]);
			const char *gid_end = f[3] - 1;

			if (name_len > 0 && name_len <= IDS_NAME_MAX &&
			    parse_field_id(f[2], gid_end, &g) == 0 && g == gid) {
				char name[IDS_NAME_MAX + 1];

				memcpy(name, f[0], name_len);
				name[name_len] = '\0';
				if (ids_group_name_is_privileged(name)) {
					memcpy(ret_name, name, name_len + 1);
					return 1;
				}
			}
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}
