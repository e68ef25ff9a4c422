/* test_gpu_workload.c: every CUDA kernel of the reference workload (workload/cuda_api.h) against
 * its CPU reference (workload/cpu_ops.h) on small shapes, then the CUDA engine against the CPU
 * engine on `tiny` and `tiny-moe`: logits within the bf16 tolerance, the same greedy tokens.
 * Skips (77) without a GPU or in a build without the CUDA path. Observed errors go to stderr. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_ops.h"
#include "llm.h"
#include "rng.h"

#ifdef LP_LLM_HAVE_CUDA
#include "cuda_api.h"

/* conf/: $LLMPROF_CONF_DIR when set (a build carried to another machine), else the source tree's */
static const char *conf_dir(void)
{
	const char *e = getenv("LLMPROF_CONF_DIR");
	return e && *e ? e : LP_CONF_DIR;
}

static struct lp_err g_err;

#define TRY(expr)                                                           \
	do {                                                                \
		lp_err_clear(&g_err);                                       \
		if ((expr) < 0)                                             \
			fail_msg("%s:%d: %s", __FILE__, __LINE__, g_err.msg); \
	} while (0)

/* random bf16-exact floats and their bits */
static void rand_bf16(float *f, uint16_t *b, size_t n, uint64_t salt, float scale)
{
	size_t i;
	for (i = 0; i < n; i++) {
		float v = (float)lp_rng_sum4(99, salt, i) / LP_RNG_SUM4_STD * scale;
		b[i] = lp_bf16_from_f32(v);
		f[i] = lp_bf16_to_f32(b[i]);
	}
}

static void *dev(const void *host, size_t bytes)
{
	void *p = NULL;
	TRY(lp_llm_cuda_malloc(&p, bytes, &g_err));
	if (host)
		TRY(lp_llm_cuda_h2d(p, host, bytes, &g_err));
	return p;
}

static void get(void *host, const void *d, size_t bytes)
{
	TRY(lp_llm_cuda_sync(&g_err));
	TRY(lp_llm_cuda_d2h(host, d, bytes, &g_err));
}

/* max |got - want| / (atol + rtol |want|) must be <= 1 */
static void close_bf16(const char *what, const uint16_t *got, const float *want, size_t n, float atol,
	float rtol)
{
	size_t i;
	for (i = 0; i < n; i++) {
		float g = lp_bf16_to_f32(got[i]);
		if (!(fabsf(g - want[i]) <= atol + rtol * fabsf(want[i])))
			fail_msg("%s[%zu]: got %.6g, want %.6g", what, i, (double)g, (double)want[i]);
	}
}

static void close_f32(const char *what, const float *got, const float *want, size_t n, float atol,
	float rtol)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (!(fabsf(got[i] - want[i]) <= atol + rtol * fabsf(want[i])))
			fail_msg("%s[%zu]: got %.7g, want %.7g", what, i, (double)got[i], (double)want[i]);
}

static void test_fill_is_bit_identical(void **state)
{
	enum { N = 100003 };
	struct lp_llm_config c;
	struct lp_llm_tensor_gen g;
	float *cpu = malloc(N * sizeof(float));
	uint16_t *got = malloc(N * sizeof(uint16_t)), *d;
	size_t i;
	(void)state;
	memset(&c, 0, sizeof(c));
	c.hidden_size = 2048;
	c.num_attention_heads = 32;
	c.head_dim = 64;
	for (i = 0; i < 2; i++) {
		g = lp_llm_tensor_gen(&c, i ? LP_LLM_T_ATTN_NORM : LP_LLM_T_O, 3, 0);
		lp_llm_cpu_fill(cpu, N, 1234, g);
		d = dev(NULL, N * 2);
		TRY(lp_llm_k_fill(d, N, 1234, g, NULL, &g_err));
		get(got, d, N * 2);
		for (size_t j = 0; j < N; j++)
			if (lp_bf16_to_f32(got[j]) != cpu[j])
				fail_msg("weight %zu differs: gpu %.8g cpu %.8g", j, (double)lp_bf16_to_f32(got[j]), (double)cpu[j]);
		lp_llm_cuda_free(d);
	}
	free(cpu);
	free(got);
}

