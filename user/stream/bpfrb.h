/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A consumer of one BPF_MAP_TYPE_RINGBUF, reading the mmap'd ring directly.
 *
 * Compared with libbpf's ring_buffer__poll(): records are handed out in
 * batches, and the consumer position is published once per batch (at most
 * every BPFRB_PUBLISH_EVERY records) instead of after every record, which
 * saves a cache-line transfer per record between the consumer and the
 * producing CPUs.  Records are never copied.
 */
#ifndef KAGG_BPFRB_H
#define KAGG_BPFRB_H

#include <stddef.h>
#include <stdint.h>

#define BPFRB_PUBLISH_EVERY 256

struct bpfrb;

/* Map the ring of map_fd (max_entries bytes).  NULL + errno. */
struct bpfrb *bpfrb__new(int map_fd, size_t max_entries);
void bpfrb__free(struct bpfrb *rb);

/* Called for each record; data is valid only during the call. */
typedef void (*bpfrb_fn)(void *ctx, const void *data, uint32_t len);

/*
 * Consume every committed record (stopping at the first one still being
 * written).  Returns the number of records (discarded ones excluded) and
 * adds their bytes, headers included, to *bytes when non-NULL.
 */
long bpfrb__drain(struct bpfrb *rb, bpfrb_fn fn, void *ctx, uint64_t *bytes);

/*
 * Wait up to timeout_ms for the producer's next wakeup (edge-triggered: records
 * already pending do not end the wait).  >0 woken, 0 timeout, -errno.
 */
int bpfrb__wait(struct bpfrb *rb, int timeout_ms);

/* Bytes written but not consumed yet. */
uint64_t bpfrb__pending(const struct bpfrb *rb);

#endif
