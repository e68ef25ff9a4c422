/* cpu_ops.c: the operators of the reference workload in fp32 C (see cpu_ops.h). The CPU engine
 * (cpu_model.c) strings them into a decoder; the CUDA kernels are tested against them. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cpu_ops.h"
#include "rng.h"

#ifdef _OPENMP
#define LP_PRAGMA(x) _Pragma(#x)
#define LP_OMP_FOR_IF(cond) LP_PRAGMA(omp parallel for schedule(static) if(cond))
#else
#define LP_OMP_FOR_IF(cond)
#endif

struct lp_llm_tensor_gen lp_llm_tensor_gen(const struct lp_llm_config *c, enum lp_llm_tensor_kind kind,
	int layer, int expert)
{
	struct lp_llm_tensor_gen g;
	double h = c->hidden_size, std = 0;
	g.stream = ((uint64_t)(layer + 1) << 40) | ((uint64_t)kind << 32) | (uint64_t)(uint32_t)expert;
	g.offset = 0.0f;
	switch (kind) {
	case LP_LLM_T_EMBED: std = 0.25; break;
	case LP_LLM_T_FINAL_NORM: case LP_LLM_T_ATTN_NORM: case LP_LLM_T_MLP_NORM:
		std = 0.05;
		g.offset = 1.0f;
		break;
	case LP_LLM_T_QKV_BIAS: std = 0.05; break;
	case LP_LLM_T_O: std = 1.0 / sqrt((double)c->num_attention_heads * c->head_dim); break;
	case LP_LLM_T_DOWN: std = 1.0 / sqrt((double)c->intermediate_size); break;
	case LP_LLM_T_EXP_DOWN: std = 1.0 / sqrt((double)c->moe_intermediate_size); break;
	case LP_LLM_T_SH_DOWN:
		std = 1.0 / sqrt((double)c->moe_intermediate_size * (c->n_shared_experts ? c->n_shared_experts : 1));
		break;
	case LP_LLM_T_PROMPT: std = 1.0; break;
	case LP_LLM_T_LM_HEAD: case LP_LLM_T_QKV: case LP_LLM_T_GATE_UP: case LP_LLM_T_ROUTER:
	case LP_LLM_T_EXP_GATE_UP: case LP_LLM_T_SH_GATE_UP:
		std = 1.0 / sqrt(h);
		break;
	}
	g.mul = (float)(std / (double)LP_RNG_SUM4_STD);
	return g;
}

void lp_llm_cpu_fill(float *dst, size_t n, uint64_t seed, struct lp_llm_tensor_gen g)
{
	long i, nl = (long)n;
	LP_OMP_FOR_IF(nl > 65536)
	for (i = 0; i < nl; i++)
		dst[i] = lp_bf16_to_f32(lp_rng_weight_bf16(seed, g.stream, (uint64_t)i, g.mul, g.offset));
}

int32_t lp_llm_prompt_token(uint64_t seed, int vocab_size, int b, int t)
{
	uint64_t s = ((uint64_t)LP_LLM_T_PROMPT << 32) | (uint64_t)(uint32_t)b;
	return (int32_t)(lp_rng_hash(seed, s, (uint64_t)t) % (uint64_t)vocab_size);
}

void lp_llm_cpu_rmsnorm(float *out, const float *x, const float *w, int rows, int n, float eps)
{
	int r, i;
	for (r = 0; r < rows; r++) {
		const float *xr = x + (size_t)r * n;
		float *o = out + (size_t)r * n;
		float ss = 0.0f, inv;
		for (i = 0; i < n; i++)
			ss += xr[i] * xr[i];
		inv = 1.0f / sqrtf(ss / (float)n + eps);
		for (i = 0; i < n; i++)
			o[i] = xr[i] * inv * w[i];
	}
}

void lp_llm_cpu_matmul(float *y, const float *x, const float *w, const float *bias, int t, int n, int k)
{
	long j;
	int big = (long)n * k * t > (1L << 18); /* below: threads cost more than they save */
	(void)big;
	LP_OMP_FOR_IF(big)
	for (j = 0; j < n; j++) {
		const float *wj = w + (size_t)j * k;
		int r, i;
		for (r = 0; r < t; r++) {
			const float *xr = x + (size_t)r * k;
			float s = 0.0f;
			for (i = 0; i < k; i++)
				s += xr[i] * wj[i];
			y[(size_t)r * n + j] = s + (bias ? bias[j] : 0.0f);
		}
	}
}

void lp_llm_rope_table(float *tab, int max_pos, int head_dim, double theta)
{
	int p, i, half = head_dim / 2;
	for (p = 0; p < max_pos; p++)
		for (i = 0; i < half; i++) {
			double a = (double)p * pow(theta, -2.0 * i / head_dim);
			tab[((size_t)p * half + i) * 2] = (float)cos(a);
			tab[((size_t)p * half + i) * 2 + 1] = (float)sin(a);
		}
}

