// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * unwind.c - what profile and offcpu share to walk user stacks with unwind tables: sizing the
 * maps of bpf/unwind.bpf.h, the table loader (user/unwind/loader.c) and the thread that runs
 * it for each process noted, the meta.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "session/session_internal.h"
#include "shared/unwind.h"
#include "unwind/loader.h"
#include "util/array.h"

#define UNW_DEFAULT_ROWS (3u << 19) /* 12 MiB of rows */

static const char *const mode_names[] = {
	[KAGG_UNWIND_AUTO] = "auto", [KAGG_UNWIND_FP] = "fp", [KAGG_UNWIND_TABLE] = "table"
};

/* What the table walk lacks here, or NULL. */
static const char *walk_missing(struct kagg_session *s, bool can_walk)
{
#if !defined(__x86_64__)
	(void)s;
	(void)can_walk;
	return "unwind-table walk on this architecture (x86-64 only)";
#else
	return !can_walk ? "tp_btf program" : session_lacks_unwind_helpers(s);
#endif
}

int session_unwind_check(struct kagg_session *s, enum kagg_unwind mode, bool with_user)
{
	const char *miss;

	if (!with_user || mode != KAGG_UNWIND_TABLE)
		return 0;
	miss = walk_missing(s, true);
	if (!miss)
		return 0;
	session_log(s, KAGG_LOG_WARN, "cannot walk user stacks by unwind table: no %s", miss);
	return -EINVAL;
}

int session_unwind_size(struct kagg_session *s, const struct session_unw_maps *m,
			volatile __u32 *mode_rodata, enum kagg_unwind mode, bool with_user,
			size_t max_rows, bool can_walk, bool *table)
{
	bool tables = with_user && mode != KAGG_UNWIND_FP;
	const char *miss = tables ? walk_missing(s, can_walk) : NULL;
	size_t n;

	if (miss && mode == KAGG_UNWIND_TABLE) {
		session_log(s, KAGG_LOG_WARN, "cannot walk user stacks by unwind table: no %s",
			    miss);
		return -EINVAL;
	}
	n = strlen(s->attach_note);
	if (miss && !strstr(s->attach_note, "user stacks by frame pointer"))
		snprintf(s->attach_note + n, sizeof(s->attach_note) - n,
			 "%suser stacks by frame pointer (unwind auto): no %s", n ? "; " : "",
			 miss);
	if (miss) {
		tables = false;
		mode = KAGG_UNWIND_FP;
	}
	*table = tables;

	*mode_rodata = !tables			   ? UNW_MODE_FP
		       : mode == KAGG_UNWIND_TABLE ? UNW_MODE_TABLE
						   : UNW_MODE_AUTO;
	s->unwind_mode =
		with_user && (unsigned int)mode <= KAGG_UNWIND_TABLE ? mode_names[mode] : NULL;
	if (!tables) {
		bpf_map__set_max_entries(m->rows, 1);
		bpf_map__set_max_entries(m->files, 1);
		bpf_map__set_max_entries(m->procs, 1);
		bpf_map__set_max_entries(m->ustacks, 1);
		return 0;
	}
	bpf_map__set_max_entries(m->rows, max_rows ? max_rows : UNW_DEFAULT_ROWS);
	return 0;
}

/* The loading thread: the processes noted, in the order noted. */
static void *unw_thread(void *arg)
{
	struct kagg_session *s = arg;
	int pid;

	pthread_mutex_lock(&s->unw_mu);
	for (;;) {
		while (s->unw_pending_head == s->unw_pending_n && !s->unw_quit)
			pthread_cond_wait(&s->unw_cv, &s->unw_mu);
		if (s->unw_quit)
			break;
		pid = s->unw_pending[s->unw_pending_head++];
		pthread_mutex_unlock(&s->unw_mu);
		unwl_add_pid(s->unw, pid);
		pthread_mutex_lock(&s->unw_mu);
	}
	pthread_mutex_unlock(&s->unw_mu);
	return NULL;
}

/* With every signal blocked: they go to the caller's threads, as they did before. */
static int unw_thread_start(struct kagg_session *s)
{
	sigset_t all, old;
	int err;

	pthread_mutex_init(&s->unw_mu, NULL);
	pthread_cond_init(&s->unw_cv, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&s->unw_thread, NULL, unw_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&s->unw_cv);
		pthread_mutex_destroy(&s->unw_mu);
		return -err;
	}
	s->unw_thread_on = true;
	return 0;
}

