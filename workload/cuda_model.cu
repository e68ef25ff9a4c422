/* cuda_model.cu: the CUDA back end of the engine (engine.h): the forward pass and the backend's
 * calls; cuda_setup.cu creates the engine (cuda_engine.cuh). bf16 weights and activations with
 * an fp32 residual stream, cuBLAS for the projections, the kernels of cuda_kernels.cu for the
 * rest, greedy sampling on the device. Everything (weights generated on the device from the
 * seed, KV cache, buffers, cuBLAS handle and workspace, the decode-step CUDA graph) is set up in
 * create, before the first timed range; an iteration then never waits for the GPU until its end.
 *
 * NVTX: stage ranges (prefill, decode_all, decode_step) are pushed around the launches of every
 * iteration. Op ranges are pushed around the launches of the prefill, and of the decode step when
 * it runs eagerly; with the CUDA graph they are pushed once, while the step is captured (outside
 * any stage range), and a tracer maps replayed kernels to them by graph node. */
#include "cuda_engine.cuh" /* first: core/err.h with C linkage */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "llmprof/nvtx.h"

/* --- the forward pass --- */

static void op_push(const struct cu_engine *e, const char *name)
{
	if (e->ops)
		lp_nvtx_push(name);
}

static void op_push_payload(const struct cu_engine *e, const char *name, uint64_t payload)
{
	if (e->ops)
		lp_nvtx_push_payload(name, payload);
}

static void op_pop(const struct cu_engine *e)
{
	if (e->ops)
		lp_nvtx_pop();
}

/* Runs fn inside an op range; the range is closed on failure too. */
#define OP(e, name, body)                  \
	do {                               \
		int rc_;                   \
		op_push((e), (name));      \
		rc_ = (body);              \
		op_pop(e);                 \
		if (rc_ < 0)               \
			return -1;         \
	} while (0)

/* y[t][n] = x[t][k] W^T: cuBLAS, or the own GEMV for decode-sized t unless --gemv cublas */
static int proj(struct cu_engine *e, void *y, int y_f32, const bf *x, const bf *w, int t, int n,
	int k, struct lp_err *err)
{
	if (e->o.gemv != LP_LLM_GEMV_CUBLAS && t <= LP_LLM_GEMV_MAX_T)
		return lp_llm_k_gemv(y, y_f32, x, w, t, n, k, e->stream, err);
	return lp_llm_gemm(e->blas, y, y_f32, x, w, t, n, k, err);
}

static int dense_mlp(struct cu_engine *e, bf *out, const bf *gate_up, const bf *down, int inter,
	int t, struct lp_err *err)
{
	int h = e->c.hidden_size;
	OK(proj(e, e->gu, 0, e->xn, gate_up, t, 2 * inter, h, err));
	OK(lp_llm_k_swiglu(e->act, e->gu, t, inter, e->stream, err));
	return proj(e, out, 0, e->act, down, t, h, inter, err);
}

static int router(struct cu_engine *e, const struct cu_layer *y, int t, struct lp_err *err)
{
	const struct lp_llm_config *c = &e->c;
	OK(proj(e, e->r_logits, 1, e->xn, y->router, t, c->n_routed_experts, c->hidden_size, err));
	return lp_llm_k_moe_topk(e->r_ids, e->r_w, e->r_logits, t, c->n_routed_experts,
		c->num_experts_per_tok, c->scoring_func, c->norm_topk_prob, (float)c->routed_scaling_factor,
		e->stream, err);
}

