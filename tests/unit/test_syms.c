// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Stack symbolizer tests against real ground truth: functions of this binary (one named as
 * g++ names a method), libc (stripped: .dynsym only), the vdso, a deleted copy of this binary
 * running as a child (looked up while it runs, or after it exited once its maps were taken),
 * a file mapped after the maps were read, and /proc/kallsyms itself when it shows addresses.
 * Timings are printed, never asserted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "syms/syms.h"
#include "unit_util.h"

#define CHILD_ARG "--syms-child"

/* Where main() returns to: inside glibc's static __libc_start_call_main (glibc >= 2.34). */
static uint64_t main_ret;

/* Ground truth for user lookups: global, not inlined, not folded with anything else. */
__attribute__((noinline, used)) int kagg_test_target_fn(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

/* Named as g++ names int kagg_test::Syms::target(int): the demangler's ground truth. */
__attribute__((noinline, used)) int kagg_test_cxx_fn(int x) __asm__("_ZN9kagg_test4Syms6targetEi");
__attribute__((noinline, used)) int kagg_test_cxx_fn(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 5 + 2;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int setup(void **state)
{
	*state = syms__new();
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	syms__free(*state);
	return 0;
}

static void test_format(void **state)
{
	struct sym named = { .name = "schedule", .offset = 0x10, .module = "[kernel]" };
	struct sym mod = { .name = NULL, .offset = 0x1234, .module = "/usr/lib/libfoo.so" };
	struct sym unknown = { 0 };
	char buf[64], tiny[6];

	assert_string_equal(sym__format(&named, 0, SYM_ADDRS, buf, sizeof(buf)), "schedule+0x10");
	assert_string_equal(sym__format(&mod, 0, SYM_ADDRS, buf, sizeof(buf)),
			    "/usr/lib/libfoo.so+0x1234");
	assert_string_equal(sym__format(&unknown, 0xdead, SYM_ADDRS, buf, sizeof(buf)),
			    "[unknown] 0xdead");
	assert_string_equal(sym__format(NULL, 0x1, SYM_ADDRS, buf, sizeof(buf)), "[unknown] 0x1");
	assert_string_equal(sym__format(&named, 0, SYM_ADDRS, tiny, sizeof(tiny)), "sched");
	assert_ptr_equal(sym__format(&named, 0, SYM_ADDRS, buf, 0), buf);
}

/* By function (the default): what a flame graph merges on. */
static void test_format_by_function(void **state)
{
	struct sym named = { .name = "schedule", .offset = 0x10, .module = "[kernel]" };
	struct sym cxx = {
		.name = "_ZN2ns1C1fEi", .offset = 0x4, .module = "/bin/app", .func = "ns::C::f(int)"
	};
	struct sym mod = { .name = NULL, .offset = 0x1234, .module = "/usr/lib/libfoo.so" };
	struct sym vdso = { .name = NULL, .offset = 0x7bd, .module = "[vdso]" };
	struct sym unknown = { 0 };
	char buf[64];

	assert_string_equal(sym__format(&named, 0, 0, buf, sizeof(buf)), "schedule");
	assert_string_equal(sym__format(&cxx, 0, 0, buf, sizeof(buf)), "ns::C::f(int)");
	assert_string_equal(sym__format(&cxx, 0, SYM_ADDRS, buf, sizeof(buf)), "ns::C::f(int)+0x4");
	assert_string_equal(sym__format(&mod, 0, 0, buf, sizeof(buf)), "[libfoo.so]");
	assert_string_equal(sym__format(&vdso, 0, 0, buf, sizeof(buf)), "[vdso]");
	assert_string_equal(sym__format(&unknown, 0xdead, 0, buf, sizeof(buf)), "[unknown]");
	assert_string_equal(sym__format(NULL, 0x1, 0, buf, sizeof(buf)), "[unknown]");
}

static void test_bad_args(void **state)
{
	struct sym out;

	assert_int_equal(syms__user(NULL, getpid(), 0, &out), -EINVAL);
	assert_int_equal(syms__user(*state, 0, 0, &out), -EINVAL);
	assert_int_equal(syms__user(*state, getpid(), 0, NULL), -EINVAL);
	assert_int_equal(syms__kernel(NULL, 0, &out), -EINVAL);
	syms__free(NULL);
	syms__forget_pid(NULL, 1);
}

static void test_user_self_func(void **state)
{
	uint64_t addr = (uintptr_t)&kagg_test_target_fn;
	struct sym out;
	Dl_info info;
	char buf[256];

	assert_int_equal(syms__user(*state, getpid(), addr, &out), 0);
	assert_non_null(out.name);
	assert_string_equal(out.name, "kagg_test_target_fn");
	assert_int_equal(out.offset, 0);
	assert_non_null(out.module);
	assert_non_null(strstr(out.module, "test_syms"));

	assert_int_equal(syms__user(*state, getpid(), addr + 2, &out), 0);
	assert_string_equal(out.name, "kagg_test_target_fn");
	assert_int_equal(out.offset, 2);
	assert_string_equal(sym__format(&out, addr + 2, SYM_ADDRS, buf, sizeof(buf)),
			    "kagg_test_target_fn+0x2");

	/* the ELF header of this binary: mapped, but before every symbol */
	assert_true(dladdr((void *)&kagg_test_target_fn, &info));
	assert_int_equal(syms__user(*state, getpid(), (uintptr_t)info.dli_fbase, &out), -ENOENT);
	assert_null(out.name);
	assert_non_null(strstr(out.module, "test_syms"));
	assert_int_equal(out.offset, 0);

	/* a hidden library function: a local in .symtab, absent from .dynsym */
	assert_int_equal(syms__user(*state, getpid(), (uintptr_t)&syms__user, &out), 0);
	assert_string_equal(out.name, "syms__user");
	assert_ptr_equal(out.func, out.name); /* nothing to make readable */
}

/* A C++ symbol: the table's name stays as it is, func is demangled. */
static void test_user_demangled(void **state)
{
	uint64_t addr = (uintptr_t)&kagg_test_cxx_fn;
	struct sym out;
	char buf[256];

	assert_int_equal(syms__user(*state, getpid(), addr + 1, &out), 0);
	assert_string_equal(out.name, "_ZN9kagg_test4Syms6targetEi");
	assert_string_equal(out.func, "kagg_test::Syms::target(int)");
	assert_string_equal(sym__format(&out, addr + 1, 0, buf, sizeof(buf)),
			    "kagg_test::Syms::target(int)");
	assert_string_equal(sym__format(&out, addr + 1, SYM_ADDRS, buf, sizeof(buf)),
			    "kagg_test::Syms::target(int)+0x1");
	/* the second lookup hands out the same cached string */
	assert_int_equal(syms__user(*state, getpid(), addr, &out), 0);
	assert_string_equal(out.func, "kagg_test::Syms::target(int)");
}

/* File offset of addr in the file mapped there, from /proc/self/maps. */
static uint64_t self_file_offset(uint64_t addr)
{
	unsigned long long start, end, pgoff;
	uint64_t off = UINT64_MAX;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %*s %llx", &start, &end, &pgoff) == 3 &&
		    addr >= start && addr < end)
			off = addr - start + pgoff;
	fclose(f);
	assert_int_not_equal(off, UINT64_MAX);
	return off;
}

/* An image in memory (this binary, read whole) symbolizes like its mapping; junk does not. */
static void test_image(void **state)
{
	uint64_t off = self_file_offset((uintptr_t)&kagg_test_target_fn);
	struct sym out;
	struct stat st;
	char *img;
	int fd = open("/proc/self/exe", O_RDONLY);

	assert_true(fd >= 0 && !fstat(fd, &st));
	img = malloc((size_t)st.st_size);
	assert_int_equal(read(fd, img, (size_t)st.st_size), st.st_size);
	close(fd);
	assert_int_equal(syms__image(*state, img, (size_t)st.st_size, off + 3, &out), 0);
	assert_string_equal(out.name, "kagg_test_target_fn");
	assert_int_equal(out.offset, 3);
	/* cut after the ELF header: the section table is gone, nothing resolves */
	assert_int_not_equal(syms__image(*state, img, 64, off, &out), 0);
	assert_null(out.name);
	memset(img, 'x', 64);
	assert_int_equal(syms__image(*state, img, (size_t)st.st_size, off, &out), -ENOEXEC);
	free(img);
	assert_int_equal(syms__image(*state, NULL, 0, 0, &out), -EINVAL);
}

static void test_user_libc(void **state)
{
	void *fn = dlsym(RTLD_DEFAULT, "nanosleep");
	struct sym out;

	assert_non_null(fn);
	assert_int_equal(syms__user(*state, getpid(), (uintptr_t)fn + 3, &out), 0);
	assert_non_null(out.name);
	assert_int_equal(out.offset, 3);
	/* libc exports nanosleep and __nanosleep at one address: either is right */
	assert_ptr_equal(dlsym(RTLD_DEFAULT, out.name), fn);
	assert_true(!strcmp(out.name, "nanosleep") || !strcmp(out.name, "__nanosleep"));
	assert_non_null(strstr(out.module, "libc"));
	print_message("libc: nanosleep+3 -> %s+0x%" PRIx64 " in %s\n", out.name, out.offset,
		      out.module);
}

/* A static libc function: only in the detached debug file (Debian libc6-dbg), by build-id. */
static void test_user_libc_debuginfo(void **state)
{
	struct sym out;
	int err;

	err = syms__user(*state, getpid(), main_ret, &out);
	if (err == -ENOENT) {
		print_message("skip: no libc debuginfo under /usr/lib/debug/.build-id "
			      "(libc6-dbg not installed)\n");
		skip();
	}
	assert_int_equal(err, 0);
	assert_string_equal(out.name, "__libc_start_call_main");
	assert_true(out.offset > 0);
	assert_non_null(strstr(out.module, "libc"));
}

static void test_user_vdso(void **state)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), a;
	struct sym out;
	int found = 0;

	if (!base) {
		print_message("skip: no vdso in this process\n");
		skip();
	}
	for (a = base; a < base + 4 * 4096 && !found; a += 4) {
		int err = syms__user(*state, getpid(), a, &out);

		if (err == -ENOENT && !out.module)
			break; /* walked off the vdso */
		if (err)
			continue;
		assert_string_equal(out.module, "[vdso]");
		assert_true(strstr(out.name, "time") || strstr(out.name, "getcpu"));
		print_message("vdso: 0x%" PRIx64 " -> %s+0x%" PRIx64 "\n", a, out.name, out.offset);
		found = 1;
	}
	assert_true(found);
}

