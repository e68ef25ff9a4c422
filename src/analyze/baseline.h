/* baseline.h: the program against the reference workload on the same shape (run.baseline=reference).
 *
 * `llmprof run run.baseline=reference -- python my_program.py` also runs llmprof-llm, traced, in
 * light mode, on the shape the run discovered (the model's HF config, batch, prompt length and new
 * tokens) into <run>/baseline/. This module reads that nested run's summary.json beside the
 * program's own analysis and compares them per stage: the program's latency, the reference's, the
 * ratio (program / reference: 2.0 = the program takes twice as long as this GPU can), and the
 * reference's MBU/MFU over latency. Plain data; no allocation.
 *
 *   struct lp_baseline b;
 *   lp_baseline_compare(ref_summary, &analysis, &b);   // b.valid == 0: b.why says why
 */
#ifndef LP_ANALYZE_BASELINE_H
#define LP_ANALYZE_BASELINE_H

#include <jansson.h>

struct lp_analysis;

enum { LP_BASELINE_TTFT, LP_BASELINE_STEP, LP_BASELINE_TOKS, LP_BASELINE_ROWS };

struct lp_baseline_row {
	const char *what;            /* "time to first token (ms)", "decode ms/step", "decode tokens/s" */
	const char *perf_stage;      /* "prefill" / "decode": the reference's perf row for MBU/MFU */
	int lower_is_better;         /* latencies: 1; tokens/s: 0 */
	int valid;                   /* both numbers known */
	double program, reference;
	double ratio;                /* program time / reference time (tokens/s: reference / program) */
	double ref_mbu, ref_mfu;     /* the reference's, over latency; NAN unknown */
	char why[160];               /* when !valid */
};

struct lp_baseline {
	int present;                 /* a baseline summary was given */
	int valid;                   /* at least one row valid */
	char why[256];               /* !valid: why there is no comparison */
	char ref_model[64];          /* the reference's model name, "" unknown */
	long long batch, prompt_len, steps;   /* the reference's tokens */
	struct lp_baseline_row rows[LP_BASELINE_ROWS];
};

/* Compares the program's analysis `a` with the reference run's summary.json `ref` (NULL: not
 * present; `ref_why` then says why, e.g. the phase's reason, or NULL). Never fails. */
void lp_baseline_compare(const json_t *ref, const char *ref_why, const struct lp_analysis *a,
	struct lp_baseline *out);

#endif
