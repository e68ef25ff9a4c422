/* config.c: model shapes for the reference workload, the first step of its data flow.
 * Reads an llmprof model file (conf/model/llm/<name>.yaml) or a Hugging Face config.json
 * (decoder fields at the top level or under `language_config` / `text_config`) into
 * struct lp_llm_config, refusing what the engine cannot run with the field that says so. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config/yaml.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/str.h"
#include "llm.h"

const char *lp_llm_family_name(enum lp_llm_family f)
{
	switch (f) {
	case LP_LLM_LLAMA: return "llama";
	case LP_LLM_QWEN2: return "qwen2";
	case LP_LLM_DEEPSEEK_V2: return "deepseek_v2";
	}
	return "?";
}

const char *lp_llm_gemv_name(enum lp_llm_gemv g)
{
	switch (g) {
	case LP_LLM_GEMV_CUBLAS: return "cublas";
	case LP_LLM_GEMV_OWN: return "own";
	case LP_LLM_GEMV_FUSED: return "fused";
	}
	return "?";
}

/* --- typed field access with messages naming the key --- */

static int get_int(const json_t *o, const char *key, const char *src, int def, int *out,
	struct lp_err *err)
{
	const json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v)) {
		if (def == INT32_MIN)
			return lp_err_set(err, LP_EUSAGE, "%s: missing field '%s'", src, key);
		*out = def;
		return 0;
	}
	if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= INT32_MAX) {
		*out = (int)json_integer_value(v);
		return 0;
	}
	return lp_err_set(err, LP_EUSAGE, "%s: field '%s' must be a non-negative integer", src, key);
}

static int get_num(const json_t *o, const char *key, const char *src, double def, double *out,
	struct lp_err *err)
{
	const json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v)) {
		if (isnan(def))
			return lp_err_set(err, LP_EUSAGE, "%s: missing field '%s'", src, key);
		*out = def;
		return 0;
	}
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return 0;
	}
	return lp_err_set(err, LP_EUSAGE, "%s: field '%s' must be a number", src, key);
}

static int get_bool(const json_t *o, const char *key, const char *src, int def, int *out,
	struct lp_err *err)
{
	const json_t *v = json_object_get(o, key);
	if (!v || json_is_null(v)) {
		*out = def;
		return 0;
	}
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return 0;
	}
	return lp_err_set(err, LP_EUSAGE, "%s: field '%s' must be true or false", src, key);
}

