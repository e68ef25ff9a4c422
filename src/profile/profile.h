/* profile.h: the in-memory profile model shared by every source of timing data.
 *
 * Our tracer's files (src/parse/trace_read.c), the nsys sqlite export (src/parse/nsys_sqlite.c)
 * and anything else that yields a timeline load into one struct lp_profile: devices, processes,
 * NVTX ranges (a tree per thread through `parent`), kernel executions and copies, all times in
 * nanoseconds on one clock, every kernel carrying the index of the innermost NVTX range it was
 * launched from (attribution at launch time, not by time overlap).
 *
 * Aggregated per-kernel rows (the seed tool's KernelRecord: kernel_name, device, total_ms, calls,
 * mean_ms) are struct lp_kernel_record; Nsight Compute results carry metrics in base units.
 *
 * Ownership: the profile owns everything reachable from it. Strings are interned in its arena
 * (lp_profile_intern), arrays are grown by lp_profile_add_*; lp_profile_release frees it all.
 * Indices (range, parent) are stable; pointers returned by lp_profile_add_* are valid only until
 * the next add of the same kind. Not thread-safe.
 *
 *   struct lp_profile p; lp_profile_init(&p, "trace/");
 *   struct lp_kernel *k = lp_profile_add_kernel(&p);
 *   k->name = lp_profile_intern(&p, "gemv_kernel");
 *   ...
 *   struct lp_kernel_table t; lp_kernel_table_build(&p, &(struct lp_kernel_filter){.stage = "decode_all"}, &t, err);
 *   lp_kernel_table_release(&t); lp_profile_release(&p);
 */
#ifndef LP_PROFILE_PROFILE_H
#define LP_PROFILE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/err.h"
#include "core/map.h"

enum lp_range_kind {
	LP_RANGE_PUSHPOP = 0,   /* nvtxRangePush/Pop: per thread, properly nested */
	LP_RANGE_STARTEND = 1,  /* nvtxRangeStart/End: may cross threads, may overlap */
	LP_RANGE_MARK = 2,      /* instantaneous marker (start_ns == end_ns) */
};

enum lp_payload_type {
	LP_PAYLOAD_NONE = 0,
	LP_PAYLOAD_U64 = 1,
	LP_PAYLOAD_I64 = 2,
	LP_PAYLOAD_F64 = 3,
};

enum lp_copy_kind {
	LP_COPY_UNKNOWN = 0,
	LP_COPY_HTOD = 1,
	LP_COPY_DTOH = 2,
	LP_COPY_DTOD = 3,
	LP_COPY_HTOH = 4,
	LP_COPY_PTOP = 5,
	LP_COPY_MEMSET = 6,
};

struct lp_device {
	int32_t id;                  /* CUDA ordinal as seen by the process */
	const char *name;            /* "NVIDIA H100 80GB HBM3" */
	const char *uuid;            /* may be "" */
	int32_t sm_count;
	int32_t cc_major, cc_minor;
	uint32_t sm_clock_mhz;       /* maximum SM clock */
	uint32_t mem_clock_mhz;
	uint32_t mem_bus_width_bits;
	uint64_t mem_bytes;
	uint32_t l2_bytes;
};

