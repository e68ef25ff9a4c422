/* cuda_engine.cuh: the CUDA back end's engine state, shared by its two files: cuda_setup.cu
 * (create: the memory plan, weights, splits, warm-up and graph capture) and cuda_model.cu (the
 * forward pass, the decode-step graph and the backend's calls). Private to workload/ (cuda_api.h
 * is the kernels' interface, engine.h the backends'). One engine per caller; not thread-safe. */
#ifndef LP_WORKLOAD_CUDA_ENGINE_CUH
#define LP_WORKLOAD_CUDA_ENGINE_CUH

#include "cuda_common.cuh" /* first: core/err.h with C linkage; LP_CUDA_TRY */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_api.h"
#include "engine.h"

#define TRY(call) LP_CUDA_TRY(call)
#define OK(call)                        \
	do {                                \
		if ((call) < 0)             \
			return -1;          \
	} while (0)

typedef uint16_t bf;

struct cu_layer {
	bf *attn_norm, *qkv, *qkv_bias, *o, *mlp_norm, *gate_up, *down;
	bf *router, *exp_gate_up, *exp_down, *sh_gate_up, *sh_down;
};

struct cu_engine {
	struct lp_llm_config c;
	struct lp_llm_run_opts o;
	int q_dim, qkv_dim, max_pos, sh_inter, ops, t_max, moe_rows, max_tiles;
	int dec_splits, dec_split_len, graph_kernels;
	int fused, f_splits, f_split_len;   /* the fused decode path (cuda_decode.cu) and its splits */
	int moe_fused;                      /* its MoE layers on the fused MoE kernels (cuda_moe.cu) */
	cudaStream_t stream;
	cudaEvent_t ev[3];
	lp_llm_blas *blas;
	cudaGraph_t graph;
	cudaGraphExec_t graph_exec;
	void *weights_mem, *act_mem;        /* two allocations: weights; everything else */
	bf *embed, *lm_head, *final_norm;
	struct cu_layer *layers;
	bf *k_cache, *v_cache;
	float *rope, *x, *logits, *partial, *r_logits, *r_w;
	bf *xn, *qkv, *q, *att, *o_out, *gu, *act, *mlp_out, *last;
	bf *e_gu, *e_act, *e_out, *sh_out;
	int32_t *prompt, *next, *tokens, *r_ids, *sorted, *tile_expert;
	int *pos, *done, *n_tiles, *attn_counters;
	int32_t *md_used, *md_slot;         /* the fused MoE decode's routing (lp_llm_moe_dec) */
	float *md_wgt;
	int *md_n_used, *md_done;
	bf *md_sh_act, *md_r_act;
	unsigned long long *best;
	float *h_logits;
	size_t weight_bytes, act_bytes, kv_bytes;
};

/* cuda_model.cu */
int lp_cu_forward(struct cu_engine *e, const int32_t *tokens, int tn, struct lp_err *err);
int lp_cu_prefill(struct cu_engine *e, struct lp_err *err);
/* Captures one decode step into e->graph / e->graph_exec (counting its kernels). */
int lp_cu_capture(struct cu_engine *e, struct lp_err *err);
void lp_cu_free(void *impl);
extern const struct lp_llm_backend lp_cu_backend;

#endif
