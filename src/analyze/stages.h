/* stages.h: per-iteration stage timings (prefill, decode) from a profile's NVTX ranges.
 *
 * Which ranges are which stage (the stage mapping, struct lp_stage_rules): each range name is
 * matched against five lists of names, one per role: prefill, decode (the range spanning the
 * decode steps of one iteration), decode step, warm-up and mixed (one forward carrying prefill and
 * decode tokens together: chunked prefill). Entries are exact names or `regex:`
 * followed by a POSIX extended expression that must match the whole name; a name matching
 * several roles takes the first in that order. Any domain matches; when some ranges of a role are
 * in the `LLM` domain, only those count for that role (a default-domain `prefill` beside
 * llmprof's own ranges is ignored). Defaults (rules NULL, or a NULL list): prefill = `prefill`;
 * decode = `decode_all`, `decode`; step = `decode_step`, `step`; warm-up = `warmup`; mixed =
 * `mixed`. The stage rows keep the canonical names `prefill`, `decode_all`, `mixed` and
 * `decode_step` whatever the ranges were called; the set
 * records which (domain, name) pairs were taken as which role (lp_stage_set.map).
 *
 * A stage occurrence is a prefill or decode range that is not under a warm-up range and not
 * nested in a range of the same role. Each occurrence is one measured iteration: host time = push
 * to pop; GPU busy time = the union of the intervals of the kernels attributed to it or its
 * descendants (launch-time attribution, profile.h); kernel count and summed kernel time; for
 * decode the number of outermost decode-step ranges inside; for prefill the payload (prompt
 * tokens x batch). Statistics across iterations use the sample standard deviation (n - 1).
 *
 * Warm-up for programs that do not mark it: rules->skip_first = N >= 0 leaves out the first N
 * occurrences (by start time) of every stage that has more than N; LP_SKIP_FIRST_AUTO means 1 when
 * the profile holds no warm-up range, else 0. Left-out occurrences count as warm-up: their
 * kernels are -2 in kernel_stage and their ranges are excluded (lp_stage_range_excluded), so
 * operators and kernel tables leave them out too. A stage with N or fewer occurrences keeps all.
 * lp_stages_compute (no rules) skips nothing.
 *
 * Outliers: with 3 or more measured iterations, an iteration whose latency is further from the
 * median than max(3 x 1.4826 x MAD, 5% of the median) (MAD: median absolute deviation; 1.4826
 * scales it to a standard deviation for normal data) is flagged (lp_stage_iter.outlier). Flagged
 * iterations stay in the statistics; the reports name them.
 *
 * Latency (latency.c), the clock the user sees: from the later of the push and the end of the GPU
 * work still queued on the stream of the occurrence's first launch (launched before the push: what a
 * CUDA event recorded at the push waits for) to the later of the pop and the end of the last GPU
 * work launched inside (kernels, copies, memsets; graph replays included). TTFT, tokens/s and ms/step
 * come from it. Each outermost `decode_step` inside a decode occurrence gets the same rule; their
 * latencies are pooled per stage with nearest-rank percentiles. Kernels and copies with an unknown
 * launch time (launch_ns 0) never count as queued work. The bound verdict compares the three clocks:
 * GPU idle share of the latency (1 - busy / latency) <= LP_STAGE_GPU_BOUND_IDLE is GPU-bound; >=
 * LP_STAGE_LAUNCH_BOUND_IDLE with the host busy >= LP_STAGE_HOST_BUSY of the latency is
 * CPU/launch-bound (the GPU waits for launches); idle that high with the host mostly waiting too is
 * "GPU idle (waits)" (synchronizations, host work outside the range); anything between is mixed.
 * overlap = summed kernel durations / GPU busy time (> 1 when kernels run concurrently: streams, PDL).
 *
 * Decode steps outside any prefill, decode or mixed occurrence (a server that decodes continuously
 * and marks each batched step, never a decode range around them) are occurrences themselves: the
 * stage row `decode_step` (LP_STAGE_STEPS), one iteration per outermost step, whose latencies are
 * also its step latencies (step_lat_ms, percentiles). There the payload is the tokens of the step
 * (the batch size), not the step index of the contract (which holds inside `decode_all`).
 *
 * Tokens per second of a stage (prefill, mixed, decode steps): the sum of the payloads (tokens)
 * over the sum of the latencies of its measured iterations, when every iteration has a payload
 * (tokens_per_s, NAN otherwise): a throughput that weighs big batches by their size.
 *
 * Workloads without prefill or decode ranges: the top-level ranges (depth 0, not warm-up, not op
 * ranges) are the stages, grouped by name; repeats are their repeated occurrences. Profiles with
 * no range at all still get the whole-run timeline (run_span_ns, run_busy_ns).
 *
 * Ranges nested in a stage that are neither op ranges (analyze/operators.h) nor the structural
 * names (`decode_step`, ...) - a vision encoder's `sam`, `clip`, `projector` - become notes of the
 * stage, never stage rows.
 *
 * Synthetic ranges (lp_range.synthetic: copies of capture-time ranges placed under a CUDA graph
 * launch by the trace reader) carry GPU work into the stage they were launched in; they are never
 * occurrences, decode steps or host time.
 *
 * Ownership: lp_stages_compute fills a caller-owned lp_stage_set; strings and arrays live in its
 * arena and malloc'd arrays; lp_stage_set_release frees them. The set does not point into the
 * profile or the rules. Not thread-safe.
 *
 *   static const char *const decode[] = { "generate_loop", "regex:decode.*", NULL };
 *   struct lp_stage_rules rules = { .skip_first = LP_SKIP_FIRST_AUTO };
 *   struct lp_stage_set st;
 *   rules.names[LP_ROLE_DECODE] = decode;
 *   if (lp_stages_compute_ex(profile, &rules, &st, err) < 0) return -1;
 *   for (i = 0; i < st.n_stages; i++) printf("%s %.3f\n", st.stages[i].name, st.stages[i].host_ms.mean);
 *   lp_stage_set_release(&st);
 */
