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
 * unloading its own objects at the same time from failing the census, and
 * so does leaving out what a live process outside the test holds open
 * (another kagg of the same tool started during the run): an object is left
 * behind when no process holds it, or only the test or its descendants do.
 * The test process is its children's subreaper, so a descendant that
 * outlives its parent still counts as one.
 */
#ifndef KAGG_TESTS_CENSUS_H
#define KAGG_TESTS_CENSUS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "testutil.h"

#define TU_CENSUS_MAX 4096

struct tu_census {
	__u32 progs[TU_CENSUS_MAX], maps[TU_CENSUS_MAX], links[TU_CENSUS_MAX];
	int nr_progs, nr_maps, nr_links;
};

/* name starts with one of prefixes, separated by '|' ("syscoun|key_counts"). */
static inline bool tu_prefixed(const char *name, const char *prefixes)
{
	const char *p = prefixes;
	size_t n;

	for (;;) {
		n = strcspn(p, "|");
		if (n && !strncmp(name, p, n))
			return true;
		if (!p[n])
			return false;
		p += n + 1;
	}
}

/* Whether fd's program, map, or link's program is named with prefix. */
static inline bool tu_prog_fd_named(int fd, const char *prefix)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return !bpf_prog_get_info_by_fd(fd, &info, &len) && tu_prefixed(info.name, prefix);
}

static inline bool tu_map_fd_named(int fd, const char *prefix)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return !bpf_map_get_info_by_fd(fd, &info, &len) && tu_prefixed(info.name, prefix);
}

static inline bool tu_prog_named(__u32 id, const char *prefix)
{
	int fd = bpf_prog_get_fd_by_id(id);
	bool r;

	if (fd < 0)
		return false;
	r = tu_prog_fd_named(fd, prefix);
	close(fd);
	return r;
}

static inline bool tu_link_fd_named(int fd, const char *prog_prefix)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);

	return !bpf_link_get_info_by_fd(fd, &info, &len) &&
	       tu_prog_named(info.prog_id, prog_prefix);
}

/*
 * Walk one kind's IDs (next_id, fd_by_id: bpf_prog_*, bpf_map_* or bpf_link_*)
 * into ids, at most TU_CENSUS_MAX, those whose object is named(fd, prefix).
 * How many.
 */
static inline int tu_census_walk(int (*next_id)(__u32, __u32 *), int (*fd_by_id)(__u32),
				 bool (*named)(int, const char *), const char *prefix, __u32 *ids)
{
	__u32 id = 0;
	int fd, n = 0;

	while (!next_id(id, &id)) {
		fd = fd_by_id(id);
		if (fd < 0)
			continue;
		if (named(fd, prefix) && n < TU_CENSUS_MAX)
			ids[n++] = id;
		close(fd);
	}
	return n;
}

static inline void tu_census_take(struct tu_census *c, const char *prog_prefix,
				  const char *map_prefix)
{
	/* from the first census on, our orphaned descendants are reparented to us */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	memset(c, 0, sizeof(*c));
	c->nr_progs = tu_census_walk(bpf_prog_get_next_id, bpf_prog_get_fd_by_id, tu_prog_fd_named,
				     prog_prefix, c->progs);
	c->nr_maps = tu_census_walk(bpf_map_get_next_id, bpf_map_get_fd_by_id, tu_map_fd_named,
				    map_prefix, c->maps);
	c->nr_links = tu_census_walk(bpf_link_get_next_id, bpf_link_get_fd_by_id, tu_link_fd_named,
				     prog_prefix, c->links);
}

/* pid is the test process or one of its descendants (parents followed up to init). */
static inline bool tu_own_process(pid_t pid)
{
	char path[64], line[256];
	int depth;

	for (depth = 0; depth < 64 && pid > 1; depth++) {
		FILE *f;
		long ppid = -1;

		if (pid == getpid())
			return true;
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		f = fopen(path, "r");
		if (!f)
			return false;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "PPid: %ld", &ppid) == 1)
				break;
		fclose(f);
		pid = (pid_t)ppid;
	}
	return false;
}

/*
 * The IDs process pid holds open, of the kind its fdinfo names on a line "key\tID" (key
 * "prog_id:", "map_id:" or "link_id:"), into held (at most max); how many.
 */
