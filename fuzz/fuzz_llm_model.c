/* fuzz_llm_model.c: the model-shape reader (config/llm_model.h): an llmprof model file or a
 * Hugging Face config.json (top level, language_config or text_config), as `llmprof run`
 * (model.hf_config) and llmprof-llm read them. The bytes are read as the file would be (YAML, of
 * which JSON is a part); a config that loads must pass validation, give sizes and FLOPs without
 * undefined behaviour, and load again from the model keys it gives (lp_llm_config_to_json) with the
 * same shape. Corpus: fuzz/corpus/llm_model (the model files of conf/model/llm/ and the config.json files of tests/fixtures/hf/). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/llm_model.h"
#include "config/yaml.h"
#include "scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_shape(const struct lp_llm_config *a, const struct lp_llm_config *b)
{
	if (a->family != b->family || a->vocab_size != b->vocab_size || a->hidden_size != b->hidden_size ||
	    a->intermediate_size != b->intermediate_size || a->num_hidden_layers != b->num_hidden_layers ||
	    a->num_attention_heads != b->num_attention_heads || a->num_key_value_heads != b->num_key_value_heads ||
	    a->head_dim != b->head_dim || a->n_routed_experts != b->n_routed_experts ||
	    a->num_experts_per_tok != b->num_experts_per_tok || a->moe_intermediate_size != b->moe_intermediate_size ||
	    a->first_k_dense_replace != b->first_k_dense_replace)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lp_llm_config cfg, again;
	struct lp_err err = LP_ERR_INIT;
	json_t *doc = NULL, *keys;
	char path[4096];
	volatile double sink = 0;
	if (size > (1u << 16))
		return 0;
	if (lp_yaml_load_string((const char *)data, size, "config.json", &doc, &err) < 0)
		return 0;
	if (lp_llm_config_from_json(doc, "config.json", &cfg, &err) < 0) {
		if (!err.msg[0] || strchr(err.msg, '\n'))
			abort();   /* a refusal is one line naming the field */
		json_decref(doc);
		return 0;
	}
	json_decref(doc);
	if (lp_llm_config_validate(&cfg, "config.json", &err) < 0)
		abort();   /* the loader validated it */
	sink += (double)lp_llm_param_count(&cfg);
	sink += (double)lp_llm_decode_params_read(&cfg, cfg.num_experts_per_tok);
	sink += lp_llm_forward_flops(&cfg, 1, 0, 128);
	sink += lp_llm_forward_flops(&cfg, 8, 4096, 1);
	keys = lp_llm_config_to_json(&cfg);
	if (!keys)
		return 0;
	if (lp_llm_config_from_json(keys, "model keys", &again, &err) < 0)
		abort();   /* the model.* keys of a valid config load */
	json_decref(keys);
	same_shape(&cfg, &again);
	/* the path form, as `llmprof-llm --model FILE` takes it */
	if (lp_fuzz_scratch_write("config.json", data, size, path, sizeof(path)) == 0 &&
	    lp_llm_config_load(path, NULL, &again, &err) == 0)
		same_shape(&cfg, &again);
	(void)sink;
	return 0;
}
