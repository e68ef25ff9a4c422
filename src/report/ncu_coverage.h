/* ncu_coverage.h: what the reports say about the sampled Nsight Compute phase (issue 15;
 * docs/ncu-sampling.md), rendered from ncu/sampling.json (run/ncu_sampled.h writes it):
 * the coverage of the selection's kernel time against the target, and per group whether its
 * metrics were sampled in this run or reused from the cache, or why it has none.
 *
 *   kernels.md / report.md : lp_report_ncu_coverage_md   ("## Nsight Compute coverage")
 *   summary.json           : lp_report_ncu_coverage_json  ("ncu_sampling", docs/summary-schema.md)
 *   report.html            : lp_report_ncu_coverage_html  (a <section>)
 * A run without sampling.json (light mode, sampling off, an older run) renders nothing (md/html)
 * and null (json).
 *
 * Ownership: renderers append to a caller-owned buffer; JSON results are new references. The
 * renderers are pure; lp_report_ncu_sampling_load reads the file (report/rebuild.c calls it).
 * Thread-safe.
 */
#ifndef LP_REPORT_NCU_COVERAGE_H
#define LP_REPORT_NCU_COVERAGE_H

#include <jansson.h>

#include "core/buf.h"
#include "core/err.h"

#define LP_COVERAGE_LISTED 25   /* groups without metrics listed by name, largest first */

/* Reads <run_dir>/ncu/sampling.json: 0 with *out = NULL when absent, -1 when unreadable. */
int lp_report_ncu_sampling_load(const char *run_dir, json_t **out, struct lp_err *err);

/* `detail`: 1 lists every group (kernels.md), 0 the summary line and what is not covered. */
int lp_report_ncu_coverage_md(const json_t *sampling, int detail, struct lp_buf *out);
json_t *lp_report_ncu_coverage_json(const json_t *sampling);
int lp_report_ncu_coverage_html(const json_t *sampling, struct lp_buf *out);

/* The mark a group carries in the tables: "sampled", "reused" (from the cache), or "none". */
const char *lp_report_ncu_group_mark(const json_t *group);

#endif
