// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A writer with a live reader: what one event costs the writer while a
 * reader on another CPU drains the buffer, as ratios against peers measured
 * in the same run.  Asserts nothing.
 *
 *  ours    kagg_rb__reserve + 64-byte memcpy + kagg_rb__commit, consume mode,
 *          512 x 4 KiB sub-buffers per CPU (2 MiB, as LTTng's channel); the
 *          reader takes full sub-buffers (kagg_rb__read_full_page) and sleeps
 *          in kagg_rb__wait() when none is ready
 *  floor   a minimal single-producer/single-consumer ring of 72-byte records
 *          (clock read + 64 bytes), 2 MiB; the reader copies records out and
 *          publishes its position every 4 KiB, pausing 50 us when empty
 *  lttng   LTTng-UST: a 64-byte tracepoint into a discard-mode channel of
 *          8 x 256 KiB sub-buffers, its own session daemon (private
 *          LTTNG_HOME, run as nobody when we are root), the consumer daemon
 *          writing the trace to a temporary directory
 *  2 writers  ours with writers on CPUs 0 and 1 and one unpinned reader; the
 *          floor the same way (one ring per writer, the reader draining both)
 *
 * The writer runs on CPU 0, the reader on CPU 1, for KAGG_BENCH_SECONDS
 * (default 2) each, in KAGG_BENCH_ROUNDS rounds (default 3) of the five runs
 * back to back (floor, ours, ours with 2 writers, floor with 2 writers,
 * LTTng-UST); each ratio is per round, printed as the median and range.
 * ns/event: the writer thread's CPU time per event it attempted (the
 * machine may be shared: time preempted is not counted); events/s: the sum
 * over writers of attempts per CPU second.  Loss: events the writer could not
 * store / attempts.
 * Loss at equal rates: the writers paced to a rate (events per wall-clock
 * second per writer; they sleep when ahead), LTTng-UST's highest rate with
 * <= 0.1% lost is searched for (bisection between rates that lost and rates
 * that did not, from the unpaced rate down), then ours runs at that rate and
 * its own highest lossless rate is searched for the same way.
 * KAGG_BENCH_RT_READER=1 runs our reader and the floor's at SCHED_FIFO;
 * KAGG_BENCH_RD_PERCENT sets our reader's watermark (default 12%: 62 of 512
 * sub-buffers, about what one LTTng-UST sub-buffer is of its channel).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "bench_rb_live_tp.h"

#include <kagg/ringbuf.h>
#include "bench_time.h"

#define PAYLOAD 64
#define REC (8 + PAYLOAD)
#define RING (2u << 20)

static double seconds = 2;
static bool rt_reader;
static int rd_percent = 12; /* our reader's watermark (see above) */
static volatile int stop;
static double rate; /* events per wall-clock second per writer; 0: unpaced */

struct result {
	double ns;	  /* per event attempted, per writer */
	double rate;	  /* events attempted per second, all writers */
	double wall_rate; /* events attempted per wall-clock second, all writers */
	uint64_t attempts, lost;
	double rd_ns;	     /* reader CPU time per event read (ours) */
	double ev_per_sleep; /* events read per reader sleep (ours) */
	const char *note;
};

