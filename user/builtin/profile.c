// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * profile sessions: load bpf/profile.bpf.c, open one sampling perf event per
 * CPU at attach time (the session's attach hook) and attach the program to
 * each, and read the stack aggregation with the generic stack reader.
 *
 * Event choice: hardware cycles when the PMU has them, else the cpu-clock
 * software event; the meta's event says which, attach_note says why.
 *
 * The session keeps one link per program, and this tool has one program but
 * one link per CPU: the hook hands the session the first link and keeps the
 * others here.  A detach clears the program's `armed` flag before it
 * destroys the session's link, so the perf events left open count nothing
 * until the next attach (which replaces them) or destroy (which closes them).
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <kagg/profile.h>
#include "shared/profile.h"
#include "profile.skel.h"
#include "util/cpus.h"
#include "util/opts.h"
#include "snapshot/snapshot_internal.h"
#include "session/session_internal.h"
#include "util/text.h"

#define slog session_log
#define PROFILE_DEFAULT_FREQ 49
#define PROFILE_MAX_CPUS 4096

_Static_assert(PROFILE_CNT_MAX <= SESSION_MAX_COUNTERS, "profile counters fit the session's");

struct profile {
	struct profile_bpf *skel;
	struct perf_event_attr attr;
	int *cpus; /* CPUs to sample */
	int nr_cpus;
	struct bpf_link **links; /* links we still own (the session owns one more) */
	int nr_links;
};

static long perf_open(struct perf_event_attr *attr, int pid, int cpu)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void drop_links(struct profile *t)
{
	int i;

	for (i = 0; i < t->nr_links; i++)
		bpf_link__destroy(t->links[i]);
	t->nr_links = 0;
}

static struct bpf_link *profile_attach(struct kagg_session *s, int i)
{
	struct profile *t = s->tool;
	struct bpf_link *link;
	int c, err, fd;

	drop_links(t); /* left from an earlier attach: the session destroyed only its own */
	for (c = 0; c < t->nr_cpus; c++) {
		fd = perf_open(&t->attr, -1, t->cpus[c]);
		if (fd < 0) {
			err = -errno;
			slog(s, KAGG_LOG_WARN, "perf_event_open(%s, cpu %d): %s", s->event,
			     t->cpus[c], strerror(errno));
			goto fail;
		}
		link = bpf_program__attach_perf_event(s->progs[i], fd);
		if (!link) {
			err = -errno;
			close(fd);
			slog(s, KAGG_LOG_WARN, "attaching to the %s event of cpu %d: %s", s->event,
			     t->cpus[c], strerror(-err));
			goto fail;
		}
		t->links[t->nr_links++] = link; /* the link closes fd */
	}
	/* The session owns the first link; we keep the others. */
	link = t->links[0];
	memmove(t->links, t->links + 1, (t->nr_links - 1) * sizeof(*t->links));
	t->nr_links--;
	return link;
fail:
	drop_links(t);
	errno = -err;
	return NULL;
}

static int profile_read(struct kagg_session *s, struct kagg_snapshot *snap, __u32 g, bool reset)
{
	struct profile *t = s->tool;

	snap->stack_noun = "samples";
	/* stacks from the sampled registers: nothing of the program's own in them */
	return session_read_stacks(s, t->skel->maps.stack_agg, t->skel->maps.stackmap, g, reset,
				   false, snap);
}

/* The drops meta reports, in this order; only a full map loses the sample (lost). */
static const struct {
	const char *name, *what;
	unsigned int cnt;
	bool lost;
} drops[] = {
	{ "keys_full", "sample lost: stack aggregation map full", PROFILE_CNT_KEYS_FULL, true },
	{ "kstack_efault", "kernel stack not captured: -EFAULT (sample kept)",
	  PROFILE_CNT_KSTACK_EFAULT },
	{ "kstack_eexist", "kernel stack not captured: -EEXIST, stack map collision (sample kept)",
	  PROFILE_CNT_KSTACK_EEXIST },
	{ "kstack_other",
	  "kernel stack not captured: other error, e.g. -ENOMEM stack map full (sample kept)",
	  PROFILE_CNT_KSTACK_OTHER },
	{ "ustack_efault", "user stack not captured: -EFAULT (sample kept)",
	  PROFILE_CNT_USTACK_EFAULT },
	{ "ustack_eexist", "user stack not captured: -EEXIST, stack map collision (sample kept)",
	  PROFILE_CNT_USTACK_EEXIST },
	{ "ustack_other",
	  "user stack not captured: other error, e.g. -ENOMEM stack map full (sample kept)",
	  PROFILE_CNT_USTACK_OTHER },
};

static void profile_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
			 bool reset)
{
	size_t i;

	snap->meta.events_recorded = cnt[PROFILE_CNT_RECORDED];
	snap->meta.events_filtered = cnt[PROFILE_CNT_IDLE] + cnt[PROFILE_CNT_FILTERED];
	for (i = 0; i < sizeof(drops) / sizeof(drops[0]); i++)
		snap_add_drop(snap, drops[i].name, drops[i].what, cnt[drops[i].cnt], drops[i].lost);
	session_unwind_meta(s, snap, &cnt[PROFILE_CNT_UNW], reset);
}

