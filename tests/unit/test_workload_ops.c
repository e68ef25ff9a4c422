/* test_workload_ops.c: the CPU operators of the reference workload (workload/cpu_ops.c) against
 * straightforward double-precision references on small shapes, and the weight generator. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ops.h"
#include "rng.h"

static float frand(uint64_t i)
{
	return (float)lp_rng_sum4(7, 99, i) / LP_RNG_SUM4_STD;
}

static void fill(float *x, size_t n, uint64_t salt)
{
	size_t i;
	for (i = 0; i < n; i++)
		x[i] = frand(salt * 100003u + i);
}

static void assert_close(const float *got, const double *want, size_t n, double tol)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (fabs(got[i] - want[i]) > tol * (1.0 + fabs(want[i]))) {
			fail_msg("element %zu: got %.7g, want %.7g", i, (double)got[i], want[i]);
		}
}

static void test_bf16_rounding(void **state)
{
	(void)state;
	assert_int_equal(lp_bf16_from_f32(1.0f), 0x3F80);
	assert_int_equal(lp_bf16_from_f32(1.0f + 1.0f / 256), 0x3F80);      /* tie -> even */
	assert_int_equal(lp_bf16_from_f32(1.0f + 3.0f / 256), 0x3F82);      /* tie -> even (up) */
	assert_int_equal(lp_bf16_from_f32(-2.0f), 0xC000);
	assert_true(lp_bf16_to_f32(0x3F81) == 1.0f + 1.0f / 128);
}

static void test_weights_are_deterministic_and_scaled(void **state)
{
	struct lp_llm_config c;
	struct lp_llm_tensor_gen g;
	enum { N = 20000 };
	float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
	double mean = 0, var = 0;
	int i;
	(void)state;
	memset(&c, 0, sizeof(c));
	c.hidden_size = 256;
	g = lp_llm_tensor_gen(&c, LP_LLM_T_QKV, 3, 0);
	lp_llm_cpu_fill(a, N, 42, g);
	lp_llm_cpu_fill(b, N, 42, g);
	assert_memory_equal(a, b, N * sizeof(float));
	for (i = 0; i < N; i++) {
		assert_true(lp_bf16_to_f32(lp_bf16_from_f32(a[i])) == a[i]); /* bf16-exact */
		mean += a[i];
	}
	mean /= N;
	for (i = 0; i < N; i++)
		var += (a[i] - mean) * (a[i] - mean);
	var /= N;
	assert_true(fabs(mean) < 0.01 / 16);
	assert_true(fabs(sqrt(var) - 1.0 / 16) < 0.003); /* 1/sqrt(256) */
	lp_llm_cpu_fill(b, N, 43, g);                     /* another seed: other values */
	assert_true(memcmp(a, b, N * sizeof(float)) != 0);
	g = lp_llm_tensor_gen(&c, LP_LLM_T_QKV, 4, 0);    /* another layer: other values */
	lp_llm_cpu_fill(b, N, 42, g);
	assert_true(memcmp(a, b, N * sizeof(float)) != 0);
	free(a);
	free(b);
}

static void test_rmsnorm(void **state)
{
	enum { R = 3, N = 48 };
	float x[R * N], w[N], out[R * N];
	double want[R * N];
	int r, i;
	(void)state;
	fill(x, R * N, 1);
	fill(w, N, 2);
	lp_llm_cpu_rmsnorm(out, x, w, R, N, 1e-5f);
	for (r = 0; r < R; r++) {
		double ss = 0;
		for (i = 0; i < N; i++)
			ss += (double)x[r * N + i] * x[r * N + i];
		for (i = 0; i < N; i++)
			want[r * N + i] = x[r * N + i] / sqrt(ss / N + 1e-5) * w[i];
	}
	assert_close(out, want, R * N, 1e-5);
}

static void test_matmul_with_bias(void **state)
{
	enum { T = 3, N = 5, K = 7 };
	float x[T * K], w[N * K], b[N], y[T * N];
	double want[T * N];
	int t, n, k;
	(void)state;
	fill(x, T * K, 3);
	fill(w, N * K, 4);
	fill(b, N, 5);
	lp_llm_cpu_matmul(y, x, w, b, T, N, K);
	for (t = 0; t < T; t++)
		for (n = 0; n < N; n++) {
			double s = b[n];
			for (k = 0; k < K; k++)
				s += (double)x[t * K + k] * w[n * K + k];
			want[t * N + n] = s;
		}
	assert_close(y, want, T * N, 1e-5);
}

static void test_rope_rotates_half_pairs(void **state)
{
	enum { D = 32, H = 2, ROWS = 3, TN = 3, POS0 = 5, MAXP = 16 };
	float tab[MAXP * D], x[ROWS * H * D], orig[ROWS * H * D];
	double want[ROWS * H * D];
	int r, h, i;
	(void)state;
	lp_llm_rope_table(tab, MAXP, D, 10000.0);
	fill(x, ROWS * H * D, 6);
	memcpy(orig, x, sizeof(x));
	lp_llm_cpu_rope(x, ROWS, H * D, H, D, TN, POS0, tab);
	for (r = 0; r < ROWS; r++)
		for (h = 0; h < H; h++)
			for (i = 0; i < D / 2; i++) {
				double a = (POS0 + r % TN) * pow(10000.0, -2.0 * i / D);
				const float *o = orig + r * H * D + h * D;
				want[r * H * D + h * D + i] = o[i] * cos(a) - o[i + D / 2] * sin(a);
				want[r * H * D + h * D + i + D / 2] = o[i + D / 2] * cos(a) + o[i] * sin(a);
			}
	assert_close(x, want, ROWS * H * D, 1e-5);
	/* position 0 is the identity */
	memcpy(x, orig, sizeof(x));
	lp_llm_cpu_rope(x, 1, H * D, H, D, 1, 0, tab);
	assert_memory_equal(x, orig, sizeof(float) * H * D);
}

