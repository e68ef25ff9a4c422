/* flops.c: model shape -> parameter counts, FLOPs and minimum bytes (see flops.h and
 * docs/metrics.md). Sits at the start of the analysis: the stage timings from the profile are
 * divided into these numbers to give MFU and MBU (analyze/analysis.c). */
#include "analyze/flops.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int get_int(const json_t *model, const char *key, int required, int64_t *out, struct lp_err *err)
{
	const json_t *v = json_object_get(model, key);
	*out = 0;
	if (!v || json_is_null(v)) {
		if (required)
			return lp_err_set(err, LP_EUSAGE, "model shape lacks 'model.%s'", key);
		return 0;
	}
	if (json_is_integer(v)) {
		*out = (int64_t)json_integer_value(v);
	} else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
		   fabs(json_real_value(v)) < 9e15) {
		*out = (int64_t)json_real_value(v);
	} else {
		return lp_err_set(err, LP_EUSAGE, "'model.%s' is not an integer", key);
	}
	if (*out < 0 || (required && *out == 0))
		return lp_err_set(err, LP_EUSAGE, "'model.%s' must be positive, not %lld", key, (long long)*out);
	return 0;
}

static void get_str(const json_t *model, const char *key, char *out, size_t cap)
{
	const json_t *v = json_object_get(model, key);
	out[0] = '\0';
	if (json_is_string(v))
		snprintf(out, cap, "%s", json_string_value(v));
}

int lp_model_shape_from_json(const json_t *model, struct lp_model_shape *out, struct lp_err *err)
{
	memset(out, 0, sizeof(*out));
	if (!json_is_object(model))
		return lp_err_set(err, LP_EUSAGE, "no model shape (the 'model' config is missing)");
	get_str(model, "name", out->name, sizeof(out->name));
	get_str(model, "family", out->family, sizeof(out->family));
	get_str(model, "dtype", out->dtype, sizeof(out->dtype));
	if (get_int(model, "hidden_size", 1, &out->hidden_size, err) < 0 ||
	    get_int(model, "num_hidden_layers", 1, &out->num_hidden_layers, err) < 0 ||
	    get_int(model, "num_attention_heads", 1, &out->num_attention_heads, err) < 0 ||
	    get_int(model, "vocab_size", 1, &out->vocab_size, err) < 0 ||
	    get_int(model, "intermediate_size", 0, &out->intermediate_size, err) < 0 ||
	    get_int(model, "num_key_value_heads", 0, &out->num_key_value_heads, err) < 0 ||
	    get_int(model, "head_dim", 0, &out->head_dim, err) < 0 ||
	    get_int(model, "n_routed_experts", 0, &out->n_routed_experts, err) < 0 ||
	    get_int(model, "n_shared_experts", 0, &out->n_shared_experts, err) < 0 ||
	    get_int(model, "num_experts_per_tok", 0, &out->num_experts_per_tok, err) < 0 ||
	    get_int(model, "moe_intermediate_size", 0, &out->moe_intermediate_size, err) < 0 ||
	    get_int(model, "first_k_dense_replace", 0, &out->first_k_dense_replace, err) < 0)
		return -1;
	out->tie_word_embeddings = json_is_true(json_object_get(model, "tie_word_embeddings"));
	if (!out->num_key_value_heads)
		out->num_key_value_heads = out->num_attention_heads;   /* MHA when absent (HF default) */
	if (!out->head_dim)
		out->head_dim = out->hidden_size / out->num_attention_heads;
	if (out->n_routed_experts > 0) {
		if (out->num_experts_per_tok <= 0 || out->num_experts_per_tok > out->n_routed_experts)
			return lp_err_set(err, LP_EUSAGE, "'model.num_experts_per_tok' must be in 1..%lld for a MoE model",
				(long long)out->n_routed_experts);
		if (out->moe_intermediate_size <= 0)
			return lp_err_set(err, LP_EUSAGE, "model shape lacks 'model.moe_intermediate_size'");
	}
	if (out->first_k_dense_replace > out->num_hidden_layers)
		out->first_k_dense_replace = out->num_hidden_layers;
	if ((out->n_routed_experts == 0 || out->first_k_dense_replace > 0) && out->intermediate_size <= 0)
		return lp_err_set(err, LP_EUSAGE, "model shape lacks 'model.intermediate_size'");
	return 0;
}

int lp_dtype_bytes(const char *dtype)
{
	static const struct { const char *name; int bytes; } t[] = {
		{ "bf16", 2 }, { "bfloat16", 2 }, { "fp16", 2 }, { "float16", 2 }, { "half", 2 },
		{ "fp32", 4 }, { "float32", 4 }, { "float", 4 }, { "fp8", 1 }, { "float8", 1 },
	};
	size_t i;
	if (!dtype)
		return 0;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(dtype, t[i].name))
			return t[i].bytes;
	return 0;
}