#ifndef LP_ANALYZE_STAGES_H
#define LP_ANALYZE_STAGES_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/err.h"
#include "profile/profile.h"

enum lp_stage_kind {
	LP_STAGE_PREFILL = 0,
	LP_STAGE_DECODE = 1,
	LP_STAGE_OTHER = 2,
	LP_STAGE_MIXED = 3,          /* forwards carrying prefill and decode tokens together */
	LP_STAGE_STEPS = 4,          /* decode steps outside any decode range (a server decoding continuously) */
};

/* The role of a range name in the stage mapping. */
enum lp_stage_role {
	LP_ROLE_NONE = 0,
	LP_ROLE_PREFILL = 1,
	LP_ROLE_DECODE = 2,
	LP_ROLE_STEP = 3,
	LP_ROLE_WARMUP = 4,
	LP_ROLE_MIXED = 5,
	LP_ROLE_COUNT = 6,
};

#define LP_SKIP_FIRST_AUTO (-1)
#define LP_STAGE_NAMES_MAX 16        /* names per role */

struct lp_stage_rules {
	/* per role (index 0 unused): NULL-terminated list of names / `regex:...`; NULL: the defaults */
	const char *const *names[LP_ROLE_COUNT];
	int64_t skip_first;          /* >= 0, or LP_SKIP_FIRST_AUTO */
	const char *source;          /* where the names came from, for the reports; NULL: "built-in defaults" */
	int decode_to_last_step;     /* 1: a decode occurrence ends at the pop of its last decode step
	                                (host time and latency), not at its own pop: the Python shim's
	                                decode ranges around a hand-written loop close only at the next
	                                prefill or at exit (its account's tokens.loop_decodes) */
};

/* Mean, sample standard deviation (n - 1; 0 when n < 2), min and max of n values. */
struct lp_stat {
	size_t n;
	double mean, std, min, max;
};
void lp_stat_compute(const double *x, size_t n, struct lp_stat *out);

