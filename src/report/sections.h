/* sections.h: Markdown sections shared by report.md and stakeholder_summary.md (the per-stage
 * timings table with its nested-stage note, the MFU/MBU table, top kernels, top operators, the
 * environment list). Internal to src/report/; each appends to `out` and returns 0 or -1 (out of
 * memory, as lp_buf reports it). */
#ifndef LP_REPORT_SECTIONS_H
#define LP_REPORT_SECTIONS_H

#include "analyze/analysis.h"
#include "core/buf.h"

int lp_section_stages(const struct lp_analysis *a, struct lp_buf *out);
/* The gap waterfall per decode step and per prefill (analyze/waterfall.h). */
int lp_section_waterfall(const struct lp_analysis *a, struct lp_buf *out);
int lp_section_mfu(const struct lp_analysis *a, struct lp_buf *out);
/* The sample column of a row scaled from a sampled trace (analyze/sampling.h): "+- 0.123 ms (16 of
 * 126 units)", "n/a (...)" without an interval, or "exact" for a row whose kernels all lie outside
 * the sampling units. */
void lp_section_sample_cell(char *b, size_t cap, int sampled, double ci_ms, double rerun_ms, uint32_t n, uint32_t N);
/* One sentence (leading space) on the cell's "a rerun" interval; nothing when trace.rerun_sd is 0. */
void lp_section_rerun_note(const struct lp_analysis *a, struct lp_buf *out);
/* A sampled trace none of whose units past the first ones was recorded (lp_kernel_set.sample_missing):
 * one sentence (plain text: escape it for HTML) saying the kernel rows estimate those units from the
 * first ones; nothing otherwise. */
void lp_section_missing_note(const struct lp_analysis *a, struct lp_buf *out);
int lp_section_top_kernels(const struct lp_analysis *a, size_t n, struct lp_buf *out);
int lp_section_top_ops(const struct lp_analysis *a, size_t n, struct lp_buf *out);
int lp_section_environment(const struct lp_analysis *a, struct lp_buf *out);
/* The host clock (env.json "clock", `llmprof check`): "kvm-clock, 812 ns a read" and, where the
 * collector found the read slow, why that matters (plain text). 0 when `clock` has no read time. */
int lp_fmt_host_clock(const json_t *clock, struct lp_buf *out);
int lp_section_advice(const struct lp_analysis *a, enum lp_advice_kind kind, struct lp_buf *out);
/* "1.234" or "n/a" for NAN; into a small static-free buffer the caller owns */
const char *lp_fmt_num(char *buf, size_t cap, double v, int decimals);
/* The most measured iterations of any stage (the Aggregates line of every report). */
size_t lp_measured_iterations(const struct lp_analysis *a);
/* "1 / 512 / 128": batch / prompt length / decode steps, "n/a" for each unknown (plain text). */
int lp_fmt_token_counts(const struct lp_analysis *a, struct lp_buf *out);

/* Sentences that report.md, stakeholder_summary.md and report.html word alike: built once here,
 * escaped by the caller's writer (lp_md_text for Markdown, lp_xml_text for HTML). */
typedef int (*lp_text_fn)(struct lp_buf *b, const char *s);
/* "Peak FLOP/s: 989.4 TFLOP/s (<source>). Peak bandwidth: 3350 GB/s (<source>)", n/a for an
 * unknown peak; no final period. */
int lp_fmt_peaks(const struct lp_analysis *a, lp_text_fn text, struct lp_buf *out);
/* The largest idle gaps of a waterfall: "<label> 0.0123 ms per step (4.0 times); ..." (nothing
 * when it has none). */
int lp_fmt_gaps(const struct lp_waterfall *w, lp_text_fn text, struct lp_buf *out);
/* The check of every decode step against the workload's own (analysis.h lp_step_check): one
 * sentence with a leading space, no markup and nothing to escape; nothing when the workload
 * listed no steps. A second when most steps are outside, llmprof's lower by at most
 * LP_CHECK_HOST_GAP_MS at the median, on a stage whose GPU sat idle at least 90% of it (the
 * workload's step events then hold host time around each step's range, as lp_fmt_check_host's). */
int lp_fmt_step_check(const struct lp_analysis *a, struct lp_buf *out);
/* Why a self-check over its tolerance may be no error: for each such latency per iteration of a
 * stage (lp_self_check.stage) whose llmprof value is lower by at most LP_CHECK_HOST_GAP_MS on a stage whose GPU sat idle at least 90% of it,
 * one sentence (leading space, plain text, nothing to escape): there the workload's CUDA events
 * measure host time, its own timer's share outside the stage's range included (docs/nvtx.md). */
int lp_fmt_check_host(const struct lp_analysis *a, struct lp_buf *out);
#define LP_CHECK_HOST_GAP_MS 0.5
/* The waterfall's floor source: "memory: ..." as is, "n/a (reason)" when the floor is unknown. */
int lp_fmt_floor(const struct lp_waterfall *w, lp_text_fn text, struct lp_buf *out);

#endif