static inline int tu_pid_held(pid_t pid, const char *key, __u32 *held, int max)
{
	char path[300], line[128];
	size_t klen = strlen(key);
	struct dirent *fd;
	unsigned long id;
	int n = 0;
	DIR *fds;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)pid);
	fds = opendir(path);
	if (!fds)
		return 0;
	while (n < max && (fd = readdir(fds))) {
		FILE *f;

		if (fd->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", (int)pid, fd->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (n < max && fgets(line, sizeof(line), f))
			if (!strncmp(line, key, klen) && sscanf(line + klen, "%lu", &id) == 1)
				held[n++] = (__u32)id;
		fclose(f);
	}
	closedir(fds);
	return n;
}

/* Whether id is one of ids (n of them). */
static inline bool tu_ids_have(const __u32 *ids, int n, __u32 id)
{
	while (n--)
		if (ids[n] == id)
			return true;
	return false;
}

/* Keep in ids (n of them) those that held (nh of them) has (keep) or has not; how many. */
static inline int tu_ids_filter(__u32 *ids, int n, const __u32 *held, int nh, bool keep)
{
	int i;

	for (i = 0; i < n; i++)
		if (tu_ids_have(held, nh, ids[i]) != keep)
			ids[i--] = ids[--n];
	return n;
}

/* Drop from ids (n of them) every ID that a live process outside the test holds open. */
static inline int tu_drop_foreign(__u32 *ids, int n, const char *key)
{
	static __u32 held[TU_CENSUS_MAX];
	struct dirent *p;
	DIR *proc;

	proc = opendir("/proc");
	if (!proc)
		return n;
	while (n && (p = readdir(proc))) {
		pid_t pid = (pid_t)atoi(p->d_name);

		if (pid <= 0 || tu_own_process(pid))
			continue;
		n = tu_ids_filter(ids, n, held, tu_pid_held(pid, key, held, TU_CENSUS_MAX), false);
	}
	closedir(proc);
	return n;
}

/* IDs in `after` that were not in `before`. */
static inline int tu_new_ids(const __u32 *before, int nb, const __u32 *after, int na)
{
	int i, n = 0;

	for (i = 0; i < na; i++)
		n += !tu_ids_have(before, nb, after[i]);
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
		after.nr_progs = tu_drop_foreign(after.progs, after.nr_progs, "prog_id:");
		after.nr_maps = tu_drop_foreign(after.maps, after.nr_maps, "map_id:");
		after.nr_links = tu_drop_foreign(after.links, after.nr_links, "link_id:");
		*progs = tu_new_ids(before->progs, before->nr_progs, after.progs, after.nr_progs);
		*maps = tu_new_ids(before->maps, before->nr_maps, after.maps, after.nr_maps);
		*links = tu_new_ids(before->links, before->nr_links, after.links, after.nr_links);
		if (!*progs && !*maps && !*links)
			return;
		tu_sleep_ms(50);
	}
}

/* Nothing that appeared since `before` is still loaded (what: the run, for the log). */
static inline void tu_assert_nothing_left(const struct tu_census *before, const char *prog_prefix,
					  const char *map_prefix, const char *what)
{
	int lp = 0, lm = 0, ll = 0;

	tu_census_left(before, prog_prefix, map_prefix, &lp, &lm, &ll);
	printf("  %s: left behind: %d programs, %d maps, %d links\n", what, lp, lm, ll);
	assert_int_equal(lp, 0);
	assert_int_equal(lm, 0);
	assert_int_equal(ll, 0);
}

/* One run of tu_expect_clean_exits(): kagg with argv, sent sig 700 ms in (0: none). */
struct tu_exit_case {
	const char *what;
	int sig;
	int rc;		/* the exit code expected */
	char *argv[12]; /* without the binary, NULL-terminated */
};

/*
 * Each case's run exits with its code and leaves none of the tool's objects
 * loaded (prog_prefix, map_prefix as for tu_census_take); after a signal,
 * what was collected is printed (stdout holds `printed`).
 */
static inline void tu_expect_clean_exits(const struct tu_exit_case *c, size_t n,
					 const char *prog_prefix, const char *map_prefix,
					 const char *printed)
{
	static struct tu_census before;
	char *out, *err;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		out = err = NULL;
		tu_census_take(&before, prog_prefix, map_prefix);
		rc = tu_run_kagg(c[i].argv, &out, &err, c[i].sig, c[i].sig ? 700 : 0);
		printf("  %s: exit %d\n", c[i].what, rc);
		if (rc != c[i].rc)
			printf("  stderr: %s\n", err ? err : "");
		assert_int_equal(rc, c[i].rc);
		tu_assert_nothing_left(&before, prog_prefix, map_prefix, c[i].what);
		if (c[i].sig)
			assert_non_null(strstr(out, printed));
		free(out);
		free(err);
	}
}