static void test_embed_and_rmsnorm(void **state)
{
	enum { V = 10, H = 96, ROWS = 6 };
	float tf[V * H], x[ROWS * H], xg[ROWS * H], df[ROWS * H], wf[H], want[3 * H];
	uint16_t tb[V * H], db[ROWS * H], wb[H], out[3 * H];
	int32_t tok[ROWS] = { 3, 7, 0, 9, 3, 1 };
	float *dx;
	uint16_t *dt, *dd, *dw, *dout;
	int32_t *dtok;
	int r, i;
	(void)state;
	rand_bf16(tf, tb, V * H, 1, 1.0f);
	rand_bf16(df, db, ROWS * H, 2, 1.0f);
	rand_bf16(wf, wb, H, 3, 0.1f);
	for (i = 0; i < H; i++)
		wf[i] = lp_bf16_to_f32(wb[i] = lp_bf16_from_f32(1.0f + wf[i]));
	dt = dev(tb, sizeof(tb));
	dtok = dev(tok, sizeof(tok));
	dx = dev(NULL, sizeof(x));
	TRY(lp_llm_k_embed(dx, dt, dtok, ROWS, H, NULL, &g_err));
	get(xg, dx, sizeof(xg));
	for (r = 0; r < ROWS; r++)
		for (i = 0; i < H; i++)
			x[r * H + i] = tf[tok[r] * H + i];
	assert_memory_equal(xg, x, sizeof(x));
	/* rows 1, 3, 5 (stride 2, offset 1) with the residual add fused */
	dd = dev(db, sizeof(db));
	dw = dev(wb, sizeof(wb));
	dout = dev(NULL, sizeof(out));
	TRY(lp_llm_k_rmsnorm(dout, dx, dd, dw, 3, H, 2, 1, 1e-5f, NULL, &g_err));
	get(out, dout, sizeof(out));
	get(xg, dx, sizeof(xg));
	for (r = 0; r < 3; r++) {
		int ir = 2 * r + 1;
		for (i = 0; i < H; i++)
			x[ir * H + i] += df[ir * H + i];
		lp_llm_cpu_rmsnorm(want + r * H, x + ir * H, wf, 1, H, 1e-5f);
	}
	close_f32("x after add", xg, x, ROWS * H, 1e-6f, 1e-6f); /* rows 0, 2, 4 untouched */
	close_bf16("rmsnorm", out, want, 3 * H, 1e-3f, 1.0f / 128);
	lp_llm_cuda_free(dt), lp_llm_cuda_free(dtok), lp_llm_cuda_free(dx), lp_llm_cuda_free(dd);
	lp_llm_cuda_free(dw), lp_llm_cuda_free(dout);
}

static void test_qkv_rope_appends_cache(void **state)
{
	enum { NH = 4, NKV = 2, D = 32, B = 2, TN = 3, POS = 5, MAXP = 16 };
	enum { QKV = (NH + 2 * NKV) * D, T = B * TN, CACHE = B * NKV * MAXP * D };
	static float qkv[T * QKV], bias[QKV], tab[MAXP * D], wantq[T * NH * D], kwant[CACHE], vwant[CACHE];
	static uint16_t qkvb[T * QKV], biasb[QKV], qg[T * NH * D], kg[CACHE], vg[CACHE];
	int pos = POS, r, h, i;
	uint16_t *dqkv, *dbias, *dq, *dk, *dv;
	float *dtab;
	int *dpos;
	(void)state;
	rand_bf16(qkv, qkvb, T * QKV, 4, 1.0f);
	rand_bf16(bias, biasb, QKV, 5, 0.1f);
	lp_llm_rope_table(tab, MAXP, D, 10000.0);
	for (r = 0; r < T; r++)
		for (i = 0; i < QKV; i++)
			qkv[r * QKV + i] += bias[i];
	lp_llm_cpu_rope(qkv, T, QKV, NH + NKV, D, TN, POS, tab);
	memset(kwant, 0, sizeof(kwant));
	memset(vwant, 0, sizeof(vwant));
	for (r = 0; r < T; r++) {
		int b = r / TN, p = POS + r % TN;
		memcpy(wantq + r * NH * D, qkv + r * QKV, sizeof(float) * NH * D);
		for (h = 0; h < NKV; h++) {
			memcpy(kwant + ((b * NKV + h) * MAXP + p) * D, qkv + r * QKV + (NH + h) * D, sizeof(float) * D);
			memcpy(vwant + ((b * NKV + h) * MAXP + p) * D, qkv + r * QKV + (NH + NKV + h) * D, sizeof(float) * D);
		}
	}
	dqkv = dev(qkvb, sizeof(qkvb));
	dbias = dev(biasb, sizeof(biasb));
	dtab = dev(tab, sizeof(tab));
	dpos = dev(&pos, sizeof(pos));
	dq = dev(NULL, sizeof(qg));
	dk = dev(NULL, sizeof(kg));
	dv = dev(NULL, sizeof(vg));
	memset(kg, 0, sizeof(kg));
	TRY(lp_llm_cuda_h2d(dk, kg, sizeof(kg), &g_err));
	TRY(lp_llm_cuda_h2d(dv, kg, sizeof(kg), &g_err));
	TRY(lp_llm_k_qkv_rope(dq, dk, dv, dqkv, dbias, dtab, dpos, T, TN, NH, NKV, D, MAXP, NULL, &g_err));
	get(qg, dq, sizeof(qg));
	get(kg, dk, sizeof(kg));
	get(vg, dv, sizeof(vg));
	close_bf16("q", qg, wantq, T * NH * D, 1e-2f, 1.0f / 128);
	close_bf16("k cache", kg, kwant, CACHE, 1e-2f, 1.0f / 128);
	close_bf16("v cache", vg, vwant, CACHE, 1e-2f, 1.0f / 128);
	lp_llm_cuda_free(dqkv), lp_llm_cuda_free(dbias), lp_llm_cuda_free(dtab), lp_llm_cuda_free(dpos);
	lp_llm_cuda_free(dq), lp_llm_cuda_free(dk), lp_llm_cuda_free(dv);
}