struct lp_stage_iter {
	int32_t range;               /* index in the profile */
	uint64_t start_ns, host_ns;
	uint64_t latency_ns;          /* the user's clock (see above) */
	uint64_t wait_ns;             /* of it: from the push until earlier queued GPU work ended (not counted) */
	uint64_t gpu_end_ns;          /* end of the last GPU work launched inside; 0 none */
	uint64_t gpu_busy_ns;        /* union of attributed kernel intervals */
	uint64_t gpu_span_ns;        /* first attributed kernel start to last end (what CUDA events
	                              * around the stage measure; busy time leaves out idle gaps) */
	uint64_t kernel_ns;          /* sum of attributed kernel durations */
	uint64_t kernels;
	uint64_t steps;              /* decode_step ranges inside */
	int has_payload;
	uint64_t payload;            /* prefill: prompt tokens x batch */
	int outlier;                 /* latency far from the stage's median (see above) */
};

struct lp_stage_note {
	const char *name;
	uint64_t calls;              /* over all iterations */
	uint64_t host_ns;            /* summed over all iterations */
	uint64_t kernel_ns;
	uint64_t kernels;
};

struct lp_stage {
	const char *name;
	const char *domain;
	enum lp_stage_kind kind;
	struct lp_stage_iter *iters;
	size_t n_iters, cap_iters;
	struct lp_stat host_ms, gpu_ms, gpu_span_ms, kernel_ms, kernels, steps;
	size_t recorded_iters;       /* a sampled trace whose iterations are its sampling units (decode steps
	                              * alone): gpu_ms, kernel_ms, kernels are over these recorded ones
	                              * (analyze/sampling.h); 0 otherwise */
	struct lp_stat lat_ms;       /* latency per iteration */
	double *step_lat_ms;         /* decode: every measured decode_step's latency, in trace order */
	size_t n_step_lat, cap_step_lat;
	struct lp_stat step_ms;      /* over step_lat_ms */
	double step_p50, step_p90, step_p99;   /* nearest rank; NAN without steps */
	double overlap;              /* kernel_ms.mean / gpu_ms.mean; 0 without GPU time */
	uint64_t tokens_total;       /* sum of the payloads of the measured iterations */
	double tokens_per_s;         /* tokens_total / summed latency; NAN unless every iteration has a payload */
	double idle_frac;            /* 1 - gpu busy / latency; NAN when not applicable */
	const char *bound;           /* "GPU-bound", "CPU/launch-bound", "GPU idle (waits)", "mixed", "no GPU work", "n/a" */
	struct lp_stage_note *notes;
	size_t n_notes, cap_notes;
	uint64_t excluded_warmup;    /* occurrences under `warmup`, left out */
	uint64_t unclosed;           /* occurrences never popped, left out */
	uint64_t skipped_first;      /* first occurrences left out by the skip-first rule */
	size_t n_outliers;
	double lat_median_ms;        /* NAN without iterations */
};

/* One (role, domain, name) the mapping met: how many ranges it matched, how many of them were
 * ignored because the role has ranges in the LLM domain. */
struct lp_stage_map_entry {
	enum lp_stage_role role;
	const char *domain, *name;
	uint64_t ranges, ignored;
};
#define LP_STAGE_MAP_MAX 32

#define LP_STAGES_MAX 32
#define LP_STAGE_GPU_BOUND_IDLE 0.10
#define LP_STAGE_LAUNCH_BOUND_IDLE 0.30
#define LP_STAGE_HOST_BUSY 0.80

