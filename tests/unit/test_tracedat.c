// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * trace.dat v6: files written from the reference ring buffer (sched_switch
 * replicas on two CPUs, fake clock) read back by our reader, walked byte by
 * byte here and decoded with libtraceevent + kbuffer, and reported by
 * `trace-cmd report` when it is installed: same events, CPUs, timestamps,
 * pids, comms and fields every time.  Also: a page with missed events,
 * several pages per CPU, options and error paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <event-parse.h>
#include <kbuffer.h>
#include <trace-seq.h>

#include <kagg/rb_format.h>
#include <kagg/ringbuf.h>
#include <kagg/tracedat.h>
#include "unit_util.h"

#define PS 4096
#define NCPU 2
#define MAXEV 4096

struct exp_ev {
	uint64_t ts;
	int cpu;
	int prev_pid, next_pid;
	char prev_comm[16], next_comm[16];
};

struct fixture {
	char dir[64];
	char path[96];
	uint64_t now; /* the fake clock */
	struct kagg_rb_events *evs;
	const struct kagg_rb_format *sw;
	struct kagg_rb *rb;
	struct exp_ev ev[MAXEV];
	int nev;
	char *trace_text; /* the buffer's own `trace` lines, before draining */
	uint64_t overrun[NCPU];
};

/* Options of a writer of FX's recordings (its page size, CPUs and events), then any others. */
#define FX_WRITER_OPTS(NAME, FX, ...)                                                \
	KAGG_OPTS(kagg_tracedat_writer_opts, NAME, .page_size = PS, .nr_cpus = NCPU, \
		  .events = (FX)->evs, ##__VA_ARGS__)

static uint64_t fake_clock(void *ctx)
{
	return ((struct fixture *)ctx)->now;
}

static int pid_of(int cpu, int i)
{
	return i % 4 == 0 ? 0 : 1000 * (cpu + 1) + i % 4;
}

static void comm_of(int pid, char *buf)
{
	if (pid == 0)
		snprintf(buf, 16, "swapper/0");
	else
		snprintf(buf, 16, "worker-%d", pid);
}

static const char *comm_cb(void *ctx, int pid)
{
	static __thread char b[16];

	if (pid == 0)
		return NULL;
	comm_of(pid, b);
	return b;
}

static void put_switch(struct fixture *fx, int cpu, int i, uint64_t ts)
{
	struct exp_ev *e = &fx->ev[fx->nev++];
	uint8_t r[64] = { 0 };

	assert_true(fx->nev <= MAXEV);
	e->ts = ts;
	e->cpu = cpu;
	e->prev_pid = pid_of(cpu, i);
	e->next_pid = pid_of(cpu, i + 1);
	comm_of(e->prev_pid, e->prev_comm);
	comm_of(e->next_pid, e->next_comm);
	kagg_rb_entry__init(r, kagg_rb_format__id(fx->sw), 0x01, 1, e->prev_pid);
	memcpy(r + 8, e->prev_comm, 16);
	memcpy(r + 24, &e->prev_pid, 4);
	*(int32_t *)(r + 28) = 120;
	*(int64_t *)(r + 32) = (i % 3) ? 1 : 0;
	memcpy(r + 40, e->next_comm, 16);
	memcpy(r + 56, &e->next_pid, 4);
	*(int32_t *)(r + 60) = 120;
	fx->now = ts;
	assert_int_equal(kagg_rb__write(fx->rb, cpu, r, 64), 0);
}

/*
 * n0/n1 events on CPU 0/1 (interleaved), nr_subbufs sub-buffers per CPU.  A
 * 1 s jump halfway (a TIME_EXTEND), and a 200 ms one every jump_every events
 * when non-zero (TIME_EXTENDs keep 68-byte records from filling a page exactly,
 * so a lost count fits after the data).
 */
static void fill(struct fixture *fx, int n0, int n1, size_t nr_subbufs, int jump_every)
{
	KAGG_OPTS(kagg_rb_opts, o, .nr_cpus = NCPU, .nr_subbufs = nr_subbufs, .clock = fake_clock,
		  .clock_ctx = fx);
	uint64_t ts = 5000000000ULL;
	int i;

	fx->rb = kagg_rb__new(&o);
	assert_non_null(fx->rb);
	for (i = 0; i < n0 || i < n1; i++) {
		ts += 1000 + (uint64_t)(i % 7) * 13;
		if (i == n0 / 2)
			ts += 1000000000ULL;
		if (jump_every && i % jump_every == jump_every - 1)
			ts += 200000000ULL;
		if (i < n0)
			put_switch(fx, 0, i, ts);
		if (i < n1)
			put_switch(fx, 1, i, ts + 333);
	}
}

/* The buffer's own `trace` text, then drain it into a trace.dat. */
static void write_file(struct fixture *fx, const char *clock)
{
	FX_WRITER_OPTS(wo, fx, .trace_clock = clock, .cmdlines = "1 init\n");
	struct kagg_tracedat_writer *w;
	struct kagg_rb_iter *it = kagg_rb_iter__new(fx->rb, -1);
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	struct kagg_rb_stats st = { .sz = sizeof(st) };
	size_t len = 0;
	FILE *f = open_memstream(&fx->trace_text, &len);
	int cpu, pid, r;

	assert_non_null(it);
	while (kagg_rb_iter__next(it, &ev) == 0)
		kagg_rb_events__fprint_event(fx->evs, f, &ev, comm_cb, NULL);
	fclose(f);
	kagg_rb_iter__free(it);
	for (cpu = 0; cpu < NCPU; cpu++) {
		assert_int_equal(kagg_rb__stats(fx->rb, cpu, &st), 0);
		fx->overrun[cpu] = st.overrun;
	}

	w = kagg_tracedat_writer__new(fx->path, &wo);
	assert_non_null(w);
	for (cpu = 0; cpu < NCPU; cpu++)
		for (pid = 1000 * (cpu + 1) + 1; pid < 1000 * (cpu + 1) + 4; pid++) {
			char c[16];

			comm_of(pid, c);
			assert_int_equal(kagg_tracedat_writer__add_cmdline(w, pid, c), 0);
		}
	r = kagg_tracedat_writer__add_rb(w, fx->rb);
	assert_true(r > 0);
	assert_int_equal((uint64_t)r, kagg_tracedat_writer__nr_pages(w, -1));
	assert_int_equal(kagg_tracedat_writer__finish(w), 0);
	assert_int_equal(kagg_tracedat_writer__finish(w), -EINVAL);
	kagg_tracedat_writer__free(w);
}

/* Expected events: those still in the buffer (the last ones of each CPU), by ts. */
static int exp_cmp(const void *a, const void *b)
{
	const struct exp_ev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->cpu - y->cpu;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	snprintf(fx->dir, sizeof(fx->dir), "/tmp/kagg-td-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/trace.dat", fx->dir);
	fx->evs = kagg_rb_events__new(NULL);
	if (!fx->evs || kagg_rb_events__define_sched(fx->evs))
		return -1;
	fx->sw = kagg_rb_events__find_by_name(fx->evs, "sched", "sched_switch");
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	unlink(fx->path);
	rmdir(fx->dir);
	kagg_rb__free(fx->rb);
	kagg_rb_events__free(fx->evs);
	free(fx->trace_text);
	free(fx);
	return 0;
}

/* Keep only the last (written - overrun) events of each CPU; sort by ts. */
static void expected_after_loss(struct fixture *fx)
{
	uint64_t drop[NCPU];
	int i, j = 0;

	memcpy(drop, fx->overrun, sizeof(drop));
	for (i = 0; i < fx->nev; i++) {
		if (drop[fx->ev[i].cpu]) {
			drop[fx->ev[i].cpu]--;
			continue;
		}
		fx->ev[j++] = fx->ev[i];
	}
	fx->nev = j;
	qsort(fx->ev, (size_t)fx->nev, sizeof(fx->ev[0]), exp_cmp);
}

/* ------------------------------------------------------------ (a) our reader */

static void check_with_reader(struct fixture *fx, int64_t *missed)
{
	struct kagg_tracedat *t = kagg_tracedat__open(fx->path, NULL);
	const struct kagg_rb_format *sw;
	const struct kagg_rb_field *pp, *np, *pc;
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	int n = 0, err;

	assert_non_null(t);
	assert_int_equal(kagg_tracedat__nr_cpus(t), NCPU);
	assert_int_equal(kagg_tracedat__page_size(t), PS);
	assert_int_equal(kagg_tracedat__bad_formats(t), 0);
	assert_int_equal(kagg_rb_events__count(kagg_tracedat__events(t)), 3); /* define_sched */
	assert_string_equal(kagg_tracedat__comm(t, 1001), "worker-1001");
	assert_string_equal(kagg_tracedat__comm(t, 1), "init");
	assert_null(kagg_tracedat__comm(t, 77));
	sw = kagg_rb_events__find_by_name(kagg_tracedat__events(t), "sched", "sched_switch");
	assert_non_null(sw);
	assert_int_equal(kagg_rb_format__id(sw), kagg_rb_format__id(fx->sw));
	pp = kagg_rb_format__field(sw, "prev_pid");
	np = kagg_rb_format__field(sw, "next_pid");
	pc = kagg_rb_format__field(sw, "prev_comm");
	assert_non_null(pp);
	assert_non_null(np);
	assert_non_null(pc);
	missed[0] = missed[1] = 0;
	while ((err = kagg_tracedat__next(t, &ev)) == 0) {
		const struct exp_ev *e = &fx->ev[n];

		assert_true(n < fx->nev);
		assert_int_equal(ev.cpu, e->cpu);
		assert_int_equal(ev.ts, e->ts);
		assert_int_equal(ev.len, 64);
		assert_int_equal(kagg_rb_field__int(pp, ev.data), e->prev_pid);
		assert_int_equal(kagg_rb_field__int(np, ev.data), e->next_pid);
		assert_string_equal((const char *)ev.data + pc->offset, e->prev_comm);
		if (ev.missed)
			missed[ev.cpu] = ev.missed;
		n++;
	}
	assert_int_equal(err, -ENOENT);
	assert_int_equal(n, fx->nev);
	kagg_tracedat__free(t);
}

static void test_roundtrip_two_cpus_many_pages_reader(void **state)
{
	struct fixture *fx = *state;
	struct kagg_tracedat *t;
	int64_t missed[NCPU];
	uint64_t off, size;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	fill(fx, 300, 200, 64, 0);
	write_file(fx, "mono");
	qsort(fx->ev, (size_t)fx->nev, sizeof(fx->ev[0]), exp_cmp);
	check_with_reader(fx, missed);
	assert_int_equal(missed[0], 0);
	assert_int_equal(missed[1], 0);

	t = kagg_tracedat__open(fx->path, NULL);
	assert_non_null(t);
	assert_string_equal(kagg_tracedat__trace_clock(t), "mono");
	/* several page-aligned pages per CPU */
	assert_int_equal(kagg_tracedat__cpu_data(t, 0, &off, &size), 0);
	assert_int_equal(off % PS, 0);
	assert_true(size >= 4 * PS);
	assert_int_equal(kagg_tracedat__cpu_data(t, 1, &off, &size), 0);
	assert_int_equal(off % PS, 0);
	assert_true(size >= 3 * PS);
	assert_int_equal(kagg_tracedat__cpu_data(t, 2, &off, &size), -EINVAL);
	/* the printed lines are the ring buffer's own `trace` lines */
	f = open_memstream(&text, &len);
	assert_int_equal(kagg_tracedat__fprint(t, f, -1), fx->nev);
	fclose(f);
	assert_string_equal(text, fx->trace_text);
	free(text);
	/* one CPU only */
	text = NULL;
	f = open_memstream(&text, &len);
	assert_int_equal(kagg_tracedat__fprint(t, f, 1), 200);
	fclose(f);
	assert_non_null(strstr(text, "[001]"));
	assert_null(strstr(text, "[000]"));
	free(text);
	kagg_tracedat__free(t);
}

/* ------------------------------------------------------------ (b) libtraceevent */

struct raw {
	const uint8_t *p;
	size_t left;
};

static uint64_t rd(struct raw *r, int n)
{
	uint64_t v = 0;
	int i;

	assert_true((size_t)n <= r->left);
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	r->left -= (size_t)n;
	return v;
}

static const uint8_t *rd_bytes(struct raw *r, size_t n)
{
	const uint8_t *p = r->p;

	assert_true(n <= r->left);
	r->p += n;
	r->left -= n;
	return p;
}

static char *rd_text(struct raw *r, int len_bytes, size_t *len)
{
	const uint8_t *p;
	char *s;

	*len = (size_t)rd(r, len_bytes);
	p = rd_bytes(r, *len);
	s = malloc(*len + 1);
	memcpy(s, p, *len);
	s[*len] = 0;
	return s;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/*
 * Walk the file per the v6 layout, parse every text with libtraceevent and
 * decode every page with kbuffer.  Returns records in file order per CPU.
 */
static int decode_with_libtraceevent(struct fixture *fx, struct exp_ev *out, int max,
				     long long *missed)
{
	size_t flen, len;
	uint8_t *file = slurp(fx->path, &flen);
	struct raw r = { file, flen };
	struct tep_handle *tep = tep_alloc();
	struct kbuffer *kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	uint64_t nsys, i, k, off[NCPU], size[NCPU], ps;
	int cpu, n = 0;
	char *s;

	assert_memory_equal(rd_bytes(&r, 10), "\x17\x08\x44tracing", 10);
	assert_string_equal((const char *)rd_bytes(&r, 2), "6");
	assert_int_equal(rd(&r, 1), 0);
	assert_int_equal(rd(&r, 1), 8);
	ps = rd(&r, 4);
	assert_int_equal(ps, PS);
	assert_memory_equal(rd_bytes(&r, 12), "header_page", 12);
	s = rd_text(&r, 8, &len);
	assert_int_equal(tep_parse_header_page(tep, s, (unsigned long)len, 8), 0);
	assert_int_equal(tep_get_header_page_size(tep), 8);
	free(s);
	assert_memory_equal(rd_bytes(&r, 13), "header_event", 13);
	s = rd_text(&r, 8, &len);
	assert_non_null(strstr(s, "type_len"));
	free(s);
	assert_int_equal(rd(&r, 4), 0); /* ftrace formats */
	nsys = rd(&r, 4);
	assert_int_equal(nsys, 1);
	for (i = 0; i < nsys; i++) {
		const char *sys = (const char *)r.p;
		uint64_t m;

		rd_bytes(&r, strlen(sys) + 1);
		assert_string_equal(sys, "sched");
		m = rd(&r, 4);
		assert_int_equal(m, 3); /* sched_switch, sched_wakeup, sched_wakeup_new */
		for (k = 0; k < m; k++) {
			s = rd_text(&r, 8, &len);
			assert_int_equal(tep_parse_event(tep, s, len, sys), 0);
			free(s);
		}
	}
	assert_int_equal(rd(&r, 4), 0); /* kallsyms */
	assert_int_equal(rd(&r, 4), 0); /* printk */
	s = rd_text(&r, 8, &len);
	assert_int_equal(tep_parse_saved_cmdlines(tep, s), 0);
	free(s);
	assert_int_equal(rd(&r, 4), NCPU);
	if (!memcmp(r.p, "options  \0", 10)) {
		rd_bytes(&r, 10);
		assert_int_equal(rd(&r, 2), 4); /* TRACECLOCK */
		s = rd_text(&r, 4, &len);
		assert_string_equal(s, "[mono]\n");
		free(s);
		assert_int_equal(rd(&r, 2), 0);
	}
	assert_memory_equal(rd_bytes(&r, 10), "flyrecord\0", 10);
	for (cpu = 0; cpu < NCPU; cpu++) {
		off[cpu] = rd(&r, 8);
		size[cpu] = rd(&r, 8);
		assert_int_equal(off[cpu] % PS, 0);
		assert_int_equal(size[cpu] % PS, 0);
		assert_true(off[cpu] + size[cpu] <= flen);
	}
	assert_string_equal(tep_data_comm_from_pid(tep, 1002), "worker-1002");
	assert_string_equal(tep_data_comm_from_pid(tep, 1), "init");

	for (cpu = 0; cpu < NCPU; cpu++) {
		uint64_t pg;

		missed[cpu] = 0;
		for (pg = 0; pg < size[cpu] / PS; pg++) {
			unsigned long long ts;
			void *d;

			kbuffer_load_subbuffer(kb, file + off[cpu] + pg * PS);
			if (kbuffer_missed_events(kb))
				missed[cpu] = kbuffer_missed_events(kb);
			for (d = kbuffer_read_event(kb, &ts); d; d = kbuffer_next_event(kb, &ts)) {
				struct tep_record rec;
				struct tep_event *e;
				struct trace_seq sq;
				unsigned long long v;
				struct exp_ev *o = &out[n++];
				char want[256];

				assert_true(n <= max);
				e = uu_kb_event(tep, kb, d, ts, cpu, "sched_switch", &rec);
				o->ts = ts;
				o->cpu = cpu;
				assert_int_equal(
					tep_get_field_val(NULL, e, "prev_pid", &rec, &v, 1), 0);
				o->prev_pid = (int)v;
				assert_int_equal(
					tep_get_field_val(NULL, e, "next_pid", &rec, &v, 1), 0);
				o->next_pid = (int)v;
				assert_int_equal(tep_data_pid(tep, &rec), o->prev_pid);
				memcpy(o->prev_comm, (char *)d + 8, 16);
				memcpy(o->next_comm, (char *)d + 40, 16);
				/* libtraceevent prints the fields as we do */
				trace_seq_init(&sq);
				tep_print_event(tep, &sq, &rec, "%s", TEP_PRINT_INFO);
				trace_seq_terminate(&sq);
				kagg_rb_events__format_info(fx->evs, fx->sw, d, rec.size, want,
							    sizeof(want));
				assert_string_equal(sq.buffer, want);
				trace_seq_destroy(&sq);
			}
		}
	}
	kbuffer_free(kb);
	tep_free(tep);
	free(file);
	return n;
}

static void compare_sorted(struct fixture *fx, struct exp_ev *got, int n)
{
	int i;

	qsort(got, (size_t)n, sizeof(got[0]), exp_cmp);
	assert_int_equal(n, fx->nev);
	for (i = 0; i < n; i++) {
		assert_int_equal(got[i].ts, fx->ev[i].ts);
		assert_int_equal(got[i].cpu, fx->ev[i].cpu);
		assert_int_equal(got[i].prev_pid, fx->ev[i].prev_pid);
		assert_int_equal(got[i].next_pid, fx->ev[i].next_pid);
		assert_string_equal(got[i].prev_comm, fx->ev[i].prev_comm);
		assert_string_equal(got[i].next_comm, fx->ev[i].next_comm);
	}
}

static void test_file_decodes_with_libtraceevent_and_kbuffer(void **state)
{
	struct fixture *fx = *state;
	struct exp_ev *got = calloc(MAXEV, sizeof(*got));
	long long missed[NCPU];
	int n;

	fill(fx, 250, 260, 64, 0);
	write_file(fx, "mono");
	qsort(fx->ev, (size_t)fx->nev, sizeof(fx->ev[0]), exp_cmp);
	n = decode_with_libtraceevent(fx, got, MAXEV, missed);
	compare_sorted(fx, got, n);
	assert_int_equal(missed[0], 0);
	assert_int_equal(missed[1], 0);
	free(got);
}

/* ------------------------------------------------------------ (c) trace-cmd */

static bool have_trace_cmd(void)
{
	return system("trace-cmd -h >/dev/null 2>&1") != 127 &&
	       access("/usr/bin/trace-cmd", X_OK) == 0;
}

/* A test that needs trace-cmd is skipped, saying why, where it is not installed. */
#define SKIP_UNLESS_TRACE_CMD()                                                    \
	do {                                                                       \
		if (!have_trace_cmd()) {                                           \
			printf("SKIP %s: trace-cmd is not installed\n", __func__); \
			skip();                                                    \
		}                                                                  \
	} while (0)

static char *run(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	char *out = NULL, buf[4096];
	size_t len = 0, n;
	FILE *m = open_memstream(&out, &len);

	assert_non_null(p);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		fwrite(buf, 1, n, m);
	pclose(p);
	fclose(m);
	return out;
}

/*
 * Parse `trace-cmd report -N -t` lines:
 *   "  COMM-PID  [CPU] SECS.NSECS: sched_switch:  prev_comm=... prev_pid=N ..."
 * and compare them with the expected events in order.  Returns the number of
 * "EVENTS DROPPED" lines; fails with the whole output printed on a mismatch.
 */
static int check_report(struct fixture *fx, const char *out)
{
	const char *line = out;
	int n = 0, dropped = 0, bad = 0;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		const char *br;
		char l[1024];
		unsigned long long sec, nsec;
		int cpu, pid, prev_pid, next_pid;
		char comm[64], prev_comm[32], next_comm[32];
		const char *dash, *p;

		snprintf(l, sizeof(l), "%.*s", (int)(nl ? nl - line : (long)strlen(line)), line);
		line = nl ? nl + 1 : NULL;
		if (strstr(l, "EVENTS DROPPED")) {
			dropped++;
			continue;
		}
		if (!strstr(l, "sched_switch:"))
			continue;
		br = strstr(l, " [");
		if (!br) {
			bad = 1;
			break;
		}
		/* comm-pid: the last '-' before " [" */
		for (dash = br; dash > l && *dash != '-'; dash--)
			;
		for (p = l; *p == ' '; p++)
			;
		snprintf(comm, sizeof(comm), "%.*s", (int)(dash - p), p);
		if (sscanf(dash + 1, "%d [%d] %llu.%llu:", &pid, &cpu, &sec, &nsec) != 4 ||
		    !(p = strstr(l, "prev_comm=")) ||
		    sscanf(p, "prev_comm=%31s prev_pid=%d", prev_comm, &prev_pid) != 2 ||
		    !(p = strstr(l, "next_comm=")) ||
		    sscanf(p, "next_comm=%31s next_pid=%d", next_comm, &next_pid) != 2) {
			bad = 1;
			break;
		}
		if (n >= fx->nev) {
			bad = 1;
			break;
		}
		{
			const struct exp_ev *e = &fx->ev[n];
			char want_comm[16];

			comm_of(e->prev_pid, want_comm);
			if (e->prev_pid == 0)
				strcpy(want_comm, "<idle>");
			if (cpu != e->cpu || pid != e->prev_pid ||
			    sec * 1000000000ULL + nsec != e->ts || strcmp(comm, want_comm) ||
			    prev_pid != e->prev_pid || next_pid != e->next_pid ||
			    strcmp(prev_comm, e->prev_comm) || strcmp(next_comm, e->next_comm)) {
				printf("mismatch at event %d: line '%s', want cpu %d pid %d comm "
				       "%s "
				       "ts %llu\n",
				       n, l, e->cpu, e->prev_pid, want_comm,
				       (unsigned long long)e->ts);
				bad = 1;
				break;
			}
		}
		n++;
	}
	if (bad || n != fx->nev) {
		printf("trace-cmd report: %d of %d events matched; output:\n%s\n", n, fx->nev, out);
		fail();
	}
	return dropped;
}

/* What `trace-cmd report -N -t` prints of fx->path (malloc'd). */
static char *report(struct fixture *fx)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "trace-cmd report -N -t -i %s 2>&1", fx->path);
	return run(cmd);
}

