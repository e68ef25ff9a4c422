/* kagg.h: the one kernel aggregator: launches -> struct lp_kernel_table rows (the seed's
 * KernelRecord), keyed by (kernel name, device).
 *
 * Every source of kernel rows goes through it: the profile's kernels (lp_kernel_table_build), the
 * Nsight Compute raw and details pages and --print-summary output (parse/ncu_*.c), and the
 * nsys summaries (parse/nsys_*.c). A row sums calls and time, keeps min and max, the launch shape
 * and registers of the first launch seen, and per metric the calls-weighted mean of the valid
 * values (a metric never valid in a row is kept, valid = 0).
 *
 * Names: with `interned` (lp_kagg_new(1)) equal names are the same pointer (a profile's interned
 * strings); rows then point at the caller's names, which must outlive the table, and the key is
 * compared by pointer. Otherwise names are compared by content and copied into the table's arena.
 * Rows come out sorted by total time (lp_kernel_table_sort); mean_ms = total_ms / max(calls, 1).
 *
 * Ownership: the aggregator owns what it gathered until lp_kagg_finish moves it into the table
 * and frees the aggregator (also on failure); lp_kagg_free drops an unfinished one. Not
 * thread-safe.
 *
 *   struct lp_kagg *a = lp_kagg_new(0);
 *   struct lp_kagg_item it = { .name = n, .device = 0, .duration_ns = 1200 };
 *   if (!a || lp_kagg_add(a, &it, 1, -1, -1, err) < 0) ...
 *   if (lp_kagg_finish(a, &table, err) < 0) return -1;
 */
#ifndef LP_PROFILE_KAGG_H
#define LP_PROFILE_KAGG_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "profile/profile.h"

struct lp_kagg_item {
	const char *name;            /* demangled or as exported; with the device, the row's key */
	const char *short_name;      /* NULL: the name (interned: kept as given) */
	int32_t device;
	double duration_ns;          /* per launch (the mean when it stands for several); < 0 unknown: 0 */
	const uint32_t *grid, *block;   /* [3] each; NULL: zeros */
	uint32_t registers_per_thread;
	const struct lp_metric *metrics;   /* per launch (means when it stands for several) */
	size_t n_metrics;
};

struct lp_kagg;
/* NULL when out of memory. */
struct lp_kagg *lp_kagg_new(int interned);
/* Adds an item standing for `calls` launches (0: nothing); min/max in ns, < 0 unknown (the mean). */
int lp_kagg_add(struct lp_kagg *a, const struct lp_kagg_item *it, uint64_t calls, double min_ns, double max_ns,
	struct lp_err *err);
/* Adds a row that is already a sum (nsys stats, ncu summaries); min/max < 0: unknown. */
int lp_kagg_add_summary(struct lp_kagg *a, const char *name, const char *short_name, int32_t device,
	uint64_t calls, double total_ms, double min_ms, double max_ms, struct lp_err *err);
/* Moves the rows into `out` (sorted) and frees the aggregator, also when it fails. */
int lp_kagg_finish(struct lp_kagg *a, struct lp_kernel_table *out, struct lp_err *err);
void lp_kagg_free(struct lp_kagg *a);

#endif
