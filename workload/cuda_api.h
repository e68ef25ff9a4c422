/* cuda_api.h: the workload's CUDA kernels behind a C interface, so that C code (the engine's
 * tests, tests/unit/test_gpu_workload.c) can run each one against its CPU reference in
 * cpu_ops.h. Only built with LP_LLM_HAVE_CUDA.
 *
 * Conventions: pointers are device pointers; bf16 tensors are uint16_t (raw bfloat16 bits);
 * `stream` is a cudaStream_t (NULL: the default stream). Launchers return 0, or -1 with the CUDA
 * error string and the launch's file:line in err; they never synchronize. Layouts are those of
 * cpu_ops.h. Thread-safety: none needed beyond CUDA's own.
 *
 *   uint16_t *w; lp_llm_cuda_malloc((void **)&w, n * 2, err);
 *   lp_llm_k_fill(w, n, seed, gen, NULL, err); lp_llm_cuda_sync(err);
 */
#ifndef LP_WORKLOAD_CUDA_API_H
#define LP_WORKLOAD_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- memory and sync (tests use these; the engine calls CUDA directly) --- */
int lp_llm_cuda_device_ok(struct lp_err *err);   /* 0 when a CUDA device is usable */
int lp_llm_cuda_malloc(void **p, size_t bytes, struct lp_err *err);
void lp_llm_cuda_free(void *p);
int lp_llm_cuda_h2d(void *dst, const void *src, size_t bytes, struct lp_err *err);
int lp_llm_cuda_d2h(void *dst, const void *src, size_t bytes, struct lp_err *err);
int lp_llm_cuda_sync(struct lp_err *err);

/* --- kernels --- */
/* dst[i] = the generator's bf16 value i of the tensor (bit-identical to lp_llm_cpu_fill). */
int lp_llm_k_fill(uint16_t *dst, size_t n, uint64_t seed, struct lp_llm_tensor_gen g, void *stream,
	struct lp_err *err);
/* x[r] (fp32) = table[tokens[r]] for r < t. */
int lp_llm_k_embed(float *x, const uint16_t *table, const int32_t *tokens, int t, int h,
	void *stream, struct lp_err *err);
/* For r < rows, with i = r * row_stride + row_off: x[i] += delta[i] (when delta is not NULL),
 * then out[r] = rmsnorm(x[i]) * w. The residual add of the previous op, fused. */
int lp_llm_k_rmsnorm(uint16_t *out, float *x, const uint16_t *delta, const uint16_t *w, int rows,
	int h, int row_stride, int row_off, float eps, void *stream, struct lp_err *err);
/* From qkv [t][(nh + 2 nkv) d] (+ bias): q [t][nh d] rotated; k rotated and v appended to one
 * layer's cache [batch][nkv][max_pos][d] at position *pos + r % tn (sequence r / tn). */
int lp_llm_k_qkv_rope(uint16_t *q, uint16_t *k_cache, uint16_t *v_cache, const uint16_t *qkv,
	const uint16_t *bias, const float *rope_tab, const int *pos, int t, int tn, int nh, int nkv,
	int d, int max_pos, void *stream, struct lp_err *err);
/* Causal GQA attention of q [t][nh d] over the cache; query r sees keys 0..*pos + r % tn.
 * n_splits > 1 splits each query's keys into chunks of split_len (a multiple of 32) on separate
 * blocks, then merges them; `partial` holds t * nh * n_splits * (d + 2) floats. */
int lp_llm_k_attention(uint16_t *out, const uint16_t *q, const uint16_t *k_cache,
	const uint16_t *v_cache, float *partial, const int *pos, int batch, int tn, int nh, int nkv,
	int d, int max_pos, int n_splits, int split_len, void *stream, struct lp_err *err);
/* out[r][i] = silu(gu[r][i]) * gu[r][inter + i] */
int lp_llm_k_swiglu(uint16_t *out, const uint16_t *gu, int t, int inter, void *stream,
	struct lp_err *err);
