/* ncu_raw.h: Nsight Compute's raw page (`ncu -i R --csv --page raw --print-units base`).
 *
 * The page is a header row, a units row, then one row per profiled kernel launch (or, in
 * app-range / range replay, per range: Kernel Name `range`, no Block/Grid columns). Columns are
 * mapped by header name: identity columns (ID, Process ID, Process Name, Host Name, the two NVTX
 * columns, Kernel Name, Context, Stream, Block Size, Grid Size, Device, CC) and every other column
 * as a metric. Metric values are converted to base units here, whatever the units row says
 * (usecond -> ns, Mbyte -> byte, Gbyte/second -> byte/second, Ghz -> hz, cycle/nsecond ->
 * cycle/second): nothing past this boundary sees a scaled unit.
 *
 * Two ways in:
 *   - lp_ncu_raw_stream: one callback per row; memory is bounded by the row width.
 *   - lp_ncu_raw_kernel_table: the seed's KernelRecord table (kernel_name = the exported Kernel
 *     Name, short name beside it, calls, total_ms from gpu__time_duration.sum, mean_ms computed,
 *     grid/block/registers of the first launch, metrics = per-launch mean of the valid values).
 *     Memory is bounded by the number of distinct kernels.
 *
 * Ownership: a result passed to the callback, and everything it points to, is valid only during
 * the call. Table rows are owned by the table (lp_kernel_table_release). Not thread-safe.
 *
 *   struct lp_kernel_table t;
 *   if (lp_ncu_raw_kernel_table("ncu/run_raw.csv", NULL, &t, err) < 0) return -1;
 */
#ifndef LP_PARSE_NCU_RAW_H
#define LP_PARSE_NCU_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"
#include "parse/ncu_nvtx.h"
#include "profile/kagg.h"
#include "profile/profile.h"

#define LP_NCU_COL_PUSHPOP "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
#define LP_NCU_COL_STARTEND "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
#define LP_NCU_DURATION_METRIC "gpu__time_duration.sum"

struct lp_ncu_result {
	uint64_t line;               /* line of the row in the file */
	uint64_t id;                 /* ncu's result ID */
	uint32_t pid;
	const char *process;
	const char *host;
	const char *kernel_name;     /* as exported ("range" for app-range results) */
	const char *short_name;      /* function-name form (lp_kname_ncu_function) */
	const char *context;
	const char *stream;          /* "n/a" for ranges */
	int32_t device;              /* -1 when absent */
	const char *cc;              /* "9.0" */
	int has_launch;              /* Block Size / Grid Size present and parsed */
	uint32_t block[3], grid[3];
	uint32_t registers_per_thread;  /* launch__registers_per_thread when collected */
	int is_range;                /* an app-range / range replay result */
	double duration_ns;          /* gpu__time_duration.sum; < 0 when absent or n/a */
	const struct lp_ncu_nvtx_stack *pushpop;   /* n == 0 when the column is absent or empty */
	const struct lp_ncu_nvtx_stack *startend;
	const struct lp_metric *metrics;           /* every metric column, in header order */
	size_t n_metrics;
};

typedef int (*lp_ncu_result_fn)(const struct lp_ncu_result *r, void *ctx, struct lp_err *err);

/* Streams the raw page; the callback returns 0 to go on, -1 to stop with its error. A page must
 * have its units row under the header (ncu always writes one; without it every value would be read
 * in base units whatever its unit).
 * Errors: missing identity columns (named, e.g. "column 'Kernel Name' missing"), a row with
 * fewer or more cells than the header (truncated file), malformed NVTX cells, a second header
 * line (two exports concatenated, a header written twice), a units row that does not look like
 * units (a number in a metric column, a kernel name), and a damaged number: a metric cell that
 * starts like a number but is not a finite decimal ("inf", "1e999", "0x10", "12x"), an ID or
 * Device that is not a count. All as "<path>:<line>[:<col>]: ..." with status LP_EPARSE.
 * Text-valued metric columns (ncu has some) and n/a stay valid = 0, explicitly. */
int lp_ncu_raw_stream(const char *path, lp_ncu_result_fn fn, void *ctx, struct lp_err *err);
/* The same, with flags: LP_NCU_RAW_SKIP_NVTX leaves the NVTX cells undecoded (stacks empty),
 * for callers that do not look at them (a few % of the parse time). */
#define LP_NCU_RAW_SKIP_NVTX 1
/* LP_NCU_RAW_NEED_DURATION: a page without the gpu__time_duration.sum column is an error (a kernel
 * table would read 0 ms everywhere); lp_ncu_raw_kernel_table_seen (`llmprof kernels`) sets it, the
 * metric join of the analysis (lp_ncu_raw_kernel_table) does not need it. */
#define LP_NCU_RAW_NEED_DURATION 2
int lp_ncu_raw_stream_ex(const char *path, int flags, lp_ncu_result_fn fn, void *ctx, struct lp_err *err);

struct lp_ncu_select {
	const char *stage;           /* keep results whose push/pop stack or start/end ranges (open at
	                              * the launch) have a range matching this ("name", "domain@name",
	                              * "@name" = default domain); NULL: all */
	int include_ranges;          /* keep app-range results (Kernel Name "range"); default 0 */
};

/* What a stage selection met (the *_seen variants of the kernel tables fill it): */
struct lp_ncu_seen {
	struct lp_buf *ranges;       /* optional: every distinct range, one "domain@name" ("name") a line */
	int stage_seen;              /* 1 when some range matched the stage */
};

/* Adds "domain@name" ("name" for the default domain) to a newline-separated set (no duplicates). */
int lp_ncu_note_range(struct lp_buf *set, const char *domain, const char *name);
/* Does a level of `st` match sel->stage? With `seen` (may be NULL), notes the levels in
 * seen->ranges and sets seen->stage_seen on a match. */
int lp_ncu_select_stack(const struct lp_ncu_select *sel, struct lp_ncu_seen *seen, const struct lp_ncu_nvtx_stack *st);

int lp_ncu_raw_kernel_table(const char *path, const struct lp_ncu_select *sel,
	struct lp_kernel_table *out, struct lp_err *err);
/* The same, saying what the stage met in `seen` (may be NULL). */
int lp_ncu_raw_kernel_table_seen(const char *path, const struct lp_ncu_select *sel, struct lp_ncu_seen *seen,
	struct lp_kernel_table *out, struct lp_err *err);

/* ---- helpers shared with the details page and the summaries ---- */

/* Converts a value in `unit` to base units: *scale multiplies the value, `base` (cap >= 64)
 * receives the base unit's name ("nsecond", "byte", "byte/second", "hz", or `unit` unchanged). */
void lp_ncu_unit_to_base(const char *unit, double *scale, char *base, size_t cap);
/* Parses "(128, 1, 1)" into v[3]; 0 ok, -1 not that form. */
int lp_ncu_parse_dim3(const char *s, uint32_t v[3]);
/* Does this stack contain a level matching expr ("name", "domain@name", "@name")? */
int lp_ncu_stack_matches(const struct lp_ncu_nvtx_stack *st, const char *expr);

/* Adds one launch (a result standing for one call) to a kernel aggregator (profile/kagg.h). */
int lp_ncu_result_add(struct lp_kagg *agg, const struct lp_ncu_result *r, struct lp_err *err);

#endif
