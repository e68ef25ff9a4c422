/* figures.h: the figures of a run, drawn by our own code as SVG from the analysis alone: the
 * timeline of one measured iteration (and a zoom on its first decode steps when the whole is too
 * dense to read), per-decode-step latency with its percentiles, kernel time by
 * family, the top kernels, the operator breakdown per stage, MFU/MBU against the peaks, and the
 * roofline of the Nsight Compute kernels. report.html inlines them (report/html.h); the same bytes
 * are written as figures/<file> in the run folder, and report.md / stakeholder_summary.md link
 * them with one Markdown image line each (lp_figures_md).
 *
 * A figure is drawn only when the analysis has its data (lp_figure_applies): no step latency
 * without decode steps, no kernel figures on a CPU run, no roofline without ncu metrics and peaks.
 * Deterministic: same analysis, same bytes (svg.h: fixed number formatting; every name escaped).
 *
 * Ownership: renderers append to a caller-owned lp_buf. Thread-safe (no shared state).
 *
 *   for (i = 0; i < LP_FIG_COUNT; i++)
 *     if (lp_figure_applies(a, i)) lp_figure_render(a, i, &svg);
 */
#ifndef LP_REPORT_FIGURES_H
#define LP_REPORT_FIGURES_H

#include "analyze/analysis.h"
#include "core/buf.h"
#include "core/err.h"

enum lp_figure_id {
	LP_FIG_TIMELINE = 0,
	LP_FIG_TIMELINE_ZOOM,
	LP_FIG_STEP_LATENCY,
	LP_FIG_KERNEL_FAMILIES,
	LP_FIG_TOP_KERNELS,
	LP_FIG_OPERATORS,
	LP_FIG_MFU,
	LP_FIG_ROOFLINE,
	LP_FIG_WATERFALL,
	LP_FIG_COUNT,
};

struct lp_figure_info {
	const char *file;            /* "timeline.svg": its name under figures/ */
	const char *title;
};
extern const struct lp_figure_info lp_figures[LP_FIG_COUNT];

#define LP_FIGURES_DIR "figures"
#define LP_FIG_TOP_KERNELS_N 15

int lp_figure_applies(const struct lp_analysis *a, enum lp_figure_id id);
/* Appends the SVG (a complete <svg> element, no XML declaration: it is inlined in HTML as is). */
int lp_figure_render(const struct lp_analysis *a, enum lp_figure_id id, struct lp_buf *out);
/* One "![title](figures/<file>)" line per figure that applies, under a "## Figures" heading. */
int lp_figures_md(const struct lp_analysis *a, struct lp_buf *out);
/* Writes run_dir/figures/<file> for each figure that applies (atomically) and removes the files of
 * those that do not (left by an earlier analysis). */
int lp_figures_write(const char *run_dir, const struct lp_analysis *a, struct lp_err *err);

#endif
