/* ncu_summary.h: Nsight Compute's summaries, `ncu -i R --csv --print-summary per-kernel|per-nvtx
 * --print-units base`.
 *
 * Long format, one row per (group, section, metric): the group's identity cells, `Invocations`,
 * `Section Name`, then `Metric Name`, `Metric Unit`, `Minimum`, `Maximum`, `Average`.
 *   per-kernel: Process ID, Process Name, Host Name, Kernel Name, Block Size, Grid Size, Device, CC
 *   per-nvtx:   Domain, `Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg` (the ranges of that
 *               domain, bottom to top, each quoted: ` "decode_all:none:...:decode_all"  "..." `),
 *               Kernel Name, Block Size, Grid Size, Device, CC
 * Sections are named by display name ("GPU Speed Of Light Throughput"; collected `--metrics` are in
 * "Command line profiler metrics" under their identifiers). Values are converted to base units
 * (ncu_raw.h). A kernel under ranges of several NVTX domains (several domain handles, even with
 * the same name) is listed once in each domain's group of the per-nvtx summary.
 *
 * ncu 2025.3.1 misplaces line breaks after a metric that has no data: it prints only the
 * identity cells and the section of that row, then keeps breaking lines every <columns> cells,
 * so the following rows of the section straddle lines, until a lone trailing comma. The reader
 * takes the cells as one stream and cuts records by their shape (a record starts where a Block
 * Size cell sits at its place; a metric's five cells never hold one), so such files read
 * correctly; the metric without data is dropped. Files without Block Size columns are read line
 * by line only.
 *
 * Ownership: a row passed to the callback, and everything it points to, is valid only during
 * the call. Tables are owned by the caller (lp_kernel_table_release). Not thread-safe.
 *
 *   struct lp_kernel_table t;
 *   if (lp_ncu_summary_kernel_table("ncu/summary_per_kernel.csv", NULL, &t, err) < 0) return -1;
 */
#ifndef LP_PARSE_NCU_SUMMARY_H
#define LP_PARSE_NCU_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "parse/ncu_nvtx.h"
#include "parse/ncu_raw.h"
#include "profile/profile.h"

#define LP_NCU_SUMMARY_COL_RANGE "Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"

enum lp_ncu_summary_kind {
	LP_NCU_SUMMARY_PER_KERNEL = 1,
	LP_NCU_SUMMARY_PER_NVTX = 2,
};

struct lp_ncu_summary_row {
	uint64_t line;               /* line where the row's first cell is */
	int kind;                    /* enum lp_ncu_summary_kind */
	uint64_t group;              /* 0, 1, ...: changes when the identity cells change */
	uint32_t pid;                /* per-kernel; 0 otherwise */
	const char *process;         /* per-kernel; "" otherwise */
	const struct lp_ncu_nvtx_stack *nvtx;  /* per-nvtx: the group's domain and ranges; n == 0 else */
	const char *kernel_name;
	const char *short_name;
	int has_launch;
	uint32_t block[3], grid[3];
	int32_t device;              /* -1 when absent */
	uint64_t invocations;
	const char *section;         /* display name */
	const char *metric;          /* identifier or display name */
	const char *unit;            /* base unit after conversion */
	double min, max, avg;        /* base units; valid when `valid` */
	int valid;                   /* 0: a cell was not a number (n/a, text) */
};

typedef int (*lp_ncu_summary_fn)(const struct lp_ncu_summary_row *r, void *ctx, struct lp_err *err);

/* Tells a summary header apart: 1 per-kernel, 2 per-nvtx, 0 neither. `cols` are the header cells. */
int lp_ncu_summary_kind_of(char *const *cols, size_t n);

/* Streams a summary; the callback returns 0 to go on, -1 to stop with its error. Errors
 * (LP_EPARSE): a missing column (named), a row that cannot be realigned, a malformed NVTX cell,
 * as "<path>:<line>: ...". *kind (may be NULL) receives the summary's kind. */
int lp_ncu_summary_stream(const char *path, int *kind, lp_ncu_summary_fn fn, void *ctx, struct lp_err *err);

/* KernelRecord rows: per group, calls = Invocations, total = Invocations x the Average of
 * gpu__time_duration.sum (else of the "Duration" of the speed-of-light section), min/max from
 * its Minimum/Maximum, metrics "<section>/<metric>" (per-launch means, weighted by Invocations).
 * `sel->stage` keeps the per-nvtx groups whose ranges match it; a per-nvtx summary without a
 * stage is refused (LP_EUSAGE: it lists a kernel once per NVTX domain), and a per-kernel summary
 * has no ranges to cut by stage (LP_EUSAGE). */
int lp_ncu_summary_kernel_table(const char *path, const struct lp_ncu_select *sel,
	struct lp_kernel_table *out, struct lp_err *err);
/* The same, saying what the stage met in `seen` (may be NULL; ncu_raw.h). */
int lp_ncu_summary_kernel_table_seen(const char *path, const struct lp_ncu_select *sel, struct lp_ncu_seen *seen,
	struct lp_kernel_table *out, struct lp_err *err);

#endif
