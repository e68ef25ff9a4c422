/* cuda_decode.cu: the fused decode kernels (cuda_api.h, "fused decode"): what one decode step of
 * a dense layer runs when --gemv fused (the default) is on, in 5 kernels a layer instead of 10,
 * each tested against the CPU reference ops it replaces (tests/unit/test_gpu_workload_decode.c).
 *
 * At batch 1 a decode step reads every weight once, so it is bound by memory bandwidth, and its
 * time is the weight bytes over the bandwidth plus what each of its ~80 launches leaves idle. The
 * GEMV kernel therefore does the element-wise work around each projection (RMSNorm before it,
 * RoPE + KV append, SwiGLU, the residual add or greedy sampling after it) so that nothing else is
 * launched, keeps two rows' 16-byte loads in flight per warp, and, with programmatic dependent
 * launch, loads its first weights while the kernel before it is still finishing.
 * cuda_model.cu chooses this path (forward_fused); prefill is unchanged. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_common.cuh" /* first: core/err.h with C linkage */
#include "cuda_api.h"

#include <cooperative_groups.h>

#define DG_WARPS 8
#define DG_THREADS (DG_WARPS * 32)
#define DG_U 4 /* 16-byte chunks per lane and row in one load group */
/* shared memory for the input vectors: t * k bf16 (an opt-in above 48 KB) */
#define DG_SMEM_MAX (160u << 10)

/* --- GEMV with fused prologue and epilogue --- */

/* A total order on (value, index) pairs in 64 bits: larger values first, then lower indices. */
static __device__ __forceinline__ unsigned long long argmax_key(float v, int idx)
{
	uint32_t u = __float_as_uint(v);
	u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
	return ((unsigned long long)u << 32) | (unsigned long long)(0xffffffffu - (uint32_t)idx);
}

/* The two weight rows warp-pair p computes: SwiGLU pairs gate row i with up row i; QKV pairs the
 * two halves that RoPE rotates together (then neighbouring V rows); the rest take rows 2p, 2p+1. */
template <int MODE>
static __device__ __forceinline__ void pair_rows(const lp_llm_dec_gemv &a, int p, int &r0, int &r1)
{
	if (MODE == LP_LLM_DEC_SWIGLU) {
		r0 = p;
		r1 = p + a.n / 2;
	} else if (MODE == LP_LLM_DEC_QKV_ROPE) {
		int half = a.d / 2, nrot = (a.nh + a.nkv) * half;
		if (p < nrot) {
			r0 = (p / half) * a.d + p % half;
			r1 = r0 + half;
		} else {
			r0 = (a.nh + a.nkv) * a.d + 2 * (p - nrot);
			r1 = r0 + 1;
		}
	} else {
		r0 = 2 * p;
		r1 = r0 + 1;
	}
}

static __device__ __forceinline__ void load_group(uint4 (&w0)[DG_U], uint4 (&w1)[DG_U],
	const uint16_t *w, int r0, int r1, int g, int k8, int lane)
{
	const uint4 *a0 = (const uint4 *)w + (size_t)r0 * k8, *a1 = (const uint4 *)w + (size_t)r1 * k8;
#pragma unroll
	for (int u = 0; u < DG_U; u++) {
		int c = (g * DG_U + u) * 32 + lane;
		if (c < k8) {
			w0[u] = __ldcs(a0 + c); /* streamed once per step: evict first */
			w1[u] = __ldcs(a1 + c);
		} else {
			w0[u] = make_uint4(0, 0, 0, 0);
			w1[u] = make_uint4(0, 0, 0, 0);
		}
	}
}

template <int T>
static __device__ __forceinline__ void dot_group(float (&s0)[T], float (&s1)[T],
	const uint4 (&w0)[DG_U], const uint4 (&w1)[DG_U], const uint16_t *xs, int k8, int g, int lane)
{
#pragma unroll
	for (int u = 0; u < DG_U; u++) {
		int c = (g * DG_U + u) * 32 + lane;
		if (c < k8) {
#pragma unroll
			for (int j = 0; j < T; j++) {
				uint4 xv = ((const uint4 *)xs)[(size_t)j * k8 + c];
				s0[j] += dot8(w0[u], xv);
				s1[j] += dot8(w1[u], xv);
			}
		}
	}
}

/* What the epilogue of a pair reads, loaded when the pair starts (lane 0): it arrives while the
 * rows stream instead of costing a round trip at the end. */
template <int T>
struct epi_in {
	float2 resid[T];        /* RESID: the residual values of rows r0, r1 */
	float cs, sn, b0, b1;   /* QKV_ROPE: the rotation of the pair, the biases */
};

template <int T, int MODE>
static __device__ __forceinline__ void epilogue_load(const lp_llm_dec_gemv &a, int p, int r0,
	int r1, int pos, epi_in<T> &in)
{
	if (MODE == LP_LLM_DEC_RESID) {
#pragma unroll
		for (int j = 0; j < T; j++) /* r1 == r0 + 1, r0 even */
			in.resid[j] = *(const float2 *)(a.resid + (size_t)j * a.n + r0);
	} else if (MODE == LP_LLM_DEC_QKV_ROPE) {
		int half = a.d / 2, nrot = (a.nh + a.nkv) * half;
		in.cs = 1.0f;
		in.sn = 0.0f;
		if (p < nrot) {
			in.cs = a.rope_tab[((size_t)pos * half + p % half) * 2];
			in.sn = a.rope_tab[((size_t)pos * half + p % half) * 2 + 1];
		}
		in.b0 = a.bias ? ld(a.bias + r0) : 0.0f;
		in.b1 = a.bias ? ld(a.bias + r1) : 0.0f;
	}
}

