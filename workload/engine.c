/* engine.c: the device-neutral front of the inference engine (llm.h): checks the run options
 * against the model, then hands over to the CPU or CUDA back end (engine.h). */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

const char *lp_llm_gemv_name(enum lp_llm_gemv g)
{
	switch (g) {
	case LP_LLM_GEMV_CUBLAS: return "cublas";
	case LP_LLM_GEMV_OWN: return "own";
	case LP_LLM_GEMV_FUSED: return "fused";
	}
	return "?";
}

struct lp_llm_engine {
	struct lp_llm_config cfg;
	struct lp_llm_run_opts opts;
	const struct lp_llm_backend *be;
	void *impl;
	int32_t *tokens;
	char device_name[160];
};

int lp_llm_have_cuda(void)
{
#ifdef LP_LLM_HAVE_CUDA
	return 1;
#else
	return 0;
#endif
}

#ifndef LP_LLM_HAVE_CUDA
int lp_llm_cuda_engine_create(const struct lp_llm_config *cfg, const struct lp_llm_run_opts *opts,
	void **impl, const struct lp_llm_backend **be, char *device_name, size_t name_len,
	struct lp_err *err)
{
	(void)cfg, (void)opts, (void)impl, (void)be, (void)device_name, (void)name_len;
	lp_err_set(err, LP_EENV, "this llmprof-llm was built without CUDA");
	return lp_err_hint(err, "rebuild with the CUDA toolkit installed (nvcc), or use --device cpu");
}
#endif

int lp_llm_engine_create(const struct lp_llm_config *cfg, const struct lp_llm_run_opts *opts,
	struct lp_llm_engine **out, struct lp_err *err)
{
	struct lp_llm_engine *e;
	int rc;
	*out = NULL;
	if (opts->batch < 1 || opts->prompt_len < 1 || opts->new_tokens < 0)
		return lp_err_set(err, LP_EUSAGE, "batch and prompt length must be at least 1");
	if ((long)opts->prompt_len + opts->new_tokens > cfg->max_position_embeddings)
		return lp_err_set(err, LP_EUSAGE,
			"prompt length %d + new tokens %d is over the %d positions of model '%s'",
			opts->prompt_len, opts->new_tokens, cfg->max_position_embeddings, cfg->name);
	e = calloc(1, sizeof(*e));
	if (!e || !(e->tokens = calloc((size_t)opts->new_tokens + 1, sizeof(int32_t)))) {
		free(e);
		return lp_oom(err);
	}
	e->cfg = *cfg;
	e->opts = *opts;
	if (opts->device == LP_LLM_CUDA)
		rc = lp_llm_cuda_engine_create(cfg, opts, &e->impl, &e->be, e->device_name,
			sizeof(e->device_name), err);
	else
		rc = lp_llm_cpu_engine_create(cfg, opts, &e->impl, &e->be, e->device_name,
			sizeof(e->device_name), err);
	if (rc < 0) {
		free(e->tokens);
		free(e);
		return -1;
	}
	*out = e;
	return 0;
}

int lp_llm_engine_iterate(struct lp_llm_engine *e, struct lp_llm_iter *it, struct lp_err *err)
{
	memset(it, 0, sizeof(*it));
	if (e->be->iterate(e->impl, &it->prefill_ms, &it->decode_ms, e->tokens, err) < 0)
		return -1;
	it->tokens = e->tokens;
	it->n_tokens = e->opts.new_tokens + 1;
	return 0;
}

int lp_llm_engine_logits(struct lp_llm_engine *e, const float **logits, struct lp_err *err)
{
	return e->be->logits(e->impl, logits, err);
}

int lp_llm_engine_prefill_only(struct lp_llm_engine *e, struct lp_err *err)
{
	return e->be->prefill_only(e->impl, err);
}

int lp_llm_engine_set_prompt(struct lp_llm_engine *e, const int32_t *tokens, struct lp_err *err)
{
	long i, n = (long)e->opts.batch * e->opts.prompt_len;
	for (i = 0; i < n; i++)
		if (tokens[i] < 0 || tokens[i] >= e->cfg.vocab_size)
			return lp_err_set(err, LP_EUSAGE, "prompt token %ld (%d) is not in the vocabulary", i,
				(int)tokens[i]);
	return e->be->set_prompt(e->impl, tokens, err);
}

const char *lp_llm_engine_device_name(const struct lp_llm_engine *e)
{
	return e->device_name;
}

int lp_llm_engine_graph_kernels(const struct lp_llm_engine *e)
{
	return e->be->graph_kernels(e->impl);
}

void lp_llm_engine_free(struct lp_llm_engine *e)
{
	if (!e)
		return;
	e->be->free(e->impl);
	free(e->tokens);
	free(e);
}
