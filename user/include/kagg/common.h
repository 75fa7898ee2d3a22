/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * kagg/common.h - conventions shared by every libkagg header.
 *
 * - Functions returning int return 0 on success or a negative errno.
 * - Functions returning a pointer return NULL on failure with errno set.
 * - Every *_opts struct starts with `size_t sz` (set it with KAGG_OPTS) and is
 *   only ever appended to.  A caller built against a newer header may pass a
 *   larger struct: the library accepts it when every byte it does not know is
 *   zero, and fails with -EINVAL otherwise.
 * - Every __destroy()/__free() accepts NULL.
 * - libkagg keeps no process-global state: logging goes through the callback
 *   given in each handle's opts.
 */
#ifndef KAGG_COMMON_H
#define KAGG_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef KAGG_API
#define KAGG_API __attribute__((visibility("default")))
#endif

/* Declare and size an opts struct: KAGG_OPTS(kagg_offcpu_opts, o, .unit = ...); */
#define KAGG_OPTS(TYPE, NAME, ...)                                             \
	struct TYPE NAME = ({                                                  \
		memset(&NAME, 0, sizeof(struct TYPE));                         \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };       \
	})

enum kagg_log_level {
	KAGG_LOG_WARN = 0,
	KAGG_LOG_INFO = 1,
	KAGG_LOG_DEBUG = 2,
};

/*
 * Log callback: one message per call, without a trailing newline.  Called
 * from the thread that called into the library; ctx is the pointer given
 * next to the callback in the opts.
 */
typedef void (*kagg_log_fn)(void *ctx, enum kagg_log_level level, const char *msg);

/*
 * Route libbpf's messages (verifier logs, load errors) to fn, or silence
 * them with NULL.  libbpf's print hook is process-wide, so this setting is
 * too: call it once, early, from the program's main thread.
 */
KAGG_API void kagg_libbpf_set_log(kagg_log_fn fn, void *ctx);

/* Library version, "MAJOR.MINOR.PATCH". Thread-safe. */
KAGG_API const char *kagg_version(void);

#ifdef __cplusplus
}
#endif
#endif /* KAGG_COMMON_H */
