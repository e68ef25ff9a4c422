/* regions.h: NVTX regions of an Nsight Compute run: which results ran in which region, and
 * totals that add up through the nesting (issue 7; docs/regions.md has the rules in prose).
 *
 * A region is named by an NVTX expression in ncu's syntax (`profiling.ncu.regions.include`):
 *   `A/`              push/pop range A of the default domain (A anywhere on the stack)
 *   `LLM@decode_all/` push/pop range decode_all of domain LLM
 *   `A/A1/`, `A::A1/` A1 directly inside A;  a `*` level between A and C: C anywhere above A
 *   `[A/`, `A]/`      A at the bottom / at the top of the stack
 *   `A` (no slash)    a start/end range named A (nvtxRangeStart/End)
 *   `LLM\@x/`         a default-domain range whose name is the string "LLM@x"
 * Every include expression is a root region; push/pop ranges seen above it on a result's stack
 * become nested regions named with `::` (`A` -> `A::A1` -> `A::A1::x`, a level of another domain
 * as `dom@x`). Parents are found by name (`A::A1`'s parent is the region `A`); start/end regions
 * (no stack: they may overlap) get as parent the region whose results contain theirs (the smallest
 * such, then the one that started later by range id, then by name).
 *
 * Attribution: a kernel result counts (inclusively) in every region it is a member of, and
 * exclusively in the deepest member of each region tree. A range result (range / app-range
 * replay: Kernel Name `range`) counts only at its own region (its deepest member); a parent's
 * range time is its own range result when it has one (it already covers its children), else the
 * sum of its children. exclusive = inclusive - sum(children inclusive), which the model checks
 * against the directly attributed exclusive time (1% tolerance): violations become warnings.
 *
 * Filters, applied again when reading whatever ncu already filtered: `regions.exclude` (NVTX)
 * drops a result whose stack matches; `regions.kernels.exclude` drops a kernel result whose name
 * matches; with `regions.kernels.include`, a kernel result must match one of them. Kernel
 * patterns are exact names (compared with the exported Kernel Name and its function-name form)
 * or `regex:` + a POSIX extended regular expression (searched, not anchored). Range results are
 * not kernels: kernel filters leave them alone.
 *
 * Ownership: struct lp_regions owns everything reachable from it (one arena); the config it was
 * built from must outlive it. Scopes own their stats (lp_regions_scope_release). Not thread-safe.
 *
 *   struct lp_regions r;
 *   if (lp_regions_init(&r, &cfg, err) < 0) return -1;
 *   if (lp_regions_load_ncu_raw(&r, "ncu/run_raw.csv", err) < 0) goto fail;
 *   if (lp_regions_finish(&r, err) < 0) goto fail;
 *   struct lp_region_scope s;
 *   lp_regions_scope(&r, LP_REGION_SCOPE_AGGREGATE, 0, -1, &s, err);
 *   ... s.stats[i].incl_ms for r.nodes[i] ...
 *   lp_regions_scope_release(&s); lp_regions_release(&r);
 */
#ifndef LP_ANALYZE_REGIONS_H
#define LP_ANALYZE_REGIONS_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/err.h"
#include "parse/ncu_raw.h"
#include "profile/profile.h"

#define LP_REGIONS_MAX_PARTS 16        /* levels in one expression path */
#define LP_REGIONS_MAX_NODES 4096      /* distinct regions (nested ones included) */
#define LP_REGIONS_MAX_EXPRS 256       /* include + exclude expressions */
#define LP_REGIONS_MAX_KERNEL_PATTERNS 256
#define LP_REGIONS_MAX_ROWS (1u << 24)
#define LP_REGIONS_TOLERANCE 0.01      /* reconciliation: 1% of the parent's inclusive time */

enum lp_region_kind {
	LP_REGION_PUSHPOP = 0,
	LP_REGION_STARTEND = 1,
};

/* One parsed NVTX expression. */
struct lp_region_pattern {
	const char *text;                     /* as configured */
	const char *name;                     /* canonical region name: "LLM@decode_all", "A::A1" */
	int kind;                             /* enum lp_region_kind */
	const char *domain;                   /* "" = the default domain */
	size_t n_parts;
	const char *parts[LP_REGIONS_MAX_PARTS];
	uint8_t gap_before[LP_REGIONS_MAX_PARTS];  /* `*` between part i-1 and part i */
	int anchor_bottom, anchor_top;
};

