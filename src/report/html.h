/* html.h: report.html, one self-contained page per run: the sections of stakeholder_summary.md
 * (Environment, Aggregates, Per-stage timings, MFU, Takeaways, Operators, Kernels, NVTX regions,
 * Recommendations, Self-check) plus the run's phases and tracer overhead, with the figures of
 * figures.h inlined as SVG beside the tables they illustrate.
 *
 * Self-contained: inline CSS (with a print style), a few lines of inline JavaScript that sort a
 * table when its header is clicked, no external resource of any kind (no CDN, fonts, images or
 * links that load anything): it reads the same from disk, offline, and on paper. Hover texts are
 * SVG/HTML <title>s, so they need no script. Names are escaped (svg.h lp_xml_text) and shortened
 * with the full name on hover.
 *
 * Deterministic: same analysis and same ncu/regions/report.json, same bytes (no clock is read).
 * The NVTX-region tree comes from run_dir/ncu/regions/report.json when it exists (NULL run_dir:
 * no region section).
 *
 * Ownership: appends to a caller-owned lp_buf. Thread-safe (no shared state).
 *
 *   if (lp_report_html(&analysis, run_dir, &b) < 0) ... out of memory
 */
#ifndef LP_REPORT_HTML_H
#define LP_REPORT_HTML_H

#include "analyze/analysis.h"
#include "core/buf.h"

#define LP_HTML_TOP_KERNELS 100   /* rows of the kernel table (every kernel is in kernels.md) */
#define LP_HTML_NAME_MAX 90       /* code points of a name shown in a table cell */
#define LP_HTML_REGIONS_MAX (8u << 20)  /* bytes of ncu/regions/report.json read */

int lp_report_html(const struct lp_analysis *a, const char *run_dir, struct lp_buf *out);
/* "file:///abs/run/report.html" for run_dir (made absolute, symlinks resolved), bytes outside
 * [A-Za-z0-9-._~/] percent-encoded. -1 when the folder cannot be resolved. */
int lp_report_html_url(const char *run_dir, struct lp_buf *out);

#endif
