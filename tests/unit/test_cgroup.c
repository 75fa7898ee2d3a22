// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgroup v2 ids to paths (user/util/cgroup.c), unprivileged: the cgroup2 mount found in
 * crafted mountinfo lines (hybrid layout, optional fields, escaped names, a bind mount of
 * a subtree beside the whole hierarchy, a root outside the cgroup namespace), then this
 * machine's own cgroup found by its id against /proc/self/cgroup.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "util/cgroup.h"
#include "unit_util.h"

/* cg2_mount_in() over text: its return, the mount into mnt and the root into root. */
static int parse(const char *text, char *mnt, char *root)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	assert_non_null(f);
	strcpy(mnt, "unset");
	strcpy(root, "unset");
	ret = cg2_mount_in(f, mnt, 4096, root, 4096);
	fclose(f);
	return ret;
}

/* text names the cgroup2 mount mnt, showing the cgroup root. */
static void expect_mount(const char *text, const char *mnt, const char *root)
{
	char m[4096], r[4096];

	assert_int_equal(parse(text, m, r), 0);
	assert_string_equal(m, mnt);
	assert_string_equal(r, root);
}

/* text names no cgroup2 mount. */
static void expect_none(const char *text)
{
	char m[4096], r[4096];

	assert_int_equal(parse(text, m, r), -ENOENT);
}

#define V1_LINE "34 25 0:30 / /sys/fs/cgroup/cpu rw,nosuid shared:16 - cgroup cgroup rw,cpu\n"

static void test_hybrid_layout(void **state)
{
	expect_mount(V1_LINE "30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid,nodev "
			     "shared:10 master:1 - cgroup2 cgroup2 rw,nsdelegate\n",
		     "/sys/fs/cgroup/unified", "");
}

static void test_escapes_undone(void **state)
{
	expect_mount("30 25 0:26 /kube\\134pods/pod\\0401 /mnt/my\\040cg\\011x rw "
		     "- cgroup2 none rw\n",
		     "/mnt/my cg\tx", "/kube\\pods/pod 1");
}

/* A container's subtree mounted first, the whole hierarchy later: the whole one wins. */
static void test_whole_hierarchy_preferred(void **state)
{
	expect_mount("40 25 0:26 /kubepods/pod1 /run/pod rw - cgroup2 cgroup2 rw\n" V1_LINE
		     "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
		     "/sys/fs/cgroup", "");
	/* alone, the subtree is used, its cgroups' paths starting with its root */
	expect_mount("40 25 0:26 /kubepods/pod1 /run/pod rw - cgroup2 cgroup2 rw\n"
		     "41 25 0:26 /kubepods/pod2 /run/pod2 rw - cgroup2 cgroup2 rw\n",
		     "/run/pod", "/kubepods/pod1");
}

/* A mount of a cgroup above this namespace's root: paths from the mount, no prefix. */
static void test_root_outside_namespace(void **state)
{
	expect_mount("30 25 0:26 /../.. /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "/sys/fs/cgroup",
		     "");
}

static void test_none(void **state)
{
	expect_none(V1_LINE);
	expect_none("");
	/* "cgroup2" elsewhere than the type does not count */
	expect_none("30 25 0:26 / /cgroup2 rw - tmpfs cgroup2 rw\n");
}

/* This process's cgroup (/proc/self/cgroup's 0:: line) found by its id: its inode. */
static void test_own_cgroup(void **state)
{
	char mnt[4096], root[4096], line[4096], dir[8192], own[4096] = "";
	struct cg_paths c = {};
	struct stat st;
	FILE *f;

	if (cg2_mount(mnt, sizeof(mnt), root, sizeof(root))) {
		printf("SKIP %s: no cgroup2 mount on this machine\n", __func__);
		skip();
	}
	f = fopen("/proc/self/cgroup", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3))
			sscanf(line + 3, "%4095s", own);
	fclose(f);
	if (!own[0] || root[0]) {
		printf("SKIP %s: no cgroup v2 path of our own, or a mount of a subtree\n",
		       __func__);
		skip();
	}
	snprintf(dir, sizeof(dir), "%s%s", mnt, strcmp(own, "/") ? own : "");
	assert_int_equal(stat(dir, &st), 0);
	assert_non_null(cg_paths_find(&c, st.st_ino));
	assert_string_equal(cg_paths_find(&c, st.st_ino), own);
	assert_int_equal(stat(mnt, &st), 0);
	assert_string_equal(cg_paths_find(&c, st.st_ino), "/");
	/* an id that is no cgroup's: NULL, after one scan */
	assert_null(cg_paths_find(&c, UINT64_MAX - 1));
	cg_paths_free(&c);
}

UU_MAIN(cmocka_unit_test(test_hybrid_layout), cmocka_unit_test(test_escapes_undone),
	cmocka_unit_test(test_whole_hierarchy_preferred),
	cmocka_unit_test(test_root_outside_namespace), cmocka_unit_test(test_none),
	cmocka_unit_test(test_own_cgroup))