/*
 * N0 events on CPU 0 and N1 on CPU 1 written to fx->path with CLOCK: what trace-cmd
 * reports of them, fx->ev sorted in the order it lists them.
 */
static char *report_of_recording(struct fixture *fx, int n0, int n1, const char *clock)
{
	fill(fx, n0, n1, 64, 0);
	write_file(fx, clock);
	qsort(fx->ev, (size_t)fx->nev, sizeof(fx->ev[0]), exp_cmp);
	return report(fx);
}

static void test_trace_cmd_report_lists_the_events(void **state)
{
	struct fixture *fx = *state;
	char *out;

	SKIP_UNLESS_TRACE_CMD();
	out = report_of_recording(fx, 300, 180, "mono");
	assert_int_equal(check_report(fx, out), 0);
	assert_non_null(strstr(out, "cpus=2"));
	free(out);
}

static void test_trace_cmd_report_without_clock_option(void **state)
{
	struct fixture *fx = *state;
	char *out;

	SKIP_UNLESS_TRACE_CMD();
	out = report_of_recording(fx, 20, 30, NULL);
	check_report(fx, out);
	free(out);
	{
		struct kagg_tracedat *t = kagg_tracedat__open(fx->path, NULL);

		assert_non_null(t);
		assert_null(kagg_tracedat__trace_clock(t));
		kagg_tracedat__free(t);
	}
}

