// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Building unwind tables (user/unwind/table.c, docs/stacks.md): for every executable file
 * a whole process maps, the time and memory to compile its call frame information
 * (.eh_frame, .debug_frame) into rows, per MiB of CFI, and for the process as a whole.
 *
 * The processes are Debian's own xz and python3, started reading a pipe (so they live
 * while their maps are read; their stdin is closed after).  The floor, measured in the same
 * run on the same bytes: reading the file's CFI sections once (a byte sum over them), the
 * least any table builder must do.  Each file's build is timed in thread CPU time, the
 * median of BENCH_ROUNDS (5) builds; memory is the rows kept (8 bytes each), and the bench
 * process's peak RSS bounds what the builder held while it worked.  Prints figures;
 * asserts nothing; exits 1 when a process could not be measured.
 *
 *   build/tests/bench/bench_unwind_build [/PATH/TO/PROGRAM ...]
 *   (default: /usr/bin/xz /usr/bin/python3; the process is measured once it runs the
 *   program, links resolved, and has libc mapped)
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unwind/table.h"

#define MAX_FILES 256
#define MIB (1024.0 * 1024.0)

struct file_fig {
	char path[512];
	uint64_t cfi;	 /* bytes of .eh_frame + .debug_frame */
	double build_ms; /* median thread CPU time of one build */
	double floor_ms; /* median thread CPU time of reading the CFI once */
	uint64_t rows;	 /* rows of the table */
};

static volatile uint64_t floor_sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Bytes of elf's CFI sections, and (sum) their bytes added up: the floor's work. */
static uint64_t cfi_read(Elf *elf, uint64_t *sum)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx, i;
	uint64_t n = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, ".eh_frame") && strcmp(name, ".debug_frame")))
			continue;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		for (i = 0; i < d->d_size; i++)
			*sum += ((const unsigned char *)d->d_buf)[i];
		n += d->d_size;
	}
	return n;
}

/* Measure one file: 0, or -1 when it has no CFI or cannot be read. */
static int measure(const char *path, int rounds, struct file_fig *f)
{
	double build[16], floor[16], t0;
	uint64_t sum = 0;
	int fd, r, err = 0;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%.511s", path);
	for (r = 0; r < rounds && !err; r++) {
		struct unw_table t = {};

		t0 = cpu_ms();
		f->cfi = cfi_read(elf, &sum);
		floor[r] = cpu_ms() - t0;
		t0 = cpu_ms();
		err = unw_build_elf(elf, &t);
		build[r] = cpu_ms() - t0;
		f->rows = t.nr;
		unw_table_free(&t);
	}
	elf_end(elf);
	close(fd);
	if (err || !f->cfi)
		return -1;
	f->build_ms = median(build, rounds);
	f->floor_ms = median(floor, rounds);
	floor_sink += sum; /* the floor's reads are not optimized away */
	return 0;
}