static void profile_destroy(struct kagg_session *s)
{
	struct profile *t = s->tool;

	drop_links(t);
	profile_bpf__destroy(t->skel);
	free(t->links);
	free(t->cpus);
}

static unsigned long max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	unsigned long v = 0;

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * Choose the sampling event: try hardware cycles on the first CPU to sample
 * (opened and closed at once), fall back to cpu-clock.  0 or -errno.
 */
static int choose_event(struct kagg_session *s, const struct kagg_profile_opts *o)
{
	struct profile *t = s->tool;
	struct perf_event_attr *a = &t->attr;
	int fd, err;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->freq = 1;
	a->sample_freq = o->freq;
	if (o->event != KAGG_PROFILE_EV_CPU_CLOCK) {
		a->type = PERF_TYPE_HARDWARE;
		a->config = PERF_COUNT_HW_CPU_CYCLES;
		fd = perf_open(a, -1, t->cpus[0]);
		if (fd >= 0) {
			close(fd);
			s->event = "cycles";
			return 0;
		}
		err = -errno;
		if (session_perm_error(err)) {
			slog(s, KAGG_LOG_WARN,
			     "perf_event_open: %s: run as root or with "
			     "CAP_PERFMON (and CAP_BPF)",
			     strerror(-err));
			return err;
		}
		if (err != -ENOENT && err != -EOPNOTSUPP && err != -ENODEV) {
			slog(s, KAGG_LOG_WARN, "perf_event_open(cycles, %u Hz): %s", o->freq,
			     strerror(-err));
			return err;
		}
		if (o->event == KAGG_PROFILE_EV_CYCLES) {
			slog(s, KAGG_LOG_WARN,
			     "hardware cycles event not available (no hardware "
			     "PMU: %s); use the cpu-clock event",
			     strerror(-err));
			return -EOPNOTSUPP;
		}
		snprintf(s->attach_note, sizeof(s->attach_note),
			 "no hardware PMU: perf_event_open(cycles) returned %s (%s); "
			 "sampling with the cpu-clock software event",
			 strerrorname_np(-err), strerror(-err));
		slog(s, KAGG_LOG_INFO, "%s", s->attach_note);
	}
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	s->event = "cpu-clock";
	return 0;
}

/* The filters after the sampling rate's and the processes' (validate). */
static void describe_filters(struct kagg_session *s, const struct kagg_profile_opts *o)
{
	if (o->cpu >= 0)
		session_filters_add(s, "cpu=%d ", o->cpu);
	if (o->stacks == KAGG_PROFILE_USER)
		session_filters_add(s, "user-stacks-only ");
	if (o->stacks == KAGG_PROFILE_KERNEL)
		session_filters_add(s, "kernel-stacks-only ");
	session_filters_add(s, "idle-excluded");
}

static int validate(struct kagg_session *s, const struct kagg_profile_opts *o, int **cpus)
{
	unsigned long max_rate = max_sample_rate();
	int n, i;

	if ((unsigned int)o->stacks > KAGG_PROFILE_KERNEL ||
	    (unsigned int)o->event > KAGG_PROFILE_EV_CPU_CLOCK || (o->nr_pids && !o->pids) ||
	    (o->nr_pids > 1024)) {
		slog(s, KAGG_LOG_WARN, "invalid profile options");
		return -EINVAL;
	}
	if (max_rate && o->freq > max_rate) {
		slog(s, KAGG_LOG_WARN,
		     "frequency %u Hz is above the kernel's limit %lu "
		     "(kernel.perf_event_max_sample_rate)",
		     o->freq, max_rate);
		return -EINVAL;
	}
	session_filters_add(s, "freq=%uHz ", o->freq);
	n = session_tasks_open(s, &SESSION_PIDS(o));
	if (n)
		return n;
	n = util_online_cpus(PROFILE_MAX_CPUS, cpus);
	if (n < 0) {
		slog(s, KAGG_LOG_WARN, "cannot read the online CPUs: %s", strerror(-n));
		return n;
	}
	if (o->cpu < 0)
		return n;
	for (i = 0; i < n && (*cpus)[i] != o->cpu; i++)
		;
	if (i == n) {
		slog(s, KAGG_LOG_WARN, "cpu %d is not online", o->cpu);
		return -EINVAL;
	}
	(*cpus)[0] = o->cpu;
	return 1;
}