/* A v6 file written by trace-cmd itself (ours -> v7 -> v6 by `trace-cmd convert`). */
static void test_reads_v6_written_by_trace_cmd(void **state)
{
	struct fixture *fx = *state;
	char cmd[1024], v7[128], v6[128], *out, *mine = NULL, *theirs = NULL;
	size_t len = 0;
	struct kagg_tracedat *t;
	FILE *f;

	SKIP_UNLESS_TRACE_CMD();
	fill(fx, 150, 90, 64, 0);
	write_file(fx, "mono");
	snprintf(v7, sizeof(v7), "%s/v7.dat", fx->dir);
	snprintf(v6, sizeof(v6), "%s/v6.dat", fx->dir);
	snprintf(cmd, sizeof(cmd),
		 "trace-cmd convert -i %s -o %s --file-version 7 2>&1 && "
		 "trace-cmd convert -i %s -o %s --file-version 6 2>&1",
		 fx->path, v7, v7, v6);
	out = run(cmd);
	t = kagg_tracedat__open(v6, NULL);
	if (!t) {
		printf("cannot open trace-cmd's v6 file (errno %d); convert said:\n%s\n", errno,
		       out);
		fail();
	}
	free(out);
	assert_string_equal(kagg_tracedat__trace_clock(t), "mono");
	f = open_memstream(&theirs, &len);
	assert_int_equal(kagg_tracedat__fprint(t, f, -1), 240);
	fclose(f);
	kagg_tracedat__free(t);
	t = kagg_tracedat__open(fx->path, NULL);
	assert_non_null(t);
	f = open_memstream(&mine, &len);
	assert_int_equal(kagg_tracedat__fprint(t, f, -1), 240);
	fclose(f);
	kagg_tracedat__free(t);
	assert_string_equal(theirs, mine);
	assert_string_equal(mine, fx->trace_text);
	free(mine);
	free(theirs);
	unlink(v7);
	unlink(v6);
}

