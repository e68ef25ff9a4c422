/* test_workload_engine.c: the CPU engine of the reference workload end to end: same seed, same
 * tokens and logits; another seed, other ones; MoE layers run; the KV cache gives a decode step
 * the same logits as a longer prefill; option checks; FLOP and byte counts. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ops.h"
#include "llm.h"

/* conf/: $LLMPROF_CONF_DIR when set (a build carried to another machine), else the source tree's */
static const char *conf_dir(void)
{
	const char *e = getenv("LLMPROF_CONF_DIR");
	return e && *e ? e : LP_CONF_DIR;
}

static struct lp_llm_engine *make(const char *model, uint64_t seed, int batch, int prompt, int steps)
{
	struct lp_llm_config c;
	struct lp_err err = LP_ERR_INIT;
	struct lp_llm_run_opts o = LP_LLM_RUN_OPTS_INIT;
	struct lp_llm_engine *e = NULL;
	if (lp_llm_config_load(model, conf_dir(), &c, &err) < 0)
		fail_msg("%s", err.msg);
	o.seed = seed;
	o.batch = batch;
	o.prompt_len = prompt;
	o.new_tokens = steps;
	if (lp_llm_engine_create(&c, &o, &e, &err) < 0)
		fail_msg("%s", err.msg);
	return e;
}

static void run(struct lp_llm_engine *e, int32_t *tokens, int n)
{
	struct lp_err err = LP_ERR_INIT;
	struct lp_llm_iter it;
	assert_int_equal(lp_llm_engine_iterate(e, &it, &err), 0);
	assert_int_equal(it.n_tokens, n);
	assert_true(it.prefill_ms >= 0 && it.decode_ms >= 0);
	memcpy(tokens, it.tokens, sizeof(int32_t) * (size_t)n);
}

static void test_same_seed_same_tokens(void **state)
{
	struct lp_llm_engine *a = make("tiny", 7, 2, 16, 8), *b = make("tiny", 7, 2, 16, 8);
	struct lp_llm_engine *c = make("tiny", 8, 2, 16, 8);
	struct lp_err err = LP_ERR_INIT;
	int32_t ta[9], tb[9], tc[9];
	const float *la, *lb, *lc;
	float copy[2 * 512];
	(void)state;
	run(a, ta, 9);
	run(b, tb, 9);
	assert_memory_equal(ta, tb, sizeof(ta));
	run(a, tb, 9); /* and iteration to iteration */
	assert_memory_equal(ta, tb, sizeof(ta));
	assert_int_equal(lp_llm_engine_logits(a, &la, &err), 0);
	memcpy(copy, la, sizeof(copy));
	assert_int_equal(lp_llm_engine_logits(b, &lb, &err), 0);
	assert_memory_equal(copy, lb, sizeof(copy));
	run(c, tc, 9);
	assert_int_equal(lp_llm_engine_logits(c, &lc, &err), 0);
	assert_true(memcmp(copy, lc, sizeof(copy)) != 0);
	lp_llm_engine_free(a);
	lp_llm_engine_free(b);
	lp_llm_engine_free(c);
}

static void test_moe_model_runs(void **state)
{
	struct lp_llm_engine *a = make("tiny-moe", 3, 1, 12, 6), *b = make("tiny-moe", 3, 1, 12, 6);
	int32_t ta[7], tb[7];
	int i;
	(void)state;
	run(a, ta, 7);
	run(b, tb, 7);
	assert_memory_equal(ta, tb, sizeof(ta));
	for (i = 0; i < 7; i++)
		assert_true(ta[i] >= 0 && ta[i] < 512);
	lp_llm_engine_free(a);
	lp_llm_engine_free(b);
}

/* The KV cache: a decode step fed with token X after a prefill of P tokens must give the logits
 * of a prefill over the same P tokens followed by X. Checked for both sequences of a batch. */
