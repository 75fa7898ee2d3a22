// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Root tests of kagg serve against a real Prometheus: two kagg serve
 * instances, each running offcpu on its own cgroup where a child sleeps a
 * known number of times for 50 ms, scraped every second by a prometheus
 * started on loopback with a generated config; Prometheus' HTTP API then
 * sees each instance's count in the 50 ms bucket, their sum by le, the
 * median in that bucket, and counters that never reset over 10+ scrapes.
 * Also: bad tool lines fail with the tool's own error, a taken port fails
 * first, SIGINT/SIGTERM leave nothing loaded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <kagg/kagg.h>
#include "testutil.h"
#include "census.h"

#define PROMETHEUS "/usr/bin/prometheus"
#define SKIP_UNLESS_PROMETHEUS()                                               \
	do {                                                                   \
		TU_SKIP_UNLESS_ROOT();                                         \
		if (access(PROMETHEUS, X_OK)) {                                \
			printf("SKIP %s: no %s (Debian package prometheus)\n", \
			       __func__, PROMETHEUS);                          \
			skip();                                                \
		}                                                              \
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

/* Prometheus instant query q at time t (0: now): the one sample's value, NAN when none. */
static double prom_query(int port, const char *q, double t)
{
	char path[4096], *o = path, *body, *v;
	const char *p;
	double r = NAN;

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
	body = http_get(port, path);
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

/* prometheus scraping 127.0.0.1:t1 and :t2 (t2 0: none), flag: a --enable-feature or NULL. */
static pid_t start_prometheus(const char *dir, int port, int t1, int t2, const char *flag)
{
	char cfg[512], data[512], cfgopt[600], dataopt[600], listen[64];
	FILE *f;
	pid_t pid;

	snprintf(cfg, sizeof(cfg), "%s/prometheus.yml", dir);
	snprintf(data, sizeof(data), "%s/data", dir);
	f = fopen(cfg, "w");
	if (!f)
		return -1;
	fprintf(f, "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
		   "scrape_configs:\n  - job_name: kagg\n    static_configs:\n"
		   "      - targets: ['127.0.0.1:%d'", t1);
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

struct inst_result {
	double in_bucket; /* count above LE_LOW */
	double low, high; /* the cumulative buckets */
	double lost;	  /* drops, every cause (the tool's, not only its cgroup's) */
};

static void read_inst(int pport, int sport, double t, struct inst_result *r)
{
	char q[512];

	snprintf(q, sizeof(q), "sum(kagg_offcpu_seconds_bucket{instance=\"127.0.0.1:%d\",le=\"%s\"})",
		 sport, LE_LOW);
	r->low = prom_query(pport, q, t);
	snprintf(q, sizeof(q), "sum(kagg_offcpu_seconds_bucket{instance=\"127.0.0.1:%d\",le=\"%s\"})",
		 sport, LE_HIGH);
	r->high = prom_query(pport, q, t);
	r->in_bucket = r->high - r->low;
	snprintf(q, sizeof(q), "sum(kagg_drops_total{instance=\"127.0.0.1:%d\"})", sport);
	r->lost = prom_query(pport, q, t);
}

static void test_prometheus(void **state)
{
	struct tu_sleeps wa = { .count = 20, .ms = 50 }, wb = { .count = 12, .ms = 50 };
	char root[64], cga[128], cgb[128], dir[] = "/tmp/kagg-serve-test-XXXXXX", cmd[600];
	char la[64], lb[64], toola[200], toolb[200];
	int port = base_port(), pport = port + 2, i;
	struct tu_child ca, cb;
	struct tu_kagg ka, kb;
	struct inst_result ra = { 0 }, rb = { 0 };
	static struct tu_census before;
	double t, sum_low, sum_high, q50, resets, scrapes, lost_a, lost_b;
	char *err = NULL;
	pid_t prom;

	SKIP_UNLESS_PROMETHEUS();
	if (!tu_cgroup2_root(root, sizeof(root))) {
		printf("SKIP %s: no cgroup v2 mount\n", __func__);
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
	snprintf(toola, sizeof(toola), "offcpu --cgroup %s", cga);
	snprintf(toolb, sizeof(toolb), "offcpu --cgroup %s", cgb);
	{
		char *aa[] = { "serve", "--listen", la, "--tool", toola, NULL };
		char *ab[] = { "serve", "--listen", lb, "--tool", toolb, NULL };

		ka = tu_kagg_start(aa);
		kb = tu_kagg_start(ab);
	}
	assert_true(ka.pid > 0 && kb.pid > 0);
	assert_true(wait_http(port, "/metrics", 30));
	assert_true(wait_http(port + 1, "/metrics", 30));
	prom = start_prometheus(dir, pport, port, port + 1, NULL);
	assert_true(prom > 0);
	assert_true(wait_http(pport, "/-/ready", 60));
	for (i = 0; i < 300 && prom_query(pport, "count(up{job=\"kagg\"} == 1)", 0) != 2; i++)
		tu_sleep_ms(100);
	assert_true(i < 300);

	/* Drops so far: those during the workload are what may excuse a missing sleep. */
	read_inst(pport, port, 0, &ra);
	read_inst(pport, port + 1, 0, &rb);
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

	/* Until Prometheus scraped both after the workload, and 10+ times in all. */
	for (i = 0; i < 600; i++) {
		t = now_s();
		read_inst(pport, port, t, &ra);
		read_inst(pport, port + 1, t, &rb);
		ra.lost -= lost_a;
		rb.lost -= lost_b;
		scrapes = prom_query(pport, "min(count_over_time(kagg_events_seen_total[5m]))", t);
		/* All counted, or 60 s for a sleep the kernel made offcpu miss. */
		if (ra.in_bucket >= wa.count && rb.in_bucket >= wb.count && scrapes >= 10)
			break;
		tu_sleep_ms(100);
	}
	snprintf(cmd, sizeof(cmd), "sum by (le) (kagg_offcpu_seconds_bucket{job=\"kagg\",le=\"%s\"})",
		 LE_LOW);
	sum_low = prom_query(pport, cmd, t);
	snprintf(cmd, sizeof(cmd), "sum by (le) (kagg_offcpu_seconds_bucket{job=\"kagg\",le=\"%s\"})",
		 LE_HIGH);
	sum_high = prom_query(pport, cmd, t);
	q50 = prom_query(pport, "histogram_quantile(0.5, sum by (le) "
				"(kagg_offcpu_seconds_bucket{job=\"kagg\"}))", t);
	resets = prom_query(pport, "sum(resets(kagg_events_seen_total[5m])) + "
				   "sum(resets(kagg_offcpu_seconds_bucket[5m])) + "
				   "sum(resets(kagg_offcpu_seconds_count[5m]))", t);
	printf("  above %s s (le %s): a %g of %d sleeps (%g dropped meanwhile), b %g of %d (%g); "
	       "sum by le %g; p50 %g s; %g scrapes; %g resets\n", LE_LOW, LE_HIGH, ra.in_bucket,
	       wa.count, ra.lost, rb.in_bucket, wb.count, rb.lost, sum_high - sum_low, q50, scrapes,
	       resets);

	kill(prom, SIGTERM);
	waitpid(prom, NULL, 0);
	kill(ka.pid, SIGTERM);
	kill(kb.pid, SIGINT);
	assert_int_equal(tu_kagg_finish(&ka, NULL, &err), 0);
	free(err);
	assert_int_equal(tu_kagg_finish(&kb, NULL, &err), 0);
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
	assert_true(ra.in_bucket + ra.lost >= wa.count && ra.in_bucket <= wa.count + 1);
	assert_true(rb.in_bucket + rb.lost >= wb.count && rb.in_bucket <= wb.count + 1);
	/* Across instances, per le, exactly the sum of the two. */
	assert_true(sum_low == ra.low + rb.low);
	assert_true(sum_high == ra.high + rb.high);
	/* Most sleeps end on time: slot 25, or at worst the one above. */
	assert_true(q50 > 0.033554431 && q50 <= 0.134217727);
	assert_true(scrapes >= 10);
	assert_true(resets == 0);
}

/*
 * Native histograms: Prometheus with --enable-feature=native-histograms asks for the
 * protobuf format and gets kagg_offcpu_nanoseconds from offcpu's exp:3 buckets next to the
 * classic kagg_offcpu_seconds; both come from the same counts, so at one evaluation time
 * their counts are equal, their sums agree (ns against s), their medians fall in the same
 * exp bucket, and a child's 20 sleeps of 50 ms are all in the native buckets above 33.5 ms.
 */
static void test_native(void **state)
{
	struct tu_sleeps work = { .count = 20, .ms = 50 };
	char dir[] = "/tmp/kagg-serve-test-XXXXXX", cmd[600], listen[64];
	int port = base_port() + 2, pport = port + 1, i;
	double t = 0, count = 0, ncount = 0, sum = 0, nsum = 0, q = 0, nq = 0, above = 0;
	double before_count = 0;
	struct tu_child c;
	struct tu_kagg k;
	char *err = NULL;
	pid_t prom;

	SKIP_UNLESS_PROMETHEUS();
	assert_non_null(mkdtemp(dir));
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	{
		char *argv[] = { "serve", "--listen", listen, "--tool", "offcpu --buckets exp:3",
				 NULL };

		k = tu_kagg_start(argv);
	}
	assert_true(k.pid > 0);
	assert_true(wait_http(port, "/metrics", 30));
	prom = start_prometheus(dir, pport, port, 0, "--enable-feature=native-histograms");
	assert_true(prom > 0);
	assert_true(wait_http(pport, "/-/ready", 60));
	for (i = 0; i < 300 && !(prom_query(pport, "histogram_count(kagg_offcpu_nanoseconds)",
					     0) > 0); i++)
		tu_sleep_ms(100);
	assert_true(i < 300);
	before_count = prom_query(pport, "histogram_count(kagg_offcpu_nanoseconds) * "
					 "histogram_fraction(33554432, +Inf, kagg_offcpu_nanoseconds)",
				  0);
	c = tu_spawn(tu_sleeper, &work);
	tu_go(&c);
	assert_int_equal(tu_wait(&c), 0);
	for (i = 0; i < 300; i++) {
		t = now_s();
		above = prom_query(pport, "histogram_count(kagg_offcpu_nanoseconds) * "
				  "histogram_fraction(33554432, +Inf, kagg_offcpu_nanoseconds)", t);
		if (above - before_count >= work.count - 0.5)
			break;
		tu_sleep_ms(100);
	}
	count = prom_query(pport, "sum(kagg_offcpu_seconds_count)", t);
	ncount = prom_query(pport, "histogram_count(sum(kagg_offcpu_nanoseconds))", t);
	sum = prom_query(pport, "sum(kagg_offcpu_seconds_sum)", t);
	nsum = prom_query(pport, "histogram_sum(sum(kagg_offcpu_nanoseconds))", t);
	q = prom_query(pport, "histogram_quantile(0.5, sum by (le) (kagg_offcpu_seconds_bucket))",
		       t);
	nq = prom_query(pport, "histogram_quantile(0.5, sum(kagg_offcpu_nanoseconds))", t);
	printf("  count %g (native %g), sum %g s (native %g ns), p50 %g s (native %g ns), "
	       "above 33.5 ms: %g more after 20 sleeps of 50 ms\n", count, ncount, sum, nsum, q, nq,
	       above - before_count);

	kill(prom, SIGTERM);
	waitpid(prom, NULL, 0);
	kill(k.pid, SIGTERM);
	assert_int_equal(tu_kagg_finish(&k, NULL, &err), 0);
	free(err);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);

	assert_true(count > 0 && ncount == count);
	assert_true(fabs(nsum - sum * 1e9) <= 1e-6 * nsum + 1);
	/* The same exp:3 bucket: (2^((i-1)/8), 2^(i/8)] ns, walked up from 1 ns. */
	{
		double lo = 1, hi = 1;

		while (hi < nq)
			lo = hi, hi *= 1.0905077326652577; /* 2^(1/8) */
		assert_true(q * 1e9 > lo * (1 - 1e-6) && q * 1e9 <= hi * (1 + 1e-6));
	}
	/* Others sleep too: at least our 20 more. */
	assert_true(above - before_count >= work.count - 0.5);
}

/* Bad tool lines fail with the tool's own error, where the line came from, and no port. */
static void test_errors(void **state)
{
	char conf[] = "/tmp/kagg-serve-conf-XXXXXX", taken[64];
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd, sock;

	TU_SKIP_UNLESS_ROOT();
	fd = mkstemp(conf);
	assert_true(fd >= 0);
	assert_true(write(fd, "# tools\nrunqlat\n\noffcpu --bogus\n", 32) == 32);
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
			{ 2, "kagg serve: --tool: kagg runqlat: invalid CPU 'x'",
			  { "serve", "--listen", "127.0.0.1:0", "--tool", "runqlat --cpu x" } },
			{ 2, "kagg serve: --tool: kagg offcpu: invalid option '--nope' (see --help)",
			  { "serve", "--listen", "127.0.0.1:0", "--tool", "offcpu --nope" } },
			{ 2, "'stat' is not a tool kagg serve runs",
			  { "serve", "--listen", "127.0.0.1:0", "--tool", "stat -e cycles" } },
			{ 2, ":4: kagg offcpu: invalid option '--bogus'",
			  { "serve", "--listen", "127.0.0.1:0", "--config", conf } },
			{ 2, "-d, -i and INTERVAL are not for kagg serve",
			  { "serve", "--listen", "127.0.0.1:0", "--tool", "runqlat -d 1" } },
			{ 2, "no tool to serve", { "serve" } },
			{ 1, "Address already in use", { "serve", "--listen", taken, "--tool", "runqlat" } },
		};

		tu_expect_errors(cases, TU_NR(cases));
	}
	close(sock);
	unlink(conf);
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
		char *argv[] = { "serve", "--listen", listen, "--tool", "runqlat", "--tool",
				 "runqlat -P", NULL };

		snprintf(listen, sizeof(listen), "127.0.0.1:%d", port + i);
		tu_census_take(&before, "runqlat_", "runqlat_");
		k = tu_kagg_start(argv);
		assert_true(k.pid > 0);
		assert_true(wait_http(port + i, "/metrics", 30));
		m = http_get(port + i, "/metrics");
		assert_non_null(m);
		assert_non_null(strstr(m, "kagg_runqlat_seconds_count{tool_id=\"runqlat -P\""));
		assert_non_null(strstr(m, "kagg_runqlat_seconds_count{tool_id=\"runqlat\""));
		free(m);
		kill(k.pid, sigs[i]);
		assert_int_equal(tu_kagg_finish(&k, NULL, &err), 0);
		printf("  signal %d: %s", sigs[i], err ? err : "");
		free(err);
		tu_assert_nothing_left(&before, "runqlat_", "runqlat_", "kagg serve");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_clean_exit),
		cmocka_unit_test(test_prometheus),
		cmocka_unit_test(test_native),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