/* Two-pass softmax attention in double: scores, softmax, weighted sum. */
static void test_attention_gqa_causal(void **state)
{
	enum { B = 2, TN = 3, POS0 = 2, NH = 4, NKV = 2, D = 32, MAXP = 8 };
	float q[B * TN * NH * D], k[B * NKV * MAXP * D], v[B * NKV * MAXP * D], out[B * TN * NH * D];
	double want[B * TN * NH * D];
	int row, h, j, i;
	(void)state;
	fill(q, sizeof(q) / sizeof(q[0]), 7);
	fill(k, sizeof(k) / sizeof(k[0]), 8);
	fill(v, sizeof(v) / sizeof(v[0]), 9);
	lp_llm_cpu_attention(out, q, NH * D, k, v, B, TN, POS0, NH, NKV, D, MAXP);
	for (row = 0; row < B * TN; row++)
		for (h = 0; h < NH; h++) {
			int b = row / TN, nk = POS0 + row % TN + 1, kvh = h / (NH / NKV);
			double s[MAXP], m = -1e300, sum = 0;
			for (j = 0; j < nk; j++) {
				double d = 0;
				for (i = 0; i < D; i++)
					d += (double)q[row * NH * D + h * D + i] * k[((b * NKV + kvh) * MAXP + j) * D + i];
				s[j] = d / sqrt((double)D);
				m = s[j] > m ? s[j] : m;
			}
			for (j = 0; j < nk; j++)
				sum += s[j] = exp(s[j] - m);
			for (i = 0; i < D; i++) {
				double o = 0;
				for (j = 0; j < nk; j++)
					o += s[j] / sum * v[((b * NKV + kvh) * MAXP + j) * D + i];
				want[row * NH * D + h * D + i] = o;
			}
		}
	assert_close(out, want, sizeof(want) / sizeof(want[0]), 1e-5);
}

static void test_softmax_and_swiglu(void **state)
{
	float x[6] = { 1, 2, 3, -1, 0, 1000 }, gu[2 * 4], out[4];
	double sum = 0, want[4];
	int i;
	(void)state;
	lp_llm_cpu_softmax(x, 5);
	for (i = 0; i < 5; i++)
		sum += x[i];
	assert_true(fabs(sum - 1.0) < 1e-6);
	assert_true(fabs(x[2] - exp(3.0) / (exp(1.0) + exp(2.0) + exp(3.0) + exp(-1.0) + 1.0)) < 1e-6);
	lp_llm_cpu_softmax(x + 5, 1); /* no overflow on large inputs */
	assert_true(x[5] == 1.0f);
	fill(gu, 8, 10);
	lp_llm_cpu_swiglu(out, gu, 1, 4);
	for (i = 0; i < 4; i++)
		want[i] = gu[i] / (1.0 + exp(-(double)gu[i])) * gu[4 + i];
	assert_close(out, want, 4, 1e-6);
}

static void test_moe_route_topk(void **state)
{
	/* token 0: clear order 3 > 1 > 0; token 1: a tie between 0 and 2 goes to the lower id */
	float logits[2 * 4] = { 0.5f, 1.0f, -2.0f, 2.0f, 1.0f, -1.0f, 1.0f, 0.0f };
	int32_t ids[2 * 2];
	float w[2 * 2], p[4];
	(void)state;
	lp_llm_cpu_moe_route(logits, 2, 4, 2, LP_LLM_GATE_SOFTMAX, 0, 1.0f, ids, w);
	assert_int_equal(ids[0], 3);
	assert_int_equal(ids[1], 1);
	assert_int_equal(ids[2], 0);
	assert_int_equal(ids[3], 2);
	memcpy(p, logits, sizeof(p));
	lp_llm_cpu_softmax(p, 4);
	assert_true(fabsf(w[0] - p[3]) < 1e-7f && fabsf(w[1] - p[1]) < 1e-7f);
	/* renormalised and scaled */
	lp_llm_cpu_moe_route(logits, 2, 4, 2, LP_LLM_GATE_SOFTMAX, 1, 2.0f, ids, w);
	assert_true(fabsf(w[0] + w[1] - 2.0f) < 1e-6f);
	assert_true(fabsf(w[0] / w[1] - p[3] / p[1]) < 1e-5f);
	/* sigmoid gate: weights are the sigmoids themselves */
	lp_llm_cpu_moe_route(logits, 1, 4, 1, LP_LLM_GATE_SIGMOID, 0, 1.0f, ids, w);
	assert_int_equal(ids[0], 3);
	assert_true(fabsf(w[0] - 1.0f / (1.0f + expf(-2.0f))) < 1e-7f);
}

static void test_argmax_ties_go_low(void **state)
{
	float x[5] = { 1, 3, 2, 3, -1 };
	(void)state;
	assert_int_equal(lp_llm_cpu_argmax(x, 5), 1);
	assert_int_equal(lp_llm_cpu_argmax(x + 2, 3), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bf16_rounding),
		cmocka_unit_test(test_weights_are_deterministic_and_scaled),
		cmocka_unit_test(test_rmsnorm),
		cmocka_unit_test(test_matmul_with_bias),
		cmocka_unit_test(test_rope_rotates_half_pairs),
		cmocka_unit_test(test_attention_gqa_causal),
		cmocka_unit_test(test_softmax_and_swiglu),
		cmocka_unit_test(test_moe_route_topk),
		cmocka_unit_test(test_argmax_ties_go_low),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
