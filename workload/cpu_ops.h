/* cpu_ops.h: the workload's operators in plain C (fp32), used by the CPU engine and as the
 * references the CUDA kernels are tested against (tests/unit/test_workload_ops.c,
 * tests/unit/test_gpu_workload.c). Straightforward loops, no cleverness: these define what
 * each op means. Weights come from the counter-based generator (rng.h) through
 * lp_llm_tensor_init, so any path can rebuild the same model.
 *
 * Layouts (row-major): activations [tokens][features]; a projection weight is [out][in] (the
 * PyTorch Linear layout), y = x W^T (+ b); the KV cache of one layer is [batch][kv_head][pos][d].
 * Tokens of a batch are sequence-major: token i is sequence i / tn, position pos0 + i % tn.
 * Functions write only their outputs; no allocation except where said. OpenMP is used inside
 * when the build has it; results do not depend on the thread count (no cross-thread sums).
 */
#ifndef LP_WORKLOAD_CPU_OPS_H
#define LP_WORKLOAD_CPU_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "llm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- weights --- */
enum lp_llm_tensor_kind {
	LP_LLM_T_EMBED = 1, LP_LLM_T_LM_HEAD, LP_LLM_T_FINAL_NORM,
	LP_LLM_T_ATTN_NORM, LP_LLM_T_QKV, LP_LLM_T_QKV_BIAS, LP_LLM_T_O, LP_LLM_T_MLP_NORM,
	LP_LLM_T_GATE_UP, LP_LLM_T_DOWN, LP_LLM_T_ROUTER,
	LP_LLM_T_EXP_GATE_UP, LP_LLM_T_EXP_DOWN, LP_LLM_T_SH_GATE_UP, LP_LLM_T_SH_DOWN,
	LP_LLM_T_PROMPT,
};

/* What the generator needs for one tensor: its stream id and the scale/offset of its values.
 * Scales keep activations sane: projections ~ N(0, 1/fan_in), norms 1 +- 0.05, embeddings N(0,1). */
struct lp_llm_tensor_gen {
	uint64_t stream;
	float mul;
	float offset;
};
struct lp_llm_tensor_gen lp_llm_tensor_gen(const struct lp_llm_config *c, enum lp_llm_tensor_kind kind,
	int layer, int expert);
/* Fills dst[0..n) with the tensor's values (bf16-exact floats). */
void lp_llm_cpu_fill(float *dst, size_t n, uint64_t seed, struct lp_llm_tensor_gen g);

/* --- operators --- */
/* out[r] = x[r] / sqrt(mean(x[r]^2) + eps) * w, rows of n. out may equal x. */
void lp_llm_cpu_rmsnorm(float *out, const float *x, const float *w, int rows, int n, float eps);
/* y[t][j] = sum_k x[t][k] * w[j][k] (+ bias[j]); bias may be NULL. */
void lp_llm_cpu_matmul(float *y, const float *x, const float *w, const float *bias, int t, int n, int k);
/* cos/sin table for rotary embeddings: tab[(p * d/2 + i) * 2 + {0,1}] = {cos, sin}(p * theta^(-2i/d)),
 * computed in double. */
void lp_llm_rope_table(float *tab, int max_pos, int head_dim, double theta);
/* Rotates heads of d in place (rotate-half / NeoX pairing (i, i + d/2)): rows of `heads` heads
 * with `row_stride` floats between rows; row i is at position pos0 + i % tn. */
void lp_llm_cpu_rope(float *x, int rows, int row_stride, int heads, int d, int tn, int pos0,
	const float *tab);
/* Causal GQA attention. q: [batch*tn][n_heads*d] (row stride q_stride); k, v: one layer's cache
 * [batch][n_kv][max_pos][d]; out: [batch*tn][n_heads*d]. Query i attends keys 0..pos0 + i % tn. */
void lp_llm_cpu_attention(float *out, const float *q, int q_stride, const float *k, const float *v,
	int batch, int tn, int pos0, int n_heads, int n_kv, int d, int max_pos);
/* In-place softmax over n values (max-subtracted). */
void lp_llm_cpu_softmax(float *x, int n);
/* out[t][i] = silu(gu[t][i]) * gu[t][inter + i]: gate first, up second. */
void lp_llm_cpu_swiglu(float *out, const float *gu, int t, int inter);
/* MoE routing: per token, scores = softmax or sigmoid of logits[t][0..e), the top k (ties to the
 * lower expert id, ids in decreasing score order), weights normalised to sum 1 when norm_topk,
 * times scale. ids/weights: [t][k]. */
void lp_llm_cpu_moe_route(const float *logits, int t, int e, int k, enum lp_llm_gate gate,
	int norm_topk, float scale, int32_t *ids, float *weights);
/* Index of the largest value (lowest index on ties). */
int32_t lp_llm_cpu_argmax(const float *x, int n);

#ifdef __cplusplus
}
#endif

#endif