/* Parses `text` (strings go into `a`). Errors (LP_EUSAGE) say what is wrong with the expression;
 * callers prefix the config key. `regex:` expressions are refused (not supported by the report). */
int lp_region_pattern_parse(const char *text, struct lp_arena *a, struct lp_region_pattern *out,
	struct lp_err *err);
/* Push/pop: finds the bottom-most match on `st`; 1 with the stack levels of the first and last
 * part in *lo / *hi, 0 no match. Start/end: 1 when a level of `st` (the start/end column) is it. */
int lp_region_pattern_match(const struct lp_region_pattern *p, const struct lp_ncu_nvtx_stack *st,
	size_t *lo, size_t *hi);
/* The expression ncu takes for it (`A::A1/` -> `A/A1/`); appended to out. */
int lp_region_pattern_ncu(const char *text, struct lp_buf *out);

/* A kernel name filter entry. */
struct lp_region_kernel_pattern {
	const char *text;
	int is_regex;
	regex_t re;                           /* when is_regex */
};

/* What the model is built from (analyze/regions_args.h fills it from the config). */
struct lp_regions_spec {
	const char *const *include;  size_t n_include;
	const char *const *exclude;  size_t n_exclude;
	const char *const *kernels_include;  size_t n_kernels_include;
	const char *const *kernels_exclude;  size_t n_kernels_exclude;
	const char *const *metrics;  size_t n_metrics;   /* reported metric columns, in this order */
};

struct lp_region {
	const char *name;            /* "A::A1"; unique per kind */
	const char *domain;          /* domain of its own range ("" default) */
	const char *range;           /* its own range name */
	const char *expression;      /* the include expression for a configured region; NULL nested */
	int kind;
	int32_t parent;              /* index into nodes; -1 root (set by lp_regions_finish) */
	uint16_t depth;
	int32_t order;               /* position in the report (pre-order of the tree) */
	uint64_t first_range_id;     /* start/end: smallest range id seen (ordering rule) */
	uint64_t n_rows;             /* results that are members (all scopes) */
	const char *dir;             /* folder name under ncu/regions/ (lp_regions_assign_dirs) */
};

struct lp_region_row {
	uint64_t line;               /* record line in the raw CSV (for slicing) */
	uint64_t id;
	uint32_t pid;
	int32_t device;
	const char *kernel_name;
	const char *short_name;
	int is_range;
	double duration_ns;          /* < 0 unknown (counts as 0) */
	double weight;               /* launches it stands for: 1, or a sampled run's group weight
	                                (lp_regions_set_weights) */
	double *metric_values;       /* spec.n_metrics values */
	uint8_t *metric_valid;
	size_t first_member, n_members;
};

struct lp_region_member {
	int32_t node;
	uint8_t exclusive;           /* the deepest member of its tree for this row */
};

struct lp_regions {
	struct lp_arena arena;
	const struct lp_regions_spec *spec;
	struct lp_region_pattern *inc;  size_t n_inc;
	struct lp_region_pattern *exc;  size_t n_exc;
	struct lp_region_kernel_pattern *kinc;  size_t n_kinc;
	struct lp_region_kernel_pattern *kexc;  size_t n_kexc;
	uint64_t *inc_hits;             /* results each include expression matched */
	struct lp_region *nodes;  size_t n_nodes, cap_nodes;
	struct lp_region_row *rows;  size_t n_rows, cap_rows;
	struct lp_region_member *members;  size_t n_members, cap_members;
	int32_t *order;                 /* node indices in report order (pre-order, roots by config) */
	uint8_t *metric_present;        /* spec metric i is a column of the raw page */
	const char **metric_unit;       /* its base unit from the units row ("" unknown) */
	int metrics_known;              /* a raw page was read (metric_present is meaningful) */
	/* ranges seen on the results' NVTX columns (before any filter): sorted, unique */
	const char **seen;  size_t n_seen, cap_seen;
	uint64_t results_read;          /* data rows in the raw page */
	uint64_t dropped_nvtx_exclude, dropped_kernel_filter, outside_regions;
	struct lp_buf warnings;         /* one warning per line */
	int finished;
	void *priv;                     /* struct lp_regions_priv (analyze/regions_impl.h) */
};