static void attention_case(int batch, int tn, int pos, int nh, int nkv, int d, int max_pos,
	int n_splits, int split_len)
{
	size_t nq = (size_t)batch * tn * nh * d, nc = (size_t)batch * nkv * max_pos * d;
	float *q = malloc(nq * 4), *k = malloc(nc * 4), *v = malloc(nc * 4), *want = malloc(nq * 4);
	uint16_t *qb = malloc(nq * 2), *kb = malloc(nc * 2), *vb = malloc(nc * 2), *got = malloc(nq * 2);
	uint16_t *dq, *dk, *dv, *dout;
	float *dpart;
	int *dpos;
	rand_bf16(q, qb, nq, 6, 1.0f);
	rand_bf16(k, kb, nc, 7, 1.0f);
	rand_bf16(v, vb, nc, 8, 1.0f);
	lp_llm_cpu_attention(want, q, nh * d, k, v, batch, tn, pos, nh, nkv, d, max_pos);
	dq = dev(qb, nq * 2);
	dk = dev(kb, nc * 2);
	dv = dev(vb, nc * 2);
	dpos = dev(&pos, sizeof(pos));
	dout = dev(NULL, nq * 2);
	dpart = dev(NULL, (size_t)batch * tn * nh * n_splits * (d + 2) * 4);
	TRY(lp_llm_k_attention(dout, dq, dk, dv, dpart, dpos, batch, tn, nh, nkv, d, max_pos, n_splits,
		split_len, NULL, &g_err));
	get(got, dout, nq * 2);
	close_bf16("attention", got, want, nq, 1e-2f, 1.0f / 128);
	lp_llm_cuda_free(dq), lp_llm_cuda_free(dk), lp_llm_cuda_free(dv), lp_llm_cuda_free(dpos);
	lp_llm_cuda_free(dout), lp_llm_cuda_free(dpart);
	free(q), free(k), free(v), free(want), free(qb), free(kb), free(vb), free(got);
}

static void test_attention_prefill_and_split_decode(void **state)
{
	(void)state;
	attention_case(2, 5, 3, 4, 2, 32, 16, 1, 0);      /* prefill-like: causal within the tokens */
	attention_case(1, 37, 0, 8, 2, 64, 40, 1, 0);     /* more than one chunk of 32 keys */
	attention_case(2, 1, 70, 4, 1, 128, 96, 3, 32);   /* decode over 3 slices of 32 keys */
	attention_case(3, 1, 20, 6, 2, 64, 128, 4, 32);   /* decode: slices 1..3 empty */
	attention_case(1, 1, 200, 4, 4, 256, 256, 2, 128);
}

