// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Streaming throughput: kagg's consumer against a plain libbpf
 * ring_buffer__poll() consumer of the same BPF program (offcpu's streaming
 * program, same ring size, same wakeup policy), under the same load: two
 * threads pinned to CPU 0 bouncing a byte through pipes (two context
 * switches per round trip), the consumer pinned to CPU 1.
 *
 * For each consumer it prints events seen, delivered, dropped, the
 * consumer's CPU time per record, and the highest event rate it can take
 * with zero loss, estimated as 1 s / (consumer CPU per record).  kagg's
 * consumer does more per record than the peer (userspace histogram and a
 * write into the reference ftrace buffer): the ratio says what that costs.
 * The landing step alone (the reference buffer's part of each record, no
 * BPF) is timed in the same rounds: transport plus landing bounds what any
 * consumer that keeps the ftrace-format copy can reach against libbpf.
 * Figures only, as ratios from one run; nothing is asserted.
 *
 * Then one shared ring against one ring per CPU (tests/progs/bench_rings.bpf.c: the
 * same record, an array of ring buffer maps), each drained from the other
 * CPU or, per CPU, on the CPU that wrote it: the BPF cost per event and the
 * consumer's CPU per record of each layout, in the same run.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <kagg/kagg.h>
#include "shared/offcpu.h"
#include "offcpu.skel.h"
#include "bench_rings.skel.h"
#include "stream/bpfrb.h"
#include "bench_time.h"

#define RING_BYTES (1u << 20)

static volatile int stop_load;

struct pp {
	int ab[2], ba[2];
};

static void *pong(void *arg)
{
	struct pp *p = arg;
	char c;

	pin(0);
	while (read(p->ab[0], &c, 1) == 1 && write(p->ba[1], &c, 1) == 1)
		;
	return NULL;
}

static void *ping(void *arg)
{
	struct pp *p = arg;
	char c = 'x';

	pin(0);
	while (!stop_load)
		if (write(p->ab[1], &c, 1) != 1 || read(p->ba[0], &c, 1) != 1)
			break;
	close(p->ab[1]);
	return NULL;
}

struct load {
	struct pp p;
	pthread_t a, b;
};

static void load_start(struct load *l)
{
	stop_load = 0;
	if (pipe(l->p.ab) || pipe(l->p.ba))
		exit(1);
	pthread_create(&l->b, NULL, pong, &l->p);
	pthread_create(&l->a, NULL, ping, &l->p);
}

static void load_stop(struct load *l)
{
	stop_load = 1;
	pthread_join(l->a, NULL);
	pthread_join(l->b, NULL);
	close(l->p.ab[0]);
	close(l->p.ba[0]);
	close(l->p.ba[1]);
}

struct result {
	const char *name;
	unsigned long long seen, delivered, dropped;
	double cpu_s, secs;
	double bpf_ns; /* the streaming program's run time per event while this consumer ran */
};

static void print_result(const struct result *r)
{
	double ns = r->delivered ? r->cpu_s * 1e9 / r->delivered : 0;

	printf("  %-26s seen %9llu  delivered %9llu  dropped %8llu  consumer %5.1f ns/record"
	       "  (max lossless ~%.1f M events/s)  BPF %5.1f ns/event\n",
	       r->name, r->seen, r->delivered, r->dropped, ns, ns > 0 ? 1e3 / ns : 0, r->bpf_ns);
}

/* ---- peer: libbpf ring_buffer__poll on the same program ---- */

static int count_cb(void *ctx, void *data, size_t len)
{
	(*(unsigned long long *)ctx)++;
	return 0;
}

/* The streamed records' counters, both generations, summed over the CPUs. */
static struct kagg_stream_cnt sum_stream_cnt(struct offcpu_bpf *skel)
{
	int n = libbpf_num_possible_cpus(), cpu;
	struct kagg_stream_cnt *vals = calloc(n, sizeof(*vals)), sum = { 0 };
	__u32 g;

