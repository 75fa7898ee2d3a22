// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Holds bpf/stack_floor.bpf.c attached to sched_switch: the cost of the two
 * stack walks an off-CPU stack profiler makes per switch-out, with nothing
 * else around them.  tests/bench/offcpu.sh runs it next to offcputime and
 * `kagg offcpu --stacks` and reads its run time per event like theirs.
 *
 *   stack_floor [SECONDS]	(default 1; SIGINT/SIGTERM end it early)
 *
 * On exit it prints its own BPF run time per event over the whole run
 * (BPF_ENABLE_STATS) and how many captures failed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "stack_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct stack_floor_bpf *skel;
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	int stats_fd, err;

	if (secs <= 0) {
		fprintf(stderr, "usage: stack_floor [SECONDS]\n");
		return 2;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	skel = stack_floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "stack_floor: load: %s\n", strerror(errno));
		return 1;
	}
	err = stack_floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "stack_floor: attach: %s\n", strerror(-err));
		stack_floor_bpf__destroy(skel);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (long ms = 0; !stop && ms < (long)(secs * 1000); ms += 10)
		usleep(10000);
	err = bpf_prog_get_info_by_fd(bpf_program__fd(skel->progs.stack_floor), &info, &len);
	if (!err && stats_fd >= 0 && info.run_cnt)
		printf("stack_floor: %llu events, %.1f ns/event (kernel + user stack walks "
		       "only), %llu captures failed\n",
		       (unsigned long long)info.run_cnt, (double)info.run_time_ns / info.run_cnt,
		       (unsigned long long)skel->bss->failed);
	else
		printf("stack_floor: no run-time figures (%s)\n",
		       stats_fd < 0 ? "BPF_ENABLE_STATS refused" : "no events");
	stack_floor_bpf__destroy(skel);
	if (stats_fd >= 0)
		close(stats_fd);
	return 0;
}
