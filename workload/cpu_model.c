/* cpu_model.c: the CPU back end of the engine (engine.h): the decoder in fp32 C over the
 * operators of cpu_ops.c, with the same NVTX ranges as the CUDA path, so that CPU runs give the
 * profiler stage timings too (NVTX needs no GPU). Runs anywhere; OpenMP when the build has it.
 * The weights are bf16-exact floats from the seed, identical to the GPU's. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu_ops.h"
#include "engine.h"
#include "llmprof/nvtx.h"

struct lp_cpu_layer {
	float *attn_norm, *qkv, *qkv_bias, *o, *mlp_norm;
	float *gate_up, *down;                 /* dense layers */
	float *router, *exp_gate_up, *exp_down; /* MoE layers: [E][2I][H], [E][H][I] */
	float *sh_gate_up, *sh_down;           /* shared experts as one MLP (n_shared x moe width) */
};

struct lp_cpu_engine {
	struct lp_llm_config c;
	struct lp_llm_run_opts o;
	int qkv_dim, q_dim, max_pos, sh_inter, ops;
	float *embed, *lm_head, *final_norm, *rope;
	struct lp_cpu_layer *layers;
	float *k_cache, *v_cache;             /* [L][B][KV][max_pos][D] */
	/* activations for up to batch * prompt_len tokens */
	float *x, *xn, *qkv, *att, *tmp, *gu, *act, *last, *logits;
	float *r_logits, *r_w, *e_gu, *e_act, *e_out, *moe_out;
	int32_t *r_ids, *in_tokens, *next, *prompt;
};

static void op_push(const struct lp_cpu_engine *e, const char *name)
{
	if (e->ops)
		lp_nvtx_push(name);
}

static void op_push_payload(const struct lp_cpu_engine *e, const char *name, uint64_t payload)
{
	if (e->ops)
		lp_nvtx_push_payload(name, payload);
}

static void op_pop(const struct lp_cpu_engine *e)
{
	if (e->ops)
		lp_nvtx_pop();
}

static float *tensor(struct lp_cpu_engine *e, size_t n, enum lp_llm_tensor_kind kind, int layer,
	int expert, int *oom)
{
	float *p = malloc(n * sizeof(float));
	if (!p) {
		*oom = 1;
		return NULL;
	}
	lp_llm_cpu_fill(p, n, e->o.seed, lp_llm_tensor_gen(&e->c, kind, layer, expert));
	return p;
}

static float *zeros(size_t n, int *oom)
{
	float *p = calloc(n ? n : 1, sizeof(float));
	if (!p)
		*oom = 1;
	return p;
}

static void cpu_free(void *impl)
{
	struct lp_cpu_engine *e = impl;
	int l;
	if (!e)
		return;
	if (e->layers)
		for (l = 0; l < e->c.num_hidden_layers; l++) {
			struct lp_cpu_layer *y = &e->layers[l];
			free(y->attn_norm), free(y->qkv), free(y->qkv_bias), free(y->o), free(y->mlp_norm);
			free(y->gate_up), free(y->down), free(y->router), free(y->exp_gate_up);
			free(y->exp_down), free(y->sh_gate_up), free(y->sh_down);
		}
	free(e->layers);
	if (e->lm_head != e->embed)
		free(e->lm_head);
	free(e->embed), free(e->final_norm), free(e->rope), free(e->k_cache), free(e->v_cache);
	free(e->x), free(e->xn), free(e->qkv), free(e->att), free(e->tmp), free(e->gu), free(e->act);
	free(e->last), free(e->logits), free(e->r_logits), free(e->r_w), free(e->e_gu);
	free(e->e_act), free(e->e_out), free(e->moe_out), free(e->r_ids), free(e->in_tokens);
	free(e->next), free(e->prompt);
	free(e);
}