static void test_user_unmapped(void **state)
{
	struct sym out;
	char buf[64];
	void *anon;

	assert_int_equal(syms__user(*state, getpid(), 0x1000, &out), -ENOENT);
	assert_null(out.name);
	assert_null(out.module);
	assert_string_equal(sym__format(&out, 0x1000, SYM_ADDRS, buf, sizeof(buf)),
			    "[unknown] 0x1000");

	syms__forget_pid(*state, getpid()); /* re-read maps to see the new mapping */
	anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(anon != MAP_FAILED);
	assert_int_equal(syms__user(*state, getpid(), (uintptr_t)anon + 8, &out), -ENOENT);
	assert_null(out.module);
	munmap(anon, 4096);
}

static void test_user_dead_pid(void **state)
{
	struct sym out;
	siginfo_t info;
	int status;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	/* a zombie still has /proc/PID but no address space: wait for it, do not reap it */
	assert_int_equal(waitid(P_PID, pid, &info, WEXITED | WNOWAIT), 0);
	assert_int_equal(syms__user(*state, pid, (uintptr_t)&kagg_test_target_fn, &out), -ESRCH);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(syms__user(*state, pid, (uintptr_t)&kagg_test_target_fn, &out), -ESRCH);
}

static int copy_self(char *path)
{
	int in = -1, out = -1, err = -1;
	struct stat st;
	off_t off = 0;

	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	out = mkostemp(path, O_CLOEXEC);
	if (in < 0 || out < 0 || fstat(in, &st))
		goto cleanup;
	while (off < st.st_size)
		if (sendfile(out, in, &off, st.st_size - off) <= 0)
			goto cleanup;
	err = fchmod(out, 0700);
cleanup:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return err;
}

