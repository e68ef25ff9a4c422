/* test_gpu_workload_decode.c: the fused decode kernels (workload/cuda_decode.cu) against the CPU
 * reference ops they stand for (workload/cpu_ops.h): each GEMV mode (RMSNorm + QKV + RoPE + KV
 * append, the residual add, RMSNorm + gate/up + SwiGLU, RMSNorm + lm_head + argmax), the
 * split-context decode attention, the residual add of MoE layers, and the fused MoE decode
 * (routing, grouped routed experts, shared experts, residual add). Inputs are random (fresh per
 * case), outputs are poisoned before each launch, and shapes cover partial load groups, several
 * tokens, empty and multi-tile context slices. Skips (77) without a GPU or the CUDA path. */
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

static struct lp_err g_err;

#define TRY(expr)                                                           \
	do {                                                                \
		lp_err_clear(&g_err);                                       \
		if ((expr) < 0)                                             \
			fail_msg("%s:%d: %s", __FILE__, __LINE__, g_err.msg); \
	} while (0)

#define POISON_BF16 0x7fbf /* a NaN: any element left unwritten fails the comparison */

/* random bf16-exact floats and their bits */
static void rand_bf16(float *f, uint16_t *b, size_t n, uint64_t salt, float scale)
{
	for (size_t i = 0; i < n; i++) {
		float v = (float)lp_rng_sum4(77, salt, i) / LP_RNG_SUM4_STD * scale;
		b[i] = lp_bf16_from_f32(v);
		f[i] = lp_bf16_to_f32(b[i]);
	}
}

static void rand_f32(float *f, size_t n, uint64_t salt, float scale)
{
	for (size_t i = 0; i < n; i++)
		f[i] = (float)lp_rng_sum4(78, salt, i) / LP_RNG_SUM4_STD * scale;
}

static float bf(float v)
{
	return lp_bf16_to_f32(lp_bf16_from_f32(v));
}

static void *dev(const void *host, size_t bytes)
{
	void *p = NULL;
	TRY(lp_llm_cuda_malloc(&p, bytes, &g_err));
	if (host)
		TRY(lp_llm_cuda_h2d(p, host, bytes, &g_err));
	return p;
}

static void *dev_poisoned(size_t n_bf16)
{
	uint16_t *h = malloc(n_bf16 * 2);
	void *d;
	for (size_t i = 0; i < n_bf16; i++)
		h[i] = POISON_BF16;
	d = dev(h, n_bf16 * 2);
	free(h);
	return d;
}

static void get(void *host, const void *d, size_t bytes)
{
	TRY(lp_llm_cuda_sync(&g_err));
	TRY(lp_llm_cuda_d2h(host, d, bytes, &g_err));
}

static void close_bf16(const char *what, const uint16_t *got, const float *want, size_t n, float atol,
	float rtol)
{
	for (size_t i = 0; i < n; i++) {
		float g = lp_bf16_to_f32(got[i]);
		if (!(fabsf(g - want[i]) <= atol + rtol * fabsf(want[i])))
			fail_msg("%s[%zu]: got %.6g, want %.6g", what, i, (double)g, (double)want[i]);
	}
}

static void close_f32(const char *what, const float *got, const float *want, size_t n, float atol,
	float rtol)
{
	for (size_t i = 0; i < n; i++)
		if (!(fabsf(got[i] - want[i]) <= atol + rtol * fabsf(want[i])))
			fail_msg("%s[%zu]: got %.7g, want %.7g", what, i, (double)got[i], (double)want[i]);
}

/* xn[t][k] = bf16(rmsnorm(x) * w), the reference for the kernels' normalised input */
static void ref_norm(float *xn, const float *x, const float *w, int t, int k, float eps)
{
	lp_llm_cpu_rmsnorm(xn, x, w, t, k, eps);
	for (size_t i = 0; i < (size_t)t * k; i++)
		xn[i] = bf(xn[i]);
}

/* --- RMSNorm + QKV + RoPE + KV append --- */