/* Start prog reading a pipe: its pid, *wfd the pipe's write end; -1 on failure. */
static pid_t start_reader(const char *prog, const char *const args[], int *wfd)
{
	char line[4096], path[64], *real = realpath(prog, NULL);
	int p[2], tries;
	pid_t pid;

	if (!real || pipe(p)) {
		free(real);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(p[0], 0);
		dup2(null, 1);
		close(p[1]);
		execvp(prog, (char *const *)args);
		_exit(127);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	*wfd = p[1];
	/* exec'd (its exe is prog) and mapped once the dynamic loader is done (libc is in) */
	for (tries = 0; tries < 500; tries++) {
		char exe[512] = "";
		ssize_t len;
		FILE *m;
		int libc = 0;

		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		len = readlink(path, exe, sizeof(exe) - 1);
		if (len > 0 && !strcmp(exe, real)) {
			snprintf(path, sizeof(path), "/proc/%d/maps", pid);
			m = fopen(path, "re");
			while (m && fgets(line, sizeof(line), m))
				libc |= strstr(line, "/libc.so") != NULL;
			if (m)
				fclose(m);
			if (libc) {
				free(real);
				return pid;
			}
		}
		usleep(10000);
	}
	fprintf(stderr, "unwind build bench: %s did not start\n", prog);
	free(real);
	kill(pid, SIGKILL);
	close(p[1]);
	waitpid(pid, NULL, 0);
	return -1;
}

/* The executable file mappings of pid, each once. */
static int exec_files(pid_t pid, char files[][512], int max)
{
	char line[4096], path[64], name[512], perms[8];
	int n = 0, i, dup;
	FILE *m;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	m = fopen(path, "re");
	if (!m)
		return -errno;
	while (fgets(line, sizeof(line), m) && n < max) {
		name[0] = '\0';
		if (sscanf(line, "%*x-%*x %7s %*x %*x:%*x %*u %511[^\n]", perms, name) < 2 ||
		    perms[2] != 'x' || name[0] != '/')
			continue;
		for (i = 0, dup = 0; i < n; i++)
			dup |= !strcmp(files[i], name);
		if (!dup)
			snprintf(files[n++], 512, "%s", name);
	}
	fclose(m);
	return n;
}

static int bench_process(const char *prog, int rounds)
{
	static char files[MAX_FILES][512];
	static struct file_fig fig[MAX_FILES];
	const char *xz_args[] = { prog, "-c", NULL };
	const char *py_args[] = { prog, "-c", "import sys, json, re; sys.stdin.read()", NULL };
	const char *plain[] = { prog, NULL };
	const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	const char *const *args = !strcmp(base, "xz")		? xz_args
				  : !strncmp(base, "python", 6) ? py_args
								: plain;
	double build = 0, floor = 0;
	uint64_t cfi = 0, rows = 0;
	struct rusage ru;
	int wfd = -1, n, i, done = 0, st;
	pid_t pid;

	pid = start_reader(prog, args, &wfd);
	if (pid < 0) {
		fprintf(stderr, "unwind build bench: cannot start %s\n", prog);
		return 1;
	}
	n = exec_files(pid, files, MAX_FILES);
	close(wfd);
	if (n <= 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		fprintf(stderr, "unwind build bench: no mappings read for %s\n", prog);
		return 1;
	}
	printf("%s (pid %d): %d executable files\n", prog, pid, n);
	printf("  %-44s %9s %9s %9s %9s %9s %10s\n", "file", "CFI KiB", "build ms", "ms/MiB",
	       "x floor", "rows", "KiB/MiB");
	for (i = 0; i < n; i++) {
		struct file_fig *f = &fig[done];
		const char *base;

		if (measure(files[i], rounds, f))
			continue;
		base = strrchr(f->path, '/');
		printf("  %-44.44s %9.1f %9.2f %9.1f %9.1f %9llu %10.1f\n",
		       base ? base + 1 : f->path, f->cfi / 1024.0, f->build_ms,
		       f->build_ms / (f->cfi / MIB),
		       f->floor_ms > 0 ? f->build_ms / f->floor_ms : 0.0,
		       (unsigned long long)f->rows, f->rows * 8 / 1024.0 / (f->cfi / MIB));
		build += f->build_ms;
		floor += f->floor_ms;
		cfi += f->cfi;
		rows += f->rows;
		done++;
	}
	waitpid(pid, &st, 0);
	if (!done || !cfi) {
		fprintf(stderr, "unwind build bench: no table built for %s\n", prog);
		return 1;
	}
	printf("  whole process: %.2f MiB of CFI in %d files, built in %.1f ms of CPU "
	       "(%.1f ms per MiB, %.1fx reading the CFI once); %llu rows, %.1f KiB "
	       "(%.1f KiB per MiB of CFI)\n",
	       cfi / MIB, done, build, build / (cfi / MIB), floor > 0 ? build / floor : 0.0,
	       (unsigned long long)rows, rows * 8 / 1024.0, rows * 8 / 1024.0 / (cfi / MIB));
	/* the builder's working memory: what the bench process peaked at, all builds so far */
	if (!getrusage(RUSAGE_SELF, &ru))
		printf("  bench process peak RSS so far: %.1f MiB\n", ru.ru_maxrss / 1024.0);
	return 0;
}

int main(int argc, char **argv)
{
	const char *defaults[] = { "/usr/bin/xz", "/usr/bin/python3" };
	const char *env = getenv("BENCH_ROUNDS");
	int rounds = env ? atoi(env) : 5, rc = 0, i;

	if (rounds < 1 || rounds > 16) {
		fprintf(stderr, "unwind build bench: BENCH_ROUNDS must be 1 to 16\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	printf("unwind table build: median of %d builds per file, thread CPU time; floor: "
	       "reading the file's CFI once\n",
	       rounds);
	if (argc > 1)
		for (i = 1; i < argc; i++)
			rc |= bench_process(argv[i], rounds);
	else
		for (i = 0; i < 2; i++)
			rc |= bench_process(defaults[i], rounds);
	return rc;
}
