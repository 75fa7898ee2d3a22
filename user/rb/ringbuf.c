// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Per-CPU ring buffer in the ftrace record format: the mechanism.
 *
 * Written clean-room from the format description (docs/ftrace-format.md); the
 * concurrency design is our own and differs from the kernel's because
 * userspace writers can be preempted and migrated mid-write.
 *
 * Each CPU buffer has nr sub-buffer "slots" and nr+1 physical pages: one
 * page is always the reader's.  Sub-buffers are numbered by a monotonic
 * sequence s; slot s % nr holds one 64-bit word (phys page << 48 | tag),
 * where tag == s means "this page is (or is ready to become) sub-buffer s"
 * and tag == s - nr means "it still holds the unread sub-buffer s - nr".
 *
 * The write state is one 16-byte word:
 *
 *	pos = seq << 28 | offset << 8,	ts = timestamp of the last record
 *
 * changed by a compare-and-swap: an rseq critical section (plain loads and
 * one 16-byte store, restarted by the kernel if the thread is preempted,
 * migrated or signalled in it) for a writer on the buffer's own CPU, or a
 * 16-byte locked compare-and-swap for everyone else (see st_cas for how the
 * two never meet).  Two architectures:
 *
 * - x86_64: the section's store is one movdqa; the locked path is lock
 *   cmpxchg16b.  Every load is acquire and every store release (TSO).
 * - arm64: the section's store is one stp, preceded by dmb ish so that it
 *   is ordered after every earlier access as x86's is; the abort handler is
 *   preceded by the arm64 RSEQ_SIG.  The locked path is LSE's caspal where
 *   the CPU has it (HWCAP_ATOMICS, read once at the first kagg_rb__new), an
 *   ldaxp/stlxp loop otherwise (a failed compare stores the value it read
 *   back, which is what makes the 16-byte read single-copy atomic).
 *   kagg_rb__write_path() says which: "locked-casp" or "locked-llsc".
 *
 * A process without rseq (a kernel before 4.18, glibc.pthread.rseq=0, or an
 * emulator such as qemu-user that does not implement the system call) takes
 * the locked path on every buffer, and kagg_rb__write_path() says so.
 * Timestamps come from clock_gettime (the vDSO on both architectures) or the
 * caller's clock.
 *
 * - reserve: one CAS moves offset by the record length and sets ts = now.
 *   The delta to the previous record is computed from the ts in the same
 *   word, so it is exact even with concurrent writers.  A writer whose clock
 *   read is older than the last record (it was overtaken between reading the
 *   clock and its CAS: an interrupting or concurrent writer) writes an
 *   absolute TIME_STAMP; a delta >= 2^27 (or 0) gets a TIME_EXTEND.  The one
 *   atomic step of the write path.
 * - commit: reserved space is zero until committed, and every reservation's
 *   first header word is non-zero, so commit is plain stores: the header
 *   words, the first one last with release semantics.  Readers walk records
 *   and stop at the first zero first word: they never see past the oldest
 *   unfinished reservation, which is the kernel's "commit moves only when the
 *   outermost writer finishes" without a writers-in-flight counter.  Nested
 *   writers (signal handlers) finish in stack order; writers migrated onto
 *   the same buffer are safe in any order.  max_nest bounds the reservations
 *   a thread holds open (a thread-local depth).
 * - crossing into sub-buffer T: claim slot T % nr (overwrite: if every
 *   record of the old T - nr is committed, take it with a CAS on the slot
 *   word to T|BUSY, count its events as overrun, zero it, publish tag T;
 *   otherwise refuse: commit overrun.  Consume mode: refuse, dropped), then
 *   CAS the state to (T, len).  The winner pads the old page (a committed
 *   PADDING record) and counts its events while they are hot.
 * - readers swap their spare page into the slot of the oldest complete
 *   sub-buffer with a CAS on the slot word (reader-page swap), racing writers
 *   that evict it: exactly one wins, so each event is either read or counted
 *   as overrun, never both.  When only the sub-buffer being written holds
 *   data, and all of it is committed, a reader may close it (move writers on
 *   to the next one, marking the rest "empty" with a delta-0 PADDING).
 *
 * Not guaranteed: ordering of timestamps across CPU buffers, or within one
 * buffer when writers race (a TIME_STAMP may go backwards, as in the kernel).
 * x86_64 and arm64 (see above); little-endian.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <kagg/ringbuf.h>
#include "util/opts.h"
#include "rb/rb_internal.h"

#if defined(__x86_64__)
static inline bool cas128(struct rb_state *p, struct rb_state *exp, struct rb_state nw)
{
	bool ok;

	__asm__ __volatile__("lock cmpxchg16b %1"
			     : "=@ccz"(ok), "+m"(*p), "+a"(exp->pos), "+d"(exp->ts)
			     : "b"(nw.pos), "c"(nw.ts)
			     : "memory");
	return ok;
}

static void rb_atomics_init(void)
{
}

static const char *rb_locked_path(void)
{
	return "locked";
}
#elif defined(__aarch64__)
#include <sys/auxv.h>

#ifndef HWCAP_ATOMICS
#define HWCAP_ATOMICS (1 << 8)
#endif

/* LSE (ARMv8.1 atomics: casp) on this CPU; set once, before any buffer exists. */
static bool rb_lse;

static void rb_lse_probe(void)
{
	rb_lse = getauxval(AT_HWCAP) & HWCAP_ATOMICS;
}

static void rb_atomics_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, rb_lse_probe);
}

static const char *rb_locked_path(void)
{
	return rb_lse ? "locked-casp" : "locked-llsc";
}

static inline bool cas128_lse(struct rb_state *p, struct rb_state *exp, struct rb_state nw)
{
	register uint64_t x0 __asm__("x0") = exp->pos;
	register uint64_t x1 __asm__("x1") = exp->ts;
	register uint64_t x2 __asm__("x2") = nw.pos;
	register uint64_t x3 __asm__("x3") = nw.ts;
	uint64_t o0 = exp->pos, o1 = exp->ts;

	__asm__ __volatile__(".arch_extension lse\n\t"
			     "caspal x0, x1, x2, x3, %[m]"
			     : "+r"(x0), "+r"(x1), [m] "+Q"(*p)
			     : "r"(x2), "r"(x3)
			     : "memory");
	exp->pos = x0;
	exp->ts = x1;
	return x0 == o0 && x1 == o1;
}

static inline bool cas128_llsc(struct rb_state *p, struct rb_state *exp, struct rb_state nw)
{
	uint64_t o0 = exp->pos, o1 = exp->ts, r0, r1;
	uint32_t fail;

	__asm__ __volatile__("1:\n\t"
			     "ldaxp %[r0], %[r1], %[m]\n\t"
			     "cmp %[r0], %[o0]\n\t"
			     "ccmp %[r1], %[o1], #0, eq\n\t"
			     "b.ne 2f\n\t"
			     "stlxp %w[f], %[n0], %[n1], %[m]\n\t"
			     "cbnz %w[f], 1b\n\t"
			     "b 3f\n"
			     "2:\n\t"
			     /* the read is atomic only once a store of it succeeds */
			     "stlxp %w[f], %[r0], %[r1], %[m]\n\t"
			     "cbnz %w[f], 1b\n"
			     "3:"
			     : [r0] "=&r"(r0), [r1] "=&r"(r1), [f] "=&r"(fail), [m] "+Q"(*p)
			     : [o0] "r"(o0), [o1] "r"(o1), [n0] "r"(nw.pos), [n1] "r"(nw.ts)
			     : "cc", "memory");
	exp->pos = r0;
	exp->ts = r1;
	return r0 == o0 && r1 == o1;
}

static inline bool cas128(struct rb_state *p, struct rb_state *exp, struct rb_state nw)
{
	return __builtin_expect(rb_lse, 1) ? cas128_lse(p, exp, nw) : cas128_llsc(p, exp, nw);
}
#else
#error "kagg ringbuf needs a 16-byte compare-and-swap and an rseq section: x86_64 and arm64"
#endif

static inline struct rb_state st_load(struct rb_state *p)
{
	struct rb_state s;

	/* may be torn: the CAS that follows validates it */
	s.pos = __atomic_load_n(&p->pos, __ATOMIC_ACQUIRE);
	s.ts = __atomic_load_n(&p->ts, __ATOMIC_ACQUIRE);
	return s;
}