static int build(struct lp_cpu_engine *e, struct lp_err *err)
{
	const struct lp_llm_config *c = &e->c;
	size_t h = (size_t)c->hidden_size, inter = (size_t)c->intermediate_size;
	size_t mi = (size_t)c->moe_intermediate_size, ne = (size_t)c->n_routed_experts;
	size_t t = (size_t)e->o.batch * (size_t)e->o.prompt_len, k = (size_t)c->num_experts_per_tok;
	size_t kv = (size_t)c->num_hidden_layers * (size_t)e->o.batch * (size_t)c->num_key_value_heads *
		    (size_t)e->max_pos * (size_t)c->head_dim;
	size_t wide = inter > mi * (size_t)c->n_shared_experts ? inter : mi * (size_t)c->n_shared_experts;
	int oom = 0, l, x;
	e->embed = tensor(e, (size_t)c->vocab_size * h, LP_LLM_T_EMBED, -1, 0, &oom);
	e->lm_head = c->tie_word_embeddings ? e->embed :
		     tensor(e, (size_t)c->vocab_size * h, LP_LLM_T_LM_HEAD, -1, 0, &oom);
	e->final_norm = tensor(e, h, LP_LLM_T_FINAL_NORM, -1, 0, &oom);
	e->layers = calloc((size_t)c->num_hidden_layers, sizeof(*e->layers));
	if (!e->layers)
		oom = 1;
	for (l = 0; !oom && l < c->num_hidden_layers; l++) {
		struct lp_cpu_layer *y = &e->layers[l];
		y->attn_norm = tensor(e, h, LP_LLM_T_ATTN_NORM, l, 0, &oom);
		y->qkv = tensor(e, (size_t)e->qkv_dim * h, LP_LLM_T_QKV, l, 0, &oom);
		if (c->attention_bias)
			y->qkv_bias = tensor(e, (size_t)e->qkv_dim, LP_LLM_T_QKV_BIAS, l, 0, &oom);
		y->o = tensor(e, h * (size_t)e->q_dim, LP_LLM_T_O, l, 0, &oom);
		y->mlp_norm = tensor(e, h, LP_LLM_T_MLP_NORM, l, 0, &oom);
		if (!lp_llm_layer_is_moe(c, l)) {
			y->gate_up = tensor(e, 2 * inter * h, LP_LLM_T_GATE_UP, l, 0, &oom);
			y->down = tensor(e, h * inter, LP_LLM_T_DOWN, l, 0, &oom);
			continue;
		}
		y->router = tensor(e, ne * h, LP_LLM_T_ROUTER, l, 0, &oom);
		y->exp_gate_up = malloc(ne * 2 * mi * h * sizeof(float));
		y->exp_down = malloc(ne * h * mi * sizeof(float));
		if (!y->exp_gate_up || !y->exp_down) {
			oom = 1;
			break;
		}
		for (x = 0; x < c->n_routed_experts; x++) {
			lp_llm_cpu_fill(y->exp_gate_up + (size_t)x * 2 * mi * h, 2 * mi * h, e->o.seed,
				lp_llm_tensor_gen(c, LP_LLM_T_EXP_GATE_UP, l, x));
			lp_llm_cpu_fill(y->exp_down + (size_t)x * h * mi, h * mi, e->o.seed,
				lp_llm_tensor_gen(c, LP_LLM_T_EXP_DOWN, l, x));
		}
		if (e->sh_inter) {
			y->sh_gate_up = tensor(e, 2 * (size_t)e->sh_inter * h, LP_LLM_T_SH_GATE_UP, l, 0, &oom);
			y->sh_down = tensor(e, h * (size_t)e->sh_inter, LP_LLM_T_SH_DOWN, l, 0, &oom);
		}
	}
	e->rope = malloc((size_t)e->max_pos * (size_t)c->head_dim * sizeof(float));
	if (e->rope)
		lp_llm_rope_table(e->rope, e->max_pos, c->head_dim, c->rope_theta);
	else
		oom = 1;
	e->k_cache = zeros(kv, &oom);
	e->v_cache = zeros(kv, &oom);
	e->x = zeros(t * h, &oom);
	e->xn = zeros(t * h, &oom);
	e->qkv = zeros(t * (size_t)e->qkv_dim, &oom);
	e->att = zeros(t * (size_t)e->q_dim, &oom);
	e->tmp = zeros(t * h, &oom);
	e->gu = zeros(t * 2 * wide, &oom);
	e->act = zeros(t * wide, &oom);
	e->last = zeros((size_t)e->o.batch * h, &oom);
	e->logits = zeros((size_t)e->o.batch * (size_t)c->vocab_size, &oom);
	if (ne) {
		e->r_logits = zeros(t * ne, &oom);
		e->r_w = zeros(t * k, &oom);
		e->e_gu = zeros(2 * mi, &oom);
		e->e_act = zeros(mi, &oom);
		e->e_out = zeros(h, &oom);
		e->moe_out = zeros(t * h, &oom);
		e->r_ids = calloc(t * k, sizeof(int32_t));
		if (!e->r_ids)
			oom = 1;
	}
	e->in_tokens = calloc(t, sizeof(int32_t));
	e->next = calloc((size_t)e->o.batch, sizeof(int32_t));
	e->prompt = calloc(t, sizeof(int32_t));
	if (oom || !e->in_tokens || !e->next || !e->prompt)
		return lp_err_set(err, LP_ENOMEM, "out of memory building model '%s' on the CPU (%.1f GiB of fp32 weights)",
			c->name, (double)lp_llm_param_count(c) * 4.0 / (1 << 30));
	return 0;
}

