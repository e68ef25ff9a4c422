/* nsys_csv.h: the CSV reports of `nsys stats --format csv` (nsys/summary_<report>.csv).
 *
 * cuda_gpu_kern_sum (`Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),
 * StdDev (ns),Name`) becomes a KernelRecord table (device -1: the report sums over devices);
 * nvtx_sum and nvtx_gpu_proj_sum become range rows, their `domain:range` names split (a leading
 * ':' is the default domain; older versions print no colon at all: the whole cell is the name).
 * Columns are found by name; a time column's unit comes from its header ("(ns)", "(us)", "(ms)",
 * "(s)") and is converted to ns. A 0-byte file is a report with no data (zero rows, no error).
 *
 * Ownership: tables own their rows and strings (release functions below). Not thread-safe.
 *
 *   struct lp_kernel_table t;
 *   if (lp_nsys_kern_sum_load("nsys/summary_cuda_gpu_kern_sum.csv", &t, err) < 0) return -1;
 */
#ifndef LP_PARSE_NSYS_CSV_H
#define LP_PARSE_NSYS_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/err.h"
#include "profile/profile.h"

int lp_nsys_kern_sum_load(const char *path, struct lp_kernel_table *out, struct lp_err *err);

struct lp_nsys_range_row {
	const char *domain;          /* "" default domain (or unknown, in the older no-colon form) */
	const char *name;
	const char *style;           /* "PushPop", "StartEnd" or "" */
	double total_ns;             /* nvtx_gpu_proj_sum: the projected GPU time */
	double range_total_ns;       /* the CPU-side range time when the report has both; else = total */
	uint64_t instances;
};

struct lp_nsys_range_table {
	struct lp_nsys_range_row *rows;
	size_t n_rows;
	int projected;               /* 1: nvtx_gpu_proj_sum (GPU projection), 0: nvtx_sum */
	struct lp_arena arena;
};

/* nvtx_sum or nvtx_gpu_proj_sum (told apart by their columns). */
int lp_nsys_range_sum_load(const char *path, struct lp_nsys_range_table *out, struct lp_err *err);
void lp_nsys_range_table_release(struct lp_nsys_range_table *t);

/* Splits an nsys range cell: "LLM:decode_all" -> ("LLM", "decode_all"), ":outer" -> ("", "outer"),
 * "outer" -> ("", "outer"). Pointers into the arena. */
int lp_nsys_split_range(const char *cell, struct lp_arena *a, const char **domain, const char **name);

/* Converts a header such as "Total Time (ns)" to its ns factor (0 when it names no time unit). */
double lp_nsys_header_ns(const char *header);

#endif
