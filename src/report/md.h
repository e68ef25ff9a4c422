/* md.h: GitHub-flavoured Markdown pieces shared by every report: escaped text, tables whose
 * cells always stay cells (a kernel name with `|`, `<>` or backticks cannot break a row), and
 * shortening of long names with an ellipsis (the full name stays in summary.json).
 *
 * Escaping: `\` `|` `*` `_` backtick `[` `]` become backslash escapes; `<` `>` `&` become the
 * entities &lt; &gt; &amp;; CR/LF/TAB become spaces. Shortening counts UTF-8 code points and never
 * cuts inside one.
 *
 * Ownership: everything appends to a caller-owned lp_buf. Thread-safe (no shared state).
 *
 *   const char *cols[] = { "kernel_name", "total_ms" };
 *   lp_md_header(&b, 2, cols, "lr");
 *   const char *cells[] = { name, "1.250" };
 *   lp_md_row(&b, 2, cells, LP_MD_NAME_MAX);
 */
#ifndef LP_REPORT_MD_H
#define LP_REPORT_MD_H

#include <stddef.h>

#include "core/buf.h"

#define LP_MD_NAME_MAX 80   /* code points of a name shown in a table cell */

/* Appends `s` escaped; 0 ok, -1 out of memory. */
int lp_md_text(struct lp_buf *b, const char *s);
/* Appends `s` shortened to `max_chars` code points (0: no limit; "…" counts as one) and escaped. */
int lp_md_cell(struct lp_buf *b, const char *s, size_t max_chars);
/* "| a | b |\n| --- | ---: |\n" (column names are ours: written as given, unescaped, so that
 * `kernel_name | device | total_ms` stays greppable); `align` has one letter per column: l, r or c (NULL: all l). */
int lp_md_header(struct lp_buf *b, size_t n, const char *const *cols, const char *align);
/* One table row; every cell goes through lp_md_cell with `max_chars`. NULL cells print as empty. */
int lp_md_row(struct lp_buf *b, size_t n, const char *const *cells, size_t max_chars);
/* Number of UTF-8 code points in s. */
size_t lp_md_strlen_utf8(const char *s);

#endif
