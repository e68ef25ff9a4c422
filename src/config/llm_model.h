/* llm_model.h: LLM model shapes for llmprof and its reference workload: struct lp_llm_config
 * from an llmprof model file (conf/model/llm/<name>.yaml) or a Hugging Face config.json (decoder
 * fields at the top level, or under `language_config` / `text_config`), with parameter and FLOP
 * counts. Shared by `llmprof run` (model.hf_config -> the model.* keys the analysis reads) and
 * `llmprof-llm` (workload/). Plain data; thread-safe (no shared state).
 *
 *   struct lp_llm_config cfg;
 *   if (lp_llm_config_load("llama-3.2-1b", conf_dir, &cfg, err) < 0) return -1;
 */
#ifndef LP_CONFIG_LLM_MODEL_H
#define LP_CONFIG_LLM_MODEL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

#ifdef __cplusplus
extern "C" {
#endif

enum lp_llm_family {
	LP_LLM_LLAMA = 0,     /* Llama-style dense decoder with GQA (also Mistral without sliding window) */
	LP_LLM_QWEN2 = 1,     /* Llama-style with q/k/v biases */
	LP_LLM_DEEPSEEK_V2 = 2, /* DeepSeek-V2-style MoE without MLA: dense first layers, then MoE */
};

enum lp_llm_gate { LP_LLM_GATE_SOFTMAX = 0, LP_LLM_GATE_SIGMOID = 1 };

#define LP_LLM_NAME_MAX 64
#define LP_LLM_MAX_EXPERTS 256
#define LP_LLM_MAX_TOPK 16
#define LP_LLM_MAX_HEAD_DIM 256

struct lp_llm_config {
	char name[LP_LLM_NAME_MAX];
	enum lp_llm_family family;
	int vocab_size;
	int hidden_size;
	int intermediate_size;        /* dense MLP width */
	int num_hidden_layers;
	int num_attention_heads;
	int num_key_value_heads;
	int head_dim;
	int max_position_embeddings;
	double rope_theta;
	double rms_norm_eps;
	int tie_word_embeddings;
	int attention_bias;           /* q/k/v projections carry a bias (Qwen2) */
	/* MoE (all 0 for dense models) */
	int n_routed_experts;
	int n_shared_experts;
	int num_experts_per_tok;
	int moe_intermediate_size;
	int first_k_dense_replace;    /* layers [0, k) are dense, [k, L) MoE */
	enum lp_llm_gate scoring_func;
	int norm_topk_prob;
	double routed_scaling_factor;
};

const char *lp_llm_family_name(enum lp_llm_family f);

/* Model from `name_or_path`: a file path (contains '/' or ends in .yaml/.yml/.json) is read as
 * an llmprof model file (it has `family`) or a Hugging Face config.json (decoder fields at the top
 * level, or under `language_config` / `text_config`); otherwise <conf_dir>/model/llm/<name>.yaml.
 * Unsupported architectures are usage errors naming the field. */
int lp_llm_config_load(const char *name_or_path, const char *conf_dir, struct lp_llm_config *cfg,
	struct lp_err *err);
/* Same from an already loaded document; `source` names it in messages. */
int lp_llm_config_from_json(const json_t *doc, const char *source, struct lp_llm_config *cfg,
	struct lp_err *err);
/* Checks shapes (positive, divisible, within limits); called by the loaders. */
int lp_llm_config_validate(const struct lp_llm_config *cfg, const char *source, struct lp_err *err);

static inline int lp_llm_layer_is_moe(const struct lp_llm_config *c, int layer)
{
	return c->n_routed_experts > 0 && layer >= c->first_k_dense_replace;
}

/* Sizes, in elements (parameters) and for decode accounting. */
uint64_t lp_llm_param_count(const struct lp_llm_config *c);
/* Parameters read by one decode step of one token, with `experts_touched` routed experts per
 * MoE layer (top-k at batch 1); lm_head included, embedding rows not. */
uint64_t lp_llm_decode_params_read(const struct lp_llm_config *c, int experts_touched);
/* FLOPs of a forward pass over `tokens` new tokens per sequence, `batch` sequences, starting
 * at context position `pos0` (matmuls incl. lm_head on the last token only, plus attention). */
double lp_llm_forward_flops(const struct lp_llm_config *c, int batch, int pos0, int tokens);

/* The model.* keys of llmprof's configuration (the fields of a conf/model/llm file) for cfg. */
json_t *lp_llm_config_to_json(const struct lp_llm_config *cfg);

#ifdef __cplusplus
}
#endif

#endif
