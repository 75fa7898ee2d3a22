// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The kernel's own ring buffer pages, read with our reader.
 *
 * Live (root + tracefs): enable sched/sched_switch while we sleep 250 times (and only that;
 * restored afterwards), read each CPU's `per_cpu/cpuN/trace` text, then drain
 * its trace_pipe_raw.  Our page decoder must agree with kbuffer on every
 * record (timestamp, offset, size, missed count), and our `trace` lines must
 * equal the kernel's.  Without root or tracefs the live test skips with the
 * reason, and the same checks run on the pages committed in tests/data/.
 *
 * KAGG_CAPTURE_DIR=DIR makes the live test also save what it captured there
 * (that is how tests/data/kernel-sched_switch was made).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>
#include <kbuffer.h>

#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>
#include "testutil.h"
#include "unit_util.h"

#define TRACEFS "/sys/kernel/tracing"
#define DATA "tests/data/kernel-sched_switch"

static int spit(const char *path, const void *d, size_t n)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fwrite(d, 1, n, f);
	return fclose(f) ? -errno : 0;
}

/* saved_cmdlines: "pid comm" lines */
struct cmds {
	int pid[4096];
	char comm[4096][17];
	int n;
};

static void cmds_load(struct cmds *c, const char *text)
{
	const char *p = text;

	c->n = 0;
	while (p && *p && c->n < 4096) {
		if (sscanf(p, "%d %16s", &c->pid[c->n], c->comm[c->n]) == 2)
			c->n++;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
}

static const char *cmds_find(void *ctx, int pid)
{
	struct cmds *c = ctx;
	int i;

	for (i = 0; i < c->n; i++)
		if (c->pid[i] == pid)
			return c->comm[i];
	return NULL;
}

/*
 * Decode raw pages (n_bytes of trace_pipe_raw) of `cpu` with ours and kbuffer;
 * print our lines into *text.  Returns the number of events.
 */
static size_t check_pages(const uint8_t *raw, size_t n_bytes, int cpu, struct kagg_rb_events *evs,
			  struct cmds *cmds, char **text)
{
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	size_t off, events = 0, tlen = 0;
	FILE *out = open_memstream(text, &tlen);

	assert_non_null(kb);
	for (off = 0; off + 4096 <= n_bytes; off += 4096) {
		struct kagg_rb_page_iter it = { .sz = sizeof(it) };
		struct kagg_rb_event ev = { .sz = sizeof(ev) };
		unsigned long long kts;
		void *d;
		int km;

		assert_int_equal(kagg_rb_page_iter__init(&it, raw + off, 4096), 0);
		assert_int_equal(kbuffer_load_subbuffer(kb, (void *)(raw + off)), 0);
		km = kbuffer_missed_events(kb);
		assert_int_equal(it.missed, km);
		d = kbuffer_read_event(kb, &kts);
		while (kagg_rb_page_iter__next(&it, &ev) == 0) {
			assert_non_null(d);
			assert_int_equal(ev.ts, kts);
			assert_ptr_equal(ev.data, d);
			assert_int_equal(ev.len, kbuffer_event_size(kb));
			ev.cpu = cpu;
			kagg_rb_events__fprint_event(evs, out, &ev, cmds_find, cmds);
			events++;
			d = kbuffer_next_event(kb, &kts);
		}
		assert_null(d);
	}
	fclose(out);
	kbuffer_free(kb);
	return events;
}

/* The kernel's text without comment lines. */
static char *strip_comments(const char *t)
{
	size_t n = strlen(t), o = 0;
	char *r = malloc(n + 1);
	const char *p = t;

	while (*p) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p + 1) : strlen(p);

		if (*p != '#' && strncmp(p, "CPU:", 4)) {
			memcpy(r + o, p, l);
			o += l;
		}
		p += l;
	}
	r[o] = 0;
	return r;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t w;

	if (fd < 0)
		return -errno;
	w = write(fd, s, strlen(s));
	close(fd);
	return w < 0 ? -errno : 0;
}

/*
 * mine (kagg's trace text) against the kernel's, line for line.  A line whose kernel text
 * holds a byte outside printable ASCII (a process renamed to any bytes it likes) is
 * skipped: the kernel prints names raw, kagg escapes them for a terminal
 * (docs/ftrace-format.md); every other line must be the same to the byte.  How many lines
 * were skipped.
 */