static int experts(struct cu_engine *e, const struct cu_layer *y, int t, struct lp_err *err)
{
	const struct lp_llm_config *c = &e->c;
	int k = c->num_experts_per_tok, n = t * k, h = c->hidden_size, mi = c->moe_intermediate_size;
	int tiles = lp_llm_moe_max_tiles(n, c->n_routed_experts);
	OK(lp_llm_k_moe_align(e->sorted, e->tile_expert, e->n_tiles, e->r_ids, n, c->n_routed_experts,
		tiles, e->stream, err));
	OK(lp_llm_k_moe_gemm(e->e_gu, e->xn, k, y->exp_gate_up, e->sorted, e->tile_expert, e->n_tiles,
		tiles, 2 * mi, h, e->stream, err));
	OK(lp_llm_k_swiglu(e->e_act, e->e_gu, n, mi, e->stream, err));
	OK(lp_llm_k_moe_gemm(e->e_out, e->e_act, 1, y->exp_down, e->sorted, e->tile_expert, e->n_tiles,
		tiles, h, mi, e->stream, err));
	return lp_llm_k_moe_combine(e->mlp_out, e->e_out, e->r_w, e->sh_inter ? e->sh_out : NULL, t, k, h,
		e->stream, err);
}

/* The "moe" range: router, shared experts, routed experts into e->mlp_out; with add_to_x, then
 * added to the residual stream (the fused decode path, which has no norm kernel to fuse it in). */
static int moe_block(struct cu_engine *e, const struct cu_layer *y, int t, int add_to_x,
	struct lp_err *err)
{
	int rc;
	op_push(e, "moe");
	op_push(e, "router");
	rc = router(e, y, t, err);
	op_pop(e);
	if (rc == 0 && e->sh_inter) {
		op_push(e, "shared_experts");
		rc = dense_mlp(e, e->sh_out, y->sh_gate_up, y->sh_down, e->sh_inter, t, err);
		op_pop(e);
	}
	if (rc == 0) {
		op_push(e, "experts");
		rc = experts(e, y, t, err);
		op_pop(e);
	}
	if (rc == 0 && add_to_x)
		rc = lp_llm_k_add(e->x, e->mlp_out, (size_t)t * e->c.hidden_size, e->stream, err);
	op_pop(e);
	return rc;
}

static struct lp_llm_dec_gemv dec_args(const struct cu_engine *e, enum lp_llm_dec_mode mode,
	const bf *w, int n, int k)
{
	struct lp_llm_dec_gemv a;
	memset(&a, 0, sizeof(a));
	a.mode = mode;
	a.t = e->o.batch;
	a.n = n;
	a.k = k;
	a.pdl = e->o.pdl;
	a.w = w;
	a.resid = e->x;
	a.eps = (float)e->c.rms_norm_eps;
	return a;
}

/* Final norm + lm_head + greedy sampling on the fused kernel, which also writes the embedding of
 * the sampled token into x (the next step's input): the decode step's tail, and the prefill's
 * (its tn last positions, with the last layer's MLP output added on the fly). */
static int lm_head_fused(struct cu_engine *e, int tn, struct lp_err *err)
{
	const struct lp_llm_config *c = &e->c;
	int h = c->hidden_size;
	struct lp_llm_dec_gemv a = dec_args(e, LP_LLM_DEC_ARGMAX, e->lm_head, c->vocab_size, h);
	a.resid = e->x + (size_t)(tn - 1) * h;
	a.resid_stride = tn * h;
	a.delta = tn > 1 ? e->mlp_out + (size_t)(tn - 1) * h : NULL;
	a.tn = tn;
	a.norm_w = e->final_norm;
	a.pos = e->pos;
	a.logits = e->logits;
	a.next = e->next;
	a.tokens = e->tokens;
	a.tokens_stride = e->o.new_tokens + 1;
	a.prompt_len = e->o.prompt_len;
	a.done = e->done;
	a.best = e->best;
	a.embed = e->embed;
	a.embed_out = e->x;
	return lp_llm_k_dec_gemv(&a, e->stream, err);
}

/* The MLP of an MoE layer in a decode step on the fused MoE kernels (cuda_moe.cu): the "router"
 * range holds the routing kernel (mlp_norm fused in), "experts" the gate/up and down kernels of
 * the routed and the shared experts together, with the residual add ("shared_experts" is empty). */
