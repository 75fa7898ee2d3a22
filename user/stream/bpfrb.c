// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Direct consumer of a BPF ring buffer (see bpfrb.h).
 *
 * Layout of the map's mmap (kernel/bpf/ringbuf.c's documented uapi): page 0
 * holds consumer_pos (read-write for us), page 1 producer_pos, then the data
 * area mapped twice back to back so a record never wraps.  Each record
 * starts with an 8-byte header: u32 length with BUSY (bit 31, being written)
 * and DISCARD (bit 30) flags, u32 page offset; records are 8-byte aligned.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>

#include "stream/bpfrb.h"

struct bpfrb {
	unsigned long *consumer_pos;
	unsigned long *producer_pos;
	uint8_t *data;
	uint64_t mask;
	size_t page_size;
	size_t max_entries;
	int epoll_fd;
};

struct bpfrb *bpfrb__new(int map_fd, size_t max_entries)
{
	/* edge-triggered: a wait returns on the producer's next wakeup, even when
	 * records are already pending (the ring reports readable whenever any are) */
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	struct bpfrb *rb;
	void *p;
	int err;

	rb = calloc(1, sizeof(*rb));
	if (!rb)
		return NULL;
	rb->page_size = sysconf(_SC_PAGESIZE);
	rb->max_entries = max_entries;
	rb->mask = max_entries - 1;
	rb->epoll_fd = -1;
	p = mmap(NULL, rb->page_size, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	rb->consumer_pos = p;
	p = mmap(NULL, rb->page_size + 2 * max_entries, PROT_READ, MAP_SHARED, map_fd,
		 rb->page_size);
	if (p == MAP_FAILED)
		goto fail;
	rb->producer_pos = p;
	rb->data = (uint8_t *)p + rb->page_size;
	rb->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (rb->epoll_fd < 0 || epoll_ctl(rb->epoll_fd, EPOLL_CTL_ADD, map_fd, &ev))
		goto fail;
	return rb;
fail:
	err = errno;
	bpfrb__free(rb);
	errno = err;
	return NULL;
}

void bpfrb__free(struct bpfrb *rb)
{
	if (!rb)
		return;
	if (rb->consumer_pos)
		munmap(rb->consumer_pos, rb->page_size);
	if (rb->producer_pos)
		munmap(rb->producer_pos, rb->page_size + 2 * rb->max_entries);
	if (rb->epoll_fd >= 0)
		close(rb->epoll_fd);
	free(rb);
}

long bpfrb__drain(struct bpfrb *rb, bpfrb_fn fn, void *ctx, uint64_t *bytes)
{
	unsigned long cons, prod;
	uint64_t moved = 0;
	long n = 0, batch = 0;

	cons = __atomic_load_n(rb->consumer_pos, __ATOMIC_ACQUIRE);
	for (;;) {
		prod = __atomic_load_n(rb->producer_pos, __ATOMIC_ACQUIRE);
		if (cons >= prod)
			break;
		while (cons < prod) {
			uint32_t *hdr = (uint32_t *)(rb->data + (cons & rb->mask));
			uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE), size;

			if (len & BPF_RINGBUF_BUSY_BIT)
				goto out;
			size = len & ~(uint32_t)(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				fn(ctx, (uint8_t *)hdr + BPF_RINGBUF_HDR_SZ, size);
				n++;
			}
			size = (size + BPF_RINGBUF_HDR_SZ + 7) & ~7u;
			cons += size;
			moved += size;
			if (++batch == BPFRB_PUBLISH_EVERY) {
				__atomic_store_n(rb->consumer_pos, cons, __ATOMIC_RELEASE);
				batch = 0;
			}
		}
	}
out:
	__atomic_store_n(rb->consumer_pos, cons, __ATOMIC_RELEASE);
	if (bytes)
		*bytes += moved;
	return n;
}

int bpfrb__wait(struct bpfrb *rb, int timeout_ms)
{
	struct epoll_event ev;
	int n = epoll_wait(rb->epoll_fd, &ev, 1, timeout_ms);

	return n < 0 ? -errno : n;
}

uint64_t bpfrb__pending(const struct bpfrb *rb)
{
	return __atomic_load_n(rb->producer_pos, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(rb->consumer_pos, __ATOMIC_ACQUIRE);
}