	for (g = 0; vals && g < 2; g++)
		if (!bpf_map__lookup_elem(skel->maps.stream_cnt, &g, sizeof(g), vals,
					  sizeof(*vals) * n, 0))
			for (cpu = 0; cpu < n; cpu++) {
				sum.seen += vals[cpu].seen;
				sum.dropped += vals[cpu].dropped;
			}
	free(vals);
	return sum;
}

static void count_rec(void *ctx, const void *data, uint32_t len)
{
	(*(unsigned long long *)ctx)++;
}

/* The same program consumed by libbpf (direct = false) or by kagg's bpfrb transport alone. */
static int run_plain(double secs, bool direct, struct result *r)
{
	unsigned long long delivered = 0;
	struct ring_buffer *rb = NULL;
	struct bpfrb *brb = NULL;
	struct offcpu_bpf *skel;
	struct bpf_link *link;
	struct load l;
	double t0, c0;

	skel = offcpu_bpf__open();
	if (!skel)
		return -1;
	bpf_program__set_autoload(skel->progs.offcpu_tp_btf, false);
	bpf_program__set_autoload(skel->progs.offcpu_raw_tp, false);
	bpf_program__set_autoload(skel->progs.offcpu_stream_raw_tp, false);
	bpf_map__set_max_entries(skel->maps.events, RING_BYTES);
	bpf_map__set_max_entries(skel->maps.start_hash, 1);
	bpf_map__set_autocreate(skel->maps.start_store, false);
	bpf_map__set_max_entries(skel->maps.key_hist, 1);
	bpf_map__set_max_entries(skel->maps.stack_agg, 1);
	bpf_map__set_max_entries(skel->maps.stackmap, 1);
	skel->rodata->wake_mode = KAGG_BPF_WAKE_WATERMARK;
	skel->rodata->wake_bytes = RING_BYTES / 4;
	if (offcpu_bpf__load(skel))
		goto fail;
	if (direct)
		brb = bpfrb__new(bpf_map__fd(skel->maps.events), RING_BYTES);
	else
		rb = ring_buffer__new(bpf_map__fd(skel->maps.events), count_cb, &delivered, NULL);
	if (!rb && !brb)
		goto fail;
	link = bpf_program__attach(skel->progs.offcpu_stream_tp_btf);
	if (!link)
		goto fail;
	skel->bss->armed = 1;
	load_start(&l);
	t0 = now_s();
	c0 = thread_cpu_s();
	while (now_s() - t0 < secs) {
		if (direct) {
			if (!bpfrb__pending(brb))
				bpfrb__wait(brb, 100);
			bpfrb__drain(brb, count_rec, &delivered, NULL);
		} else {
			ring_buffer__poll(rb, 100);
		}
	}
	load_stop(&l);
	skel->bss->armed = 0;
	bpf_link__destroy(link);
	if (direct)
		bpfrb__drain(brb, count_rec, &delivered, NULL);
	else
		while (ring_buffer__consume(rb) > 0)
			;
	r->cpu_s = thread_cpu_s() - c0;
	r->secs = now_s() - t0;
	r->delivered = delivered;
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_prog_get_info_by_fd(bpf_program__fd(skel->progs.offcpu_stream_tp_btf),
					     &info, &len) &&
		    info.run_cnt)
			r->bpf_ns = (double)info.run_time_ns / info.run_cnt;
	}
	{
		struct kagg_stream_cnt sc = sum_stream_cnt(skel);

		r->seen = sc.seen;
		r->dropped = sc.dropped;
	}
	ring_buffer__free(rb);
	bpfrb__free(brb);
	offcpu_bpf__destroy(skel);
	return 0;
fail:
	offcpu_bpf__destroy(skel);
	return -1;
}

/* ---- kagg: the session's consumer ---- */

/* Add one interval's stream counters to r; -1 when the snapshot failed. */
static int kagg_interval(struct kagg_session *s, struct result *r)
{
	struct kagg_snapshot *snap = kagg_session__snapshot(s, KAGG_SNAP_RESET);
	const struct kagg_meta *m;

	if (!snap)
		return -1;
	m = kagg_snapshot__meta(snap);
	r->seen += m->stream_seen;
	r->delivered += m->stream_delivered;
	r->dropped += m->stream_dropped;
	if (m->nr_progs)
		r->bpf_ns = m->progs[0]->ns_per_run;
	kagg_snapshot__free(snap);
	return 0;
}

