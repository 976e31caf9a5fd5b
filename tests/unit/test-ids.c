/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>

#include "ids.h"
#include "macros.h"
#include "tap.h"

TEST(parse_valid_ids)
{
	static const struct {
		const char *in;
		unsigned out;
	} cases[] = {
		{"0", 0}, {"1", 1}, {"1000", 1000}, {"65534", 65534}, {"007", 7}, {"4294967294", 4294967294U},
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		unsigned v = 12345;
		EXPECT_EQ(ids_parse_id(cases[i].in, &v), 0);
		EXPECT_EQ(v, cases[i].out);
	}
}

TEST(parse_rejects_junk_and_overflow)
{
	static const struct {
		const char *in;
		int err;
	} cases[] = {
		{"", -EINVAL},           {"-1", -EINVAL},          {"+1", -EINVAL},
		{" 1", -EINVAL},         {"1 ", -EINVAL},          {"1a", -EINVAL},
		{"0x10", -EINVAL},       {"1.0", -EINVAL},         {"1\n", -EINVAL},
		{"4294967295", -ERANGE}, {"4294967296", -ERANGE}, {"99999999999999999999999", -ERANGE},
	};
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		unsigned v = 777;
		EXPECT_EQ(ids_parse_id(cases[i].in, &v), cases[i].err);
		/* Outputs untouched on failure. */
		EXPECT_EQ(v, 777);
	}
	EXPECT_EQ(ids_parse_id(NULL, &(unsigned){0}), -EINVAL);
}

TEST(privileged_group_names)
{
	static const char *const yes[] = {"root", "sudo", "wheel", "adm", "shadow", "disk", "docker",
					  "kvm", "lxd", "libvirt", "systemd-journal", "kmem", "tty"};
	static const char *const no[] = {"users", "devuser", "staff2", "Sudo", "", "dockers", "audio"};

	for (size_t i = 0; i < ELEMENTSOF(yes); i++)
		EXPECT_TRUE(ids_group_name_is_privileged(yes[i]));
	for (size_t i = 0; i < ELEMENTSOF(no); i++)
		EXPECT_FALSE(ids_group_name_is_privileged(no[i]));
}

static const char group_text[] = "root:x:0:\n"
				 "# a comment line\n"
				 "sudo:x:27:alice\n"
				 "users:x:100:\n"
				 "docker:x:990:\n"
				 "broken line without fields\n"
				 "wheel:x:notanumber:\n"
				 "dup:x:27\n" /* 3 fields: ignored */
				 "devuser:x:1001:";

TEST(gid_lookup_in_group_file)
{
	char name[IDS_NAME_MAX + 1] = "";

	EXPECT_EQ(ids_gid_is_privileged(group_text, strlen(group_text), 27, name), 1);
	EXPECT_STREQ(name, "sudo");
	EXPECT_EQ(ids_gid_is_privileged(group_text, strlen(group_text), 990, name), 1);
	EXPECT_STREQ(name, "docker");
	EXPECT_EQ(ids_gid_is_privileged(group_text, strlen(group_text), 0, name), 1);
	EXPECT_STREQ(name, "root");
	strcpy(name, "unchanged");
	EXPECT_EQ(ids_gid_is_privileged(group_text, strlen(group_text), 100, name), 0);
	EXPECT_EQ(ids_gid_is_privileged(group_text, strlen(group_text), 1001, name), 0);
	EXPECT_EQ(ids_gid_is_privileged(group_text, strlen(group_text), 4242, name), 0);
	EXPECT_STREQ(name, "unchanged");
	/* Not NUL-terminated: only len bytes are read ("root:x:0:" cut short). */
	EXPECT_EQ(ids_gid_is_privileged(group_text, 6, 0, name), 0);
	EXPECT_EQ(ids_gid_is_privileged("", 0, 0, name), 0);
}

TEST(host_id_refusals)
{
	static const unsigned overflow[] = {65534, 65534, 70000};
	static const unsigned refused[] = {0, 65534, 65535, 4294967294U, 4294967295U, 70000};
	static const unsigned accepted[] = {1, 501, 999, 1000, 1001, 65533, 65536, 100000, 4294967293U};
	const char *why;

	for (size_t i = 0; i < ELEMENTSOF(refused); i++) {
		why = NULL;
		EXPECT_EQ(ids_check_host_id(refused[i], overflow, ELEMENTSOF(overflow), &why), -EPERM);
		EXPECT_TRUE(why != NULL && why[0] != '\0');
	}
	for (size_t i = 0; i < ELEMENTSOF(accepted); i++) {
		why = "untouched";
		EXPECT_EQ(ids_check_host_id(accepted[i], overflow, ELEMENTSOF(overflow), &why), 0);
		EXPECT_STREQ(why, "untouched");
	}
	/* Without a list of overflow IDs, the kernel's default 65534 still is. */
	EXPECT_EQ(ids_check_host_id(65534, NULL, 0, &why), -EPERM);
	EXPECT_EQ(ids_check_host_id(70000, NULL, 0, &why), 0);
	/* The reasons say which. */
	(void)ids_check_host_id(0, NULL, 0, &why);
	EXPECT_TRUE(strstr(why, "root") != NULL);
	(void)ids_check_host_id(65534, NULL, 0, &why);
	EXPECT_TRUE(strstr(why, "nobody") != NULL);
	(void)ids_check_host_id(70000, overflow, ELEMENTSOF(overflow), &why);
	EXPECT_TRUE(strstr(why, "overflow") != NULL);
}