/* next[b] = argmax(logits[b]) (lowest index on ties); when tokens is not NULL also
 * tokens[b * tokens_stride + *pos + tn - prompt_len] = next[b]. The last block to finish adds tn
 * to *pos (the forward pass is done) and resets *done (a zeroed int the kernel uses). */
int lp_llm_k_argmax(int32_t *next, int32_t *tokens, int tokens_stride, int *pos, int *done,
	const float *logits, int batch, int vocab, int tn, int prompt_len, void *stream,
	struct lp_err *err);
/* MoE routing of t tokens over e experts: like lp_llm_cpu_moe_route. */
int lp_llm_k_moe_topk(int32_t *ids, float *weights, const float *logits, int t, int e, int k,
	enum lp_llm_gate gate, int norm_topk, float scale, void *stream, struct lp_err *err);
/* Groups the n = t * k assignments by expert into tiles of LP_LLM_MOE_TILE rows:
 * sorted[tile * TILE + j] = assignment index or -1 (padding), tile_expert[tile] = expert or -1,
 * *n_tiles = tiles used. max_tiles = lp_llm_moe_max_tiles(n, e). */
#define LP_LLM_MOE_TILE 64
int lp_llm_moe_max_tiles(int n, int e);
int lp_llm_k_moe_align(int32_t *sorted, int32_t *tile_expert, int *n_tiles, const int32_t *ids,
	int n, int e, int max_tiles, void *stream, struct lp_err *err);
/* Grouped expert GEMM on tensor cores: for every assignment a in the tiles,
 * c[a][j] = sum_i a_mat[a / a_div][i] * w[expert(a)][j][i], j < n_out, i < k_in;
 * w holds the experts' [n_out][k_in] matrices back to back. */
int lp_llm_k_moe_gemm(uint16_t *c, const uint16_t *a_mat, int a_div, const uint16_t *w,
	const int32_t *sorted, const int32_t *tile_expert, const int *n_tiles, int max_tiles,
	int n_out, int k_in, void *stream, struct lp_err *err);
/* out[r][i] = sum_s weights[r k + s] * eo[r k + s][i] (+ shared[r][i] when not NULL). */
int lp_llm_k_moe_combine(uint16_t *out, const uint16_t *eo, const float *weights,
	const uint16_t *shared, int t, int k, int h, void *stream, struct lp_err *err);

/* y[t][n] = x[t][k] w[n][k]^T for t <= LP_LLM_GEMV_MAX_T (decode), one warp per row, k % 8 == 0;
 * y is bf16, or fp32 when y_f32. The own alternative to lp_llm_gemm (--gemv own). */
#define LP_LLM_GEMV_MAX_T 4
int lp_llm_k_gemv(void *y, int y_f32, const uint16_t *x, const uint16_t *w, int t, int n, int k,
	void *stream, struct lp_err *err);

/* --- fused decode (t = batch <= LP_LLM_GEMV_MAX_T sequences, one new token each) ---
 * One GEMV kernel with the neighbouring element-wise ops fused in, in four modes. Each warp
 * streams two weight rows (16-byte loads, the next chunk in flight while the current one is
 * summed); the input vector is prepared once per block in shared memory. With `pdl`, kernels are
 * launched with programmatic dependent launch: a kernel starts while its predecessor finishes,
 * loads its first weights, and only then waits for the predecessor's outputs.
 *   QKV_ROPE: x = rmsnorm(resid) * norm_w; y = x W^T [t][(nh + 2 nkv) d] (+ bias), each value
 *     rounded to bf16 as lp_llm_gemm would; q [t][nh d] rotated; k rotated and v appended to
 *     one layer's cache [batch][nkv][max_pos][d] at position *pos (token j is sequence j).
 *   RESID: resid[j][i] += bf16(x W^T)[j][i] with x = x_bf16 [t][k]: the residual add.
 *   SWIGLU: x = rmsnorm(resid) * norm_w; W is [2 inter][k] (gate rows, then up rows);
 *     out [t][inter] = silu(bf16 gate) * bf16 up, i.e. lp_llm_k_swiglu after lp_llm_gemm.
 *   ARGMAX: x = rmsnorm(resid (+ delta)) * norm_w; logits [t][n] = x W^T (fp32), then what
 *     lp_llm_k_argmax does: next[j], tokens[j * tokens_stride + *pos + tn - prompt_len] (when
 *     tokens is set), *pos += tn, through the zeroed *done and best[t] (zeroed again by the
 *     kernel's last block); with embed set, also embed_out[j][0..k) = embed[next[j]] (the next
 *     step's input, so that the step needs no embedding kernel). resid rows are resid_stride
 *     floats apart (0: k), and so are the rows of the optional bf16 delta (the prefill's last
 *     positions with the last layer's MLP output not yet added).
 * Limits: k % 8 == 0, n even; t * k * 2 bytes of shared memory (lp_llm_dec_gemv_fits). */
