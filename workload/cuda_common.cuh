/* cuda_common.cuh: helpers shared by the workload's CUDA files (cuda_kernels.cu, cuda_decode.cu, cuda_moe.cu,
 * and through cuda_engine.cuh cuda_model.cu and cuda_setup.cu):
 * error macros for launchers that return 0/-1 with `struct lp_err *err` in scope, bf16 <-> fp32
 * on raw uint16_t bits, warp reductions, and programmatic-dependent-launch controls. */
#ifndef LP_WORKLOAD_CUDA_COMMON_CUH
#define LP_WORKLOAD_CUDA_COMMON_CUH

extern "C" {
#include "core/err.h"
}
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>

extern "C" {
#include "config/llm_model.h" /* LP_LLM_MAX_EXPERTS */
}

#define LP_CUDA_TRY(call)                                                                  \
	do {                                                                               \
		cudaError_t e_ = (call);                                                   \
		if (e_ != cudaSuccess)                                                     \
			return lp_err_set(err, LP_EOTHER, "%s:%d: %s: %s", __FILE__, __LINE__,   \
				#call, cudaGetErrorString(e_));                            \
	} while (0)

/* After a launch: configuration errors show up in cudaGetLastError. */
#define LP_LAUNCHED(what) LP_CUDA_TRY(cudaGetLastError())

#define STREAM(s) ((cudaStream_t)(s))

static __device__ __forceinline__ float ld(const uint16_t *p)
{
	return __uint_as_float((uint32_t)(*p) << 16);
}

static __device__ __forceinline__ float bf_bits(uint32_t b)
{
	return __uint_as_float(b << 16);
}

static __device__ __forceinline__ uint16_t st(float v)
{
	return __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

/* v rounded to bf16 and back: what a bf16 store and reload give */
static __device__ __forceinline__ float bf_round(float v)
{
	return bf_bits(st(v));
}

static __device__ __forceinline__ float warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

static __device__ __forceinline__ float warp_max(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

static __device__ __forceinline__ float dot8(uint4 a, uint4 b)
{
	float s;
	s = bf_bits(a.x & 0xffffu) * bf_bits(b.x & 0xffffu);
	s = fmaf(__uint_as_float(a.x & 0xffff0000u), __uint_as_float(b.x & 0xffff0000u), s);
	s = fmaf(bf_bits(a.y & 0xffffu), bf_bits(b.y & 0xffffu), s);
	s = fmaf(__uint_as_float(a.y & 0xffff0000u), __uint_as_float(b.y & 0xffff0000u), s);
	s = fmaf(bf_bits(a.z & 0xffffu), bf_bits(b.z & 0xffffu), s);
	s = fmaf(__uint_as_float(a.z & 0xffff0000u), __uint_as_float(b.z & 0xffff0000u), s);
	s = fmaf(bf_bits(a.w & 0xffffu), bf_bits(b.w & 0xffffu), s);
	s = fmaf(__uint_as_float(a.w & 0xffff0000u), __uint_as_float(b.w & 0xffff0000u), s);
	return s;
}

/* Top-k routing of one token by one warp (lane = its lane): the gate's scores (softmax or
 * sigmoid) of logits[0..e), greedy top k (lowest expert on ties), the weights renormalised when
 * norm_topk, times scale, into ids[0..k), weights[0..k) (lanes < k store): lp_llm_cpu_moe_route.
 * logits are read through L2 (another block may have written them), or plainly with L2 false
 * (logits in shared memory). e <= LP_LLM_MAX_EXPERTS. */
template <bool L2 = true>
static __device__ __forceinline__ void moe_topk_warp(int32_t *ids, float *weights,
	const float *logits, int e, int k, int sigmoid, int norm_topk, float scale, int lane)
{
	float s[LP_LLM_MAX_EXPERTS / 32], mx = -FLT_MAX, sum = 0.0f, wsum = 0.0f, wk = 0.0f;
	int nu = (e + 31) / 32;
	for (int u = 0; u < nu; u++) {
		int x = lane + 32 * u;
		s[u] = x >= e ? -FLT_MAX : L2 ? __ldcg(logits + x) : logits[x];
		mx = fmaxf(mx, s[u]);
	}
	if (!sigmoid) {
		mx = warp_max(mx);
		for (int u = 0; u < nu; u++) {
			int x = lane + 32 * u;
			s[u] = x < e ? expf(s[u] - mx) : 0.0f;
			sum += s[u];
		}
		sum = warp_sum(sum);
	}
	for (int u = 0; u < nu; u++) {
		int x = lane + 32 * u;
		s[u] = x >= e ? -1.0f : sigmoid ? 1.0f / (1.0f + expf(-s[u])) : s[u] / sum;
	}
	for (int j = 0; j < k; j++) {
		float v = -1.0f;
		int bi = 0x7fffffff;
		for (int u = 0; u < nu; u++)
			if (s[u] > v) {
				v = s[u];
				bi = lane + 32 * u;
			}
		for (int o = 16; o > 0; o >>= 1) {
			float ov = __shfl_xor_sync(0xffffffffu, v, o);
			int oi = __shfl_xor_sync(0xffffffffu, bi, o);
			if (ov > v || (ov == v && oi < bi)) {
				v = ov;
				bi = oi;
			}
		}
		if ((bi & 31) == lane)
			s[bi >> 5] = -1.0f;
		if (lane == j) {
			ids[j] = bi;
			wk = v;
		}
		wsum += v;
	}
	if (lane < k)
		weights[lane] = (norm_topk ? wk / (wsum + 1e-20f) : wk) * scale;
}

/* Programmatic dependent launch (sm_90): wait for the preceding kernel's results (a no-op when
 * this kernel was launched without the attribute), and let the next kernel start launching. */
static __device__ __forceinline__ void pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

static __device__ __forceinline__ void pdl_launch_next(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

/* Launches k with `pdl` as programmatic stream serialization. */
template <typename... P, typename... A>
static cudaError_t lp_llm_launch_pdl(void (*k)(P...), dim3 grid, dim3 block, size_t smem, cudaStream_t s,
	int pdl, A &&...args)
{
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute at[1];
	cfg.gridDim = grid;
	cfg.blockDim = block;
	cfg.dynamicSmemBytes = smem;
	cfg.stream = s;
	at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	at[0].val.programmaticStreamSerializationAllowed = 1;
	cfg.attrs = pdl ? at : NULL;
	cfg.numAttrs = pdl ? 1 : 0;
	return cudaLaunchKernelEx(&cfg, k, static_cast<A &&>(args)...);
}

/* dst[0..n) = src[0..n) (16-byte units) by a block of NT threads, 8 loads of a thread in flight
 * before its stores: a prologue that copies an input vector into shared memory. */
template <int NT>
static __device__ __forceinline__ void block_copy16(uint4 *dst, const uint4 *src, int n)
{
	for (int i0 = threadIdx.x; i0 < n; i0 += 8 * NT) {
		uint4 v[8];
#pragma unroll
		for (int u = 0; u < 8; u++)
			if (i0 + u * NT < n)
				v[u] = src[i0 + u * NT];
#pragma unroll
		for (int u = 0; u < 8; u++)
			if (i0 + u * NT < n)
				dst[i0 + u * NT] = v[u];
	}
}

/* The block's per-row 1 / rms from each thread's sums of squares ss[j] (j < T) over its NW warps:
 * inv[j] = rsqrt(sum / k + eps); red holds T * NW floats (shared); one barrier. */
template <int T, int NW>
static __device__ __forceinline__ void block_inv_rms(float (&ss)[T], float *red, int lane, int wid, int k, float eps,
	float (&inv)[T])
{
#pragma unroll
	for (int j = 0; j < T; j++) {
		ss[j] = warp_sum(ss[j]);
		if (lane == 0)
			red[j * NW + wid] = ss[j];
	}
	__syncthreads();
#pragma unroll
	for (int j = 0; j < T; j++) {
		float tot = 0.0f;
		for (int w = 0; w < NW; w++)
			tot += red[j * NW + w];
		inv[j] = rsqrtf(tot / (float)k + eps);
	}
}

/* The RMSNorm prologue of the decode GEMVs, by a block of NT threads: for j < T,
 * xs[j][0..k) = bf16(v * rsqrt(mean(v^2) + eps) * norm_w) with v = resid[j] (+ bf16 delta[j]),
 * rows rs floats apart; as lp_llm_k_rmsnorm computes it. Each thread takes chunks of 8 values
 * (16-byte loads) and issues all its loads before it sums them; with KEEP, at T <= 2 and k <= 16
 * NT (every model here) it keeps them, with the norm weights loaded alongside, for the second
 * pass: one round trip instead of two, for 16 T + 8 more registers a thread. k % 8 == 0; red holds T * NT / 32 floats; ends with a barrier. */
template <int T, int NT, bool KEEP = true>
static __device__ __forceinline__ void block_rmsnorm_bf16(uint16_t *xs, const float *resid, size_t rs,
	const uint16_t *delta, const uint16_t *norm_w, int k, float eps, float *red)
{
	constexpr int NW = NT / 32, P = 2;
	const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5, k8 = k / 8;
	float ss[T], inv[T];
#pragma unroll
	for (int j = 0; j < T; j++)
		ss[j] = 0.0f;
	if (KEEP && T <= 2 && k8 <= NT * P) {
		float e[T][P][8];
		uint4 nw[P];
#pragma unroll
		for (int q = 0; q < P; q++) {
			int c = q * NT + tid;
			nw[q] = make_uint4(0, 0, 0, 0);
#pragma unroll
			for (int j = 0; j < T; j++)
#pragma unroll
				for (int i = 0; i < 8; i++)
					e[j][q][i] = 0.0f;
			if (c < k8) {
				nw[q] = ((const uint4 *)norm_w)[c];
#pragma unroll
				for (int j = 0; j < T; j++) {
					const float4 *r = (const float4 *)(resid + j * rs) + 2 * c;
					float4 a = r[0], b = r[1];
					e[j][q][0] = a.x, e[j][q][1] = a.y, e[j][q][2] = a.z, e[j][q][3] = a.w;
					e[j][q][4] = b.x, e[j][q][5] = b.y, e[j][q][6] = b.z, e[j][q][7] = b.w;
				}
				if (delta) {
#pragma unroll
					for (int j = 0; j < T; j++) {
						uint4 d = ((const uint4 *)(delta + j * rs))[c];
						const uint32_t dv[4] = { d.x, d.y, d.z, d.w };
#pragma unroll
						for (int i = 0; i < 4; i++) {
							e[j][q][2 * i] += bf_bits(dv[i] & 0xffffu);
							e[j][q][2 * i + 1] += __uint_as_float(dv[i] & 0xffff0000u);
						}
					}
				}
			}
		}
#pragma unroll
		for (int j = 0; j < T; j++)
#pragma unroll
			for (int q = 0; q < P; q++) /* the order of the generic path below */
#pragma unroll
				for (int h = 0; h < 2; h++)
					ss[j] += e[j][q][4 * h] * e[j][q][4 * h] + e[j][q][4 * h + 1] * e[j][q][4 * h + 1] +
						 e[j][q][4 * h + 2] * e[j][q][4 * h + 2] + e[j][q][4 * h + 3] * e[j][q][4 * h + 3];
		block_inv_rms<T, NW>(ss, red, lane, wid, k, eps, inv);
#pragma unroll
		for (int q = 0; q < P; q++) {
			int c = q * NT + tid;
			if (c >= k8)
				continue;
			const uint32_t wv[4] = { nw[q].x, nw[q].y, nw[q].z, nw[q].w };
#pragma unroll
			for (int j = 0; j < T; j++) {
				uint32_t o[4];
#pragma unroll
				for (int i = 0; i < 4; i++)
					o[i] = (uint32_t)st(e[j][q][2 * i] * inv[j] * bf_bits(wv[i] & 0xffffu)) |
					       ((uint32_t)st(e[j][q][2 * i + 1] * inv[j] * __uint_as_float(wv[i] & 0xffff0000u)) << 16);
				((uint4 *)(xs + (size_t)j * k))[c] = make_uint4(o[0], o[1], o[2], o[3]);
			}
		}
		__syncthreads();
		return;
	}
	for (int c0 = 0; c0 < k8; c0 += NT * P) {
		float4 v[T][P][2];
#pragma unroll
		for (int q = 0; q < P; q++) {
			int c = c0 + q * NT + tid;
#pragma unroll
			for (int j = 0; j < T; j++) {
				v[j][q][0] = v[j][q][1] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
				if (c < k8) {
					const float4 *r = (const float4 *)(resid + j * rs) + 2 * c;
					v[j][q][0] = r[0];
					v[j][q][1] = r[1];
				}
			}
		}
		if (delta) {
#pragma unroll
			for (int q = 0; q < P; q++) {
				int c = c0 + q * NT + tid;
#pragma unroll
				for (int j = 0; j < T; j++)
					if (c < k8) {
						uint4 d = ((const uint4 *)(delta + j * rs))[c];
						v[j][q][0].x += bf_bits(d.x & 0xffffu);
						v[j][q][0].y += __uint_as_float(d.x & 0xffff0000u);
						v[j][q][0].z += bf_bits(d.y & 0xffffu);
						v[j][q][0].w += __uint_as_float(d.y & 0xffff0000u);
						v[j][q][1].x += bf_bits(d.z & 0xffffu);
						v[j][q][1].y += __uint_as_float(d.z & 0xffff0000u);
						v[j][q][1].z += bf_bits(d.w & 0xffffu);
						v[j][q][1].w += __uint_as_float(d.w & 0xffff0000u);
					}
			}
		}
#pragma unroll
		for (int q = 0; q < P; q++)
#pragma unroll
			for (int j = 0; j < T; j++)
#pragma unroll
				for (int h = 0; h < 2; h++) {
					float4 a = v[j][q][h];
					ss[j] += a.x * a.x + a.y * a.y + a.z * a.z + a.w * a.w;
				}
	}
	block_inv_rms<T, NW>(ss, red, lane, wid, k, eps, inv);
	for (int c0 = 0; c0 < k8; c0 += NT * P) {
		uint4 nw[P];
		float4 v[T][P][2];
#pragma unroll
		for (int q = 0; q < P; q++) {
			int c = c0 + q * NT + tid;
			if (c < k8) {
				nw[q] = ((const uint4 *)norm_w)[c];
#pragma unroll
				for (int j = 0; j < T; j++) {
					const float4 *r = (const float4 *)(resid + j * rs) + 2 * c;
					v[j][q][0] = r[0];
					v[j][q][1] = r[1];
				}
			}
		}
#pragma unroll
		for (int q = 0; q < P; q++) {
			int c = c0 + q * NT + tid;
			if (c >= k8)
				continue;
			const uint32_t wv[4] = { nw[q].x, nw[q].y, nw[q].z, nw[q].w };
#pragma unroll
			for (int j = 0; j < T; j++) {
				float e[8] = { v[j][q][0].x, v[j][q][0].y, v[j][q][0].z, v[j][q][0].w,
					v[j][q][1].x, v[j][q][1].y, v[j][q][1].z, v[j][q][1].w };
				uint32_t o[4];
				if (delta) {
					uint4 d = ((const uint4 *)(delta + j * rs))[c];
					const uint32_t dv[4] = { d.x, d.y, d.z, d.w };
#pragma unroll
					for (int i = 0; i < 4; i++) {
						e[2 * i] += bf_bits(dv[i] & 0xffffu);
						e[2 * i + 1] += __uint_as_float(dv[i] & 0xffff0000u);
					}
				}
#pragma unroll
				for (int i = 0; i < 4; i++)
					o[i] = (uint32_t)st(e[2 * i] * inv[j] * bf_bits(wv[i] & 0xffffu)) |
					       ((uint32_t)st(e[2 * i + 1] * inv[j] * __uint_as_float(wv[i] & 0xffff0000u)) << 16);
				((uint4 *)(xs + (size_t)j * k))[c] = make_uint4(o[0], o[1], o[2], o[3]);
			}
		}
	}
	__syncthreads();
}

#endif
