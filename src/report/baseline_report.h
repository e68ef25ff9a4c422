/* baseline_report.h: report stage, the program against the reference workload on the same shape
 * (analyze/baseline.h, run.baseline=reference) -> the "Against the reference workload" section of
 * report.md and report.html, and summary.json's "baseline" object. Nothing when no baseline was
 * asked (analysis.baseline_asked 0). */
#ifndef LP_REPORT_BASELINE_REPORT_H
#define LP_REPORT_BASELINE_REPORT_H

#include <jansson.h>

#include "analyze/analysis.h"
#include "core/buf.h"

int lp_baseline_md(const struct lp_analysis *a, struct lp_buf *out);
int lp_baseline_html(const struct lp_analysis *a, struct lp_buf *out);
/* summary.json's "baseline": null when not asked. New reference. */
json_t *lp_baseline_json(const struct lp_analysis *a);

#endif