static void test_swiglu_and_gemm(void **state)
{
	enum { T = 5, I = 40, N = 48, K = 64 };
	static float gu[T * 2 * I], want[T * I], x[T * K], w[N * K], y[T * N], yg32[T * N];
	static uint16_t gub[T * 2 * I], got[T * I], xb[T * K], wb[N * K], yg[T * N];
	uint16_t *dgu, *dout, *dx, *dw, *dy;
	float *dy32;
	lp_llm_blas *blas = NULL;
	(void)state;
	rand_bf16(gu, gub, T * 2 * I, 9, 2.0f);
	lp_llm_cpu_swiglu(want, gu, T, I);
	dgu = dev(gub, sizeof(gub));
	dout = dev(NULL, sizeof(got));
	TRY(lp_llm_k_swiglu(dout, dgu, T, I, NULL, &g_err));
	get(got, dout, sizeof(got));
	close_bf16("swiglu", got, want, T * I, 1e-3f, 1.0f / 128);

	rand_bf16(x, xb, T * K, 10, 1.0f);
	rand_bf16(w, wb, N * K, 11, 0.125f);
	lp_llm_cpu_matmul(y, x, w, NULL, T, N, K);
	dx = dev(xb, sizeof(xb));
	dw = dev(wb, sizeof(wb));
	dy = dev(NULL, sizeof(yg));
	dy32 = dev(NULL, sizeof(yg32));
	TRY(lp_llm_blas_create(&blas, NULL, &g_err));
	TRY(lp_llm_gemm(blas, dy, 0, dx, dw, T, N, K, &g_err));
	TRY(lp_llm_gemm(blas, dy32, 1, dx, dw, T, N, K, &g_err));
	get(yg, dy, sizeof(yg));
	get(yg32, dy32, sizeof(yg32));
	close_bf16("gemm bf16", yg, y, T * N, 1e-3f, 1.0f / 128);
	close_f32("gemm fp32", yg32, y, T * N, 1e-4f, 1e-4f);
	/* the own GEMV, for 1 and 4 tokens */
	TRY(lp_llm_k_gemv(dy, 0, dx, dw, 1, N, K, NULL, &g_err));
	get(yg, dy, sizeof(uint16_t) * N);
	close_bf16("gemv bf16 t=1", yg, y, N, 1e-3f, 1.0f / 128);
	TRY(lp_llm_k_gemv(dy32, 1, dx, dw, 4, N, K, NULL, &g_err));
	get(yg32, dy32, sizeof(float) * 4 * N);
	close_f32("gemv fp32 t=4", yg32, y, 4 * N, 1e-4f, 1e-4f);
	lp_llm_blas_free(blas);
	lp_llm_cuda_free(dgu), lp_llm_cuda_free(dout), lp_llm_cuda_free(dx), lp_llm_cuda_free(dw);
	lp_llm_cuda_free(dy), lp_llm_cuda_free(dy32);
}

static void test_gemv_long_rows(void **state)
{
	enum { T = 3, N = 1000, K = 2056 };
	float *x = malloc(T * K * 4), *w = malloc((size_t)N * K * 4), *y = malloc(T * N * 4);
	uint16_t *xb = malloc(T * K * 2), *wb = malloc((size_t)N * K * 2), *yg = malloc(T * N * 2);
	uint16_t *dx, *dw, *dy;
	(void)state;
	rand_bf16(x, xb, T * K, 20, 1.0f);
	rand_bf16(w, wb, (size_t)N * K, 21, 0.02f);
	lp_llm_cpu_matmul(y, x, w, NULL, T, N, K);
	dx = dev(xb, T * K * 2);
	dw = dev(wb, (size_t)N * K * 2);
	dy = dev(NULL, T * N * 2);
	TRY(lp_llm_k_gemv(dy, 0, dx, dw, T, N, K, NULL, &g_err));
	get(yg, dy, T * N * 2);
	close_bf16("gemv", yg, y, T * N, 2e-3f, 1.0f / 128);
	lp_llm_cuda_free(dx), lp_llm_cuda_free(dw), lp_llm_cuda_free(dy);
	free(x), free(w), free(y), free(xb), free(wb), free(yg);
}