enum lp_llm_dec_mode { LP_LLM_DEC_QKV_ROPE = 0, LP_LLM_DEC_RESID, LP_LLM_DEC_SWIGLU, LP_LLM_DEC_ARGMAX };

struct lp_llm_dec_gemv {
	enum lp_llm_dec_mode mode;
	int t, n, k;                 /* tokens, output rows of W, input width */
	int pdl;
	const uint16_t *w;           /* [n][k] */
	/* input: rmsnorm(resid) * norm_w (QKV_ROPE, SWIGLU, ARGMAX) or x_bf16 (RESID) */
	float *resid;                /* [t][k] fp32 residual stream; RESID: [t][n], updated */
	const uint16_t *norm_w;
	float eps;
	const uint16_t *x_bf16;
	/* QKV_ROPE */
	uint16_t *q, *k_cache, *v_cache;
	const uint16_t *bias;        /* may be NULL */
	const float *rope_tab;
	int *pos;                    /* ARGMAX advances it */
	int pos_ready;               /* QKV_ROPE: *pos is final before the wait (the kernel before does not advance it) */
	int nh, nkv, d, max_pos;
	/* SWIGLU */
	uint16_t *out;
	/* ARGMAX */
	float *logits;
	int32_t *next, *tokens;
	int tokens_stride, prompt_len, tn;
	int *done;
	unsigned long long *best;    /* [t], zeroed */
	int resid_stride;
	const uint16_t *delta;
	const uint16_t *embed;
	float *embed_out;
};
int lp_llm_dec_gemv_fits(int t, int k);
int lp_llm_k_dec_gemv(const struct lp_llm_dec_gemv *a, void *stream, struct lp_err *err);

/* Decode attention (one query per sequence, at position *pos, keys 0..*pos) for the fused path:
 * one block per (sequence, KV head, slice of split_len keys) takes the nh / nkv query heads of
 * its group (at most LP_LLM_DEC_ATTN_GMAX), stages each 64-key tile in shared memory; with
 * n_splits > 1 the slices of a (sequence, KV head) are merged: through distributed shared
 * memory (below), else by the last of their blocks to finish, from `partial`. split_len is
 * a multiple of 64 with split_len * n_splits >= max_pos, n_splits <= LP_LLM_DEC_ATTN_MAX_SPLITS;
 * d is 32, 64, 128 or 256. `partial` holds batch * nh * n_splits * (d + 2) floats, `counters`
 * batch * nkv zeroed ints (left zeroed). With `pdl`, the first tile but the row at *pos is loaded
 * before the wait for the kernel before (which writes that row and q). With 2 to
 * LP_LLM_DEC_ATTN_CLUSTER_MAX slices, where the GPU can run them as a thread block cluster, the
 * slices merge through distributed shared memory and partial and counters are left alone. */
#define LP_LLM_DEC_ATTN_GMAX 8
#define LP_LLM_DEC_ATTN_TILE 64
#define LP_LLM_DEC_ATTN_MAX_SPLITS 64
#define LP_LLM_DEC_ATTN_CLUSTER_MAX 16
int lp_llm_k_attn_decode(uint16_t *out, const uint16_t *q, const uint16_t *k_cache,
	const uint16_t *v_cache, float *partial, int *counters, const int *pos, int batch, int nh,
	int nkv, int d, int max_pos, int n_splits, int split_len, int pdl, void *stream,
	struct lp_err *err);