struct lp_process {
	uint32_t pid;
	const char *host;
	const char *name;            /* command line or executable name */
	uint64_t start_ns;
	const char *cupti_status;    /* "ok", "unavailable: held by <who>", "no cuda" ... */
	uint64_t dropped_records;    /* records the source says it lost ... */
	uint64_t dropped_cupti;      /* ... of them CUPTI's count (llmprof's tracer; the rest its own) */
	uint64_t overhead_ns;        /* the collector's own overhead (CUPTI OVERHEAD records) */
	uint64_t graph_uncaptured;   /* kernels of CUDA graph nodes with no capture record: attributed
	                              * to their launch's range (captured outside any range, or while
	                              * CUPTI was detached: the warm-up) */
	uint32_t ppid;               /* parent process; 0 unknown */
	uint8_t forked;              /* 1: a fork child (no exec) of a traced process */
	int32_t rank, local_rank, world_size;  /* the launcher's (RANK, OMPI_COMM_WORLD_RANK, ...); -1 unknown */
	const char *rank_source;     /* the variable the rank came from ("RANK", ...); "" none */
	const char *visible_devices; /* CUDA_VISIBLE_DEVICES when the rank was read; "" unset */
	struct lp_sampling {         /* the tracer's SAMPLING record (docs/tracer.md "Sampled tracing") */
		uint8_t mode;            /* 0 no record (exact), 1 exact, 2 sampled */
		uint8_t why;             /* enum lp_trace_sample_why */
		uint32_t every, first;
		uint32_t auto_rate;      /* auto's threshold, launches/s */
		const char *unit;        /* the sampling unit's range name; "" none */
		uint64_t launch_rate;    /* launches/s auto measured; 0 none */
		uint64_t toggles, toggle_ns, toggle_max_ns;  /* CUPTI switches and their cost */
		uint64_t units, units_recorded;
		uint8_t pick;            /* enum lp_trace_sample_pick: 0 the block's first unit, 1 random */
		uint64_t seed;           /* pick 1: the seed of the positions */
		uint32_t burst;          /* > 0: bursts of `burst` units, CUPTI detached between them */
		uint8_t warmup;          /* enum lp_trace_warmup: CUPTI inside the warm-up range */
		uint8_t graphs_all;      /* LP_TRACE_SAMPLING_F_GRAPHS_ALL: CUDA graphs under per-unit switching,
		                          * every unit recorded from the first graph launch on */
	} sampling;
};

struct lp_range {
	const char *domain;          /* "" for the default domain */
	const char *name;
	uint32_t pid, tid;
	uint64_t start_ns, end_ns;   /* end_ns == 0: never closed (process killed) */
	int32_t parent;              /* index into ranges; -1 at the bottom of the stack */
	uint16_t depth;              /* 0 for a bottom range */
	uint8_t kind;                /* enum lp_range_kind */
	uint8_t payload_type;        /* enum lp_payload_type */
	uint8_t sample;              /* tracer STAGE record: 0 none / not a sampling unit, 1 a recorded
	                                unit, 2 an unrecorded unit (its kernels are not in the trace), 3
	                                recorded while auto measured the launch rate (LP_TRACE_STAGE_*) */
	uint8_t gpu_status;          /* STAGE: enum lp_trace_stage_gpu (1: the gpu_* times below) */
	uint8_t push_attached;       /* STAGE: its push attached CUPTI before the GPU mark (flag) */
	uint32_t sample_index;       /* STAGE: a unit's index under its parent */
	uint64_t gpu_start_ns, gpu_end_ns;  /* STAGE: when the GPU reached the push and the pop (0 unknown) */
	uint64_t gpu_elapsed_ns;     /* STAGE: CUDA-event time between them (0 unknown) */
	uint8_t synthetic;           /* 1: not a host event but a copy of a range open when a CUDA graph
	                                was captured, re-rooted under the range open at one launch of
	                                that graph (trace reader); start/end are the GPU span of its
	                                kernels, so it has no host time */
	union {
		uint64_t u64;
		int64_t i64;
		double f64;
	} payload;
};

struct lp_kernel {
	const char *name;            /* demangled name (nsys demangledName, CUPTI name demangled) */
	const char *short_name;      /* function name without template/arguments; may equal name */
	uint32_t pid;
	int32_t device;
	uint32_t context;
	uint32_t stream;
	uint64_t start_ns, end_ns;
	uint32_t correlation_id;
	uint32_t launch_tid;         /* thread that launched it (0 unknown) */
	uint64_t launch_ns;          /* CPU time of the launching API call (0 unknown) */
	uint32_t grid[3], block[3];
	uint32_t registers_per_thread;
	uint32_t shared_bytes;       /* static + dynamic */
	uint64_t graph_node_id;      /* 0 when not from a CUDA graph */
	uint32_t graph_id;
	int32_t range;               /* innermost attributed range; -1 none */
};

struct lp_copy {
	uint8_t kind;                /* enum lp_copy_kind */
	uint64_t bytes;
	uint32_t pid;
	int32_t device;
	uint32_t stream;
	uint64_t start_ns, end_ns;
	uint32_t correlation_id;
	uint32_t launch_tid;         /* thread that issued it (0 unknown) */
	uint64_t launch_ns;          /* CPU time of the issuing API call (0 unknown) */
	int32_t range;
};