static void test_argmax_advances_position(void **state)
{
	enum { B = 3, V = 1000, STRIDE = 5 };
	static float logits[B * V];
	int32_t next[B], toks[B * STRIDE], *dnext, *dtoks;
	int pos = 10, zero = 0, *dpos, *ddone, b;
	float *dl;
	uint16_t scratch[B * V];
	(void)state;
	rand_bf16(logits, scratch, B * V, 12, 1.0f);
	logits[0 * V + 17] = logits[0 * V + 900] = 9.0f; /* tie: lowest index wins */
	logits[1 * V + 999] = 9.0f;
	logits[2 * V + 0] = 9.0f;
	memset(toks, 0xff, sizeof(toks));
	dl = dev(logits, sizeof(logits));
	dnext = dev(NULL, sizeof(next));
	dtoks = dev(toks, sizeof(toks));
	dpos = dev(&pos, sizeof(pos));
	ddone = dev(&zero, sizeof(zero));
	/* a decode step at position 10 with prompt 8 fills slot 10 + 1 - 8 = 3 */
	TRY(lp_llm_k_argmax(dnext, dtoks, STRIDE, dpos, ddone, dl, B, V, 1, 8, NULL, &g_err));
	get(next, dnext, sizeof(next));
	get(toks, dtoks, sizeof(toks));
	get(&pos, dpos, sizeof(pos));
	get(&zero, ddone, sizeof(zero));
	for (b = 0; b < B; b++) {
		assert_int_equal(next[b], lp_llm_cpu_argmax(logits + b * V, V));
		assert_int_equal(toks[b * STRIDE + 3], next[b]);
		assert_int_equal(toks[b * STRIDE + 2], -1);
	}
	assert_int_equal(next[0], 17);
	assert_int_equal(next[1], 999);
	assert_int_equal(next[2], 0);
	assert_int_equal(pos, 11);
	assert_int_equal(zero, 0);
	TRY(lp_llm_k_argmax(dnext, dtoks, STRIDE, dpos, ddone, dl, B, V, 1, 8, NULL, &g_err));
	get(toks, dtoks, sizeof(toks));
	get(&pos, dpos, sizeof(pos));
	assert_int_equal(toks[4], 17);
	assert_int_equal(pos, 12);
	lp_llm_cuda_free(dl), lp_llm_cuda_free(dnext), lp_llm_cuda_free(dtoks), lp_llm_cuda_free(dpos);
	lp_llm_cuda_free(ddone);
}

static void route_case(int t, int e, int k, enum lp_llm_gate gate, int norm, float scale)
{
	float *logits = malloc((size_t)t * e * 4), *w = malloc((size_t)t * k * 4), *wg = malloc((size_t)t * k * 4);
	uint16_t *scratch = malloc((size_t)t * e * 2);
	int32_t *ids = malloc((size_t)t * k * 4), *idg = malloc((size_t)t * k * 4), *did;
	float *dl, *dw;
	rand_bf16(logits, scratch, (size_t)t * e, 13, 2.0f);
	lp_llm_cpu_moe_route(logits, t, e, k, gate, norm, scale, ids, w);
	dl = dev(logits, (size_t)t * e * 4);
	did = dev(NULL, (size_t)t * k * 4);
	dw = dev(NULL, (size_t)t * k * 4);
	TRY(lp_llm_k_moe_topk(did, dw, dl, t, e, k, gate, norm, scale, NULL, &g_err));
	get(idg, did, (size_t)t * k * 4);
	get(wg, dw, (size_t)t * k * 4);
	assert_memory_equal(idg, ids, (size_t)t * k * 4);
	close_f32("moe weights", wg, w, (size_t)t * k, 1e-6f, 1e-5f);
	lp_llm_cuda_free(dl), lp_llm_cuda_free(did), lp_llm_cuda_free(dw);
	free(logits), free(w), free(wg), free(scratch), free(ids), free(idg);
}

static void test_moe_topk(void **state)
{
	(void)state;
	route_case(5, 40, 3, LP_LLM_GATE_SOFTMAX, 0, 1.0f);
	route_case(9, 64, 6, LP_LLM_GATE_SOFTMAX, 1, 2.5f);
	route_case(4, 256, 8, LP_LLM_GATE_SIGMOID, 1, 1.0f);
	route_case(3, 8, 2, LP_LLM_GATE_SIGMOID, 0, 1.0f);
}

/* align + grouped GEMM + combine over 100 tokens, 3 experts, top 2: experts get ~66 rows each,
 * so they span two tiles; n_out 80 and k_in 40 leave partial column and k tiles. */