static void reader_setup(int cpu)
{
	struct sched_param sp = { .sched_priority = 1 };

	pin(cpu);
	if (rt_reader && pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		fprintf(stderr, "bench_rb_live: SCHED_FIFO reader refused: %s\n", strerror(errno));
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

/* A paced writer that has attempted `done` events since t0 (now_ns()) sleeps while ahead. */
static void pace(double t0, uint64_t done)
{
	double ahead;

	if (rate <= 0)
		return;
	ahead = t0 + (double)done / rate * 1e9 - now_ns();
	if (ahead > 1000)
		sleep_s(ahead / 1e9);
}

/* A writer's first steps, the same for every peer: its payload, its CPU, its clock. */
static double writer_start(int cpu, uint8_t msg[PAYLOAD])
{
	memset(msg, 0xab, PAYLOAD);
	pin(cpu);
	return thread_ns();
}

/* ------------------------------------------------------------------ ours */

struct ours {
	struct kagg_rb *rb;
	int cpu;
	uint64_t attempts, ok;
	double ns;
	pthread_t th;
};

/*
 * The counts stay in registers until the end: two writers' structs side by
 * side would share a cache line, and a store per event to it would cost
 * each writer what the ring buffer does not.
 */
static void *ours_writer(void *arg)
{
	struct ours *w = arg;
	struct kagg_rb_rsv rsv = { .sz = sizeof(rsv) };
	uint64_t attempts = 0, ok = 0;
	uint8_t msg[PAYLOAD];
	double t0, w0;

	t0 = writer_start(w->cpu, msg);
	w0 = now_ns();
	while (!stop) {
		int i;

		for (i = 0; i < 256; i++) {
			void *p = kagg_rb__reserve_cpu(w->rb, w->cpu, PAYLOAD, &rsv);

			if (p) {
				memcpy(p, msg, PAYLOAD);
				kagg_rb__commit(&rsv);
				ok++;
			}
		}
		attempts += 256;
		pace(w0, attempts);
	}
	w->ns = thread_ns() - t0;
	w->attempts = attempts;
	w->ok = ok;
	return NULL;
}

struct ours_rd {
	struct kagg_rb *rb;
	int cpu, rd_cpu;	/* cpu < 0: every CPU buffer */
	uint64_t pages, sleeps; /* sleeps: kagg_rb__wait calls, each at most one writer wake */
	double busy; /* reader thread CPU time (a clock read per drain would cost more) */
	pthread_t th;
};

static void *ours_reader(void *arg)
{
	struct ours_rd *r = arg;
	size_t sz = kagg_rb__subbuf_size(r->rb);
	uint8_t *page = malloc(sz);
	int lo = r->cpu < 0 ? 0 : r->cpu, hi = r->cpu < 0 ? 2 : r->cpu + 1;

	double t0;

	reader_setup(r->rd_cpu);
	t0 = thread_ns();
	while (!stop && page) {
		int c, got = 0;

		for (c = lo; c < hi; c++)
			while (kagg_rb__read_full_page(r->rb, c, page, sz) > 0)
				got++;
		r->pages += got;
		if (!got) {
			kagg_rb__wait(r->rb, r->cpu, rd_percent, 10);
			r->sleeps++;
		}
	}
	r->busy = thread_ns() - t0;
	free(page);
	return NULL;
}

static struct result run_ours(int writers)
{
	KAGG_OPTS(kagg_rb_opts, o, .nr_cpus = 2, .nr_subbufs = 512, .mode = KAGG_RB_CONSUME);
	struct ours w[2] = { 0 };
	struct ours_rd rd = { .cpu = writers == 1 ? 0 : -1, .rd_cpu = writers == 1 ? 1 : -1 };
	struct result res = { 0 };
	double sum = 0;
	int i;

	rd.rb = kagg_rb__new(&o);
	if (!rd.rb) {
		res.note = "kagg_rb__new failed";
		return res;
	}
	stop = 0;
	pthread_create(&rd.th, NULL, ours_reader, &rd);
	for (i = 0; i < writers; i++) {
		w[i].rb = rd.rb;
		w[i].cpu = i;
		pthread_create(&w[i].th, NULL, ours_writer, &w[i]);
	}
	sleep_s(seconds);
	stop = 1;
	for (i = 0; i < writers; i++) {
		pthread_join(w[i].th, NULL);
		res.attempts += w[i].attempts;
		res.lost += w[i].attempts - w[i].ok;
		sum += w[i].ns;
		res.rate += (double)w[i].attempts / w[i].ns * 1e9;
	}
	pthread_join(rd.th, NULL);
	if (res.attempts > res.lost) {
		res.rd_ns = rd.busy / (double)(res.attempts - res.lost);
		res.ev_per_sleep = (double)(res.attempts - res.lost) / (double)(rd.sleeps + 1);
	}
	res.ns = sum / (double)res.attempts;
	res.wall_rate = (double)res.attempts / seconds;
	kagg_rb__free(rd.rb);
	return res;
}

/* ------------------------------------------------------------------ SPSC floor */

/* One line the writer writes, one the reader writes, one read-only: no false sharing. */
struct spsc {
	uint64_t head __attribute__((aligned(64))); /* writer's */
	uint64_t tail_seen;			    /* writer's copy of tail */
	uint64_t attempts, lost;		    /* writer's, stored at the end */
	double ns;
	uint64_t tail __attribute__((aligned(64))); /* reader's, published every 4 KiB */
	uint64_t t, published;			    /* reader's position, and its last tail */
	uint8_t *buf __attribute__((aligned(64)));
	int cpu; /* the writer's */
};

/* One reader for the writers' queues (1 or 2): pinned to CPU 1 with one, unpinned with two. */
struct spsc_rd {
	struct spsc *q[2];
	int writers;
};

static void *spsc_writer(void *arg)
{
	struct spsc *q = arg;
	uint8_t msg[PAYLOAD];
	uint64_t h = 0, attempts = 0, lost = 0;
	double t0;

	t0 = writer_start(q->cpu, msg);
	while (!stop) {
		int i;

		for (i = 0; i < 256; i++) {
			uint64_t ts = mono();
			uint8_t *p;

			if (h + REC - q->tail_seen > RING) {
				q->tail_seen = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
				if (h + REC - q->tail_seen > RING) {
					lost++;
					continue;
				}
			}
			p = q->buf + h % RING;
			memcpy(p, &ts, 8);
			memcpy(p + 8, msg, PAYLOAD);
			h += REC;
			__atomic_store_n(&q->head, h, __ATOMIC_RELEASE);
		}
		attempts += 256;
	}
	q->ns = thread_ns() - t0;
	q->attempts = attempts;
	q->lost = lost;
	return NULL;
}

/* Copy out what q holds; false when it was empty. */
static bool spsc_drain(struct spsc *q)
{
	uint64_t h = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
	uint8_t out[REC];

	if (h == q->t) {
		__atomic_store_n(&q->tail, q->t, __ATOMIC_RELEASE);
		q->published = q->t;
		return false;
	}
	for (; q->t < h; q->t += REC) {
		memcpy(out, q->buf + q->t % RING, REC);
		__asm__ __volatile__("" : : "r"(out) : "memory");
		if (q->t - q->published >= 4096) {
			__atomic_store_n(&q->tail, q->t, __ATOMIC_RELEASE);
			q->published = q->t;
		}
	}
	return true;
}

static void *spsc_reader(void *arg)
{
	struct spsc_rd *r = arg;
	bool got;
	int i;

	reader_setup(r->writers == 1 ? 1 : -1);
	while (!stop) {
		got = false;
		for (i = 0; i < r->writers; i++)
			got |= spsc_drain(r->q[i]);
		if (!got)
			usleep(50);
	}
	return NULL;
}

static struct result run_floor(int writers)
{
	struct spsc_rd rd = { .writers = writers };
	struct result res = { 0 };
	pthread_t wt[2], rt;
	int i;

	for (i = 0; i < writers; i++) {
		rd.q[i] = aligned_alloc(64, sizeof(*rd.q[i]));
		if (!rd.q[i])
			exit(1);
		memset(rd.q[i], 0, sizeof(*rd.q[i]));
		rd.q[i]->cpu = i;
		/* a record that starts near the end runs on past RING: room for it */
		rd.q[i]->buf = malloc(RING + REC);
		if (!rd.q[i]->buf)
			exit(1);
	}
	stop = 0;
	pthread_create(&rt, NULL, spsc_reader, &rd);
	for (i = 0; i < writers; i++)
		pthread_create(&wt[i], NULL, spsc_writer, rd.q[i]);
	sleep_s(seconds);
	stop = 1;
	for (i = 0; i < writers; i++)
		pthread_join(wt[i], NULL);
	pthread_join(rt, NULL);
	for (i = 0; i < writers; i++) {
		res.attempts += rd.q[i]->attempts;
		res.lost += rd.q[i]->lost;
		res.ns += rd.q[i]->ns;
		res.rate += (double)rd.q[i]->attempts / rd.q[i]->ns * 1e9;
		free(rd.q[i]->buf);
		free(rd.q[i]);
	}
	res.ns /= (double)res.attempts;
	return res;
}

/* ------------------------------------------------------------------ LTTng-UST */

/* The traced writer: a fresh process, so liblttng-ust registers with our daemon. */
static int lttng_writer(void)
{
	char msg[PAYLOAD];
	uint64_t n = 0;
	double t0, w0, end;

	memset(msg, 0xab, sizeof(msg));
	pin(0);
	t0 = thread_ns();
	w0 = now_ns();
	end = w0 + seconds * 1e9;
	do {
		int i;

		for (i = 0; i < 256; i++)
			lttng_ust_tracepoint(kagg_bench, ev, msg);
		n += 256;
		pace(w0, n);
	} while (now_ns() < end);
	printf("%llu %.3f\n", (unsigned long long)n, thread_ns() - t0);
	return 0;
}

/* Run argv with our environment; its exit status, -1 when it cannot run. */
static int run(char *const argv[], const char *out_path)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid) {
		int fd =
			open(out_path ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* First number after `key` in file path (0 when absent). */
static uint64_t grep_num(const char *path, const char *key, bool *found)
{
	char line[512];
	uint64_t v = 0;
	FILE *f = fopen(path, "re");

	*found = false;
	while (f && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, key);

		if (p) {
			v += strtoull(p + strlen(key), NULL, 10);
			*found = true;
		}
	}
	if (f)
		fclose(f);
	return v;
}

/* In a child: become nobody if root, start a session daemon, trace, report. */
static int lttng_child(const char *dir, const char *self, int out_fd)
{
	char home[512], trace[512], sock[600], log[600], secs[32], rates[32];
	char *tp_argv[] = { (char *)self, "--lttng-writer", secs, rates, NULL };
	struct passwd *pw = getpwnam("nobody");
	pid_t sd;
	int i, st, pfd[2];
	FILE *f;

	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(trace, sizeof(trace), "%s/trace", dir);
	snprintf(sock, sizeof(sock), "%s/.lttng/client-lttng-sessiond", home);
	snprintf(log, sizeof(log), "%s/lttng.out", dir);
	snprintf(secs, sizeof(secs), "%g", seconds);
	snprintf(rates, sizeof(rates), "%.0f", rate);
	mkdir(home, 0700);
	if (!geteuid()) {
		if (!pw || chown(dir, pw->pw_uid, pw->pw_gid) ||
		    chown(home, pw->pw_uid, pw->pw_gid) || setgid(pw->pw_gid) || setuid(pw->pw_uid))
			return 2;
	}
	setenv("LTTNG_HOME", home, 1);
	setenv("HOME", home, 1);
	setenv("LTTNG_UST_REGISTER_TIMEOUT", "5000", 1);
	sd = fork();
	if (!sd) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 1);
		dup2(fd, 2);
		execlp("lttng-sessiond", "lttng-sessiond", "--no-kernel", NULL);
		_exit(127);
	}
	for (i = 0; i < 500 && access(sock, F_OK); i++)
		usleep(10000);
	{
		char o_trace[600];
		char *create[] = { "lttng", "create", "kagg-bench", o_trace, NULL };
		char *chan[] = { "lttng",
				 "enable-channel",
				 "-u",
				 "c",
				 "--discard",
				 "--subbuf-size=262144",
				 "--num-subbuf=8",
				 NULL };
		char *ev[] = { "lttng", "enable-event", "-u", "-c", "c", "kagg_bench:ev", NULL };
		char *start[] = { "lttng", "start", NULL };
		char *stop_[] = { "lttng", "stop", NULL };
		char *list[] = { "lttng", "list", "kagg-bench", NULL };
		char *destroy[] = { "lttng", "destroy", "kagg-bench", NULL };
		char line[128] = "";
		unsigned long n = 0, lost;
		double ns = 0;
		bool found;
		pid_t tp;

		snprintf(o_trace, sizeof(o_trace), "--output=%s", trace);
		if (access(sock, F_OK) || run(create, log) || run(chan, log) || run(ev, log) ||
		    run(start, log)) {
			kill(sd, SIGTERM);
			waitpid(sd, &st, 0);
			return 3;
		}
		if (pipe(pfd))
			return 3;
		tp = fork();
		if (!tp) {
			dup2(pfd[1], 1);
			execv(self, tp_argv);
			_exit(127);
		}
		close(pfd[1]);
		f = fdopen(pfd[0], "r");
		if (f && fgets(line, sizeof(line), f))
			sscanf(line, "%lu %lf", &n, &ns);
		if (f)
			fclose(f);
		waitpid(tp, &st, 0);
		run(stop_, log);
		run(list, log);
		lost = grep_num(log, "Discarded events:", &found);
		run(destroy, NULL);
		kill(sd, SIGTERM);
		waitpid(sd, &st, 0);
		dprintf(out_fd, "%lu %f %lu %d\n", n, ns, lost, (int)found);
	}
	return 0;
}

