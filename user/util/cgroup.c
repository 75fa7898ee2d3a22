// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* cgroup v2 ids to paths (util/cgroup.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/cgroup.h"

int cg2_mount(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], mnt[4096], fs[64];
	int ret = -ENOENT;

	if (!f)
		return -ENOENT;
	/* ID PARENT MAJ:MIN ROOT MOUNT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
	while (ret && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s", fs) != 1 || strcmp(fs, "cgroup2"))
			continue;
		snprintf(buf, len, "%s", mnt); /* octal escapes (\040) left as they are */
		ret = 0;
	}
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
	char root[4096];
	size_t i;

	for (;;) {
		for (i = 0; i < c->nr; i++)
			if (c->cg[i].id == id)
				return c->cg[i].path;
		if (c->read)
			return NULL;
		cg_paths_free(c);
		if (!cg2_mount(root, sizeof(root)))
			cg_scan(c, root, "", 0);
		c->read = true;
	}
}
