/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Types shared by bpf/tprec.bpf.c and the library (user/builtin/tprec.c): the
 * streamed copy of any tracepoint's raw record, for kagg record -e SYS:NAME.
 */
#ifndef KAGG_BPF_TPREC_H
#define KAGG_BPF_TPREC_H

#include "shared/common.h"

/* Events one session records: one program each (tprec_0 .. tprec_7). */
#define TPREC_MAX_EVENTS 8
/* Dynamic fields (__data_loc, __rel_loc) of an event whose data is copied. */
#define TPREC_MAX_DYN 4
/* Bytes of a record copied at most, common fields included (a power of two). */
#define TPREC_MAX_DATA 4096

/* In rec_dyn: the field is a __rel_loc (its offset counts from the field's end). */
#define TPREC_DYN_REL 0x80000000u

/*
 * Per-CPU counters (array map `counters`, index = enum value).
 */
enum tprec_counter {
	TPREC_CNT_EVENTS = 0, /* program runs while armed */
	TPREC_CNT_TRUNCATED,  /* records whose dynamic data ran past TPREC_MAX_DATA: cut */
	TPREC_CNT_DROP_READ,  /* the record could not be read */
	TPREC_CNT_MAX,
};

/* One streamed record's head; `len` bytes of the raw trace entry follow it. */
struct tprec_rec {
	KAGG_REC_HDR_FIELDS;
	__u16 event; /* index in the session's events */
	__u16 len;   /* bytes of data */
	__u32 tid;   /* the current thread (the entry's common fields are not set for BPF) */
};
KAGG_REC_HDR_CHECK(struct tprec_rec);
_Static_assert(sizeof(struct tprec_rec) == 32, "tprec_rec head layout");

#endif /* KAGG_BPF_TPREC_H */