static void test_moe_grouped_gemm(void **state)
{
	enum { T = 100, E = 3, K = 2, KIN = 40, NOUT = 80, N = T * K };
	static float logits[T * E], rw[N], x[T * KIN], w[E * NOUT * KIN], sh[T * NOUT];
	static float want[N * NOUT], comb[T * NOUT];
	static uint16_t scratch[T * E], xb[T * KIN], wb[E * NOUT * KIN], shb[T * NOUT], got[N * NOUT];
	static uint16_t cg[T * NOUT];
	static int32_t ids[N], sorted[4096], texp[64];
	int tiles = lp_llm_moe_max_tiles(N, E), n_tiles = 0, seen[N], a, j, s, i;
	int32_t *dids, *dsorted, *dtexp;
	int *dn;
	uint16_t *dx, *dw, *dc, *dsh, *dout;
	float *drw;
	(void)state;
	rand_bf16(logits, scratch, T * E, 14, 1.0f);
	lp_llm_cpu_moe_route(logits, T, E, K, LP_LLM_GATE_SOFTMAX, 1, 1.0f, ids, rw);
	rand_bf16(x, xb, T * KIN, 15, 1.0f);
	rand_bf16(w, wb, E * NOUT * KIN, 16, 0.15f);
	rand_bf16(sh, shb, T * NOUT, 17, 1.0f);
	dids = dev(ids, sizeof(ids));
	dsorted = dev(NULL, (size_t)tiles * LP_LLM_MOE_TILE * 4);
	dtexp = dev(NULL, (size_t)tiles * 4);
	dn = dev(NULL, sizeof(int));
	TRY(lp_llm_k_moe_align(dsorted, dtexp, dn, dids, N, E, tiles, NULL, &g_err));
	get(&n_tiles, dn, sizeof(int));
	get(sorted, dsorted, (size_t)tiles * LP_LLM_MOE_TILE * 4);
	get(texp, dtexp, (size_t)tiles * 4);
	memset(seen, 0, sizeof(seen));
	for (i = 0; i < n_tiles * LP_LLM_MOE_TILE; i++) {
		a = sorted[i];
		if (a < 0)
			continue;
		assert_true(a < N);
		assert_int_equal(ids[a], texp[i / LP_LLM_MOE_TILE]);
		seen[a]++;
	}
	for (a = 0; a < N; a++)
		assert_int_equal(seen[a], 1);
	assert_true(n_tiles >= 4 && n_tiles <= tiles);
	/* grouped GEMM: row a uses token a / K and expert ids[a] */
	for (a = 0; a < N; a++)
		lp_llm_cpu_matmul(want + a * NOUT, x + (a / K) * KIN, w + (size_t)ids[a] * NOUT * KIN, NULL, 1, NOUT, KIN);
	dx = dev(xb, sizeof(xb));
	dw = dev(wb, sizeof(wb));
	dc = dev(NULL, sizeof(got));
	TRY(lp_llm_k_moe_gemm(dc, dx, K, dw, dsorted, dtexp, dn, tiles, NOUT, KIN, NULL, &g_err));
	get(got, dc, sizeof(got));
	close_bf16("moe gemm", got, want, N * NOUT, 2e-3f, 1.0f / 128);
	/* combine: weighted sum over the two experts plus the shared output */
	for (i = 0; i < N * NOUT; i++)
		want[i] = lp_bf16_to_f32(got[i]);
	for (s = 0; s < T; s++)
		for (j = 0; j < NOUT; j++)
			comb[s * NOUT + j] = sh[s * NOUT + j] + rw[s * K] * want[(s * K) * NOUT + j] +
					     rw[s * K + 1] * want[(s * K + 1) * NOUT + j];
	drw = dev(rw, sizeof(rw));
	dsh = dev(shb, sizeof(shb));
	dout = dev(NULL, sizeof(cg));
	TRY(lp_llm_k_moe_combine(dout, dc, drw, dsh, T, K, NOUT, NULL, &g_err));
	get(cg, dout, sizeof(cg));
	close_bf16("moe combine", cg, comb, T * NOUT, 1e-3f, 1.0f / 128);
	lp_llm_cuda_free(dids), lp_llm_cuda_free(dsorted), lp_llm_cuda_free(dtexp), lp_llm_cuda_free(dn);
	lp_llm_cuda_free(dx), lp_llm_cuda_free(dw), lp_llm_cuda_free(dc), lp_llm_cuda_free(drw);
	lp_llm_cuda_free(dsh), lp_llm_cuda_free(dout);
}

static struct lp_llm_engine *engine_gemv(const char *model, enum lp_llm_device dev_kind, int graph,
	int batch, int prompt_len, int steps, enum lp_llm_gemv gemv, int pdl)
{
	struct lp_llm_config c;
	struct lp_err err = LP_ERR_INIT;
	struct lp_llm_run_opts o = LP_LLM_RUN_OPTS_INIT;
	struct lp_llm_engine *e = NULL;
	if (lp_llm_config_load(model, conf_dir(), &c, &err) < 0)
		fail_msg("%s", err.msg);
	o.device = dev_kind;
	o.cuda_graph = graph;
	o.gemv = gemv;
	o.pdl = pdl;
	o.batch = batch;
	o.prompt_len = prompt_len;
	o.new_tokens = steps;
	o.seed = 1234;
	if (lp_llm_engine_create(&c, &o, &e, &err) < 0)
		fail_msg("%s", err.msg);
	return e;
}

