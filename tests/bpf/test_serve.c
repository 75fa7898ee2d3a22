// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Root tests of kagg serve against a real Prometheus: two kagg serve
 * instances, each running offcpu on its own cgroup where a child sleeps a
 * known number of times for 50 ms, scraped every second by a prometheus
 * started on loopback with a generated config; Prometheus' HTTP API then
 * sees each instance's count in the 50 ms bucket, their sum by le, the
 * median in that bucket, and counters that never reset over 10+ scrapes. The
 * same again with native histograms (offcpu's exp:3 buckets, Prometheus with
 * --enable-feature=native-histograms), checked on kagg_offcpu_nanoseconds and
 * against the classic series next to it.
 * A program of the SDK (--prog, tests/progs/sdk_keys.bpf.c): its key's enum, string,
 * pid, cgroup id and kernel stack are Prometheus labels by name, with the count of
 * getppid() calls the test made.
 * Also: bad tool lines fail with the tool's own error, a taken port fails
 * first, SIGINT/SIGTERM leave nothing loaded.  Hardening: 500 slow-header
 * clients from one address leave scrapes from another unharmed, a request
 * not answered within --request-timeout is cut however busy its client,
 * keep-alive, oversized requests answered 414/431, a stop within 1 s at the
 * connection limit with the longest timeouts, --listen checked and port 0
 * reported, every tool --help lists served.
 *
 * test_hostile_comm: a process renames itself to bytes that are no UTF-8 and controls
 * under offcpu -P: promtool accepts /metrics, and a Prometheus scraping OpenMetrics and one
 * scraping protobuf both keep the target up, each with the name as U+FFFD.
 * test_quantile_jump: a workload whose off-CPU times jump into a new bucket mid-run; every
 * le bucket is there from the first scrape, and histogram_quantile over increase() of the
 * classic buckets lands within one bucket of kagg's own percentile, p50 to p99.9, at every
 * scrape of the run, the one where the new bucket first counts included.
 * test_comm_cgroup_labels: children renamed by prctl and one in a test-made cgroup, under
 * syscount -N / --per-cgroup, offcpu -N and runqlat --per-cgroup: the comm="..." and
 * cgroup="/path" series count their getppid() calls exactly and their sleeps.
 */
#include <libgen.h>
#include <setjmp.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <dirent.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <kagg/kagg.h>
#include "testutil.h"
#include "census.h"

#define PROMETHEUS "/usr/bin/prometheus"
#define SKIP_UNLESS_PROMETHEUS()                                                         \
	do {                                                                             \
		TU_SKIP_UNLESS_ROOT();                                                   \
		if (access(PROMETHEUS, X_OK)) {                                          \
			printf("SKIP %s: no %s (Debian package prometheus)\n", __func__, \
			       PROMETHEUS);                                              \
			skip();                                                          \
		}                                                                        \
	} while (0)
/*
 * offcpu in ns: a 50 ms sleep lands in log2 slot 25, [33554432, 67108863] ns, or above when
 * the machine is loaded: at least 50 ms, never at or below LE_LOW.
 */
#define LE_LOW "0.033554431"
#define LE_HIGH "+Inf"

/* GET path from 127.0.0.1:port; the body (malloc'd) or NULL. */
static char *http_get(int port, const char *path)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	char req[4096], *all, *body;
	struct timeval tv = { 10, 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return NULL;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); /* and connect's */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return NULL;
	}
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return NULL;
	}
	all = tu_read_all(fd);
	close(fd);
	if (!all || strncmp(all, "HTTP/1.", 7) || strncmp(all + 9, "200", 3)) {
		free(all);
		return NULL;
	}
	body = strstr(all, "\r\n\r\n");
	body = body ? strdup(body + 4) : NULL;
	free(all);
	return body;
}

/* The body of Prometheus' answer to the instant query q at time t (0: now); NULL on error. */
static char *prom_api(int port, const char *q, double t)
{
	char path[4096], *o = path;
	const char *p;

	o += sprintf(o, "/api/v1/query?query=");
	for (p = q; *p && o < path + sizeof(path) - 64; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == '_' || *p == '.')
			*o++ = *p;
		else
			o += sprintf(o, "%%%02X", (unsigned char)*p);
	}
	if (t > 0)
		sprintf(o, "&time=%.3f", t);
	else
		*o = 0;
	return http_get(port, path);
}