/* Start a deleted copy of this binary; *addr: kagg_test_target_fn in it. */
static pid_t start_deleted_child(uint64_t *addr)
{
	char path[] = "/tmp/kagg_test_syms_XXXXXX", fdarg[16];
	int fds[2];
	pid_t pid;

	assert_int_equal(copy_self(path), 0);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(fds[0]);
		snprintf(fdarg, sizeof(fdarg), "%d", fds[1]);
		execl(path, path, CHILD_ARG, fdarg, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], addr, sizeof(*addr)), sizeof(*addr));
	close(fds[0]);
	unlink(path);
	return pid;
}

/* Another process (own PIE base) running a file deleted after it started. */
static void test_user_deleted_child(void **state)
{
	struct sym out;
	uint64_t addr = 0;
	int status;
	pid_t pid;

	UU_SKIP_UNDER_EMULATION("a child's maps are the emulator's");

	pid = start_deleted_child(&addr);
	assert_int_equal(syms__user(*state, pid, addr + 2, &out), 0);
	assert_string_equal(out.name, "kagg_test_target_fn");
	assert_int_equal(out.offset, 2);
	assert_non_null(strstr(out.module, "(deleted)"));

	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* cached maps outlive the process until forgotten */
	assert_int_equal(syms__user(*state, pid, addr, &out), 0);
	assert_string_equal(out.name, "kagg_test_target_fn");
	syms__forget_pid(*state, pid);
	assert_int_equal(syms__user(*state, pid, addr, &out), -ESRCH);
}