/* Compiles the spec (expressions, kernel patterns). Errors name the entry ("regions.include[1]"). */
int lp_regions_init(struct lp_regions *r, const struct lp_regions_spec *spec, struct lp_err *err);
void lp_regions_release(struct lp_regions *r);

/* Attributes one ncu result (kernel or range). Usable as the body of an lp_ncu_raw_stream
 * callback; lp_regions_load_ncu_raw does exactly that. */
int lp_regions_add_result(struct lp_regions *r, const struct lp_ncu_result *res, struct lp_err *err);
int lp_regions_load_ncu_raw(struct lp_regions *r, const char *path, struct lp_err *err);
/* Kernel name filters alone: 1 keep, 0 drop. */
int lp_regions_kernel_wanted(const struct lp_regions *r, const char *kernel_name, const char *short_name);

/* Parents, depths, exclusive members, report order. Call once after the last add. */
int lp_regions_finish(struct lp_regions *r, struct lp_err *err);

/* Gives each region a folder name safe for paths, unique, never "report.json" / "report.md"
 * (lp_regions_sanitize + "-2", "-3" ... in report order). */
int lp_regions_assign_dirs(struct lp_regions *r, struct lp_err *err);
/* `LLM@decode_all/` -> `LLM_decode_all`: [A-Za-z0-9._-] kept, runs of others -> one '_', leading
 * and trailing '_' and '.' trimmed, at most 96 bytes, "region" when nothing is left. */
int lp_regions_sanitize(const char *name, struct lp_buf *out);

/* ---- scopes: the totals over all results, or one process, or one device ---- */

enum lp_region_scope_kind {
	LP_REGION_SCOPE_AGGREGATE = 0,
	LP_REGION_SCOPE_PROCESS = 1,
	LP_REGION_SCOPE_DEVICE = 2,
};

struct lp_region_kernel {
	struct lp_kernel_record rec;   /* inclusive: calls, total_ms, mean_ms, min/max, metrics */
	uint64_t excl_calls;
	double excl_ms;
};

struct lp_region_stats {
	int present;                   /* has results in this scope */
	double incl_ms, excl_ms;
	double direct_ms;              /* directly attributed exclusive time (kernel + own range) */
	uint64_t kernel_count, kernel_count_excl;   /* kernel results */
	uint64_t range_instances;      /* own range results */
	int64_t pid;                   /* the only process of its results, -1 several / none */
	int32_t device;                /* the only device, -1 several / none */
	int reconciled;                /* |incl - (excl + sum children incl)| <= 1% of incl */
	double reconcile_error_ms;
	struct lp_region_kernel *kernels;   /* sorted by inclusive total, then name */
	size_t n_kernels;
};

struct lp_region_scope {
	int kind;
	uint32_t pid;
	int32_t device;
	struct lp_region_stats *stats;  /* one per node, indexed like r->nodes */
	size_t n_stats;
	double total_ms;                /* results in at least one region, each counted once */
	uint64_t kernel_count;
	uint64_t range_instances;
	size_t n_present;
	struct lp_arena arena;
};

int lp_regions_scope(const struct lp_regions *r, int kind, uint32_t pid, int32_t device,
	struct lp_region_scope *out, struct lp_err *err);
void lp_regions_scope_release(struct lp_region_scope *s);

/* A sampled ncu run (docs/ncu-sampling.md): each result stands for `weights[i]` launches (its
 * group's launches over its results) for the result IDs ids[i]; rows of other IDs keep 1. Scopes
 * then scale times, call counts and the metric means to all launches. *n_set (may be NULL): the
 * rows weighed. Errors: out of memory. */
int lp_regions_set_weights(struct lp_regions *r, const uint64_t *ids, const double *weights, size_t n,
	size_t *n_set, struct lp_err *err);

/* Distinct processes / devices of the member results, ascending. Caller frees *out. */
int lp_regions_pids(const struct lp_regions *r, uint32_t **out, size_t *n);
int lp_regions_devices(const struct lp_regions *r, int32_t **out, size_t *n);

/* Ranges of a capture-phase profile as expressions (`A/`, `LLM@decode_all/`, `A` for start/end,
 * `LLM\@x/` for a default-domain name holding '@'), sorted and unique, into `a`. */
int lp_regions_profile_ranges(const struct lp_profile *p, struct lp_arena *a, const char ***out,
	size_t *n, struct lp_err *err);

#endif