static void qkv_case(int t, int nh, int nkv, int d, int h, int max_pos, int pos, int with_bias,
	int pdl, int pos_ready)
{
	int qkv = (nh + 2 * nkv) * d;
	size_t nw = (size_t)qkv * h, nc = (size_t)t * nkv * max_pos * d, nq = (size_t)t * nh * d;
	float *x = malloc((size_t)t * h * 4), *nwf = malloc((size_t)h * 4), *w = malloc(nw * 4);
	float *bias = malloc((size_t)qkv * 4), *tab = malloc((size_t)max_pos * d * 4);
	float *xn = malloc((size_t)t * h * 4), *y = malloc((size_t)t * qkv * 4);
	float *wantq = malloc(nq * 4), *wantk = malloc(nc * 4), *wantv = malloc(nc * 4);
	uint16_t *nwb = malloc((size_t)h * 2), *wb = malloc(nw * 2), *bb = malloc((size_t)qkv * 2);
	uint16_t *gq = malloc(nq * 2), *gk = malloc(nc * 2), *gv = malloc(nc * 2);
	struct lp_llm_dec_gemv a;
	float *dx, *dtab;
	uint16_t *dnw, *dw, *db, *dq, *dk, *dv;
	int *dpos, j, i, hd;

	rand_f32(x, (size_t)t * h, 1, 1.5f);
	rand_bf16(nwf, nwb, h, 2, 0.1f);
	for (i = 0; i < h; i++)
		nwf[i] = lp_bf16_to_f32(nwb[i] = lp_bf16_from_f32(1.0f + nwf[i]));
	rand_bf16(w, wb, nw, 3, 1.0f / sqrtf((float)h));
	rand_bf16(bias, bb, qkv, 4, 0.2f);
	lp_llm_rope_table(tab, max_pos, d, 10000.0);
	/* reference: norm, matmul, bf16, + bias, rope; q out, k and v into the caches */
	ref_norm(xn, x, nwf, t, h, 1e-5f);
	lp_llm_cpu_matmul(y, xn, w, NULL, t, qkv, h);
	for (i = 0; i < t * qkv; i++)
		y[i] = bf(y[i]) + (with_bias ? bias[i % qkv] : 0.0f);
	lp_llm_cpu_rope(y, t, qkv, nh + nkv, d, 1, pos, tab);
	for (size_t e = 0; e < nc; e++)
		wantk[e] = wantv[e] = NAN; /* positions other than pos stay poisoned */
	for (j = 0; j < t; j++) {
		memcpy(wantq + (size_t)j * nh * d, y + (size_t)j * qkv, sizeof(float) * nh * d);
		for (hd = 0; hd < nkv; hd++) {
			size_t at = (((size_t)j * nkv + hd) * max_pos + pos) * d;
			memcpy(wantk + at, y + (size_t)j * qkv + (nh + hd) * d, sizeof(float) * d);
			memcpy(wantv + at, y + (size_t)j * qkv + (nh + nkv + hd) * d, sizeof(float) * d);
		}
	}
	dx = dev(x, (size_t)t * h * 4);
	dnw = dev(nwb, (size_t)h * 2);
	dw = dev(wb, nw * 2);
	db = dev(bb, (size_t)qkv * 2);
	dtab = dev(tab, (size_t)max_pos * d * 4);
	dpos = dev(&pos, sizeof(pos));
	dq = dev_poisoned(nq);
	dk = dev_poisoned(nc);
	dv = dev_poisoned(nc);
	memset(&a, 0, sizeof(a));
	a.mode = LP_LLM_DEC_QKV_ROPE;
	a.t = t;
	a.n = qkv;
	a.k = h;
	a.pdl = pdl;
	a.w = dw;
	a.resid = dx;
	a.norm_w = dnw;
	a.eps = 1e-5f;
	a.q = dq;
	a.k_cache = dk;
	a.v_cache = dv;
	a.bias = with_bias ? db : NULL;
	a.rope_tab = dtab;
	a.pos = dpos;
	a.pos_ready = pos_ready;
	a.nh = nh;
	a.nkv = nkv;
	a.d = d;
	a.max_pos = max_pos;
	TRY(lp_llm_k_dec_gemv(&a, NULL, &g_err));
	get(gq, dq, nq * 2);
	get(gk, dk, nc * 2);
	get(gv, dv, nc * 2);
	close_bf16("q", gq, wantq, nq, 3e-2f, 1.0f / 64);
	for (size_t e = 0; e < nc; e++) {
		if (isnan(wantk[e])) { /* untouched positions */
			if (gk[e] != POISON_BF16 || gv[e] != POISON_BF16)
				fail_msg("cache element %zu outside position %d was written", e, pos);
			continue;
		}
		close_bf16("k cache", gk + e, wantk + e, 1, 3e-2f, 1.0f / 64);
		close_bf16("v cache", gv + e, wantv + e, 1, 1e-2f, 1.0f / 64);
	}
	lp_llm_cuda_free(dx), lp_llm_cuda_free(dnw), lp_llm_cuda_free(dw), lp_llm_cuda_free(db);
	lp_llm_cuda_free(dtab), lp_llm_cuda_free(dpos), lp_llm_cuda_free(dq), lp_llm_cuda_free(dk);
	lp_llm_cuda_free(dv);
	free(x), free(nwf), free(w), free(bias), free(tab), free(xn), free(y), free(wantq);
	free(wantk), free(wantv), free(nwb), free(wb), free(bb), free(gq), free(gk), free(gv);
}

static void test_dec_qkv_rope(void **state)
{
	(void)state;
	/* the last argument: *pos read (and the first RoPE rotation loaded) before the PDL wait */
	qkv_case(1, 4, 2, 32, 96, 16, 5, 1, 0, 0);
	qkv_case(3, 4, 2, 32, 1160, 16, 9, 0, 1, 1); /* k: two load groups, the second partial */
	qkv_case(2, 8, 2, 64, 2048, 40, 39, 1, 1, 0);
	qkv_case(1, 8, 2, 64, 2048, 40, 21, 1, 1, 1);
	qkv_case(4, 6, 3, 128, 512, 8, 0, 1, 0, 1);
}

/* --- the residual add after O and down --- */

