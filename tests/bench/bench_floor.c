// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Holds one floor of bpf/bench_floor.bpf.c attached, so that a benchmark
 * script can read its BPF run time per event next to kagg's and the peer's
 * in the same run:
 *
 *   bench_floor [stacks|sys_enter|sys_both] [SECONDS]
 *
 *   stacks	stack_floor on sched_switch: the two stack walks alone (offcpu.sh)
 *   sys_enter	an empty program on raw_syscalls:sys_enter (syscount.sh, counts)
 *   sys_both	empty programs on sys_enter and sys_exit (syscount.sh, latency)
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

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "stacks";
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	bool stacks = !strcmp(what, "stacks"), both = !strcmp(what, "sys_both");
	bool enter = both || !strcmp(what, "sys_enter");
	struct bench_floor_bpf *skel;
	int stats_fd, err;

	if ((!stacks && !enter) || secs <= 0) {
		fprintf(stderr, "usage: bench_floor [stacks|sys_enter|sys_both] [SECONDS]\n");
		return 2;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	skel = bench_floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "bench_floor: open: %s\n", strerror(errno));
		return 1;
	}
	bpf_program__set_autoload(skel->progs.stack_floor, stacks);
	bpf_program__set_autoload(skel->progs.empty_sys_enter, enter);
	bpf_program__set_autoload(skel->progs.empty_sys_exit, both);
	if (!stacks)
		bpf_map__set_max_entries(skel->maps.floor_stacks, 1);
	err = bench_floor_bpf__load(skel) ?: bench_floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "bench_floor: load/attach: %s\n", strerror(-err));
		bench_floor_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (long ms = 0; !stop && ms < (long)(secs * 1000); ms += 10)
		usleep(10000);
	print_cost(skel->progs.stack_floor, stats_fd);
	print_cost(skel->progs.empty_sys_enter, stats_fd);
	print_cost(skel->progs.empty_sys_exit, stats_fd);
	if (stacks && skel->bss->failed)
		printf("bench_floor: %llu stack captures failed\n",
		       (unsigned long long)skel->bss->failed);
	bench_floor_bpf__destroy(skel);
	if (stats_fd >= 0)
		close(stats_fd);
	return 0;
}