/*
 * syms__forget_gone: a process gone at one call keeps its maps until the next (the
 * lookups between them may still need it), and loses them then; a live one keeps them.  The
 * files only the dropped process mapped (here its deleted executable) go with it; the ones a
 * live process maps stay.
 */
static void test_forget_gone(void **state)
{
	uint64_t self = (uintptr_t)&kagg_test_target_fn, addr = 0;
	struct sym out;
	size_t files;
	int status;
	pid_t pid;

	UU_SKIP_UNDER_EMULATION("a child's maps are the emulator's");

	pid = start_deleted_child(&addr);
	assert_int_equal(syms__add_pid(*state, pid), 0);
	assert_int_equal(syms__add_pid(*state, getpid()), 0);
	assert_int_equal(syms__forget_gone(*state), 0); /* both alive */
	files = syms__nr_files(*state);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);

	assert_int_equal(syms__forget_gone(*state), 0); /* found gone: marked */
	assert_int_equal(syms__nr_files(*state), files);
	assert_int_equal(syms__user(*state, pid, addr, &out), 0);
	assert_string_equal(out.name, "kagg_test_target_fn");
	assert_int_equal(syms__forget_gone(*state), 1); /* gone at the previous call */
	/* the child's deleted copy of this program: mapped by no one left */
	assert_int_equal(syms__nr_files(*state), files - 1);
	assert_int_equal(syms__user(*state, pid, addr, &out), -ESRCH);
	assert_int_equal(syms__user(*state, getpid(), self, &out), 0);
	assert_string_equal(out.name, "kagg_test_target_fn");
	assert_int_equal(syms__forget_gone(*state), 0);
	assert_int_equal(syms__nr_files(*state), files - 1);
	assert_int_equal(syms__forget_gone(NULL), 0);
	assert_int_equal(syms__nr_files(NULL), 0);
}