static void resid_case(int t, int n, int k, int pdl)
{
	size_t nw = (size_t)n * k;
	float *x = malloc((size_t)t * k * 4), *w = malloc(nw * 4), *y = malloc((size_t)t * n * 4);
	float *r0 = malloc((size_t)t * n * 4), *got = malloc((size_t)t * n * 4);
	float *want = malloc((size_t)t * n * 4);
	uint16_t *xb = malloc((size_t)t * k * 2), *wb = malloc(nw * 2);
	struct lp_llm_dec_gemv a;
	uint16_t *dx, *dw;
	float *dr;
	rand_bf16(x, xb, (size_t)t * k, 5, 1.0f);
	rand_bf16(w, wb, nw, 6, 1.0f / sqrtf((float)k));
	rand_f32(r0, (size_t)t * n, 7, 3.0f);
	lp_llm_cpu_matmul(y, x, w, NULL, t, n, k);
	dx = dev(xb, (size_t)t * k * 2);
	dw = dev(wb, nw * 2);
	dr = dev(r0, (size_t)t * n * 4);
	memset(&a, 0, sizeof(a));
	a.mode = LP_LLM_DEC_RESID;
	a.t = t;
	a.n = n;
	a.k = k;
	a.pdl = pdl;
	a.w = dw;
	a.resid = dr;
	a.x_bf16 = dx;
	TRY(lp_llm_k_dec_gemv(&a, NULL, &g_err));
	get(got, dr, (size_t)t * n * 4);
	/* what was added is y rounded to bf16 (one bf16 step apart at most: summation order) */
	for (size_t i = 0; i < (size_t)t * n; i++) {
		want[i] = y[i];
		got[i] -= r0[i];
	}
	close_f32("resid add", got, want, (size_t)t * n, 1e-3f, 1.0f / 64);
	lp_llm_cuda_free(dx), lp_llm_cuda_free(dw), lp_llm_cuda_free(dr);
	free(x), free(w), free(y), free(r0), free(got), free(want), free(xb), free(wb);
}

static void test_dec_resid(void **state)
{
	(void)state;
	resid_case(1, 2048, 2048, 1);
	resid_case(2, 1000, 8200, 0);
	resid_case(4, 64, 40, 1);
	resid_case(3, 6, 1032, 0); /* fewer rows than warps of one block */
}

/* --- RMSNorm + gate/up + SwiGLU --- */

static void swiglu_case(int t, int inter, int h, int pdl)
{
	size_t nw = (size_t)2 * inter * h;
	float *x = malloc((size_t)t * h * 4), *nwf = malloc((size_t)h * 4), *w = malloc(nw * 4);
	float *xn = malloc((size_t)t * h * 4), *gu = malloc((size_t)t * 2 * inter * 4);
	float *want = malloc((size_t)t * inter * 4);
	uint16_t *nwb = malloc((size_t)h * 2), *wb = malloc(nw * 2), *got = malloc((size_t)t * inter * 2);
	struct lp_llm_dec_gemv a;
	uint16_t *dnw, *dw, *dout;
	float *dx;
	int i;
	rand_f32(x, (size_t)t * h, 8, 2.0f);
	rand_bf16(nwf, nwb, h, 9, 1.0f);
	rand_bf16(w, wb, nw, 10, 2.0f / sqrtf((float)h));
	ref_norm(xn, x, nwf, t, h, 1e-6f);
	lp_llm_cpu_matmul(gu, xn, w, NULL, t, 2 * inter, h);
	for (i = 0; i < t * 2 * inter; i++)
		gu[i] = bf(gu[i]);
	lp_llm_cpu_swiglu(want, gu, t, inter);
	dx = dev(x, (size_t)t * h * 4);
	dnw = dev(nwb, (size_t)h * 2);
	dw = dev(wb, nw * 2);
	dout = dev_poisoned((size_t)t * inter);
	memset(&a, 0, sizeof(a));
	a.mode = LP_LLM_DEC_SWIGLU;
	a.t = t;
	a.n = 2 * inter;
	a.k = h;
	a.pdl = pdl;
	a.w = dw;
	a.resid = dx;
	a.norm_w = dnw;
	a.eps = 1e-6f;
	a.out = dout;
	TRY(lp_llm_k_dec_gemv(&a, NULL, &g_err));
	get(got, dout, (size_t)t * inter * 2);
	close_bf16("swiglu", got, want, (size_t)t * inter, 2e-2f, 1.0f / 32);
	lp_llm_cuda_free(dx), lp_llm_cuda_free(dnw), lp_llm_cuda_free(dw), lp_llm_cuda_free(dout);
	free(x), free(nwf), free(w), free(xn), free(gu), free(want), free(nwb), free(wb), free(got);
}

static void test_dec_swiglu(void **state)
{
	(void)state;
	swiglu_case(1, 8192, 2048, 1);
	swiglu_case(3, 384, 128, 0);
	swiglu_case(4, 100, 1544, 1);
}

/* --- RMSNorm + lm_head + argmax --- */

/* t sequences; tn > 1: the prefill's tail (the last of tn positions per sequence, a bf16 delta
 * still to add, the embedding of the sampled tokens written out) */