/* Lane 0 of a warp: the outputs of rows r0, r1 (pair p) for every token. */
template <int T, int MODE>
static __device__ __forceinline__ void epilogue(const lp_llm_dec_gemv &a, int p, int r0, int r1,
	const float (&s0)[T], const float (&s1)[T], int pos, const epi_in<T> &in,
	unsigned long long (&best)[T])
{
#pragma unroll
	for (int j = 0; j < T; j++) {
		if (MODE == LP_LLM_DEC_RESID) {
			float2 v = in.resid[j];
			v.x += bf_round(s0[j]);
			v.y += bf_round(s1[j]);
			*(float2 *)(a.resid + (size_t)j * a.n + r0) = v;
		} else if (MODE == LP_LLM_DEC_SWIGLU) {
			float g = bf_round(s0[j]), u = bf_round(s1[j]);
			a.out[(size_t)j * (a.n / 2) + p] = st(g / (1.0f + expf(-g)) * u);
		} else if (MODE == LP_LLM_DEC_QKV_ROPE) {
			int d = a.d, half = d / 2, nrot = (a.nh + a.nkv) * half;
			float x0 = bf_round(s0[j]), x1 = bf_round(s1[j]);
			if (a.bias) {
				x0 += in.b0;
				x1 += in.b1;
			}
			if (p < nrot) {
				int head = p / half, i = p % half;
				float o1 = x0 * in.cs - x1 * in.sn, o2 = x1 * in.cs + x0 * in.sn;
				if (head < a.nh) {
					uint16_t *q = a.q + (size_t)j * a.nh * d + (size_t)head * d + i;
					q[0] = st(o1);
					q[half] = st(o2);
				} else {
					uint16_t *k = a.k_cache +
						(((size_t)j * a.nkv + (head - a.nh)) * a.max_pos + pos) * d + i;
					k[0] = st(o1);
					k[half] = st(o2);
				}
			} else {
				int v = 2 * (p - nrot), kvh = v / d, i = v % d;
				uint16_t *vp = a.v_cache + (((size_t)j * a.nkv + kvh) * a.max_pos + pos) * d + i;
				vp[0] = st(x0);
				vp[1] = st(x1);
			}
		} else { /* ARGMAX */
			unsigned long long k0 = argmax_key(s0[j], r0), k1 = argmax_key(s1[j], r1);
			a.logits[(size_t)j * a.n + r0] = s0[j];
			a.logits[(size_t)j * a.n + r1] = s1[j];
			k0 = k0 > k1 ? k0 : k1;
			best[j] = best[j] > k0 ? best[j] : k0;
		}
	}
}

/* Moves the load cursor (pair lp, group lg, rows l0 l1) on by one group. */
template <int MODE>
static __device__ __forceinline__ void cursor_next(const lp_llm_dec_gemv &a, int groups,
	int stride, int np, int &lp, int &lg, int &l0, int &l1)
{
	if (++lg == groups) {
		lg = 0;
		lp += stride;
		if (lp < np)
			pair_rows<MODE>(a, lp, l0, l1);
	}
}