static size_t same_trace_text(const char *mine, const char *kernel)
{
	size_t skipped = 0;

	for (;;) {
		const char *me = strchrnul(mine, '\n'), *ke = strchrnul(kernel, '\n'), *p;
		bool plain = true;

		for (p = kernel; p < ke; p++)
			plain &= *p >= 0x20 && *p < 0x7f;
		if (plain) {
			if ((size_t)(me - mine) != (size_t)(ke - kernel) ||
			    memcmp(mine, kernel, (size_t)(me - mine)))
				printf("# kagg:   %.*s\n# kernel: %.*s\n", (int)(me - mine), mine,
				       (int)(ke - kernel), kernel);
			assert_memory_equal(mine, kernel, (size_t)(me - mine));
			assert_int_equal(me - mine, ke - kernel);
		} else {
			skipped++;
		}
		if (!*me != !*ke)
			printf("# kagg printed %s lines than the kernel's trace, next: %.*s\n",
			       *me ? "more" : "fewer", 160, *me ? me + 1 : ke + 1);
		assert_int_equal(!*me, !*ke); /* as many lines */
		if (!*me)
			return skipped;
		mine = me + 1;
		kernel = ke + 1;
	}
}

/*
 * The live capture runs in a tracefs instance of its own: its buffer and its event
 * switches are nobody else's, so another tracer enabling sched_switch at the same time
 * (trace-cmd, a kagg test beside this one) cannot add records between our reads of the
 * trace file and of the raw pages.
 */