/* ------------------------------------------------------------ missed events */

static void test_missed_events_page(void **state)
{
	struct fixture *fx = *state;
	struct exp_ev *got = calloc(MAXEV, sizeof(*got));
	int64_t missed[NCPU];
	long long kmissed[NCPU];
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int n;

	/* 2 sub-buffers of ~60 records: CPU 0 overwrites, CPU 1 fits */
	fill(fx, 400, 40, 2, 25);
	write_file(fx, "mono");
	assert_true(fx->overrun[0] > 0);
	assert_int_equal(fx->overrun[1], 0);
	expected_after_loss(fx);

	check_with_reader(fx, missed);
	assert_int_equal(missed[0], (int64_t)fx->overrun[0]);
	assert_int_equal(missed[1], 0);

	n = decode_with_libtraceevent(fx, got, MAXEV, kmissed);
	compare_sorted(fx, got, n);
	assert_int_equal(kmissed[0], (long long)fx->overrun[0]);
	assert_int_equal(kmissed[1], 0);
	free(got);

	{
		struct kagg_tracedat *t = kagg_tracedat__open(fx->path, NULL);
		char want[64];

		f = open_memstream(&text, &len);
		assert_int_equal(kagg_tracedat__fprint(t, f, -1), fx->nev);
		fclose(f);
		snprintf(want, sizeof(want), "CPU:0 [LOST %llu EVENTS]\n",
			 (unsigned long long)fx->overrun[0]);
		assert_non_null(strstr(text, want));
		free(text);
		kagg_tracedat__free(t);
	}

	if (!have_trace_cmd()) {
		printf("SKIP trace-cmd part of %s: trace-cmd is not installed\n", __func__);
	} else {
		char *out = report(fx), want[64];

		assert_int_equal(check_report(fx, out), 1);
		snprintf(want, sizeof(want), "CPU:0 [%llu EVENTS DROPPED]",
			 (unsigned long long)fx->overrun[0]);
		if (!strstr(out, want)) {
			printf("no '%s' in:\n%s\n", want, out);
			fail();
		}
		free(out);
	}
}