template <int T, int MODE>
static __global__ void __launch_bounds__(DG_THREADS, 2) k_dec_gemv(const lp_llm_dec_gemv a)
{
	extern __shared__ __align__(16) uint16_t xs[]; /* [T][k] bf16: the input vectors */
	__shared__ float red[T][DG_WARPS];
	__shared__ unsigned long long bbest[T][DG_WARPS];
	__shared__ int last, sidx[T];
	const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
	const int np = a.n / 2, k = a.k, k8 = k / 8;
	const int groups = (k8 + 32 * DG_U - 1) / (32 * DG_U);
	const int stride = gridDim.x * DG_WARPS;
	int p = blockIdx.x * DG_WARPS + wid, g = 0, r0 = 0, r1 = 0, pos = 0;
	/* the load cursor runs two groups ahead of the sums: (lp, lg), rows (l0, l1) */
	int lp = p, lg = 0, l0 = 0, l1 = 0;
	/* Two buffers of a load group each, a (a0, a1) and b (b0, b1). At one token they are used
	 * in turn (a, b, a, ...): the sums of one wait for its loads while the other's are in
	 * flight, and it is loaded again (the group after the other's) as soon as its sums are
	 * done. At 2-4 tokens b is copied into a after each group's sums and then loaded again: the
	 * copy waits for b's loads before the next ones go out, which leaves one group in flight
	 * instead of two (ncu, llama-3.2-1b lm_head at one token: 38% of the stall samples, at that
	 * copy), but every form tried with the buffers in turn was slower there (NOTES v5:
	 * deepseek-ocr-lm at 4 tokens 1.445 and 1.501 against 1.411 ms a step; these kernels spill
	 * at 3-4 tokens, and a reload from local memory returns behind the loads in flight). */
	uint4 a0[DG_U], a1[DG_U], b0[DG_U], b1[DG_U];
	unsigned long long best[T];
	float s0[T], s1[T];
	epi_in<T> in;

	/* Before waiting for the kernel before (programmatic dependent launch): the weights (they
	 * never change) of this warp's first two load groups, and for RESID the first pair's
	 * residual values. Those are final: this kernel starts only once every block of the kernel
	 * before has passed its own pdl_wait, so all kernels before that one are complete, and the
	 * one kernel that may still run (attention, or SwiGLU) does not write the residual. *pos is
	 * read after the wait where the kernel before is the lm_head kernel that advances it, else
	 * (pos_ready) before, with the first pair's RoPE rotation. */
	const bool pos_early = MODE == LP_LLM_DEC_QKV_ROPE && a.pos_ready;
	if (pos_early)
		pos = *a.pos;
	if (p < np) {
		pair_rows<MODE>(a, p, l0, l1);
		load_group(a0, a1, a.w, l0, l1, 0, k8, lane);
		if (lane == 0 && (MODE == LP_LLM_DEC_RESID || pos_early))
			epilogue_load<T, MODE>(a, p, l0, l1, pos, in);
	}
	cursor_next<MODE>(a, groups, stride, np, lp, lg, l0, l1);
	if (lp < np)
		load_group(b0, b1, a.w, l0, l1, lg, k8, lane);
	cursor_next<MODE>(a, groups, stride, np, lp, lg, l0, l1);
	pdl_wait();
	pdl_launch_next();
	if ((MODE == LP_LLM_DEC_QKV_ROPE && !pos_early) || MODE == LP_LLM_DEC_ARGMAX)
		pos = *a.pos;
	if (MODE == LP_LLM_DEC_QKV_ROPE && !pos_early && lane == 0 && p < np) {
		pair_rows<MODE>(a, p, r0, r1);
		epilogue_load<T, MODE>(a, p, r0, r1, pos, in);
	}
	if (MODE == LP_LLM_DEC_RESID) {
		block_copy16<DG_THREADS>((uint4 *)xs, (const uint4 *)a.x_bf16, T * k8);
	} else { /* xs = rmsnorm(resid (+ delta)) * norm_w, as lp_llm_k_rmsnorm computes it */
		block_rmsnorm_bf16<T, DG_THREADS>(xs, a.resid, a.resid_stride ? (size_t)a.resid_stride : (size_t)k,
			MODE == LP_LLM_DEC_ARGMAX ? a.delta : NULL, a.norm_w, k, a.eps, &red[0][0]);
	}
	__syncthreads();

#pragma unroll
	for (int j = 0; j < T; j++)
		best[j] = 0ull;
	if (T == 1) {
		/* the sums of group g of pair p from buffer (w0, w1), which then takes the load
		 * cursor's group; at a pair's last group, its epilogue. False once the warp has no
		 * pair left. */
		auto step = [&](uint4 (&w0)[DG_U], uint4 (&w1)[DG_U]) -> bool {
			dot_group<T>(s0, s1, w0, w1, xs, k8, g, lane);
			if (lp < np) {
				load_group(w0, w1, a.w, l0, l1, lg, k8, lane);
				cursor_next<MODE>(a, groups, stride, np, lp, lg, l0, l1);
			}
			if (++g < groups)
				return true;
			s0[0] = warp_sum(s0[0]);
			s1[0] = warp_sum(s1[0]);
			if (lane == 0)
				epilogue<T, MODE>(a, p, r0, r1, s0, s1, pos, in, best);
			s0[0] = s1[0] = 0.0f;
			g = 0;
			p += stride;
			if (p >= np)
				return false;
			pair_rows<MODE>(a, p, r0, r1);
			if (lane == 0)
				epilogue_load<T, MODE>(a, p, r0, r1, pos, in);
			return true;
		};
		s0[0] = s1[0] = 0.0f;
		if (p < np)
			pair_rows<MODE>(a, p, r0, r1);
		while (p < np && step(a0, a1) && step(b0, b1))
			;
	} else {
		for (int first = 1; p < np; p += stride, first = 0) {
			pair_rows<MODE>(a, p, r0, r1);
			if (lane == 0 && !first)
				epilogue_load<T, MODE>(a, p, r0, r1, pos, in);
#pragma unroll
			for (int j = 0; j < T; j++)
				s0[j] = s1[j] = 0.0f;
			for (int gi = 0; gi < groups; gi++) {
				dot_group<T>(s0, s1, a0, a1, xs, k8, gi, lane);
#pragma unroll
				for (int u = 0; u < DG_U; u++) {
					a0[u] = b0[u];
					a1[u] = b1[u];
				}
				if (lp < np) { /* two groups in flight while the next is summed */
					load_group(b0, b1, a.w, l0, l1, lg, k8, lane);
					cursor_next<MODE>(a, groups, stride, np, lp, lg, l0, l1);
				}
			}
#pragma unroll
			for (int j = 0; j < T; j++) {
				s0[j] = warp_sum(s0[j]);
				s1[j] = warp_sum(s1[j]);
			}
			if (lane == 0)
				epilogue<T, MODE>(a, p, r0, r1, s0, s1, pos, in, best);
		}
	}

	if (MODE != LP_LLM_DEC_ARGMAX)
		return;
	/* greedy sampling: block maximum, one atomic per block and token; the last block finishes */
	if (lane == 0)
		for (int j = 0; j < T; j++)
			bbest[j][wid] = best[j];
	__syncthreads();
	if (threadIdx.x < T) {
		unsigned long long m = 0ull;
		for (int w = 0; w < DG_WARPS; w++)
			m = bbest[threadIdx.x][w] > m ? bbest[threadIdx.x][w] : m;
		atomicMax(a.best + threadIdx.x, m);
	}
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0)
		last = atomicAdd(a.done, 1) == (int)gridDim.x - 1;
	__syncthreads();
	if (!last)
		return;
	__threadfence();
	const int tn = a.tn > 0 ? a.tn : 1;
	if (threadIdx.x < T) {
		int j = threadIdx.x;
		unsigned long long key = atomicExch(a.best + j, 0ull); /* read, and zero for next time */
		int idx = (int)(0xffffffffu - (uint32_t)key);
		a.next[j] = idx;
		sidx[j] = idx;
		if (a.tokens)
			a.tokens[(size_t)j * a.tokens_stride + pos + tn - a.prompt_len] = idx;
	}
	if (threadIdx.x == 0) { /* every block has read *pos (and resid): the forward pass is done */
		*a.pos = pos + tn;
		*a.done = 0;
	}
	if (a.embed) { /* the next step's input row: 16-byte loads, a thread's all in flight */
		__syncthreads();
		for (int c0 = threadIdx.x; c0 < T * k8; c0 += 4 * DG_THREADS) {
			uint4 v[4];
#pragma unroll
			for (int u = 0; u < 4; u++) {
				int c = c0 + u * DG_THREADS;
				if (c < T * k8)
					v[u] = ((const uint4 *)(a.embed + (size_t)sidx[c / k8] * k))[c % k8];
			}
#pragma unroll
			for (int u = 0; u < 4; u++) {
				int c = c0 + u * DG_THREADS;
				if (c < T * k8) {
					float4 *o = (float4 *)(a.embed_out + (size_t)(c / k8) * k) + 2 * (c % k8);
					o[0] = make_float4(bf_bits(v[u].x & 0xffffu), __uint_as_float(v[u].x & 0xffff0000u),
						bf_bits(v[u].y & 0xffffu), __uint_as_float(v[u].y & 0xffff0000u));
					o[1] = make_float4(bf_bits(v[u].z & 0xffffu), __uint_as_float(v[u].z & 0xffff0000u),
						bf_bits(v[u].w & 0xffffu), __uint_as_float(v[u].w & 0xffff0000u));
				}
			}
		}
	}
	__threadfence();
}