/*
 * As `kagg offcpu --mode stream -i 1` runs for hours: after two intervals
 * (one per generation: their arrays' page faults, paid once per session, are
 * not the steady rate), one resetting snapshot per second, whose cost
 * (sorting the interval's values for the exact percentiles) is counted with
 * the drain's.
 */
static int run_kagg(double secs, struct result *r)
{
	KAGG_OPTS(kagg_offcpu_opts, o, .mode = KAGG_MODE_STREAM, .stream_bytes = RING_BYTES,
		  .wake = KAGG_WAKE_WATERMARK, .overhead = true);
	struct result warm = { 0 };
	struct kagg_session *s;
	double t0, c0, next;
	struct load l;
	int err = 0, i;

	s = kagg_offcpu__open(&o);
	if (!s || kagg_session__attach(s))
		return -1;
	load_start(&l);
	for (i = 0; i < 2 && !err; i++) {
		for (t0 = now_s(); now_s() - t0 < 1.0;)
			kagg_session__poll(s, 100);
		err = kagg_interval(s, &warm);
	}
	t0 = now_s();
	c0 = thread_cpu_s();
	for (next = t0 + 1.0; !err && now_s() - t0 < secs;) {
		kagg_session__poll(s, 100);
		if (now_s() >= next) {
			err = kagg_interval(s, r);
			next += 1.0;
		}
	}
	load_stop(&l);
	kagg_session__detach(s);
	err = err ?: kagg_interval(s, r);
	r->cpu_s = thread_cpu_s() - c0;
	r->secs = now_s() - t0;
	kagg_session__destroy(s);
	return err;
}

/* ---- the landing step alone ---- */

static uint64_t land_clock_ts;

static uint64_t land_clock(void *ctx)
{
	return land_clock_ts;
}

/*
 * What the full consumer does per record in the reference buffer, and
 * nothing else: reserve the kernel's 64-byte sched_switch event on CPU 0's
 * buffer (the load's CPU), zero it, copy its seven fields at the kernel's
 * offsets, commit; clocked by the record (3 us apart, as at this load's
 * rate), one writing thread, overwrite mode, 128 sub-buffers: as the
 * session's consumer sets the buffer up.  Consumer CPU per record, as the
 * rounds above measure it.
 */
static double run_land(double secs)
{
	struct kagg_rb_opts ro = { .sz = sizeof(ro),
				   .nr_cpus = libbpf_num_possible_cpus(),
				   .nr_subbufs = 128,
				   .mode = KAGG_RB_OVERWRITE,
				   .clock = land_clock,
				   .single_writer = true };
	struct kagg_rb *rb = kagg_rb__new(&ro);
	uint8_t rec[88];
	unsigned long long n = 0;
	double t0, c0, cpu;
	int i;

	if (!rb)
		return 0;
	memset(rec, 0x5a, sizeof(rec));
	land_clock_ts = 1000000000ULL;
	t0 = now_s();
	c0 = thread_cpu_s();
	while (now_s() - t0 < secs) {
		for (i = 0; i < 4096; i++) {
			struct kagg_rb_rsv rsv = { .sz = sizeof(rsv) };
			uint8_t *p;

			land_clock_ts += 3000;
			p = kagg_rb__reserve_cpu(rb, 0, 64, &rsv);
			if (!p)
				continue;
			/* fixed sizes, as scons_land_switch() copies them */
			memset(p, 0, 64);
			memcpy(p + 8, rec, 16);
			memcpy(p + 24, rec + 16, 4);
			memcpy(p + 28, rec + 20, 4);
			memcpy(p + 32, rec + 24, 8);
			memcpy(p + 40, rec + 32, 16);
			memcpy(p + 56, rec + 48, 4);
			memcpy(p + 60, rec + 52, 4);
			kagg_rb__commit(&rsv);
		}
		n += 4096;
	}
	cpu = thread_cpu_s() - c0;
	kagg_rb__free(rb);
	return cpu * 1e9 / n;
}

