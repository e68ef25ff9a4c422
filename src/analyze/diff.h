/* diff.h: what changed between two runs, with a verdict per number from the runs' own spread.
 *
 * Input: two summary.json documents (the same schema_version) and, optionally, each run's
 * config.yaml as JSON; or two kernel tables (`llmprof kernels` sources). Output: rows of
 * (metric, A, B, delta, verdict), the environment differences that matter, added and removed
 * kernels, and a narrative naming the kernels that explain the decode and prefill deltas.
 *
 * Verdicts (docs/diff.md): Welch's t-test (analyze/welch.h) on the per-iteration values behind a
 * stage number (mean, sample std and count are in summary.json), or on the per-launch durations of
 * a kernel. A change is `slower` / `faster` (or `higher` / `lower` where neither is better) only
 * when p < LP_DIFF_ALPHA and |relative change| >= the metric's minimum effect (LP_DIFF_MIN_STAGE
 * for stage numbers, LP_DIFF_MIN_KERNEL for kernels); otherwise `within noise`. Fewer than 2
 * values on a side: `n/a (one iteration)`, never a verdict. Numbers without a spread (MFU, MBU,
 * operator totals, kernel tables) get `no spread` and are shown for information only.
 *
 * Ownership: the diff owns its rows and strings (lp_diff_release). Not thread-safe.
 *
 *   struct lp_diff d;
 *   if (lp_diff_runs(sum_a, cfg_a, sum_b, cfg_b, &d, err) < 0) return -1;
 *   ... lp_diff_release(&d);
 */
#ifndef LP_ANALYZE_DIFF_H
#define LP_ANALYZE_DIFF_H

#include <jansson.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "profile/profile.h"

#define LP_DIFF_ALPHA 0.01
#define LP_DIFF_MIN_STAGE 0.01    /* 1% */
#define LP_DIFF_MIN_KERNEL 0.03   /* 3%: launches of one kernel differ run to run by about 1% */

enum lp_diff_verdict {
	LP_DIFF_NOISE = 0,       /* within noise */
	LP_DIFF_WORSE,           /* slower (or fewer tokens/s) */
	LP_DIFF_BETTER,          /* faster */
	LP_DIFF_HIGHER,          /* changed, neither better nor worse (kernel counts) */
	LP_DIFF_LOWER,
	LP_DIFF_NA,              /* no verdict: see why */
	LP_DIFF_ADDED,           /* only in B */
	LP_DIFF_REMOVED,         /* only in A */
};

enum lp_diff_section { LP_DIFF_STAGE = 0, LP_DIFF_TOKENS, LP_DIFF_PERF, LP_DIFF_KERNEL, LP_DIFF_OPERATOR };

struct lp_diff_row {
	enum lp_diff_section section;
	char *key;               /* "decode_all.latency", "ttft", "kernel:<name>": what --fail-if names */
	char *label;             /* what the reports print */
	const char *unit;        /* "ms", "tokens/s", "%", "" */
	const char *basis;       /* kernels: "per launch", "per iteration" or "total"; else NULL */
	double a, b;             /* NAN when absent on that side */
	double delta, rel;       /* b - a, (b - a) / a (NAN when a is 0 or absent) */
	double p;                /* Welch p-value; -1 unknown */
	enum lp_diff_verdict verdict;
	const char *why;         /* for LP_DIFF_NA: "one iteration", "no spread" ... */
	double per_step_delta;   /* kernels: decode ms per step, B - A (0 when unknown) */
};

struct lp_diff {
	struct lp_diff_row *rows;
	size_t n_rows, cap_rows;
	char **env;              /* "GPU: NVIDIA H100 -> NVIDIA H200", one line each */
	size_t n_env, cap_env;
	struct lp_buf narrative; /* one paragraph */
	int table_mode;          /* 1: two kernel tables, no stages */
	size_t added, removed;
};

void lp_diff_release(struct lp_diff *d);
/* Two runs' summary.json (and config.yaml as JSON, each may be NULL). Refuses different schema
 * versions (LP_EUSAGE with both versions named). */
int lp_diff_runs(const json_t *a, const json_t *cfg_a, const json_t *b, const json_t *cfg_b, struct lp_diff *out,
	struct lp_err *err);
/* Two kernel tables: rows per kernel name; per-launch means compared without a spread. */
int lp_diff_tables(const struct lp_kernel_table *a, const struct lp_kernel_table *b, struct lp_diff *out,
	struct lp_err *err);
const char *lp_diff_verdict_name(enum lp_diff_verdict v);
/* The row a --fail-if key names (exact key, or "decode.*" for the decode stage); NULL none. */
const struct lp_diff_row *lp_diff_find(const struct lp_diff *d, const char *key);

#endif