/*
 * syms__add_pid while the process lives, lookups after it is gone: its maps were kept
 * and its deleted executable read at once (it could not be reopened by path later).
 */
static void test_user_add_pid_outlives_process(void **state)
{
	struct syms *late;
	struct sym out;
	uint64_t addr = 0;
	int status;
	pid_t pid;

	UU_SKIP_UNDER_EMULATION("a child's maps are the emulator's");

	late = syms__new();
	assert_non_null(late);
	pid = start_deleted_child(&addr);
	assert_int_equal(syms__add_pid(*state, pid), 0);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);

	assert_int_equal(syms__user(*state, pid, addr + 2, &out), 0);
	assert_string_equal(out.name, "kagg_test_target_fn");
	assert_int_equal(out.offset, 2);
	assert_non_null(strstr(out.module, "(deleted)"));
	/* without it, nothing is left to read */
	assert_int_equal(syms__user(late, pid, addr + 2, &out), -ESRCH);
	assert_int_equal(syms__add_pid(late, pid), -ESRCH);
	assert_int_equal(syms__add_pid(*state, 0), -EINVAL);
	syms__free(late);
}

/* A file mapped after the maps were cached is found after syms__recheck_maps(). */
static void test_user_recheck_maps(void **state)
{
	uint64_t self = (uintptr_t)&kagg_test_target_fn;
	struct sym out;
	long page = sysconf(_SC_PAGESIZE);
	void *p;
	int fd;

	assert_int_equal(syms__user(*state, getpid(), self, &out), 0); /* maps cached */
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	p = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	assert_int_equal(syms__user(*state, getpid(), (uintptr_t)p + 16, &out), -ENOENT);
	assert_null(out.module);
	syms__recheck_maps(*state);
	assert_int_equal(syms__user(*state, getpid(), (uintptr_t)p + 16, &out), -ENOENT);
	assert_non_null(out.module); /* the ELF header: mapped now, before every symbol */
	assert_non_null(strstr(out.module, "test_syms"));
	assert_int_equal(out.offset, 16);
	munmap(p, page);
}

static int child_main(int fd)
{
	uint64_t addr = (uintptr_t)&kagg_test_target_fn;

	if (write(fd, &addr, sizeof(addr)) != sizeof(addr))
		return 1;
	close(fd);
	for (;;)
		pause();
}