/* Prometheus instant query q at time t (0: now): the one sample's value, NAN when none. */
static double prom_query(int port, const char *q, double t)
{
	char *body = prom_api(port, q, t), *v;
	double r = NAN;

	if (!body)
		return NAN;
	v = strstr(body, "\"value\":[");
	if (v && (v = strchr(v + 9, ',')) && v[1] == '"')
		r = strtod(v + 2, NULL);
	free(body);
	return r;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait up to secs for GET path on port to answer 200. */
static bool wait_http(int port, const char *path, int secs)
{
	int i;

	for (i = 0; i < secs * 10; i++) {
		char *b = http_get(port, path);

		free(b);
		if (b)
			return true;
		tu_sleep_ms(100);
	}
	return false;
}

/* Three ports that look free, from the pid. */
static int base_port(void)
{
	return 20000 + (getpid() % 15000) * 3;
}

/*
 * prometheus scraping 127.0.0.1:t1 and :t2 (t2 0: none) every secs seconds (the scrape's
 * timeout too), flag: a --enable-feature or NULL.
 */
static pid_t start_prometheus_every(const char *dir, int port, int t1, int t2, const char *flag,
				    int secs)
{
	char cfg[512], data[512], cfgopt[600], dataopt[600], listen[64];
	FILE *f;
	pid_t pid;

	snprintf(cfg, sizeof(cfg), "%s/prometheus.yml", dir);
	snprintf(data, sizeof(data), "%s/data", dir);
	f = fopen(cfg, "w");
	if (!f)
		return -1;
	fprintf(f,
		"global:\n  scrape_interval: %ds\n  scrape_timeout: %ds\n"
		"scrape_configs:\n  - job_name: kagg\n    static_configs:\n"
		"      - targets: ['127.0.0.1:%d'",
		secs, secs, t1);
	if (t2)
		fprintf(f, ", '127.0.0.1:%d'", t2);
	fprintf(f, "]\n");
	fclose(f);
	snprintf(cfgopt, sizeof(cfgopt), "--config.file=%s", cfg);
	snprintf(dataopt, sizeof(dataopt), "--storage.tsdb.path=%s", data);
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", port);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(PROMETHEUS, PROMETHEUS, cfgopt, dataopt, listen, "--log.level=error",
		      flag ? flag : "--web.enable-lifecycle", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* prometheus scraping 127.0.0.1:t1 and :t2 (t2 0: none) every second. */
static pid_t start_prometheus(const char *dir, int port, int t1, int t2, const char *flag)
{
	return start_prometheus_every(dir, port, t1, t2, flag, 1);
}

/*
 * The processes a test started and has not reaped yet: a failed assertion leaves the test
 * at once, and its teardown (stop_tracked) ends them, so that the next test finds no
 * prometheus or kagg serve of this one on its ports.
 */
static pid_t tracked[8];

static pid_t track(pid_t pid)
{
	size_t i;

	for (i = 0; pid > 0 && i < TU_NR(tracked); i++)
		if (!tracked[i]) {
			tracked[i] = pid;
			break;
		}
	return pid;
}

/* pid is reaped by the test itself from here on. */
static void untrack(pid_t pid)
{
	size_t i;

	for (i = 0; i < TU_NR(tracked); i++)
		if (tracked[i] == pid)
			tracked[i] = 0;
}

/* Send sig to pid (a tracked child), wait for it: 10 s, then SIGKILL. */
static void stop_child(pid_t pid, int sig)
{
	int i;

	untrack(pid);
	kill(pid, sig);
	for (i = 0; i < 100; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return;
		tu_sleep_ms(100);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A test's teardown: whatever it started and did not reap. */
static int stop_tracked(void **state)
{
	size_t i;

	for (i = 0; i < TU_NR(tracked); i++)
		if (tracked[i])
			stop_child(tracked[i], SIGTERM);
	return 0;
}

/* tu_kagg_start(), the kagg tracked until kagg_finish(): a failed test does not leave it. */
static struct tu_kagg kagg_start(char *const argv[])
{
	struct tu_kagg k = tu_kagg_start(argv);

	track(k.pid);
	return k;
}

static int kagg_finish(struct tu_kagg *k, char **out, char **err)
{
	untrack(k->pid);
	return tu_kagg_finish(k, out, err);
}

/* The exp:3 boundary 2^(200/8) ns = 2^25 ns: a 50 ms sleep is above it, as in log2 slot 25. */
#define NATIVE_LOW "33554432"
#define LE_LOW_EXP "0.033554432" /* the same boundary as the classic le of exp:3 buckets */

/* What Prometheus holds for some of the offcpu series, at one evaluation time. */
struct inst_result {
	double low, high; /* classic: the cumulative buckets at the boundary and +Inf */
	double above;	  /* classic: high - low, the intervals of 33.5 ms and more */
	double count;	  /* classic _count */
	double sum;	  /* classic _sum (s) */
	double n_above, n_count, n_sum; /* native mode: the same from the native histogram (ns) */
	double lost;			/* drops, every cause (the tool's, not only its cgroup's) */
};

/* A count computed in floats (a fraction times a count) back to the integer it is; NAN kept. */
static double to_count(double x)
{
	return isnan(x) ? x : (double)(int64_t)(x + 0.5);
}

/*
 * Read the series matching sel (one instance, or the job: both summed), at time t. The
 * classic ones as `sum by (le)`, the native one (native: also read) as histogram_count of the
 * sum, histogram_sum, and histogram_fraction above the boundary times the count: the boundary
 * is a bucket boundary, so that is the count of the buckets above it (up to rounding).
 */
static void read_inst(int pport, const char *sel, bool native, double t, struct inst_result *r)
{
	const char *le = native ? LE_LOW_EXP : LE_LOW;
	char q[1024], h[300];

	snprintf(q, sizeof(q), "sum by (le) (kagg_offcpu_seconds_bucket{%s,le=\"%s\"})", sel, le);
	r->low = prom_query(pport, q, t);
	snprintf(q, sizeof(q), "sum by (le) (kagg_offcpu_seconds_bucket{%s,le=\"%s\"})", sel,
		 LE_HIGH);
	r->high = prom_query(pport, q, t);
	r->above = r->high - r->low;
	snprintf(q, sizeof(q), "sum(kagg_offcpu_seconds_count{%s})", sel);
	r->count = prom_query(pport, q, t);
	snprintf(q, sizeof(q), "sum(kagg_offcpu_seconds_sum{%s})", sel);
	r->sum = prom_query(pport, q, t);
	snprintf(q, sizeof(q), "sum(kagg_drops_total{%s})", sel);
	r->lost = prom_query(pport, q, t);
	if (!native)
		return;
	snprintf(h, sizeof(h), "sum(kagg_offcpu_nanoseconds{%s})", sel);
	snprintf(q, sizeof(q), "histogram_count(%s)", h);
	r->n_count = prom_query(pport, q, t);
	snprintf(q, sizeof(q), "histogram_sum(%s)", h);
	r->n_sum = prom_query(pport, q, t);
	snprintf(q, sizeof(q), "histogram_count(%s) * histogram_fraction(%s, +Inf, %s)", h,
		 NATIVE_LOW, h);
	r->n_above = to_count(prom_query(pport, q, t));
}

/* The sleeps the mode counts: in the native histogram, or in the classic buckets. */
static double sleeps_seen(const struct inst_result *r, bool native)
{
	return native ? r->n_above : r->above;
}

/* Two floats that should be one sum computed in two orders. */
static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fabs(a) + 1e-9;
}

/* The index i of the exp:3 bucket (2^((i-1)/8), 2^(i/8)] ns that holds ns, walked up from 1 ns. */
static int exp3_bucket(double ns)
{
	double hi = 1;
	int i = 0;

	while (hi * (1 + 1e-9) < ns)
		hi *= 1.0905077326652577, i++; /* 2^(1/8) */
	return i;
}

/*
 * Two kagg serve instances, offcpu on a cgroup each, scraped every second by one prometheus;
 * a child in each cgroup sleeps 20 and 12 times for 50 ms. native: offcpu counts in exp:3
 * buckets and prometheus runs with --enable-feature=native-histograms, so it asks for the
 * protobuf format and gets kagg_offcpu_nanoseconds next to the classic kagg_offcpu_seconds;
 * the checks are then made on the native series, and the classic ones must agree with them.
 */
static void two_serves(bool native)
{
	struct tu_sleeps wa = { .count = 20, .ms = 50 }, wb = { .count = 12, .ms = 50 };
	char root[64], cga[128], cgb[128], dir[] = "/tmp/kagg-serve-test-XXXXXX", cmd[600];
	char la[64], lb[64], toola[200], toolb[200], sa[96], sb[96];
	const char *job = "job=\"kagg\"", *buckets = native ? " --buckets exp:3" : "";
	int port = base_port(), pport = port + 2, i, qb, nqb = 0;
	struct tu_child ca, cb;
	struct tu_kagg ka, kb;
	struct inst_result ra = { 0 }, rb = { 0 }, rs = { 0 };
	static struct tu_census before;
	double t, q50, nq50 = 0, resets, scrapes, lost_a, lost_b;
	char *err = NULL;
	pid_t prom;

	if (!tu_cgroup2_root(root, sizeof(root))) {
		printf("SKIP %s: no cgroup v2 mount\n", native ? "test_native" : "test_prometheus");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	snprintf(cga, sizeof(cga), "%s/kagg-serve-a-%d", root, getpid());
	snprintf(cgb, sizeof(cgb), "%s/kagg-serve-b-%d", root, getpid());
	assert_true(mkdir(cga, 0755) == 0 || errno == EEXIST);
	assert_true(mkdir(cgb, 0755) == 0 || errno == EEXIST);
	tu_census_take(&before, "offcpu_", "offcpu_");

	snprintf(la, sizeof(la), "127.0.0.1:%d", port);
	snprintf(lb, sizeof(lb), "127.0.0.1:%d", port + 1);
	snprintf(sa, sizeof(sa), "instance=\"%s\"", la);
	snprintf(sb, sizeof(sb), "instance=\"%s\"", lb);
	snprintf(toola, sizeof(toola), "offcpu --cgroup %s%s", cga, buckets);
	snprintf(toolb, sizeof(toolb), "offcpu --cgroup %s%s", cgb, buckets);
	{
		char *aa[] = { "serve", "--listen", la, "--tool", toola, NULL };
		char *ab[] = { "serve", "--listen", lb, "--tool", toolb, NULL };

		ka = kagg_start(aa);
		kb = kagg_start(ab);
	}
	assert_true(ka.pid > 0 && kb.pid > 0);
	assert_true(wait_http(port, "/metrics", 30));
	assert_true(wait_http(port + 1, "/metrics", 30));
	prom = track(start_prometheus(dir, pport, port, port + 1,
				      native ? "--enable-feature=native-histograms" : NULL));
	assert_true(prom > 0);
	assert_true(wait_http(pport, "/-/ready", 60));
	for (i = 0; i < 300 && prom_query(pport, "count(up{job=\"kagg\"} == 1)", 0) != 2; i++)
		tu_sleep_ms(100);
	assert_true(i < 300);

	/* Drops so far: those during the workload are what may excuse a missing sleep. */
	read_inst(pport, sa, native, 0, &ra);
	read_inst(pport, sb, native, 0, &rb);
	lost_a = ra.lost;
	lost_b = rb.lost;
	/* The known workload: 20 and 12 sleeps of 50 ms, one child in each cgroup. */
	ca = tu_spawn(tu_sleeper, &wa);
	cb = tu_spawn(tu_sleeper, &wb);
	assert_int_equal(tu_cgroup_add(cga, ca.pid), 0);
	assert_int_equal(tu_cgroup_add(cgb, cb.pid), 0);
	tu_go(&ca);
	tu_go(&cb);
	assert_int_equal(tu_wait(&ca), 0);
	assert_int_equal(tu_wait(&cb), 0);

	/*
	 * Until Prometheus scraped both after the workload, and 10+ times in all. Every query
	 * of one round is evaluated at one time t, 2 s ago: a sample is stamped with its
	 * scrape's start and stored when the scrape ends (1 s timeout), so by now each has
	 * everything up to t, and none sees a scrape the others missed.
	 */
	for (i = 0; i < 600; i++) {
		t = now_s() - 2;
		read_inst(pport, sa, native, t, &ra);
		read_inst(pport, sb, native, t, &rb);
		ra.lost -= lost_a;
		rb.lost -= lost_b;
		scrapes = prom_query(pport, "min(count_over_time(kagg_events_seen_total[5m]))", t);
		/* All counted, or 60 s for a sleep the kernel made offcpu miss. */
		if (sleeps_seen(&ra, native) >= wa.count && sleeps_seen(&rb, native) >= wb.count &&
		    scrapes >= 10)
			break;
		tu_sleep_ms(100);
	}
	read_inst(pport, job, native, t, &rs);
	q50 = prom_query(pport,
			 "histogram_quantile(0.5, sum by (le) "
			 "(kagg_offcpu_seconds_bucket{job=\"kagg\"}))",
			 t);
	qb = exp3_bucket(q50 * 1e9);
	/*
	 * Prometheus 2.42's resets() counts float samples only (a native histogram's would read
	 * 0 whatever happened), so the native series' counters are read through a subquery of
	 * histogram_count, histogram_sum and the count above the boundary every 500 ms.
	 */
	if (native) {
		nq50 = prom_query(pport, "histogram_quantile(0.5, sum(kagg_offcpu_nanoseconds))",
				  t);
		nqb = exp3_bucket(nq50);
		resets = prom_query(pport,
				    "sum(resets(histogram_count(kagg_offcpu_nanoseconds)"
				    "[5m:500ms])) + "
				    "sum(resets(histogram_sum(kagg_offcpu_nanoseconds)"
				    "[5m:500ms])) + "
				    "sum(resets((histogram_count(kagg_offcpu_nanoseconds) * "
				    "histogram_fraction(" NATIVE_LOW ", +Inf, "
				    "kagg_offcpu_nanoseconds))[5m:500ms])) + "
				    "sum(resets(kagg_events_seen_total[5m]))",
				    t);
	} else {
		resets = prom_query(pport,
				    "sum(resets(kagg_events_seen_total[5m])) + "
				    "sum(resets(kagg_offcpu_seconds_bucket[5m])) + "
				    "sum(resets(kagg_offcpu_seconds_count[5m]))",
				    t);
	}
	printf("  %s, above 33.5 ms: a %g of %d sleeps (%g dropped meanwhile), b %g of %d (%g); "
	       "both %g; p50 %g s",
	       native ? "native" : "classic", sleeps_seen(&ra, native), wa.count, ra.lost,
	       sleeps_seen(&rb, native), wb.count, rb.lost, sleeps_seen(&rs, native), q50);
	if (native)
		printf(" (native %g ns, exp:3 bucket %d, classic's %d); counts a %g (classic %g), "
		       "b %g (%g)",
		       nq50, nqb, qb, ra.n_count, ra.count, rb.n_count, rb.count);
	printf("; %g scrapes; %g resets\n", scrapes, resets);

	stop_child(prom, SIGTERM);
	kill(ka.pid, SIGTERM);
	kill(kb.pid, SIGINT);
	assert_int_equal(kagg_finish(&ka, NULL, &err), 0);
	free(err);
	assert_int_equal(kagg_finish(&kb, NULL, &err), 0);
	free(err);
	tu_assert_nothing_left(&before, "offcpu_", "offcpu_", "two kagg serve");
	rmdir(cga);
	rmdir(cgb);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);

	/*
	 * Each sleep is one off-CPU interval of 50 ms or more; one more interval may land there
	 * (the child's wait for its start); none is lost without a drop counting it (a loaded
	 * machine can make the kernel skip a switch: offcpu's switch_in_missed, kernel_gaps).
	 */
	assert_true(sleeps_seen(&ra, native) + ra.lost >= wa.count &&
		    sleeps_seen(&ra, native) <= wa.count + 1);
	assert_true(sleeps_seen(&rb, native) + rb.lost >= wb.count &&
		    sleeps_seen(&rb, native) <= wb.count + 1);
	/* Across instances, exactly the sum of the two. */
	assert_true(rs.low == ra.low + rb.low);
	assert_true(rs.high == ra.high + rb.high);
	assert_true(rs.count == ra.count + rb.count);
	assert_true(near(rs.sum, ra.sum + rb.sum));
	/* Most sleeps end on time: log2 slot 25, or at worst the one above. */
	assert_true(q50 > 0.033554431 && q50 <= 0.134217727);
	assert_true(scrapes >= 10);
	assert_true(resets == 0);
	if (!native)
		return;
	/* The native series: the sum across instances, as the classic one. */
	assert_true(rs.n_above == ra.n_above + rb.n_above);
	assert_true(rs.n_count == ra.n_count + rb.n_count);
	assert_true(near(rs.n_sum, ra.n_sum + rb.n_sum));
	/* At least half the intervals are sleeps of 50 ms or more: bucket 205, (47.6, 51.9] ms. */
	assert_true(nqb >= exp3_bucket(50e6) && nq50 <= 134217727);
	/*
	 * The classic series come from the very same counts: per instance and summed, equal
	 * counts above the boundary and in all, sums that agree (s against ns), and the median
	 * in the same exp:3 bucket.
	 */
	assert_true(ra.above == ra.n_above && rb.above == rb.n_above && rs.above == rs.n_above);
	assert_true(ra.n_count == ra.count && rb.n_count == rb.count && rs.n_count == rs.count);
	assert_true(fabs(ra.n_sum - ra.sum * 1e9) <= 1e-6 * ra.n_sum + 1);
	assert_true(fabs(rb.n_sum - rb.sum * 1e9) <= 1e-6 * rb.n_sum + 1);
	assert_true(fabs(rs.n_sum - rs.sum * 1e9) <= 1e-6 * rs.n_sum + 1);
	assert_true(nqb == qb);
}

/*
 * test_prometheus, the classic series: each instance's count above 33.5 ms against its
 * workload, the sum by le across instances, the median in the 50 ms bucket, counters that
 * never reset over 10+ scrapes.  test_native: the same with native histograms, which must
 * agree with the classic series.
 */
static void test_two_serves(void **state)
{
	SKIP_UNLESS_PROMETHEUS();
	two_serves(TU_ARG(state));
}

/* Bad tool lines fail with the tool's own error, where the line came from, and no port. */
/* One line of /proc/self/FILE ("comm", "cgroup": the v2 path) into buf. */
static void self_read(const char *file, char *buf, size_t len)
{
	char path[64], line[512] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && strcmp(file, "comm") && strncmp(line, "0::", 3))
		;
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	snprintf(buf, len, "%s", strcmp(file, "comm") ? line + 3 : line);
}

/*
 * kagg serve --prog: tests/progs/sdk_keys.bpf.o counting this process's getppid() calls,
 * scraped by Prometheus: one series, each key field a label by name.
 */
static void test_prog_labels(void **state)
{
	char dir[] = "/tmp/kagg-serve-test-XXXXXX", k[512], line[700], listen[64], q[2048];
	char comm[32], cg[512];
	int port = base_port(), pport = port + 2, i;
	char *argv[] = { "serve", "--listen", listen, "--prog", line, NULL };
	static struct tu_census before;
	struct tu_kagg ka;
	double n = NAN, total;
	char *err = NULL;
	pid_t prom;

	SKIP_UNLESS_PROMETHEUS();
	assert_non_null(mkdtemp(dir));
	self_read("comm", comm, sizeof(comm));
	self_read("cgroup", cg, sizeof(cg));
	snprintf(k, sizeof(k), "%s", tu_kagg());
	snprintf(line, sizeof(line), "%s/bpf/sdk_keys.bpf.o --set target_tgid=%d --set label=hi",
		 dirname(dirname(k)), getpid());
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	tu_census_take(&before, "sdk_", "sdk_");
	ka = kagg_start(argv);
	assert_true(ka.pid > 0);
	assert_true(wait_http(port, "/metrics", 30));
	for (i = 0; i < 7; i++)
		syscall(SYS_getppid);
	prom = track(start_prometheus(dir, pport, port, 0, NULL));
	assert_true(prom > 0);
	assert_true(wait_http(pport, "/-/ready", 60));
	snprintf(q, sizeof(q),
		 "kagg_sdk_keys_value_count{agg=\"sdk_calls\",color=\"SDK_GREEN\","
		 "name=\"hi\",pid=\"%d\",pid_comm=\"%s\",cg=\"%s\",in_port=\"80\","
		 "stack=~\".*;do_syscall_64;.*\"}",
		 getpid(), comm, cg);
	for (i = 0; i < 300 && isnan(n); i++) {
		n = prom_query(pport, q, 0);
		if (isnan(n))
			tu_sleep_ms(100);
	}
	printf("  %s = %g\n", q, n);
	/* one series: the query without labels finds the same */
	total = prom_query(pport, "sum(kagg_sdk_keys_value_count)", 0);
	stop_child(prom, SIGTERM);
	assert_int_equal((int)n, 7);
	assert_int_equal((int)total, 7);
	kill(ka.pid, SIGINT);
	assert_int_equal(kagg_finish(&ka, NULL, &err), 0);
	free(err);
	tu_assert_nothing_left(&before, "sdk_", "sdk_", "kagg serve --prog");
	snprintf(q, sizeof(q), "rm -rf '%s'", dir);
	assert_int_equal(system(q), 0);
}

static void test_errors(void **state)
{
	char conf[] = "/tmp/kagg-serve-conf-XXXXXX", taken[64];
	char longconf[] = "/tmp/kagg-serve-long-XXXXXX", bigconf[] = "/tmp/kagg-serve-big-XXXXXX";
	struct sockaddr_in a = { .sin_family = AF_INET };
	FILE *f;
	socklen_t alen = sizeof(a);
	int fd, sock;

	TU_SKIP_UNLESS_ROOT();
	fd = mkstemp(conf);
	assert_true(fd >= 0);
	assert_true(write(fd, "# tools\nrunqlat\n\noffcpu --bogus\n", 32) == 32);
	close(fd);
	/* a line of 4097 bytes after one of 4096 (a comment), and a file of 1 MiB + 1 */
	fd = mkstemp(longconf);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "#%04095d\nruntqlat %04090d\n", 0, 0);
	fclose(f);
	fd = mkstemp(bigconf);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (1 << 20) + 1), 0);
	close(fd);
	/* A port that is taken: ours. */
	sock = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(sock, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(sock, 1), 0);
	assert_int_equal(getsockname(sock, (struct sockaddr *)&a, &alen), 0);
	snprintf(taken, sizeof(taken), "127.0.0.1:%d", ntohs(a.sin_port));
	{
		const struct tu_error_case cases[] = {
			{ 2,
			  "kagg serve: --tool: kagg runqlat: invalid CPU 'x'",
			  { "serve", "--listen", "127.0.0.1:0", "--tool", "runqlat --cpu x" } },
			{ 2,
			  "kagg serve: --tool: kagg offcpu: invalid option '--nope' (see --help)",
			  { "serve", "--listen", "127.0.0.1:0", "--tool", "offcpu --nope" } },
			{ 2,
			  "'stat' is not a tool kagg serve runs",
			  { "serve", "--listen", "127.0.0.1:0", "--tool", "stat -e cycles" } },
			{ 2,
			  ":4: kagg offcpu: invalid option '--bogus'",
			  { "serve", "--listen", "127.0.0.1:0", "--config", conf } },
			{ 2,
			  "-d, -i and INTERVAL are not for kagg serve",
			  { "serve", "--listen", "127.0.0.1:0", "--tool", "runqlat -d 1" } },
			{ 2, "no tool to serve", { "serve" } },
			{ 2,
			  "port '99999' is not 1 to 65535",
			  { "serve", "--listen", "127.0.0.1:99999", "--tool", "runqlat" } },
			{ 2,
			  "port 'x' is not 1 to 65535",
			  { "serve", "--listen", "127.0.0.1:x", "--tool", "runqlat" } },
			{ 2,
			  "invalid --listen ':9436': no address",
			  { "serve", "--listen", ":9436", "--tool", "runqlat" } },
			{ 2,
			  "invalid --listen '[]:9436': no address",
			  { "serve", "--listen", "[]:9436", "--tool", "runqlat" } },
			{ 2,
			  "'localhost' is not a numeric address",
			  { "serve", "--listen", "localhost:9436", "--tool", "runqlat" } },
			{ 2,
			  "cannot read /tmp: Is a directory",
			  { "serve", "--listen", "127.0.0.1:0", "--config", "/tmp" } },
			{ 2,
			  "cannot read /dev/zero: not a regular file",
			  { "serve", "--listen", "127.0.0.1:0", "--config", "/dev/zero" } },
			{ 2,
			  ":2: line longer than 4096 bytes",
			  { "serve", "--listen", "127.0.0.1:0", "--config", longconf } },
			{ 2,
			  "more than a config file's 1048576",
			  { "serve", "--listen", "127.0.0.1:0", "--config", bigconf } },
			{ 1,
			  "Address already in use",
			  { "serve", "--listen", taken, "--tool", "runqlat" } },
		};

		tu_expect_errors(cases, TU_NR(cases));
	}
	close(sock);
	unlink(conf);
	unlink(longconf);
	unlink(bigconf);
}