static int moe_fused(struct cu_engine *e, const struct cu_layer *y, struct lp_err *err)
{
	const struct lp_llm_config *c = &e->c;
	struct lp_llm_moe_dec m;
	int rc;
	memset(&m, 0, sizeof(m));
	m.t = e->o.batch;
	m.h = c->hidden_size;
	m.e = c->n_routed_experts;
	m.k = c->num_experts_per_tok;
	m.mi = c->moe_intermediate_size;
	m.sh = e->sh_inter;
	m.pdl = e->o.pdl;
	m.resid = e->x;
	m.norm_w = y->mlp_norm;
	m.eps = (float)c->rms_norm_eps;
	m.router = y->router;
	m.gate_up = y->exp_gate_up;
	m.down = y->exp_down;
	m.sh_gate_up = y->sh_gate_up;
	m.sh_down = y->sh_down;
	m.sigmoid = c->scoring_func == LP_LLM_GATE_SIGMOID;
	m.norm_topk = c->norm_topk_prob;
	m.scale = (float)c->routed_scaling_factor;
	m.r_logits = e->r_logits;
	m.weights = e->r_w;
	m.ids = e->r_ids;
	m.wgt = e->md_wgt;
	m.used = e->md_used;
	m.slot = e->md_slot;
	m.n_used = e->md_n_used;
	m.done = e->md_done;
	m.sh_act = e->md_sh_act;
	m.r_act = e->md_r_act;
	OP(e, "mlp_norm", 0);
	op_push(e, "moe");
	op_push(e, "router");
	rc = lp_llm_k_moe_dec(&m, LP_LLM_MOE_DEC_ROUTE, e->stream, err);
	op_pop(e);
	if (rc == 0) {
		op_push(e, "shared_experts");
		op_pop(e);
		op_push(e, "experts");
		rc = lp_llm_k_moe_dec(&m, LP_LLM_MOE_DEC_UP | LP_LLM_MOE_DEC_DOWN, e->stream, err);
		op_pop(e);
	}
	op_pop(e);
	return rc;
}

/* One decode step on the fused kernels (cuda_decode.cu): per dense layer, RMSNorm + QKV + RoPE
 * + KV append, attention, O + residual, RMSNorm + gate/up + SwiGLU, down + residual; then
 * final norm + lm_head + argmax. The op ranges stay those of lp_cu_forward(): the ranges of ops fused
 * into a neighbour (attn_norm, rope, mlp_norm, final_norm, sample) are left empty. */