static void argmax_case(int t, int v, int h, int prompt_len, int pos0, int tn, int pdl)
{
	size_t nw = (size_t)v * h;
	int stride = 6, pos = pos0, zero = 0, i, j, tie_a = 3, tie_b = v - 2;
	float *xall = malloc((size_t)t * tn * h * 4), *dl_f = malloc((size_t)t * tn * h * 4);
	uint16_t *dl_b = malloc((size_t)t * tn * h * 2);
	float *eout = malloc((size_t)t * h * 4);
	float *x = malloc((size_t)t * h * 4), *nwf = malloc((size_t)h * 4), *w = malloc(nw * 4);
	float *xn = malloc((size_t)t * h * 4), *want = malloc((size_t)t * v * 4);
	float *got = malloc((size_t)t * v * 4);
	uint16_t *nwb = malloc((size_t)h * 2), *wb = malloc(nw * 2);
	int32_t next[4], toks[4 * 6], *dnext, *dtoks;
	unsigned long long zeros[4] = { 0, 0, 0, 0 }, best[4], *dbest;
	struct lp_llm_dec_gemv a;
	uint16_t *dnw, *dw, *ddelta = NULL;
	float *dx, *dl, *deout;
	int *dpos, *ddone;
	rand_f32(xall, (size_t)t * tn * h, 11, 1.0f);
	rand_bf16(dl_f, dl_b, (size_t)t * tn * h, 19, 0.5f);
	for (j = 0; j < t; j++) /* the rows the kernel sees: the last position, plus the delta */
		for (i = 0; i < h; i++) {
			size_t at = ((size_t)j * tn + tn - 1) * h + i;
			x[(size_t)j * h + i] = xall[at] + (tn > 1 ? dl_f[at] : 0.0f);
		}
	rand_bf16(nwf, nwb, h, 12, 1.0f);
	rand_bf16(w, wb, nw, 13, 1.0f / sqrtf((float)h));
	ref_norm(xn, x, nwf, t, h, 1e-5f);
	/* token 0: rows tie_a and tie_b equal and far above the rest; the lower index must win */
	for (i = 0; i < h; i++) {
		float s = xn[i] > 0 ? 0.25f : xn[i] < 0 ? -0.25f : 0.0f;
		wb[(size_t)tie_a * h + i] = wb[(size_t)tie_b * h + i] = lp_bf16_from_f32(s);
		w[(size_t)tie_a * h + i] = w[(size_t)tie_b * h + i] = s;
	}
	lp_llm_cpu_matmul(want, xn, w, NULL, t, v, h);
	memset(toks, 0xff, sizeof(toks));
	dx = dev(xall, (size_t)t * tn * h * 4);
	if (tn > 1)
		ddelta = dev(dl_b, (size_t)t * tn * h * 2);
	deout = dev(NULL, (size_t)t * h * 4);
	dnw = dev(nwb, (size_t)h * 2);
	dw = dev(wb, nw * 2);
	dl = dev(NULL, (size_t)t * v * 4);
	dnext = dev(NULL, sizeof(next));
	dtoks = dev(toks, sizeof(toks));
	dpos = dev(&pos, sizeof(pos));
	ddone = dev(&zero, sizeof(zero));
	dbest = dev(zeros, sizeof(zeros));
	memset(&a, 0, sizeof(a));
	a.mode = LP_LLM_DEC_ARGMAX;
	a.t = t;
	a.n = v;
	a.k = h;
	a.pdl = pdl;
	a.w = dw;
	a.resid = dx + (size_t)(tn - 1) * h;
	a.resid_stride = tn * h;
	a.delta = ddelta ? ddelta + (size_t)(tn - 1) * h : NULL;
	a.tn = tn;
	a.embed = dw; /* the weights as the embedding table (tied) */
	a.embed_out = deout;
	a.norm_w = dnw;
	a.eps = 1e-5f;
	a.logits = dl;
	a.pos = dpos;
	a.next = dnext;
	a.tokens = dtoks;
	a.tokens_stride = stride;
	a.prompt_len = prompt_len;
	a.done = ddone;
	a.best = dbest;
	for (int rep = 0; rep < 2; rep++) { /* the second launch checks that the kernel reset its state */
		TRY(lp_llm_k_dec_gemv(&a, NULL, &g_err));
		get(got, dl, (size_t)t * v * 4);
		get(next, dnext, sizeof(int32_t) * (size_t)t);
		get(toks, dtoks, sizeof(toks));
		get(&pos, dpos, sizeof(pos));
		get(&zero, ddone, sizeof(zero));
		get(best, dbest, sizeof(best));
		get(eout, deout, (size_t)t * h * 4);
		close_f32("logits", got, want, (size_t)t * v, 1e-4f, 1e-3f);
		for (j = 0; j < t; j++) {
			assert_int_equal(next[j], lp_llm_cpu_argmax(got + (size_t)j * v, v));
			assert_int_equal(toks[j * stride + pos0 + rep * tn + tn - prompt_len], next[j]);
			assert_int_equal(best[j], 0);
			for (i = 0; i < h; i++)
				if (eout[(size_t)j * h + i] != w[(size_t)next[j] * h + i])
					fail_msg("embedding out [%d][%d]: got %g", j, i, (double)eout[(size_t)j * h + i]);
		}
		assert_int_equal(next[0], tie_a);
		assert_int_equal(pos, pos0 + (rep + 1) * tn);
		assert_int_equal(zero, 0);
	}
	for (j = 0, i = 0; i < stride; i++) /* sequence 0: the two slots written, no other */
		j += toks[i] != -1;
	assert_int_equal(j, 2);
	lp_llm_cuda_free(dx), lp_llm_cuda_free(dnw), lp_llm_cuda_free(dw), lp_llm_cuda_free(dl);
	lp_llm_cuda_free(dnext), lp_llm_cuda_free(dtoks), lp_llm_cuda_free(dpos);
	lp_llm_cuda_free(ddone), lp_llm_cuda_free(dbest), lp_llm_cuda_free(deout);
	if (ddelta)
		lp_llm_cuda_free(ddelta);
	free(x), free(nwf), free(w), free(xn), free(want), free(got), free(nwb), free(wb);
	free(xall), free(dl_f), free(dl_b), free(eout);
}