static void mlp(struct lp_cpu_engine *e, float *out, const float *in, int t, const float *gate_up,
	const float *down, int inter)
{
	int h = e->c.hidden_size;
	lp_llm_cpu_matmul(e->gu, in, gate_up, NULL, t, 2 * inter, h);
	lp_llm_cpu_swiglu(e->act, e->gu, t, inter);
	lp_llm_cpu_matmul(out, e->act, down, NULL, t, h, inter);
}

static void moe(struct lp_cpu_engine *e, const struct lp_cpu_layer *y, int t)
{
	const struct lp_llm_config *c = &e->c;
	int h = c->hidden_size, mi = c->moe_intermediate_size, k = c->num_experts_per_tok, r, j, i;
	op_push(e, "router");
	lp_llm_cpu_matmul(e->r_logits, e->xn, y->router, NULL, t, c->n_routed_experts, h);
	lp_llm_cpu_moe_route(e->r_logits, t, c->n_routed_experts, k, c->scoring_func, c->norm_topk_prob,
		(float)c->routed_scaling_factor, e->r_ids, e->r_w);
	op_pop(e);
	op_push(e, "experts");
	memset(e->moe_out, 0, sizeof(float) * (size_t)t * h);
	for (r = 0; r < t; r++)
		for (j = 0; j < k; j++) {
			int x = e->r_ids[r * k + j];
			float w = e->r_w[r * k + j];
			lp_llm_cpu_matmul(e->e_gu, e->xn + (size_t)r * h, y->exp_gate_up + (size_t)x * 2 * mi * h,
				NULL, 1, 2 * mi, h);
			lp_llm_cpu_swiglu(e->e_act, e->e_gu, 1, mi);
			lp_llm_cpu_matmul(e->e_out, e->e_act, y->exp_down + (size_t)x * h * mi, NULL, 1, h, mi);
			for (i = 0; i < h; i++)
				e->moe_out[(size_t)r * h + i] += w * e->e_out[i];
		}
	op_pop(e);
	if (e->sh_inter) {
		op_push(e, "shared_experts");
		mlp(e, e->tmp, e->xn, t, y->sh_gate_up, y->sh_down, e->sh_inter);
		for (i = 0; i < t * h; i++)
			e->moe_out[i] += e->tmp[i];
		op_pop(e);
	}
}

/* One forward pass over `tn` new tokens per sequence (in_tokens, sequence-major) at positions
 * pos0..pos0+tn-1; leaves the last position's logits and greedy tokens in e->logits, e->next. */
