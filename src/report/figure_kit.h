/* figure_kit.h: what the figure drawings share (private to src/report/figures*.c): the colours,
 * the label helpers, the data-presence checks lp_figure_applies also uses, and one function per
 * figure, dispatched by lp_figure_render. Each drawing appends one complete <svg> element to `b`
 * and returns -1 when the buffer ran out of memory, else 0. Thread-safe (no shared state). */
#ifndef LP_REPORT_FIGURE_KIT_H
#define LP_REPORT_FIGURE_KIT_H

#include <stddef.h>

#include "analyze/analysis.h"
#include "core/buf.h"
#include "report/figures.h"

#define LP_FIG_N_PALETTE 10
#define LP_FIG_INK "#222222"
#define LP_FIG_GRID "#dddddd"
#define LP_FIG_MUTED "#666666"

/* Tableau 10 (figures.c). */
extern const char *const lp_fig_palette[LP_FIG_N_PALETTE];

/* The fill of a kernel family (fixed, so a family keeps its colour across figures and runs). */
const char *lp_fig_family_color(enum lp_kernel_family f);
/* A colour from a name: the same range name gets the same colour in every timeline. */
const char *lp_fig_name_color(const char *s);
/* LP_FIG_INK or white, whichever reads better on `fill` ("#rrggbb"). */
const char *lp_fig_ink_on(const char *fill);
/* The decode stage if it has step latencies, else the first stage that has; NULL when none. */
const struct lp_stage *lp_fig_decode_with_steps(const struct lp_analysis *a);
/* Kernels with a finite, positive intensity and achieved FLOP/s: points of the roofline. */
int lp_fig_roofline_points(const struct lp_analysis *a);
/* The waterfall the figure draws: the decode step's, else the prefill's; NULL when neither is valid. */
const struct lp_waterfall *lp_fig_waterfall_of(const struct lp_analysis *a);
/* A short duration for labels: "812 ns", "12.5 us", "3.250 ms". */
void lp_fig_fmt_ns(char *b, size_t cap, double ns);
/* A muted 11px caption at (x, y). */
void lp_fig_caption(struct lp_buf *b, double x, double y, const char *text);

/* figures_time.c */
int lp_fig_timeline(const struct lp_analysis *a, int zoom, struct lp_buf *b);
int lp_fig_step_latency(const struct lp_analysis *a, struct lp_buf *b);
int lp_fig_waterfall(const struct lp_analysis *a, struct lp_buf *b);
/* figures_kernels.c */
int lp_fig_kernel_families(const struct lp_analysis *a, struct lp_buf *b);
int lp_fig_top_kernels(const struct lp_analysis *a, struct lp_buf *b);
int lp_fig_operators_cpu(const struct lp_analysis *a, struct lp_buf *b);
int lp_fig_operators(const struct lp_analysis *a, struct lp_buf *b);
int lp_fig_mfu(const struct lp_analysis *a, struct lp_buf *b);
int lp_fig_roofline(const struct lp_analysis *a, struct lp_buf *b);

#endif
