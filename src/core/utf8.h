/* utf8.h: text that is not valid UTF-8, made safe to print and to put in JSON.
 *
 * Kernel and range names come from files we did not write (ncu/nsys exports, traces of any
 * program) and may hold bytes that are not UTF-8. jansson's json_string() returns NULL for them,
 * and json_object_set_new() then silently drops the key: every JSON writer goes through
 * lp_json_string instead, which replaces each invalid byte by U+FFFD. Numbers likewise:
 * lp_json_real gives JSON null (explicit "no value") for a value that is not finite, where
 * json_real() would return NULL and drop the key.
 *
 * Validity follows RFC 3629: no overlong forms, no surrogates (U+D800..U+DFFF), nothing past
 * U+10FFFF. NUL-terminated input. Thread-safe; the caller owns what is returned.
 *
 *   json_object_set_new(o, "kernel_name", lp_json_string(r->kernel_name));
 *   json_object_set_new(o, "total_ms", lp_json_real(r->total_ms));
 */
#ifndef LP_CORE_UTF8_H
#define LP_CORE_UTF8_H

#include <jansson.h>
#include <stddef.h>

#include "core/buf.h"

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when the byte at s starts none. */
size_t lp_utf8_seq_len(const char *s);
/* 1 when all of s is valid UTF-8. */
int lp_utf8_valid(const char *s);
/* Appends s to out with every byte that starts no valid sequence replaced by U+FFFD. */
int lp_utf8_sanitize(struct lp_buf *out, const char *s);
/* A JSON string of s, sanitized as above; never NULL for a non-NULL s unless out of memory.
 * NULL s gives JSON null. */
json_t *lp_json_string(const char *s);
/* json_real(v) for a finite v, JSON null otherwise. */
json_t *lp_json_real(double v);

#endif
