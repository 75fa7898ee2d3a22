// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The baseline of tests/bench/startup.sh: a bare libbpf skeleton open, load
 * and attach of the offcpu BPF object, configured as kagg_offcpu__open()
 * configures it for a system-wide usecs histogram (same rodata, same
 * program, same map sizes), so the difference measured is libkagg's own
 * start-up work.  Prints the CLOCK_REALTIME time at which it was attached
 * ("attached NS") and exits; the kernel detaches on exit.
 *
 * Run alone (make bench runs every tests/bench binary) it prints how long
 * its own open/load/attach took.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "shared/offcpu.h"
#include "offcpu.skel.h"

static long long now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	long long t0 = now_ns(CLOCK_MONOTONIC);
	struct offcpu_bpf *skel;
	int err;

	skel = offcpu_bpf__open();
	if (!skel) {
		fprintf(stderr, "bare_offcpu: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->key_mode = 0;
	skel->rodata->state_mask = OFFCPU_ST_ALL;
	skel->rodata->max_ns = ~0ULL;
	skel->rodata->unit_ns = 1000;
	skel->rodata->unit_ns_log2 = 9;
	bpf_program__set_autoload(skel->progs.offcpu_tp_btf, true);
	bpf_program__set_autoload(skel->progs.offcpu_raw_tp, false);
	bpf_program__set_autoload(skel->progs.offcpu_stream_tp_btf, false);
	bpf_program__set_autoload(skel->progs.offcpu_stream_raw_tp, false);
	bpf_map__set_max_entries(skel->maps.events, 4096);
	bpf_map__set_max_entries(skel->maps.start_hash, 1);
	bpf_map__set_max_entries(skel->maps.key_hist, 1);
	bpf_map__set_max_entries(skel->maps.stack_agg, 1);
	bpf_map__set_max_entries(skel->maps.stackmap, 1);
	bpf_map__set_max_entries(skel->maps.tgids, 1);
	bpf_map__set_max_entries(skel->maps.tids, 1);
	err = offcpu_bpf__load(skel);
	if (!err)
		err = offcpu_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "bare_offcpu: load/attach: %s\n", strerror(-err));
		offcpu_bpf__destroy(skel);
		return 1;
	}
	skel->bss->armed = 1;
	printf("attached %lld\n", now_ns(CLOCK_REALTIME));
	if (getenv("CLI_EXIT_AFTER_ATTACH")) {
		fflush(stdout);
		_exit(0);
	}
	printf("bare_offcpu: open+load+attach %.1f ms (tests/bench/startup.sh compares it with "
	       "libkagg)\n",
	       (now_ns(CLOCK_MONOTONIC) - t0) / 1e6);
	offcpu_bpf__destroy(skel);
	return 0;
}