static struct result run_lttng(const char *self)
{
	char dir[] = "/tmp/kagg-bench-lttng-XXXXXX", line[256] = "";
	struct result res = { 0 };
	unsigned long n = 0, lost = 0;
	int pfd[2], st, found = 0, rc;
	double ns = 0;
	pid_t pid;
	FILE *f;

	if (!mkdtemp(dir) || pipe(pfd)) {
		res.note = "no temporary directory";
		return res;
	}
	pid = fork();
	if (!pid) {
		close(pfd[0]);
		_exit(lttng_child(dir, self, pfd[1]));
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	if (f && fgets(line, sizeof(line), f))
		sscanf(line, "%lu %lf %lu %d", &n, &ns, &lost, &found);
	if (f)
		fclose(f);
	waitpid(pid, &st, 0);
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	{
		char *rm[] = { "rm", "-rf", dir, NULL };

		run(rm, NULL);
	}
	if (rc || !n) {
		res.note = rc == 2   ? "cannot drop to user nobody"
			   : rc == 3 ? "lttng-sessiond/lttng did not set up a session"
				     : "the traced writer did not run";
		return res;
	}
	res.attempts = n;
	res.lost = lost;
	res.ns = ns / (double)n;
	res.rate = (double)n / ns * 1e9;
	res.wall_rate = (double)n / seconds;
	if (!found)
		res.note = "discarded count not reported";
	return res;
}

/* ------------------------------------------------------------------ equal rates */

/* One run of ours (1 writer) or of LTTng-UST with the writer paced to r events/s. */
static struct result at_rate(bool lttng, const char *self, double r)
{
	struct result res;