/*
 * Whether a link of a program named with prog_prefix appeared since `before`; owner > 0:
 * a link that process holds (another test's session does not count).
 */
static inline bool tu_new_link(const struct tu_census *before, const char *prog_prefix, pid_t owner)
{
	static __u32 links[TU_CENSUS_MAX], held[TU_CENSUS_MAX];
	int n = tu_census_walk(bpf_link_get_next_id, bpf_link_get_fd_by_id, tu_link_fd_named,
			       prog_prefix, links);

	if (owner > 0)
		n = tu_ids_filter(links, n, held,
				  tu_pid_held(owner, "link_id:", held, TU_CENSUS_MAX), true);
	return tu_new_ids(before->links, before->nr_links, links, n) > 0;
}

/* Whether name is one of names ("a|b"). */
static inline bool tu_name_in(const char *name, const char *names)
{
	size_t n, len = strlen(name);

	for (;; names += n + 1) {
		n = strcspn(names, "|");
		if (n == len && !strncmp(name, names, n))
			return true;
		if (!names[n])
			return false;
	}
}

/*
 * Whether global-data map fd (info) has the 4-byte variable `name` set (one of
 * names "a|b": the one it has); true also when it has none of them.
 */
static inline bool tu_map_var_set(int fd, const struct bpf_map_info *info, const char *name)
{
	struct btf *btf = btf__load_from_kernel_by_id(info->btf_id);
	const struct btf_var_secinfo *vs;
	const struct btf_type *t;
	bool set = true;
	__u32 key = 0;
	void *val;
	int i;

	if (!btf)
		return false;
	t = btf__type_by_id(btf, info->btf_value_type_id);
	val = calloc(1, info->value_size);
	if (!t || !btf_is_datasec(t) || !val || bpf_map_lookup_elem(fd, &key, val)) {
		set = false;
	} else {
		vs = btf_var_secinfos(t);
		for (i = 0; i < btf_vlen(t); i++, vs++) {
			const struct btf_type *v = btf__type_by_id(btf, vs->type);

			if (v && vs->size == 4 &&
			    tu_name_in(btf__name_by_offset(btf, v->name_off), name))
				set = *(__u32 *)((char *)val + vs->offset) != 0;
		}
	}
	free(val);
	btf__free(btf);
	return set;
}

/*
 * Whether name is the .bss map of an object whose programs are named with
 * one of prefixes ("a|b"): libbpf names it after the object's first 8
 * characters ("offcpu_b.bss", "syscount.bss"), and an SDK program opened by
 * the generic loader is named after its file ("hist.bss" for prefix "hist_").
 */
static inline bool tu_bss_named(const char *name, const char *prefixes)
{
	const char *p = prefixes, *dot = strstr(name, ".bss");
	size_t n;

	if (!dot)
		return false;
	for (;;) {
		n = strcspn(p, "|");
		if (n && !strncmp(name, p, n < 8 ? n : 8))
			return true;
		if (n > 1 && p[n - 1] == '_' && (size_t)(dot - name) == n - 1 &&
		    !strncmp(name, p, n - 1))
			return true;
		if (!p[n])
			return false;
		p += n + 1;
	}
}

/*
 * Whether a .bss map named with prefix appeared since `before` with its
 * variable var (one of "a|b") set (a session's switch, set once every program of the
 * session is attached): from then on the session counts what happens.
 * owner > 0: a map that process holds (another test's session does not count).
 */
static inline bool tu_new_var_set(const struct tu_census *before, const char *prefix,
				  const char *var, pid_t owner)
{
	static __u32 held[TU_CENSUS_MAX];
	int nh = owner > 0 ? tu_pid_held(owner, "map_id:", held, TU_CENSUS_MAX) : 0;
	bool armed = false;
	__u32 id = 0;

	while (!armed && !bpf_map_get_next_id(id, &id)) {
		struct bpf_map_info info = {};
		__u32 len = sizeof(info);
		int fd;

		if (owner > 0 && !tu_ids_have(held, nh, id))
			continue;
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			continue;
		if (!bpf_map_get_info_by_fd(fd, &info, &len) && tu_bss_named(info.name, prefix) &&
		    info.btf_id && tu_new_ids(before->maps, before->nr_maps, &id, 1))
			armed = tu_map_var_set(fd, &info, var);
		close(fd);
	}
	return armed;
}