/* SIGINT and SIGTERM: exit 0, nothing of the tools left loaded. */
static void test_clean_exit(void **state)
{
	static const int sigs[] = { SIGINT, SIGTERM };
	static struct tu_census before;
	char listen[64], *err = NULL, *m;
	int port = base_port(), i;
	struct tu_kagg k;

	TU_SKIP_UNLESS_ROOT();
	for (i = 0; i < 2; i++) {
		char *argv[] = { "serve",   "--listen", listen,	      "--tool",
				 "runqlat", "--tool",	"runqlat -P", NULL };

		snprintf(listen, sizeof(listen), "127.0.0.1:%d", port + i);
		tu_census_take(&before, "runqlat_", "runqlat_");
		k = kagg_start(argv);
		assert_true(k.pid > 0);
		assert_true(wait_http(port + i, "/metrics", 30));
		m = http_get(port + i, "/metrics");
		assert_non_null(m);
		assert_non_null(strstr(m, "kagg_runqlat_seconds_count{tool_id=\"runqlat -P\""));
		assert_non_null(strstr(m, "kagg_runqlat_seconds_count{tool_id=\"runqlat\""));
		free(m);
		kill(k.pid, sigs[i]);
		assert_int_equal(kagg_finish(&k, NULL, &err), 0);
		printf("  signal %d: %s", sigs[i], err ? err : "");
		free(err);
		tu_assert_nothing_left(&before, "runqlat_", "runqlat_", "kagg serve");
	}
}