	rate = r;
	res = lttng ? run_lttng(self) : run_ours(1);
	rate = 0;
	return res;
}

static bool lossless(const struct result *r)
{
	return r->attempts && r->lost * 1000 <= r->attempts;
}

static double lost_pct(const struct result *r)
{
	return r->attempts ? 100.0 * (double)r->lost / (double)r->attempts : 0;
}

/*
 * The highest rate with <= 0.1% lost, from `top` (the unpaced rate) down:
 * top itself if nothing is lost there, or a rate the writer could not keep
 * up with (the writer is the limit: *bound set),
 * else down by 4x until a rate loses nothing, then 5 geometric bisections.
 * Returns the wall-clock rate the best lossless run achieved (0: none).
 */
static double max_lossless(bool lttng, const char *self, double top, bool *bound)
{
	const char *name = lttng ? "LTTng-UST" : "ours";
	double lo = 0, hi = top, best = 0, r = top;
	struct result res;
	int i;

	*bound = false;
	for (i = 0; i < 12; i++) {
		res = at_rate(lttng, self, r);
		if (!res.attempts)
			return 0;
		printf("  %-9s paced to %7.3f M/s: %7.3f M/s, lost %.3f%%\n", name, r / 1e6,
		       res.wall_rate / 1e6, lost_pct(&res));
		if (lossless(&res)) {
			lo = r;
			if (res.wall_rate > best)
				best = res.wall_rate;
			/* the writer could not keep the pace: as fast as it gets here */
			if (r == top || res.wall_rate < 0.9 * r) {
				*bound = true;
				return best;
			}
		} else {
			hi = r;
		}
		if (!lo) {
			r = hi / 4;
			continue;
		}
		if (hi / lo < 1.1)
			break;
		r = sqrt(lo * hi);
	}
	return best;
}

/*
 * Both at LTTng-UST's highest lossless rate, then ours at its own; ratios of
 * rates from the same run.
 */
static void equal_rates(const char *self, double ours_top, double lt_top)
{
	struct result o, l;
	double lt_max, ours_max;
	bool lt_bound, ours_bound;

	printf("loss at equal rates (1 writer; paced, events per wall-clock second)\n");
	lt_max = max_lossless(true, self, lt_top, &lt_bound);
	if (!lt_max) {
		printf("LTTng-UST lost more than 0.1%% at every rate tried\n");
		return;
	}
	l = at_rate(true, self, lt_max);
	o = at_rate(false, self, lt_max);
	printf("at %.3f M/s (LTTng-UST's highest with <= 0.1%% lost): LTTng-UST lost %.3f%%, "
	       "ours lost %.3f%%\n",
	       lt_max / 1e6, lost_pct(&l), lost_pct(&o));
	ours_max = max_lossless(false, self, ours_top, &ours_bound);
	printf("highest rate with <= 0.1%% lost: ours %.3f M/s%s, LTTng-UST %.3f M/s%s\n",
	       ours_max / 1e6, ours_bound ? " (the writer's limit)" : "", lt_max / 1e6,
	       lt_bound ? " (the writer's limit)" : "");
	if (ours_max > 0)
		printf("%-20s %6.2fx  (highest lossless rate; target >= 2x)\n", "ours/LTTng-UST",
		       ours_max / lt_max);
}

/* ------------------------------------------------------------------ main */

static void print(const char *name, const struct result *r)
{
	if (r->note && !r->attempts) {
		printf("%-22s not measured: %s\n", name, r->note);
		return;
	}
	printf("%-22s %8.1f ns/event  %7.2f M events/s  lost %6.3f%% (%llu of %llu)%s%s\n", name,
	       r->ns, r->rate / 1e6,
	       r->attempts ? 100.0 * (double)r->lost / (double)r->attempts : 0,
	       (unsigned long long)r->lost, (unsigned long long)r->attempts, r->note ? "  " : "",
	       r->note ? r->note : "");
	if (r->rd_ns > 0)
		printf("%-22s %8.1f ns/event of reader CPU time, %.0f events per reader sleep\n",
		       "", r->rd_ns, r->ev_per_sleep);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define MAX_ROUNDS 16

/* One ratio over the rounds. */
struct ratio {
	const char *what, *target;
	double v[MAX_ROUNDS];
	int n;
};

/* Add num/den as this round's value, when both were measured. */
static void ratio_add(struct ratio *r, double num, double den)
{
	if (num > 0 && den > 0)
		r->v[r->n++] = num / den;
}

/*
 * "median (min-max)" of the rounds' values; -1, saying so, when a round
 * measured no figure for it.
 */
static int ratio_print(struct ratio *r, int rounds)
{
	double *v = r->v;
	int n = r->n;

	if (n < rounds) {
		printf("%-20s not measured in %d of %d rounds (see the rounds above)\n", r->what,
		       rounds - n, rounds);
		return -1;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	printf("%-20s %6.2fx  (%.2f-%.2fx over %d rounds; %s)\n", r->what,
	       n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1], n, r->target);
	return 0;
}

int main(int argc, char **argv)
{
	const char *e = getenv("KAGG_BENCH_SECONDS");
	struct ratio r_floor = { "ours/floor", "ns per event; target <= 2x" },
		     r_lt = { "ours/LTTng-UST", "ns per event; target <= 0.5x" },
		     r_two = { "2 writers/1 writer", "events/s; target >= 1.8x" },
		     r_ftwo = { "floor: 2 writers/1",
				"events/s; what this machine allows two writers and a reader" };
	struct result ours, floor_, lt, two, ftwo;
	int rounds = 3, i, bad = 0;
	char self[4096];
	ssize_t n;

	if (e && atof(e) > 0)
		seconds = atof(e);
	if (argc == 4 && !strcmp(argv[1], "--lttng-writer")) {
		seconds = atof(argv[2]);
		rate = atof(argv[3]);
		return lttng_writer();
	}
	rt_reader = (e = getenv("KAGG_BENCH_RT_READER")) && atoi(e) == 1;
	if ((e = getenv("KAGG_BENCH_RD_PERCENT")) && atoi(e) >= 0 && atoi(e) <= 100)
		rd_percent = atoi(e);
	if ((e = getenv("KAGG_BENCH_ROUNDS")) && atoi(e) >= 1)
		rounds = atoi(e) < MAX_ROUNDS ? atoi(e) : MAX_ROUNDS;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "bench_rb_live: cannot find its own executable\n");
		return 1;
	}
	self[n] = '\0';
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("bench_rb_live: not measured: needs 2 CPUs (writer and reader)\n");
		return 1;
	}
	printf("64-byte payloads, writer on CPU 0, reader on CPU 1, %g s each, reader %s, "
	       "our reader's watermark %d%%, %d rounds\n",
	       seconds, rt_reader ? "SCHED_FIFO" : "SCHED_OTHER", rd_percent, rounds);
	/*
	 * Each ratio compares runs made back to back (this machine's speed
	 * drifts within seconds): per round the floor, ours (1 writer), ours
	 * (2 writers), the floor with 2 writers, LTTng-UST; the ratios are per
	 * round, then their median.
	 */
	for (i = 0; i < rounds; i++) {
		printf("round %d\n", i + 1);
		floor_ = run_floor(1);
		ours = run_ours(1);
		two = run_ours(2);
		ftwo = run_floor(2);
		lt = run_lttng(self);
		print("ours (1 writer)", &ours);
		print("ours (2 writers)", &two);
		print("SPSC floor", &floor_);
		print("SPSC floor (2 writers)", &ftwo);
		print("LTTng-UST", &lt);
		ratio_add(&r_floor, ours.ns, floor_.ns);
		ratio_add(&r_lt, ours.ns, lt.ns);
		ratio_add(&r_two, two.rate, ours.rate);
		ratio_add(&r_ftwo, ftwo.rate, floor_.rate);
	}
	bad |= ratio_print(&r_floor, rounds);
	bad |= ratio_print(&r_lt, rounds);
	bad |= ratio_print(&r_two, rounds);
	bad |= ratio_print(&r_ftwo, rounds);
	if (!(e = getenv("KAGG_BENCH_EQUAL_RATES")) || atoi(e) != 0)
		equal_rates(self, ours.wall_rate, lt.wall_rate);
	return bad ? 1 : 0;
}