/*
 * tu_new_var_set() of a session's armed switch: a built-in tool's bpf/stream.bpf.h `armed`,
 * an SDK program's `kagg_armed` (bpf/sdk/kagg.bpf.h; kagg hist is one).
 */
static inline bool tu_new_armed(const struct tu_census *before, const char *prefix, pid_t owner)
{
	return tu_new_var_set(before, prefix, "armed|kagg_armed", owner);
}

/* Whether this kernel has BPF links for perf-event attaches (BPF_LINK_TYPE_PERF_EVENT). */
static inline bool tu_perf_links(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool found = false;
	__u32 i, n;
	int id;

	if (!btf)
		return true; /* no BTF to tell: wait for a link, as before */
	id = btf__find_by_name_kind(btf, "bpf_link_type", BTF_KIND_ENUM);
	if (id > 0) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const struct btf_enum *e = btf_enum(t);

		for (i = 0, n = btf_vlen(t); i < n && !found; i++)
			found = !strcmp(btf__name_by_offset(btf, e[i].name_off),
					"BPF_LINK_TYPE_PERF_EVENT");
	}
	btf__free(btf);
	return found;
}

/* How tu_run_kagg_on() starts and ends the child kagg watches. */
struct tu_on_child {
	tu_work_fn fn; /* the child's work (as tu_spawn runs it) */
	void *arg;
	/*
	 * Released once kagg has attached a program named with this prefix
	 * (one of "a|b") and armed its session, so that its whole work is seen
	 * however slowly kagg starts; NULL: released before kagg starts.
	 */
	const char *attached;
	int stop_sig;  /* sent to kagg once the child is done (kagg's -d is a bound) */
	bool kill;     /* SIGKILL it when kagg is done (work that runs until killed) */
	int *child_rc; /* unless NULL: the child's exit code (tu_wait) */
};

/*
 * kagg with argv while a child does its work: argv's "PID" entry (the
 * value of -p or -t) becomes the child's pid, also in *pid.  Output in
 * *out and *err as with tu_run_kagg; the child is waited for.  Returns
 * kagg's exit code.
 */
static inline int tu_run_kagg_on(char **argv, const struct tu_on_child *w, pid_t *pid, char **out,
				 char **err)
{
	static struct tu_census before;
	struct tu_child c;
	struct tu_kagg k;
	char buf[16];
	int i, rc, st = -1;
	bool links;

	if (w->attached)
		tu_census_take(&before, w->attached, w->attached);
	c = tu_spawn(w->fn, w->arg);
	snprintf(buf, sizeof(buf), "%d", c.pid);
	for (i = 0; argv[i]; i++)
		if (!strcmp(argv[i], "PID"))
			argv[i] = buf;
	*pid = c.pid;
	if (!w->attached)
		tu_go(&c);
	k = tu_kagg_start(argv);
	if (w->attached) {
		/*
		 * at most 60 s: a TCG guest under load can take tens of seconds.
		 * A link and the armed flag; armed alone on kernels whose
		 * perf-event attaches (kprobe, uprobe) have no link (5.10).
		 */
		links = tu_perf_links();
		for (i = 0; i < 1200 && !tu_kagg_exited(&k) &&
			    !((!links || tu_new_link(&before, w->attached, k.pid)) &&
			      tu_new_armed(&before, w->attached, k.pid));
		     i++)
			tu_sleep_ms(50);
		tu_go(&c);
	}
	if (w->stop_sig) {
		st = tu_wait(&c);
		c.pid = -1;
		tu_sleep_ms(200); /* the child's last events reach kagg */
		if (!tu_kagg_exited(&k))
			kill(k.pid, w->stop_sig);
	}
	rc = tu_kagg_finish(&k, out, err);
	if (c.pid > 0) {
		if (w->kill)
			kill(c.pid, SIGKILL);
		st = tu_wait(&c);
	}
	if (w->child_rc)
		*w->child_rc = st;
	return rc;
}

#endif
