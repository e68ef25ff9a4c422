/* tracing_mode.h: what the reports say about the tracer's mode (issue 24; docs/tracer.md "Sampled
 * tracing"): exact or sampled, and why (trace.sample=off, a schedule given, or auto with the launch
 * rate it measured against its threshold), from the SAMPLING record (lp_analysis.sampling).
 *
 *   report.md, stakeholder.md : lp_tracing_mode_text (one sentence, plain text: escape it)
 *   summary.json              : lp_tracing_mode_json ("tracing", docs/summary-schema.md)
 *   report.html               : lp_tracing_mode_text inside the run section
 *
 * Ownership: the text goes into a caller-owned buffer; the JSON is a new reference. Pure and
 * thread-safe.
 */
#ifndef LP_REPORT_TRACING_MODE_H
#define LP_REPORT_TRACING_MODE_H

#include <jansson.h>

#include "analyze/analysis.h"
#include "core/buf.h"

/* "exact", "sampled", or "unknown" (no SAMPLING record: an older trace, nsys, a CPU run). */
const char *lp_tracing_mode_name(const struct lp_analysis *a);
/* One sentence (ending with '.'), e.g. "Sampled: kernels were traced in 34 of 256 decode_step
 * ranges (the first 2 under each parent, then 1 in 8), chosen by auto at 55000 launches/s (above
 * 5000); ...". */
int lp_tracing_mode_text(const struct lp_analysis *a, struct lp_buf *out);
json_t *lp_tracing_mode_json(const struct lp_analysis *a);

#endif
