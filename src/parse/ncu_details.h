/* ncu_details.h: Nsight Compute's details page (`ncu -i R --csv --page details --print-units base`).
 *
 * Long format: one row per (result, section, metric) or (result, rule). Rows are ragged: metric
 * rows end after `Metric Value`; rule rows carry the rule columns (`Rule Name`, `Rule Type`,
 * `Rule Description`, `Estimated Speedup Type`, `Estimated Speedup`). Metric rows name their
 * section by display name ("GPU Speed Of Light Throughput"), rule rows by identifier
 * ("SpeedOfLight"); both are kept as printed. Values are converted to base units (ncu_raw.h).
 * Consecutive rows with the same ID form one result, with the identity columns of ncu_raw.h.
 *
 * Ownership: lp_ncu_details owns everything (one arena); release with lp_ncu_details_release.
 * The whole page is held in memory (a few hundred rows per profiled kernel). Not thread-safe.
 *
 *   struct lp_ncu_details d;
 *   if (lp_ncu_details_load("ncu/run_details.csv", &d, err) < 0) return -1;
 *   for (i = 0; i < d.n_results; i++) ... d.results[i].rules ...
 *   lp_ncu_details_release(&d);
 */
#ifndef LP_PARSE_NCU_DETAILS_H
#define LP_PARSE_NCU_DETAILS_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/err.h"
#include "parse/ncu_raw.h"
#include "profile/profile.h"

struct lp_ncu_detail_metric {
	const char *section;         /* display name */
	const char *name;            /* "Duration", "DRAM Throughput" ... */
	const char *unit;            /* base unit after conversion */
	double value;
	int valid;                   /* 0: n/a or a text value */
	const char *text;            /* the cell as printed (text values such as "SM" are kept here) */
};

struct lp_ncu_rule {
	const char *section;         /* identifier ("SpeedOfLight") */
	const char *name;            /* rule name */
	const char *type;            /* "OPT", "WRN", "INF" ... */
	const char *description;
	const char *speedup_type;    /* "global", "local" or "" */
	double speedup_pct;          /* estimated speedup in %, valid when has_speedup */
	int has_speedup;
};

struct lp_ncu_details_result {
	uint64_t id;
	uint32_t pid;
	const char *kernel_name;
	const char *short_name;
	int32_t device;
	uint32_t block[3], grid[3];
	int has_launch;
	double duration_ns;          /* the "Duration" metric of the speed-of-light section; < 0 absent */
	const char *nvtx_path;       /* "LLM@decode_all/LLM@decode_step" from the push/pop column; "" */
	struct lp_ncu_nvtx_level *nvtx;   /* the push/pop stack, bottom to top (strings in the arena) */
	size_t n_nvtx;
	struct lp_ncu_nvtx_level *nvtx_startend;  /* start/end ranges open at the launch (their column) */
	size_t n_nvtx_startend;
	struct lp_ncu_detail_metric *metrics;
	size_t n_metrics;
	struct lp_ncu_rule *rules;
	size_t n_rules;
};

struct lp_ncu_details {
	struct lp_ncu_details_result *results;
	size_t n_results;
	struct lp_arena arena;
};

int lp_ncu_details_load(const char *path, struct lp_ncu_details *out, struct lp_err *err);
void lp_ncu_details_release(struct lp_ncu_details *d);
/* KernelRecord rows from the details page: total from "Duration", metrics named
 * "<section display name>/<metric name>" (per-launch means). `stage` matches nvtx_path levels. */
int lp_ncu_details_kernel_table(const char *path, const struct lp_ncu_select *sel,
	struct lp_kernel_table *out, struct lp_err *err);
/* The same, saying what the stage met in `seen` (may be NULL; ncu_raw.h). */
int lp_ncu_details_kernel_table_seen(const char *path, const struct lp_ncu_select *sel, struct lp_ncu_seen *seen,
	struct lp_kernel_table *out, struct lp_err *err);

#endif