static struct lp_llm_engine *engine(const char *model, enum lp_llm_device dev_kind, int graph,
	int batch, int prompt_len, int steps)
{
	return engine_gemv(model, dev_kind, graph, batch, prompt_len, steps, LP_LLM_GEMV_CUBLAS, 0);
}

/* The tolerance: bf16 activations round to 8 bits of mantissa at every op boundary (~0.4%);
 * through 2 layers and the lm_head the logits drift by ~1-2% of their scale. We allow 5% of the
 * largest |logit| (the scale), and require the same argmax. */
#define LP_LOGIT_TOL 0.05

/* The CPU engine against the CUDA engine's decode paths: cuBLAS (graph and eager), the own GEMV,
 * and the fused kernels (graph with programmatic dependent launch, eager without). A prompt of
 * 200 tokens gives the fused attention several context slices. */
static void compare_engines(const char *model, int batch, int prompt_len)
{
	enum { STEPS = 8, SAME = 4 };
	struct lp_llm_engine *cpu = engine(model, LP_LLM_CPU, 0, batch, prompt_len, STEPS);
	struct lp_llm_engine *gpu = engine(model, LP_LLM_CUDA, 1, batch, prompt_len, STEPS);
	struct lp_llm_engine *eager = engine(model, LP_LLM_CUDA, 0, batch, prompt_len, STEPS);
	struct lp_llm_engine *own = engine_gemv(model, LP_LLM_CUDA, 1, batch, prompt_len, STEPS,
		LP_LLM_GEMV_OWN, 0);
	struct lp_llm_engine *fused = engine_gemv(model, LP_LLM_CUDA, 1, batch, prompt_len, STEPS,
		LP_LLM_GEMV_FUSED, 1);
	struct lp_llm_engine *fused_eager = engine_gemv(model, LP_LLM_CUDA, 0, batch, prompt_len, STEPS,
		LP_LLM_GEMV_FUSED, 0);
	struct lp_err err = LP_ERR_INIT;
	struct lp_llm_iter ic, ig, ie, io, ifu, ife;
	const float *lc, *lg;
	float *keep;
	double scale = 0, diff = 0;
	int v, b, i, vocab;
	struct lp_llm_config c;
	assert_int_equal(lp_llm_config_load(model, conf_dir(), &c, &err), 0);
	vocab = c.vocab_size;
	keep = malloc(sizeof(float) * (size_t)batch * vocab);
	assert_int_equal(lp_llm_engine_prefill_only(cpu, &err), 0);
	assert_int_equal(lp_llm_engine_logits(cpu, &lc, &err), 0);
	memcpy(keep, lc, sizeof(float) * (size_t)batch * vocab);
	if (lp_llm_engine_prefill_only(gpu, &err) < 0 || lp_llm_engine_logits(gpu, &lg, &err) < 0)
		fail_msg("%s", err.msg);
	for (v = 0; v < batch * vocab; v++) {
		scale = fabs(keep[v]) > scale ? fabs(keep[v]) : scale;
		diff = fabs(keep[v] - lg[v]) > diff ? fabs(keep[v] - lg[v]) : diff;
	}
	fprintf(stderr, "%s batch %d: prefill logits max |gpu - cpu| = %.4f, max |cpu| = %.3f (%.2f%%; tolerance %.0f%%)\n",
		model, batch, diff, scale, 100 * diff / scale, 100 * LP_LOGIT_TOL);
	assert_true(diff <= LP_LOGIT_TOL * scale);
	for (b = 0; b < batch; b++)
		assert_int_equal(lp_llm_cpu_argmax(keep + b * vocab, vocab), lp_llm_cpu_argmax(lg + b * vocab, vocab));
	/* the fused path's prefill ends on its own lm_head kernel */
	if (lp_llm_engine_prefill_only(fused, &err) < 0 || lp_llm_engine_logits(fused, &lg, &err) < 0)
		fail_msg("%s", err.msg);
	for (v = 0, diff = 0; v < batch * vocab; v++)
		diff = fabs(keep[v] - lg[v]) > diff ? fabs(keep[v] - lg[v]) : diff;
	fprintf(stderr, "%s batch %d: fused prefill logits max |gpu - cpu| = %.4f\n", model, batch, diff);
	assert_true(diff <= LP_LOGIT_TOL * scale);
	for (b = 0; b < batch; b++)
		assert_int_equal(lp_llm_cpu_argmax(keep + b * vocab, vocab), lp_llm_cpu_argmax(lg + b * vocab, vocab));
	if (lp_llm_engine_iterate(cpu, &ic, &err) < 0 || lp_llm_engine_iterate(gpu, &ig, &err) < 0 ||
	    lp_llm_engine_iterate(eager, &ie, &err) < 0 || lp_llm_engine_iterate(own, &io, &err) < 0 ||
	    lp_llm_engine_iterate(fused, &ifu, &err) < 0 ||
	    lp_llm_engine_iterate(fused_eager, &ife, &err) < 0)
		fail_msg("%s", err.msg);
	fprintf(stderr, "%s batch %d prompt %d tokens cpu/gpu/fused:", model, batch, prompt_len);
	for (i = 0; i <= STEPS; i++)
		fprintf(stderr, " %d/%d/%d", ic.tokens[i], ig.tokens[i], ifu.tokens[i]);
	fprintf(stderr, "\n");
	for (i = 0; i < SAME; i++) {
		assert_int_equal(ic.tokens[i], ig.tokens[i]);
		assert_int_equal(ic.tokens[i], io.tokens[i]);  /* --gemv own */
		assert_int_equal(ic.tokens[i], ifu.tokens[i]); /* --gemv fused */
	}
	/* the graph replays exactly what the eager path launches; PDL changes no result */
	assert_memory_equal(ig.tokens, ie.tokens, sizeof(int32_t) * (STEPS + 1));
	assert_memory_equal(ifu.tokens, ife.tokens, sizeof(int32_t) * (STEPS + 1));
	/* a second iteration (prefill again from position 0) gives the same tokens */
	if (lp_llm_engine_iterate(fused, &ifu, &err) < 0)
		fail_msg("%s", err.msg);
	assert_memory_equal(ifu.tokens, ife.tokens, sizeof(int32_t) * (STEPS + 1));
	/* the last decode step's logits, where the fused path decoded the CPU's tokens throughout */
	if (!memcmp(ic.tokens, ifu.tokens, sizeof(int32_t) * (STEPS + 1))) {
		if (lp_llm_engine_logits(cpu, &lc, &err) < 0 || lp_llm_engine_logits(fused, &lg, &err) < 0)
			fail_msg("%s", err.msg);
		for (v = 0, diff = 0; v < batch * vocab; v++)
			diff = fabs(lc[v] - lg[v]) > diff ? fabs(lc[v] - lg[v]) : diff;
		fprintf(stderr, "%s batch %d: fused decode logits max |gpu - cpu| = %.4f\n", model, batch, diff);
		assert_true(diff <= LP_LOGIT_TOL * scale);
	}
	assert_true(lp_llm_engine_graph_kernels(gpu) > 0);
	assert_int_equal(lp_llm_engine_graph_kernels(eager), 0);
	free(keep);
	lp_llm_engine_free(cpu);
	lp_llm_engine_free(gpu);
	lp_llm_engine_free(eager);
	lp_llm_engine_free(own);
	lp_llm_engine_free(fused);
	lp_llm_engine_free(fused_eager);
}