int session_unwind_start(struct kagg_session *s, const struct session_unw_maps *m, const int *pids,
			 size_t nr_pids)
{
	size_t i;

	if (bpf_map__max_entries(m->ustacks) <= 1)
		return 0; /* not table-walked */
	s->unw = unwl_new(m->rows, m->files, m->procs);
	if (!s->unw)
		return -errno;
	s->ustacks = m->ustacks;
	for (i = 0; i < nr_pids; i++)
		unwl_add_pid(s->unw, pids[i]);
	return unw_thread_start(s);
}

void session_unwind_queue(struct kagg_session *s, int pid)
{
	if (!s->unw_thread_on)
		return;
	pthread_mutex_lock(&s->unw_mu);
	if (s->unw_pending_head == s->unw_pending_n)
		s->unw_pending_head = s->unw_pending_n = 0;
	if (!GROW_ARRAY(s->unw_pending, s->unw_pending_cap, s->unw_pending_n, 64)) {
		s->unw_pending[s->unw_pending_n++] = pid;
		pthread_cond_signal(&s->unw_cv);
	}
	pthread_mutex_unlock(&s->unw_mu);
}

void session_unwind_stop(struct kagg_session *s)
{
	if (!s->unw_thread_on)
		return;
	pthread_mutex_lock(&s->unw_mu);
	s->unw_quit = true;
	pthread_cond_signal(&s->unw_cv);
	pthread_mutex_unlock(&s->unw_mu);
	pthread_join(s->unw_thread, NULL);
	pthread_cond_destroy(&s->unw_cv);
	pthread_mutex_destroy(&s->unw_mu);
	free(s->unw_pending);
	s->unw_pending = NULL;
	s->unw_thread_on = false;
}

void session_unwind_meta(struct kagg_session *s, struct kagg_snapshot *snap, const uint64_t *cnt,
			 bool reset)
{
	static const struct {
		const char *name, *what;
	} stops[UNW_STOP_MAX] = {
		[UNW_STOP_NO_MAP] = { "unwind_no_map",
				      "user walk stopped: pc in no executable mapping known" },
		[UNW_STOP_NO_TABLE] = { "unwind_no_table",
					"user walk stopped: the file has no unwind table (yet)" },
		[UNW_STOP_NO_ROW] = { "unwind_no_row",
				      "user walk stopped: no CFI row, or one it cannot follow" },
		[UNW_STOP_NO_RBP] = { "unwind_no_rbp",
				      "user walk stopped: the CFA needs an rbp that was lost" },
		[UNW_STOP_READ] = { "unwind_read", "user walk stopped: reading the stack failed" },
		[UNW_STOP_DEPTH] = { "unwind_depth", "user walk stopped: 127 frames" },
		[UNW_STOP_BAD_PC] = { "unwind_bad_pc",
				      "user walk stopped: a return address not in user space" },
	};
	struct kagg_meta *mt = &snap->meta;
	struct unwl_stats st;
	int i;

	mt->unwind = s->unwind_mode;
	if (!s->unwind_mode || !s->unw)
		return;
	mt->frames_fp = cnt[UNW_CNT_FP];
	mt->frames_table = cnt[UNW_CNT_TABLE];
	unwl_get_stats(s->unw, &st);
	mt->unwind_files = st.files;
	mt->unwind_rows = st.rows;
	mt->unwind_bytes = st.bytes;
	for (i = 0; i < UNW_STOP_MAX; i++)
		snap_add_drop(snap, stops[i].name, stops[i].what, cnt[UNW_CNT_STOP + i], false);
	snap_add_drop(snap, "unwind_table_full",
		      "files whose unwind table did not fit under the cap (frames: fp or stop)",
		      st.full - s->unw_full0, false);
	snap_add_drop(snap, "unwind_procs_full",
		      "processes whose mappings did not fit in unw_procs (frames: fp or stop)",
		      st.procs_full - s->unw_procs_full0, false);
	if (reset) {
		s->unw_full0 = st.full;
		s->unw_procs_full0 = st.procs_full;
	}
	snap_add_drop(snap, "ustacks_full",
		      "user stack walked but not kept: the walked-stack map is full",
		      cnt[UNW_CNT_FULL], false);
}
