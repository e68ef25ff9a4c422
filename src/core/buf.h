/* buf.h: a growable byte buffer, strbuf-like.
 *
 * `data` is never NULL (an empty buffer points at a static ""), always NUL-terminated.
 * An optional size cap (`max`, 0 = none) makes appends fail instead of growing without bound.
 * The buffer owns `data`; lp_buf_detach hands it over to the caller (who frees it).
 * Not thread-safe. Allocation failure aborts nothing: an append that fails (out of memory, or
 * past the cap) returns -1, sets `oom` and appends nothing. Errors are sticky, like curl's dynbuf:
 * once `oom` is set every later append fails too, so the content is always a prefix of what was
 * asked for, never a text with a part silently left out; build a whole text, then check the last
 * result or `oom` once. lp_buf_release and lp_buf_detach clear the error; lp_buf_reset keeps it
 * (a buffer reused in a loop and checked at the end still reports the failure).
 *
 *   struct lp_buf b = LP_BUF_INIT;
 *   lp_buf_addf(&b, "%d kernels", n);
 *   puts(b.data);
 *   lp_buf_release(&b);
 */
#ifndef LP_CORE_BUF_H
#define LP_CORE_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "core/err.h"

extern char lp_buf_empty[];

struct lp_buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max;  /* 0: unbounded */
	int oom;     /* set when an append failed (allocation or cap); sticky until reset */
};

#define LP_BUF_INIT { lp_buf_empty, 0, 0, 0, 0 }

void lp_buf_init(struct lp_buf *b, size_t max);
void lp_buf_release(struct lp_buf *b);
char *lp_buf_detach(struct lp_buf *b, size_t *len);
void lp_buf_reset(struct lp_buf *b);
int lp_buf_grow(struct lp_buf *b, size_t extra);
int lp_buf_add(struct lp_buf *b, const void *data, size_t len);
int lp_buf_adds(struct lp_buf *b, const char *s);
int lp_buf_addc(struct lp_buf *b, char c);
int lp_buf_addf(struct lp_buf *b, const char *fmt, ...) LP_PRINTF(2, 3);
int lp_buf_vaddf(struct lp_buf *b, const char *fmt, va_list ap) LP_PRINTF(2, 0);
void lp_buf_setlen(struct lp_buf *b, size_t len);
/* Appends `s` quoted for a POSIX shell when needed (copy-paste runnable command lines). */
int lp_buf_add_shell_quoted(struct lp_buf *b, const char *s);

#endif