static void test_dec_argmax(void **state)
{
	(void)state;
	argmax_case(1, 50000, 256, 8, 10, 1, 1); /* more rows than one wave of blocks: warps loop */
	argmax_case(3, 5000, 520, 8, 9, 1, 0);
	argmax_case(4, 12, 64, 1, 2, 1, 1);
	argmax_case(2, 3000, 128, 3, 0, 3, 1); /* a prefill of 3 positions: slots 0, then 3 */
}

/* --- split-context decode attention --- */

static void attn_case(int batch, int pos, int nh, int nkv, int d, int max_pos, int n_splits,
	int split_len, int pdl)
{
	size_t nq = (size_t)batch * nh * d, nc = (size_t)batch * nkv * max_pos * d;
	float *q = malloc(nq * 4), *k = malloc(nc * 4), *v = malloc(nc * 4), *want = malloc(nq * 4);
	uint16_t *qb = malloc(nq * 2), *kb = malloc(nc * 2), *vb = malloc(nc * 2);
	uint16_t *got = malloc(nq * 2), *again = malloc(nq * 2);
	int *counters = calloc((size_t)batch * nkv, sizeof(int)), *dcnt, *dpos;
	uint16_t *dq, *dk, *dv, *dout;
	float *dpart;
	rand_bf16(q, qb, nq, 14, 1.0f);
	rand_bf16(k, kb, nc, 15, 1.0f);
	rand_bf16(v, vb, nc, 16, 1.0f);
	lp_llm_cpu_attention(want, q, nh * d, k, v, batch, 1, pos, nh, nkv, d, max_pos);
	dq = dev(qb, nq * 2);
	dk = dev(kb, nc * 2);
	dv = dev(vb, nc * 2);
	dpos = dev(&pos, sizeof(pos));
	dcnt = dev(counters, sizeof(int) * (size_t)batch * nkv);
	dpart = dev(NULL, (size_t)batch * nh * n_splits * (d + 2) * 4);
	dout = dev_poisoned(nq);
	TRY(lp_llm_k_attn_decode(dout, dq, dk, dv, dpart, dcnt, dpos, batch, nh, nkv, d, max_pos,
		n_splits, split_len, pdl, NULL, &g_err));
	get(got, dout, nq * 2);
	close_bf16("attention", got, want, nq, 1e-2f, 1.0f / 64);
	get(counters, dcnt, sizeof(int) * (size_t)batch * nkv);
	for (int i = 0; i < batch * nkv; i++)
		assert_int_equal(counters[i], 0);
	lp_llm_cuda_free(dout);
	dout = dev_poisoned(nq);
	TRY(lp_llm_k_attn_decode(dout, dq, dk, dv, dpart, dcnt, dpos, batch, nh, nkv, d, max_pos,
		n_splits, split_len, pdl, NULL, &g_err));
	get(again, dout, nq * 2);
	assert_memory_equal(again, got, nq * 2); /* deterministic, and the counters were reset */
	lp_llm_cuda_free(dq), lp_llm_cuda_free(dk), lp_llm_cuda_free(dv), lp_llm_cuda_free(dpos);
	lp_llm_cuda_free(dcnt), lp_llm_cuda_free(dpart), lp_llm_cuda_free(dout);
	free(q), free(k), free(v), free(want), free(qb), free(kb), free(vb), free(got), free(again);
	free(counters);
}

static void test_dec_attention(void **state)
{
	(void)state;
	attn_case(1, 70, 8, 2, 64, 200, 4, 64, 1);     /* slices 2 and 3 empty */
	attn_case(2, 130, 4, 1, 128, 256, 2, 128, 0);  /* slice 0: two tiles; slice 1: 3 keys */
	attn_case(3, 20, 6, 2, 32, 64, 1, 64, 1);      /* one slice: no merge */
	attn_case(1, 255, 16, 2, 256, 256, 1, 256, 0); /* 8 heads a group, 4 tiles */
	attn_case(4, 600, 32, 8, 64, 640, 10, 64, 1);  /* llama-3.2-1b-like, batch 4 */
	attn_case(1, 0, 10, 10, 128, 128, 2, 64, 0);   /* one key; no GQA */
	attn_case(2, 576, 10, 10, 128, 640, 10, 64, 1); /* deepseek-ocr-lm-like: no GQA, 10 slices */
	attn_case(1, 500, 16, 2, 128, 512, 8, 64, 1);  /* 8 heads a group over 8 slices */
	attn_case(1, 300, 12, 12, 256, 512, 3, 192, 1); /* no GQA at head dim 256, 3 tiles a slice */
	/* merges over several batches of 16 slices (the last ones empty) */
	attn_case(1, 1500, 8, 2, 128, 2048, 32, 64, 1);
	attn_case(2, 2500, 4, 4, 64, 2560, 40, 64, 0);
}

