/* test_operators.c: the operator table (src/analyze/operators.c): inclusive vs exclusive GPU time,
 * PyTorch suffix stripping, nested same-name ops, warm-up exclusion, ops without kernels, synthetic
 * (CUDA graph launch) copies of op ranges. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/operators.h"

#define MS 1000000ull

static int32_t R(struct lp_profile *p, int32_t parent, const char *domain, const char *name, uint64_t s, uint64_t e)
{
	return lp_test_range(p, parent, domain, name, s, e);
}

static void K(struct lp_profile *p, int32_t range, const char *name, uint64_t s, uint64_t e)
{
	lp_test_kernel(p, range, name, s, e);
}

static const struct lp_op_row *find(const struct lp_op_table *t, const char *stage, const char *name)
{
	size_t i;
	for (i = 0; i < t->n_rows; i++)
		if (!strcmp(t->rows[i].stage, stage) && !strcmp(t->rows[i].name, name))
			return &t->rows[i];
	return NULL;
}

static void test_inclusive_exclusive_and_suffixes(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_op_table t;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_op_row *r;
	int32_t w, dec, layer, qkv, lin, lin2, mm, view;
	int i;
	(void)state;
	lp_profile_init(&p, "ops");
	w = R(&p, -1, "LLM", "warmup", 0, 50 * MS);
	K(&p, R(&p, w, "LLM", "qkv", 1 * MS, 2 * MS), "gemm", 1 * MS, 2 * MS);
	dec = R(&p, -1, "LLM", "decode_all", 100 * MS, 200 * MS);
	for (i = 0; i < 2; i++) {
		uint64_t t0 = (uint64_t)(100 + 40 * i) * MS;
		layer = R(&p, dec, "LLM", "layer", t0, t0 + 30 * MS);
		qkv = R(&p, layer, "LLM", "qkv", t0, t0 + 10 * MS);
		K(&p, qkv, "gemm", t0 + 1 * MS, t0 + 4 * MS);          /* 3 ms in qkv */
		K(&p, layer, "add", t0 + 20 * MS, t0 + 21 * MS);       /* 1 ms directly in layer */
	}
	/* PyTorch: aten::linear > aten::linear (nested same name) > aten::mm with a kernel */
	lin = R(&p, dec, "", "aten::linear, seq = 3", 180 * MS, 190 * MS);
	lin2 = R(&p, lin, "", "aten::linear, op_id = 4", 181 * MS, 189 * MS);
	mm = R(&p, lin2, "", "aten::mm, seq = 5", 182 * MS, 188 * MS);
	K(&p, mm, "nvjet_gemm", 183 * MS, 185 * MS);               /* 2 ms */
	K(&p, lin2, "bias_add", 186 * MS, 187 * MS);               /* 1 ms, exclusive to linear */
	view = R(&p, dec, "", "aten::view, seq = 9", 191 * MS, 192 * MS);
	(void)view;
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	assert_int_equal(lp_operators_compute(&p, &st, &t, &err), 0);

	r = find(&t, "decode_all", "layer");
	assert_non_null(r);
	assert_int_equal(r->calls, 2);
	assert_true(fabs(r->gpu_incl_ms - 8.0) < 1e-9);   /* 2 x (3 + 1) */
	assert_true(fabs(r->gpu_excl_ms - 2.0) < 1e-9);   /* 2 x 1 */
	assert_true(fabs(r->host_ms - 60.0) < 1e-9);
	r = find(&t, "decode_all", "qkv");
	assert_non_null(r);
	assert_true(fabs(r->gpu_incl_ms - 6.0) < 1e-9 && fabs(r->gpu_excl_ms - 6.0) < 1e-9);
	/* stage kernel time 8 + 3 = 11 ms: qkv share 6/11 */
	assert_true(fabs(r->share - 6.0 / 11.0) < 1e-9);
	/* suffixes stripped; the nested linear counts as a call but not twice in the times */
	r = find(&t, "decode_all", "aten::linear");
	assert_non_null(r);
	assert_true(r->pytorch);
	assert_int_equal(r->calls, 2);
	assert_true(fabs(r->gpu_incl_ms - 3.0) < 1e-9);
	assert_true(fabs(r->gpu_excl_ms - 1.0) < 1e-9);
	assert_true(fabs(r->host_ms - 10.0) < 1e-9);
	r = find(&t, "decode_all", "aten::mm");
	assert_non_null(r);
	assert_true(fabs(r->gpu_excl_ms - 2.0) < 1e-9);
	assert_null(r->zero_gpu_why);
	/* a view launches nothing: explained */
	r = find(&t, "decode_all", "aten::view");
	assert_non_null(r);
	assert_int_equal(r->kernels, 0);
	assert_non_null(r->zero_gpu_why);
	assert_non_null(strstr(r->zero_gpu_why, "CPU-only"));
	/* the warm-up qkv is nowhere */
	assert_null(find(&t, "other", "qkv"));
	assert_int_equal(t.n_rows, 5);
	/* sorted by stage then inclusive GPU time */
	assert_string_equal(t.rows[0].name, "layer");
	lp_op_table_release(&t);
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

/* An op captured into a CUDA graph outside the stages, replayed twice under decode_all: the trace
 * reader makes one synthetic copy per launch (GPU span as its times). Calls and GPU time go to the
 * decode stage; host time only to the capture-time range. */
static void test_synthetic_graph_copies(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_op_table t;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_op_row *r;
	int32_t cap, dec, copy;
	int i;
	(void)state;
	lp_profile_init(&p, "ops");
	cap = R(&p, -1, "LLM", "attention", 1 * MS, 3 * MS);     /* capture: 2 ms host, no kernel */
	dec = R(&p, -1, "LLM", "decode_all", 100 * MS, 200 * MS);
	for (i = 0; i < 2; i++) {
		uint64_t t0 = (uint64_t)(110 + 40 * i) * MS;
		copy = R(&p, dec, "LLM", "attention", t0, t0 + 5 * MS);
		p.ranges[copy].synthetic = 1;
		K(&p, copy, "attn", t0, t0 + 5 * MS);
	}
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	assert_int_equal(lp_operators_compute(&p, &st, &t, &err), 0);
	r = find(&t, "decode_all", "attention");
	assert_non_null(r);
	assert_int_equal(r->calls, 2);
	assert_int_equal(r->kernels, 2);
	assert_true(fabs(r->gpu_incl_ms - 10.0) < 1e-9);
	assert_true(r->host_ms == 0.0);
	r = find(&t, "other", "attention");
	assert_non_null(r);
	assert_true(fabs(r->host_ms - 2.0) < 1e-9);
	assert_int_equal(r->kernels, 0);
	(void)cap;
	lp_op_table_release(&t);
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

static void test_strip_and_classify(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	(void)state;
	lp_op_strip_suffix("aten::mm, seq = 5", &b);
	assert_string_equal(b.data, "aten::mm");
	lp_op_strip_suffix("aten::add, op_id = 12", &b);
	assert_string_equal(b.data, "aten::add");
	lp_op_strip_suffix("aten::addmm, seq = 1, op_id = 2", &b);
	assert_string_equal(b.data, "aten::addmm");
	lp_op_strip_suffix("qkv", &b);
	assert_string_equal(b.data, "qkv");
	assert_true(lp_op_is_pytorch("aten::mm"));
	assert_false(lp_op_is_pytorch("sam"));
	assert_true(lp_op_is_known("shared_experts"));
	assert_false(lp_op_is_known("clip"));
	lp_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inclusive_exclusive_and_suffixes),
		cmocka_unit_test(test_synthetic_graph_copies),
		cmocka_unit_test(test_strip_and_classify),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
