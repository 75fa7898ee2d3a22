// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target: the input as a trace.dat file (a memfd opened through
 * /proc/self/fd), opened and printed whole as `kagg report` does; an error
 * offset must lie inside the file.
 *
 * Seeds (corpus/fuzz_tracedat): small files of our writer (one and two CPUs,
 * a loss count, a TRACECLOCK option, saved cmdlines, formats of the sched
 * replicas and a kernel format).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <kagg/tracedat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	uint64_t where = UINT64_MAX;
	KAGG_OPTS(kagg_tracedat_opts, o, .error_offset = &where);
	struct kagg_tracedat *t;
	char path[64];
	int fd, cpu;
	long n;

	if (!null)
		null = fopen("/dev/null", "w");
	fd = memfd_create("fuzz.dat", MFD_CLOEXEC);
	if (fd < 0 || !null || write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	t = kagg_tracedat__open(path, &o);
	close(fd);
	if (!t) {
		/* the end of the file is where a truncated one went wrong */
		if (errno == EINVAL && size >= 16 && where > size)
			abort();
		return 0;
	}
	for (cpu = 0; cpu < kagg_tracedat__nr_cpus(t); cpu++) {
		uint64_t off, len;

		if (kagg_tracedat__cpu_data(t, cpu, &off, &len) || (len && off + len > size))
			abort();
	}
	kagg_tracedat__comm(t, 1);
	kagg_tracedat__trace_clock(t);
	n = kagg_tracedat__fprint(t, null, -1);
	if (n < 0 && kagg_tracedat__error_offset(t) >= size)
		abort();
	kagg_tracedat__free(t);
	return 0;
}