static int dev_sms(struct lp_err *err)
{
	static int sms;
	if (!sms) {
		int dev = 0;
		LP_CUDA_TRY(cudaGetDevice(&dev));
		LP_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	}
	return sms;
}

template <int T, int MODE>
static int dec_gemv_t(const lp_llm_dec_gemv *a, cudaStream_t s, struct lp_err *err)
{
	/* per instantiation: the shared-memory opt-in set so far, and the occupancy at a size */
	static size_t smem_set = 48u << 10, occ_smem = 0;
	static int occ = 0;
	void (*k)(const lp_llm_dec_gemv) = k_dec_gemv<T, MODE>;
	size_t smem = (size_t)T * a->k * 2;
	int sms = dev_sms(err), np = a->n / 2, grid;
	if (sms <= 0)
		return -1;
	if (smem > smem_set) {
		LP_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
		smem_set = smem;
	}
	if (!occ || occ_smem != smem) {
		LP_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, DG_THREADS, smem));
		occ_smem = smem;
		if (occ < 1)
			occ = 1;
	}
	grid = (np + DG_WARPS - 1) / DG_WARPS;
	if (grid > occ * sms)
		grid = occ * sms; /* then warps loop over their pairs */
	LP_CUDA_TRY(lp_llm_launch_pdl(k, dim3((unsigned)grid), dim3(DG_THREADS), smem, s, a->pdl, *a));
	return 0;
}

template <int T>
static int dec_gemv_mode(const lp_llm_dec_gemv *a, cudaStream_t s, struct lp_err *err)
{
	switch (a->mode) {
	case LP_LLM_DEC_QKV_ROPE: return dec_gemv_t<T, LP_LLM_DEC_QKV_ROPE>(a, s, err);
	case LP_LLM_DEC_RESID: return dec_gemv_t<T, LP_LLM_DEC_RESID>(a, s, err);
	case LP_LLM_DEC_SWIGLU: return dec_gemv_t<T, LP_LLM_DEC_SWIGLU>(a, s, err);
	case LP_LLM_DEC_ARGMAX: return dec_gemv_t<T, LP_LLM_DEC_ARGMAX>(a, s, err);
	}
	return lp_err_set(err, LP_EOTHER, "dec_gemv: unknown mode %d", (int)a->mode);
}

extern "C" int lp_llm_dec_gemv_fits(int t, int k)
{
	return t >= 1 && t <= LP_LLM_GEMV_MAX_T && k > 0 && k % 8 == 0 &&
	       (size_t)t * k * 2 <= DG_SMEM_MAX;
}

extern "C" int lp_llm_k_dec_gemv(const struct lp_llm_dec_gemv *a, void *stream, struct lp_err *err)
{
	if (!lp_llm_dec_gemv_fits(a->t, a->k) || a->n < 2 || a->n % 2)
		return lp_err_set(err, LP_EOTHER, "dec_gemv: %d tokens, n %d, k %d: out of its range",
			a->t, a->n, a->k);
	if (a->mode == LP_LLM_DEC_QKV_ROPE && (a->d % 2 || a->n != (a->nh + 2 * a->nkv) * a->d))
		return lp_err_set(err, LP_EOTHER, "dec_gemv: qkv rows %d do not match %d + 2 x %d heads of %d",
			a->n, a->nh, a->nkv, a->d);
	switch (a->t) {
	case 1: return dec_gemv_mode<1>(a, STREAM(stream), err);
	case 2: return dec_gemv_mode<2>(a, STREAM(stream), err);
	case 3: return dec_gemv_mode<3>(a, STREAM(stream), err);
	default: return dec_gemv_mode<4>(a, STREAM(stream), err);
	}
}