/* Read "ADDR T name" for name out of /proc/kallsyms the slow, obvious way. */
static int kallsyms_find(const char *want, uint64_t *addr, char *mod, size_t modlen)
{
	char line[512], name[256], m[128];
	unsigned long long a;
	char type;
	FILE *f;
	int n, err = -ENOENT;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		m[0] = '\0';
		n = sscanf(line, "%llx %c %255s [%127[^]]]", &a, &type, name, m);
		if (n < 3 || (type != 'T' && type != 't'))
			continue;
		if (want ? strcmp(name, want) : !m[0])
			continue;
		*addr = a;
		if (mod)
			snprintf(mod, modlen, "%s", m);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

static void test_kernel_known(void **state)
{
	struct sym out;
	uint64_t addr;
	char buf[128];

	assert_int_equal(kallsyms_find("schedule", &addr, NULL, 0), 0);
	if (!addr) {
		print_message("skip: /proc/kallsyms shows zero addresses (unprivileged)\n");
		assert_int_equal(syms__kernel(*state, 0xffffffff81000000ull, &out), -ENOENT);
		skip();
	}
	assert_int_equal(syms__kernel(*state, addr, &out), 0);
	assert_string_equal(out.name, "schedule");
	assert_int_equal(out.offset, 0);
	assert_string_equal(out.module, "[kernel]");

	assert_int_equal(syms__kernel(*state, addr + 0x10, &out), 0);
	assert_string_equal(out.name, "schedule");
	assert_int_equal(out.offset, 0x10);
	assert_string_equal(sym__format(&out, addr + 0x10, SYM_ADDRS, buf, sizeof(buf)),
			    "schedule+0x10");

	/* before the first symbol */
	assert_int_equal(syms__kernel(*state, 0x1000, &out), -ENOENT);
	assert_null(out.name);
	assert_string_equal(sym__format(&out, 0x1000, SYM_ADDRS, buf, sizeof(buf)),
			    "[unknown] 0x1000");
}

static void test_kernel_module(void **state)
{
	struct sym out;
	char mod[128];
	uint64_t addr;

	if (kallsyms_find(NULL, &addr, mod, sizeof(mod)) || !addr) {
		print_message("skip: no module text symbol with an address in /proc/kallsyms\n");
		skip();
	}
	assert_int_equal(syms__kernel(*state, addr + 1, &out), 0);
	assert_int_equal(out.offset, 1);
	assert_string_equal(out.module, mod);
	print_message("module: 0x%" PRIx64 " -> %s+0x%" PRIx64 " [%s]\n", addr + 1, out.name,
		      out.offset, out.module);
}

static void test_timing(void **state)
{
	struct syms *s = syms__new();
	uint64_t addr = 0, a, self = (uintptr_t)&kagg_test_target_fn;
	struct sym out;
	double t0, t1, t2;
	int i, err, n = 1000000;

	assert_non_null(s);
	kallsyms_find("schedule", &addr, NULL, 0);
	t0 = now_ms();
	err = syms__kernel(s, addr, &out);
	t1 = now_ms();
	print_message("kallsyms load + first lookup: %.1f ms (err %d)\n", t1 - t0, err);
	if (!err) {
		for (i = 0, a = addr; i < n; i++, a += 0x9e37)
			syms__kernel(s, a, &out);
		t2 = now_ms();
		print_message("kernel lookup: %.0f ns each\n", (t2 - t1) * 1e6 / n);
	}

	t0 = now_ms();
	err = syms__user(s, getpid(), self, &out);
	t1 = now_ms();
	print_message("user maps + ELF load + first lookup: %.2f ms (err %d)\n", t1 - t0, err);
	for (i = 0; i < n; i++)
		syms__user(s, getpid(), self + (i & 63), &out);
	t2 = now_ms();
	print_message("user lookup: %.0f ns each\n", (t2 - t1) * 1e6 / n);
	syms__free(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_format_by_function),
		KT_TEST_FIXTURE(test_bad_args),
		KT_TEST_FIXTURE(test_user_self_func),
		KT_TEST_FIXTURE(test_user_demangled),
		KT_TEST_FIXTURE(test_image),
		KT_TEST_FIXTURE(test_user_libc),
		KT_TEST_FIXTURE(test_user_libc_debuginfo),
		KT_TEST_FIXTURE(test_user_vdso),
		KT_TEST_FIXTURE(test_user_unmapped),
		KT_TEST_FIXTURE(test_user_dead_pid),
		KT_TEST_FIXTURE(test_user_deleted_child),
		KT_TEST_FIXTURE(test_user_add_pid_outlives_process),
		KT_TEST_FIXTURE(test_forget_gone),
		KT_TEST_FIXTURE(test_user_recheck_maps),
		KT_TEST_FIXTURE(test_kernel_known),
		KT_TEST_FIXTURE(test_kernel_module),
		cmocka_unit_test(test_timing),
	};

	main_ret = (uintptr_t)__builtin_return_address(0);
	if (argc == 3 && !strcmp(argv[1], CHILD_ARG))
		return child_main(atoi(argv[2]));
	return cmocka_run_group_tests_name("syms", tests, NULL, NULL);
}