/* ------------------------------------------------------------ options and errors */

static void test_empty_file_and_empty_cpu(void **state)
{
	struct fixture *fx = *state;
	KAGG_OPTS(kagg_tracedat_writer_opts, wo, .nr_cpus = 3);
	struct kagg_tracedat_writer *w = kagg_tracedat_writer__new(fx->path, &wo);
	struct kagg_tracedat *t;
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	uint64_t off, size;

	assert_non_null(w);
	assert_int_equal(kagg_tracedat_writer__finish(w), 0);
	kagg_tracedat_writer__free(w);
	t = kagg_tracedat__open(fx->path, NULL);
	assert_non_null(t);
	assert_int_equal(kagg_tracedat__nr_cpus(t), 3);
	assert_int_equal(kagg_rb_events__count(kagg_tracedat__events(t)), 0);
	assert_int_equal(kagg_tracedat__cpu_data(t, 2, &off, &size), 0);
	assert_int_equal(size, 0);
	assert_int_equal(kagg_tracedat__next(t, &ev), -ENOENT);
	kagg_tracedat__free(t);
	if (have_trace_cmd()) {
		char cmd[256], *out;

		snprintf(cmd, sizeof(cmd), "trace-cmd report -N -i %s 2>&1", fx->path);
		out = run(cmd);
		if (!strstr(out, "cpus=3")) {
			printf("trace-cmd report on an empty file:\n%s\n", out);
			fail();
		}
		free(out);
	}
}

