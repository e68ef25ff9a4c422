/* ranks_report.h: the per-rank section of the reports (issue 17, docs/ranks.md): report.md and
 * report.html get it, summary.json its "ranks" object, only when the run had more than one rank
 * (lp_ranks_report_wanted). One table model feeds the Markdown and the HTML, so both show the
 * same rows: the ranks (processes, host, devices, kernels, communication kernels, wait in
 * collectives), the merged view per stage (aligned iterations, latency, skew, slowest rank,
 * communication, overlapped, exposed, wait) and each rank's own stage table.
 *
 * Ownership: appends to caller-owned buffers; lp_ranks_json returns a new reference. Thread-safe
 * (no shared state).
 *
 *   if (lp_ranks_report_wanted(&a->ranks) && lp_ranks_md(&a->ranks, &b) < 0) ... out of memory
 */
#ifndef LP_REPORT_RANKS_REPORT_H
#define LP_REPORT_RANKS_REPORT_H

#include <jansson.h>

#include "analyze/ranks.h"
#include "core/buf.h"

/* 1 when the view has more than one rank. */
int lp_ranks_report_wanted(const struct lp_rank_view *v);
/* "## Ranks" and its tables, Markdown. */
int lp_ranks_md(const struct lp_rank_view *v, struct lp_buf *out);
/* The same as an HTML fragment (<h2 id="ranks"> and sortable tables in report.html's classes). */
int lp_ranks_html(const struct lp_rank_view *v, struct lp_buf *out);
/* summary.json's "ranks" object (docs/summary-schema.md); NULL on out of memory. */
json_t *lp_ranks_json(const struct lp_rank_view *v);

#endif
