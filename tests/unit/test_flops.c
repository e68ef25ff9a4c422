/* test_flops.c: model FLOPs and minimum bytes (src/analyze/flops.c) against values computed by
 * hand for llama-3.2-1b and deepseek-ocr-lm; the arithmetic is written out next to each value. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/flops.h"
#include "config/yaml.h"

static json_t *load(const char *text)
{
	json_t *v = NULL;
	struct lp_err err = LP_ERR_INIT;
	assert_int_equal(lp_yaml_load_string(text, strlen(text), "model.yaml", &v, &err), 0);
	return v;
}

static const char *llama_yaml =
	"name: llama-3.2-1b\nfamily: llama\ndtype: bf16\nvocab_size: 128256\nhidden_size: 2048\n"
	"intermediate_size: 8192\nnum_hidden_layers: 16\nnum_attention_heads: 32\nnum_key_value_heads: 8\n"
	"head_dim: 64\ntie_word_embeddings: true\nn_routed_experts: 0\nn_shared_experts: 0\n"
	"num_experts_per_tok: 0\nmoe_intermediate_size: 0\nfirst_k_dense_replace: 0\n";

static const char *deepseek_yaml =
	"name: deepseek-ocr-lm\nfamily: deepseek_v2\ndtype: bf16\nvocab_size: 129280\nhidden_size: 1280\n"
	"intermediate_size: 6848\nnum_hidden_layers: 12\nnum_attention_heads: 10\nnum_key_value_heads: 10\n"
	"head_dim: 128\ntie_word_embeddings: false\nn_routed_experts: 64\nn_shared_experts: 2\n"
	"num_experts_per_tok: 6\nmoe_intermediate_size: 896\nfirst_k_dense_replace: 1\n";

static void shape(const char *yaml, struct lp_model_shape *m)
{
	struct lp_err err = LP_ERR_INIT;
	json_t *v = load(yaml);
	assert_int_equal(lp_model_shape_from_json(v, m, &err), 0);
	json_decref(v);
}

static void test_llama_params_and_flops(void **state)
{
	struct lp_model_shape m;
	struct lp_model_params p;
	(void)state;
	shape(llama_yaml, &m);
	lp_model_params(&m, &p);
	/* attention per layer: q 2048*(32*64) = 4,194,304; k, v 2*2048*(8*64) = 2,097,152;
	 * o (32*64)*2048 = 4,194,304; total 10,485,760 */
	assert_true(p.attn_per_layer == 10485760.0);
	/* SwiGLU: 3 * 2048 * 8192 = 50,331,648 */
	assert_true(p.dense_mlp_per_layer == 50331648.0);
	/* lm_head 128256 * 2048 = 262,668,288; norms 2*2048*16 + 2048 = 67,584 */
	assert_true(p.lm_head == 262668288.0);
	assert_true(p.norms == 67584.0);
	/* matmul active: 16 * (10,485,760 + 50,331,648) + 262,668,288 = 1,235,746,816 */
	assert_true(p.matmul_active == 1235746816.0);
	/* stored (tied): 973,078,528 + 67,584 + 262,668,288 = 1,235,814,400 (Meta: 1.24B) */
	assert_true(p.total == 1235814400.0);
	/* attention per key position: 4 * 16 * 32 * 64 = 131,072 */
	assert_true(lp_flops_attention_per_ctx(&m) == 131072.0);
	/* decode, batch 1, prompt 512, 128 steps:
	 * 128 * 2 * 1,235,746,816 = 316,351,184,896
	 * + 131,072 * (128*512 + 128*129/2 = 65,536 + 8,256 = 73,792) = 9,672,065,024
	 * = 326,023,249,920 */
	assert_true(lp_flops_decode(&m, 1, 512, 128) == 326023249920.0);
	/* prefill, batch 1, 512 tokens: 512 * 2 * (1,235,746,816 - 262,668,288) = 996,432,412,672
	 * + 2 * 262,668,288 (lm_head, last position) = 525,336,576
	 * + 131,072 * 512*513/2 (= 131,328) = 17,213,423,616
	 * = 1,014,171,172,864 */
	assert_true(lp_flops_prefill(&m, 1, 512) == 1014171172864.0);
	/* batch scales linearly */
	assert_true(lp_flops_prefill(&m, 4, 512) == 4.0 * 1014171172864.0);
}

static void test_llama_bytes(void **state)
{
	struct lp_model_shape m;
	(void)state;
	shape(llama_yaml, &m);
	/* weights per decode step (1 token), bf16 = 2 bytes:
	 * 2 * (16*(10,485,760 + 50,331,648) + 67,584 + 262,668,288 + 1*2048) = 2 * 1,235,816,448
	 * = 2,471,632,896 */
	assert_true(lp_bytes_weights_step(&m, 1) == 2471632896.0);
	/* KV bytes per position: 2 (K,V) * 16 layers * 8 heads * 64 * 2 bytes = 32,768
	 * decode 128 steps after 512: 128 * 2,471,632,896 = 316,368,994,688
	 * + 32,768 * (128*512 + 128*127/2 + 128 = 65,536 + 8,128 + 128 = 73,792) = 2,418,032,256
	 * = 318,787,026,944 */
	assert_true(lp_bytes_decode(&m, 1, 512, 128) == 318787026944.0);
	/* prefill 512: weights 2*(1,235,814,400 + 512*2048) = 2,473,725,952 + KV 512*32,768 = 16,777,216
	 * = 2,490,503,168 */
	assert_true(lp_bytes_prefill(&m, 1, 512) == 2490503168.0);
}