/*
 * Changing the write state.  Where the kernel restartable sequences (rseq)
 * are registered (glibc does so for every thread) and membarrier can restart
 * them, a writer running on the buffer's own CPU changes it with plain loads
 * and one 16-byte store inside an rseq critical section: the kernel restarts
 * the section if the thread is preempted, migrated or signalled in it, so no
 * other writer of that CPU can come in between, and no lock prefix is needed
 * (this is what the kernel's writers get from disabling preemption).
 *
 * Everyone else (a writer of another CPU's buffer, a reader closing a
 * sub-buffer, a discard after a migration) uses cmpxchg16b, and first makes
 * sure no rseq section of that CPU can run concurrently: it raises
 * cb->foreign, which every section checks, then membarrier(RSEQ) on that CPU
 * restarts a section that read it before the change.  Readers and discards
 * hold a count for the one operation; a writer from another CPU sets the
 * buffer STICKY: its rseq writers take the locked path from then on (one
 * membarrier per buffer, not one per record).  Without rseq every buffer is
 * STICKY|READY from the start.  With kagg_rb_opts.single_writer the one
 * writing thread runs its sections on any buffer from any CPU, everyone
 * else takes the locked path, and the fence covers every CPU.
 */
enum { ST_DONE, ST_CHANGED, ST_ELSEWHERE }; /* st_cas() and rseq_cas() results */

#if __has_include(<sys/rseq.h>) && __has_include(<linux/membarrier.h>)
#include <linux/membarrier.h>
#include <sys/rseq.h>

/*
 * The section's rseq_cs descriptor (3:): from 1: to 2:, aborting to 4:.  Its
 * address goes into the rseq area's rseq_cs before 1:.
 */
#define RSEQ_CS_DESCRIPTOR                   \
	".pushsection __rseq_cs, \"aw\"\n\t" \
	".balign 32\n\t"                     \
	"3:\n\t"                             \
	".long 0, 0\n\t"                     \
	".quad 1f, 2f - 1f, 4f\n\t"          \
	".popsection\n\t"

#if defined(__x86_64__)
/*
 * The section on x86: rax is its temporary; the 16-byte movdqa store is the
 * change.  It leaves through the labels elsewhere and changed of rseq_cas().
 */
typedef long long v2di __attribute__((vector_size(16)));
#define RSEQ_CAS_SECTION(tp, cpu, cb, old, nw)                                                     \
	do {                                                                                       \
		v2di v = { (long long)(nw).pos, (long long)(nw).ts };                              \
                                                                                                   \
		__asm__ goto(RSEQ_CS_DESCRIPTOR                                                    \
			     "leaq 3b(%%rip), %%rax\n\t"                                           \
			     "movq %%rax, 8(%[rs])\n\t"                                            \
			     "1:\n\t"                                                              \
			     "cmpl %[cpu], 4(%[rs])\n\t"                                           \
			     "jnz %l[elsewhere]\n\t"                                               \
			     "cmpl $0, (%[f])\n\t"                                                 \
			     "jnz %l[elsewhere]\n\t"                                               \
			     "cmpq %[opos], (%[st])\n\t"                                           \
			     "jnz %l[changed]\n\t"                                                 \
			     "cmpq %[ots], 8(%[st])\n\t"                                           \
			     "jnz %l[changed]\n\t"                                                 \
			     "movdqa %[v], (%[st])\n\t"                                            \
			     "2:\n\t"                                                              \
			     ".pushsection __rseq_failure, \"ax\"\n\t"                             \
			     ".byte 0x0f, 0xb9, 0x3d\n\t"                                          \
			     ".long 0x53053053\n\t" /* RSEQ_SIG, right before the abort handler */ \
			     "4:\n\t"                                                              \
			     "jmp %l[changed]\n\t"                                                 \
			     ".popsection"                                                         \
			     :                                                                     \
			     : [rs] "r"(tp), [cpu] "r"(cpu), [f] "r"(&(cb)->foreign),              \
			       [st] "r"(&(cb)->st), [opos] "r"((old)->pos), [ots] "r"((old)->ts),  \
			       [v] "x"(v)                                                          \
			     : "rax", "memory", "cc"                                               \
			     : elsewhere, changed);                                                \
	} while (0)

_Static_assert(RSEQ_SIG == 0x53053053, "the x86 rseq signature");
#else /* __aarch64__ */
/*
 * The same section on arm64: x16 and x17 (the intra-procedure-call scratch
 * registers) are its temporaries; dmb ish before the stp gives the
 * store the ordering x86's has (every earlier load and store before it).
 */
#define RSEQ_CAS_SECTION(tp, cpu, cb, old, nw)                                                     \
	__asm__ goto(RSEQ_CS_DESCRIPTOR                                                            \
		     "adrp x17, 3b\n\t"                                                            \
		     "add x17, x17, :lo12:3b\n\t"                                                  \
		     "str x17, [%[rs], #8]\n\t"                                                    \
		     "1:\n\t"                                                                      \
		     "ldr w17, [%[rs], #4]\n\t"                                                    \
		     "cmp w17, %w[cpu]\n\t"                                                        \
		     "b.ne %l[elsewhere]\n\t"                                                      \
		     "ldr w17, [%[f]]\n\t"                                                         \
		     "cbnz w17, %l[elsewhere]\n\t"                                                 \
		     "ldp x16, x17, [%[st]]\n\t"                                                   \
		     "cmp x16, %[opos]\n\t"                                                        \
		     "ccmp x17, %[ots], #0, eq\n\t"                                                \
		     "b.ne %l[changed]\n\t"                                                        \
		     "dmb ish\n\t"                                                                 \
		     "stp %[npos], %[nts], [%[st]]\n\t"                                            \
		     "2:\n\t"                                                                      \
		     ".pushsection __rseq_failure, \"ax\"\n\t"                                     \
		     ".inst 0xd428bc00\n\t" /* RSEQ_SIG (brk #0x45e0), before the abort handler */ \
		     "4:\n\t"                                                                      \
		     "b %l[changed]\n\t"                                                           \
		     ".popsection"                                                                 \
		     :                                                                             \
		     : [rs] "r"(tp), [cpu] "r"(cpu), [f] "r"(&(cb)->foreign), [st] "r"(&(cb)->st), \
		       [opos] "r"((old)->pos), [ots] "r"((old)->ts), [npos] "r"((nw).pos),         \
		       [nts] "r"((nw).ts)                                                          \
		     : "x16", "x17", "memory", "cc"                                                \
		     : elsewhere, changed)

_Static_assert(RSEQ_SIG == 0xd428bc00, "the arm64 rseq signature");
#endif

/*
 * If the thread runs on CPU cpu (cb's, or for the single writer the one it
 * was on a moment ago), cb->foreign is 0 and the state equals *old: store nw
 * (ST_DONE).  ST_CHANGED: the state differs or the section was restarted;
 * ST_ELSEWHERE: another CPU or a locked writer is about.
 */
static inline __attribute__((always_inline)) int
rseq_cas(struct rb_cpu *cb, uint32_t cpu, const struct rb_state *old, struct rb_state nw)
{
	char *tp = (char *)__builtin_thread_pointer() + __rseq_offset;
	int r;

	RSEQ_CAS_SECTION(tp, cpu, cb, old, nw);
	r = ST_DONE;
	goto out;
elsewhere:
	r = ST_ELSEWHERE;
	goto out;
changed:
	r = ST_CHANGED;
out:
	/* no dangling descriptor pointer (the library may be unloaded) */
	__atomic_store_n((uint64_t *)(tp + 8), 0, __ATOMIC_RELAXED);
	return r;
}
_Static_assert(__builtin_offsetof(struct rseq, cpu_id) == 4 &&
		       __builtin_offsetof(struct rseq, rseq_cs) == 8,
	       "struct rseq layout");

/* The CPU the calling thread runs on, from its rseq area (-1: none). */
static inline int rb_rseq_cpu(void)
{
	return (int)*(volatile uint32_t *)((char *)__builtin_thread_pointer() + __rseq_offset + 4);
}

static long rb_membarrier(int cmd, unsigned int flags, int cpu)
{
	return syscall(SYS_membarrier, cmd, flags, cpu);
}

/* Set up rseq writers: false when this process cannot have them. */
static bool rb_rseq_init(void)
{
	if (__rseq_size < 20 || rb_rseq_cpu() < 0)
		return false;
	return rb_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0;
}