static void test_engine_tiny_matches_cpu(void **state)
{
	(void)state;
	compare_engines("tiny", 1, 48);
	compare_engines("tiny", 3, 48);
	compare_engines("tiny", 4, 200);
}

static void test_engine_tiny_moe_matches_cpu(void **state)
{
	(void)state;
	compare_engines("tiny-moe", 1, 200);
	compare_engines("tiny-moe", 2, 48);
	compare_engines("tiny-moe", 3, 48);
	compare_engines("tiny-moe", 4, 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fill_is_bit_identical),
		cmocka_unit_test(test_embed_and_rmsnorm),
		cmocka_unit_test(test_qkv_rope_appends_cache),
		cmocka_unit_test(test_attention_prefill_and_split_decode),
		cmocka_unit_test(test_swiglu_and_gemm),
		cmocka_unit_test(test_gemv_long_rows),
		cmocka_unit_test(test_argmax_advances_position),
		cmocka_unit_test(test_moe_topk),
		cmocka_unit_test(test_moe_grouped_gemm),
		cmocka_unit_test(test_engine_tiny_matches_cpu),
		cmocka_unit_test(test_engine_tiny_moe_matches_cpu),
	};
	LP_SKIP_WITHOUT_GPU();
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

int main(void)
{
	fprintf(stderr, "skipped: this build has no CUDA path\n");
	return 77;
}

#endif