/* --- decode attention ---
 * Block (sequence b, KV head, slice): the G query heads of the group share each K/V tile. Per
 * tile of 64 keys: V goes to shared memory, two threads per key hold half a K row each in
 * registers for the G scores, a warp per head updates the online softmax (m, l), then every
 * thread accumulates its (head, dim) outputs from shared memory. */

/* The tile of keys [k0, k0 + n): K half rows into kv (thread = key * 2 + half), V rows into vs
 * (zeros past n). Row `only` >= 0: that row alone; `skip` >= 0: every row but that one. */
template <int D>
static __device__ __forceinline__ void load_tile(uint4 (&kv)[D / 16], uint16_t *vs,
	const uint16_t *kb, const uint16_t *vb, int k0, int n, int skip, int only, int tid)
{
	constexpr int NV = LP_LLM_DEC_ATTN_TILE * D / 8 / 128; /* V chunks a thread: all in flight */
	const int j = tid >> 1, h2 = tid & 1;
	uint4 vv[NV];
#pragma unroll
	for (int i = 0; i < NV; i++) {
		int c = tid + 128 * i, r = c / (D / 8);
		vv[i] = make_uint4(0, 0, 0, 0);
		if (r < n && r != skip && (only < 0 || r == only))
			vv[i] = ((const uint4 *)(vb + (size_t)k0 * D))[c];
	}
	if (j < n && j != skip && (only < 0 || j == only)) {
		const uint4 *kr = (const uint4 *)(kb + (size_t)(k0 + j) * D + h2 * (D / 2));
#pragma unroll
		for (int c = 0; c < D / 16; c++)
			kv[c] = kr[c];
	}
#pragma unroll
	for (int i = 0; i < NV; i++) {
		int c = tid + 128 * i, r = c / (D / 8);
		if (r != skip && (only < 0 || r == only))
			((uint4 *)vs)[c] = vv[i];
	}
}

/* CL: the n_splits blocks of a (sequence, KV head) form a thread block cluster and merge through
 * distributed shared memory (two cluster barriers) instead of partials in global memory, a fence,
 * an atomic and the last block's loads from L2. GM: the largest group (query heads a KV head)
 * the kernel is built for, 1 or LP_LLM_DEC_ATTN_GMAX (see attn_decode_d). */