static void test_bad_opts_and_arguments(void **state)
{
	struct fixture *fx = *state;
	struct {
		struct kagg_tracedat_writer_opts o;
		char extra[8];
	} big;
	struct kagg_tracedat_writer *w;
	struct kagg_tracedat *t;
	uint8_t page[PS] = { 0 };
	uint64_t size;
	FILE *f;

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.o.nr_cpus = 1;
	big.extra[3] = 1;
	errno = 0;
	assert_null(kagg_tracedat_writer__new(fx->path, &big.o));
	assert_int_equal(errno, EINVAL);
	big.extra[3] = 0;
	big.o.page_size = 5000;
	assert_null(kagg_tracedat_writer__new(fx->path, &big.o));
	assert_int_equal(errno, EINVAL);
	big.o.page_size = 0;
	big.o.nr_cpus = 0;
	assert_null(kagg_tracedat_writer__new(fx->path, &big.o));
	assert_int_equal(errno, EINVAL);
	big.o.nr_cpus = 1;
	big.o.cmdlines = "12 ok\nnot a line\n";
	assert_null(kagg_tracedat_writer__new(fx->path, &big.o));
	assert_int_equal(errno, EINVAL);
	big.o.cmdlines = NULL;
	assert_null(kagg_tracedat_writer__new("/nonexistent-dir/x.dat", &big.o));
	assert_int_equal(errno, ENOENT);

	w = kagg_tracedat_writer__new(fx->path, &big.o); /* bigger struct, zero tail: fine */
	assert_non_null(w);
	assert_int_equal(kagg_tracedat_writer__add_page(w, 1, page, PS), -EINVAL);
	assert_int_equal(kagg_tracedat_writer__add_page(w, -1, page, PS), -EINVAL);
	assert_int_equal(kagg_tracedat_writer__add_page(w, 0, page, PS + 1), -E2BIG);
	page[8] = 0xff;
	page[9] = 0x0f; /* commit 4095 > 4080 */
	assert_int_equal(kagg_tracedat_writer__add_page(w, 0, page, PS), -EINVAL);
	page[8] = page[9] = 0;
	assert_int_equal(kagg_tracedat_writer__add_page(w, 0, page, 64), 0); /* zero-filled */
	assert_int_equal(kagg_tracedat_writer__nr_pages(w, 0), 1);
	assert_int_equal(kagg_tracedat_writer__add_cmdline(w, -1, "x"), -EINVAL);
	assert_int_equal(kagg_tracedat_writer__add_cmdline(w, 5, "a\nb"), -EINVAL);
	assert_int_equal(kagg_tracedat_writer__add_cmdline(w, 5, "a-very-long-command-name"), 0);
	kagg_tracedat_writer__free(w); /* never finished: what was added stays, readable */
	t = kagg_tracedat__open(fx->path, NULL);
	assert_non_null(t);
	assert_int_equal(kagg_tracedat__cpu_data(t, 0, NULL, &size), 0);
	assert_int_equal(size, PS);
	assert_string_equal(kagg_tracedat__comm(t, 5), "a-very-long-com");
	kagg_tracedat__free(t);
	unlink(fx->path);

	kagg_tracedat_writer__free(NULL);
	kagg_tracedat__free(NULL);

	/* the reader refuses what it is not */
	f = fopen(fx->path, "w");
	fputs("this is not a trace.dat file at all\n", f);
	fclose(f);
	errno = 0;
	assert_null(kagg_tracedat__open(fx->path, NULL));
	assert_int_equal(errno, EINVAL);
	f = fopen(fx->path, "w");
	fwrite("\x17\x08\x44tracing7\0\0\x08\0\x10\0\0", 1, 16, f);
	fclose(f);
	assert_null(kagg_tracedat__open(fx->path, NULL));
	assert_int_equal(errno, ENOTSUP);
	assert_null(kagg_tracedat__open("/nonexistent.dat", NULL));
	assert_int_equal(errno, ENOENT);
}

