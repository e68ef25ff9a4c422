/* test_workload_config.c: model shapes for the reference workload (workload/config.c): the
 * shipped conf/model/llm/ files, Hugging Face config.json mapping (top level,
 * language_config, text_config) and the errors for what the engine cannot run. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "llm.h"

/* conf/: $LLMPROF_CONF_DIR when set (a build carried to another machine), else the source tree's */
static const char *conf_dir(void)
{
	const char *e = getenv("LLMPROF_CONF_DIR");
	return e && *e ? e : LP_CONF_DIR;
}

static void test_shipped_models_load(void **state)
{
	const struct { const char *name; double params_b; } models[] = {
		{ "tiny", 0.00046 }, { "tiny-moe", 0.0 }, { "llama-3.2-1b", 1.236 },
		{ "qwen2.5-1.5b", 1.544 }, { "llama-3.1-8b", 8.030 }, { "deepseek-ocr-lm", 0.0 },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		struct lp_llm_config c;
		struct lp_err err = LP_ERR_INIT;
		double p;
		if (lp_llm_config_load(models[i].name, conf_dir(), &c, &err) < 0)
			fail_msg("%s: %s", models[i].name, err.msg);
		assert_string_equal(c.name, models[i].name);
		p = (double)lp_llm_param_count(&c) / 1e9;
		if (models[i].params_b > 0 && (p < models[i].params_b * 0.99 || p > models[i].params_b * 1.01))
			fail_msg("%s: %.4f B parameters, expected about %.4f B", models[i].name, p, models[i].params_b);
	}
}

static void test_deepseek_ocr_shape(void **state)
{
	struct lp_llm_config c;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_int_equal(lp_llm_config_load("deepseek-ocr-lm", conf_dir(), &c, &err), 0);
	assert_int_equal(c.family, LP_LLM_DEEPSEEK_V2);
	assert_int_equal(c.hidden_size, 1280);
	assert_int_equal(c.num_hidden_layers, 12);
	assert_int_equal(c.head_dim, 128);
	assert_int_equal(c.n_routed_experts, 64);
	assert_int_equal(c.num_experts_per_tok, 6);
	assert_int_equal(c.n_shared_experts, 2);
	assert_int_equal(c.moe_intermediate_size, 896);
	assert_int_equal(c.first_k_dense_replace, 1);
	assert_int_equal(c.vocab_size, 129280);
	assert_false(lp_llm_layer_is_moe(&c, 0));
	assert_true(lp_llm_layer_is_moe(&c, 1));
}

static void load_hf(const char *fixture, struct lp_llm_config *c)
{
	struct lp_err err = LP_ERR_INIT;
	if (lp_llm_config_load(lp_test_fixture(fixture), NULL, c, &err) < 0)
		fail_msg("%s: %s", fixture, err.msg);
}

static void test_hf_top_level_matches_yaml(void **state)
{
	struct lp_llm_config hf, y;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	load_hf("hf/llama-3.2-1b.json", &hf);
	assert_int_equal(lp_llm_config_load("llama-3.2-1b", conf_dir(), &y, &err), 0);
	assert_int_equal(hf.family, LP_LLM_LLAMA);
	assert_int_equal(hf.vocab_size, y.vocab_size);
	assert_int_equal(hf.hidden_size, y.hidden_size);
	assert_int_equal(hf.intermediate_size, y.intermediate_size);
	assert_int_equal(hf.num_hidden_layers, y.num_hidden_layers);
	assert_int_equal(hf.num_attention_heads, y.num_attention_heads);
	assert_int_equal(hf.num_key_value_heads, y.num_key_value_heads);
	assert_int_equal(hf.head_dim, y.head_dim);
	assert_int_equal(hf.tie_word_embeddings, 1);
	assert_true(hf.rope_theta == 500000.0);
	assert_true(hf.rms_norm_eps == 1e-5);
	assert_int_equal(lp_llm_param_count(&hf), lp_llm_param_count(&y));
	load_hf("hf/qwen2.5-1.5b.json", &hf);
	assert_int_equal(hf.family, LP_LLM_QWEN2);
	assert_int_equal(hf.attention_bias, 1);
	assert_int_equal(hf.head_dim, 128); /* default: hidden / heads */
	assert_int_equal(hf.num_key_value_heads, 2);
}