void lp_model_params(const struct lp_model_shape *m, struct lp_model_params *out)
{
	double h = (double)m->hidden_size, hd = (double)m->head_dim;
	double q = (double)m->num_attention_heads * hd, kv = (double)m->num_key_value_heads * hd;
	double L = (double)m->num_hidden_layers, k = (double)m->num_experts_per_tok;
	memset(out, 0, sizeof(*out));
	/* q: h x (heads*hd); k, v: h x (kv_heads*hd) each; o: (heads*hd) x h */
	out->attn_per_layer = h * q + 2.0 * h * kv + q * h;
	out->dense_mlp_per_layer = 3.0 * h * (double)m->intermediate_size;
	if (m->n_routed_experts > 0) {
		out->n_dense_layers = m->first_k_dense_replace;
		out->n_moe_layers = m->num_hidden_layers - m->first_k_dense_replace;
		out->router_per_layer = h * (double)m->n_routed_experts;
		out->expert = 3.0 * h * (double)m->moe_intermediate_size;
		out->shared_per_layer = (double)m->n_shared_experts * out->expert;
	} else {
		out->n_dense_layers = m->num_hidden_layers;
	}
	out->norms = 2.0 * h * L + h;
	out->embed = (double)m->vocab_size * h;
	out->lm_head = out->embed;
	out->total = L * out->attn_per_layer + (double)out->n_dense_layers * out->dense_mlp_per_layer +
		     (double)out->n_moe_layers * (out->router_per_layer + (double)m->n_routed_experts * out->expert +
						  out->shared_per_layer) +
		     out->norms + out->embed + (m->tie_word_embeddings ? 0.0 : out->lm_head);
	out->matmul_active = L * out->attn_per_layer + (double)out->n_dense_layers * out->dense_mlp_per_layer +
			     (double)out->n_moe_layers * (out->router_per_layer + k * out->expert + out->shared_per_layer) +
			     out->lm_head;
}

double lp_flops_attention_per_ctx(const struct lp_model_shape *m)
{
	return 4.0 * (double)m->num_hidden_layers * (double)m->num_attention_heads * (double)m->head_dim;
}

double lp_moe_experts_touched(const struct lp_model_shape *m, double tokens)
{
	double E = (double)m->n_routed_experts, k = (double)m->num_experts_per_tok;
	if (E <= 0 || tokens <= 0)
		return 0;
	return E * (1.0 - pow(1.0 - k / E, tokens));
}

double lp_flops_prefill(const struct lp_model_shape *m, int64_t batch, int64_t prompt_len)
{
	struct lp_model_params p;
	double S = (double)prompt_len, B = (double)batch;
	lp_model_params(m, &p);
	/* every prompt token goes through every matmul except lm_head, which only the last position
	 * needs for the first generated token; causal attention: token i sees i keys, sum S(S+1)/2 */
	return B * (S * 2.0 * (p.matmul_active - p.lm_head) + 2.0 * p.lm_head +
		    lp_flops_attention_per_ctx(m) * S * (S + 1.0) / 2.0);
}

double lp_flops_decode(const struct lp_model_shape *m, int64_t batch, int64_t prompt_len, int64_t steps)
{
	struct lp_model_params p;
	double n = (double)steps, P = (double)prompt_len, B = (double)batch;
	lp_model_params(m, &p);
	/* step i (0-based) attends to P + i + 1 keys: sum = n*P + n(n+1)/2 */
	return B * (n * 2.0 * p.matmul_active + lp_flops_attention_per_ctx(m) * (n * P + n * (n + 1.0) / 2.0));
}

double lp_bytes_weights_step(const struct lp_model_shape *m, double tokens)
{
	struct lp_model_params p;
	double b = (double)lp_dtype_bytes(m->dtype), L = (double)m->num_hidden_layers;
	lp_model_params(m, &p);
	return b * (L * p.attn_per_layer + (double)p.n_dense_layers * p.dense_mlp_per_layer +
		    (double)p.n_moe_layers * (p.router_per_layer + p.shared_per_layer +
					      lp_moe_experts_touched(m, tokens) * p.expert) +
		    p.norms + p.lm_head + tokens * (double)m->hidden_size);
}

/* KV cache bytes per token position over all layers: K and V, kv_heads x head_dim each. */
static double kv_bytes_per_pos(const struct lp_model_shape *m)
{
	return 2.0 * (double)m->num_hidden_layers * (double)m->num_key_value_heads * (double)m->head_dim *
	       (double)lp_dtype_bytes(m->dtype);
}

double lp_bytes_prefill(const struct lp_model_shape *m, int64_t batch, int64_t prompt_len)
{
	double T = (double)batch * (double)prompt_len;
	/* weights once; the prompt's K/V written once (attention reads them on chip) */
	return lp_bytes_weights_step(m, T) + T * kv_bytes_per_pos(m);
}

double lp_bytes_decode(const struct lp_model_shape *m, int64_t batch, int64_t prompt_len, int64_t steps)
{
	double n = (double)steps, P = (double)prompt_len, B = (double)batch;
	/* step i reads the P + i cached positions and writes one: sum = n*P + n(n-1)/2 + n */
	return n * lp_bytes_weights_step(m, B) + B * kv_bytes_per_pos(m) * (n * P + n * (n - 1.0) / 2.0 + n);
}