/* ------------------------------------------------------------ writing safely */

/* One page of sched_switch records (from the fixture's buffer); its event count. */
static int one_page(struct fixture *fx, uint8_t *page)
{
	struct kagg_rb_page_iter it = { .sz = sizeof(it) };
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	int n = 0;

	fill(fx, 40, 0, 8, 0);
	assert_true(kagg_rb__read_page(fx->rb, 0, page, PS) > 0);
	assert_int_equal(kagg_rb_page_iter__init(&it, page, PS), 0);
	while (!kagg_rb_page_iter__next(&it, &ev))
		n++;
	assert_true(n > 0);
	return n;
}

/* Events our reader finds in path, -1 when it cannot open it. */
static long count_events(const char *path)
{
	struct kagg_tracedat *t = kagg_tracedat__open(path, NULL);
	struct kagg_rb_event ev = { .sz = sizeof(ev) };
	long n = 0;

	if (!t)
		return -1;
	while (!kagg_tracedat__next(t, &ev))
		n++;
	kagg_tracedat__free(t);
	return n;
}

/* Entries of fx->dir other than trace.dat. */
static int others(struct fixture *fx)
{
	char cmd[128], *out, *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls -A %s | grep -vx trace.dat", fx->dir);
	out = run(cmd);
	for (p = out; p && (p = strchr(p, '\n')); p++)
		n++;
	if (n)
		printf("left beside trace.dat: %s", out);
	free(out);
	return n;
}

/*
 * A writer killed (SIGKILL) after 150 pages on CPU 0 (its region moved
 * twice) and 3 on CPU 1 leaves at path a trace.dat holding all of them and
 * the comms, read alike by our reader, kbuffer through the layout walk,
 * and trace-cmd; nothing else is left.
 */