/* ---- one shared ring vs one ring per CPU ---- */

enum drain { DRAIN_BPFRB, DRAIN_LIBBPF };

struct consumer {
	pthread_t th;
	int cpu;
	enum drain how;
	struct bpfrb *brb[8];
	int nr;
	struct ring_buffer *lrb;
	unsigned long long delivered;
	double cpu_s;
	volatile int *stop;
};

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	double c0;
	long got;
	int i;

	pin(c->cpu);
	c0 = thread_cpu_s();
	for (;;) {
		bool last = *c->stop;

		if (c->how == DRAIN_LIBBPF) {
			ring_buffer__poll(c->lrb, last ? 0 : 50);
		} else {
			got = 0;
			for (i = 0; i < c->nr; i++)
				got += bpfrb__drain(c->brb[i], count_rec, &c->delivered, NULL);
			if (!got && !last)
				bpfrb__wait(c->brb[0], 50);
		}
		if (last)
			break;
	}
	if (c->how == DRAIN_LIBBPF)
		while (ring_buffer__consume(c->lrb) > 0)
			;
	c->cpu_s = thread_cpu_s() - c0;
	return NULL;
}

struct rings_result {
	const char *name;
	unsigned long long seen, delivered, dropped;
	double cpu_s, bpf_ns, secs;
};

/*
 * percpu: the array-of-rings program; local: one consumer per CPU pinned to
 * it, or for the shared ring one consumer on CPU 0 (else one consumer on
 * CPU 1); how: bpfrb or libbpf (shared ring only).
 */
static int run_rings(double secs, bool percpu, bool local, enum drain how, struct rings_result *r)
{
	int ncpu = libbpf_num_possible_cpus(), i, fds[8], nr_cons, err = -1;
	struct consumer cons[8] = {};
	struct bench_rings_bpf *skel;
	struct bpf_link *link = NULL;
	struct bpf_program *prog;
	volatile int stop = 0;
	struct load l;
	double t0;

	if (ncpu > 8)
		return -1;
	for (i = 0; i < 8; i++)
		fds[i] = -1;
	skel = bench_rings_bpf__open();
	if (!skel)
		return -1;
	prog = percpu ? skel->progs.rec_percpu : skel->progs.rec_shared;
	bpf_program__set_autoload(percpu ? skel->progs.rec_shared : skel->progs.rec_percpu, false);
	skel->rodata->wake_bytes = RING_BYTES / 4;
	bpf_map__set_max_entries(skel->maps.shared_ring, percpu ? 4096 : RING_BYTES);
	bpf_map__set_max_entries(skel->maps.cpu_rings, (__u32)ncpu);
	/* the rings exist before the load: the first is the inner map's template */
	for (i = 0; i < ncpu; i++) {
		fds[i] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, RING_BYTES, NULL);
		if (fds[i] < 0)
			goto out;
	}
	if (bpf_map__set_inner_map_fd(skel->maps.cpu_rings, fds[0]) || bench_rings_bpf__load(skel))
		goto out;
	nr_cons = percpu && local ? ncpu : 1;
	for (i = 0; i < nr_cons; i++) {
		cons[i].cpu = percpu && local ? i : (local ? 0 : 1);
		cons[i].how = how;
		cons[i].stop = &stop;
	}
	if (percpu) {
		for (i = 0; i < ncpu; i++) {
			struct consumer *c = &cons[local ? i : 0];

			if (bpf_map_update_elem(bpf_map__fd(skel->maps.cpu_rings), &i, &fds[i], 0))
				goto out;
			c->brb[c->nr] = bpfrb__new(fds[i], RING_BYTES);
			if (!c->brb[c->nr++])
				goto out;
		}
	} else if (how == DRAIN_LIBBPF) {
		cons[0].lrb = ring_buffer__new(bpf_map__fd(skel->maps.shared_ring), count_cb,
					       &cons[0].delivered, NULL);
		if (!cons[0].lrb)
			goto out;
	} else {
		cons[0].brb[0] = bpfrb__new(bpf_map__fd(skel->maps.shared_ring), RING_BYTES);
		if (!cons[0].brb[0])
			goto out;
		cons[0].nr = 1;
	}
	link = bpf_program__attach(prog);
	if (!link)
		goto out;
	for (i = 0; i < nr_cons; i++)
		pthread_create(&cons[i].th, NULL, consumer_main, &cons[i]);
	skel->bss->armed = 1;
	load_start(&l);
	t0 = now_s();
	while (now_s() - t0 < secs)
		usleep(20000);
	load_stop(&l);
	skel->bss->armed = 0;
	r->secs = now_s() - t0;
	stop = 1;
	r->delivered = 0;
	r->cpu_s = 0;
	for (i = 0; i < nr_cons; i++) {
		pthread_join(cons[i].th, NULL);
		r->delivered += cons[i].delivered;
		r->cpu_s += cons[i].cpu_s;
	}
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		struct {
			__u64 seen, dropped;
		} *v = calloc(ncpu, 16);
		__u32 zero = 0;

		if (!bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len) && info.run_cnt)
			r->bpf_ns = (double)info.run_time_ns / info.run_cnt;
		r->seen = r->dropped = 0;
		if (v &&
		    !bpf_map__lookup_elem(skel->maps.cnt, &zero, sizeof(zero), v, 16 * ncpu, 0))
			for (i = 0; i < ncpu; i++) {
				r->seen += v[i].seen;
				r->dropped += v[i].dropped;
			}
		free(v);
	}
	err = 0;