void lp_llm_cpu_rope(float *x, int rows, int row_stride, int heads, int d, int tn, int pos0,
	const float *tab)
{
	int r, h, i, half = d / 2;
	for (r = 0; r < rows; r++) {
		int pos = pos0 + r % tn;
		for (h = 0; h < heads; h++) {
			float *v = x + (size_t)r * row_stride + (size_t)h * d;
			for (i = 0; i < half; i++) {
				float c = tab[((size_t)pos * half + i) * 2], s = tab[((size_t)pos * half + i) * 2 + 1];
				float x1 = v[i], x2 = v[i + half];
				v[i] = x1 * c - x2 * s;
				v[i + half] = x2 * c + x1 * s;
			}
		}
	}
}

void lp_llm_cpu_attention(float *out, const float *q, int q_stride, const float *k, const float *v,
	int batch, int tn, int pos0, int n_heads, int n_kv, int d, int max_pos)
{
	long job, jobs = (long)batch * tn * n_heads;
	int group = n_heads / n_kv;
	float scale = 1.0f / sqrtf((float)d);
	LP_OMP_FOR_IF(jobs * (pos0 + tn) * d > (1L << 15))
	for (job = 0; job < jobs; job++) {
		int row = (int)(job / n_heads), h = (int)(job % n_heads);
		int b = row / tn, n_keys = pos0 + row % tn + 1, kvh = h / group, j, i;
		const float *qr = q + (size_t)row * q_stride + (size_t)h * d;
		const float *kb = k + ((size_t)b * n_kv + kvh) * (size_t)max_pos * d;
		const float *vb = v + ((size_t)b * n_kv + kvh) * (size_t)max_pos * d;
		float *o = out + (size_t)row * n_heads * d + (size_t)h * d;
		float m = -FLT_MAX, l = 0.0f;
		/* online softmax (one pass), the same recurrence the CUDA kernels use */
		memset(o, 0, sizeof(float) * (size_t)d);
		for (j = 0; j < n_keys; j++) {
			float s = 0.0f, m_new, corr, p;
			for (i = 0; i < d; i++)
				s += qr[i] * kb[(size_t)j * d + i];
			s *= scale;
			m_new = s > m ? s : m;
			corr = expf(m - m_new);
			p = expf(s - m_new);
			l = l * corr + p;
			for (i = 0; i < d; i++)
				o[i] = o[i] * corr + p * vb[(size_t)j * d + i];
			m = m_new;
		}
		for (i = 0; i < d; i++)
			o[i] /= l;
	}
}

void lp_llm_cpu_softmax(float *x, int n)
{
	float m = -FLT_MAX, s = 0.0f;
	int i;
	for (i = 0; i < n; i++)
		m = x[i] > m ? x[i] : m;
	for (i = 0; i < n; i++) {
		x[i] = expf(x[i] - m);
		s += x[i];
	}
	for (i = 0; i < n; i++)
		x[i] /= s;
}

void lp_llm_cpu_swiglu(float *out, const float *gu, int t, int inter)
{
	int r, i;
	for (r = 0; r < t; r++) {
		const float *g = gu + (size_t)r * 2 * inter, *u = g + inter;
		float *o = out + (size_t)r * inter;
		for (i = 0; i < inter; i++)
			o[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
	}
}

void lp_llm_cpu_moe_route(const float *logits, int t, int e, int k, enum lp_llm_gate gate,
	int norm_topk, float scale, int32_t *ids, float *weights)
{
	float s[LP_LLM_MAX_EXPERTS];
	int r, i, j;
	for (r = 0; r < t; r++) {
		float sum = 0.0f;
		memcpy(s, logits + (size_t)r * e, sizeof(float) * (size_t)e);
		if (gate == LP_LLM_GATE_SOFTMAX)
			lp_llm_cpu_softmax(s, e);
		else
			for (i = 0; i < e; i++)
				s[i] = 1.0f / (1.0f + expf(-s[i]));
		for (j = 0; j < k; j++) {
			int best = -1;
			for (i = 0; i < e; i++)
				if (s[i] >= 0.0f && (best < 0 || s[i] > s[best]))
					best = i;
			ids[(size_t)r * k + j] = best;
			weights[(size_t)r * k + j] = s[best];
			sum += s[best];
			s[best] = -1.0f; /* scores are >= 0: taken */
		}
		for (j = 0; j < k; j++) {
			float w = weights[(size_t)r * k + j];
			if (norm_topk)
				w /= sum + 1e-20f;
			weights[(size_t)r * k + j] = w * scale;
		}
	}
}

int32_t lp_llm_cpu_argmax(const float *x, int n)
{
	int i, best = 0;
	for (i = 1; i < n; i++)
		if (x[i] > x[best])
			best = i;
	return best;
}