static void forward(struct lp_cpu_engine *e, int pos0, int tn)
{
	const struct lp_llm_config *c = &e->c;
	int h = c->hidden_size, d = c->head_dim, nkv = c->num_key_value_heads, nb = e->o.batch;
	int t = nb * tn, l, i, b, r;
	float eps = (float)c->rms_norm_eps;
	size_t layer_kv = (size_t)nb * nkv * (size_t)e->max_pos * d;

	op_push(e, "embed");
	for (i = 0; i < t; i++)
		memcpy(e->x + (size_t)i * h, e->embed + (size_t)e->in_tokens[i] * h, sizeof(float) * (size_t)h);
	op_pop(e);
	for (l = 0; l < c->num_hidden_layers; l++) {
		const struct lp_cpu_layer *y = &e->layers[l];
		float *kc = e->k_cache + (size_t)l * layer_kv, *vc = e->v_cache + (size_t)l * layer_kv;
		op_push_payload(e, "layer", (uint64_t)l);
		op_push(e, "attn_norm");
		lp_llm_cpu_rmsnorm(e->xn, e->x, y->attn_norm, t, h, eps);
		op_pop(e);
		op_push(e, "qkv");
		lp_llm_cpu_matmul(e->qkv, e->xn, y->qkv, y->qkv_bias, t, e->qkv_dim, h);
		op_pop(e);
		op_push(e, "rope");
		lp_llm_cpu_rope(e->qkv, t, e->qkv_dim, c->num_attention_heads + nkv, d, tn, pos0, e->rope);
		for (r = 0; r < t; r++) {       /* append k, v to the cache */
			int pos = pos0 + r % tn, kvh;
			b = r / tn;
			for (kvh = 0; kvh < nkv; kvh++) {
				size_t at = (((size_t)b * nkv + kvh) * e->max_pos + pos) * d;
				const float *src = e->qkv + (size_t)r * e->qkv_dim + e->q_dim + (size_t)kvh * d;
				memcpy(kc + at, src, sizeof(float) * (size_t)d);
				memcpy(vc + at, src + (size_t)nkv * d, sizeof(float) * (size_t)d);
			}
		}
		op_pop(e);
		op_push(e, "attention");
		lp_llm_cpu_attention(e->att, e->qkv, e->qkv_dim, kc, vc, nb, tn, pos0,
			c->num_attention_heads, nkv, d, e->max_pos);
		op_pop(e);
		op_push(e, "o_proj");
		lp_llm_cpu_matmul(e->tmp, e->att, y->o, NULL, t, h, e->q_dim);
		for (i = 0; i < t * h; i++)
			e->x[i] += e->tmp[i];
		op_pop(e);
		op_push(e, "mlp_norm");
		lp_llm_cpu_rmsnorm(e->xn, e->x, y->mlp_norm, t, h, eps);
		op_pop(e);
		if (lp_llm_layer_is_moe(c, l)) {
			op_push(e, "moe");
			moe(e, y, t);
			for (i = 0; i < t * h; i++)
				e->x[i] += e->moe_out[i];
		} else {
			op_push(e, "mlp");
			mlp(e, e->tmp, e->xn, t, y->gate_up, y->down, c->intermediate_size);
			for (i = 0; i < t * h; i++)
				e->x[i] += e->tmp[i];
		}
		op_pop(e);
		op_pop(e); /* layer */
	}
	op_push(e, "final_norm");
	for (b = 0; b < nb; b++)    /* only the last position of each sequence is sampled */
		lp_llm_cpu_rmsnorm(e->last + (size_t)b * h, e->x + ((size_t)b * tn + tn - 1) * h,
			e->final_norm, 1, h, eps);
	op_pop(e);
	op_push(e, "lm_head");
	lp_llm_cpu_matmul(e->logits, e->last, e->lm_head, NULL, nb, c->vocab_size, h);
	op_pop(e);
	op_push(e, "sample");
	for (b = 0; b < nb; b++)
		e->next[b] = lp_llm_cpu_argmax(e->logits + (size_t)b * c->vocab_size, c->vocab_size);
	op_pop(e);
}