struct lp_profile {
	struct lp_arena arena;
	const char *source;          /* what was loaded: a path or description */
	const char *source_kind;     /* "llmprof-trace", "nsys-sqlite", ... */
	struct lp_device *devices;   size_t n_devices, cap_devices;
	struct lp_process *processes; size_t n_processes, cap_processes;
	struct lp_range *ranges;     size_t n_ranges, cap_ranges;
	struct lp_kernel *kernels;   size_t n_kernels, cap_kernels;
	struct lp_copy *copies;      size_t n_copies, cap_copies;
	struct lp_map intern;        /* string set of lp_profile_intern (private) */
	uint64_t warnings;           /* soft problems met while loading (truncated tails ...) */
};

void lp_profile_init(struct lp_profile *p, const char *source);
void lp_profile_release(struct lp_profile *p);
/* Interned copy of s (same pointer for equal strings); NULL on out of memory. */
const char *lp_profile_intern(struct lp_profile *p, const char *s);
const char *lp_profile_intern_n(struct lp_profile *p, const char *s, size_t n);
/* Appends a zeroed element and returns it (range/parent fields set to -1); NULL on out of memory. */
struct lp_device *lp_profile_add_device(struct lp_profile *p);
struct lp_process *lp_profile_add_process(struct lp_profile *p);
struct lp_range *lp_profile_add_range(struct lp_profile *p);
struct lp_kernel *lp_profile_add_kernel(struct lp_profile *p);
struct lp_copy *lp_profile_add_copy(struct lp_profile *p);

/* Finds the device row with this ordinal (NULL when absent). */
const struct lp_device *lp_profile_device(const struct lp_profile *p, int32_t id);
/* Finds the process row with this pid (NULL when absent). */
const struct lp_process *lp_profile_process(const struct lp_profile *p, uint32_t pid);

/* Does range `idx` or any of its ancestors match `expr`? `expr` is "name" (any domain) or
 * "domain@name" (ncu's order); "@name" means the default domain. Returns the matching ancestor's
 * index or -1. */
int32_t lp_profile_range_find_ancestor(const struct lp_profile *p, int32_t idx, const char *expr);
/* Writes "decode_all/decode_step/layer" (bottom to top) for range idx into out. */
struct lp_buf;
int lp_profile_range_path(const struct lp_profile *p, int32_t idx, struct lp_buf *out);

/* ---- aggregated kernel rows (the seed's KernelRecord) ---- */

struct lp_metric {
	const char *name;            /* ncu metric identifier, e.g. "dram__bytes_read.sum" */
	double value;                /* in base units (ns, byte, byte/s, %, count) */
	const char *unit;            /* base unit as printed by ncu ("byte", "nsecond", "%", "") */
	int valid;                   /* 0: n/a in the source */
};

struct lp_kernel_record {
	const char *kernel_name;     /* demangled */
	const char *short_name;
	int32_t device;
	double total_ms;
	uint64_t calls;
	double mean_ms;              /* total_ms / max(calls, 1): computed, never read */
	double min_ms, max_ms;
	uint32_t grid[3], block[3];  /* of the first launch seen */
	uint32_t registers_per_thread;
	struct lp_metric *metrics;   /* owned by the table (or the parser result) */
	size_t n_metrics;
};

struct lp_kernel_filter {
	const char *stage;           /* only kernels under a range matching this expr (see above); NULL all */
	int32_t device;              /* -1: all devices */
	int exclude_warmup;          /* skip kernels under a range named "warmup" */
	const unsigned char *omit;   /* per profile kernel, or NULL: nonzero skips it (the analysis's
	                              * warm-up: -2 in lp_stage_set.kernel_stage, skip_first's too) */
};

struct lp_kernel_table {
	struct lp_kernel_record *rows;  /* sorted by total_ms descending, then name */
	size_t n_rows;
	double total_ms;                /* sum over rows */
	struct lp_arena arena;          /* metric arrays */
};

int lp_kernel_table_build(const struct lp_profile *p, const struct lp_kernel_filter *filter,
	struct lp_kernel_table *out, struct lp_err *err);
void lp_kernel_table_sort(struct lp_kernel_table *t);
void lp_kernel_table_release(struct lp_kernel_table *t);
/* Finds a metric by name in a record; NULL when absent. */
const struct lp_metric *lp_kernel_record_metric(const struct lp_kernel_record *r, const char *name);

#endif