out:
	bpf_link__destroy(link);
	for (i = 0; i < 8; i++) {
		int j;

		for (j = 0; j < cons[i].nr; j++)
			bpfrb__free(cons[i].brb[j]);
		ring_buffer__free(cons[i].lrb);
		if (fds[i] >= 0)
			close(fds[i]);
	}
	bench_rings_bpf__destroy(skel);
	return err;
}

static void bench_rings(double secs, int rounds)
{
	static const struct {
		const char *name;
		bool percpu, local;
		enum drain how;
	} cfg[] = {
		{ "shared ring, bpfrb on CPU 1", false, false, DRAIN_BPFRB },
		{ "shared ring, libbpf on CPU 1", false, false, DRAIN_LIBBPF },
		{ "per-CPU rings, bpfrb on CPU 1", true, false, DRAIN_BPFRB },
		{ "per-CPU rings, bpfrb per CPU", true, true, DRAIN_BPFRB },
		{ "shared ring, bpfrb on CPU 0", false, true, DRAIN_BPFRB },
	};
	double best_bpf[5] = { 0 }, best_ns[5] = { 0 };
	int i, k;

	printf("\none shared BPF ring vs one per CPU (bench_rings.bpf.c, the 88-byte record, "
	       "watermark wakeups, load on CPU 0), %.1f s x %d rounds:\n",
	       secs, rounds);
	for (k = 0; k < rounds; k++) {
		for (i = 0; i < 5; i++) {
			struct rings_result r = { .name = cfg[i].name };
			double ns;

			if (run_rings(secs, cfg[i].percpu, cfg[i].local, cfg[i].how, &r)) {
				printf("  %-30s could not run\n", cfg[i].name);
				continue;
			}
			ns = r.delivered ? r.cpu_s * 1e9 / r.delivered : 0;
			printf("  %-30s seen %8llu delivered %8llu dropped %6llu  BPF %5.1f "
			       "ns/event  "
			       "consumer %5.1f ns/record  load %.0f k events/s\n",
			       r.name, r.seen, r.delivered, r.dropped, r.bpf_ns, ns,
			       r.seen / r.secs / 1e3);
			if (r.bpf_ns > 0 && (!best_bpf[i] || r.bpf_ns < best_bpf[i]))
				best_bpf[i] = r.bpf_ns;
			if (ns > 0 && (!best_ns[i] || ns < best_ns[i]))
				best_ns[i] = ns;
		}
	}
	if (best_bpf[0] > 0 && best_ns[0] > 0) {
		printf("best of %d, as ratios to the shared ring drained by bpfrb from CPU 1:\n",
		       rounds);
		for (i = 1; i < 5; i++)
			if (best_bpf[i] > 0 && best_ns[i] > 0)
				printf("  %-30s BPF cost %.2fx, consumer CPU per record %.2fx\n",
				       cfg[i].name, best_bpf[i] / best_bpf[0],
				       best_ns[i] / best_ns[0]);
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	int rounds = argc > 2 ? atoi(argv[2]) : 3, i;
	/* "kagg": kagg's full consumer alone, for a profiler */
	bool kagg_only = argc > 3 && !strcmp(argv[3], "kagg");
	double best_k = 0, best_l = 0, best_t = 0, best_land = 0;
	int stats_fd, bad = 0;

	if (geteuid()) {
		fprintf(stderr, "bench_stream: needs root\n");
		return 1;
	}
	pin(1);
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	printf("streaming throughput: offcpu's streaming program, %u KiB BPF ring, watermark "
	       "wakeups, load pinned to CPU 0, consumer on CPU 1, %.1f s x %d rounds\n",
	       RING_BYTES >> 10, secs, rounds);
	for (i = 0; i < rounds; i++) {
		struct result k = { .name = "kagg consumer (full)" },
			      t = { .name = "kagg transport (bpfrb)" },
			      l = { .name = "libbpf ring_buffer__poll" };
		double nk, nl, nt, nland;

		if (run_kagg(secs, &k) ||
		    (!kagg_only && (run_plain(secs, true, &t) || run_plain(secs, false, &l)))) {
			fprintf(stderr, "bench_stream: could not load or attach (root? BTF?)\n");
			return 1;
		}
		print_result(&k);
		if (kagg_only)
			continue;
		print_result(&t);
		print_result(&l);
		nland = run_land(secs / 3);
		printf("  %-26s %5.1f ns/record of consumer CPU (no BPF; see run_land())\n",
		       "landing alone", nland);
		if (nland > 0 && (best_land == 0 || nland < best_land))
			best_land = nland;
		nk = k.delivered ? k.cpu_s * 1e9 / k.delivered : 0;
		nt = t.delivered ? t.cpu_s * 1e9 / t.delivered : 0;
		nl = l.delivered ? l.cpu_s * 1e9 / l.delivered : 0;
		if (nt > 0 && (best_t == 0 || nt < best_t))
			best_t = nt;
		if (nk > 0 && (best_k == 0 || nk < best_k))
			best_k = nk;
		if (nl > 0 && (best_l == 0 || nl < best_l))
			best_l = nl;
	}
	if (best_k > 0 && best_l > 0 && best_t > 0) {
		printf("max lossless event rate vs libbpf (best of %d rounds):\n", rounds);
		printf("  kagg transport alone (same counting callback): %.2fx\n", best_l / best_t);
		printf("  kagg full consumer (userspace histogram + ftrace buffer write): %.2fx "
		       "(target >= 1.2x)\n",
		       best_l / best_k);
		/*
		 * The bound the full consumer cannot pass: it both transports and
		 * lands every record, whose costs add up before any histogram.
		 */
		if (best_land > 0)
			printf("  landing in the reference buffer alone: %.2fx; transport + "
			       "landing, "
			       "nothing else: at most %.2fx\n",
			       best_l / best_land, best_l / (best_t + best_land));
	}
	if (!kagg_only && !(best_k > 0 && best_l > 0 && best_t > 0 && best_land > 0)) {
		printf("bench_stream: not measured: no round delivered a record to%s%s%s%s\n",
		       best_k > 0 ? "" : " the full consumer", best_t > 0 ? "" : " the transport",
		       best_l > 0 ? "" : " libbpf", best_land > 0 ? "" : " the landing step");
		bad = 1;
	}
	if (!kagg_only)
		bench_rings(secs, rounds);
	if (stats_fd >= 0)
		close(stats_fd);
	return bad;
}