/* ------------------------------------------------------------ names, buckets */

/* A comm no output may carry raw: ff fe, c3 28, ESC, BEL, CR, a surrogate (ed a0 80). */
#define HOSTILE_COMM "\xff\xfe\xc3\x28\x1b[31m\x07\r\xed\xa0\x80"
#define R "\xef\xbf\xbd"
#define HOSTILE_LABEL R R R "(" R "[31m" R R R R R
/* The same in a PromQL string, whose lexer takes a raw U+FFFD for a bad byte: escaped. */
#define U "\\ufffd"
#define HOSTILE_PROMQL U U U "(" U "[31m" U U U U U

/*
 * Sleeps 2 ms rounds until stop; once rename is set, renames itself (prctl PR_SET_NAME, the
 * kernel's comm) and counts the rounds after that in done.
 */
struct renamer {
	volatile int stop, rename;
	volatile long done;
};

static void renamer(void *arg)
{
	struct renamer *r = arg;
	bool renamed = false;

	while (!r->stop) {
		if (r->rename && !renamed) {
			prctl(PR_SET_NAME, HOSTILE_COMM);
			renamed = true;
		}
		tu_sleep_ms(2);
		if (renamed)
			r->done++;
	}
}

/* /metrics as the text format into a file of dir; 0 when promtool check metrics accepts it. */
static int promtool_check(const char *dir, const char *metrics)
{
	char path[600], cmd[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/metrics.txt", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(metrics, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
	return system(cmd);
}

/*
 * offcpu -P while a process renames itself to HOSTILE_COMM: /metrics passes promtool with
 * the name as U+FFFD; a Prometheus asking for OpenMetrics and one asking for protobuf
 * (native histograms on) scrape it 5 times and more with up == 1 each time, and both hold
 * the process's series with that comm.  The process runs before the server starts, so that
 * its busy key takes one of the places of the first scrape; it renames itself once the
 * server runs.  Scrapes every 2 s with a 2 s timeout: /metrics holds every process of the
 * machine, and the machine may be busy.
 */
static void test_hostile_comm(void **state)
{
	char dir[] = "/tmp/kagg-serve-names-XXXXXX", dir2[600], listen[64], want[128], q[256];
	int port = tu_free_port(), pp[2] = { tu_free_port(), tu_free_port() }, i, j;
	static struct tu_census before;
	struct renamer *r;
	struct tu_child c;
	struct tu_kagg k;
	char *m = NULL, *err = NULL, cmd[700];
	pid_t prom[2];

	SKIP_UNLESS_PROMETHEUS();
	if (access("/usr/bin/promtool", X_OK)) {
		printf("SKIP %s: no promtool (Debian package prometheus)\n", __func__);
		skip();
	}
	assert_true(port > 0 && pp[0] > 0 && pp[1] > 0 && pp[0] != pp[1]);
	assert_non_null(mkdtemp(dir));
	snprintf(dir2, sizeof(dir2), "%s/native", dir);
	assert_int_equal(mkdir(dir2, 0755), 0);
	tu_census_take(&before, "offcpu_", "offcpu_");
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(r != MAP_FAILED);
	c = tu_spawn(renamer, r);
	assert_true(track(c.pid) > 0);
	tu_go(&c);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	{
		char *argv[] = { "serve",     "--listen",   listen, "--tool",
				 "offcpu -P", "--max-keys", "1000", NULL };

		k = kagg_start(argv);
	}
	assert_true(k.pid > 0);
	assert_true(wait_http(port, "/metrics", 30));
	r->rename = 1;

	/* The process's series with its new name: the whole text passes promtool. */
	snprintf(want, sizeof(want), "pid=\"%d\",comm=\"" HOSTILE_LABEL "\"}", c.pid);
	for (i = 0; i < 300; i++) {
		free(m);
		m = http_get(port, "/metrics");
		if (m && r->done > 10 && strstr(m, want))
			break;
		tu_sleep_ms(100);
	}
	if (promtool_check(dir, m ? m : ""))
		fail_msg("promtool check metrics refused /metrics, in %s/metrics.txt", dir);
	if (i == 300)
		fail_msg("no series of pid %d with comm \"%s\"", c.pid, HOSTILE_LABEL);
	free(m);

	prom[0] = track(start_prometheus_every(dir, pp[0], port, 0, NULL, 2));
	prom[1] = track(start_prometheus_every(dir2, pp[1], port, 0,
					       "--enable-feature=native-histograms", 2));
	assert_true(prom[0] > 0 && prom[1] > 0);
	for (j = 0; j < 2; j++) {
		double scrapes = 0, up_min, series;

		assert_true(wait_http(pp[j], "/-/ready", 60));
		for (i = 0; i < 900; i++) {
			scrapes = prom_query(pp[j], "count_over_time(up{job=\"kagg\"}[10m])", 0);
			if (scrapes >= 5)
				break;
			tu_sleep_ms(100);
		}
		up_min = prom_query(pp[j], "min_over_time(up{job=\"kagg\"}[10m])", 0);
		snprintf(q, sizeof(q),
			 "count(kagg_offcpu_seconds_count{pid=\"%d\",comm=\"" HOSTILE_PROMQL "\"})",
			 c.pid);
		series = prom_query(pp[j], q, 0);
		printf("  prometheus asking for %s: %g scrapes, up at least %g, %g series of the "
		       "renamed process\n",
		       j ? "protobuf" : "OpenMetrics", scrapes, up_min, series);
		if (series != 1) {
			char *body;

			snprintf(q, sizeof(q), "kagg_offcpu_seconds_count{pid=\"%d\"}", c.pid);
			body = prom_api(pp[j], q, 0);
			printf("  its series of pid %d: %s\n", c.pid, body ? body : "(no answer)");
			free(body);
		}
		assert_true(scrapes >= 5);
		assert_true(up_min == 1);
		assert_true(series == 1);
	}
	r->stop = 1;
	untrack(c.pid);
	assert_int_equal(tu_wait(&c), 0);
	munmap(r, sizeof(*r));
	for (j = 0; j < 2; j++)
		stop_child(prom[j], SIGTERM);
	kill(k.pid, SIGTERM);
	assert_int_equal(kagg_finish(&k, NULL, &err), 0);
	free(err);
	tu_assert_nothing_left(&before, "offcpu_", "offcpu_", "kagg serve");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* log2 ns buckets: the first slot k whose le, 2^(k+1) - 1 ns, holds ns. */
static int log2_slot(double ns)
{
	int k = 0;

	while (k < 63 && ns > (double)((2ULL << k) - 1) * (1 + 1e-12))
		k++;
	return k;
}

/* The slot of a log2 bucket's le label (seconds): 2^(k+1) - 1 ns. */
static int le_slot(const char *le)
{
	return !strcmp(le, "+Inf") ? 64 : log2_slot(strtod(le, NULL) * 1e9);
}

/*
 * The classic buckets of query q (an instant vector of _bucket series) at time t, as the
 * log2 histogram h (64 slots, +Inf beyond the last listed in slot 63); the number of le
 * series, -1 on error.
 */
static int prom_buckets(int port, const char *q, double t, struct kagg_hist *h, uint64_t *slots)
{
	uint64_t cum[65] = { 0 };
	bool has[65] = { false };
	char *body = prom_api(port, q, t), *p;
	int n = 0, k, last = -1;

	if (!body)
		return -1;
	for (p = body; (p = strstr(p, "\"le\":\"")); n++) {
		char le[64], *v;
		size_t len;

		p += 6;
		len = strcspn(p, "\"");
		snprintf(le, sizeof(le), "%.*s", (int)len, p);
		v = strstr(p, "\"value\":[");
		if (!v || !(v = strstr(v, ",\""))) {
			free(body);
			return -1;
		}
		k = le_slot(le);
		cum[k] = strtoull(v + 2, NULL, 10);
		has[k] = true;
	}
	free(body);
	memset(h, 0, sizeof(*h));
	memset(slots, 0, 64 * sizeof(*slots));
	h->sz = sizeof(*h);
	h->unit = KAGG_UNIT_NSECS;
	h->slots = slots;
	h->nr_slots = 64;
	for (k = 0; k < 64; k++) {
		uint64_t below = last < 0 ? 0 : cum[last];

		if (!has[k])
			continue;
		slots[k] = cum[k] - below;
		last = k;
	}
	if (has[64] && cum[64] > (last < 0 ? 0 : cum[last]))
		slots[63] += cum[64] - (last < 0 ? 0 : cum[last]);
	h->total = has[64] ? cum[64] : 0;
	return n;
}

/* The scrape times (s) of the series matching sel over the last 10 minutes; their number. */
static int scrape_times(int port, const char *sel, double *ts, int max)
{
	char q[256], *body, *p;
	int n = 0;

	snprintf(q, sizeof(q), "kagg_events_seen_total{%s}[10m]", sel);
	body = prom_api(port, q, 0);
	if (!body)
		return -1;
	p = strstr(body, "\"values\":[");
	for (p = p ? p + 10 : NULL; p && n < max && (p = strstr(p, "[")); p++)
		ts[n++] = strtod(p + 1, NULL);
	free(body);
	return n;
}

/* The workload: it joins its cgroup itself, sleeps fast times, then slow ones. */
struct jump {
	const char *cg;
	int fast, slow;	       /* how many of each */
	long fast_us, slow_us; /* how long each */
};

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void jump_worker(void *arg)
{
	const struct jump *w = arg;
	int i;

	/* from here on: the wait for the go is no interval of the cgroup's */
	if (tu_cgroup_add(w->cg, getpid()))
		_exit(2);
	for (i = 0; i < w->fast; i++)
		sleep_us(w->fast_us);
	for (i = 0; i < w->slow; i++)
		sleep_us(w->slow_us);
}

#define NR_TIMES 1200

/*
 * offcpu on a cgroup where a process sleeps 5 ms 600 times (log2 slot 22: 4.2 to 8.4 ms),
 * then 50 ms 60 times (slot 25: 33.5 to 67.1 ms, a bucket nothing filled before), scraped
 * every second.  Every le bucket, 36 up to 68.7 s and +Inf, is there from the first scrape.
 * At every scrape of the run, the percentiles p50, p90, p99 and p99.9 of the interval since
 * the scrape before the workload, as kagg computes them (kagg_hist__percentile on the
 * buckets' own counts at that scrape) and as Prometheus does
 * (histogram_quantile over increase() of the classic buckets), are at most one bucket apart.
 * At the scrape where slot 25 first counts, p99.9 is one of its 50 ms sleeps (fewer than
 * 1000 values): a bucket series appearing only then would be missing from increase() and
 * put it at the top of the buckets that were there (slot 22 or 23).
 */
static void test_quantile_jump(void **state)
{
	static const double qs[] = { 50, 90, 99, 99.9 };
	struct jump w = { .fast = 600, .slow = 60, .fast_us = 5000, .slow_us = 50000 };
	char root[64], cg[128], dir[] = "/tmp/kagg-serve-jump-XXXXXX", listen[64], tool[200];
	char q[1024], qq[1024], sel[96], cmd[600], *err = NULL;
	int port = tu_free_port(), pport = tu_free_port(), i, j, n, first_n, last_n, checked = 0;
	int jump_at = -1, worst = 0;
	static double ts[NR_TIMES];
	static struct tu_census before;
	uint64_t slots[64], pre[64];
	struct kagg_hist h, hp;
	double t_go, t_done, t_pre = 0;
	struct tu_child c;
	struct tu_kagg k;
	pid_t prom;

	SKIP_UNLESS_PROMETHEUS();
	if (!tu_cgroup2_root(root, sizeof(root))) {
		printf("SKIP %s: no cgroup v2 mount\n", __func__);
		skip();
	}
	assert_true(port > 0 && pport > 0 && port != pport);
	assert_non_null(mkdtemp(dir));
	snprintf(cg, sizeof(cg), "%s/kagg-serve-jump-%d", root, getpid());
	assert_true(mkdir(cg, 0755) == 0 || errno == EEXIST);
	w.cg = cg;
	tu_census_take(&before, "offcpu_", "offcpu_");
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	snprintf(tool, sizeof(tool), "offcpu --cgroup %s", cg);
	snprintf(sel, sizeof(sel), "instance=\"%s\"", listen);
	{
		char *argv[] = { "serve", "--listen", listen, "--tool", tool, NULL };

		k = kagg_start(argv);
	}
	assert_true(k.pid > 0);
	assert_true(wait_http(port, "/metrics", 30));
	prom = track(start_prometheus(dir, pport, port, 0, NULL));
	assert_true(prom > 0);
	assert_true(wait_http(pport, "/-/ready", 60));

	/* Two scrapes before the workload: the first, and one whose counts are all 0. */
	for (i = 0; i < 600 && scrape_times(pport, sel, ts, NR_TIMES) < 2; i++)
		tu_sleep_ms(100);
	assert_true(i < 600);
	c = tu_spawn(jump_worker, &w);
	assert_true(track(c.pid) > 0);
	t_go = now_s();
	tu_go(&c);
	untrack(c.pid);
	assert_int_equal(tu_wait(&c), 0);
	t_done = now_s();
	/* Two scrapes after it. */
	for (i = 0; i < 600; i++) {
		n = scrape_times(pport, sel, ts, NR_TIMES);
		if (n > 2 && ts[n - 2] > t_done + 0.01)
			break;
		tu_sleep_ms(100);
	}
	assert_true(i < 600);
	for (j = 0; j < n && ts[j] < t_go; j++)
		t_pre = ts[j];
	assert_true(t_pre > 0);

	/* Every bucket from the first scrape on, and no other later. */
	snprintf(q, sizeof(q), "kagg_offcpu_seconds_bucket{%s}", sel);
	first_n = prom_buckets(pport, q, ts[0], &h, slots);
	last_n = prom_buckets(pport, q, ts[n - 1], &h, slots);
	printf("  le series: %d at the first scrape, %d at the last; %d scrapes, workload %.2f s\n",
	       first_n, last_n, n, t_done - t_go);

	/* What was counted by the scrape before the workload (nothing, unless it ended late). */
	assert_true(prom_buckets(pport, q, t_pre, &hp, pre) > 0);
	for (j = 0; j < n; j++) {
		uint64_t total;
		double window;
		int qi, s;

		if (ts[j] <= t_pre)
			continue;
		/* kagg's counts since the scrape before the workload, as that scrape left them */
		if (prom_buckets(pport, q, ts[j], &h, slots) < 0)
			fail_msg("no buckets at %.3f", ts[j]);
		for (s = 0; s < 64; s++)
			slots[s] -= pre[s];
		h.total -= hp.total;
		total = h.total;
		if (!total)
			continue;
		if (jump_at < 0 && (slots[24] || slots[25] || slots[26]))
			jump_at = j;
		window = ts[j] - t_pre + 0.5;
		printf("  t+%5.1f s %4llu values, slots 22/25 %4llu/%3llu:", ts[j] - t_pre,
		       (unsigned long long)total, (unsigned long long)slots[22],
		       (unsigned long long)slots[25]);
		for (qi = 0; qi < 4; qi++) {
			double mine, theirs;
			int a, b;

			assert_int_equal(kagg_hist__percentile(&h, qs[qi], &mine, NULL, NULL), 0);
			snprintf(qq, sizeof(qq),
				 "histogram_quantile(%g, sum by (le) (increase("
				 "kagg_offcpu_seconds_bucket{%s}[%.0fms])))",
				 qs[qi] / 100, sel, window * 1000);
			theirs = prom_query(pport, qq, ts[j]);
			a = log2_slot(mine);
			b = isnan(theirs) ? -100 : log2_slot(theirs * 1e9);
			printf(" p%g %d/%d", qs[qi], a, b);
			worst = abs(a - b) > worst ? abs(a - b) : worst;
		}
		printf("%s\n", j == jump_at ? "  <- slot 25 first counts" : "");
		checked++;
	}

	stop_child(prom, SIGTERM);
	kill(k.pid, SIGTERM);
	assert_int_equal(kagg_finish(&k, NULL, &err), 0);
	free(err);
	tu_assert_nothing_left(&before, "offcpu_", "offcpu_", "kagg serve");
	rmdir(cg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);

	/* 36 finite buckets (le up to 68.7 s, the first to reach 60 s) and +Inf, always. */
	assert_int_equal(first_n, 37);
	assert_int_equal(last_n, 37);
	/* The run spans scrapes, the jump among them. */
	assert_true(checked >= 3);
	assert_true(jump_at >= 0);
	assert_true(worst <= 1);
}

/* ------------------------------------------------------------------ hardening */

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A TCP socket from src (an IPv4 loopback address) to 127.0.0.1:port; timeouts of secs. */
static int tcp_to(const char *src, int port, int secs)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) }, b = a;
	struct timeval tv = { secs, 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	b.sin_port = 0;
	inet_pton(AF_INET, src, &b.sin_addr);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&b, sizeof(b)) ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * n slow clients from src: each connects (without waiting for the server to accept), sends a
 * request line once connected, then one more header line at each slow_tick(): never a whole
 * request.  fd -1 where the socket could not be made.
 */
