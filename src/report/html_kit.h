/* html_kit.h: building blocks of report.html (private to src/report/html*.c). Each appends to a
 * caller-owned lp_buf (out of memory is seen in b->oom, as lp_buf records it); every string goes
 * through lp_xml_text, every number through a fixed printf format. Thread-safe (no shared state).
 *
 *   lp_html_h2(b, "stages", "Per-stage timings");
 *   lp_html_thead(b, 1, 2, cols, "-n");
 *   lp_buf_adds(b, "<tr>"); lp_html_td(b, name); lp_html_tdn(b, ms, 3, NULL); lp_buf_adds(b, "</tr>\n");
 *   lp_html_tend(b);
 */
#ifndef LP_REPORT_HTML_KIT_H
#define LP_REPORT_HTML_KIT_H

#include <stddef.h>

#include "analyze/analysis.h"
#include "core/buf.h"
#include "report/figures.h"

void lp_html_text(struct lp_buf *b, const char *s);
void lp_html_h2(struct lp_buf *b, const char *id, const char *title);
void lp_html_th(struct lp_buf *b, const char *name, int numeric);
/* A table head: names, with 'n' in `num` for numeric columns; sortable adds the click-to-sort class. */
void lp_html_thead(struct lp_buf *b, int sortable, size_t n, const char *const *cols, const char *num);
void lp_html_tend(struct lp_buf *b);
void lp_html_td(struct lp_buf *b, const char *s);
/* A number cell: shown with `decimals` (and suffix), sorted by its value; n/a for NAN. */
void lp_html_tdn(struct lp_buf *b, double v, int decimals, const char *suffix);
void lp_html_tdu(struct lp_buf *b, unsigned long long v);
/* A name cell: shortened to `max` code points, the full name on hover. */
void lp_html_tdname(struct lp_buf *b, const char *s, size_t max);
/* An lp_num cell: value x scale, or n/a with the reason on hover. */
void lp_html_tdnum(struct lp_buf *b, const struct lp_num *n, int decimals, double scale, const char *suffix);
/* An lp_num as escaped text ("1.234 ms" or "n/a (why)"). */
void lp_html_num_text(struct lp_buf *b, const struct lp_num *n, int decimals, double scale, const char *suffix);
/* "<li>label: number</li>" */
void lp_html_li_num(struct lp_buf *b, const char *label, const struct lp_num *n, int decimals, double scale,
	const char *suffix);
/* The figure inlined with its caption, when it applies. */
void lp_html_figure(const struct lp_analysis *a, enum lp_figure_id id, struct lp_buf *b);

/* html_sections.c: the measurement sections, each with its heading. */
void lp_html_stages(const struct lp_analysis *a, struct lp_buf *b);
void lp_html_mfu(const struct lp_analysis *a, struct lp_buf *b);
void lp_html_waterfall(const struct lp_analysis *a, struct lp_buf *b);
/* The advice of one kind as a list (no heading). */
void lp_html_advice(const struct lp_analysis *a, enum lp_advice_kind kind, struct lp_buf *b);
void lp_html_operators(const struct lp_analysis *a, struct lp_buf *b);
void lp_html_kernels(const struct lp_analysis *a, struct lp_buf *b);
/* The NVTX-region tree of run_dir/ncu/regions/report.json; nothing when absent (or run_dir NULL). */
void lp_html_regions(const char *run_dir, struct lp_buf *b);

#endif