static void test_decode_matches_longer_prefill(void **state)
{
	enum { P = 9, V = 512 };
	struct lp_llm_engine *a = make("tiny", 11, 2, P, 1), *b = make("tiny", 11, 2, P + 1, 0);
	struct lp_err err = LP_ERR_INIT;
	int32_t pa[2 * P], pb[2 * (P + 1)], toks[2];
	const float *la, *lb;
	float first[2 * V];
	int i, s;
	(void)state;
	for (i = 0; i < 2 * P; i++)
		pa[i] = (int32_t)((i * 37 + 5) % V);
	assert_int_equal(lp_llm_engine_set_prompt(a, pa, &err), 0);
	/* the prefill alone tells which token the decode step will be fed */
	assert_int_equal(lp_llm_engine_prefill_only(a, &err), 0);
	assert_int_equal(lp_llm_engine_logits(a, &la, &err), 0);
	for (s = 0; s < 2; s++)
		toks[s] = lp_llm_cpu_argmax(la + s * V, V);
	memcpy(first, la, sizeof(first));
	run(a, pb, 2);                      /* prefill + 1 decode step */
	assert_int_equal(pb[0], toks[0]);
	assert_int_equal(lp_llm_engine_logits(a, &la, &err), 0);
	for (s = 0; s < 2; s++) {
		memcpy(pb + s * (P + 1), pa + s * P, sizeof(int32_t) * P);
		pb[s * (P + 1) + P] = toks[s];
	}
	assert_int_equal(lp_llm_engine_set_prompt(b, pb, &err), 0);
	assert_int_equal(lp_llm_engine_prefill_only(b, &err), 0);
	assert_int_equal(lp_llm_engine_logits(b, &lb, &err), 0);
	for (i = 0; i < 2 * V; i++)
		if (fabsf(la[i] - lb[i]) > 1e-4f * (1.0f + fabsf(lb[i])))
			fail_msg("logit %d: decode %.7g, prefill %.7g", i, (double)la[i], (double)lb[i]);
	assert_true(memcmp(first, la, sizeof(first)) != 0);
	pa[0] = V; /* out of the vocabulary */
	assert_int_equal(lp_llm_engine_set_prompt(a, pa, &err), -1);
	lp_llm_engine_free(a);
	lp_llm_engine_free(b);
}

static void test_options_are_checked(void **state)
{
	struct lp_llm_config c;
	struct lp_err err = LP_ERR_INIT;
	struct lp_llm_run_opts o = LP_LLM_RUN_OPTS_INIT;
	struct lp_llm_engine *e = NULL;
	(void)state;
	assert_int_equal(lp_llm_config_load("tiny", conf_dir(), &c, &err), 0);
	o.prompt_len = 1000;
	o.new_tokens = 25; /* 1025 > 1024 positions */
	assert_int_equal(lp_llm_engine_create(&c, &o, &e, &err), -1);
	assert_int_equal(err.kind, LP_EUSAGE);
	assert_non_null(strstr(err.msg, "over the 1024 positions"));
	assert_null(e);
	if (!lp_llm_have_cuda()) {
		o = (struct lp_llm_run_opts)LP_LLM_RUN_OPTS_INIT;
		o.device = LP_LLM_CUDA;
		assert_int_equal(lp_llm_engine_create(&c, &o, &e, &err), -1);
		assert_int_equal(err.kind, LP_EENV);
	}
}

static void test_flops_and_bytes(void **state)
{
	struct lp_llm_config c;
	struct lp_err err = LP_ERR_INIT;
	double f1, f2;
	(void)state;
	assert_int_equal(lp_llm_config_load("llama-3.2-1b", conf_dir(), &c, &err), 0);
	/* one decode token at position 0: 2 x (params read - embedding... ) + attention of 1 key */
	f1 = lp_llm_forward_flops(&c, 1, 0, 1);
	f2 = lp_llm_forward_flops(&c, 2, 0, 1);
	assert_true(fabs(f2 - 2 * f1) < 1e-6 * f1);
	/* matmul params of Llama 3.2 1B minus the tied embedding table, plus lm_head: ~1.236e9 */
	assert_true(f1 > 2 * 1.23e9 && f1 < 2 * 1.25e9);
	assert_true(lp_llm_decode_params_read(&c, 0) > 1.23e9 && lp_llm_decode_params_read(&c, 0) < 1.25e9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_seed_same_tokens),
		cmocka_unit_test(test_moe_model_runs),
		cmocka_unit_test(test_decode_matches_longer_prefill),
		cmocka_unit_test(test_options_are_checked),
		cmocka_unit_test(test_flops_and_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
