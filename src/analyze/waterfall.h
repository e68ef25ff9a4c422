/* waterfall.h: from the hardware limit to the measured stage: where every microsecond above the
 * floor goes, per decode step and per prefill (docs/metrics.md "Gap waterfall").
 *
 * Per unit (a decode step: the decode latency / steps; a prefill: one iteration), the items are
 *   floor      F = max(minimum bytes / peak bandwidth, model FLOPs / peak FLOP/s) (flops.h)
 *   kernel     for each kernel row: its share of the stage's GPU busy time B_k (kernels.h busy_ms:
 *              time alone plus an equal split of time shared with concurrent kernels) minus its
 *              own floor F_k
 *   residual   sum(F_k) - F: kernel floors above (or below) the stage floor, e.g. DRAM traffic
 *              beyond weights and KV cache that ncu counted, or model floor no kernel holds
 *   idle       latency - GPU busy: launch gaps, host syncs, copies; the largest gaps located (in a
 *              sampled trace: in the recorded decode steps only, per recorded step; the kernel
 *              items and the busy time are the tables' scaled estimates, docs/tracer.md)
 *   overlap    B - sum(B_k): what the busy shares leave out of the stage's busy time (kernels of this
 *              stage overlapping another stage's); about 0. The overlap credit proper, summed
 *              kernel durations K - B (streams, programmatic dependent launch: a kernel's duration
 *              then includes its wait), is already taken out of the kernel items and is reported
 *              beside them (overlap_ms)
 * and they add up to the measured latency by construction:
 *   F + sum(B_k - F_k) + (sum(F_k) - F) + (L - B) + (B - sum(B_k)) = L.
 * A kernel's floor: deep mode, with its Nsight Compute metrics joined, max(DRAM bytes / peak
 * bandwidth, FLOPs / peak FLOP/s) x its launches in the stage; otherwise the model's: GEMM kernels
 * share the floor of the weights (max(weight bytes / bandwidth, matmul FLOPs / peak)), attention
 * kernels the floor of the KV cache and attention FLOPs, in proportion to their time; other kernels
 * (norms, elementwise, copies) have floor 0: the model needs none of their traffic. Without a model
 * shape or peaks the floor is 0 with the reason, and the rest still adds up. With a bandwidth probe
 * (run.probe_bandwidth: llmprof-probe's device-to-device copy rate) the floor at that measured rate
 * is reported beside it (floor_measured_ms); the items keep the datasheet floor.
 *
 * Ownership: plain arrays inside the struct, labels copied (truncated) into it. Not thread-safe.
 */
#ifndef LP_ANALYZE_WATERFALL_H
#define LP_ANALYZE_WATERFALL_H

#include <stddef.h>

#include "analyze/kernels.h"
#include "analyze/stages.h"

#define LP_WF_ITEMS 16
#define LP_WF_KERNELS 8      /* kernel rows shown one by one; the rest as one item */
#define LP_WF_GAPS 3

enum lp_wf_kind { LP_WF_FLOOR = 0, LP_WF_KERNEL, LP_WF_RESIDUAL, LP_WF_IDLE, LP_WF_OVERLAP };

struct lp_wf_item {
	enum lp_wf_kind kind;
	char label[112];
	double ms;                   /* per unit; negative for the overlap credit */
	double floor_ms;             /* kernel items: the floor subtracted; else 0 */
	const char *floor_source;    /* kernel items: "ncu", "model", "none" */
	const char *fix;             /* what usually fixes it (static text) */
};

struct lp_wf_gap {
	char label[160];             /* "after k_a, before k_b" */
	double ms;                   /* per unit */
	double count;                /* occurrences per unit */
};

struct lp_waterfall {
	int valid;
	char why[160];               /* when not valid */
	const char *stage;           /* "prefill" / "decode" */
	const char *unit;            /* "iteration" / "step" */
	double units;                /* iterations, or iterations x steps */
	double latency_ms;           /* per unit: what the items add up to */
	double floor_ms;
	double floor_measured_ms;    /* the floor at the probe's measured copy bandwidth; 0 no probe */
	char floor_source[320];      /* "bytes 318.8 MB / 3350 GB/s (datasheet ...)" or why 0 */
	double busy_ms, kernel_ms;   /* per unit */
	double overlap_ms;           /* kernel_ms - busy_ms: the credit already taken out of the kernel items */
	int used_ncu;                /* some kernel floor came from ncu */
	struct lp_wf_item items[LP_WF_ITEMS];
	size_t n_items;
	struct lp_wf_gap gaps[LP_WF_GAPS];
	size_t n_gaps;
	int gaps_sampled;            /* a sampled trace: the gaps are located in its recorded steps only, per
	                              * recorded step (gaps_steps of them), not across unrecorded ones */
	size_t gaps_steps;
	int top[3];                  /* indices of the three largest items above the floor; -1 none */
};

struct lp_analysis;
struct lp_profile;
/* Fills a->waterfall[0] (prefill) and [1] (decode). -1 on out of memory. */
int lp_waterfall_compute(const struct lp_profile *p, struct lp_analysis *a);

#endif