/* x[i] += delta[i] for i < n (fp32 residual, bf16 delta): the MoE layers' residual add. */
int lp_llm_k_add(float *x, const uint16_t *delta, size_t n, void *stream, struct lp_err *err);

/* --- fused MoE decode (t = batch <= LP_LLM_MOE_DEC_MAX_T sequences, one new token each) ---
 * The MLP of an MoE layer in three kernels (cuda_moe.cu), each reading its weights once:
 *   route: x = rmsnorm(resid) * norm_w; r_logits [t][e] = x router^T (fp32); then, as
 *     lp_llm_k_moe_topk: ids, weights [t][k]; the experts in use, ascending: *n_used, used[];
 *     per used expert u and token j: slot[u t + j] = j k + s when token j picked it as its
 *     s-th expert (else -1), wgt[u t + j] its routing weight (else 0); *done (zeroed) back to 0.
 *   up: sh_act [t][sh] = silu(bf16 gate) * bf16 up of the shared experts (as one MLP of width
 *     sh, gate rows then up rows in sh_gate_up [2 sh][h]); r_act [t k][mi] the same for each
 *     assignment's expert (gate_up [e][2 mi][h]); an expert picked by several tokens is read once.
 *   down: resid[j] += bf16(shared down (sh_down [h][sh]) of sh_act[j] + sum over token j's
 *     assignments of weight x expert down (down [e][h][mi]) of its r_act row).
 * Launched with `pdl`, each kernel loads its first weights before waiting for the one before.
 * Limits (lp_llm_moe_dec_fits): h, mi, sh multiples of 8 (sh may be 0), e even, t k <= 64. */
#define LP_LLM_MOE_DEC_MAX_T 8
#define LP_LLM_MOE_DEC_MAX_ASSIGN 64
struct lp_llm_moe_dec {
	int t, h, e, k, mi, sh;      /* tokens, hidden, routed experts, top k, expert width, shared width */
	int pdl;
	float *resid;                /* [t][h] */
	const uint16_t *norm_w;
	float eps;
	const uint16_t *router, *gate_up, *down, *sh_gate_up, *sh_down;
	int sigmoid, norm_topk;      /* the gate: sigmoid (else softmax); renormalise the top k */
	float scale;
	/* work buffers (device): r_logits [t][e]; ids, weights [t][k]; n_used [1]; used, slot, wgt
	 * [min(t k, e) t]; sh_act [t][sh]; r_act [t k][mi]; done [1], zeroed */
	float *r_logits, *weights, *wgt;
	int32_t *ids, *used, *slot;
	int *n_used, *done;
	uint16_t *sh_act, *r_act;
};
int lp_llm_moe_dec_fits(int t, int h, int e, int k, int mi, int sh);
/* Launches the kernels named in `phases` (in that order; all three make the MoE MLP). */
#define LP_LLM_MOE_DEC_ROUTE 1
#define LP_LLM_MOE_DEC_UP 2
#define LP_LLM_MOE_DEC_DOWN 4
#define LP_LLM_MOE_DEC_ALL 7
int lp_llm_k_moe_dec(const struct lp_llm_moe_dec *a, int phases, void *stream, struct lp_err *err);

/* --- cuBLAS --- */
typedef struct lp_llm_blas lp_llm_blas; /* a cuBLAS handle with its workspace and stream */
int lp_llm_blas_create(lp_llm_blas **b, void *stream, struct lp_err *err);
void lp_llm_blas_free(lp_llm_blas *b);
/* y[t][n] = x[t][k] w[n][k]^T, bf16 inputs, fp32 accumulation; y is bf16, or fp32 when y_f32. */
int lp_llm_gemm(lp_llm_blas *b, void *y, int y_f32, const uint16_t *x, const uint16_t *w, int t,
	int n, int k, struct lp_err *err);

#ifdef __cplusplus
}
#endif

#endif