static void test_add(void **state)
{
	enum { N = 3001 };
	static float x[N], d[N], got[N];
	static uint16_t db[N];
	float *dx;
	uint16_t *dd;
	(void)state;
	rand_f32(x, N, 17, 2.0f);
	rand_bf16(d, db, N, 18, 1.0f);
	dx = dev(x, sizeof(x));
	dd = dev(db, sizeof(db));
	TRY(lp_llm_k_add(dx, dd, N, NULL, &g_err));
	get(got, dx, sizeof(got));
	for (int i = 0; i < N; i++)
		x[i] += d[i];
	assert_memory_equal(got, x, sizeof(x));
	lp_llm_cuda_free(dx), lp_llm_cuda_free(dd);
}

/* --- the fused MoE decode (cuda_moe.cu): routing, grouped experts, shared experts, residual --- */

/* FNV-1a over n bytes */
static uint64_t fnv1a(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t x = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		x = (x ^ b[i]) * 1099511628211ull;
	return x;
}

/* norm: the routing weights renormalised over the top k (norm_topk_prob) */
static void moe_case_n(int t, int h, int e, int k, int mi, int sh, int sigmoid, int pdl, int norm)
{
	size_t ngu = (size_t)e * 2 * mi * h, ndn = (size_t)e * h * mi, nsgu = (size_t)2 * sh * h;
	size_t nsdn = (size_t)h * sh, n = (size_t)t * k;
	float *x = malloc((size_t)t * h * 4), *nwf = malloc((size_t)h * 4), *rf = malloc((size_t)e * h * 4);
	float *guf = malloc(ngu * 4), *dnf = malloc(ndn * 4), *sguf = malloc((nsgu + 1) * 4);
	float *sdnf = malloc((nsdn + 1) * 4), *xn = malloc((size_t)t * h * 4);
	float *logits = malloc((size_t)t * e * 4), *rw = malloc(n * 4), *want = malloc((size_t)t * h * 4);
	float *gu = malloc((size_t)2 * (mi > sh ? mi : sh) * 4), *act = malloc((size_t)(mi > sh ? mi : sh) * 4);
	float *eo = malloc((size_t)h * 4), *got = malloc((size_t)t * (h > e ? h : e) * 4), *gw = malloc(n * 4);
	uint16_t *nwb = malloc((size_t)h * 2), *rb = malloc((size_t)e * h * 2), *gub = malloc(ngu * 2);
	uint16_t *dnb = malloc(ndn * 2), *sgub = malloc((nsgu + 1) * 2), *sdnb = malloc((nsdn + 1) * 2);
	int32_t *ids = malloc(n * 4), *gids = malloc(n * 4), gused[LP_LLM_MOE_DEC_MAX_ASSIGN], gn = 0;
	int seen[LP_LLM_MAX_EXPERTS] = { 0 }, distinct = 0;
	struct lp_llm_moe_dec a;
	void *dnw, *dr, *dgu, *ddn, *dsgu = NULL, *dsdn = NULL;
	float scale = 0.0f, err = 0.0f;
	uint64_t bits;
	int j, s, i, u;
	rand_f32(x, (size_t)t * h, 30, 2.0f);
	rand_bf16(nwf, nwb, h, 31, 1.0f);
	rand_bf16(rf, rb, (size_t)e * h, 32, 4.0f / sqrtf((float)h));
	rand_bf16(guf, gub, ngu, 33, 2.0f / sqrtf((float)h));
	rand_bf16(dnf, dnb, ndn, 34, 1.0f / sqrtf((float)mi));
	rand_bf16(sguf, sgub, nsgu + 1, 35, 2.0f / sqrtf((float)h));
	rand_bf16(sdnf, sdnb, nsdn + 1, 36, 1.0f / sqrtf((float)(sh ? sh : 1)));
	/* the reference: bf16 activations where the GPU path rounds them; the routing of the GPU's
	 * router logits (checked against the CPU's first), so that an xn element rounded the other
	 * way cannot flip a near tie between experts */
	ref_norm(xn, x, nwf, t, h, 1e-6f);
	lp_llm_cpu_matmul(logits, xn, rf, NULL, t, e, h);
	memset(&a, 0, sizeof(a));
	a.t = t, a.h = h, a.e = e, a.k = k, a.mi = mi, a.sh = sh, a.pdl = pdl;
	a.resid = dev(x, (size_t)t * h * 4);
	a.norm_w = dnw = dev(nwb, (size_t)h * 2);
	a.eps = 1e-6f;
	a.router = dr = dev(rb, (size_t)e * h * 2);
	a.gate_up = dgu = dev(gub, ngu * 2);
	a.down = ddn = dev(dnb, ndn * 2);
	if (sh) {
		a.sh_gate_up = dsgu = dev(sgub, nsgu * 2);
		a.sh_down = dsdn = dev(sdnb, nsdn * 2);
	}
	a.sigmoid = sigmoid;
	a.norm_topk = norm;
	a.scale = 1.5f;
	a.r_logits = dev(NULL, (size_t)t * e * 4);
	a.weights = dev(NULL, n * 4);
	a.ids = dev(NULL, n * 4);
	a.wgt = dev(NULL, (size_t)LP_LLM_MOE_DEC_MAX_ASSIGN * t * 4);
	a.used = dev(NULL, LP_LLM_MOE_DEC_MAX_ASSIGN * 4);
	a.slot = dev(NULL, (size_t)LP_LLM_MOE_DEC_MAX_ASSIGN * t * 4);
	a.n_used = dev(NULL, 4);
	i = 0;
	a.done = dev(&i, 4);
	a.sh_act = sh ? dev_poisoned((size_t)t * sh) : NULL;
	a.r_act = dev_poisoned(n * mi);
	TRY(lp_llm_k_moe_dec(&a, LP_LLM_MOE_DEC_ALL, NULL, &g_err));
	get(got, a.r_logits, (size_t)t * e * 4);
	close_f32("moe router logits", got, logits, (size_t)t * e, 2e-2f, 1.0f / 64);
	memcpy(logits, got, (size_t)t * e * 4);
	lp_llm_cpu_moe_route(logits, t, e, k, sigmoid ? LP_LLM_GATE_SIGMOID : LP_LLM_GATE_SOFTMAX, norm,
		1.5f, ids, rw);
	for (j = 0; j < t; j++) {
		float *wj = want + (size_t)j * h;
		memset(wj, 0, (size_t)h * 4);
		if (sh) {
			lp_llm_cpu_matmul(gu, xn + (size_t)j * h, sguf, NULL, 1, 2 * sh, h);
			for (i = 0; i < 2 * sh; i++)
				gu[i] = bf(gu[i]);
			lp_llm_cpu_swiglu(act, gu, 1, sh);
			for (i = 0; i < sh; i++)
				act[i] = bf(act[i]);
			lp_llm_cpu_matmul(wj, act, sdnf, NULL, 1, h, sh);
		}
		for (s = 0; s < k; s++) {
			int ex = ids[j * k + s];
			lp_llm_cpu_matmul(gu, xn + (size_t)j * h, guf + (size_t)ex * 2 * mi * h, NULL, 1, 2 * mi, h);
			for (i = 0; i < 2 * mi; i++)
				gu[i] = bf(gu[i]);
			lp_llm_cpu_swiglu(act, gu, 1, mi);
			for (i = 0; i < mi; i++)
				act[i] = bf(act[i]);
			lp_llm_cpu_matmul(eo, act, dnf + (size_t)ex * h * mi, NULL, 1, h, mi);
			for (i = 0; i < h; i++)
				wj[i] += rw[j * k + s] * eo[i];
			if (!seen[ex]++)
				distinct++;
		}
	}
	get(gids, a.ids, n * 4);
	get(gw, a.weights, n * 4);
	get(&gn, a.n_used, 4);
	get(gused, a.used, (size_t)gn * 4);
	get(got, a.resid, (size_t)t * h * 4);
	bits = fnv1a(got, (size_t)t * h * 4);
	assert_memory_equal(gids, ids, n * 4);
	close_f32("moe routing weights", gw, rw, n, 1e-5f, 1e-4f);
	assert_int_equal(gn, distinct); /* each picked expert once, ascending */
	for (u = 0; u < gn; u++) {
		assert_true(seen[gused[u]] > 0);
		if (u)
			assert_true(gused[u] > gused[u - 1]);
	}
	for (i = 0; i < t * h; i++) {
		got[i] -= x[i];
		scale = fabsf(want[i]) > scale ? fabsf(want[i]) : scale;
		err = fabsf(got[i] - want[i]) > err ? fabsf(got[i] - want[i]) : err;
	}
	/* bits: a hash of the output residual, to compare two builds' kernels bit for bit */
	fprintf(stderr, "moe t %d h %d e %d k %d mi %d sh %d%s: %d experts used, max |gpu - cpu| %.3g of %.3g, bits %016llx\n",
		t, h, e, k, mi, sh, norm ? " norm" : "", gn, (double)err, (double)scale, (unsigned long long)bits);
	/* bf16 roundings of gate/up that fall the other way move an output by ~1e-3 of the scale */
	close_f32("moe output", got, want, (size_t)t * h, 1e-2f * scale, 1.0f / 64);
	/* a second run reuses the zeroed counter: the same result */
	TRY(lp_llm_cuda_h2d((void *)a.resid, x, (size_t)t * h * 4, &g_err));
	TRY(lp_llm_k_moe_dec(&a, LP_LLM_MOE_DEC_ALL, NULL, &g_err));
	get(gw, a.weights, n * 4);
	close_f32("moe routing weights (2nd run)", gw, rw, n, 1e-5f, 1e-4f);
	lp_llm_cuda_free(a.resid), lp_llm_cuda_free(dnw), lp_llm_cuda_free(dr), lp_llm_cuda_free(dgu);
	lp_llm_cuda_free(ddn), lp_llm_cuda_free(dsgu), lp_llm_cuda_free(dsdn);
	lp_llm_cuda_free(a.r_logits), lp_llm_cuda_free(a.weights), lp_llm_cuda_free(a.ids);
	lp_llm_cuda_free(a.wgt), lp_llm_cuda_free(a.used), lp_llm_cuda_free(a.slot);
	lp_llm_cuda_free(a.n_used), lp_llm_cuda_free(a.done), lp_llm_cuda_free(a.sh_act);
	lp_llm_cuda_free(a.r_act);
	free(x), free(nwf), free(rf), free(guf), free(dnf), free(sguf), free(sdnf), free(xn);
	free(logits), free(rw), free(want), free(gu), free(act), free(eo), free(got), free(gw);
	free(nwb), free(rb), free(gub), free(dnb), free(sgub), free(sdnb), free(ids), free(gids);
}

