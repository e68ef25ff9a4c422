/* topn.h: which kernels ncu should profile: the N with the largest total time inside a stage.
 *
 * Input: the capture phase's timeline (a profile: our trace or nsys's SQLite export) cut by
 * stage (default "decode_all", warm-up excluded), or an already aggregated table (nsys stats).
 * Output: the selected names in the form ncu matches against (`kernel_name_base`: "demangled"
 * -> the demangled name; "function" -> the short function name; "mangled" is not available from
 * these sources and is refused), and one escaped filter `regex:^(name1|name2)$`.
 *
 * Counting launches: ncu's --launch-count counts every matching launch together, so with one
 * regex and -c N*launch_count a kernel launched many times per decode step (a GEMV per layer)
 * can use up the budget before the others appear. llmprof therefore runs ncu with
 * `--filter-mode per-launch-config --launch-count <launch_count>`: the count applies to each
 * launch configuration (kernel, grid, block, shared memory) separately. A kernel launched with
 * several configurations is profiled launch_count times per configuration. launch_count_total
 * (N * launch_count) is also given for ncu versions without --filter-mode.
 * After the run, lp_topn_check says which selected kernels were profiled and which were not.
 *
 * Communication kernels (NCCL..., lp_kname_is_comm) are never picked: ncu replays a kernel
 * several times, and a replayed collective waits for peers that do not replay it (the job hangs);
 * their time is the other ranks' anyway (docs/ranks.md). n_comm_skipped counts them.
 *
 * Ownership: lp_topn owns its strings (lp_topn_release). Not thread-safe.
 *
 *   struct lp_topn sel;
 *   struct lp_topn_opts o = { .n = 5, .stage = "decode_all", .exclude_warmup = 1,
 *                             .name_base = "demangled", .launch_count = 1 };
 *   if (lp_topn_from_profile(&profile, &o, &sel, err) < 0) return -1;
 *   plan.kernel_filter = sel.regex; plan.filter_mode = "per-launch-config";
 */
#ifndef LP_ANALYZE_TOPN_H
#define LP_ANALYZE_TOPN_H

#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"
#include "profile/profile.h"

struct lp_topn_opts {
	size_t n;                    /* how many kernels (0: 5) */
	const char *stage;           /* NULL: "decode_all"; "" : the whole run */
	int exclude_warmup;
	const char *name_base;       /* "demangled" (NULL) or "function" */
	long launch_count;           /* per kernel (0: 1) */
};

struct lp_topn_pick {
	char *kernel_name;           /* demangled */
	char *match_name;            /* the name in the chosen base */
	double total_ms;
	uint64_t calls;
	double share;                /* of the stage's kernel time */
};

struct lp_topn {
	struct lp_topn_pick *picks;
	size_t n_picks;
	size_t n_candidates;         /* distinct kernels in the stage */
	size_t n_comm_skipped;       /* communication kernels among them, never picked */
	double stage_total_ms;
	char *regex;                 /* "regex:^(a|b)$"; NULL when nothing was picked */
	long launch_count;
	long launch_count_total;     /* n_picks * launch_count */
};

int lp_topn_from_profile(const struct lp_profile *p, const struct lp_topn_opts *o, struct lp_topn *out,
	struct lp_err *err);
/* From a table already sorted by total time (e.g. nsys cuda_gpu_kern_sum: no stage cut). */
int lp_topn_from_table(const struct lp_kernel_table *t, const struct lp_topn_opts *o, struct lp_topn *out,
	struct lp_err *err);
void lp_topn_release(struct lp_topn *t);

/* Appends s with the characters special to ncu's (ECMAScript-like) regex escaped by a '\'. */
int lp_topn_regex_escape(const char *s, struct lp_buf *out);

/* Which picks the ncu table (parse/ncu_raw.h: kernel_name as exported) holds, and how often.
 * `profiled[i]` receives the launch count of pick i (0: not profiled). Names are compared in
 * the same base as the selection. Returns how many picks were profiled at least once. */
size_t lp_topn_check(const struct lp_topn *t, const struct lp_kernel_table *ncu, const char *name_base,
	uint64_t *profiled);

#endif