/*
 * Restart every rseq section running on cpu now (cpu < 0: on every CPU).  The
 * process registered for this when the buffer was made; a child of fork() has
 * to register again.  If membarrier cannot do it, running on that CPU (each
 * CPU in turn) ourselves does (a section that was there is then finished or
 * restarted).
 */
static void rb_rseq_fence(int cpu)
{
	cpu_set_t old, one;
	int i, c, hi;

	for (i = 0; i < 2; i++) {
		if (rb_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
				  cpu < 0 ? 0 : MEMBARRIER_CMD_FLAG_CPU, cpu < 0 ? 0 : cpu) == 0 ||
		    (cpu >= 0 && errno == EINVAL)) /* cpu offline or absent: nothing runs there */
			return;
		if (errno != EPERM ||
		    rb_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0))
			break;
	}
	if (sched_getaffinity(0, sizeof(old), &old))
		return;
	hi = cpu < 0 ? get_nprocs_conf() : cpu + 1;
	for (c = cpu < 0 ? 0 : cpu; c < hi && c < CPU_SETSIZE; c++) {
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof(one), &one) == 0)
			sched_yield();
	}
	sched_setaffinity(0, sizeof(old), &old);
}
#else
static inline int rseq_cas(struct rb_cpu *cb, uint32_t cpu, const struct rb_state *old,
			   struct rb_state nw)
{
	return ST_ELSEWHERE;
}
static inline int rb_rseq_cpu(void)
{
	return -1;
}
static bool rb_rseq_init(void)
{
	return false;
}
static void rb_rseq_fence(int cpu)
{
}
#endif

/* The buffer of the CPU the caller runs on. */
static inline int rb_this_cpu(const struct kagg_rb *rb)
{
	int cpu = rb->rseq ? rb_rseq_cpu() : -1;

	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0)
		cpu = 0;
	if (cpu >= rb->nr_cpus) /* more CPUs than buffers: fold (no division otherwise) */
		cpu %= rb->nr_cpus;
	return cpu;
}

/*
 * The CPU an rseq writer of cb must be on: cb's, or for the single writer
 * (kagg_rb_opts.single_writer, no other writer to keep out) wherever it runs.
 */
static inline uint32_t rb_section_cpu(const struct rb_cpu *cb)
{
	return __builtin_expect(cb->single, 0) ? (uint32_t)rb_rseq_cpu() : cb->cpu;
}