static void moe_case(int t, int h, int e, int k, int mi, int sh, int sigmoid, int pdl)
{
	moe_case_n(t, h, e, k, mi, sh, sigmoid, pdl, 0);
}

static void test_moe_dec(void **state)
{
	(void)state;
	moe_case(1, 128, 8, 2, 64, 64, 0, 1);        /* tiny-moe */
	moe_case(1, 1280, 64, 6, 896, 1792, 0, 1);   /* deepseek-ocr-lm */
	moe_case(4, 1280, 16, 6, 896, 1792, 0, 0);   /* tokens share experts */
	moe_case(2, 1000, 10, 3, 72, 0, 1, 1);       /* no shared expert, segments off the lanes */
	moe_case(3, 2048, 12, 4, 136, 272, 1, 0);    /* two load groups a row */
	moe_case(8, 512, 64, 8, 128, 256, 0, 1);     /* 64 assignments */
	moe_case(5, 256, 8, 6, 64, 128, 0, 0);
	moe_case(2, 5120, 66, 2, 64, 0, 0, 1);       /* 33 router row pairs, 4 load groups a row */
	/* one token: DOWN's rows through shared memory (k_moe_down_async), without a shared expert,
	 * and with more row pairs (2048) than the grid has blocks (a block takes several in turn) */
	moe_case(1, 1000, 10, 3, 72, 0, 1, 1);
	moe_case(1, 4096, 16, 4, 64, 128, 0, 1);
	/* renormalised routing weights (norm_topk_prob), at one token and two */
	moe_case_n(1, 1280, 64, 6, 896, 1792, 0, 1, 1);
	moe_case_n(1, 1000, 10, 3, 72, 0, 1, 1, 1);
	moe_case_n(2, 512, 64, 8, 128, 256, 0, 1, 1);
}