static void load_prompt(struct lp_cpu_engine *e)
{
	memcpy(e->in_tokens, e->prompt, sizeof(int32_t) * (size_t)e->o.batch * (size_t)e->o.prompt_len);
}

static int cpu_set_prompt(void *impl, const int32_t *tokens, struct lp_err *err)
{
	struct lp_cpu_engine *e = impl;
	(void)err;
	memcpy(e->prompt, tokens, sizeof(int32_t) * (size_t)e->o.batch * (size_t)e->o.prompt_len);
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cpu_iterate(void *impl, double *prefill_ms, double *decode_ms, int32_t *tokens,
	struct lp_err *err)
{
	struct lp_cpu_engine *e = impl;
	int s, b, p = e->o.prompt_len;
	double t0, t1, t2;
	(void)err;
	load_prompt(e);
	t0 = now_ms();
	lp_nvtx_push_payload("prefill", (uint64_t)e->o.batch * (uint64_t)p);
	forward(e, 0, p);
	lp_nvtx_pop();
	t1 = now_ms();
	tokens[0] = e->next[0];
	lp_nvtx_push_payload("decode_all", (uint64_t)e->o.new_tokens); /* the steps planned (docs/nvtx.md) */
	for (s = 0; s < e->o.new_tokens; s++) {
		lp_nvtx_push_payload("decode_step", (uint64_t)s);
		for (b = 0; b < e->o.batch; b++)
			e->in_tokens[b] = e->next[b];
		forward(e, p + s, 1);
		tokens[s + 1] = e->next[0];
		lp_nvtx_pop();
	}
	lp_nvtx_pop();
	t2 = now_ms();
	*prefill_ms = t1 - t0;
	*decode_ms = t2 - t1;
	return 0;
}

static int cpu_prefill_only(void *impl, struct lp_err *err)
{
	struct lp_cpu_engine *e = impl;
	int ops = e->ops;
	(void)err;
	load_prompt(e);
	e->ops = 0;
	forward(e, 0, e->o.prompt_len);
	e->ops = ops;
	return 0;
}

static int cpu_logits(void *impl, const float **out, struct lp_err *err)
{
	(void)err;
	*out = ((struct lp_cpu_engine *)impl)->logits;
	return 0;
}

static int cpu_graph_kernels(void *impl)
{
	(void)impl;
	return 0;
}

static const struct lp_llm_backend lp_cpu_backend = {
	cpu_iterate, cpu_prefill_only, cpu_logits, cpu_graph_kernels, cpu_set_prompt, cpu_free,
};

int lp_llm_cpu_engine_create(const struct lp_llm_config *cfg, const struct lp_llm_run_opts *opts,
	void **impl, const struct lp_llm_backend **be, char *device_name, size_t name_len,
	struct lp_err *err)
{
	struct lp_cpu_engine *e = calloc(1, sizeof(*e));
	int threads = 1;
	if (!e)
		return lp_oom(err);
	e->c = *cfg;
	e->o = *opts;
	e->ops = opts->nvtx_ops;
	e->q_dim = cfg->num_attention_heads * cfg->head_dim;
	e->qkv_dim = e->q_dim + 2 * cfg->num_key_value_heads * cfg->head_dim;
	e->max_pos = opts->prompt_len + opts->new_tokens;
	e->sh_inter = cfg->moe_intermediate_size * cfg->n_shared_experts;
	if (build(e, err) < 0) {
		cpu_free(e);
		return -1;
	}
	{
		int b, t, p = opts->prompt_len;
		for (b = 0; b < opts->batch; b++)
			for (t = 0; t < p; t++)
				e->prompt[b * p + t] = lp_llm_prompt_token(opts->seed, cfg->vocab_size, b, t);
	}
#ifdef _OPENMP
	threads = omp_get_max_threads();
#endif
	snprintf(device_name, name_len, "cpu (fp32, %d thread%s)", threads, threads == 1 ? "" : "s");
	*impl = e;
	*be = &lp_cpu_backend;
	return 0;
}
