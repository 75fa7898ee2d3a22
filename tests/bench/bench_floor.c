// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Holds one floor of tests/progs/bench_floor.bpf.c attached, so that a benchmark
 * script can read its BPF run time per event next to kagg's and the peer's
 * in the same run:
 *
 *   bench_floor [stacks|switch|sys_enter|sys_both|sys_lat|perf:HZ|uprobe:BINARY:FUNC] [SECONDS]
 *
 *   stacks	stack_floor on sched_switch: the two stack walks alone (offcpu.sh)
 *   switch	switch_floor on sched_switch: an off-CPU interval with one clock
 *		read and task storage, no aggregation (offcpu.sh)
 *   sys_enter	an empty program on raw_syscalls:sys_enter (syscount.sh, counts)
 *   sys_both	empty programs on sys_enter and sys_exit (syscount.sh, latency)
 *   sys_lat	a clock read into task storage at sys_enter, the difference at
 *		sys_exit: a syscall latency with no aggregation (syscount.sh)
 *   perf:HZ	perf_floor on a cpu-clock event at HZ on every CPU: the stack
 *		walks of a sampling profiler alone (profile.sh)
 *   uprobe:BINARY:FUNC  sys_lat's work from FUNC's entry and return probes
 *		(funclat.sh)
 *
 * Defaults: stacks for 1 s; SIGINT/SIGTERM end it early.  On exit it prints
 * each program's run time per event over the whole run (BPF_ENABLE_STATS).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void print_cost(struct bpf_program *prog, int stats_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!bpf_program__autoload(prog))
		return;
	if (stats_fd < 0 || bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len) ||
	    !info.run_cnt) {
		printf("bench_floor: %s: no run-time figures (%s)\n", bpf_program__name(prog),
		       stats_fd < 0 ? "BPF_ENABLE_STATS refused" : "no events");
		return;
	}
	printf("bench_floor: %s: %llu events, %.1f ns/event\n", bpf_program__name(prog),
	       (unsigned long long)info.run_cnt, (double)info.run_time_ns / info.run_cnt);
}

/* perf_floor on a cpu-clock event at hz on every CPU; links in links[], -errno. */
static int attach_perf(struct bench_floor_bpf *skel, long hz, struct bpf_link **links, int nr_cpus)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = hz,
	};
	int cpu, fd;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			return -errno;
		links[cpu] = bpf_program__attach_perf_event(skel->progs.perf_floor, fd);
		if (!links[cpu]) {
			close(fd);
			return -errno;
		}
	}
	return 0;
}

/* ulat_enter/ulat_exit on func of binary; links in links[0..1], -errno. */
static int attach_uprobes(struct bench_floor_bpf *skel, const char *binary, const char *func,
			  struct bpf_link **links)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = func);

	links[0] = bpf_program__attach_uprobe_opts(skel->progs.ulat_enter, -1, binary, 0, &o);
	if (!links[0])
		return -errno;
	o.retprobe = true;
	links[1] = bpf_program__attach_uprobe_opts(skel->progs.ulat_exit, -1, binary, 0, &o);
	return links[1] ? 0 : -errno;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "stacks";
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	bool stacks = !strcmp(what, "stacks"), both = !strcmp(what, "sys_both");
	bool sw = !strcmp(what, "switch");
	bool enter = both || !strcmp(what, "sys_enter"), lat = !strcmp(what, "sys_lat");
	long hz = !strncmp(what, "perf:", 5) ? atol(what + 5) : 0;
	const char *ufunc = !strncmp(what, "uprobe:", 7) ? strrchr(what, ':') + 1 : NULL;
	char ubin[4096] = "";
	int nr_cpus = libbpf_num_possible_cpus(), nr_links = 0, stats_fd, err, i;
	struct bpf_link **links = NULL;
	struct bench_floor_bpf *skel;

	if (ufunc && ufunc - what - 8 > 0 && (size_t)(ufunc - what - 8) < sizeof(ubin))
		memcpy(ubin, what + 7, ufunc - what - 8);
	if ((!stacks && !sw && !enter && !lat && hz <= 0 && !ubin[0]) || secs <= 0 ||
	    nr_cpus <= 0) {
		fprintf(stderr,
			"usage: bench_floor [stacks|switch|sys_enter|sys_both|sys_lat|perf:HZ|"
			"uprobe:BINARY:FUNC] [SECONDS]\n");
		return 2;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	skel = bench_floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "bench_floor: open: %s\n", strerror(errno));
		return 1;
	}
	bpf_program__set_autoload(skel->progs.stack_floor, stacks);
	bpf_program__set_autoload(skel->progs.switch_floor, sw);
	bpf_program__set_autoload(skel->progs.empty_sys_enter, enter);
	bpf_program__set_autoload(skel->progs.empty_sys_exit, both);
	bpf_program__set_autoload(skel->progs.perf_floor, hz > 0);
	bpf_program__set_autoload(skel->progs.lat_enter, lat);
	bpf_program__set_autoload(skel->progs.lat_exit, lat);
	bpf_program__set_autoload(skel->progs.ulat_enter, ubin[0]);
	bpf_program__set_autoload(skel->progs.ulat_exit, ubin[0]);
	if (!lat && !sw && !ubin[0])
		bpf_map__set_autocreate(skel->maps.lat_store, false);
	if (!stacks && !hz)
		bpf_map__set_max_entries(skel->maps.floor_stacks, 1);
	/* The perf program is attached by hand below; the skeleton attaches the rest. */
	err = bench_floor_bpf__load(skel);
	if (!err && hz) {
		nr_links = nr_cpus;
		links = calloc(nr_links, sizeof(*links));
		err = links ? attach_perf(skel, hz, links, nr_cpus) : -ENOMEM;
	} else if (!err && ubin[0]) {
		nr_links = 2;
		links = calloc(nr_links, sizeof(*links));
		err = links ? attach_uprobes(skel, ubin, ufunc, links) : -ENOMEM;
	} else if (!err) {
		err = bench_floor_bpf__attach(skel);
	}
	if (err) {
		fprintf(stderr, "bench_floor: load/attach: %s\n", strerror(-err));
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (long ms = 0; !stop && ms < (long)(secs * 1000); ms += 10)
		usleep(10000);
	print_cost(skel->progs.stack_floor, stats_fd);
	print_cost(skel->progs.switch_floor, stats_fd);
	print_cost(skel->progs.empty_sys_enter, stats_fd);
	print_cost(skel->progs.empty_sys_exit, stats_fd);
	print_cost(skel->progs.perf_floor, stats_fd);
	print_cost(skel->progs.lat_enter, stats_fd);
	print_cost(skel->progs.lat_exit, stats_fd);
	print_cost(skel->progs.ulat_enter, stats_fd);
	print_cost(skel->progs.ulat_exit, stats_fd);
	if ((stacks || hz) && skel->bss->failed)
		printf("bench_floor: %llu stack captures failed\n",
		       (unsigned long long)skel->bss->failed);
out:
	for (i = 0; links && i < nr_links; i++)
		bpf_link__destroy(links[i]);
	free(links);
	bench_floor_bpf__destroy(skel);
	if (stats_fd >= 0)
		close(stats_fd);
	return err ? 1 : 0;
}