static void test_bad_shapes_are_errors(void **state)
{
	struct lp_llm_dec_gemv a;
	(void)state;
	memset(&a, 0, sizeof(a));
	a.mode = LP_LLM_DEC_RESID;
	a.t = 5; /* over LP_LLM_GEMV_MAX_T */
	a.n = 64;
	a.k = 64;
	assert_int_equal(lp_llm_k_dec_gemv(&a, NULL, &g_err), -1);
	a.t = 1;
	a.k = 60; /* not a multiple of 8 */
	assert_int_equal(lp_llm_k_dec_gemv(&a, NULL, &g_err), -1);
	assert_int_equal(lp_llm_k_attn_decode(NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 32, 2, 64,
		128, 1, 128, 0, NULL, &g_err), -1); /* 16 heads a group */
	assert_int_equal(lp_llm_k_attn_decode(NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 8, 2, 64,
		200, 3, 64, 0, NULL, &g_err), -1); /* slices do not cover the context */
	assert_int_equal(lp_llm_k_attn_decode(NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 8, 2, 96,
		128, 1, 128, 0, NULL, &g_err), -1); /* head dim 96 */
	assert_false(lp_llm_moe_dec_fits(9, 128, 8, 2, 64, 64));  /* over LP_LLM_MOE_DEC_MAX_T */
	assert_false(lp_llm_moe_dec_fits(8, 128, 64, 9, 64, 64)); /* 72 assignments */
	assert_false(lp_llm_moe_dec_fits(1, 128, 7, 2, 64, 64));  /* odd expert count */
	assert_false(lp_llm_moe_dec_fits(1, 128, 8, 2, 60, 64));  /* width not a multiple of 8 */
	assert_int_equal(lp_llm_k_attn_decode(NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1, 8, 2, 64,
		65 * 64, 65, 64, 0, NULL, &g_err), -1); /* over LP_LLM_DEC_ATTN_MAX_SPLITS */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dec_qkv_rope),
		cmocka_unit_test(test_dec_resid),
		cmocka_unit_test(test_dec_swiglu),
		cmocka_unit_test(test_dec_argmax),
		cmocka_unit_test(test_dec_attention),
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_moe_dec),
		cmocka_unit_test(test_bad_shapes_are_errors),
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