template <int D, bool CL, int GM>
static __global__ void __launch_bounds__(128) k_attn_decode(uint16_t *out, const uint16_t *q,
	const uint16_t *kc, const uint16_t *vc, float *partial, int *counters, const int *pos_p,
	int nh, int nkv, int max_pos, int n_splits, int split_len)
{
	constexpr int TL = LP_LLM_DEC_ATTN_TILE, NO = (GM * D + 127) / 128;
	__shared__ float qs[GM][D];
	__shared__ __align__(16) uint16_t vs[TL * D];
	__shared__ float ps[GM][TL];
	__shared__ float ms[GM], ls[GM], cs[GM];
	__shared__ int last;
	const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
	const int bk = blockIdx.x, b = bk / nkv, kvh = bk % nkv, G = nh / nkv, split = blockIdx.y;
	float acc[NO];
	uint4 kv[D / 16];

	/* Before waiting for the kernel before (QKV, programmatic dependent launch): *pos and the
	 * cache below it are final (see k_dec_gemv), so the first tile's loads go out now, all but
	 * the row at *pos, which QKV is writing. */
	const int pos = *pos_p, start = split * split_len, end = min(pos + 1, start + split_len);
	const int n0 = min(TL, end - start), at = pos - start < n0 ? pos - start : -1;
	const uint16_t *kb = kc + ((size_t)b * nkv + kvh) * (size_t)max_pos * D;
	const uint16_t *vb = vc + ((size_t)b * nkv + kvh) * (size_t)max_pos * D;
	const uint16_t *qb = q + ((size_t)b * nh + (size_t)kvh * G) * D;
	const float scale = rsqrtf((float)D);
	if (n0 > 0)
		load_tile<D>(kv, vs, kb, vb, start, n0, at, -1, tid);
	pdl_wait();
	pdl_launch_next();
	{ /* q and the row at *pos (both written by QKV) in one round trip: q's loads go out first */
		constexpr int NQ = (GM * D / 8 + 127) / 128;
		uint4 qv[NQ];
#pragma unroll
		for (int i = 0; i < NQ; i++)
			if (tid + 128 * i < G * D / 8)
				qv[i] = ((const uint4 *)qb)[tid + 128 * i];
		if (n0 > 0 && at >= 0)
			load_tile<D>(kv, vs, kb, vb, start, n0, -1, at, tid);
#pragma unroll
		for (int i = 0; i < NQ; i++) {
			int c = tid + 128 * i;
			if (c < G * D / 8) {
				const uint32_t e[4] = { qv[i].x, qv[i].y, qv[i].z, qv[i].w };
				float *qq = &qs[0][0] + (c / (D / 8)) * D + (c % (D / 8)) * 8;
#pragma unroll
				for (int h = 0; h < 4; h++) {
					qq[2 * h] = bf_bits(e[h] & 0xffffu) * scale;
					qq[2 * h + 1] = __uint_as_float(e[h] & 0xffff0000u) * scale;
				}
			}
		}
	}
	if (tid < GM) {
		ms[tid] = -FLT_MAX;
		ls[tid] = 0.0f;
	}
#pragma unroll
	for (int u = 0; u < NO; u++)
		acc[u] = 0.0f;
	__syncthreads();

	for (int k0 = start; k0 < end; k0 += TL) {
		const int n = min(TL, end - k0), j = tid >> 1, h2 = tid & 1;
		float s[GM];
		if (k0 != start)
			load_tile<D>(kv, vs, kb, vb, k0, n, -1, -1, tid);
#pragma unroll
		for (int g = 0; g < GM; g++)
			s[g] = 0.0f;
		if (j < n) {
#pragma unroll
			for (int c = 0; c < D / 16; c++) {
				const uint32_t e[4] = { kv[c].x, kv[c].y, kv[c].z, kv[c].w };
#pragma unroll
				for (int g = 0; g < GM; g++) {
					if (g < G) {
						const float *qq = &qs[g][h2 * (D / 2) + c * 8];
#pragma unroll
						for (int i = 0; i < 4; i++) {
							s[g] = fmaf(bf_bits(e[i] & 0xffffu), qq[2 * i], s[g]);
							s[g] = fmaf(__uint_as_float(e[i] & 0xffff0000u), qq[2 * i + 1], s[g]);
						}
					}
				}
			}
		}
#pragma unroll
		for (int g = 0; g < GM; g++) {
			s[g] += __shfl_xor_sync(0xffffffffu, s[g], 1);
			if (g < G && h2 == 0)
				ps[g][j] = j < n ? s[g] : -FLT_MAX;
		}
		__syncthreads();
		for (int g = w; g < G; g += 4) {
			float v0 = ps[g][lane], v1 = ps[g][lane + 32];
			float m_old = ms[g], m_new = fmaxf(m_old, warp_max(fmaxf(v0, v1)));
			float p0 = lane < n ? expf(v0 - m_new) : 0.0f;
			float p1 = lane + 32 < n ? expf(v1 - m_new) : 0.0f;
			float sum;
			ps[g][lane] = p0;
			ps[g][lane + 32] = p1;
			sum = warp_sum(p0 + p1);
			if (lane == 0) {
				float corr = expf(m_old - m_new);
				cs[g] = corr;
				ls[g] = ls[g] * corr + sum;
				ms[g] = m_new;
			}
		}
		__syncthreads();
#pragma unroll
		for (int u = 0; u < NO; u++) {
			int o = tid + 128 * u;
			if (o < G * D) {
				int g = o / D, dd = o % D;
				float a = acc[u] * cs[g];
				for (int jj = 0; jj < n; jj++)
					a = fmaf(ps[g][jj], bf_bits(vs[jj * D + dd]), a);
				acc[u] = a;
			}
		}
		__syncthreads();
	}

	const int h0 = kvh * G;
	if (n_splits == 1) {
#pragma unroll
		for (int u = 0; u < NO; u++) {
			int o = tid + 128 * u;
			if (o < G * D)
				out[((size_t)b * nh + h0) * D + o] = st(acc[u] / ls[o / D]);
		}
		return;
	}
	if (CL) { /* (m, l) in ms, ls, acc into vs (free now): G D floats <= 64 D bf16 */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 /* clusters; never launched below (attn_cluster_ok) */
		namespace cg = cooperative_groups;
		cg::cluster_group cl = cg::this_cluster();
		float *pacc = (float *)vs;
		const int per = (G * D + n_splits - 1) / n_splits, o0 = (int)cl.block_rank() * per;
#pragma unroll
		for (int u = 0; u < NO; u++) {
			int o = tid + 128 * u;
			if (o < G * D)
				pacc[o] = acc[u];
		}
		cl.sync();
		/* this block merges outputs [o0, o0 + per) from every block's shared memory */
		for (int o = o0 + tid; o < o0 + per && o < G * D; o += 128) {
			const int g = o / D;
			float mm[LP_LLM_DEC_ATTN_CLUSTER_MAX], ll[LP_LLM_DEC_ATTN_CLUSTER_MAX], vv[LP_LLM_DEC_ATTN_CLUSTER_MAX];
			float mx = -FLT_MAX, l = 0.0f, a = 0.0f;
#pragma unroll
			for (int r = 0; r < LP_LLM_DEC_ATTN_CLUSTER_MAX; r++)
				if (r < n_splits) {
					mm[r] = cl.map_shared_rank(&ms[0], r)[g];
					ll[r] = cl.map_shared_rank(&ls[0], r)[g];
					vv[r] = cl.map_shared_rank(pacc, r)[o];
				}
#pragma unroll
			for (int r = 0; r < LP_LLM_DEC_ATTN_CLUSTER_MAX; r++)
				if (r < n_splits && ll[r] > 0.0f)
					mx = fmaxf(mx, mm[r]);
#pragma unroll
			for (int r = 0; r < LP_LLM_DEC_ATTN_CLUSTER_MAX; r++)
				if (r < n_splits && ll[r] > 0.0f) {
					float f = expf(mm[r] - mx);
					l = fmaf(ll[r], f, l);
					a = fmaf(f, vv[r], a);
				}
			out[((size_t)b * nh + h0) * D + o] = st(a / l);
		}
		cl.sync(); /* the other blocks read this one's shared memory until here */
#endif
	} else {
		/* partial[(b nh + h) n_splits + split] = (m, l, acc[D]); an empty slice leaves (-max, 0, 0) */
#pragma unroll
		for (int u = 0; u < NO; u++) {
			int o = tid + 128 * u;
			if (o < G * D) {
				int g = o / D, dd = o % D;
				float *e = partial + (((size_t)b * nh + h0 + g) * n_splits + split) * (D + 2);
				e[2 + dd] = acc[u];
				if (dd == 0) {
					e[0] = ms[g];
					e[1] = ls[g];
				}
			}
		}
		__threadfence();
		__syncthreads();
		if (tid == 0)
			last = atomicAdd(counters + bk, 1) == n_splits - 1;
		__syncthreads();
		if (!last)
			return;
		__threadfence();
		/* the merge: output o = (head g, dim dd) of thread tid + 128 u; per batch of 16 slices, lane
		 * i & 15 loads slice i's (m, l) of the warp's head (a warp shares g: D >= 32) and each thread
		 * its dd of every slice's acc, all in one round trip; then an online rescale across batches. */
		constexpr int UB = NO < 4 ? NO : 4, SB = 16;
		for (int u0 = 0; u0 < NO; u0 += UB) {
			float mx[UB], lsum[UB], a[UB];
#pragma unroll
			for (int ub = 0; ub < UB; ub++) {
				mx[ub] = -FLT_MAX;
				lsum[ub] = a[ub] = 0.0f;
			}
			for (int s0 = 0; s0 < n_splits; s0 += SB) {
				float v[UB][SB], mm[UB], ll[UB];
				const int sp = s0 + (lane & (SB - 1));
#pragma unroll
				for (int ub = 0; ub < UB; ub++) {
					const int o = tid + 128 * (u0 + ub), g = o / D, dd = o % D;
					const float *e = partial + ((size_t)b * nh + h0 + g) * n_splits * (D + 2);
					mm[ub] = -FLT_MAX;
					ll[ub] = 0.0f;
					if (o < G * D && sp < n_splits) {
						mm[ub] = __ldcg(e + (size_t)sp * (D + 2));
						ll[ub] = __ldcg(e + (size_t)sp * (D + 2) + 1);
					}
#pragma unroll
					for (int i = 0; i < SB; i++)
						v[ub][i] = o < G * D && s0 + i < n_splits ?
							__ldcg(e + (size_t)(s0 + i) * (D + 2) + 2 + dd) : 0.0f;
				}
#pragma unroll
				for (int ub = 0; ub < UB; ub++) {
					if (tid + 128 * (u0 + ub) >= G * D) /* whole warps */
						continue;
					float m = ll[ub] > 0.0f ? mm[ub] : -FLT_MAX;
					float nm = fmaxf(mx[ub], warp_max(m));
					float corr = expf(mx[ub] - nm), f = ll[ub] > 0.0f ? expf(m - nm) : 0.0f;
					float lb = warp_sum(lane < SB ? ll[ub] * f : 0.0f);
					float x = a[ub] * corr;
#pragma unroll
					for (int i = 0; i < SB; i++)
						x = fmaf(__shfl_sync(0xffffffffu, f, i), v[ub][i], x);
					a[ub] = x;
					lsum[ub] = lsum[ub] * corr + lb;
					mx[ub] = nm;
				}
			}
#pragma unroll
			for (int ub = 0; ub < UB; ub++) {
				const int o = tid + 128 * (u0 + ub);
				if (o < G * D)
					out[((size_t)b * nh + h0) * D + o] = st(a[ub] / lsum[ub]);
			}
		}
		if (tid == 0)
			counters[bk] = 0;
	}
}

