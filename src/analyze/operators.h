/* operators.h: the operator table: op ranges (ours and PyTorch's) with the GPU time of their
 * attributed kernels, inclusive and exclusive, host time, calls and share of their stage.
 *
 * Op ranges are our workload's names (embed, layer, attn_norm, qkv, rope, attention, o_proj,
 * mlp_norm, mlp, moe, router, experts, shared_experts, final_norm, lm_head, sample) and PyTorch
 * `emit_nvtx` ranges (`aten::mm, seq = 5` -> `aten::mm`: the `, seq = N` / `, op_id = N` suffixes
 * are stripped). Rows are keyed by (stage, op name); warm-up ranges are left out.
 * Inclusive GPU time: kernels attributed to the range or its descendants; exclusive: kernels whose
 * innermost op range is this one. An occurrence nested in an op of the same name (aten::linear ->
 * aten::linear) is counted in calls but not again in the times. A PyTorch op with no kernel
 * carries an explanation. Synthetic ranges (ops captured into a CUDA graph, one copy per graph
 * launch: lp_range.synthetic) count calls and GPU time, never host time.
 *
 * Ownership: the table owns its rows and strings (arena); lp_op_table_release frees them.
 * Not thread-safe.
 *
 *   struct lp_op_table ops;
 *   if (lp_operators_compute(profile, &stages, &ops, err) < 0) return -1;
 *   lp_op_table_release(&ops);
 */
#ifndef LP_ANALYZE_OPERATORS_H
#define LP_ANALYZE_OPERATORS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/stages.h"
#include "core/buf.h"

struct lp_op_row {
	const char *stage;           /* stage name, "other" outside every stage */
	int32_t stage_index;         /* index in the stage set, -1 other */
	const char *name;            /* suffix stripped */
	int pytorch;                 /* from emit_nvtx (aten::..., seq/op_id suffix) */
	uint64_t calls;
	uint64_t kernels;            /* inclusive */
	double gpu_incl_ms, gpu_excl_ms, host_ms;
	double share;                /* gpu_incl / stage kernel time (host/host on CPU runs); < 0 n/a */
	const char *zero_gpu_why;    /* set when a GPU profile attributes no kernel to it; else NULL */
	/* a sampled trace (analyze/sampling.h lp_tsample_scale_ops): kernels, gpu_incl_ms and
	 * gpu_excl_ms are estimates for every sampling unit; calls and host_ms stay exact (NVTX ranges
	 * are recorded in every unit) */
	int sampled;
	double ci_ms;                /* half width of gpu_incl_ms's 95% interval; 0 exact; < 0 unknown */
	double rerun_ms;             /* the same for a separate exact run's gpu_incl_ms (lp_tsample_rerun_ms) */
};

struct lp_op_table {
	struct lp_op_row *rows;      /* by stage, then gpu_incl_ms (host_ms on CPU runs) descending, name */
	size_t n_rows;
	int sampled;                 /* some rows are scaled from a sampled trace */
	struct lp_arena arena;
};

int lp_operators_compute(const struct lp_profile *p, const struct lp_stage_set *stages,
	struct lp_op_table *out, struct lp_err *err);
void lp_op_table_release(struct lp_op_table *t);

/* 1 when `name` is one of our workload's op names. */
int lp_op_is_known(const char *name);
/* 1 when `name` looks like a PyTorch emit_nvtx op range ("aten::mm, seq = 5", "aten::add"). */
int lp_op_is_pytorch(const char *name);
/* Writes `name` without its ", seq = N" / ", op_id = N" (and following) suffixes into `out`. */
int lp_op_strip_suffix(const char *name, struct lp_buf *out);

#endif
