// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * jit_target SECONDS: JIT-like code for the perf-map tests (tests/bpf/test_symsrc.c).  It
 * copies a spinning loop into anonymous executable memory, names it "jit_spin" in
 * /tmp/perf-PID.map (as V8 --perf-basic-prof does), calls it until SECONDS have passed,
 * removes the map file and exits.  x86-64 only (the loop is machine code): elsewhere it
 * exits 77.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
#if defined(__x86_64__)
	/* mov ecx, 0x100000; 1: dec ecx; jnz 1b; ret */
	static const uint8_t loop[] = {
		0xb9, 0x00, 0x00, 0x10, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3
	};
	char path[64];
	double end;
	uint8_t *code;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: jit_target SECONDS\n");
		return 2;
	}
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, loop, sizeof(loop));
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_spin\n", (unsigned long)(uintptr_t)code, sizeof(loop));
	fclose(f);
	end = now_s() + atof(argv[1]);
	while (now_s() < end)
		((void (*)(void))code)();
	unlink(path);
	return 0;
#else
	(void)argc;
	(void)argv;
	(void)now_s;
	return 77;
#endif
}