/* Whether k_attn_decode<D, true, GM> runs as clusters of n blocks here (cached per n). */
template <int D, int GM>
static bool attn_cluster_ok(int n)
{
	static signed char ok[LP_LLM_DEC_ATTN_CLUSTER_MAX + 1];
	if (n < 2 || n > LP_LLM_DEC_ATTN_CLUSTER_MAX)
		return false;
	if (!ok[n]) {
		void (*k)(uint16_t *, const uint16_t *, const uint16_t *, const uint16_t *, float *, int *,
			const int *, int, int, int, int, int) = k_attn_decode<D, true, GM>;
		cudaLaunchConfig_t cfg = {};
		cudaLaunchAttribute at[1];
		cudaFuncAttributes fa;
		int clusters = 0;
		ok[n] = -1;
		/* the code loaded for this GPU must have the cluster merge (built for sm_90 or later) */
		if (cudaFuncGetAttributes(&fa, k) != cudaSuccess || fa.binaryVersion < 90) {
			cudaGetLastError();
			return false;
		}
		if (n > 8 && cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
			cudaGetLastError();
			return false;
		}
		cfg.gridDim = dim3(1, (unsigned)n);
		cfg.blockDim = dim3(128);
		at[0].id = cudaLaunchAttributeClusterDimension;
		at[0].val.clusterDim.x = 1;
		at[0].val.clusterDim.y = (unsigned)n;
		at[0].val.clusterDim.z = 1;
		cfg.attrs = at;
		cfg.numAttrs = 1;
		if (cudaOccupancyMaxActiveClusters(&clusters, k, &cfg) == cudaSuccess && clusters > 0)
			ok[n] = 1;
		cudaGetLastError();
	}
	return ok[n] > 0;
}