static const char *get_str(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static void set_name(struct lp_llm_config *c, const char *name)
{
	snprintf(c->name, sizeof(c->name), "%s", name && *name ? name : "model");
}

static int parse_gate(const char *s, const char *src, enum lp_llm_gate *out, struct lp_err *err)
{
	if (!s || !strcmp(s, "softmax")) {
		*out = LP_LLM_GATE_SOFTMAX;
		return 0;
	}
	if (!strcmp(s, "sigmoid")) {
		*out = LP_LLM_GATE_SIGMOID;
		return 0;
	}
	lp_err_set(err, LP_EUSAGE, "%s: unsupported 'scoring_func' value '%s'", src, s);
	return lp_err_hint(err, "use softmax or sigmoid");
}

/* --- the llmprof model file --- */

static const char *const lp_model_keys[] = {
	"name", "family", "dtype", "vocab_size", "hidden_size", "intermediate_size",
	"num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim",
	"max_position_embeddings", "rope_theta", "rms_norm_eps", "tie_word_embeddings",
	"attention_bias", "n_routed_experts", "n_shared_experts", "num_experts_per_tok",
	"moe_intermediate_size", "first_k_dense_replace", "scoring_func", "norm_topk_prob",
	"routed_scaling_factor", "hf_id", "hf_config", NULL,
};

static int from_llmprof(const json_t *o, const char *src, struct lp_llm_config *c,
	struct lp_err *err)
{
	const char *key, *fam, *dtype;
	const json_t *v;
	json_object_foreach((json_t *)(uintptr_t)o, key, v) {
		int i, best = -1, best_d = 4;
		for (i = 0; lp_model_keys[i]; i++) {
			int d = lp_str_edit_distance(key, lp_model_keys[i], 4);
			if (d < best_d) {
				best_d = d;
				best = i;
			}
		}
		if (best_d == 0)
			continue;
		lp_err_set(err, LP_EUSAGE, "%s: unknown key '%s'", src, key);
		if (best >= 0)
			lp_err_hint(err, "did you mean '%s'?", lp_model_keys[best]);
		return -1;
	}
	fam = get_str(o, "family");
	if (!fam)
		return lp_err_set(err, LP_EUSAGE, "%s: field 'family' must be a string", src);
	if (!strcmp(fam, "llama"))
		c->family = LP_LLM_LLAMA;
	else if (!strcmp(fam, "qwen2"))
		c->family = LP_LLM_QWEN2;
	else if (!strcmp(fam, "deepseek_v2"))
		c->family = LP_LLM_DEEPSEEK_V2;
	else {
		lp_err_set(err, LP_EUSAGE, "%s: unsupported 'family' value '%s'", src, fam);
		return lp_err_hint(err, "use llama, qwen2 or deepseek_v2");
	}
	dtype = get_str(o, "dtype");
	if (dtype && strcmp(dtype, "bf16") && strcmp(dtype, "bfloat16"))
		return lp_err_set(err, LP_EUSAGE, "%s: unsupported 'dtype' value '%s' (only bf16)",
			src, dtype);
	set_name(c, get_str(o, "name"));
	if (get_int(o, "vocab_size", src, INT32_MIN, &c->vocab_size, err) < 0 ||
	    get_int(o, "hidden_size", src, INT32_MIN, &c->hidden_size, err) < 0 ||
	    get_int(o, "intermediate_size", src, INT32_MIN, &c->intermediate_size, err) < 0 ||
	    get_int(o, "num_hidden_layers", src, INT32_MIN, &c->num_hidden_layers, err) < 0 ||
	    get_int(o, "num_attention_heads", src, INT32_MIN, &c->num_attention_heads, err) < 0 ||
	    get_int(o, "num_key_value_heads", src, c->num_attention_heads, &c->num_key_value_heads, err) < 0 ||
	    get_int(o, "head_dim", src, c->num_attention_heads ? c->hidden_size / c->num_attention_heads : 0,
		    &c->head_dim, err) < 0 ||
	    get_int(o, "max_position_embeddings", src, INT32_MIN, &c->max_position_embeddings, err) < 0 ||
	    get_num(o, "rope_theta", src, 10000.0, &c->rope_theta, err) < 0 ||
	    get_num(o, "rms_norm_eps", src, 1e-6, &c->rms_norm_eps, err) < 0 ||
	    get_bool(o, "tie_word_embeddings", src, 0, &c->tie_word_embeddings, err) < 0 ||
	    get_bool(o, "attention_bias", src, c->family == LP_LLM_QWEN2, &c->attention_bias, err) < 0 ||
	    get_int(o, "n_routed_experts", src, 0, &c->n_routed_experts, err) < 0 ||
	    get_int(o, "n_shared_experts", src, 0, &c->n_shared_experts, err) < 0 ||
	    get_int(o, "num_experts_per_tok", src, 0, &c->num_experts_per_tok, err) < 0 ||
	    get_int(o, "moe_intermediate_size", src, 0, &c->moe_intermediate_size, err) < 0 ||
	    get_int(o, "first_k_dense_replace", src, 0, &c->first_k_dense_replace, err) < 0 ||
	    get_bool(o, "norm_topk_prob", src, 0, &c->norm_topk_prob, err) < 0 ||
	    get_num(o, "routed_scaling_factor", src, 1.0, &c->routed_scaling_factor, err) < 0 ||
	    parse_gate(get_str(o, "scoring_func"), src, &c->scoring_func, err) < 0)
		return -1;
	return 0;
}

/* --- Hugging Face config.json --- */

struct lp_hf_arch {
	const char *model_type;
	const char *architecture;
	enum lp_llm_family family;
};

static const struct lp_hf_arch lp_hf_archs[] = {
	{ "llama", "LlamaForCausalLM", LP_LLM_LLAMA },
	{ "mistral", "MistralForCausalLM", LP_LLM_LLAMA },
	{ "qwen2", "Qwen2ForCausalLM", LP_LLM_QWEN2 },
	{ "deepseek_v2", "DeepseekV2ForCausalLM", LP_LLM_DEEPSEEK_V2 },
	{ "deepseek", "DeepseekForCausalLM", LP_LLM_DEEPSEEK_V2 },
	{ NULL, NULL, LP_LLM_LLAMA },
};

/* Multimodal wrappers whose decoder sits under language_config/text_config without a type. */
static const struct lp_hf_arch lp_hf_wrappers[] = {
	{ "deepseek_vl_v2", NULL, LP_LLM_DEEPSEEK_V2 },
	{ "qwen2_vl", NULL, LP_LLM_QWEN2 },
	{ "qwen2_5_vl", NULL, LP_LLM_QWEN2 },
	{ "llava", NULL, LP_LLM_LLAMA },
	{ NULL, NULL, LP_LLM_LLAMA },
};

/* Family from model_type (first) or architectures[0]; *field names what decided (for errors). */
static int hf_family(const json_t *dec, const json_t *root, const char *src,
	enum lp_llm_family *fam, struct lp_err *err)
{
	const json_t *objs[2] = { dec, root };
	int k, i;
	for (k = 0; k < 2; k++) {
		const char *mt = get_str(objs[k], "model_type");
		const json_t *archs = json_object_get(objs[k], "architectures");
		const char *arch = json_is_array(archs) ? json_string_value(json_array_get(archs, 0)) : NULL;
		const char *where = k == 0 && dec != root ? "the decoder config" : "the top level";
		if (mt) {
			for (i = 0; lp_hf_archs[i].model_type; i++)
				if (!strcmp(mt, lp_hf_archs[i].model_type)) {
					*fam = lp_hf_archs[i].family;
					return 0;
				}
			if (k == 1 && dec != root)
				for (i = 0; lp_hf_wrappers[i].model_type; i++)
					if (!strcmp(mt, lp_hf_wrappers[i].model_type)) {
						*fam = lp_hf_wrappers[i].family;
						return 0;
					}
			lp_err_set(err, LP_EUSAGE, "%s: unsupported architecture '%s' (field 'model_type' of %s)",
				src, mt, where);
			return lp_err_hint(err, "supported: llama, mistral, qwen2, deepseek_v2 (without MLA), deepseek");
		}
		if (arch) {
			for (i = 0; lp_hf_archs[i].model_type; i++)
				if (!strcmp(arch, lp_hf_archs[i].architecture)) {
					*fam = lp_hf_archs[i].family;
					return 0;
				}
			lp_err_set(err, LP_EUSAGE, "%s: unsupported architecture '%s' (field 'architectures' of %s)",
				src, arch, where);
			return lp_err_hint(err, "supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, DeepseekV2ForCausalLM, DeepseekForCausalLM");
		}
		if (dec == root)
			break;
	}
	return lp_err_set(err, LP_EUSAGE, "%s: no 'model_type' or 'architectures' field: cannot tell the architecture", src);
}

static int hf_refuse(const json_t *o, const char *src, struct lp_err *err)
{
	const json_t *mla = json_object_get(o, "use_mla");
	const json_t *kv = json_object_get(o, "kv_lora_rank");
	const json_t *q = json_object_get(o, "q_lora_rank");
	const char *act = get_str(o, "hidden_act"), *topk = get_str(o, "topk_method");
	int freq = 1, mlp_bias = 0;
	if (json_is_true(mla))
		return lp_err_set(err, LP_EUSAGE,
			"%s: multi-head latent attention is not supported (field 'use_mla' is true)", src);
	if (!json_is_false(mla) && kv && !json_is_null(kv))
		return lp_err_set(err, LP_EUSAGE,
			"%s: multi-head latent attention is not supported (field 'kv_lora_rank' is set)", src);
	if (!json_is_false(mla) && q && !json_is_null(q))
		return lp_err_set(err, LP_EUSAGE,
			"%s: multi-head latent attention is not supported (field 'q_lora_rank' is set)", src);
	if (act && strcmp(act, "silu"))
		return lp_err_set(err, LP_EUSAGE, "%s: unsupported 'hidden_act' value '%s' (only silu)", src, act);
	if (topk && strcmp(topk, "greedy"))
		return lp_err_set(err, LP_EUSAGE, "%s: unsupported 'topk_method' value '%s' (only greedy)", src, topk);
	if (get_int(o, "moe_layer_freq", src, 1, &freq, err) < 0)
		return -1;
	if (freq != 1)
		return lp_err_set(err, LP_EUSAGE, "%s: unsupported 'moe_layer_freq' value %d (only 1)", src, freq);
	if (get_bool(o, "mlp_bias", src, 0, &mlp_bias, err) < 0)
		return -1;
	if (mlp_bias)
		return lp_err_set(err, LP_EUSAGE, "%s: unsupported 'mlp_bias' true", src);
	return 0;
}

static void hf_name(const json_t *root, const char *path, struct lp_llm_config *c)
{
	const char *n = get_str(root, "_name_or_path");
	struct lp_buf b = LP_BUF_INIT;
	const char *slash;
	if (n && *n) {
		slash = strrchr(n, '/');
		set_name(c, slash ? slash + 1 : n);
		return;
	}
	/* the folder that holds config.json, else the file name */
	lp_buf_adds(&b, path ? path : "hf-config");
	slash = strrchr(b.data, '/');
	if (slash && slash != b.data) {
		lp_buf_setlen(&b, (size_t)(slash - b.data));
		slash = strrchr(b.data, '/');
		set_name(c, slash ? slash + 1 : b.data);
	} else {
		set_name(c, "hf-config");
	}
	lp_buf_release(&b);
}

static int from_hf(const json_t *root, const char *src, struct lp_llm_config *c, struct lp_err *err)
{
	const json_t *dec = root, *rp;
	int shared = 0;
	if (json_is_object(json_object_get(root, "language_config")))
		dec = json_object_get(root, "language_config");
	else if (json_is_object(json_object_get(root, "text_config")))
		dec = json_object_get(root, "text_config");
	if (hf_family(dec, root, src, &c->family, err) < 0 || hf_refuse(dec, src, err) < 0)
		return -1;
	if (get_int(dec, "vocab_size", src, INT32_MIN, &c->vocab_size, err) < 0 ||
	    get_int(dec, "hidden_size", src, INT32_MIN, &c->hidden_size, err) < 0 ||
	    get_int(dec, "intermediate_size", src, INT32_MIN, &c->intermediate_size, err) < 0 ||
	    get_int(dec, "num_hidden_layers", src, INT32_MIN, &c->num_hidden_layers, err) < 0 ||
	    get_int(dec, "num_attention_heads", src, INT32_MIN, &c->num_attention_heads, err) < 0 ||
	    get_int(dec, "num_key_value_heads", src, c->num_attention_heads, &c->num_key_value_heads, err) < 0 ||
	    get_int(dec, "head_dim", src, c->num_attention_heads ? c->hidden_size / c->num_attention_heads : 0,
		    &c->head_dim, err) < 0 ||
	    get_int(dec, "max_position_embeddings", src, 2048, &c->max_position_embeddings, err) < 0 ||
	    get_num(dec, "rms_norm_eps", src, 1e-6, &c->rms_norm_eps, err) < 0 ||
	    get_bool(dec, "attention_bias", src, c->family == LP_LLM_QWEN2, &c->attention_bias, err) < 0 ||
	    get_int(dec, "n_routed_experts", src, 0, &c->n_routed_experts, err) < 0 ||
	    get_int(dec, "n_shared_experts", src, 0, &shared, err) < 0 ||
	    get_int(dec, "num_experts_per_tok", src, 0, &c->num_experts_per_tok, err) < 0 ||
	    get_int(dec, "moe_intermediate_size", src, 0, &c->moe_intermediate_size, err) < 0 ||
	    get_int(dec, "first_k_dense_replace", src, 0, &c->first_k_dense_replace, err) < 0 ||
	    get_bool(dec, "norm_topk_prob", src, 0, &c->norm_topk_prob, err) < 0 ||
	    get_num(dec, "routed_scaling_factor", src, 1.0, &c->routed_scaling_factor, err) < 0 ||
	    parse_gate(get_str(dec, "scoring_func"), src, &c->scoring_func, err) < 0)
		return -1;
	c->n_shared_experts = shared;
	/* tie_word_embeddings sometimes sits only at the top level of multimodal configs */
	if (get_bool(json_object_get(dec, "tie_word_embeddings") ? dec : root, "tie_word_embeddings",
		    src, 0, &c->tie_word_embeddings, err) < 0)
		return -1;
	/* transformers 5 moved rope_theta into rope_parameters */
	rp = json_object_get(dec, "rope_parameters");
	if (!json_object_get(dec, "rope_theta") && json_is_object(rp)) {
		if (get_num(rp, "rope_theta", src, 10000.0, &c->rope_theta, err) < 0)
			return -1;
	} else if (get_num(dec, "rope_theta", src, 10000.0, &c->rope_theta, err) < 0) {
		return -1;
	}
	if (c->family != LP_LLM_DEEPSEEK_V2 && c->n_routed_experts)
		return lp_err_set(err, LP_EUSAGE, "%s: field 'n_routed_experts' is set on a dense architecture", src);
	if (c->family == LP_LLM_DEEPSEEK_V2 && !c->n_routed_experts)
		c->first_k_dense_replace = 0;
	return 0;
}

int lp_llm_config_from_json(const json_t *doc, const char *source, struct lp_llm_config *cfg,
	struct lp_err *err)
{
	const char *src = source ? source : "model";
	memset(cfg, 0, sizeof(*cfg));
	cfg->routed_scaling_factor = 1.0;
	if (!json_is_object(doc))
		return lp_err_set(err, LP_EUSAGE, "%s: a model must be a mapping of fields", src);
	if (json_object_get(doc, "family")) {
		if (from_llmprof(doc, src, cfg, err) < 0)
			return -1;
	} else {
		if (from_hf(doc, src, cfg, err) < 0)
			return -1;
		hf_name(doc, source, cfg);
	}
	return lp_llm_config_validate(cfg, src, err);
}

int lp_llm_config_validate(const struct lp_llm_config *c, const char *src, struct lp_err *err)
{
	const struct { const char *key; int v; } pos[] = {
		{ "vocab_size", c->vocab_size }, { "hidden_size", c->hidden_size },
		{ "intermediate_size", c->intermediate_size }, { "num_hidden_layers", c->num_hidden_layers },
		{ "num_attention_heads", c->num_attention_heads },
		{ "num_key_value_heads", c->num_key_value_heads }, { "head_dim", c->head_dim },
		{ "max_position_embeddings", c->max_position_embeddings },
	};
	size_t i;
	for (i = 0; i < sizeof(pos) / sizeof(pos[0]); i++)
		if (pos[i].v <= 0)
			return lp_err_set(err, LP_EUSAGE, "%s: field '%s' must be positive", src, pos[i].key);
	if (c->num_attention_heads % c->num_key_value_heads)
		return lp_err_set(err, LP_EUSAGE,
			"%s: 'num_attention_heads' (%d) must be a multiple of 'num_key_value_heads' (%d)",
			src, c->num_attention_heads, c->num_key_value_heads);
	if (c->head_dim % 32 || c->head_dim > LP_LLM_MAX_HEAD_DIM)
		return lp_err_set(err, LP_EUSAGE, "%s: 'head_dim' (%d) must be a multiple of 32 up to %d",
			src, c->head_dim, LP_LLM_MAX_HEAD_DIM);
	if (c->hidden_size % 8 || c->intermediate_size % 8)
		return lp_err_set(err, LP_EUSAGE, "%s: 'hidden_size' and 'intermediate_size' must be multiples of 8", src);
	if (!(c->rope_theta > 0) || !(c->rms_norm_eps > 0))
		return lp_err_set(err, LP_EUSAGE, "%s: 'rope_theta' and 'rms_norm_eps' must be positive", src);
	if (c->n_routed_experts) {
		if (c->family != LP_LLM_DEEPSEEK_V2)
			return lp_err_set(err, LP_EUSAGE, "%s: 'n_routed_experts' needs family deepseek_v2", src);
		if (c->n_routed_experts > LP_LLM_MAX_EXPERTS)
			return lp_err_set(err, LP_EUSAGE, "%s: 'n_routed_experts' (%d) is over %d",
				src, c->n_routed_experts, LP_LLM_MAX_EXPERTS);
		if (c->num_experts_per_tok <= 0 || c->num_experts_per_tok > c->n_routed_experts ||
		    c->num_experts_per_tok > LP_LLM_MAX_TOPK)
			return lp_err_set(err, LP_EUSAGE,
				"%s: 'num_experts_per_tok' (%d) must be in 1..min(n_routed_experts, %d)",
				src, c->num_experts_per_tok, LP_LLM_MAX_TOPK);
		if (c->moe_intermediate_size <= 0 || c->moe_intermediate_size % 8)
			return lp_err_set(err, LP_EUSAGE, "%s: 'moe_intermediate_size' must be a positive multiple of 8", src);
		if (c->first_k_dense_replace > c->num_hidden_layers)
			return lp_err_set(err, LP_EUSAGE, "%s: 'first_k_dense_replace' is over 'num_hidden_layers'", src);
	}
	return 0;
}

static int looks_like_path(const char *s)
{
	return strchr(s, '/') || lp_str_ends_with(s, ".yaml") || lp_str_ends_with(s, ".yml") ||
	       lp_str_ends_with(s, ".json");
}

int lp_llm_config_load(const char *name_or_path, const char *conf_dir, struct lp_llm_config *cfg,
	struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT;
	json_t *doc = NULL;
	int rc;
	if (!name_or_path || !*name_or_path)
		return lp_err_set(err, LP_EUSAGE, "empty model name");
	if (looks_like_path(name_or_path)) {
		lp_buf_adds(&path, name_or_path);
		if (!lp_fs_is_file(path.data)) {
			lp_buf_release(&path);
			return lp_err_set(err, LP_EUSAGE, "model file '%s' not found", name_or_path);
		}
	} else {
		lp_buf_addf(&path, "%s/model/llm/%s.yaml", conf_dir ? conf_dir : ".", name_or_path);
		if (!lp_fs_is_file(path.data)) {
			lp_err_set(err, LP_EUSAGE, "unknown model '%s' (no %s)", name_or_path, path.data);
			lp_buf_release(&path);
			return lp_err_hint(err, "pass a name from conf/model/llm/ or a path to a model YAML or config.json");
		}
	}
	rc = lp_yaml_load_file(path.data, &doc, err);
	if (rc == 0) {
		rc = lp_llm_config_from_json(doc, path.data, cfg, err);
		json_decref(doc);
	}
	lp_buf_release(&path);
	return rc;
}

/* --- sizes --- */

static uint64_t layer_attn_params(const struct lp_llm_config *c)
{
	uint64_t h = (uint64_t)c->hidden_size, d = (uint64_t)c->head_dim;
	uint64_t q = (uint64_t)c->num_attention_heads * d, kv = (uint64_t)c->num_key_value_heads * d;
	return h * (q + 2 * kv) + q * h + (c->attention_bias ? q + 2 * kv : 0) + 2 * h;
}

static uint64_t mlp_params(uint64_t h, uint64_t inter)
{
	return 3 * h * inter;
}

uint64_t lp_llm_param_count(const struct lp_llm_config *c)
{
	uint64_t h = (uint64_t)c->hidden_size, v = (uint64_t)c->vocab_size, n = 0;
	int l;
	for (l = 0; l < c->num_hidden_layers; l++) {
		n += layer_attn_params(c);
		if (lp_llm_layer_is_moe(c, l))
			n += (uint64_t)c->n_routed_experts * (h + mlp_params(h, (uint64_t)c->moe_intermediate_size)) +
			     mlp_params(h, (uint64_t)c->moe_intermediate_size * (uint64_t)c->n_shared_experts);
		else
			n += mlp_params(h, (uint64_t)c->intermediate_size);
	}
	return n + v * h * (c->tie_word_embeddings ? 1 : 2) + h;
}

uint64_t lp_llm_decode_params_read(const struct lp_llm_config *c, int experts_touched)
{
	uint64_t h = (uint64_t)c->hidden_size, n = 0;
	int l;
	for (l = 0; l < c->num_hidden_layers; l++) {
		n += layer_attn_params(c);
		if (lp_llm_layer_is_moe(c, l))
			n += (uint64_t)c->n_routed_experts * h +
			     (uint64_t)experts_touched * mlp_params(h, (uint64_t)c->moe_intermediate_size) +
			     mlp_params(h, (uint64_t)c->moe_intermediate_size * (uint64_t)c->n_shared_experts);
		else
			n += mlp_params(h, (uint64_t)c->intermediate_size);
	}
	return n + (uint64_t)c->vocab_size * h + h;
}

/* Matmul FLOPs are 2 x params touched per token; attention adds QK^T and PV, 2 x 2 x d_h x heads
 * per (query, key) pair with the causal mask (llm.c's and the FIELD-NOTES formula). */
double lp_llm_forward_flops(const struct lp_llm_config *c, int batch, int pos0, int tokens)
{
	double h = c->hidden_size, d = c->head_dim, per_tok = 0, attn = 0;
	double q = (double)c->num_attention_heads * d, kv = (double)c->num_key_value_heads * d;
	double pairs = 0;
	int l, t;
	for (l = 0; l < c->num_hidden_layers; l++) {
		per_tok += h * (q + 2 * kv) + q * h;
		if (lp_llm_layer_is_moe(c, l))
			per_tok += c->n_routed_experts * h +
				   (double)(c->num_experts_per_tok + c->n_shared_experts) * 3.0 * h * c->moe_intermediate_size;
		else
			per_tok += 3.0 * h * c->intermediate_size;
	}
	for (t = 0; t < tokens; t++)
		pairs += pos0 + t + 1;
	attn = 4.0 * c->num_hidden_layers * q * pairs;
	return (double)batch * (2.0 * per_tok * tokens + attn + 2.0 * h * c->vocab_size);
}
