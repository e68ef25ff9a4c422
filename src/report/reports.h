/* reports.h: the reports of a run, rendered from an analysis (analyze/analysis.h).
 *
 * Files written into the run folder (docs/reports.md describes each, docs/summary-schema.md the
 * JSON): the table lp_report_files below (kernels.md, operators.md, report.md,
 * stakeholder_summary.md, summary.json, report.html of report/html.h), and the SVG figures of
 * report/figures.h in figures/. Output is
 * deterministic: identical analysis -> identical bytes (no clock is read; the only times are the
 * ones measured in the input). Every file goes through lp_fs_write_atomic.
 *
 * The run pipeline records phase statuses in `phases.json` as it goes (lp_phases_write), so that
 * `llmprof report RUN_DIR` can rebuild the reports later; lp_phases_load reads phases.json, else
 * the `phases` of an existing summary.json.
 *
 * Ownership: renderers append to a caller-owned lp_buf; lp_phases_load hands back a malloc'd array
 * the caller frees. Thread-safe (no shared state).
 *
 *   if (lp_report_write_all(run_dir, &analysis, err) < 0) return -1;
 */
#ifndef LP_REPORT_REPORTS_H
#define LP_REPORT_REPORTS_H

#include "analyze/analysis.h"
#include "core/buf.h"

#define LP_REPORT_TOP_KERNELS 10
#define LP_REPORT_TOP_OPS 10

/* The reports, in the order they are listed to users: the one table every command, the run
 * pipeline and lp_report_write_all derive from (name in the run folder, and its renderer:
 * run_dir is for the artifact list of report.md and the links of report.html, may be NULL). */
struct lp_report_file {
	const char *name;
	int (*render)(const struct lp_analysis *a, const char *run_dir, struct lp_buf *out, struct lp_err *err);
};
#define LP_REPORT_N_FILES 6
extern const struct lp_report_file lp_report_files[LP_REPORT_N_FILES];

/* Writes the reports into run_dir, and the figures of report/figures.h into run_dir/figures/. */
int lp_report_write_all(const char *run_dir, const struct lp_analysis *a, struct lp_err *err);

/* The renderers behind it (run_dir: for the artifact list of report.md; may be NULL). */
int lp_report_kernels_md(const struct lp_analysis *a, struct lp_buf *out);
int lp_report_operators_md(const struct lp_analysis *a, struct lp_buf *out);
int lp_report_report_md(const struct lp_analysis *a, const char *run_dir, struct lp_buf *out);
int lp_report_stakeholder_md(const struct lp_analysis *a, struct lp_buf *out);
int lp_report_summary_json(const struct lp_analysis *a, struct lp_buf *out, struct lp_err *err);

/* phases.json: {"schema_version": 1, "phases": [{"name","status","reason"}...],
 *               "overhead": {"traced_s": x|null, "untraced_s": y|null}} */
int lp_phases_write(const char *run_dir, const struct lp_phase_status *phases, size_t n, double traced_s,
	double untraced_s, struct lp_err *err);
/* Reads phases.json, else summary.json's "phases" (and "overhead"); *n = 0 when neither exists.
 * traced_s / untraced_s are set to 0 when unknown. */
int lp_phases_load(const char *run_dir, struct lp_phase_status **out, size_t *n, double *traced_s,
	double *untraced_s, struct lp_err *err);

#endif