struct slow {
	int fd;
	bool started; /* its request line sent */
};

static void slow_send(struct slow *c)
{
	static const char line[] = "GET /metrics HTTP/1.1\r\n", header[] = "X-Slow: 1\r\n";

	if (c->fd < 0)
		return;
	if (c->started)
		send(c->fd, header, strlen(header), MSG_NOSIGNAL | MSG_DONTWAIT);
	else
		c->started = send(c->fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) ==
			     (ssize_t)strlen(line);
}

static void slow_open(const char *src, int port, struct slow *c, int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) }, b = a;
	struct pollfd *p = calloc(n, sizeof(*p));
	int i, left = 0, r;
	double end;

	assert_non_null(p);
	b.sin_port = 0;
	inet_pton(AF_INET, src, &b.sin_addr);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < n; i++) {
		c[i].started = false;
		c[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (c[i].fd < 0)
			continue;
		if (bind(c[i].fd, (struct sockaddr *)&b, sizeof(b)) ||
		    (connect(c[i].fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS)) {
			close(c[i].fd);
			c[i].fd = -1;
		}
	}
	/* the request lines of those connected within 2 s; the others' at a later tick */
	for (end = mono_s() + 2; mono_s() < end;) {
		for (i = 0, left = 0; i < n; i++) {
			p[i] = (struct pollfd){ .fd = c[i].started ? -1 : c[i].fd,
						.events = POLLOUT };
			left += p[i].fd >= 0;
		}
		if (!left)
			break;
		r = poll(p, n, 100);
		for (i = 0; r > 0 && i < n; i++)
			if (p[i].fd >= 0 && (p[i].revents & POLLOUT))
				slow_send(&c[i]);
	}
	free(p);
}

static void slow_tick(struct slow *c, int n)
{
	int i;

	for (i = 0; i < n; i++)
		slow_send(&c[i]);
}

static void slow_close(struct slow *c, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (c[i].fd >= 0)
			close(c[i].fd);
}

/* The kagg serve started by serve_start: its port, once it answers. */
static struct tu_kagg serve_start(int port, char *const extra[])
{
	char listen[64], *argv[24] = { "serve", "--listen", listen, "--tool", "runqlat" };
	struct tu_kagg k;
	int i, n = 5;

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	for (i = 0; extra && extra[i] && n < 23; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	k = kagg_start(argv);
	assert_true(k.pid > 0);
	assert_true(wait_http(port, "/metrics", 30));
	return k;
}

static void serve_stop(struct tu_kagg *k)
{
	char *err = NULL;

	kill(k->pid, SIGTERM);
	assert_int_equal(kagg_finish(k, NULL, &err), 0);
	free(err);
}

#define NR_SLOW 500

/*
 * 500 clients from 127.0.0.2 that send a header line a second and never end their request:
 * 20 of 20 scrapes from 127.0.0.1 meanwhile are answered, with the default limits, and so is
 * the first scrape after they close, within 1 s.
 */
static void test_slow_clients(void **state)
{
	int port = base_port() + 2, i, ok = 0;
	static struct slow fds[NR_SLOW];
	double tick, t;
	struct tu_kagg k;
	char *m;

	TU_SKIP_UNLESS_ROOT();
	k = serve_start(port, NULL);
	slow_open("127.0.0.2", port, fds, NR_SLOW);
	tick = mono_s();
	for (i = 0; i < 20; i++) {
		m = http_get(port, "/metrics");
		ok += m && strstr(m, "kagg_runqlat_seconds_count{");
		free(m);
		if (ok != i + 1)
			break; /* one is enough to fail; the next would wait as long */
		/* a scrape every 250 ms, the slow clients' header lines every second */
		tu_sleep_ms(250);
		if (mono_s() - tick >= 1) {
			slow_tick(fds, NR_SLOW);
			tick = mono_s();
		}
	}
	slow_close(fds, NR_SLOW);
	t = mono_s();
	m = http_get(port, "/metrics");
	t = mono_s() - t;
	printf("  %d of 20 scrapes answered beside %d slow clients; after they closed, %s in "
	       "%.3f s\n",
	       ok, NR_SLOW, m ? "answered" : "not answered", t);
	assert_int_equal(ok, 20);
	assert_non_null(m);
	assert_true(t < 1);
	free(m);
	serve_stop(&k);
}

/* One HTTP response read from fd: its status (0: none came), body length in *len. */
static int read_response(int fd, size_t *len)
{
	char buf[65536], *end, *cl;
	size_t n = 0, want;
	ssize_t r;
	int status = 0;

	*len = 0;
	while (n < sizeof(buf) - 1) {
		r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
		if (r <= 0)
			return 0;
		n += (size_t)r;
		buf[n] = 0;
		if ((end = strstr(buf, "\r\n\r\n")))
			break;
	}
	if (!end || sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		return 0;
	cl = strcasestr(buf, "\r\nContent-Length:");
	want = cl ? strtoul(cl + 17, NULL, 10) : 0;
	n -= (size_t)(end + 4 - buf);
	while (n < want) {
		r = recv(fd, buf, want - n < sizeof(buf) ? want - n : sizeof(buf), 0);
		if (r <= 0)
			return 0;
		n += (size_t)r;
	}
	*len = want;
	return status;
}

/* Send req on a new connection from 127.0.0.1 and read the status of the answer (0: none). */
static int status_of(int port, const char *req)
{
	size_t len;
	int fd = tcp_to("127.0.0.1", port, 10), st = 0;

	if (fd < 0)
		return 0;
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req))
		st = read_response(fd, &len);
	close(fd);
	return st;
}

/*
 * Requests bounded: keep-alive (two scrapes on one connection), a query of 500 pairs
 * answered, a target too long 414, headers too large 431, and a client sending a header line
 * every 200 ms cut at --request-timeout (2 s) although it is never idle for --timeout (60 s).
 */
static void test_requests(void **state)
{
	static const char scrape[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
	char *extra[] = { "--timeout", "60", "--request-timeout", "2", NULL };
	int port = base_port() + 2, fd, st1, st2, i;
	size_t len1 = 0, len2 = 0, sz = 64 * 1024;
	char *req = malloc(sz), *o, buf[256];
	double t0, t = 0;
	struct tu_kagg k;
	ssize_t r;

	TU_SKIP_UNLESS_ROOT();
	assert_non_null(req);
	k = serve_start(port, extra);

	/* keep-alive: two answers on one connection */
	fd = tcp_to("127.0.0.1", port, 10);
	assert_true(fd >= 0);
	assert_true(send(fd, scrape, strlen(scrape), MSG_NOSIGNAL) == (ssize_t)strlen(scrape));
	st1 = read_response(fd, &len1);
	st2 = send(fd, scrape, strlen(scrape), MSG_NOSIGNAL) == (ssize_t)strlen(scrape)
		      ? read_response(fd, &len2)
		      : 0;
	close(fd);
	printf("  keep-alive: %d (%zu bytes) then %d (%zu bytes) on one connection\n", st1, len1,
	       st2, len2);
	assert_int_equal(st1, 200);
	assert_int_equal(st2, 200);
	assert_true(len1 > 0 && len2 > 0);

	/* 500 query pairs: answered (the query is not for us) */
	o = req + sprintf(req, "GET /metrics?");
	for (i = 0; i < 500; i++)
		o += sprintf(o, "a=b&");
	sprintf(o, " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
	st1 = status_of(port, req);
	/* 5000: a target of 20 kB, too long */
	o = req + sprintf(req, "GET /metrics?");
	for (i = 0; i < 5000; i++)
		o += sprintf(o, "a=b&");
	sprintf(o, " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
	st2 = status_of(port, req);
	printf("  500 query pairs: %d; 5000: %d\n", st1, st2);
	assert_int_equal(st1, 200);
	assert_int_equal(st2, 414);
	/* 48 kB of headers */
	o = req + sprintf(req, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n");
	for (i = 0; i < 400; i++)
		o += sprintf(o, "X-%d: %0100d\r\n", i, 0);
	sprintf(o, "\r\n");
	st1 = status_of(port, req);
	printf("  48 kB of headers: %d\n", st1);
	assert_int_equal(st1, 431);

	/* a request never finished: cut at its deadline, though never idle */
	fd = tcp_to("127.0.0.1", port, 1);
	assert_true(fd >= 0);
	t0 = mono_s();
	assert_true(send(fd, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL) == 23);
	for (i = 0; i < 50; i++) { /* 10 s at most */
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 200) == 1) {
			r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (r <= 0) {
				t = mono_s() - t0;
				break;
			}
		}
		if (send(fd, "X-Slow: 1\r\n", 11, MSG_NOSIGNAL) != 11) {
			t = mono_s() - t0;
			break;
		}
	}
	close(fd);
	printf("  a header line every 200 ms: cut after %.2f s (--request-timeout 2)\n", t);
	assert_true(t >= 2 - 0.01 && t < 10);
	free(req);
	serve_stop(&k);
}

/*
 * Connections to port the server has accepted and holds: ESTABLISHED lines of
 * /proc/net/tcp with port as the local port and an inode (one still in the accept queue has
 * none, and neither has one the server closed).  Whatever other files the server opens, and
 * a connection of an earlier request that is still closing, are not counted.
 */
static int nr_held(int port)
{
	unsigned int lport, state;
	unsigned long inode;
	char line[512];
	int n = 0;
	FILE *f;

	f = fopen("/proc/net/tcp", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %*d: %*x:%x %*x:%*x %x %*x:%*x %*x:%*x %*x %*u %*d %lu", &lport,
			   &state, &inode) == 3 &&
		    lport == (unsigned int)port && state == 1 /* TCP_ESTABLISHED */ && inode)
			n++;
	fclose(f);
	return n;
}

/*
 * SIGTERM at the connection limit, with the longest --timeout and --request-timeout, ends
 * kagg serve within 1 s, nothing of its tool left loaded.
 */
static void test_prompt_stop(void **state)
{
	char *extra[] = { "--connections",
			  "4",
			  "--connections-per-ip",
			  "4",
			  "--timeout",
			  "86400",
			  "--request-timeout",
			  "86400",
			  NULL };
	int port = base_port() + 2, i;
	struct slow fds[6];
	static struct tu_census before;
	char *err = NULL;
	struct tu_kagg k;
	double t;

	TU_SKIP_UNLESS_ROOT();
	tu_census_take(&before, "runqlat_", "runqlat_");
	k = serve_start(port, extra);
	slow_open("127.0.0.1", port, fds, 6);
	/* the four slots taken: four connections accepted and held (10 s at most) */
	for (i = 0; i < 1000 && nr_held(port) < 4; i++)
		tu_sleep_ms(10);
	printf("  %d connections held, 2 more waiting\n", nr_held(port));
	assert_true(nr_held(port) >= 4);
	t = mono_s();
	kill(k.pid, SIGTERM);
	for (i = 0; i < 3000 && !tu_kagg_exited(&k); i++) /* 30 s at most */
		tu_sleep_ms(10);
	t = mono_s() - t;
	if (!tu_kagg_exited(&k))
		kill(k.pid, SIGKILL);
	printf("  SIGTERM at the connection limit: exited after %.3f s\n", t);
	slow_close(fds, 6);
	assert_int_equal(kagg_finish(&k, NULL, &err), 0);
	free(err);
	assert_true(t < 1);
	tu_assert_nothing_left(&before, "runqlat_", "runqlat_", "kagg serve at its limit");
}

/* --listen 127.0.0.1:0 binds a free port and says which; it is the one that answers. */
static void test_port_zero(void **state)
{
	char *argv[] = { "serve", "--listen", "127.0.0.1:0", "--tool", "runqlat", NULL };
	char buf[512], *p;
	struct tu_kagg k;
	int i, port = 0;
	ssize_t n;

	TU_SKIP_UNLESS_ROOT();
	k = kagg_start(argv);
	assert_true(k.pid > 0);
	for (i = 0; i < 300 && !port && !tu_kagg_exited(&k); i++) { /* 30 s at most */
		n = pread(k.efd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		p = strstr(buf, " on 127.0.0.1:");
		if (p && strchr(p, '\n'))
			port = atoi(p + 14);
		else
			tu_sleep_ms(100);
	}
	printf("  --listen 127.0.0.1:0: %s", buf);
	assert_true(port > 0 && port < 65536);
	assert_true(wait_http(port, "/metrics", 10));
	serve_stop(&k);
}

/*
 * Every tool `kagg serve --help` names is served: one line each (in one kagg serve), each
 * line's tool_id in /metrics.  A tool named in the help with no line here fails the test.
 */
static void test_every_tool(void **state)
{
	static char funclat[PATH_MAX + 64], helper[PATH_MAX];
	static struct {
		const char *tool, *line;
	} lines[] = {
		{ "offcpu", "offcpu" },
		{ "runqlat", "runqlat" },
		{ "syscount", "syscount" },
		{ "funclat", funclat }, /* a user function: kprobes and fentry may be missing */
		{ "hist", "hist sched:sched_switch prev_prio" },
		{ "profile", "profile" },
	};
	char *help = NULL, *p, *end, *argv[32] = { "serve", "--help", NULL }, listen[64], *m;
	int port = base_port() + 2, n = 0, named = 0, rc, served[16];
	struct tu_kagg k;
	size_t i;

	TU_SKIP_UNLESS_ROOT();
	snprintf(funclat, sizeof(funclat), "funclat %s:target_sleep_5ms",
		 tu_helper("funclat_target", helper, sizeof(helper)));
	rc = tu_run_kagg(argv, &help, NULL, 0, 0);
	assert_int_equal(rc, 0);
	/* "... (offcpu, runqlat, ..., profile); repeat it": the list, across lines */
	p = strstr(help, "'runqlat --cgroup /sys/fs/cgroup/db' (");
	assert_non_null(p);
	p = strchr(p, '(') + 1;
	end = strchr(p, ')');
	assert_non_null(end);
	*end = 0;
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	argv[n++] = "serve";
	argv[n++] = "--listen";
	argv[n++] = listen;
	for (p = strtok(p, ", \n"); p; p = strtok(NULL, ", \n")) {
		for (i = 0; i < TU_NR(lines) && strcmp(lines[i].tool, p); i++)
			;
		printf("  --help names %s: %s\n", p, i < TU_NR(lines) ? lines[i].line : "no line");
		assert_true(i < TU_NR(lines) && named < 16);
		served[named] = (int)i;
		argv[n++] = "--tool";
		argv[n++] = (char *)lines[i].line;
		named++;
	}
	argv[n] = NULL;
	assert_true(named >= 6);
	k = kagg_start(argv);
	assert_true(k.pid > 0);
	if (!wait_http(port, "/metrics", 60)) {
		char *err = NULL;

		kill(k.pid, SIGKILL);
		kagg_finish(&k, NULL, &err);
		printf("  kagg serve: %s\n", err ? err : "");
		fail();
	}
	m = http_get(port, "/metrics");
	assert_non_null(m);
	for (i = 0; i < (size_t)named; i++) {
		char want[128];

		snprintf(want, sizeof(want), "kagg_events_seen_total{tool_id=\"%s\"",
			 lines[served[i]].line);
		if (!strstr(m, want))
			printf("  no %s\n", want);
		assert_non_null(strstr(m, want));
	}
	free(m);
	free(help);
	serve_stop(&k);
}

#define TTL_WAVE 2 /* children per wave: as many as --max-keys */

/* Whether the offcpu series of pid are in /metrics m. */
static bool has_pid(const char *m, pid_t pid)
{
	char want[32];

	snprintf(want, sizeof(want), ",pid=\"%d\",", (int)pid);
	return m && strstr(m, want);
}

/* A wave of TTL_WAVE children in cgroup cg, each sleeping 5 times 10 ms, reaped. */
static void ttl_wave(const char *cg, pid_t *pids)
{
	struct tu_sleeps sl = { .count = 5, .ms = 10 };
	struct tu_child c[TTL_WAVE];
	int i;

	for (i = 0; i < TTL_WAVE; i++) {
		c[i] = tu_spawn(tu_sleeper, &sl);
		assert_true(track(c[i].pid) > 0);
		assert_int_equal(tu_cgroup_add(cg, c[i].pid), 0);
		pids[i] = c[i].pid;
	}
	for (i = 0; i < TTL_WAVE; i++)
		tu_go(&c[i]);
	for (i = 0; i < TTL_WAVE; i++) {
		untrack(c[i].pid);
		assert_int_equal(tu_wait(&c[i]), 0);
	}
}

/* /metrics once every wave pid has its series (bounded: 30 s); malloc'd. */
static char *scrape_wave(int port, const pid_t *pids)
{
	char *m = NULL;
	int i, j;

	for (i = 0; i < 300; i++) {
		free(m);
		m = http_get(port, "/metrics");
		for (j = 0; j < TTL_WAVE && has_pid(m, pids[j]); j++)
			;
		if (j == TTL_WAVE)
			return m;
		tu_sleep_ms(100);
	}
	fail_msg("no series of the wave's pids %d and %d in:\n%s", (int)pids[0], (int)pids[1],
		 m ? m : "(no answer)");
	return NULL;
}

/*
 * offcpu -P on a cgroup with --max-keys 2 --key-ttl 1: two children (known pids) take the
 * two places; after the test waits 3 s the next scrape has retired them (their series gone,
 * kagg_retired_keys_total 2), and a second wave of two children gets series of its own,
 * with no key="other".  Time is the test's waits, 3 times the TTL: no timing is asserted.
 */
static void test_key_ttl(void **state)
{
	char listen[64], cg[128], tool[256], *m, *r, *err = NULL;
	pid_t w1[TTL_WAVE], w2[TTL_WAVE];
	int port = tu_free_port(), i;
	struct tu_kagg k;

	assert_true(port > 0);
	tu_cgroup_dir(__func__, "kagg-ttl", cg, sizeof(cg));
	snprintf(tool, sizeof(tool), "offcpu -P --cgroup %s", cg);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	{
		char *argv[] = { "serve",      "--listen", listen,	"--tool", tool,
				 "--max-keys", "2",	   "--key-ttl", "1",	  NULL };

		k = kagg_start(argv);
	}
	assert_true(k.pid > 0);
	assert_true(wait_http(port, "/metrics", 30));

	ttl_wave(cg, w1);
	m = scrape_wave(port, w1);
	assert_null(strstr(m, "key=\"other\""));
	free(m);

	tu_sleep_ms(3000);
	m = http_get(port, "/metrics");
	assert_non_null(m);
	for (i = 0; i < TTL_WAVE; i++)
		assert_false(has_pid(m, w1[i]));
	r = strstr(m, "kagg_retired_keys_total{tool_id=\"offcpu -P --cgroup");
	assert_non_null(r);
	assert_int_equal(strtol(strchr(r, '}') + 1, NULL, 10), 2);
	free(m);

	ttl_wave(cg, w2);
	m = scrape_wave(port, w2);
	for (i = 0; i < TTL_WAVE; i++)
		assert_false(has_pid(m, w1[i]));
	assert_null(strstr(m, "key=\"other\""));
	free(m);

	kill(k.pid, SIGTERM);
	assert_int_equal(kagg_finish(&k, NULL, &err), 0);
	free(err);
	rmdir(cg);
}

/* A child renamed to name that sleeps sl, then makes calls getppid() calls. */
struct named_work {
	const char *name;
	struct tu_sleeps sl;
	int calls;
};

static void named_work(void *arg)
{
	const struct named_work *w = arg;
	int i;

	prctl(PR_SET_NAME, w->name);
	tu_sleeper((void *)&w->sl);
	for (i = 0; i < w->calls; i++)
		syscall(SYS_getppid);
}

/* The value of series (name{labels}, exactly) in /metrics m; -1 when it is not there. */
static double series_value(const char *m, const char *series)
{
	size_t n = strlen(series);
	const char *p;

	for (p = m; p && (p = strstr(p, series)); p += n)
		if ((p == m || p[-1] == '\n') && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return -1;
}

/*
 * The drops of the tool line tool in m, with kernel_gaps (switches the kernel did not deliver:
 * not in the drops) only when gaps: offcpu counts no drop for a sleep whose switch-out was
 * skipped, runqlat counts the wait a skipped switch-in ended (switch_in_missed).
 */
static double drops_of(const char *m, const char *tool, bool gaps)
{
	char pre[256];
	const char *p, *end;
	double n = 0;

	snprintf(pre, sizeof(pre), "\nkagg_drops_total{tool_id=\"%s\",", tool);
	for (p = m; (p = strstr(p, pre)); p += strlen(pre)) {
		end = strchr(p, '}');
		if (gaps || !memmem(p, end - p, "cause=\"kernel_gaps\"", 19))
			n += strtod(end + 2, NULL);
	}
	return n;
}

/*
 * The off-CPU intervals of 16.7 ms and more of series sel (its labels) of tool in m: _count
 * less the le="0.016777215" bucket (offcpu in ns: log2 slot 24 and up); -1 when none.
 */
static double offcpu_above_16ms(const char *m, const char *sel)
{
	char q[1024];
	double count, below;

	snprintf(q, sizeof(q), "kagg_offcpu_seconds_count{%s}", sel);
	count = series_value(m, q);
	snprintf(q, sizeof(q), "kagg_offcpu_seconds_bucket{%s,le=\"0.016777215\"}", sel);
	below = series_value(m, q);
	return count < 0 || below < 0 ? -1 : count - below;
}

/*
 * The series of syscount line tool counting getppid() calls of the key labelled labels
 * (`comm="x"`, `cgroup="/x",cgroup_id="7"`), into q.
 */
static void calls_series(char *q, size_t len, const char *tool, const char *labels)
{
	snprintf(q, len,
		 "kagg_syscount_seconds_count{tool_id=\"%s\",tool=\"syscount\",%s,"
		 "key=\"getppid\"}",
		 tool, labels);
}

/* /metrics once series q counts want (bounded: 30 s); malloc'd. */
static char *scrape_until(int port, const char *q, double want)
{
	char *m = NULL;
	int i;

	for (i = 0; i < 300; i++) {
		free(m);
		m = http_get(port, "/metrics");
		if (m && series_value(m, q) >= want)
			return m;
		tu_sleep_ms(100);
	}
	fail_msg("no %s of %.0f in:\n%s", q, want, m ? m : "(no answer)");
	return NULL;
}

/* The getppid() calls of syscount line tool's key label="value" in m: exactly want. */
static void assert_calls(const char *m, const char *tool, const char *labels, int want)
{
	char q[512];
	double n;

	calls_series(q, sizeof(q), tool, labels);
	n = series_value(m, q);
	printf("  %s %.0f of %d\n", q, n, want);
	assert_true(n == want);
}

/*
 * The labels of -N and --per-cgroup: child a, renamed kagg-srv-a, sleeps 5 times 24 ms then
 * calls getppid() 777 times; child c, renamed kagg-srv-c and moved into a cgroup the test
 * made, sleeps 4 times and calls getppid() 333 times.  One kagg serve, filtered to them:
 * syscount -N has comm="kagg-srv-a",key="getppid" 777 and comm="kagg-srv-c" 333, exactly;
 * syscount --per-cgroup has cgroup="/<the cgroup>",cgroup_id="<its id>",key="getppid" 333,
 * exactly; offcpu -N has comm="kagg-srv-a" with its 5 sleeps (counted, or dropped: as
 * test_offcpu bounds them); runqlat --per-cgroup (on that cgroup) has the same cgroup labels
 * with a wakeup per sleep at least (or dropped).
 */
static void test_comm_cgroup_labels(void **state)
{
	/* a's sleeps near the middle of the 16 ms bucket (test_offcpu.c, KNOWN_SLEEP_MS) */
	struct named_work wa = { "kagg-srv-a", { .count = 5, .ms = 24 }, 777 },
			  wc = { "kagg-srv-c", { .count = 4, .ms = 20 }, 333 };
	char cg[128], pids[64], sc_n[128], sc_cg[128], oc_n[128];
	const char *path;
	char rq_cg[256], sel[768], la[64], lc[64], lcg[320], *m;
	struct stat cg_st; /* a cgroup v2's id is its directory's inode number */
	int port = tu_free_port();
	struct tu_child a, c;
	struct tu_kagg k;
	double n;

	TU_SKIP_UNLESS_ROOT();
	assert_true(port > 0);
	assert_non_null(tu_sleeps_measured(&wa.sl));
	assert_non_null(tu_sleeps_measured(&wc.sl));
	tu_cgroup_dir(__func__, "kagg-srv", cg, sizeof(cg));
	path = tu_cgroup_path(cg);
	assert_int_equal(stat(cg, &cg_st), 0);
	a = tu_spawn(named_work, &wa);
	c = tu_spawn(named_work, &wc);
	assert_true(track(a.pid) > 0 && track(c.pid) > 0);
	assert_int_equal(tu_cgroup_add(cg, c.pid), 0);
	snprintf(pids, sizeof(pids), "%d,%d", (int)a.pid, (int)c.pid);
	snprintf(sc_n, sizeof(sc_n), "syscount -N -p %s", pids);
	snprintf(sc_cg, sizeof(sc_cg), "syscount --per-cgroup -p %s", pids);
	snprintf(oc_n, sizeof(oc_n), "offcpu -N -p %s", pids);
	snprintf(rq_cg, sizeof(rq_cg), "runqlat --per-cgroup --cgroup %s", cg);
	{
		char *extra[] = { "--tool", sc_n,     "--tool", sc_cg, "--tool",
				  oc_n,	    "--tool", rq_cg,	NULL };

		k = serve_start(port, extra);
	}
	tu_go(&a);
	tu_go(&c);
	untrack(a.pid);
	untrack(c.pid);
	assert_int_equal(tu_wait(&a), 0);
	assert_int_equal(tu_wait(&c), 0);

	/* the children are done: a scrape with a's calls has all of both */
	snprintf(la, sizeof(la), "comm=\"%s\"", wa.name);
	snprintf(lc, sizeof(lc), "comm=\"%s\"", wc.name);
	snprintf(lcg, sizeof(lcg), "cgroup=\"%s\",cgroup_id=\"%llu\"", path,
		 (unsigned long long)cg_st.st_ino);
	calls_series(sel, sizeof(sel), sc_n, la);
	m = scrape_until(port, sel, wa.calls);
	assert_calls(m, sc_n, la, wa.calls);
	assert_calls(m, sc_n, lc, wc.calls);
	assert_calls(m, sc_cg, lcg, wc.calls);
	/* offcpu -N: a's sleeps, counted or dropped */
	snprintf(sel, sizeof(sel), "tool_id=\"%s\",tool=\"offcpu\",comm=\"%s\"", oc_n, wa.name);
	n = offcpu_above_16ms(m, sel);
	printf("  offcpu %s: %.0f of %d sleeps, %.0f drops\n", wa.name, n, wa.sl.count,
	       drops_of(m, oc_n, true));
	/* as test_offcpu's assert_sleeps: against the sleeps as the child measured them */
	assert_true(n >= 0 && n <= wa.sl.count);
	assert_true(n + drops_of(m, oc_n, true) >= tu_sleeps_whole_under(&wa.sl, UINT64_MAX));
	/* runqlat --per-cgroup: c's wakeups from its sleeps at least, or dropped */
	snprintf(sel, sizeof(sel), "kagg_runqlat_seconds_count{tool_id=\"%s\",tool=\"runqlat\",%s}",
		 rq_cg, lcg);
	n = series_value(m, sel);
	printf("  %s %.0f, %.0f drops\n", sel, n, drops_of(m, rq_cg, false));
	/* short of the sleeps: what each sleep did, and every series of the tool */
	for (int i = 0;
	     n + drops_of(m, rq_cg, false) < tu_sleeps_blocked(&wc.sl) && i < wc.sl.count; i++)
		printf("  sleep %d: %llu ns, %llu cpu ns, nvcsw %llu nivcsw %llu\n", i,
		       (unsigned long long)wc.sl.took_ns[i],
		       (unsigned long long)wc.sl.took_ns[3 * wc.sl.count + i],
		       (unsigned long long)wc.sl.took_ns[wc.sl.count + i],
		       (unsigned long long)wc.sl.took_ns[2 * wc.sl.count + i]);
	for (const char *l = m;
	     n + drops_of(m, rq_cg, false) < tu_sleeps_blocked(&wc.sl) && l && *l;
	     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, "kagg_runqlat_seconds_count{tool_id=\"runqlat --per-cgroup", 56))
			printf("  %.*s\n", (int)strcspn(l, "\n"), l);
	assert_true(n >= 0);
	assert_true(n + drops_of(m, rq_cg, false) >= tu_sleeps_blocked(&wc.sl));
	free(m);
	serve_stop(&k);
	assert_int_equal(rmdir(cg), 0);
}

/* Every test ends what it started and did not reap, so the next finds its ports free. */
#define SERVE_TEST(NAME) cmocka_unit_test_teardown(NAME, stop_tracked)
#define SERVE_TEST_ARG(NAME, FN, ARG) { #NAME, FN, NULL, stop_tracked, (void *)(uintptr_t)(ARG) }

TU_MAIN(SERVE_TEST(test_errors), SERVE_TEST(test_clean_exit), SERVE_TEST(test_prog_labels),
	SERVE_TEST(test_slow_clients), SERVE_TEST(test_requests), SERVE_TEST(test_prompt_stop),
	SERVE_TEST(test_port_zero), SERVE_TEST(test_every_tool),
	SERVE_TEST_ARG(test_prometheus, test_two_serves, false),
	SERVE_TEST_ARG(test_native, test_two_serves, true), SERVE_TEST(test_hostile_comm),
	SERVE_TEST(test_quantile_jump), SERVE_TEST(test_key_ttl),
	SERVE_TEST(test_comm_cgroup_labels), )
