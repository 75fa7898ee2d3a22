// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* cgroup v2 ids to paths (util/cgroup.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/cgroup.h"

/* mountinfo's octal escapes (\040 a space, \011, \012, \134 a backslash) undone in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

int cg2_mount_in(FILE *f, char *mnt, size_t len, char *root, size_t rlen)
{
	char line[8192], m[4096], r[4096], fs[64];
	bool found = false;

	/* ID PARENT MAJ:MIN ROOT MOUNT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
	while (fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2 ||
		    sscanf(dash + 3, "%63s", fs) != 1 || strcmp(fs, "cgroup2"))
			continue;
		/* the first cgroup2 mount, unless a later one shows the whole hierarchy */
		if (found && strcmp(r, "/"))
			continue;
		unescape(m);
		unescape(r);
		snprintf(mnt, len, "%s", m);
		/* a root outside this cgroup namespace (/..) cannot be named from here */
		snprintf(root, rlen, "%s", strcmp(r, "/") && strncmp(r, "/..", 3) ? r : "");
		if (!strcmp(r, "/"))
			return 0;
		found = true;
	}
	return found ? 0 : -ENOENT;
}

int cg2_mount(char *mnt, size_t len, char *root, size_t rlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int ret;

	if (!f)
		return -ENOENT;
	ret = cg2_mount_in(f, mnt, len, root, rlen);
	fclose(f);
	return ret;
}

void cg_paths_free(struct cg_paths *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		free(c->cg[i].path);
	free(c->cg);
	c->cg = NULL;
	c->nr = 0;
}

/* Every cgroup v2 directory under dir (rel: its path from the root), by inode (= id). */
static void cg_scan(struct cg_paths *c, const char *dir, const char *rel, int depth)
{
	struct dirent *de;
	struct stat st;
	char path[4096], r[4096];
	DIR *d;

	if (depth > 32 || stat(dir, &st))
		return;
	if (c->nr % 64 == 0) {
		void *tmp = realloc(c->cg, (c->nr + 64) * sizeof(*c->cg));

		if (!tmp)
			return;
		c->cg = tmp;
	}
	c->cg[c->nr].id = st.st_ino;
	c->cg[c->nr].path = strdup(rel[0] ? rel : "/");
	if (c->cg[c->nr].path)
		c->nr++;
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		snprintf(r, sizeof(r), "%s/%s", rel, de->d_name);
		cg_scan(c, path, r, depth + 1);
	}
	closedir(d);
}

const char *cg_paths_find(struct cg_paths *c, uint64_t id)
{
	char mnt[4096], root[4096];
	size_t i;

	for (;;) {
		for (i = 0; i < c->nr; i++)
			if (c->cg[i].id == id)
				return c->cg[i].path;
		if (c->read)
			return NULL;
		cg_paths_free(c);
		if (!cg2_mount(mnt, sizeof(mnt), root, sizeof(root)))
			cg_scan(c, mnt, root, 0);
		c->read = true;
	}
}