template <int D, int GM>
static cudaError_t attn_decode_g(uint16_t *out, const uint16_t *q, const uint16_t *kc,
	const uint16_t *vc, float *partial, int *counters, const int *pos, int batch, int nh, int nkv,
	int max_pos, int n_splits, int split_len, int pdl, cudaStream_t s)
{
	if (attn_cluster_ok<D, GM>(n_splits)) {
		cudaLaunchConfig_t cfg = {};
		cudaLaunchAttribute at[2];
		cfg.gridDim = dim3((unsigned)(batch * nkv), (unsigned)n_splits);
		cfg.blockDim = dim3(128);
		cfg.stream = s;
		at[0].id = cudaLaunchAttributeClusterDimension;
		at[0].val.clusterDim.x = 1;
		at[0].val.clusterDim.y = (unsigned)n_splits;
		at[0].val.clusterDim.z = 1;
		at[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
		at[1].val.programmaticStreamSerializationAllowed = 1;
		cfg.attrs = at;
		cfg.numAttrs = pdl ? 2 : 1;
		return cudaLaunchKernelEx(&cfg, k_attn_decode<D, true, GM>, out, q, kc, vc, partial, counters,
			pos, nh, nkv, max_pos, n_splits, split_len);
	}
	return lp_llm_launch_pdl(k_attn_decode<D, false, GM>, dim3((unsigned)(batch * nkv),
		(unsigned)n_splits), dim3(128), 0, s, pdl, out, q, kc, vc, partial, counters, pos, nh, nkv,
		max_pos, n_splits, split_len);
}

/* One query head a KV head (no grouped queries, e.g. deepseek-ocr-lm) gets kernels built for a
 * group of one: the kernels for groups of up to 8 carry 8 score and output slots a thread, with
 * a runtime test on each, and 8 heads' q and scores in shared memory (deepseek-ocr-lm b1: -23 us
 * a decode step, NOTES v8). LP_LLM_ATTN_GROUP=generic keeps those kernels, for comparisons. */
template <int D>
static cudaError_t attn_decode_d(uint16_t *out, const uint16_t *q, const uint16_t *kc,
	const uint16_t *vc, float *partial, int *counters, const int *pos, int batch, int nh, int nkv,
	int max_pos, int n_splits, int split_len, int pdl, cudaStream_t s)
{
	static int generic = -1;
	if (generic < 0) {
		const char *v = getenv("LP_LLM_ATTN_GROUP");
		generic = v && !strcmp(v, "generic");
	}
	if (nh == nkv && !generic)
		return attn_decode_g<D, 1>(out, q, kc, vc, partial, counters, pos, batch, nh, nkv,
			max_pos, n_splits, split_len, pdl, s);
	return attn_decode_g<D, LP_LLM_DEC_ATTN_GMAX>(out, q, kc, vc, partial, counters, pos, batch, nh,
		nkv, max_pos, n_splits, split_len, pdl, s);
}

extern "C" int lp_llm_k_attn_decode(uint16_t *out, const uint16_t *q, const uint16_t *k_cache,
	const uint16_t *v_cache, float *partial, int *counters, const int *pos, int batch, int nh,
	int nkv, int d, int max_pos, int n_splits, int split_len, int pdl, void *stream,
	struct lp_err *err)
{
	cudaStream_t s = STREAM(stream);
	if (nkv < 1 || nh % nkv || nh / nkv > LP_LLM_DEC_ATTN_GMAX || n_splits < 1 ||
	    n_splits > LP_LLM_DEC_ATTN_MAX_SPLITS ||
	    split_len < LP_LLM_DEC_ATTN_TILE || split_len % LP_LLM_DEC_ATTN_TILE ||
	    (long)split_len * n_splits < max_pos)
		return lp_err_set(err, LP_EOTHER,
			"attn_decode: bad shape (heads %d/%d, %d splits of %d keys, %d positions)", nh, nkv,
			n_splits, split_len, max_pos);
	switch (d) {
	case 32:
		LP_CUDA_TRY(attn_decode_d<32>(out, q, k_cache, v_cache, partial, counters, pos, batch, nh,
			nkv, max_pos, n_splits, split_len, pdl, s));
		return 0;
	case 64:
		LP_CUDA_TRY(attn_decode_d<64>(out, q, k_cache, v_cache, partial, counters, pos, batch, nh,
			nkv, max_pos, n_splits, split_len, pdl, s));
		return 0;
	case 128:
		LP_CUDA_TRY(attn_decode_d<128>(out, q, k_cache, v_cache, partial, counters, pos, batch, nh,
			nkv, max_pos, n_splits, split_len, pdl, s));
		return 0;
	case 256:
		LP_CUDA_TRY(attn_decode_d<256>(out, q, k_cache, v_cache, partial, counters, pos, batch, nh,
			nkv, max_pos, n_splits, split_len, pdl, s));
		return 0;
	}
	return lp_err_set(err, LP_EOTHER, "attn_decode: head dim %d is not 32, 64, 128 or 256", d);
}

/* --- residual add --- */

static __global__ void k_add(float *x, const uint16_t *delta, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		x[i] += ld(delta + i);
}

extern "C" int lp_llm_k_add(float *x, const uint16_t *delta, size_t n, void *stream,
	struct lp_err *err)
{
	size_t blocks = (n + 255) / 256;
	k_add<<<(unsigned)(blocks > 4096 ? 4096 : blocks ? blocks : 1), 256, 0, STREAM(stream)>>>(x, delta, n);
	LP_LAUNCHED("add");
	return 0;
}