static void test_killed_writer_leaves_what_was_added(void **state)
{
	struct fixture *fx = *state;
	uint8_t page[PS];
	int per_page = one_page(fx, page), st, i;
	pid_t pid = fork();

	if (pid == 0) {
		FX_WRITER_OPTS(wo, fx, .trace_clock = "mono");
		struct kagg_tracedat_writer *w = kagg_tracedat_writer__new(fx->path, &wo);

		if (!w)
			_exit(2);
		for (i = 0; i < 150; i++)
			if (kagg_tracedat_writer__add_page(w, 0, page, PS))
				_exit(3);
		for (i = 0; i < 3; i++)
			if (kagg_tracedat_writer__add_page(w, 1, page, PS))
				_exit(4);
		for (i = 1001; i <= 1003; i++) {
			char c[16];

			comm_of(i, c);
			if (kagg_tracedat_writer__add_cmdline(w, i, c))
				_exit(5);
		}
		raise(SIGKILL);
		_exit(6);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	printf("  killed writer: %d events per page, the file holds %ld\n", per_page,
	       count_events(fx->path));
	assert_int_equal(count_events(fx->path), 153L * per_page);
	{
		struct kagg_tracedat *t = kagg_tracedat__open(fx->path, NULL);

		assert_non_null(t);
		assert_string_equal(kagg_tracedat__comm(t, 1002), "worker-1002");
		kagg_tracedat__free(t);
	}
	assert_int_equal(others(fx), 0);
	if (have_trace_cmd()) {
		char cmd[256], *out;

		snprintf(cmd, sizeof(cmd),
			 "trace-cmd report -N -i %s 2>&1 | grep -c sched_switch:", fx->path);
		out = run(cmd);
		printf("  trace-cmd report: %s", out);
		assert_int_equal(atol(out), 153L * per_page);
		free(out);
	}
}

/* __finish() after regions moved: the compact file, CPU blocks back to back, no holes. */
static void test_finished_file_is_compact(void **state)
{
	struct fixture *fx = *state;
	FX_WRITER_OPTS(wo, fx);
	struct kagg_tracedat_writer *w;
	struct kagg_tracedat *t;
	uint8_t page[PS];
	int per_page = one_page(fx, page), i;
	uint64_t off0, size0, off1, size1;
	struct stat sb;

	w = kagg_tracedat_writer__new(fx->path, &wo);
	assert_non_null(w);
	for (i = 0; i < 130; i++)
		assert_int_equal(kagg_tracedat_writer__add_page(w, i % 7 ? 0 : 1, page, PS), 0);
	assert_int_equal(kagg_tracedat_writer__finish(w), 0);
	kagg_tracedat_writer__free(w);
	assert_int_equal(count_events(fx->path), 130L * per_page);
	t = kagg_tracedat__open(fx->path, NULL);
	assert_non_null(t);
	kagg_tracedat__cpu_data(t, 0, &off0, &size0);
	kagg_tracedat__cpu_data(t, 1, &off1, &size1);
	kagg_tracedat__free(t);
	assert_int_equal(stat(fx->path, &sb), 0);
	printf("  130 pages: CPU 0 at %llu (%llu), CPU 1 at %llu (%llu), file %lld bytes\n",
	       (unsigned long long)off0, (unsigned long long)size0, (unsigned long long)off1,
	       (unsigned long long)size1, (long long)sb.st_size);
	assert_int_equal(size0 + size1, 130 * PS);
	assert_int_equal(off1, off0 + size0);
	assert_int_equal((uint64_t)sb.st_size, off1 + size1);
	assert_true(off0 < 64 * 1024); /* no cmdlines reservation left */
	assert_int_equal(others(fx), 0);
}

/*
 * An existing file is replaced only by a recording: not at __new(), not
 * when freed before any page (the working file, unnamed, goes, nothing
 * else, and was never seen beside it), and at __finish() by a file with its
 * mode.
 */
static void test_existing_file_replaced_only_by_a_recording(void **state)
{
	struct fixture *fx = *state;
	FX_WRITER_OPTS(wo, fx);
	struct kagg_tracedat_writer *w;
	struct stat sb;
	size_t len;
	char *out;
	FILE *f = fopen(fx->path, "w");

	assert_non_null(f);
	fputs("precious\n", f);
	fclose(f);
	assert_int_equal(chmod(fx->path, 0640), 0);
	w = kagg_tracedat_writer__new(fx->path, &wo);
	assert_non_null(w);
	out = (char *)slurp(fx->path, &len);
	assert_memory_equal(out, "precious\n", 9);
	free(out);
	assert_int_equal(others(fx), 0); /* the working file has no name (O_TMPFILE) */
	kagg_tracedat_writer__free(w);
	out = (char *)slurp(fx->path, &len);
	assert_memory_equal(out, "precious\n", 9);
	free(out);
	assert_int_equal(others(fx), 0);

	w = kagg_tracedat_writer__new(fx->path, &wo);
	assert_non_null(w);
	assert_int_equal(kagg_tracedat_writer__finish(w), 0);
	kagg_tracedat_writer__free(w);
	assert_int_equal(count_events(fx->path), 0);
	assert_int_equal(stat(fx->path, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0640);
	assert_int_equal(others(fx), 0);
}

/*
 * A path that is not a regular file gets the whole file at __finish(): a
 * pipe through /proc/self/fd.  When the spool for its pages cannot be
 * made, __new() fails and touches nothing.
 */
static void test_stream_target(void **state)
{
	struct fixture *fx = *state;
	FX_WRITER_OPTS(wo, fx);
	struct kagg_tracedat_writer *w;
	char path[64], *buf;
	uint8_t page[PS];
	int per_page = one_page(fx, page), p[2], i;
	ssize_t n;
	size_t len = 0;
	FILE *f;

	assert_int_equal(pipe(p), 0);
	fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
	wo.tmp_dir = "/nonexistent-kagg-dir";
	errno = 0;
	assert_null(kagg_tracedat_writer__new(path, &wo));
	assert_int_equal(errno, ENOENT);
	wo.tmp_dir = NULL;
	w = kagg_tracedat_writer__new(path, &wo);
	assert_non_null(w);
	for (i = 0; i < 3; i++)
		assert_int_equal(kagg_tracedat_writer__add_page(w, i & 1, page, PS), 0);
	assert_int_equal(kagg_tracedat_writer__finish(w), 0);
	kagg_tracedat_writer__free(w);
	close(p[1]);
	buf = malloc(1 << 20);
	assert_non_null(buf);
	while ((n = read(p[0], buf + len, (1 << 20) - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	f = fopen(fx->path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
	printf("  through a pipe: %zu bytes\n", len);
	assert_int_equal(count_events(fx->path), 3L * per_page);
}

static void test_truncated_file_is_rejected(void **state)
{
	struct fixture *fx = *state;
	size_t len, cut;
	uint8_t *buf;

	fill(fx, 100, 100, 64, 0);
	write_file(fx, "mono");
	buf = slurp(fx->path, &len);
	/* every cut inside the header fails cleanly; a cut in the pages too */
	for (cut = 16; cut < len; cut += (cut < 2048 ? 37 : PS)) {
		FILE *f = fopen(fx->path, "w");
		struct kagg_tracedat *t;

		fwrite(buf, 1, cut, f);
		fclose(f);
		t = kagg_tracedat__open(fx->path, NULL);
		if (t) {
			printf("cut at %zu of %zu opened\n", cut, len);
			kagg_tracedat__free(t);
			fail();
		}
		assert_int_equal(errno, EINVAL);
	}
	free(buf);
}

UU_MAIN(KT_TEST_FIXTURE(test_roundtrip_two_cpus_many_pages_reader),
	KT_TEST_FIXTURE(test_file_decodes_with_libtraceevent_and_kbuffer),
	KT_TEST_FIXTURE(test_trace_cmd_report_lists_the_events),
	KT_TEST_FIXTURE(test_trace_cmd_report_without_clock_option),
	KT_TEST_FIXTURE(test_reads_v6_written_by_trace_cmd),
	KT_TEST_FIXTURE(test_missed_events_page), KT_TEST_FIXTURE(test_empty_file_and_empty_cpu),
	KT_TEST_FIXTURE(test_bad_opts_and_arguments),
	KT_TEST_FIXTURE(test_truncated_file_is_rejected),
	KT_TEST_FIXTURE(test_killed_writer_leaves_what_was_added),
	KT_TEST_FIXTURE(test_finished_file_is_compact),
	KT_TEST_FIXTURE(test_existing_file_replaced_only_by_a_recording),
	KT_TEST_FIXTURE(test_stream_target))
