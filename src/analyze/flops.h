/* flops.h: model FLOPs and minimum bytes of a decoder-only transformer, from its shape alone.
 *
 * The shape is the `model.*` config (conf/model/llm/<name>.yaml). Everything here is arithmetic on
 * that shape plus token counts: no profile, no device. The formulas and their sources are written
 * out in docs/metrics.md; the unit tests check them against hand-computed values for llama-3.2-1b
 * and deepseek-ocr-lm. Counts are doubles (exact below 2^53, far above any real count).
 *
 * Ownership: plain values, nothing allocated. Thread-safe.
 *
 *   struct lp_model_shape m;
 *   if (lp_model_shape_from_json(cfg_model, &m, err) < 0) return -1;
 *   double f = lp_flops_decode(&m, 1, 512, 128);       // FLOPs of 128 decode steps, batch 1
 *   double b = lp_bytes_decode(&m, 1, 512, 128);       // minimum DRAM bytes of the same
 */
#ifndef LP_ANALYZE_FLOPS_H
#define LP_ANALYZE_FLOPS_H

#include <jansson.h>
#include <stdint.h>

#include "core/err.h"

struct lp_model_shape {
	char name[64];
	char family[32];
	char dtype[16];                  /* "bf16", "fp16", "fp32", "fp8" */
	int64_t hidden_size;
	int64_t intermediate_size;       /* dense MLP */
	int64_t num_hidden_layers;
	int64_t num_attention_heads;
	int64_t num_key_value_heads;
	int64_t head_dim;                /* hidden_size / num_attention_heads when absent */
	int64_t vocab_size;
	int tie_word_embeddings;
	int64_t n_routed_experts;        /* 0: dense model */
	int64_t n_shared_experts;
	int64_t num_experts_per_tok;
	int64_t moe_intermediate_size;
	int64_t first_k_dense_replace;   /* the first k layers stay dense */
};

/* Parameter counts (elements, not bytes). */
struct lp_model_params {
	double attn_per_layer;           /* q, k, v, o projections (GQA) */
	double dense_mlp_per_layer;      /* SwiGLU: gate, up, down */
	double router_per_layer;         /* MoE gate: hidden x experts */
	double expert;                   /* one routed expert (SwiGLU of moe_intermediate_size) */
	double shared_per_layer;         /* all shared experts of one MoE layer */
	double norms;                    /* RMSNorm weights: 2 per layer + the final one */
	double embed;                    /* vocab x hidden */
	double lm_head;                  /* vocab x hidden (same storage when tied) */
	int64_t n_dense_layers, n_moe_layers;
	double total;                    /* stored parameters */
	double matmul_active;            /* matmul parameters one token goes through (top-k experts) */
};

/* Fills `out` from a model object ({hidden_size: ..., ...}). Missing or non-positive required
 * fields fail with LP_EUSAGE naming the key (`model.hidden_size`). */
int lp_model_shape_from_json(const json_t *model, struct lp_model_shape *out, struct lp_err *err);
/* Bytes per element of a dtype name; 0 when unknown. */
int lp_dtype_bytes(const char *dtype);
void lp_model_params(const struct lp_model_shape *m, struct lp_model_params *out);

/* Attention FLOPs per (query token, key position): QK^T and PV, 2 FLOPs per MAC each:
 * 4 * layers * heads * head_dim. */
double lp_flops_attention_per_ctx(const struct lp_model_shape *m);
/* Expected distinct routed experts per MoE layer when `tokens` tokens each pick top-k of E
 * uniformly: E * (1 - (1 - k/E)^tokens). */
double lp_moe_experts_touched(const struct lp_model_shape *m, double tokens);

/* One prefill of `batch` sequences of `prompt_len` tokens (lm_head for the last position only). */
double lp_flops_prefill(const struct lp_model_shape *m, int64_t batch, int64_t prompt_len);
/* `steps` decode steps after a prompt of `prompt_len`; step i attends to prompt_len + i + 1 keys. */
double lp_flops_decode(const struct lp_model_shape *m, int64_t batch, int64_t prompt_len, int64_t steps);
/* Minimum DRAM traffic: weights once per step (+ embedding rows gathered), KV cache read/written. */
double lp_bytes_weights_step(const struct lp_model_shape *m, double tokens);
double lp_bytes_prefill(const struct lp_model_shape *m, int64_t batch, int64_t prompt_len);
double lp_bytes_decode(const struct lp_model_shape *m, int64_t batch, int64_t prompt_len, int64_t steps);

#endif
