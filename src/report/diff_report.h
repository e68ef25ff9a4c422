/* diff_report.h: `llmprof diff` rendered as Markdown or JSON (analyze/diff.h has the numbers;
 * docs/diff.md the format). Deterministic: the same diff gives the same bytes.
 *
 * Ownership: appends to a caller-owned buffer. Not thread-safe.
 */
#ifndef LP_REPORT_DIFF_REPORT_H
#define LP_REPORT_DIFF_REPORT_H

#include "analyze/diff.h"
#include "core/buf.h"
#include "core/err.h"

/* `top` caps the kernel and operator rows shown (0: all). */
int lp_diff_md(const struct lp_diff *d, const char *name_a, const char *name_b, size_t top, struct lp_buf *out);
int lp_diff_json(const struct lp_diff *d, const char *name_a, const char *name_b, struct lp_buf *out, struct lp_err *err);

#endif
