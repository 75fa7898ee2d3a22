/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Leak census for the root tests: which BPF programs, maps and links of one
 * BPF object exist, and which appeared during a run and stayed.
 *
 * An object is recognised by names: its programs start with prog_prefix and
 * its global-data maps, which libbpf names after the object ("offcpu_b.bss"),
 * with map_prefix; links are those of its programs.  Generic map names (hist,
 * counters...) are left out on purpose: other tools use them too.  Counting
 * only IDs that appeared during the run keeps another process loading or
 * unloading its own objects at the same time from failing the census.
 */
#ifndef KAGG_TESTS_CENSUS_H
#define KAGG_TESTS_CENSUS_H

#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#define TU_CENSUS_MAX 4096

struct tu_census {
	__u32 progs[TU_CENSUS_MAX], maps[TU_CENSUS_MAX], links[TU_CENSUS_MAX];
	int nr_progs, nr_maps, nr_links;
};

static inline bool tu_prog_named(__u32 id, const char *prefix)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);
	bool r;

	if (fd < 0)
		return false;
	r = !bpf_prog_get_info_by_fd(fd, &info, &len) && !strncmp(info.name, prefix, strlen(prefix));
	close(fd);
	return r;
}

static inline void tu_census_take(struct tu_census *c, const char *prog_prefix,
				  const char *map_prefix)
{
	__u32 id = 0;
	int fd;

	memset(c, 0, sizeof(*c));
	while (!bpf_prog_get_next_id(id, &id))
		if (tu_prog_named(id, prog_prefix) && c->nr_progs < TU_CENSUS_MAX)
			c->progs[c->nr_progs++] = id;
	id = 0;
	while (!bpf_map_get_next_id(id, &id)) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);

		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			continue;
		if (!bpf_map_get_info_by_fd(fd, &info, &len) &&
		    !strncmp(info.name, map_prefix, strlen(map_prefix)) && c->nr_maps < TU_CENSUS_MAX)
			c->maps[c->nr_maps++] = id;
		close(fd);
	}
	id = 0;
	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);

		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0)
			continue;
		if (!bpf_link_get_info_by_fd(fd, &info, &len) &&
		    tu_prog_named(info.prog_id, prog_prefix) && c->nr_links < TU_CENSUS_MAX)
			c->links[c->nr_links++] = id;
		close(fd);
	}
}

/* IDs in `after` that were not in `before`. */
static inline int tu_new_ids(const __u32 *before, int nb, const __u32 *after, int na)
{
	int i, j, n = 0;

	for (i = 0; i < na; i++) {
		for (j = 0; j < nb && before[j] != after[i]; j++)
			;
		n += j == nb;
	}
	return n;
}

/*
 * Objects that appeared since `before` and are still there: the kernel frees
 * maps after an RCU grace period, later than the process exit on slow (TCG)
 * guests, so this polls up to 5 s for them to go.
 */
static inline void tu_census_left(const struct tu_census *before, const char *prog_prefix,
				  const char *map_prefix, int *progs, int *maps, int *links)
{
	static struct tu_census after;
	int i;

	for (i = 0; i < 100; i++) {
		tu_census_take(&after, prog_prefix, map_prefix);
		*progs = tu_new_ids(before->progs, before->nr_progs, after.progs, after.nr_progs);
		*maps = tu_new_ids(before->maps, before->nr_maps, after.maps, after.nr_maps);
		*links = tu_new_ids(before->links, before->nr_links, after.links, after.nr_links);
		if (!*progs && !*maps && !*links)
			return;
		tu_sleep_ms(50);
	}
}

#endif