static int forward_fused(struct cu_engine *e, struct lp_err *err)
{
	const struct lp_llm_config *c = &e->c;
	int h = c->hidden_size, nb = e->o.batch, d = c->head_dim;
	int nh = c->num_attention_heads, nkv = c->num_key_value_heads;
	size_t layer_kv = (size_t)nb * nkv * e->max_pos * d;
	struct lp_llm_dec_gemv a;

	OP(e, "embed", 0); /* x holds the embedding already: lm_head_fused wrote it */
	for (int l = 0; l < c->num_hidden_layers; l++) {
		const struct cu_layer *y = &e->layers[l];
		bf *kc = e->k_cache + l * layer_kv, *vc = e->v_cache + l * layer_kv;
		int moe = lp_llm_layer_is_moe(c, l);
		op_push_payload(e, "layer", (uint64_t)l);
		OP(e, "attn_norm", 0);
		a = dec_args(e, LP_LLM_DEC_QKV_ROPE, y->qkv, e->qkv_dim, h);
		a.norm_w = y->attn_norm;
		a.q = e->q;
		a.k_cache = kc;
		a.v_cache = vc;
		a.bias = y->qkv_bias;
		a.rope_tab = e->rope;
		a.pos = e->pos;
		a.pos_ready = l > 0; /* layer 0 comes after the lm_head kernel that advances it */
		a.nh = nh;
		a.nkv = nkv;
		a.d = d;
		a.max_pos = e->max_pos;
		OP(e, "qkv", lp_llm_k_dec_gemv(&a, e->stream, err));
		OP(e, "rope", 0);
		OP(e, "attention", lp_llm_k_attn_decode(e->att, e->q, kc, vc, e->partial, e->attn_counters,
			e->pos, nb, nh, nkv, d, e->max_pos, e->f_splits, e->f_split_len, e->o.pdl, e->stream, err));
		a = dec_args(e, LP_LLM_DEC_RESID, y->o, h, e->q_dim);
		a.x_bf16 = e->att;
		OP(e, "o_proj", lp_llm_k_dec_gemv(&a, e->stream, err));
		if (!moe) {
			int rc;
			OP(e, "mlp_norm", 0);
			op_push(e, "mlp");
			a = dec_args(e, LP_LLM_DEC_SWIGLU, y->gate_up, 2 * c->intermediate_size, h);
			a.norm_w = y->mlp_norm;
			a.out = e->act;
			rc = lp_llm_k_dec_gemv(&a, e->stream, err);
			if (rc == 0) {
				a = dec_args(e, LP_LLM_DEC_RESID, y->down, h, c->intermediate_size);
				a.x_bf16 = e->act;
				rc = lp_llm_k_dec_gemv(&a, e->stream, err);
			}
			op_pop(e);
			if (rc < 0) {
				op_pop(e);
				return -1;
			}
		} else if (e->moe_fused) {
			if (moe_fused(e, y, err) < 0) {
				op_pop(e);
				return -1;
			}
		} else {
			OP(e, "mlp_norm", lp_llm_k_rmsnorm(e->xn, e->x, NULL, y->mlp_norm, nb, h, 1, 0,
				(float)c->rms_norm_eps, e->stream, err));
			if (moe_block(e, y, nb, 1, err) < 0) {
				op_pop(e);
				return -1;
			}
		}
		op_pop(e); /* layer */
	}
	OP(e, "final_norm", 0);
	OP(e, "lm_head", lm_head_fused(e, 1, err));
	OP(e, "sample", 0);
	return 0;
}

/* tn new tokens per sequence from `tokens` at position *e->pos; ends with the greedy tokens in
 * e->next (and e->tokens) and *e->pos advanced by tn, all on the device. */
int lp_cu_forward(struct cu_engine *e, const int32_t *tokens, int tn, struct lp_err *err)
{
	const struct lp_llm_config *c = &e->c;
	int h = c->hidden_size, nb = e->o.batch, t = nb * tn, d = c->head_dim;
	int nh = c->num_attention_heads, nkv = c->num_key_value_heads;
	int splits = tn == 1 ? e->dec_splits : 1, split_len = tn == 1 ? e->dec_split_len : e->max_pos;
	float eps = (float)c->rms_norm_eps;
	size_t layer_kv = (size_t)nb * nkv * e->max_pos * d;

	if (tn == 1 && e->fused && tokens == e->next)
		return forward_fused(e, err);
	OP(e, "embed", lp_llm_k_embed(e->x, e->embed, tokens, t, h, e->stream, err));
	for (int l = 0; l < c->num_hidden_layers; l++) {
		const struct cu_layer *y = &e->layers[l];
		bf *kc = e->k_cache + l * layer_kv, *vc = e->v_cache + l * layer_kv;
		int moe = lp_llm_layer_is_moe(c, l);
		op_push_payload(e, "layer", (uint64_t)l);
		/* the previous layer's MLP output joins the residual stream here (fused add) */
		OP(e, "attn_norm", lp_llm_k_rmsnorm(e->xn, e->x, l ? e->mlp_out : NULL, y->attn_norm, t, h,
			1, 0, eps, e->stream, err));
		OP(e, "qkv", proj(e, e->qkv, 0, e->xn, y->qkv, t, e->qkv_dim, h, err));
		OP(e, "rope", lp_llm_k_qkv_rope(e->q, kc, vc, e->qkv, y->qkv_bias, e->rope, e->pos, t, tn,
			nh, nkv, d, e->max_pos, e->stream, err));
		OP(e, "attention", lp_llm_k_attention(e->att, e->q, kc, vc, e->partial, e->pos, nb, tn, nh,
			nkv, d, e->max_pos, splits, split_len, e->stream, err));
		OP(e, "o_proj", proj(e, e->o_out, 0, e->att, y->o, t, h, e->q_dim, err));
		OP(e, "mlp_norm", lp_llm_k_rmsnorm(e->xn, e->x, e->o_out, y->mlp_norm, t, h, 1, 0, eps,
			e->stream, err));
		if (!moe) {
			OP(e, "mlp", dense_mlp(e, e->mlp_out, y->gate_up, y->down, c->intermediate_size, t, err));
		} else if (moe_block(e, y, t, 0, err) < 0) {
			op_pop(e);
			return -1;
		}
		op_pop(e); /* layer */
	}
	/* only the last position of each sequence is sampled */
	if (e->fused) { /* and leaves the next step's embedding in x */
		OP(e, "final_norm", 0);
		OP(e, "lm_head", lm_head_fused(e, tn, err));
		OP(e, "sample", 0);
		return 0;
	}
	OP(e, "final_norm", lp_llm_k_rmsnorm(e->last, e->x, e->mlp_out, e->final_norm, nb, h, tn, tn - 1,
		eps, e->stream, err));
	OP(e, "lm_head", proj(e, e->logits, 1, e->last, e->lm_head, nb, c->vocab_size, h, err));
	OP(e, "sample", lp_llm_k_argmax(e->next, e->tokens, e->o.new_tokens + 1, e->pos, e->done,
		e->logits, nb, c->vocab_size, tn, e->o.prompt_len, e->stream, err));
	return 0;
}