static void test_hf_language_config(void **state)
{
	struct lp_llm_config c, y;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	load_hf("hf/deepseek-ocr.json", &c);
	assert_int_equal(lp_llm_config_load("deepseek-ocr-lm", conf_dir(), &y, &err), 0);
	assert_string_equal(c.name, "DeepSeek-OCR");
	assert_int_equal(c.family, LP_LLM_DEEPSEEK_V2);
	assert_int_equal(c.hidden_size, 1280);
	assert_int_equal(c.n_routed_experts, 64);
	assert_int_equal(c.num_experts_per_tok, 6);
	assert_int_equal(c.n_shared_experts, 2);
	assert_int_equal(c.first_k_dense_replace, 1);
	assert_int_equal(c.head_dim, 128);
	assert_int_equal(c.scoring_func, LP_LLM_GATE_SOFTMAX);
	assert_int_equal(lp_llm_param_count(&c), lp_llm_param_count(&y));
}

static void test_hf_text_config(void **state)
{
	struct lp_llm_config c;
	(void)state;
	load_hf("hf/llava-llama.json", &c);
	assert_int_equal(c.family, LP_LLM_LLAMA); /* from the wrapper's model_type */
	assert_int_equal(c.hidden_size, 4096);
	assert_int_equal(c.num_key_value_heads, 32); /* default: the head count */
	assert_int_equal(c.head_dim, 128);
	assert_int_equal(c.vocab_size, 32064);
	assert_int_equal(c.tie_word_embeddings, 0);
}

static void expect_error(const char *fixture, const char *needle)
{
	struct lp_llm_config c;
	struct lp_err err = LP_ERR_INIT;
	assert_int_equal(lp_llm_config_load(lp_test_fixture(fixture), NULL, &c, &err), -1);
	assert_int_equal(err.kind, LP_EUSAGE);
	if (!strstr(err.msg, needle))
		fail_msg("%s: message '%s' does not name '%s'", fixture, err.msg, needle);
}

static void test_hf_unsupported_architectures(void **state)
{
	(void)state;
	expect_error("hf/deepseek-v2-lite.json", "'kv_lora_rank'");
	expect_error("hf/gemma3-text.json", "'gemma3_text'");
	expect_error("hf/gemma3-text.json", "'model_type'");
}

static struct lp_llm_config from_text(const char *text, struct lp_err *err, int *rc)
{
	struct lp_llm_config c;
	json_t *doc = NULL;
	memset(&c, 0, sizeof(c));
	*rc = lp_yaml_load_string(text, strlen(text), "m.yaml", &doc, err);
	if (*rc == 0)
		*rc = lp_llm_config_from_json(doc, "m.yaml", &c, err);
	json_decref(doc);
	return c;
}

static void test_model_file_errors(void **state)
{
	struct lp_err err = LP_ERR_INIT;
	int rc;
	const char *base = "name: x\nfamily: llama\nvocab_size: 64\nhidden_size: 64\nintermediate_size: 128\n"
			   "num_hidden_layers: 1\nnum_attention_heads: 2\nmax_position_embeddings: 64\n";
	struct lp_buf b = LP_BUF_INIT;
	struct lp_llm_config c;
	(void)state;
	c = from_text(base, &err, &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(c.num_key_value_heads, 2);
	assert_int_equal(c.head_dim, 32);

	lp_buf_addf(&b, "%shiden_size2: 3\n", base);
	from_text(b.data, &err, &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(err.msg, "m.yaml: unknown key 'hiden_size2'");
	assert_string_equal(err.hint, "did you mean 'hidden_size'?");

	lp_buf_reset(&b);
	lp_buf_addf(&b, "%snum_key_value_heads: 3\n", base);
	from_text(b.data, &err, &rc);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err.msg, "'num_key_value_heads'"));

	from_text("family: gpt2\n", &err, &rc);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err.msg, "'family' value 'gpt2'"));

	from_text("family: llama\nvocab_size: 3\n", &err, &rc);
	assert_int_equal(rc, -1);
	assert_string_equal(err.msg, "m.yaml: missing field 'hidden_size'");
	lp_buf_release(&b);
}

static void test_unknown_name(void **state)
{
	struct lp_llm_config c;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_int_equal(lp_llm_config_load("no-such-model", conf_dir(), &c, &err), -1);
	assert_int_equal(err.kind, LP_EUSAGE);
	assert_non_null(strstr(err.msg, "unknown model 'no-such-model'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shipped_models_load),
		cmocka_unit_test(test_deepseek_ocr_shape),
		cmocka_unit_test(test_hf_top_level_matches_yaml),
		cmocka_unit_test(test_hf_language_config),
		cmocka_unit_test(test_hf_text_config),
		cmocka_unit_test(test_hf_unsupported_architectures),
		cmocka_unit_test(test_model_file_errors),
		cmocka_unit_test(test_unknown_name),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
