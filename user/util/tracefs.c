// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * tracefs helpers: mount on demand, read files, parse event formats.  The
 * format parser is the ring buffer's (kagg_rb_events__parse): one parser
 * for the whole library.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include <kagg/rb_format.h>
#include "util/tracefs.h"

int tracefs_ensure(char *msg, size_t msg_sz)
{
	int err;

	if (!access(TRACEFS_DIR "/events", F_OK))
		return 0;
	if (!mount("nodev", TRACEFS_DIR, "tracefs", 0, NULL))
		return 0;
	err = -errno;
	snprintf(msg, msg_sz,
		 "tracefs is not mounted and mounting it on %s failed: %s "
		 "(run as root, or mount -t tracefs nodev %s)",
		 TRACEFS_DIR, strerror(-err), TRACEFS_DIR);
	return err;
}

int tracefs_read(const char *rel, char **buf, size_t *len)
{
	size_t n = 0, cap = 65536;
	char path[512], *b, *tmp;
	ssize_t r;
	int fd, err = 0;

	if (rel[0] == '/')
		snprintf(path, sizeof(path), "%s", rel);
	else
		snprintf(path, sizeof(path), TRACEFS_DIR "/%s", rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	b = malloc(cap);
	while (b) {
		r = read(fd, b + n, cap - n - 1);
		if (r < 0) {
			err = -errno;
			break;
		}
		if (!r)
			break;
		n += r;
		if (cap - n < 2) {
			tmp = realloc(b, cap * 2);
			if (!tmp) {
				free(b);
				b = NULL;
				break;
			}
			b = tmp;
			cap *= 2;
		}
	}
	close(fd);
	if (!b)
		return -ENOMEM;
	if (err) {
		free(b);
		return err;
	}
	b[n] = '\0';
	*buf = b;
	if (len)
		*len = n;
	return 0;
}

int tracefs_event_format(struct kagg_rb_events *evs, const char *sys, const char *name,
			 const struct kagg_rb_format **out)
{
	char rel[512], *text = NULL;
	size_t len;
	int err;

	*out = kagg_rb_events__find_by_name(evs, sys, name);
	if (*out)
		return 0;
	if (strchr(sys, '/') || strchr(name, '/') || !strcmp(sys, "..") || !strcmp(name, ".."))
		return -ENOENT;
	snprintf(rel, sizeof(rel), "events/%s/%s/format", sys, name);
	err = tracefs_read(rel, &text, &len);
	if (err)
		return err;
	err = kagg_rb_events__parse(evs, sys, text, len, out);
	free(text);
	return err;
}