int lp_cu_prefill(struct cu_engine *e, struct lp_err *err)
{
	TRY(cudaMemsetAsync(e->pos, 0, sizeof(int), e->stream));
	return lp_cu_forward(e, e->prompt, e->o.prompt_len, err);
}

static int decode_step(struct cu_engine *e, struct lp_err *err)
{
	if (e->graph_exec) {
		TRY(cudaGraphLaunch(e->graph_exec, e->stream));
		return 0;
	}
	return lp_cu_forward(e, e->next, 1, err);
}

/* Kernel nodes of a graph, child graphs included: what ncu profiles per replay. */
static int count_kernels(cudaGraph_t g, int *n, struct lp_err *err)
{
	size_t count = 0;
	cudaGraphNode_t *nodes;
	TRY(cudaGraphGetNodes(g, NULL, &count));
	nodes = (cudaGraphNode_t *)calloc(count ? count : 1, sizeof(*nodes));
	if (!nodes)
		return lp_oom(err);
	if (cudaGraphGetNodes(g, nodes, &count) != cudaSuccess) {
		free(nodes);
		return lp_err_set(err, LP_EOTHER, "cudaGraphGetNodes failed");
	}
	for (size_t i = 0; i < count; i++) {
		cudaGraphNodeType type;
		cudaGraph_t child;
		if (cudaGraphNodeGetType(nodes[i], &type) != cudaSuccess)
			continue;
		if (type == cudaGraphNodeTypeKernel)
			(*n)++;
		else if (type == cudaGraphNodeTypeGraph &&
			 cudaGraphChildGraphNodeGetGraph(nodes[i], &child) == cudaSuccess &&
			 count_kernels(child, n, err) < 0) {
			free(nodes);
			return -1;
		}
	}
	free(nodes);
	return 0;
}

int lp_cu_capture(struct cu_engine *e, struct lp_err *err)
{
	int rc;
	TRY(cudaStreamBeginCapture(e->stream, cudaStreamCaptureModeThreadLocal));
	rc = lp_cu_forward(e, e->next, 1, err);
	{
		cudaGraph_t g = NULL;
		cudaError_t ce = cudaStreamEndCapture(e->stream, &g);
		e->graph = g;
		if (rc < 0)
			return -1;
		TRY(ce);
	}
	TRY(cudaGraphInstantiate(&e->graph_exec, e->graph, 0));
	e->graph_kernels = 0;
	return count_kernels(e->graph, &e->graph_kernels, err);
}