/* Drop a count of the locked path; the last one out clears FENCED with it. */
static void rb_foreign_put(struct rb_cpu *cb)
{
	uint32_t f = __atomic_load_n(&cb->foreign, __ATOMIC_RELAXED), n;

	do {
		n = f - 1;
		if (!(n & RB_FOREIGN_COUNT))
			n &= ~RB_FOREIGN_FENCED;
	} while (!__atomic_compare_exchange_n(&cb->foreign, &f, n, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
}

/*
 * The locked path (see above).  A writer not on cb's CPU makes the buffer
 * STICKY (not the single writer: its sections run anywhere, so the fence is
 * on every CPU); anyone else holds a count for this one operation.  A holder
 * fences only if no other has since the count left 0 (FENCED): every section
 * that read foreign == 0 had read it before then, and that fence restarted
 * it.  Without that, holders overlapping each other (a reader closing while
 * the writer finds it there) would each pay a membarrier, for as long as
 * they keep overlapping.
 */
static __attribute__((noinline)) bool st_cas_locked(struct rb_cpu *cb, struct rb_state *old,
						    struct rb_state nw, bool writer)
{
	uint32_t f = __atomic_load_n(&cb->foreign, __ATOMIC_ACQUIRE);
	bool counted = false, ok;

	if (!(f & RB_FOREIGN_READY)) {
		bool sticky = writer && !cb->single && rb_rseq_cpu() != cb->cpu;

		if (sticky) {
			__atomic_fetch_or(&cb->foreign, RB_FOREIGN_STICKY, __ATOMIC_SEQ_CST);
		} else {
			f = __atomic_fetch_add(&cb->foreign, 1, __ATOMIC_SEQ_CST);
			counted = true;
		}
		if (sticky || !(f & RB_FOREIGN_FENCED)) {
			rb_rseq_fence(cb->single ? -1 : cb->cpu);
			__atomic_fetch_or(&cb->foreign,
					  sticky ? RB_FOREIGN_READY : RB_FOREIGN_FENCED,
					  __ATOMIC_SEQ_CST);
		}
	}
	ok = cas128(&cb->st, old, nw);
	if (counted)
		rb_foreign_put(cb);
	return ok;
}

/*
 * Compare-and-swap of the write state: ST_DONE when *old was replaced by nw,
 * ST_CHANGED with *old re-read.  any (a writer of "the calling CPU's buffer"):
 * ST_ELSEWHERE when the thread now runs on another CPU, to move there rather
 * than write this buffer from outside.  writer: see st_cas_locked; with a
 * single writer only its thread may take the rseq path (its sections run on
 * any CPU, so a reader's section on cb's CPU would not keep it out).
 */
static inline __attribute__((always_inline)) int st_cas(struct rb_cpu *cb, struct rb_state *old,
							struct rb_state nw, bool any, bool writer)
{
	if (__builtin_expect(!__atomic_load_n(&cb->foreign, __ATOMIC_RELAXED), 1) &&
	    (writer || !cb->single)) {
		switch (rseq_cas(cb, rb_section_cpu(cb), old, nw)) {
		case ST_DONE:
			return ST_DONE;
		case ST_CHANGED:
			*old = st_load(&cb->st);
			return ST_CHANGED;
		default:
			if (any && rb_this_cpu(cb->rb) != cb->cpu)
				return ST_ELSEWHERE;
			break;
		}
	}
	return st_cas_locked(cb, old, nw, writer) ? ST_DONE : ST_CHANGED;
}

static inline uint64_t rb_clock(const struct kagg_rb *rb)
{
	if (__builtin_expect(rb->clock != NULL, 0))
		return rb->clock(rb->clock_ctx);
	struct timespec t;

	clock_gettime(rb->clockid, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

uint64_t kagg_rb__now(const struct kagg_rb *rb)
{
	return rb_clock(rb);
}

const char *kagg_rb__write_path(const struct kagg_rb *rb, int cpu)
{
	if (!rb || cpu < 0 || cpu >= rb->nr_cpus)
		return NULL;
	return __atomic_load_n(&rb->cpus[cpu].foreign, __ATOMIC_RELAXED) & RB_FOREIGN_STICKY
		       ? rb_locked_path()
		       : "rseq";
}

static void rb_log(const struct kagg_rb *rb, enum kagg_log_level lvl, const char *msg)
{
	if (rb->log)
		rb->log(rb->log_ctx, lvl, msg);
}

/* ------------------------------------------------------------------ setup */

struct kagg_rb *kagg_rb__new(const struct kagg_rb_opts *opts)
{
	struct kagg_rb *rb;
	size_t subbuf, nr, i, s;
	int nr_cpus, max_nest, err = EINVAL;

	if (!opts_valid(opts, OPTS_END(kagg_rb_opts)))
		goto fail;
	nr_cpus = OPTS_GET(opts, kagg_rb_opts, nr_cpus, 0);
	subbuf = OPTS_GET(opts, kagg_rb_opts, subbuf_size, 0);
	nr = OPTS_GET(opts, kagg_rb_opts, nr_subbufs, 0);
	max_nest = OPTS_GET(opts, kagg_rb_opts, max_nest, 0);
	if (!nr_cpus)
		nr_cpus = get_nprocs_conf();
	if (!subbuf)
		subbuf = 4096;
	if (!nr)
		nr = 64;
	if (!max_nest)
		max_nest = 16;
	if (nr_cpus < 1 || nr_cpus > 4096 || nr < 2 || nr > (1u << 16) - 2 || max_nest < 1 ||
	    max_nest > RB_MAX_NEST)
		goto fail;
	for (s = 4096; s < subbuf && s < (4096u << 7); s <<= 1)
		;
	if (s != subbuf)
		goto fail;
	if ((unsigned)OPTS_GET(opts, kagg_rb_opts, mode, 0) > KAGG_RB_CONSUME)
		goto fail;

	err = ENOMEM;
	rb = aligned_alloc(64, sizeof(*rb) + nr_cpus * sizeof(struct rb_cpu));
	if (!rb)
		goto fail;
	memset(rb, 0, sizeof(*rb) + nr_cpus * sizeof(struct rb_cpu));
	rb->nr_cpus = nr_cpus;
	rb->subbuf = subbuf;
	rb->cap = subbuf - KAGG_RB_PAGE_HDR;
	rb->nr = nr;
	rb->nr_magic = UINT64_MAX / nr + 1;
	rb->max_nest = max_nest;
	rb->mode = OPTS_GET(opts, kagg_rb_opts, mode, 0);
	rb->clock = OPTS_GET(opts, kagg_rb_opts, clock, NULL);
	rb->clock_ctx = OPTS_GET(opts, kagg_rb_opts, clock_ctx, NULL);
	rb->clockid = OPTS_GET(opts, kagg_rb_opts, use_clockid, false)
			      ? OPTS_GET(opts, kagg_rb_opts, clockid, CLOCK_MONOTONIC)
			      : CLOCK_MONOTONIC;
	rb->log = OPTS_GET(opts, kagg_rb_opts, log, NULL);
	rb->log_ctx = OPTS_GET(opts, kagg_rb_opts, log_ctx, NULL);
	rb_atomics_init();
	rb->rseq = rb_rseq_init();
	if (!rb->clock) {
		struct timespec t;

		if (clock_gettime(rb->clockid, &t)) {
			free(rb);
			err = EINVAL;
			goto fail;
		}
	}

	for (i = 0; i < (size_t)nr_cpus; i++) {
		struct rb_cpu *cb = &rb->cpus[i];

		cb->rb = rb;
		cb->cpu = (uint16_t)i;
		cb->subbuf_shift = (uint8_t)__builtin_ctzl(subbuf);
		cb->single = OPTS_GET(opts, kagg_rb_opts, single_writer, false);
		cb->nr = (uint32_t)nr;
		cb->nr_magic = rb->nr_magic;
		cb->pages = aligned_alloc(4096, (nr + 1) * subbuf);
		cb->slots = calloc(nr, sizeof(*cb->slots));
		cb->meta = calloc(nr + 1, sizeof(*cb->meta));
		if (!cb->pages || !cb->slots || !cb->meta) {
			rb->nr_cpus = (int)i + 1;
			kagg_rb__free(rb);
			goto fail;
		}
		memset(cb->pages, 0, (nr + 1) * subbuf);
		for (s = 0; s < nr; s++)
			cb->slots[s] = SLOT(s, s);
		cb->rd_phys = nr; /* the reader's spare */
		cb->foreign = rb->rseq ? 0 : RB_FOREIGN_STICKY | RB_FOREIGN_READY;
		pthread_mutex_init(&cb->rlock, NULL);
	}
	rb_log(rb, KAGG_LOG_DEBUG, "ring buffer created");
	if (!rb->rseq)
		rb_log(rb, KAGG_LOG_INFO,
		       "no restartable sequences in this process (kernel, "
		       "glibc.pthread.rseq or an emulator): every writer takes the locked path");
	return rb;
fail:
	errno = err;
	return NULL;
}

void kagg_rb__free(struct kagg_rb *rb)
{
	int i;

	if (!rb)
		return;
	for (i = 0; i < rb->nr_cpus; i++) {
		struct rb_cpu *cb = &rb->cpus[i];

		free(cb->pages);
		free(cb->slots);
		free(cb->meta);
		if (cb->rb)
			pthread_mutex_destroy(&cb->rlock);
	}
	free(rb);
}

int kagg_rb__nr_cpus(const struct kagg_rb *rb)
{
	return rb->nr_cpus;
}

size_t kagg_rb__subbuf_size(const struct kagg_rb *rb)
{
	return rb->subbuf;
}

size_t kagg_rb__max_payload(const struct kagg_rb *rb)
{
	return rb->cap - 8;
}

/* ------------------------------------------------------------------ writers */

static inline uint8_t *rb_page_of(struct rb_cpu *cb, uint64_t seq)
{
	uint64_t w = __atomic_load_n(&cb->slots[rb_fastmod(seq, cb->nr, cb->nr_magic)],
				     __ATOMIC_ACQUIRE);

	return cb->pages + (SLOT_PHYS(w) << cb->subbuf_shift);
}

/* Open reservations of this thread (nesting depth), for max_nest. */
static __thread uint32_t rb_depth __attribute__((tls_model("initial-exec")));
__thread uint64_t *rb_busy_slot __attribute__((tls_model("initial-exec")));

/*
 * A reader armed cb and sleeps (kagg_rb__wait): when what it waits for is
 * there, the first writer to clear the arm wakes it; the others see 0 and
 * make no system call.  One FUTEX_WAKE per reader sleep, not per event.
 */
static __attribute__((noinline)) void rb_wake(struct rb_cpu *cb, uint64_t armed)
{
	struct kagg_rb *rb = cb->rb;

	if (POS_SEQ(__atomic_load_n(&cb->st.pos, __ATOMIC_RELAXED)) + 2 < armed)
		return; /* not enough sub-buffers yet */
	if (!__atomic_compare_exchange_n(&cb->armed, &armed, 0, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return; /* another writer woke it, or the reader moved on */
	__atomic_fetch_add(&rb->wake_gen, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &rb->wake_gen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Number of data events in a page's first `end` bytes (all committed). */
uint32_t rb_count_events(const uint8_t *data, uint32_t end)
{
	uint32_t off = 0, n = 0;
	bool after_time = false;

	while (off + 8 <= end) {
		uint32_t h = *(const uint32_t *)(data + off);
		uint32_t t = h & 31, len;

		if (__builtin_expect(t - 1 < 28, 1)) {
			off += 4 + 4 * t;
			n++;
			after_time = false;
			continue;
		}
		if (t == KAGG_RB_TYPE_PADDING) {
			if (!(h >> 5))
				break;
			len = 4 + *(const uint32_t *)(data + off + 4);
		} else if (t >= KAGG_RB_TYPE_TIME_EXTEND) {
			len = 8;
		} else if (h || after_time) {
			len = 4 + *(const uint32_t *)(data + off + 4);
			n++;
		} else {
			break; /* uncommitted (zero) header */
		}
		after_time = t >= KAGG_RB_TYPE_TIME_EXTEND;
		if (len < 8 || len > end - off || (len & 3))
			break;
		off += len;
	}
	return n;
}

/*
 * Walk the committed records of a sub-buffer's data from `o` up to `limit`
 * (cap for a sub-buffer the writers have left, else the tail offset).  A
 * record is committed once its first header word is non-zero (commit stores
 * it last; reserved space is zero until then).  Returns the offset reached;
 * *done when a left sub-buffer is complete; *re = end of its last record
 * that is not tail padding; *n += data events.
 */
static uint32_t rb_scan(const uint8_t *data, uint32_t o, uint32_t limit, bool closed, bool *done,
			uint32_t *re, uint32_t *n)
{
	bool after_time = false;

	*done = false;
	for (;;) {
		uint32_t rem = limit - o, h, t, len;

		if (closed ? rem < 8 : rem == 0) {
			*done = closed;
			return o;
		}
		h = __atomic_load_n((const uint32_t *)(data + o), __ATOMIC_ACQUIRE);
		/* zero: not committed, unless it is the type_len-0, delta-0 data
		 * record of a reservation that starts with a time record */
		if (!h && !after_time)
			return o;
		t = h & 31;
		after_time = false;
		if (__builtin_expect(t - 1 < 28, 1)) {
			len = 4 + 4 * t;
			(*n)++;
		} else if (t == 0) {
			len = 4 + *(const uint32_t *)(data + o + 4);
			(*n)++;
		} else if (t == KAGG_RB_TYPE_PADDING) {
			if (!(h >> 5)) { /* rest of the sub-buffer empty */
				*done = closed;
				return o;
			}
			len = 4 + *(const uint32_t *)(data + o + 4);
			if (o + len >= limit) { /* tail padding: not data */
				*done = closed;
				return o + len > limit ? o : limit;
			}
		} else {
			len = 8;
			after_time = true;
		}
		if (len < 8 || len > rem || (len & 3))
			return o; /* not a record we wrote (a page recycled under us): stop */
		o += len;
		*re = o;
	}
}

/*
 * Readers' commit position (rlock held): the first uncommitted record, or the
 * tail; or, once every sub-buffer up to `upto` is complete, the start of the
 * next one (so readers that want whole sub-buffers do not walk the one the
 * writers are filling).  Scans incrementally from the last result; records
 * real ends of the sub-buffers it completes in meta.
 */
uint64_t rb_commit_pos(struct rb_cpu *cb, uint64_t upto)
{
	struct kagg_rb *rb = cb->rb;

	for (;;) {
		struct rb_state st = st_load(&cb->st);
		uint64_t tseq = POS_SEQ(st.pos), s = cb->scan_seq, w, phys;
		uint32_t o, re, n = 0;
		bool closed, done;

		/* enough: every sub-buffer up to `upto` is known complete */
		if (s > upto)
			return MKPOS(s, 0, 0);

		if (s + rb->nr <= tseq) { /* overwritten under us */
			s = tseq + 1 - rb->nr;
			cb->scan_seq = s;
			cb->scan_off = cb->scan_re = 0;
		}
		w = __atomic_load_n(&cb->slots[rb_slot(rb, s)], __ATOMIC_ACQUIRE);
		closed = s < tseq;
		if (SLOT_TAG(w) != s) {
			if (!closed)
				continue; /* the tail page is being claimed */
			cb->scan_seq = s + 1;
			cb->scan_off = cb->scan_re = 0;
			continue;
		}
		phys = SLOT_PHYS(w);
		re = cb->scan_re;
		o = rb_scan(cb->pages + phys * rb->subbuf + KAGG_RB_PAGE_HDR, cb->scan_off,
			    closed ? rb->cap : POS_OFF(st.pos), closed, &done, &re, &n);
		if (__atomic_load_n(&cb->slots[rb_slot(rb, s)], __ATOMIC_ACQUIRE) != w)
			continue;
		if (done) {
			cb->meta[phys].end = o;
			cb->meta[phys].real_end = re;
			((uint64_t *)(cb->pages + phys * rb->subbuf))[1] = o;
			cb->scan_seq = s + 1;
			cb->scan_off = cb->scan_re = 0;
			continue;
		}
		cb->scan_off = o;
		cb->scan_re = re;
		cb->commit_pos = MKPOS(s, o, 0);
		return cb->commit_pos;
	}
}

/*
 * Slot word w holds T | DIRTY, the page a reader handed back for sub-buffer
 * T: zero it (taking it as T | BUSY, so that one writer does it) and publish
 * T.  The writer zeroes it rather than the reader, so the page's lines come
 * to the writer's cache from a reader that only read them, not wrote them.
 * True when the slot is ready now.
 */
static bool rb_zero_dirty(struct rb_cpu *cb, uint64_t *slot, uint64_t w, uint64_t T)
{
	uint64_t phys = SLOT_PHYS(w), *outer = rb_busy_slot;

	rb_busy_slot = slot;
	if (!__atomic_compare_exchange_n(slot, &w, SLOT(phys, T | SLOT_BUSY), false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		rb_busy_slot = outer;
		return false;
	}
	memset(cb->pages + phys * cb->rb->subbuf, 0, cb->rb->subbuf);
	__atomic_store_n(slot, SLOT(phys, T), __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* not before the store, for a handler */
	rb_busy_slot = outer;
	return true;
}

/*
 * Make slot T % nr ready for sub-buffer T.  0: ready; -EAGAIN: state moved,
 * re-read it; -ENOBUFS: refused (counted).
 */
static int rb_claim(struct rb_cpu *cb, uint64_t T)
{
	struct kagg_rb *rb = cb->rb;
	uint64_t *slot = &cb->slots[rb_slot(rb, T)];
	uint64_t w = __atomic_load_n(slot, __ATOMIC_ACQUIRE), tag = SLOT_TAG(w), phys, *outer;
	uint32_t n = 0, re = 0, spins = 0;
	uint8_t *pg;
	bool done;

	while (tag == (T | SLOT_BUSY)) { /* another writer is zeroing it */
		/* the thread we interrupted (a signal handler's writer): it cannot
		 * finish before we return, so waiting would only stall both */
		if (rb_busy_slot == slot || ++spins > 4096) {
			__atomic_fetch_add(&cb->commit_overrun, 1, __ATOMIC_RELAXED);
			return -ENOBUFS;
		}
		sched_yield();
		w = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
		tag = SLOT_TAG(w);
	}
	if (tag == T)
		return 0;
	if (tag == (T | SLOT_DIRTY))
		return rb_zero_dirty(cb, slot, w, T) ? 0 : -EAGAIN;
	if (tag + rb->nr != T)
		return -EAGAIN;
	if (rb->mode == KAGG_RB_CONSUME) {
		__atomic_fetch_add(&cb->dropped, 1, __ATOMIC_RELAXED);
		return -ENOBUFS;
	}
	phys = SLOT_PHYS(w);
	pg = cb->pages + phys * rb->subbuf;
	if (__atomic_load_n(&cb->meta[phys].cnt_seq, __ATOMIC_ACQUIRE) == tag + 1) {
		n = cb->meta[phys].cnt; /* counted when it was closed */
		done = true;
	} else {
		rb_scan(pg + KAGG_RB_PAGE_HDR, 0, rb->cap, true, &done, &re, &n);
	}
	if (!done) { /* a writer is still in it: the kernel's commit overrun */
		__atomic_fetch_add(&cb->commit_overrun, 1, __ATOMIC_RELAXED);
		return -ENOBUFS;
	}
	outer = rb_busy_slot;
	rb_busy_slot = slot;
	if (!__atomic_compare_exchange_n(slot, &w, SLOT(phys, T | SLOT_BUSY), false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		rb_busy_slot = outer;
		return -EAGAIN;
	}
	__atomic_fetch_add(&cb->overrun, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cb->pages_lost, 1, __ATOMIC_RELAXED);
	memset(pg, 0, rb->subbuf);
	__atomic_store_n(slot, SLOT(phys, T), __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* not before the store, for a handler */
	rb_busy_slot = outer;
	return 0;
}

/* The writers left page `seq` at off: pad it (we own everything past off). */
static void rb_close(struct rb_cpu *cb, uint64_t seq, uint32_t off)
{
	struct kagg_rb *rb = cb->rb;
	uint32_t *p = (uint32_t *)(rb_page_of(cb, seq) + KAGG_RB_PAGE_HDR + off);
	uint32_t free_b = rb->cap - off;

	if (free_b >= 8) {
		p[1] = free_b - 4;
		__atomic_store_n(&p[0], KAGG_RB_TYPE_PADDING | (1u << 5), __ATOMIC_RELEASE);
	}
	/* count its events now, while it is hot, if every record is committed */
	{
		uint64_t phys =
			SLOT_PHYS(__atomic_load_n(&cb->slots[rb_slot(rb, seq)], __ATOMIC_ACQUIRE));
		uint32_t n = 0, re = 0;
		bool done;

		rb_scan(cb->pages + phys * rb->subbuf + KAGG_RB_PAGE_HDR, 0, rb->cap, true, &done,
			&re, &n);
		if (done) {
			cb->meta[phys].cnt = n;
			__atomic_store_n(&cb->meta[phys].cnt_seq, seq + 1, __ATOMIC_RELEASE);
		}
	}
}

enum { K_PLAIN, K_EXTEND, K_STAMP, K_FIRST };

/* Data record header words for dlen with delta into w; returns the count. */
static inline uint32_t rb_data_hdr(uint32_t *w, uint32_t dlen, uint32_t delta)
{
	if (dlen - 4 <= KAGG_RB_MAX_SMALL_DATA) {
		w[0] = ((dlen - 4) >> 2) | (delta << 5);
		return 1;
	}
	w[0] = delta << 5;
	w[1] = dlen - 4;
	return 2;
}

/*
 * Reservation [off, off + need) of sub-buffer POS_SEQ(old.pos) is ours:
 * prepare its header words (stored at commit), zero its tail, fill rsv.
 */
static inline void *rb_fill(struct rb_cpu *cb, struct kagg_rb_rsv *rsv, uint64_t pos,
			    uint64_t prev_ts, uint32_t off, uint32_t need, int kind, uint64_t d,
			    uint64_t ts, size_t len, uint32_t dlen)
{
	uint64_t seq = POS_SEQ(pos);
	uint8_t *page = rb_page_of(cb, seq), *payload;
	uint32_t *p = (uint32_t *)(page + KAGG_RB_PAGE_HDR + off);

	rb_depth++;
	switch (kind) {
	case K_FIRST:
		if (dlen - 4 > KAGG_RB_MAX_SMALL_DATA) {
			/* a first header word of 0 would read as "not committed" */
			*(uint64_t *)page = ts - 1;
			d = 1;
		} else {
			*(uint64_t *)page = ts;
			d = 0;
		}
		rsv->nw = rb_data_hdr(rsv->w, dlen, (uint32_t)d);
		break;
	case K_PLAIN:
		rsv->nw = rb_data_hdr(rsv->w, dlen, (uint32_t)d);
		break;
	case K_EXTEND:
		rsv->w[0] = KAGG_RB_TYPE_TIME_EXTEND | (uint32_t)(d << 5);
		rsv->w[1] = (uint32_t)(d >> KAGG_RB_TS_SHIFT);
		rsv->nw = 2 + rb_data_hdr(rsv->w + 2, dlen, 0);
		break;
	default: /* K_STAMP */
		rsv->w[0] = KAGG_RB_TYPE_TIME_STAMP | (uint32_t)(ts << 5);
		rsv->w[1] = (uint32_t)(ts >> KAGG_RB_TS_SHIFT);
		rsv->nw = 2 + rb_data_hdr(rsv->w + 2, dlen, 0);
		break;
	}
	payload = (uint8_t *)(p + rsv->nw);
	/* bytes past len up to the record end: zero (reserved space is zero
	 * unless a discarded reservation left payload there) */
	{
		uint32_t *end = (uint32_t *)((uint8_t *)p + need);
		uint32_t *z = (uint32_t *)(payload + (len & ~(size_t)3));

		while (z < end)
			*z++ = 0;
	}
	rsv->cb = cb;
	rsv->rec = p;
	rsv->page = page;
	rsv->dlen = dlen;
	rsv->start = MKPOS(seq, off, 0);
	rsv->end = MKPOS(seq, off + need, 0);
	rsv->prev_ts = prev_ts;
	rsv->ts = ts;
	rsv->kind = kind;
	return payload;
}

/* Refused before any state changed: count it, set errno. */
static __attribute__((cold, noinline)) void *rb_refuse(struct kagg_rb *rb, int cpu, size_t len,
						       const struct kagg_rb_rsv *rsv)
{
	struct rb_cpu *cb;

	if (!rb || (unsigned)cpu >= (unsigned)rb->nr_cpus || !sz_valid(rsv, RB_RSV_MIN_SZ)) {
		errno = EINVAL;
		return NULL;
	}
	cb = &rb->cpus[cpu];
	if (len > rb->cap - 8) {
		__atomic_fetch_add(&cb->too_big, 1, __ATOMIC_RELAXED);
		errno = E2BIG;
		return NULL;
	}
	__atomic_fetch_add(&cb->nest_refused, 1, __ATOMIC_RELAXED);
	errno = EBUSY;
	return NULL;
}

/*
 * Every case but the common one: the first record of a sub-buffer, a time
 * extend or stamp, crossing into the next sub-buffer, a lost CAS race.
 */
static __attribute__((noinline)) void *rb_reserve_slow(struct kagg_rb *rb, struct rb_cpu *cb,
						       size_t len, uint32_t dlen, uint64_t ts,
						       struct rb_state old, struct kagg_rb_rsv *rsv,
						       bool any)
{
	struct rb_state nw;
	uint32_t need, off, kind;
	uint64_t d = 0, seq;
	int err;

	for (;;) {
		off = POS_OFF(old.pos);
		if (off == 0) {
			kind = K_FIRST;
			need = dlen;
		} else if (ts < old.ts) {
			kind = K_STAMP;
			need = dlen + 8;
		} else {
			d = ts - old.ts;
			kind = (d == 0 || d >= (1u << KAGG_RB_TS_SHIFT)) ? K_EXTEND : K_PLAIN;
			need = kind == K_PLAIN ? dlen : dlen + 8;
		}
		if (off + need <= rb->cap) {
			nw.pos = old.pos + ((uint64_t)need << RB_OFF_SHIFT);
			nw.ts = ts;
			err = st_cas(cb, &old, nw, any, true);
			if (err == ST_DONE)
				break;
			if (err == ST_ELSEWHERE)
				goto moved;
			continue;
		}
		/* cross into the next sub-buffer */
		seq = POS_SEQ(old.pos);
		err = rb_claim(cb, seq + 1);
		if (err == -ENOBUFS) {
			errno = ENOBUFS;
			return NULL;
		}
		if (err) {
			old = st_load(&cb->st);
			continue;
		}
		nw.pos = MKPOS(seq + 1, dlen, 0);
		nw.ts = ts;
		err = st_cas(cb, &old, nw, any, true);
		if (err == ST_ELSEWHERE)
			goto moved;
		if (err != ST_DONE)
			continue;
		rb_close(cb, seq, off);
		kind = K_FIRST;
		off = 0;
		need = dlen;
		old.pos = MKPOS(seq + 1, 0, 0);
		break;
	moved: /* "the calling CPU's buffer" is another one now */
		cb = &rb->cpus[rb_this_cpu(rb)];
		ts = rb_clock(rb);
		old = st_load(&cb->st);
	}
	return rb_fill(cb, rsv, old.pos, old.ts, off, need, kind, d, ts, len, dlen);
}

/*
 * The fast path's state change: an rseq section where no locked writer is
 * about, an inline cmpxchg16b on a STICKY buffer; anything else, or a failure,
 * goes to the slow path (which re-reads the state).
 */
static inline __attribute__((always_inline)) bool
st_cas_fast(struct rb_cpu *cb, struct rb_state *old, struct rb_state nw)
{
	uint32_t f = __atomic_load_n(&cb->foreign, __ATOMIC_RELAXED);

	if (__builtin_expect(f == 0, 1))
		return rseq_cas(cb, rb_section_cpu(cb), old, nw) == ST_DONE;
	if (f & RB_FOREIGN_READY)
		return cas128(&cb->st, old, nw);
	return false;
}

/* any: cpu is "the calling CPU" (kagg_rb__reserve): follow the thread if it moves */
static inline __attribute__((always_inline)) void *rb_reserve(struct kagg_rb *rb, int cpu, bool any,
							      size_t len, struct kagg_rb_rsv *rsv)
{
	struct rb_state old, nw;
	struct rb_cpu *cb;
	uint32_t dlen, off;
	uint64_t ts, d;

	if (__builtin_expect(!rb || !rsv || rsv->sz < RB_RSV_MIN_SZ ||
				     (unsigned)cpu >= (unsigned)rb->nr_cpus || len > rb->cap - 8 ||
				     rb_depth >= (uint32_t)rb->max_nest,
			     0))
		return rb_refuse(rb, cpu, len, rsv);
	cb = &rb->cpus[cpu];
	dlen = kagg_rb__record_len(len);
	ts = rb_clock(rb);
	old = st_load(&cb->st);
	/* The common case: a plain record after another, in the same sub-buffer. */
	off = POS_OFF(old.pos);
	d = ts - old.ts;
	if (__builtin_expect(off != 0 && ts > old.ts && d < (1u << KAGG_RB_TS_SHIFT) &&
				     off + dlen <= rb->cap,
			     1)) {
		nw.pos = old.pos + ((uint64_t)dlen << RB_OFF_SHIFT);
		nw.ts = ts;
		if (__builtin_expect(st_cas_fast(cb, &old, nw), 1))
			return rb_fill(cb, rsv, old.pos, old.ts, off, dlen, K_PLAIN, d, ts, len,
				       dlen);
	}
	return rb_reserve_slow(rb, cb, len, dlen, ts, old, rsv, any);
}

void *kagg_rb__reserve_cpu(struct kagg_rb *rb, int cpu, size_t len, struct kagg_rb_rsv *rsv)
{
	return rb_reserve(rb, cpu, false, len, rsv);
}

void *kagg_rb__reserve(struct kagg_rb *rb, size_t len, struct kagg_rb_rsv *rsv)
{
	if (!rb) {
		errno = EINVAL;
		return NULL;
	}
	return rb_reserve(rb, rb_this_cpu(rb), true, len, rsv);
}

/* Store header words w[1..n) then w[0] with release: the commit point. */
static inline void rb_store_hdr(uint32_t *p, const uint32_t *w, uint32_t n)
{
	uint32_t i;

	for (i = n - 1; i > 0; i--)
		p[i] = w[i];
	__atomic_store_n(&p[0], w[0], __ATOMIC_RELEASE);
}

static inline void rb_done(struct rb_cpu *cb)
{
	uint64_t armed = __atomic_load_n(&cb->armed, __ATOMIC_RELAXED);

	rb_depth--;
	if (__builtin_expect(armed != 0, 0))
		rb_wake(cb, armed);
}

void kagg_rb__commit(struct kagg_rb_rsv *rsv)
{
	rb_store_hdr(rsv->rec, rsv->w, rsv->nw);
	rb_done(rsv->cb);
}

void kagg_rb__discard(struct kagg_rb_rsv *rsv)
{
	struct rb_cpu *cb = rsv->cb;
	struct rb_state old = st_load(&cb->st), nw;
	uint32_t w[4], n, len = POS_OFF(rsv->end) - POS_OFF(rsv->start);

	/* last record of the buffer: zero it and take the reservation back */
	memset(rsv->rec, 0, len);
	while (old.pos == rsv->end && old.ts == rsv->ts) {
		nw.pos = rsv->start;
		nw.ts = rsv->prev_ts;
		/* the single writer discards on its own thread: its rseq path */
		if (st_cas(cb, &old, nw, false, cb->single) == ST_DONE) {
			rb_done(cb);
			return;
		}
	}
	/* otherwise the data record becomes PADDING, keeping timestamps exact */
	memcpy(w, rsv->w, sizeof(w));
	n = rsv->nw - (rsv->dlen - 4 > KAGG_RB_MAX_SMALL_DATA ? 2 : 1); /* data header index */
	if (w[n] >> 5) {
		w[n] = KAGG_RB_TYPE_PADDING | (w[n] & ~31u);
	} else {
		/* delta 0 would mean "end of page": borrow 1 ns from what precedes */
		w[n] = KAGG_RB_TYPE_PADDING | (1u << 5);
		if (rsv->kind == K_FIRST) {
			(*(uint64_t *)rsv->page)--;
		} else {
			uint64_t v = ((uint64_t)w[1] << KAGG_RB_TS_SHIFT) | (w[0] >> 5);
			uint32_t type = w[0] & 31;

			if (!v) { /* TIME_EXTEND of 0: use an absolute TIME_STAMP of ts - 1 */
				v = rsv->ts;
				type = KAGG_RB_TYPE_TIME_STAMP;
			}
			v--;
			w[0] = type | (uint32_t)(v << 5);
			w[1] = (uint32_t)(v >> KAGG_RB_TS_SHIFT);
		}
	}
	w[n + 1] = rsv->dlen - 4;
	rb_store_hdr(rsv->rec, w, n + 2);
	rb_done(cb);
}

int kagg_rb__write(struct kagg_rb *rb, int cpu, const void *data, size_t len)
{
	struct kagg_rb_rsv rsv;
	void *p;

	rsv.sz = sizeof(rsv);
	if (!rb || (!data && len))
		return -EINVAL;
	p = cpu < 0 ? kagg_rb__reserve(rb, len, &rsv) : kagg_rb__reserve_cpu(rb, cpu, len, &rsv);
	if (!p)
		return -errno;
	memcpy(p, data, len);
	kagg_rb__commit(&rsv);
	return 0;
}

/* ------------------------------------------------------------------ readers */

/*
 * Reader side (cb->rlock held): make the reader page hold unread data.
 * Returns true when rd_off < rd_end.
 */
bool rb_reader_fill(struct rb_cpu *cb, bool may_close)
{
	struct kagg_rb *rb = cb->rb;

	while (cb->rd_off >= cb->rd_end) {
		uint64_t c, cseq, s = cb->read_seq, w, ov, phys;
		struct rb_state st;

		if (!may_close && s >= POS_SEQ(__atomic_load_n(&cb->st.pos, __ATOMIC_ACQUIRE)))
			return false; /* only the sub-buffer being written is left */
		c = rb_commit_pos(cb, may_close ? UINT64_MAX : s);
		cseq = POS_SEQ(c);
		if (s < cseq) {
			w = __atomic_load_n(&cb->slots[rb_slot(rb, s)], __ATOMIC_ACQUIRE);
			if (SLOT_TAG(w) != s) { /* overwritten */
				cb->read_seq = s + 1;
				if (cseq >= rb->nr && cb->read_seq < cseq + 1 - rb->nr)
					cb->read_seq = cseq + 1 - rb->nr;
				continue;
			}
			/* the spare goes in unzeroed: the writer that reaches it zeroes it */
			if (!__atomic_compare_exchange_n(
				    &cb->slots[rb_slot(rb, s)], &w,
				    SLOT(cb->rd_phys, (s + rb->nr) | SLOT_DIRTY), false,
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				continue;
			phys = SLOT_PHYS(w);
			cb->rd_phys = phys;
			cb->rd_off = 0;
			cb->rd_end = cb->meta[phys].real_end;
			cb->rd_ts = *(uint64_t *)(cb->pages + phys * rb->subbuf);
			cb->rd_page_ts = cb->rd_ts;
			cb->read_seq = s + 1;
			ov = __atomic_load_n(&cb->overrun, __ATOMIC_RELAXED);
			cb->rd_missed += ov - cb->last_overrun;
			cb->last_overrun = ov;
			continue;
		}
		/* only the sub-buffer being written: close it if all of it is committed */
		if (!may_close)
			return false;
		st = st_load(&cb->st);
		if (POS_SEQ(c) != s || POS_OFF(c) == 0 || st.pos != c)
			return false;
		w = __atomic_load_n(&cb->slots[rb_slot(rb, s + 1)], __ATOMIC_ACQUIRE);
		if (SLOT_TAG(w) == ((s + 1) | SLOT_DIRTY))
			rb_zero_dirty(cb, &cb->slots[rb_slot(rb, s + 1)], w, s + 1);
		if (SLOT_TAG(__atomic_load_n(&cb->slots[rb_slot(rb, s + 1)], __ATOMIC_ACQUIRE)) !=
		    s + 1)
			return false;
		{
			struct rb_state nw = { .pos = MKPOS(s + 1, 0, 0), .ts = st.ts };
			uint32_t off = POS_OFF(c);

			if (st_cas(cb, &st, nw, false, false) != ST_DONE)
				continue;
			if (rb->cap - off >= 8) /* "rest of the sub-buffer empty" */
				__atomic_store_n(
					(uint32_t *)(rb_page_of(cb, s) + KAGG_RB_PAGE_HDR + off),
					KAGG_RB_TYPE_PADDING, __ATOMIC_RELEASE);
		}
	}
	return true;
}

/* Decode the next data record of the reader page without consuming it. */
static bool rb_reader_peek(struct rb_cpu *cb, struct kagg_rb_event *ev, uint32_t *next,
			   uint64_t *next_ts)
{
	const uint8_t *data;
	uint32_t off;
	uint64_t ts;

	for (;;) {
		if (!rb_reader_fill(cb, true))
			return false;
		data = cb->pages + cb->rd_phys * cb->rb->subbuf + KAGG_RB_PAGE_HDR;
		off = cb->rd_off;
		ts = cb->rd_ts;
		if (rb_decode_next(data, cb->rd_end, &off, &ts, ev) > 0) {
			ev->cpu = cb->cpu;
			ev->missed = (int64_t)cb->rd_missed;
			*next = off;
			*next_ts = ts;
			return true;
		}
		cb->rd_off = cb->rd_end; /* only padding left */
	}
}

int kagg_rb__consume(struct kagg_rb *rb, int cpu, struct kagg_rb_event *ev)
{
	struct rb_cpu *best = NULL;
	struct kagg_rb_event e, be;
	uint32_t next, best_next = 0;
	uint64_t nts, best_nts = 0;
	int i, lo = cpu, hi = cpu + 1;

	if (!rb || !sz_valid(ev, RB_EVENT_MIN_SZ) || cpu >= rb->nr_cpus)
		return -EINVAL;
	if (cpu < 0) {
		lo = 0;
		hi = rb->nr_cpus;
	}
	for (i = lo; i < hi; i++)
		pthread_mutex_lock(&rb->cpus[i].rlock);
	for (i = lo; i < hi; i++) {
		struct rb_cpu *cb = &rb->cpus[i];

		if (!rb_reader_peek(cb, &e, &next, &nts))
			continue;
		if (!best || e.ts < be.ts) {
			best = cb;
			be = e;
			best_next = next;
			best_nts = nts;
		}
	}
	if (best) {
		be.sz = sizeof(be);
		sz_copy(ev, &be, sizeof(be));
		best->rd_off = best_next;
		best->rd_ts = best_nts;
		best->rd_missed = 0;
		best->read_events++;
	}
	for (i = lo; i < hi; i++)
		pthread_mutex_unlock(&rb->cpus[i].rlock);
	return best ? 0 : -EAGAIN;
}

static int rb_read_page(struct kagg_rb *rb, int cpu, void *buf, size_t buf_sz, bool may_close)
{
	struct rb_cpu *cb;
	uint8_t *out = buf, *data;
	uint64_t commit, missed, ts;
	uint32_t n, len;

	if (cpu < 0 || cpu >= rb->nr_cpus)
		return -EINVAL;
	if (buf_sz < rb->subbuf)
		return -ENOSPC;
	cb = &rb->cpus[cpu];
	pthread_mutex_lock(&cb->rlock);
	if (!rb_reader_fill(cb, may_close)) {
		pthread_mutex_unlock(&cb->rlock);
		return -EAGAIN;
	}
	data = cb->pages + cb->rd_phys * rb->subbuf + KAGG_RB_PAGE_HDR;
	len = cb->rd_end - cb->rd_off;
	/* swap path: the whole page as written; copy path: ts of the last consumed event */
	ts = cb->rd_off ? cb->rd_ts : cb->rd_page_ts;
	memcpy(out, &ts, 8); /* buf may have any alignment */
	memcpy(out + KAGG_RB_PAGE_HDR, data + cb->rd_off, len);
	memset(out + KAGG_RB_PAGE_HDR + len, 0, rb->subbuf - KAGG_RB_PAGE_HDR - len);
	commit = len;
	missed = cb->rd_missed;
	if (missed) {
		commit |= KAGG_RB_MISSED_EVENTS;
		if (rb->cap - len >= 8) {
			memcpy(out + KAGG_RB_PAGE_HDR + len, &missed, 8); /* 4-byte aligned */
			commit |= KAGG_RB_MISSED_STORED;
		}
		commit = (uint64_t)(int64_t)(int32_t)(uint32_t)
			commit; /* as the kernel: sign-extended */
	}
	memcpy(out + 8, &commit, 8);
	n = rb_count_events(data + cb->rd_off, len);
	cb->read_events += n;
	cb->rd_off = cb->rd_end;
	cb->rd_missed = 0;
	pthread_mutex_unlock(&cb->rlock);
	return (int)rb->subbuf;
}

int kagg_rb__read_page(struct kagg_rb *rb, int cpu, void *buf, size_t buf_sz)
{
	if (!rb || !buf)
		return -EINVAL;
	return rb_read_page(rb, cpu, buf, buf_sz, true);
}

int kagg_rb__read_full_page(struct kagg_rb *rb, int cpu, void *buf, size_t buf_sz)
{
	if (!rb || !buf)
		return -EINVAL;
	return rb_read_page(rb, cpu, buf, buf_sz, false);
}

/* Unread pages of cb that hold at least percent% (readers' view). */
static bool rb_ready(struct rb_cpu *cb, int percent)
{
	struct kagg_rb *rb = cb->rb;
	uint64_t c, s;
	uint64_t used;

	pthread_mutex_lock(&cb->rlock);
	c = percent ? __atomic_load_n(&cb->st.pos, __ATOMIC_ACQUIRE)
		    : rb_commit_pos(cb, UINT64_MAX);
	s = cb->read_seq;
	if (cb->rd_off < cb->rd_end && percent == 0) {
		pthread_mutex_unlock(&cb->rlock);
		return true;
	}
	pthread_mutex_unlock(&cb->rlock);
	if (POS_SEQ(c) + 1 > s + rb->nr)
		s = POS_SEQ(c) + 1 - rb->nr;
	used = POS_SEQ(c) - s + (POS_OFF(c) ? 1 : 0);
	if (percent == 0)
		return used > 0;
	return used * 100 >= (uint64_t)percent * rb->nr;
}

enum { ARM_STANDING, ARM_NEW, ARM_LOWERED };

/*
 * Arm cb for a wake once sub-buffer `seq` is reached (a lower arm of another
 * reader stands).  ARM_NEW: cb was not armed; ARM_LOWERED: another reader's
 * later arm was brought forward.  Either way a writer may have committed
 * without seeing this arm (see kagg_rb__wait).
 */
static int rb_arm(struct rb_cpu *cb, uint64_t seq)
{
	uint64_t cur = __atomic_load_n(&cb->armed, __ATOMIC_RELAXED);

	do {
		if (cur && cur <= seq + 1) {
			/* standing: still a full fence before the readiness check */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			return ARM_STANDING;
		}
	} while (!__atomic_compare_exchange_n(&cb->armed, &cur, seq + 1, false, __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	return cur ? ARM_LOWERED : ARM_NEW;
}

/*
 * Readers sleep on rb->wake_gen.  Before each sleep the reader reads the
 * word, arms every CPU it waits for that is not ready yet (cb->armed = 1 +
 * the sub-buffer sequence that satisfies percent), then checks for data; a
 * writer's commit loads cb->armed (a line it only reads until then) and,
 * when the arm is due, the one writer that clears it bumps wake_gen and
 * makes one FUTEX_WAKE.  A bump between our read and the sleep makes
 * FUTEX_WAIT return at once.
 *
 * Writers do not fence between their commit store and the load of armed: a
 * commit made an instant before the arm became visible can be missed by both
 * sides.  That commit is visible within the first millisecond, so a sleep
 * right after a fresh arm is no longer than that; an arm that stands
 * (nothing clears it until a writer sees it due) needs no such bound.
 */
int kagg_rb__wait(struct kagg_rb *rb, int cpu, int percent, int timeout_ms)
{
	struct timespec end, now, rel;
	int i, lo = cpu, hi = cpu + 1, ret = 0;
	uint64_t want, mine[64] = { 0 }; /* our arms, to take back when we leave */

	if (!rb || cpu >= rb->nr_cpus || percent < 0 || percent > 100)
		return -EINVAL;
	if (cpu < 0) {
		lo = 0;
		hi = rb->nr_cpus;
	}
	want = percent ? ((uint64_t)percent * rb->nr + 99) / 100 : 0;
	clock_gettime(CLOCK_MONOTONIC, &end);
	if (timeout_ms >= 0) {
		end.tv_sec += timeout_ms / 1000;
		end.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (end.tv_nsec >= 1000000000L) {
			end.tv_sec++;
			end.tv_nsec -= 1000000000L;
		}
	}
	for (;;) {
		uint32_t gen = __atomic_load_n(&rb->wake_gen, __ATOMIC_ACQUIRE);
		bool fresh = false;
		long r;

		for (i = lo; i < hi; i++) {
			struct rb_cpu *cb = &rb->cpus[i];
			uint64_t rs;

			/*
			 * ready already (woken, or it filled meanwhile): leave without
			 * arming, as a writer still committing would take that arm and
			 * pay a second wake for one sleep
			 */
			if (rb_ready(cb, percent))
				goto out;
			pthread_mutex_lock(&cb->rlock);
			rs = cb->read_seq;
			pthread_mutex_unlock(&cb->rlock);
			switch (rb_arm(cb, rs + want)) {
			case ARM_NEW: /* ours alone: taken back when we leave */
				if (i - lo < 64)
					mine[i - lo] = rs + want + 1;
				/* fall through */
			case ARM_LOWERED:
				fresh = true;
				break;
			}
			if (rb_ready(cb, percent))
				goto out;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (timeout_ms >= 0 && (now.tv_sec > end.tv_sec ||
					(now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))) {
			ret = -ETIMEDOUT;
			goto out;
		}
		rel.tv_sec = 1;
		rel.tv_nsec = 0;
		if (timeout_ms >= 0) {
			long ns =
				(end.tv_sec - now.tv_sec) * 1000000000L + end.tv_nsec - now.tv_nsec;

			if (ns < 1000000000L) {
				rel.tv_sec = 0;
				rel.tv_nsec = ns;
			}
		}
		if (fresh && (rel.tv_sec || rel.tv_nsec > 1000000L)) {
			rel.tv_sec = 0;
			rel.tv_nsec = 1000000L;
		}
		r = syscall(SYS_futex, &rb->wake_gen, FUTEX_WAIT_PRIVATE, gen, &rel, NULL, 0);
		if (r < 0 && errno == EINTR) {
			ret = -EINTR;
			goto out;
		}
	}
out:
	/* an arm no writer took is not left behind to cost one a wake */
	for (i = lo; i < hi && i - lo < 64; i++) {
		uint64_t a = mine[i - lo];

		if (a)
			__atomic_compare_exchange_n(&rb->cpus[i].armed, &a, 0, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	return ret;
}