static void test_deepseek_moe(void **state)
{
	struct lp_model_shape m;
	struct lp_model_params p;
	double w8;
	(void)state;
	shape(deepseek_yaml, &m);
	lp_model_params(&m, &p);
	/* attention: 4 * 1280 * (10*128 = 1280) = 6,553,600 (MHA: kv heads = heads) */
	assert_true(p.attn_per_layer == 6553600.0);
	/* dense layer 0: 3 * 1280 * 6848 = 26,296,320 */
	assert_true(p.dense_mlp_per_layer == 26296320.0);
	/* one expert 3 * 1280 * 896 = 3,440,640; router 1280 * 64 = 81,920; shared 2 * 3,440,640 */
	assert_true(p.expert == 3440640.0);
	assert_true(p.router_per_layer == 81920.0);
	assert_true(p.shared_per_layer == 6881280.0);
	assert_int_equal(p.n_dense_layers, 1);
	assert_int_equal(p.n_moe_layers, 11);
	/* active: 12*6,553,600 = 78,643,200 + 26,296,320
	 * + 11 * (81,920 + 6*3,440,640 + 6,881,280 = 27,607,040) = 303,677,440
	 * + lm_head 129,280*1280 = 165,478,400  => 574,095,360 ("570M activated") */
	assert_true(p.matmul_active == 574095360.0);
	/* stored: 78,643,200 + 26,296,320 + 11*(81,920 + 64*3,440,640 + 6,881,280) = 2,498,862,080
	 * + norms 2*1280*12 + 1280 = 32,000 + embed and untied lm_head 2*165,478,400 => 2,934,734,080 */
	assert_true(p.total == 2934734080.0);
	/* attention per position 4*12*10*128 = 61,440; decode b=1 P=256 n=64:
	 * 64*2*574,095,360 = 73,484,206,080 + 61,440*(64*256 + 64*65/2 = 16,384 + 2,080) = 1,134,428,160
	 * = 74,618,634,240 */
	assert_true(lp_flops_decode(&m, 1, 256, 64) == 74618634240.0);
	/* experts touched: 1 token -> exactly k = 6; 8 tokens -> 64*(1 - (58/64)^8) = 34.8818... */
	assert_true(fabs(lp_moe_experts_touched(&m, 1) - 6.0) < 1e-12);
	assert_true(fabs(lp_moe_experts_touched(&m, 8) - 34.881826421187725) < 1e-9);
	/* weights per step, 1 token: 2 * (78,643,200 + 26,296,320 + 11*(81,920 + 6,881,280 + 6*3,440,640)
	 * + 32,000 + 165,478,400 + 1280) = 2 * 574,128,640 = 1,148,257,280 */
	assert_true(lp_bytes_weights_step(&m, 1) == 1148257280.0);
	/* 8 tokens: 34.8818... experts instead of 6 per MoE layer */
	w8 = lp_bytes_weights_step(&m, 8);
	assert_true(fabs(w8 - 3334458479.6714973) < 1e-3);
	/* decode batch 8, P 256, 64 steps: 64*W8 + 8 * (2*12*10*128*2 = 61,440)
	 * * (64*256 + 64*63/2 + 64 = 16,384 + 2,016 + 64 = 18,464) */
	assert_true(fabs(lp_bytes_decode(&m, 8, 256, 64) - (64.0 * w8 + 8.0 * 61440.0 * 18464.0)) < 1e-2);
}

static void test_shape_errors(void **state)
{
	struct lp_model_shape m;
	struct lp_err err = LP_ERR_INIT;
	json_t *v = load("hidden_size: 128\nnum_hidden_layers: 2\nvocab_size: 10\nintermediate_size: 4\n");
	(void)state;
	assert_int_equal(lp_model_shape_from_json(v, &m, &err), -1);
	assert_string_equal(err.msg, "model shape lacks 'model.num_attention_heads'");
	json_decref(v);
	v = load("hidden_size: x\n");
	assert_int_equal(lp_model_shape_from_json(v, &m, &err), -1);
	assert_string_equal(err.msg, "'model.hidden_size' is not an integer");
	json_decref(v);
	assert_int_equal(lp_model_shape_from_json(NULL, &m, &err), -1);
	/* head_dim and kv heads default to hidden/heads and heads */
	v = load("hidden_size: 128\nnum_hidden_layers: 2\nvocab_size: 10\nintermediate_size: 4\nnum_attention_heads: 4\n");
	assert_int_equal(lp_model_shape_from_json(v, &m, &err), 0);
	assert_int_equal(m.head_dim, 32);
	assert_int_equal(m.num_key_value_heads, 4);
	json_decref(v);
	assert_int_equal(lp_dtype_bytes("bf16"), 2);
	assert_int_equal(lp_dtype_bytes("fp32"), 4);
	assert_int_equal(lp_dtype_bytes("int3"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_llama_params_and_flops),
		cmocka_unit_test(test_llama_bytes),
		cmocka_unit_test(test_deepseek_moe),
		cmocka_unit_test(test_shape_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
