/* nsys_sqlite.h: the SQLite export of an Nsight Systems report (`nsys export --type sqlite`).
 *
 * lp_nsys_sqlite_load fills the shared profile model (profile/profile.h) the way our own tracer
 * does: devices (TARGET_INFO_GPU), processes, NVTX ranges (NVTX_EVENTS: 59 push/pop, 60
 * start/end, 34 marks; names = coalesce(text, StringIds[textId]); the domain from the type-75 row
 * with the same domainId in the same process), kernels (CUPTI_ACTIVITY_KIND_KERNEL, names through
 * StringIds: demangledName, shortName). Copies (CUPTI_ACTIVITY_KIND_MEMCPY / MEMSET) are read into
 * the profile's copies, attributed to ranges like kernels (by their API call's thread and time).
 * A kernel belongs to the innermost push/pop range open on the thread that launched it, at the
 * time of the launch call (CUPTI_ACTIVITY_KIND_RUNTIME joined on correlationId and process):
 * one sweep per thread over ranges and launches ordered by start, O((R + K) log K).
 *
 * lp_nsys_sqlite_kernel_table aggregates kernels straight into KernelRecord rows without
 * building the profile: memory is bounded by the number of distinct (name, device) pairs.
 *
 * Tables exist in an export only when they have rows: each is looked up in sqlite_master first.
 * A file that is not SQLite, or an SQLite file without StringIds, is refused with one line
 * naming the file and the table (LP_EPARSE). The database is opened read-only.
 * Ownership: as profile.h / lp_kernel_table. Not thread-safe.
 *
 *   struct lp_profile p; lp_profile_init(&p, path);
 *   if (lp_nsys_sqlite_load("nsys/run.sqlite", &p, err) < 0) ...
 */
#ifndef LP_PARSE_NSYS_SQLITE_H
#define LP_PARSE_NSYS_SQLITE_H

#include "core/err.h"
#include "profile/profile.h"

int lp_nsys_sqlite_load(const char *path, struct lp_profile *out, struct lp_err *err);
int lp_nsys_sqlite_kernel_table(const char *path, struct lp_kernel_table *out, struct lp_err *err);
/* 1 when `path` starts with the SQLite header ("SQLite format 3\0"), 0 otherwise. */
int lp_nsys_sqlite_is_sqlite(const char *path);

/* NVTX_EVENTS eventType values. */
enum {
	LP_NSYS_NVTX_MARK = 34,
	LP_NSYS_NVTX_PUSHPOP = 59,
	LP_NSYS_NVTX_STARTEND = 60,
	LP_NSYS_NVTX_DOMAIN_CREATE = 75,
};

#endif
