/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* demangle.h - C++ and Rust symbol names made readable (user/syms/demangle.c). */
#ifndef KAGG_DEMANGLE_H
#define KAGG_DEMANGLE_H

#include <stddef.h>

/*
 * Demangle a C++ (Itanium ABI, "_Z...") or Rust (v0 "_R...", legacy "_ZN...17h<hash>E") name
 * into buf, parameters included: "ns::Class::func(int)", "std::rt::lang_start_internal".
 * 0, -ENOENT (not a mangled name, or not a valid one: buf is ""), -ENAMETOOLONG (buf holds
 * the first len - 1 bytes), -EINVAL (NULL argument or len < 2).  Thread-safe.
 */
int demangle_name(const char *name, char *buf, size_t len);

#endif /* KAGG_DEMANGLE_H */