struct lp_stage_set {
	struct lp_stage *stages;
	size_t n_stages;
	int have_gpu;                /* the profile holds at least one kernel */
	int top_level_fallback;      /* no prefill/decode_all ranges: top-level ranges used */
	size_t n_kernels;            /* profile kernels (size of the arrays below) */
	int32_t *kernel_stage;       /* per kernel: stage index, -1 outside stages, -2 under warmup */
	uint64_t measured_kernel_ns; /* kernels not under warmup */
	uint64_t warmup_kernel_ns;
	struct lp_stage_map_entry *map;  /* LP_STAGE_MAP_MAX slots, n_map used, first met first */
	size_t n_map;
	int map_truncated;           /* more distinct names than slots */
	int names_default;           /* every list was the built-in default */
	const char *names_source;    /* rules->source, or "built-in defaults" */
	int have_warmup_range;       /* a non-synthetic warm-up range exists */
	int64_t skip_first;          /* the rule applied (resolved) */
	int skip_auto;               /* ... chosen by LP_SKIP_FIRST_AUTO */
	int decode_to_last_step;     /* rules->decode_to_last_step */
	size_t decode_ends_moved;    /* decode occurrences that it ended at their last step */
	uint64_t run_span_ns;        /* first start to last end over ranges and kernels (whole run) */
	uint64_t run_busy_ns;        /* union of every kernel's interval (whole run, warm-up included) */
	size_t n_ranges;             /* profile ranges (size of range_flags) */
	uint8_t *range_flags;        /* per range: its role | LP_STAGE_RANGE_EXCLUDED (warm-up or skipped) */
	struct lp_arena arena;
};
#define LP_STAGE_RANGE_ROLE_MASK 0x7
#define LP_STAGE_RANGE_EXCLUDED 0x8

/* The default names, no skipping. */
int lp_stages_compute(const struct lp_profile *p, struct lp_stage_set *out, struct lp_err *err);
/* With rules (NULL: default names, LP_SKIP_FIRST_AUTO). A bad regex is a usage error naming it. */
int lp_stages_compute_ex(const struct lp_profile *p, const struct lp_stage_rules *rules, struct lp_stage_set *out,
	struct lp_err *err);
/* The first step of lp_stages_compute_ex (stage_roles.c): s->range_flags (p->n_ranges bytes,
 * zeroed) receives every range's role, s->names_default whether the default names applied. A
 * bad regex or too many names is a usage error naming the key. */
int lp_stage_classify_ranges(const struct lp_profile *p, const struct lp_stage_rules *rules, struct lp_stage_set *s,
	struct lp_err *err);
/* The role of range r in a computed set (LP_ROLE_NONE when out of bounds). */
enum lp_stage_role lp_stage_range_role(const struct lp_stage_set *s, int32_t r);
/* 1 when range r or one of its ancestors is warm-up or a skipped occurrence. */
int lp_stage_range_excluded(const struct lp_stage_set *s, int32_t r);
/* The default names of a role, NULL-terminated. */
const char *const *lp_stage_default_names(enum lp_stage_role role);
/* "prefill", "decode_all", "decode_step", "warmup", "mixed" ("" for NONE): the config key and canonical name. */
const char *lp_stage_role_name(enum lp_stage_role role);
void lp_stage_set_release(struct lp_stage_set *s);
/* The stage of a kind (first one), NULL when absent. */
const struct lp_stage *lp_stages_find(const struct lp_stage_set *s, enum lp_stage_kind kind);
/* Latencies, step percentiles, overlap and verdicts of a computed set (latency.c; called by
 * lp_stages_compute). -1 on out of memory. */
int lp_stage_latency_compute(const struct lp_profile *p, struct lp_stage_set *s);
/* The bound verdict, idle_frac and overlap of a stage from its statistics (latency.c; the
 * scaling of sampled traces calls it again after scaling GPU busy and kernel sums). */
void lp_stage_verdict(struct lp_stage *st, int have_gpu);
/* A stage's gpu_ms, kernel_ms and kernels statistics from its iterations (stages.c; computed again
 * when the iterations' kernel sums change, e.g. scaled for a sampled trace); vals: scratch for
 * n_iters doubles. */
void lp_stage_kernel_stats(struct lp_stage *st, double *vals);
/* stage_of[r] (n_ranges entries): the stage whose iteration is range r, -1 for other ranges. */
void lp_stage_of_ranges(const struct lp_stage_set *stages, size_t n_ranges, int32_t *stage_of);
/* Nearest-rank percentile p (0..100) of n ascending values; NAN when n is 0. */
double lp_percentile_sorted(const double *x, size_t n, double p);
/* qsort's comparison of doubles, ascending. */
int lp_cmp_double(const void *a, const void *b);
/* 1 for structural range names that are neither stages nor notes (decode_step, warmup, ...). */
int lp_stage_is_structural(const char *name);

#endif