static void test_live_kernel_pages_decode_as_kbuffer_and_print_as_trace(void **s)
{
	const char *cap = getenv("KAGG_CAPTURE_DIR");
	char path[512], inst[128], *on, *cmdtxt;
	struct kagg_rb_events *evs;
	struct cmds *cmds = calloc(1, sizeof(*cmds));
	int cpu, ncpu = (int)sysconf(_SC_NPROCESSORS_CONF), failed = 0;
	size_t total = 0, skipped = 0;
	char *texts[64] = { 0 }, *raws[64] = { 0 };
	size_t rawlen[64] = { 0 };

	if (geteuid() != 0) {
		printf("# skip: not root, cannot enable trace events\n");
		free(cmds);
		skip();
	}
	if (access(TRACEFS "/events/sched/sched_switch/enable", W_OK)) {
		if (access(TRACEFS "/trace", F_OK))
			system("mount -t tracefs nodev " TRACEFS " 2>/dev/null");
		if (access(TRACEFS "/events/sched/sched_switch/enable", W_OK)) {
			printf("# skip: tracefs not writable at " TRACEFS "\n");
			free(cmds);
			skip();
		}
	}
	on = tu_slurp(TRACEFS "/tracing_on", NULL);
	if (!on || on[0] != '1') {
		printf("# skip: tracing_on is 0 (left alone)\n");
		free(on);
		free(cmds);
		skip();
	}
	free(on);
	if (ncpu > 64)
		ncpu = 64;
	/* a buffer of our own: enable, switch ~500 times, disable */
	snprintf(inst, sizeof(inst), TRACEFS "/instances/kagg-test-%d", (int)getpid());
	assert_int_equal(mkdir(inst, 0755), 0);
	/*
	 * The latency-flag columns as this kernel's trace header names them:
	 * five with migrate-disable, four before it (5.10)
	 */
	{
		KAGG_OPTS(kagg_rb_events_opts, eo);
		char *hdr;

		snprintf(path, sizeof(path), "%s/trace", inst);
		hdr = tu_slurp(path, NULL);
		assert_non_null(hdr);
		eo.flag_cols =
			strstr(hdr, "migrate-disable") || !strstr(hdr, "preempt-depth") ? 5 : 4;
		printf("# the kernel's trace header: %d latency-flag columns\n", eo.flag_cols);
		free(hdr);
		evs = kagg_rb_events__new(&eo);
	}
	assert_non_null(evs);
	assert_int_equal(kagg_rb_events__load_dir(evs, TRACEFS "/events", &failed) > 0, 1);
	assert_int_equal(failed, 0); /* every format file of this kernel parses */
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/enable", inst);
	assert_int_equal(write_str(path, "1"), 0);
	{
		int i;

		for (i = 0; i < 250; i++) /* ~500 context switches */
			usleep(50);
	}
	assert_int_equal(write_str(path, "0"), 0);
	/*
	 * Disabling the event unregisters its probe without waiting for it: a CPU inside the
	 * probe (between reserving its record and committing it; a vCPU the host preempted
	 * there stays long) commits after we read `trace` and before we read the pages, and
	 * the two differ by that record.  The probe runs with preemption disabled: one RCU
	 * grace period (membarrier(GLOBAL) waits for one) and every probe has returned.
	 */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		printf("# membarrier(MEMBARRIER_CMD_GLOBAL): %s: a probe may be in flight\n",
		       strerror(errno));

	cmdtxt = tu_slurp(TRACEFS "/saved_cmdlines", NULL);
	cmds_load(cmds, cmdtxt ? cmdtxt : "");
	for (cpu = 0; cpu < ncpu; cpu++) {
		char *ktext, *mine, *kl;
		size_t cap_b = 0, n;
		int fd;

		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace", inst, cpu);
		ktext = tu_slurp(path, NULL);
		if (!ktext)
			continue;
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", inst, cpu);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		assert_true(fd >= 0);
		for (;;) {
			ssize_t r;

			if (rawlen[cpu] + 4096 > cap_b) {
				cap_b = cap_b * 2 + 65536;
				raws[cpu] = realloc(raws[cpu], cap_b);
			}
			r = read(fd, raws[cpu] + rawlen[cpu], 4096);
			if (r <= 0)
				break;
			assert_int_equal(r, 4096);
			rawlen[cpu] += 4096;
		}
		close(fd);
		n = check_pages((uint8_t *)raws[cpu], rawlen[cpu], cpu, evs, cmds, &mine);
		total += n;
		kl = strip_comments(ktext);
		skipped += same_trace_text(mine, kl);
		texts[cpu] = kl;
		free(mine);
		free(ktext);
	}
	assert_int_equal(rmdir(inst), 0);
	printf("# %zu live kernel records decoded identically to kbuffer and the trace file "
	       "(%zu lines with names outside printable ASCII compared as records only)\n",
	       total, skipped);
	assert_true(total > 0);
	if (cap) {
		mkdir(cap, 0755);
		for (cpu = 0; cpu < ncpu; cpu++) {
			if (!raws[cpu])
				continue;
			snprintf(path, sizeof(path), "%s/cpu%d.raw", cap, cpu);
			assert_int_equal(spit(path, raws[cpu], rawlen[cpu]), 0);
			snprintf(path, sizeof(path), "%s/cpu%d.trace", cap, cpu);
			assert_int_equal(spit(path, texts[cpu], strlen(texts[cpu])), 0);
		}
		snprintf(path, sizeof(path), "%s/saved_cmdlines", cap);
		spit(path, cmdtxt, strlen(cmdtxt));
		{
			const char *files[] = { "header_page", "header_event",
						"sched/sched_switch/format" };
			int i;

			snprintf(path, sizeof(path), "%s/sched", cap);
			mkdir(path, 0755);
			snprintf(path, sizeof(path), "%s/sched/sched_switch", cap);
			mkdir(path, 0755);
			for (i = 0; i < 3; i++) {
				char src[256], *t;
				size_t l;

				snprintf(src, sizeof(src), TRACEFS "/events/%s", files[i]);
				t = tu_slurp(src, &l);
				assert_non_null(t);
				snprintf(path, sizeof(path), "%s/%s", cap, files[i]);
				assert_int_equal(spit(path, t, l), 0);
				free(t);
			}
		}
	}
	for (cpu = 0; cpu < 64; cpu++) {
		free(texts[cpu]);
		free(raws[cpu]);
	}
	free(cmdtxt);
	free(cmds);
	kagg_rb_events__free(evs);
}

