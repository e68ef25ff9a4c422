/* regions_args.h: the `profiling.ncu.regions` subtree of the ncu preset, resolved, and turned
 * into Nsight Compute flags (issue 7; docs/regions.md).
 *
 *   regions:
 *     include: [A/, B/]            -> --nvtx --nvtx-include A/ --nvtx-include B/
 *     exclude: [A/A1/]             -> --nvtx-exclude A/A1/  (`A::A1/` is written `A/A1/` for ncu)
 *     kernels:
 *       include: [gemv, regex:^fa] -> --kernel-name regex:^gemv$|(^fa)  (matched against the
 *                                     preset's kernel_name_base); one exact name alone: as is
 *       exclude: [memset]          -> no ncu flag (ncu has no kernel exclude): applied on reading
 *     sections: [SpeedOfLight]     -> --section SpeedOfLight each (the preset's set is dropped)
 *     metrics: [dram__bytes.sum]   -> --metrics gpu__time_duration.sum,dram__bytes.sum
 * Defaults: an empty include on the reference workload (llmprof-llm) means
 * [LLM@prefill/, LLM@decode_all/]; on any other workload it means no region report. When
 * regions.metrics is empty the report shows the preset's `metrics` instead.
 * The preset's replay_mode applies: kernel (per-kernel results grouped by region), range or
 * app-range (one result per region instance). A range replay that fails with "Unsupported API
 * during capture" is rerun in app-range (lp_regions_replay_fallback) and the report says so.
 *
 * The fingerprint is the sha256 of the resolved preset (regions.include after defaults)
 * serialized by jansson with JSON_SORT_KEYS | JSON_COMPACT.
 *
 * Ownership: lp_regions_cfg owns its strings and `resolved` (lp_regions_cfg_release). The spec it
 * fills points into it. Thread-safe (no shared state). Never prints.
 *
 *   struct lp_regions_cfg c;
 *   if (lp_regions_cfg_load(ncu_preset, 1, &c, err) < 0) return -1;
 *   json_t *preset2;                        // the preset the ncu phase should run with
 *   if (lp_regions_cfg_active(&c) && lp_regions_apply_preset(ncu_preset, &c, &preset2, err) < 0) ...
 */
#ifndef LP_ANALYZE_REGIONS_ARGS_H
#define LP_ANALYZE_REGIONS_ARGS_H

#include <jansson.h>
#include <stddef.h>

#include "analyze/regions.h"
#include "core/buf.h"
#include "core/err.h"

#define LP_REGIONS_DEFAULT_INCLUDE { "LLM@prefill/", "LLM@decode_all/" }

struct lp_regions_list {
	char **v;        /* NULL-terminated when n > 0 */
	size_t n, cap;
};

struct lp_regions_cfg {
	struct lp_regions_list include, exclude, kernels_include, kernels_exclude, sections, metrics;
	int include_defaulted;        /* include came from the reference-workload default */
	int metrics_from_preset;      /* metrics (reported) came from the preset's `metrics` */
	char replay_mode[16];         /* kernel | application | range | app-range */
	char kernel_name_base[16];    /* function | demangled | mangled ("" absent) */
	char fingerprint[65];
	json_t *resolved;             /* the preset with regions.include resolved */
	struct lp_regions_spec spec;  /* points into the lists above */
};

/* Reads `ncu_preset` (the profiling.ncu object). `reference_workload`: the run profiles our
 * llmprof-llm (enables the default include). Errors (LP_EUSAGE) name the key. */
int lp_regions_cfg_load(const json_t *ncu_preset, int reference_workload, struct lp_regions_cfg *out,
	struct lp_err *err);
void lp_regions_cfg_release(struct lp_regions_cfg *c);
/* 1 when there is a region to report (a non-empty include after defaults). */
int lp_regions_cfg_active(const struct lp_regions_cfg *c);

/* The ncu flags the regions ask for, in order (see the top of this file); NULL-terminated. */
int lp_regions_ncu_flags(const struct lp_regions_cfg *c, struct lp_regions_list *out, struct lp_err *err);
void lp_regions_list_release(struct lp_regions_list *l);
/* The kernel filter as one `--kernel-name` value ("" when kernels.include is empty). */
int lp_regions_kernel_filter(const struct lp_regions_cfg *c, struct lp_buf *out);

/* A copy of the preset for the ncu phase of a region run: nvtx.include/exclude := the regions'
 * (ncu form), kernel_name := lp_regions_kernel_filter (when set), sections := regions.sections
 * and set := null (when set), metrics := gpu__time_duration.sum + regions.metrics (when set),
 * launch_count := 0 (every matching launch or range is profiled). *out is a new reference. */
int lp_regions_apply_preset(const json_t *ncu_preset, const struct lp_regions_cfg *c, json_t **out,
	struct lp_err *err);

/* "app-range" when `replay_mode` is "range" and the ncu log shows the range-replay failure
 * ("Unsupported API during capture"); NULL otherwise. */
const char *lp_regions_replay_fallback(const char *replay_mode, const char *ncu_log);

#endif