static int load(struct kagg_session *s, const struct kagg_profile_opts *o)
{
	struct profile *t = s->tool;
	struct profile_bpf *skel;
	bool table;
	int err;

	skel = profile_bpf__open();
	if (!skel)
		return -errno;
	t->skel = skel;
	skel->rodata->filter_tgid = o->nr_pids > 0;
	skel->rodata->stacks = o->stacks;
	skel->rodata->period_ns = 1000000000ULL / o->freq;
	err = session_unwind_size(s, &UNW_MAPS(skel), &skel->rodata->unwind, o->unwind,
				  o->stacks != KAGG_PROFILE_KERNEL, o->unwind_rows, true, &table);
	if (err)
		return err;
	bpf_program__set_autoload(skel->progs.profile_sample, !table);
	bpf_program__set_autoload(skel->progs.profile_sample_unw, table);
	if (!o->nr_pids)
		bpf_map__set_max_entries(skel->maps.tgids, 1);
	if (o->stacks == KAGG_PROFILE_KERNEL)
		bpf_map__set_max_entries(skel->maps.proc_notes, 4096);
	err = profile_bpf__load(skel);
	if (err)
		return session_load_failed(s, err, "the perf_event program");
	err = session_tasks_fill(s, &SESSION_PIDS(o), skel->maps.tgids, NULL, NULL);
	if (!err && o->stacks != KAGG_PROFILE_KERNEL)
		err = session_set_notes(s, skel->maps.proc_notes, &skel->bss->proc_notes_lost);
	if (!err)
		err = session_unwind_start(s, &UNW_MAPS(skel), o->pids, o->nr_pids);
	s->ustacks_gen = true;
	if (err)
		return err;
	s->progs[0] = table ? skel->progs.profile_sample_unw : skel->progs.profile_sample;
	s->nr_progs = 1;
	session_bind(s, &skel->bss->gen, &skel->bss->armed, skel->maps.counters, PROFILE_CNT_MAX,
		     "perf_event");
	return 0;
}

static int profile_open(struct kagg_session *s, void *opts)
{
	struct kagg_profile_opts *o = opts;
	struct profile *t = s->tool;
	int n;

	if (!o->freq)
		o->freq = PROFILE_DEFAULT_FREQ;
	s->clock = "none: samples counted (total_ns = samples * 1e9/HZ)";

	n = validate(s, o, &t->cpus);
	if (n < 0)
		return n;
	t->nr_cpus = n;
	t->links = calloc(n, sizeof(*t->links));
	if (!t->links)
		return -ENOMEM;
	describe_filters(s, o);
	return session_need_btf(s) ?: choose_event(s, o) ?: load(s, o);
}

SESSION_TOOL(profile, struct profile, .attach = profile_attach);

/* ------------------------------------------------------------ printing */

/*
 * A stack's part of a folded line: lost when the capture failed (err other
 * than -ENOENT), then ";sym" for each of its n frames, the last one first.
 */
static void put_frames(FILE *f, int err, const char *lost, const struct kagg_frame *const *fr,
		       unsigned int n)
{
	if (err && err != -ENOENT)
		fputs(lost, f);
	while (n > 0) {
		fputc(';', f);
		snap_put_folded(f, fr[--n]->sym, SIZE_MAX);
	}
}

int kagg_profile__print_folded(const struct kagg_snapshot *snap, FILE *f)
{
	return kagg_profile__print_folded_opts(snap, f, NULL);
}

int kagg_profile__print_folded_opts(const struct kagg_snapshot *snap, FILE *f,
				    const struct kagg_print_opts *opts)
{
	bool delim = !(opts && opts->sz > offsetof(struct kagg_print_opts, no_delimiter) &&
		       opts->no_delimiter);
	size_t i, n;

	if (!snap || !f)
		return -EINVAL;
	n = kagg_snapshot__stack_cnt(snap);
	for (i = 0; i < n; i++) {
		const struct kagg_stack *st = kagg_snapshot__stack(snap, i);

		if (st->comm[0])
			snap_put_folded(f, st->comm, sizeof(st->comm));
		else
			fputs("[unknown]", f);
		put_frames(f, st->ustack_err, ";[user stack lost]", st->uframes, st->nr_uframes);
		if (delim && (st->nr_kframes || (st->kstack_err && st->kstack_err != -ENOENT)))
			fputs(";--", f);
		put_frames(f, st->kstack_err, ";[kernel stack lost]", st->kframes, st->nr_kframes);
		fprintf(f, " %" PRIu64 "\n", st->count);
	}
	return ferror(f) ? -EIO : 0;
}