static void test_committed_kernel_pages_decode_as_kbuffer_and_print_as_trace(void **s)
{
	struct kagg_rb_events *evs = kagg_rb_events__new(NULL);
	struct cmds *cmds = calloc(1, sizeof(*cmds));
	char path[256], *fmt, *cmdtxt;
	size_t flen, total = 0;
	int cpu;

	fmt = tu_slurp(DATA "/sched/sched_switch/format", &flen);
	assert_non_null(fmt);
	assert_int_equal(kagg_rb_events__parse(evs, "sched", fmt, flen, NULL), 0);
	cmdtxt = tu_slurp(DATA "/saved_cmdlines", NULL);
	assert_non_null(cmdtxt);
	cmds_load(cmds, cmdtxt);
	for (cpu = 0; cpu < 64; cpu++) {
		char *raw, *ktext, *mine;
		size_t rlen;

		snprintf(path, sizeof(path), DATA "/cpu%d.raw", cpu);
		raw = tu_slurp(path, &rlen);
		if (!raw)
			continue;
		snprintf(path, sizeof(path), DATA "/cpu%d.trace", cpu);
		ktext = tu_slurp(path, NULL);
		assert_non_null(ktext);
		total += check_pages((uint8_t *)raw, rlen, cpu, evs, cmds, &mine);
		assert_string_equal(mine, ktext);
		free(mine);
		free(ktext);
		free(raw);
	}
	printf("# %zu committed kernel records decoded identically to kbuffer and the trace file\n",
	       total);
	assert_true(total > 0);
	free(fmt);
	free(cmdtxt);
	free(cmds);
	kagg_rb_events__free(evs);
}

/* Name every format file under events/ that does not parse, with its field lines. */
static void print_unparsed_formats(void)
{
	DIR *sd = opendir(TRACEFS "/events"), *ed;
	struct dirent *sys, *ev;
	char path[1024], *text = NULL, *line;
	size_t cap = 0;

	while (sd && (sys = readdir(sd))) {
		snprintf(path, sizeof(path), TRACEFS "/events/%s", sys->d_name);
		if (sys->d_name[0] == '.' || !(ed = opendir(path)))
			continue;
		while ((ev = readdir(ed))) {
			struct kagg_rb_events *one = kagg_rb_events__new(NULL);
			FILE *f;
			ssize_t len;
			int err;

			snprintf(path, sizeof(path), TRACEFS "/events/%s/%s/format", sys->d_name,
				 ev->d_name);
			f = ev->d_name[0] != '.' ? fopen(path, "re") : NULL;
			len = f ? getdelim(&text, &cap, '\0', f) : -1;
			if (f)
				fclose(f);
			err = len > 0 ? kagg_rb_events__parse(one, sys->d_name, text, (size_t)len,
							      NULL)
				      : 0;
			if (err) {
				printf("# does not parse (%d): %s\n", err, path);
				for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
					if (strstr(line, "field:") || strstr(line, "ID:"))
						printf("#   %s\n", line);
			}
			kagg_rb_events__free(one);
		}
		closedir(ed);
	}
	if (sd)
		closedir(sd);
	free(text);
}

static void test_every_kernel_format_file_parses(void **s)
{
	struct kagg_rb_events *evs;
	int failed = -1, n;

	if (access(TRACEFS "/events/sched/sched_switch/format", R_OK)) {
		printf("# skip: no readable tracefs at " TRACEFS "\n");
		skip();
	}
	evs = kagg_rb_events__new(NULL);
	n = kagg_rb_events__load_dir(evs, TRACEFS "/events", &failed);
	printf("# %d format files parsed, %d failed\n", n, failed);
	if (failed)
		print_unparsed_formats();
	assert_true(n > 100);
	assert_int_equal(failed, 0);
	/* a few layouts checked field by field */
	{
		const struct kagg_rb_format *f =
			kagg_rb_events__find_by_name(evs, "sched", "sched_switch");
		const struct kagg_rb_field *fl;

		assert_non_null(f);
		assert_int_equal(kagg_rb_format__nr_common(f), 4);
		fl = kagg_rb_format__field(f, "prev_comm");
		assert_int_equal(fl->kind, KAGG_RB_FIELD_ARRAY);
		assert_int_equal(fl->array_len, 16);
		assert_int_equal(fl->offset, 8);
		fl = kagg_rb_format__field(f, "prev_state");
		assert_true(fl->is_signed);
		assert_int_equal(fl->size, 8);
		f = kagg_rb_events__find_by_name(evs, "sched", "sched_process_exec");
		if (f) {
			fl = kagg_rb_format__field(f, "filename");
			assert_int_equal(fl->kind, KAGG_RB_FIELD_DATA_LOC);
			assert_true(fl->is_string);
		}
	}
	kagg_rb_events__free(evs);
}

UU_MAIN(cmocka_unit_test(test_committed_kernel_pages_decode_as_kbuffer_and_print_as_trace),
	cmocka_unit_test(test_every_kernel_format_file_parses),
	cmocka_unit_test(test_live_kernel_pages_decode_as_kbuffer_and_print_as_trace))