static int elapsed(struct cu_engine *e, int a, int b, double *ms, struct lp_err *err)
{
	float f = 0;
	TRY(cudaEventElapsedTime(&f, e->ev[a], e->ev[b]));
	*ms = f;
	return 0;
}

static int cu_iterate(void *impl, double *prefill_ms, double *decode_ms, int32_t *tokens,
	struct lp_err *err)
{
	struct cu_engine *e = (struct cu_engine *)impl;
	int rc;
	TRY(cudaEventRecord(e->ev[0], e->stream));
	lp_nvtx_push_payload("prefill", (uint64_t)e->o.batch * (uint64_t)e->o.prompt_len);
	rc = lp_cu_prefill(e, err);
	lp_nvtx_pop();
	OK(rc);
	TRY(cudaEventRecord(e->ev[1], e->stream));
	lp_nvtx_push_payload("decode_all", (uint64_t)e->o.new_tokens); /* the steps planned (docs/nvtx.md) */
	for (int s = 0; s < e->o.new_tokens && rc == 0; s++) {
		lp_nvtx_push_payload("decode_step", (uint64_t)s);
		rc = decode_step(e, err);
		lp_nvtx_pop();
	}
	lp_nvtx_pop();
	OK(rc);
	TRY(cudaEventRecord(e->ev[2], e->stream));
	TRY(cudaEventSynchronize(e->ev[2]));
	TRY(cudaGetLastError());
	OK(elapsed(e, 0, 1, prefill_ms, err));
	OK(elapsed(e, 1, 2, decode_ms, err));
	/* sequence 0's tokens: the prefill's sample, then one per step */
	TRY(cudaMemcpy(tokens, e->tokens, sizeof(int32_t) * (size_t)(e->o.new_tokens + 1),
		cudaMemcpyDeviceToHost));
	return 0;
}

static int cu_prefill_only(void *impl, struct lp_err *err)
{
	struct cu_engine *e = (struct cu_engine *)impl;
	int ops = e->ops, rc;
	e->ops = 0;
	rc = lp_cu_prefill(e, err);
	e->ops = ops;
	OK(rc);
	TRY(cudaStreamSynchronize(e->stream));
	return 0;
}

static int cu_logits(void *impl, const float **out, struct lp_err *err)
{
	struct cu_engine *e = (struct cu_engine *)impl;
	TRY(cudaStreamSynchronize(e->stream));
	TRY(cudaMemcpy(e->h_logits, e->logits, sizeof(float) * (size_t)e->o.batch * e->c.vocab_size,
		cudaMemcpyDeviceToHost));
	*out = e->h_logits;
	return 0;
}

static int cu_graph_kernels(void *impl)
{
	return ((struct cu_engine *)impl)->graph_kernels;
}

static int cu_set_prompt(void *impl, const int32_t *tokens, struct lp_err *err)
{
	struct cu_engine *e = (struct cu_engine *)impl;
	TRY(cudaMemcpyAsync(e->prompt, tokens, sizeof(int32_t) * (size_t)e->o.batch * e->o.prompt_len,
		cudaMemcpyHostToDevice, e->stream));
	TRY(cudaStreamSynchronize(e->stream));
	return 0;
}

void lp_cu_free(void *impl)
{
	struct cu_engine *e = (struct cu_engine *)impl;
	if (!e)
		return;
	if (e->stream)
		cudaStreamSynchronize(e->stream);
	if (e->graph_exec)
		cudaGraphExecDestroy(e->graph_exec);
	if (e->graph)
		cudaGraphDestroy(e->graph);
	lp_llm_blas_free(e->blas);
	for (int i = 0; i < 3; i++)
		if (e->ev[i])
			cudaEventDestroy(e->ev[i]);
	cudaFree(e->weights_mem);
	cudaFree(e->act_mem);
	if (e->stream)
		cudaStreamDestroy(e->stream);
	free(e->layers);
	free(e->h_logits);
	free(e);
}

const struct lp_llm_backend lp_cu_backend = {
	cu_iterate, cu_prefill_only, cu_logits, cu_graph_kernels, cu_set_prompt, lp_cu_free,
};
