/* cuda_kernels.cu: the reference workload's own GPU kernels (cuda_api.h), each the GPU twin of an
 * operator in cpu_ops.c and tested against it. bf16 storage, fp32 arithmetic. The projections
 * go through cuBLAS (lp_llm_gemm, at the end); cuda_model.cu strings everything into a decoder.
 * Kernels read positions from device memory (never from the host) so that the decode step can be
 * captured once in a CUDA graph and replayed at every position. */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <float.h>
#include <mma.h>
#include <stdint.h>
#include <stdlib.h>

#include "cuda_common.cuh" /* first: core/err.h with C linkage */
#include "cuda_api.h"
#include "rng.h"

#define LP_BLAS_TRY(call)                                                                  \
	do {                                                                               \
		cublasStatus_t s_ = (call);                                                \
		if (s_ != CUBLAS_STATUS_SUCCESS)                                           \
			return lp_err_set(err, LP_EOTHER, "%s:%d: %s: %s", __FILE__, __LINE__,   \
				#call, cublasGetStatusString(s_));                         \
	} while (0)

typedef __nv_bfloat16 bf16;

/* Sum over a block of up to 1024 threads (all threads get the result). */
static __device__ float block_sum(float v)
{
	__shared__ float part[32];
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
	v = warp_sum(v);
	__syncthreads();
	if (lane == 0)
		part[w] = v;
	__syncthreads();
	v = lane < nw ? part[lane] : 0.0f;
	return warp_sum(v);
}

static unsigned blocks_for(size_t n, unsigned threads)
{
	size_t b = (n + threads - 1) / threads;
	return (unsigned)(b > 65535u * 16u ? 65535u * 16u : (b ? b : 1));
}

/* --- memory --- */

extern "C" int lp_llm_cuda_device_ok(struct lp_err *err)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n == 0) {
		lp_err_set(err, LP_EENV, "no usable CUDA device (%s)",
			e != cudaSuccess ? cudaGetErrorString(e) : "none found");
		return lp_err_hint(err, "run 'nvidia-smi' to check the driver, or use --device cpu");
	}
	return 0;
}

extern "C" int lp_llm_cuda_malloc(void **p, size_t bytes, struct lp_err *err)
{
	LP_CUDA_TRY(cudaMalloc(p, bytes ? bytes : 1));
	return 0;
}

extern "C" void lp_llm_cuda_free(void *p)
{
	if (p)
		cudaFree(p);
}

extern "C" int lp_llm_cuda_h2d(void *dst, const void *src, size_t bytes, struct lp_err *err)
{
	LP_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
	return 0;
}

extern "C" int lp_llm_cuda_d2h(void *dst, const void *src, size_t bytes, struct lp_err *err)
{
	LP_CUDA_TRY(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
	return 0;
}

extern "C" int lp_llm_cuda_sync(struct lp_err *err)
{
	LP_CUDA_TRY(cudaDeviceSynchronize());
	return 0;
}

/* --- weights --- */

static __global__ void k_fill(uint16_t *dst, size_t n, uint64_t seed, uint64_t stream, float mul,
	float offset)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		dst[i] = lp_rng_weight_bf16(seed, stream, i, mul, offset);
}

extern "C" int lp_llm_k_fill(uint16_t *dst, size_t n, uint64_t seed, struct lp_llm_tensor_gen g,
	void *stream, struct lp_err *err)
{
	k_fill<<<blocks_for(n, 256), 256, 0, STREAM(stream)>>>(dst, n, seed, g.stream, g.mul, g.offset);
	LP_LAUNCHED("fill");
	return 0;
}

/* --- embedding, norm --- */

static __global__ void k_embed(float *x, const uint16_t *table, const int32_t *tokens, int h)
{
	int r = blockIdx.x;
	const uint16_t *row = table + (size_t)tokens[r] * h;
	for (int i = threadIdx.x; i < h; i += blockDim.x)
		x[(size_t)r * h + i] = ld(row + i);
}

extern "C" int lp_llm_k_embed(float *x, const uint16_t *table, const int32_t *tokens, int t, int h,
	void *stream, struct lp_err *err)
{
	k_embed<<<t, 256, 0, STREAM(stream)>>>(x, table, tokens, h);
	LP_LAUNCHED("embed");
	return 0;
}

static __global__ void k_rmsnorm(uint16_t *out, float *x, const uint16_t *delta, const uint16_t *w,
	int h, int row_stride, int row_off, float eps)
{
	size_t in = ((size_t)blockIdx.x * row_stride + row_off) * h;
	float *xr = x + in, ss = 0.0f, inv;
	for (int i = threadIdx.x; i < h; i += blockDim.x) {
		float v = xr[i];
		if (delta) {
			v += ld(delta + in + i);
			xr[i] = v;
		}
		ss += v * v;
	}
	inv = rsqrtf(block_sum(ss) / (float)h + eps);
	for (int i = threadIdx.x; i < h; i += blockDim.x)
		out[(size_t)blockIdx.x * h + i] = st(xr[i] * inv * ld(w + i));
}

extern "C" int lp_llm_k_rmsnorm(uint16_t *out, float *x, const uint16_t *delta, const uint16_t *w,
	int rows, int h, int row_stride, int row_off, float eps, void *stream, struct lp_err *err)
{
	int threads = h >= 4096 ? 1024 : h >= 1024 ? 512 : 256;
	k_rmsnorm<<<rows, threads, 0, STREAM(stream)>>>(out, x, delta, w, h, row_stride, row_off, eps);
	LP_LAUNCHED("rmsnorm");
	return 0;
}

/* --- bias + RoPE + KV-cache append --- */

static __global__ void k_qkv_rope(uint16_t *q, uint16_t *kc, uint16_t *vc, const uint16_t *qkv,
	const uint16_t *bias, const float *tab, const int *pos_p, int tn, int nh, int nkv, int d,
	int max_pos)
{
	int r = blockIdx.x, half = d / 2, b = r / tn, pos = *pos_p + r % tn;
	int qkv_dim = (nh + 2 * nkv) * d;
	const uint16_t *in = qkv + (size_t)r * qkv_dim;
	int n_rot = (nh + nkv) * half;
	for (int j = threadIdx.x; j < n_rot + nkv * d; j += blockDim.x) {
		if (j < n_rot) {
			int head = j / half, i = j % half, c = head * d + i;
			float x1 = ld(in + c), x2 = ld(in + c + half);
			float cs = tab[((size_t)pos * half + i) * 2], sn = tab[((size_t)pos * half + i) * 2 + 1];
			float o1, o2;
			if (bias) {
				x1 += ld(bias + c);
				x2 += ld(bias + c + half);
			}
			o1 = x1 * cs - x2 * sn;
			o2 = x2 * cs + x1 * sn;
			if (head < nh) {
				q[(size_t)r * nh * d + c] = st(o1);
				q[(size_t)r * nh * d + c + half] = st(o2);
			} else {
				size_t at = (((size_t)b * nkv + (head - nh)) * max_pos + pos) * d + i;
				kc[at] = st(o1);
				kc[at + half] = st(o2);
			}
		} else {
			int v = j - n_rot, kvh = v / d, i = v % d, c = (nh + nkv) * d + v;
			float x = ld(in + c) + (bias ? ld(bias + c) : 0.0f);
			vc[(((size_t)b * nkv + kvh) * max_pos + pos) * d + i] = st(x);
		}
	}
}

extern "C" int lp_llm_k_qkv_rope(uint16_t *q, uint16_t *k_cache, uint16_t *v_cache,
	const uint16_t *qkv, const uint16_t *bias, const float *rope_tab, const int *pos, int t, int tn,
	int nh, int nkv, int d, int max_pos, void *stream, struct lp_err *err)
{
	k_qkv_rope<<<t, 256, 0, STREAM(stream)>>>(q, k_cache, v_cache, qkv, bias, rope_tab, pos, tn,
		nh, nkv, d, max_pos);
	LP_LAUNCHED("qkv_rope");
	return 0;
}

/* --- attention ---
 * One warp per (query row, head); warps of a block take consecutive heads of one row, so they
 * share a KV head under GQA. Keys go in chunks of 32, one key per lane for the scores (q in
 * shared memory), then the chunk's softmax weights are broadcast and every lane accumulates its
 * d/32 output dimensions: the online-softmax recurrence of lp_llm_cpu_attention. Blocks along y
 * take successive slices of split_len keys; with several slices, (m, l, acc) go to `partial` and
 * k_attn_merge combines them. */
#define LP_ATTN_WARPS 4
#define LP_ATTN_MAX_DPL (LP_LLM_MAX_HEAD_DIM / 32)

static __global__ void k_attention(uint16_t *out, const uint16_t *q, const uint16_t *kc,
	const uint16_t *vc, float *partial, const int *pos_p, int t, int tn, int nh, int nkv, int d,
	int max_pos, int n_splits, int split_len)
{
	__shared__ float qs[LP_ATTN_WARPS][LP_LLM_MAX_HEAD_DIM];
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int idx = blockIdx.x * LP_ATTN_WARPS + w;
	if (idx >= t * nh)
		return; /* whole warp leaves; no block-wide sync below */
	int row = idx / nh, h = idx % nh, b = row / tn, kvh = h / (nh / nkv);
	int n_keys = *pos_p + row % tn + 1, dpl = d / 32;
	int start = blockIdx.y * split_len, end = min(n_keys, start + split_len);
	const uint16_t *kb = kc + ((size_t)b * nkv + kvh) * (size_t)max_pos * d;
	const uint16_t *vb = vc + ((size_t)b * nkv + kvh) * (size_t)max_pos * d;
	float scale = rsqrtf((float)d), m = -FLT_MAX, l = 0.0f, acc[LP_ATTN_MAX_DPL];

	for (int i = lane; i < d; i += 32)
		qs[w][i] = ld(q + (size_t)row * nh * d + (size_t)h * d + i) * scale;
	__syncwarp();
	for (int u = 0; u < LP_ATTN_MAX_DPL; u++)
		acc[u] = 0.0f;
	for (int k0 = start; k0 < end; k0 += 32) {
		int key = k0 + lane, n = min(32, end - k0);
		float s = -FLT_MAX, p, m_new, corr;
		if (key < end) {
			const uint4 *kr = (const uint4 *)(kb + (size_t)key * d);
			s = 0.0f;
			for (int c = 0; c < d / 8; c++) {
				uint4 v = kr[c];
				const uint16_t *e = (const uint16_t *)&v;
				for (int j = 0; j < 8; j++)
					s += qs[w][c * 8 + j] * __uint_as_float((uint32_t)e[j] << 16);
			}
		}
		m_new = fmaxf(m, warp_max(s));
		corr = expf(m - m_new);
		p = key < end ? expf(s - m_new) : 0.0f;
		l = l * corr + warp_sum(p);
		for (int u = 0; u < dpl; u++)
			acc[u] *= corr;
		for (int j = 0; j < n; j++) {
			float pj = __shfl_sync(0xffffffffu, p, j);
			const uint16_t *vr = vb + (size_t)(k0 + j) * d;
			for (int u = 0; u < dpl; u++)
				acc[u] += pj * ld(vr + lane + 32 * u);
		}
		m = m_new;
	}
	if (n_splits == 1) {
		for (int u = 0; u < dpl; u++)
			out[(size_t)row * nh * d + (size_t)h * d + lane + 32 * u] = st(acc[u] / l);
		return;
	}
	float *pp = partial + ((size_t)idx * n_splits + blockIdx.y) * (d + 2);
	if (lane == 0) {
		pp[0] = start < end ? m : -FLT_MAX;
		pp[1] = start < end ? l : 0.0f;
	}
	for (int u = 0; u < dpl; u++)
		pp[2 + lane + 32 * u] = start < end ? acc[u] : 0.0f;
}

static __global__ void k_attn_merge(uint16_t *out, const float *partial, int t, int nh, int d,
	int n_splits)
{
	int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
	int idx = blockIdx.x * LP_ATTN_WARPS + w;
	if (idx >= t * nh)
		return;
	const float *pp = partial + (size_t)idx * n_splits * (d + 2);
	float mx = -FLT_MAX, l = 0.0f;
	for (int s = 0; s < n_splits; s++)
		if (pp[s * (d + 2) + 1] > 0.0f)
			mx = fmaxf(mx, pp[s * (d + 2)]);
	for (int s = 0; s < n_splits; s++)
		if (pp[s * (d + 2) + 1] > 0.0f)
			l += pp[s * (d + 2) + 1] * expf(pp[s * (d + 2)] - mx);
	for (int i = lane; i < d; i += 32) {
		float a = 0.0f;
		for (int s = 0; s < n_splits; s++)
			if (pp[s * (d + 2) + 1] > 0.0f)
				a += pp[s * (d + 2) + 2 + i] * expf(pp[s * (d + 2)] - mx);
		out[(size_t)idx * d + i] = st(a / l);
	}
}

extern "C" int lp_llm_k_attention(uint16_t *out, const uint16_t *q, const uint16_t *k_cache,
	const uint16_t *v_cache, float *partial, const int *pos, int batch, int tn, int nh, int nkv,
	int d, int max_pos, int n_splits, int split_len, void *stream, struct lp_err *err)
{
	int t = batch * tn;
	unsigned gx = (unsigned)((t * nh + LP_ATTN_WARPS - 1) / LP_ATTN_WARPS);
	if (d % 32 || d > LP_LLM_MAX_HEAD_DIM || nh % nkv || n_splits < 1 ||
	    (n_splits > 1 && (split_len % 32 || (long)split_len * n_splits < max_pos)))
		return lp_err_set(err, LP_EOTHER, "attention: bad shape (d %d, heads %d/%d, %d splits of %d)",
			d, nh, nkv, n_splits, split_len);
	if (n_splits == 1)
		split_len = max_pos;
	k_attention<<<dim3(gx, (unsigned)n_splits), LP_ATTN_WARPS * 32, 0, STREAM(stream)>>>(out, q,
		k_cache, v_cache, partial, pos, t, tn, nh, nkv, d, max_pos, n_splits, split_len);
	LP_LAUNCHED("attention");
	if (n_splits > 1) {
		k_attn_merge<<<gx, LP_ATTN_WARPS * 32, 0, STREAM(stream)>>>(out, partial, t, nh, d, n_splits);
		LP_LAUNCHED("attn_merge");
	}
	return 0;
}

/* --- SwiGLU --- */

static __global__ void k_swiglu(uint16_t *out, const uint16_t *gu, size_t n, int inter)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t r = i / inter, c = i % inter;
		float g = ld(gu + r * 2 * inter + c), u = ld(gu + r * 2 * inter + inter + c);
		out[i] = st(g / (1.0f + expf(-g)) * u);
	}
}

extern "C" int lp_llm_k_swiglu(uint16_t *out, const uint16_t *gu, int t, int inter, void *stream,
	struct lp_err *err)
{
	size_t n = (size_t)t * inter;
	k_swiglu<<<blocks_for(n, 256), 256, 0, STREAM(stream)>>>(out, gu, n, inter);
	LP_LAUNCHED("swiglu");
	return 0;
}

/* --- greedy sampling --- */

static __global__ void k_argmax(int32_t *next, int32_t *tokens, int tokens_stride, int *pos_p,
	int *done, const float *logits, int vocab, int tn, int prompt_len)
{
	__shared__ float bv[32];
	__shared__ int bi[32];
	__shared__ int last;
	int b = blockIdx.x, lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
	const float *row = logits + (size_t)b * vocab;
	float v = -FLT_MAX;
	int best = 0x7fffffff;
	for (int i = threadIdx.x; i < vocab; i += blockDim.x)
		if (row[i] > v) { /* strided ascending: the first max a thread sees is its lowest */
			v = row[i];
			best = i;
		}
	for (int o = 16; o > 0; o >>= 1) {
		float ov = __shfl_xor_sync(0xffffffffu, v, o);
		int oi = __shfl_xor_sync(0xffffffffu, best, o);
		if (ov > v || (ov == v && oi < best)) {
			v = ov;
			best = oi;
		}
	}
	if (lane == 0) {
		bv[w] = v;
		bi[w] = best;
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		int pos = *pos_p;
		for (int j = 1; j < nw; j++)
			if (bv[j] > bv[0] || (bv[j] == bv[0] && bi[j] < bi[0])) {
				bv[0] = bv[j];
				bi[0] = bi[j];
			}
		next[b] = bi[0];
		if (tokens)
			tokens[(size_t)b * tokens_stride + pos + tn - prompt_len] = bi[0];
		__threadfence();
		last = atomicAdd(done, 1) == (int)gridDim.x - 1;
		if (last) { /* every block has read *pos: move it on for the next forward pass */
			*pos_p = pos + tn;
			*done = 0;
			__threadfence();
		}
	}
}

extern "C" int lp_llm_k_argmax(int32_t *next, int32_t *tokens, int tokens_stride, int *pos,
	int *done, const float *logits, int batch, int vocab, int tn, int prompt_len, void *stream,
	struct lp_err *err)
{
	k_argmax<<<batch, 1024, 0, STREAM(stream)>>>(next, tokens, tokens_stride, pos, done, logits,
		vocab, tn, prompt_len);
	LP_LAUNCHED("argmax");
	return 0;
}

/* --- MoE --- */

/* One warp per token (moe_topk_warp). */
static __global__ void k_moe_topk(int32_t *ids, float *weights, const float *logits, int t, int e,
	int k, int sigmoid, int norm_topk, float scale)
{
	int r = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
	if (r >= t)
		return;
	moe_topk_warp(ids + (size_t)r * k, weights + (size_t)r * k, logits + (size_t)r * e, e, k, sigmoid,
		norm_topk, scale, threadIdx.x & 31);
}

extern "C" int lp_llm_k_moe_topk(int32_t *ids, float *weights, const float *logits, int t, int e,
	int k, enum lp_llm_gate gate, int norm_topk, float scale, void *stream, struct lp_err *err)
{
	if (e > LP_LLM_MAX_EXPERTS || k > 32 || k > e)
		return lp_err_set(err, LP_EOTHER, "moe_topk: %d experts, top %d: over the limits", e, k);
	k_moe_topk<<<(unsigned)((t + 3) / 4), 128, 0, STREAM(stream)>>>(ids, weights, logits, t, e, k,
		gate == LP_LLM_GATE_SIGMOID, norm_topk, scale);
	LP_LAUNCHED("moe_topk");
	return 0;
}

extern "C" int lp_llm_moe_max_tiles(int n, int e)
{
	return (n + LP_LLM_MOE_TILE - 1) / LP_LLM_MOE_TILE + (n < e ? n : e);
}

/* One block: count per expert, lay out each expert's rows in whole tiles, scatter. */
static __global__ void k_moe_align(int32_t *sorted, int32_t *tile_expert, int *n_tiles,
	const int32_t *ids, int n, int e, int max_tiles)
{
	__shared__ int count[LP_LLM_MAX_EXPERTS], start[LP_LLM_MAX_EXPERTS], fill[LP_LLM_MAX_EXPERTS];
	for (int x = threadIdx.x; x < e; x += blockDim.x)
		count[x] = fill[x] = 0;
	for (int i = threadIdx.x; i < max_tiles * LP_LLM_MOE_TILE; i += blockDim.x)
		sorted[i] = -1;
	for (int i = threadIdx.x; i < max_tiles; i += blockDim.x)
		tile_expert[i] = -1;
	__syncthreads();
	for (int a = threadIdx.x; a < n; a += blockDim.x)
		atomicAdd(&count[ids[a]], 1);
	__syncthreads();
	if (threadIdx.x == 0) {
		int tiles = 0;
		for (int x = 0; x < e; x++) {
			int nt = (count[x] + LP_LLM_MOE_TILE - 1) / LP_LLM_MOE_TILE;
			start[x] = tiles * LP_LLM_MOE_TILE;
			for (int j = 0; j < nt; j++)
				tile_expert[tiles + j] = x;
			tiles += nt;
		}
		*n_tiles = tiles;
	}
	__syncthreads();
	for (int a = threadIdx.x; a < n; a += blockDim.x) {
		int x = ids[a];
		sorted[start[x] + atomicAdd(&fill[x], 1)] = a;
	}
}

extern "C" int lp_llm_k_moe_align(int32_t *sorted, int32_t *tile_expert, int *n_tiles,
	const int32_t *ids, int n, int e, int max_tiles, void *stream, struct lp_err *err)
{
	if (e > LP_LLM_MAX_EXPERTS || max_tiles < lp_llm_moe_max_tiles(n, e))
		return lp_err_set(err, LP_EOTHER, "moe_align: %d experts, %d tiles: over the limits", e, max_tiles);
	k_moe_align<<<1, 1024, 0, STREAM(stream)>>>(sorted, tile_expert, n_tiles, ids, n, e, max_tiles);
	LP_LAUNCHED("moe_align");
	return 0;
}

/* Grouped GEMM: block (tile, column block) computes a 64 x 64 output tile with bf16 WMMA
 * (16x16x16, fp32 accumulate), 4 warps in 2 x 2, each 32 x 32. A rows are gathered through the
 * tile's assignment list; the B tile is the expert's weight rows (W is [n_out][k_in], i.e. B
 * column-major). k_in must be a multiple of 8 (16-byte loads). */
#define LP_MG_TN 64
#define LP_MG_TK 32
#define LP_MG_LD (LP_MG_TK + 8)

static __global__ void __launch_bounds__(128) k_moe_gemm(uint16_t *c, const uint16_t *a_mat,
	int a_div, const uint16_t *w, const int32_t *sorted, const int32_t *tile_expert,
	const int *n_tiles, int n_out, int k_in)
{
	using namespace nvcuda;
	__shared__ __align__(32) bf16 as[LP_LLM_MOE_TILE][LP_MG_LD];
	__shared__ __align__(32) bf16 bs[LP_MG_TN][LP_MG_LD];
	__shared__ __align__(32) float cs[LP_LLM_MOE_TILE][LP_MG_TN + 4];
	int tile = blockIdx.x, n0 = blockIdx.y * LP_MG_TN;
	if (tile >= *n_tiles)
		return;
	int x = tile_expert[tile], wid = threadIdx.x >> 5, wm = wid >> 1, wn = wid & 1;
	const int32_t *rows = sorted + (size_t)tile * LP_LLM_MOE_TILE;
	const uint16_t *we = w + (size_t)x * n_out * k_in;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			wmma::fill_fragment(acc[i][j], 0.0f);
	for (int k0 = 0; k0 < k_in; k0 += LP_MG_TK) {
		/* 64 rows x 32 columns = 256 chunks of 8 bf16 per matrix; 128 threads take 2 each */
		for (int ch = threadIdx.x; ch < 256; ch += 128) {
			int r = ch >> 2, col = (ch & 3) * 8, kk = k0 + col;
			uint4 va = make_uint4(0, 0, 0, 0), vb = make_uint4(0, 0, 0, 0);
			int a = rows[r];
			if (a >= 0 && kk < k_in)
				va = *(const uint4 *)(a_mat + (size_t)(a / a_div) * k_in + kk);
			if (n0 + r < n_out && kk < k_in)
				vb = *(const uint4 *)(we + (size_t)(n0 + r) * k_in + kk);
			*(uint4 *)&as[r][col] = va;
			*(uint4 *)&bs[r][col] = vb;
		}
		__syncthreads();
		for (int kk = 0; kk < LP_MG_TK; kk += 16) {
			wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> fa[2];
			wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> fb[2];
			for (int i = 0; i < 2; i++)
				wmma::load_matrix_sync(fa[i], &as[wm * 32 + i * 16][kk], LP_MG_LD);
			for (int j = 0; j < 2; j++)
				wmma::load_matrix_sync(fb[j], &bs[wn * 32 + j * 16][kk], LP_MG_LD);
			for (int i = 0; i < 2; i++)
				for (int j = 0; j < 2; j++)
					wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
		}
		__syncthreads();
	}
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			wmma::store_matrix_sync(&cs[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j],
				LP_MG_TN + 4, wmma::mem_row_major);
	__syncthreads();
	for (int i = threadIdx.x; i < LP_LLM_MOE_TILE * LP_MG_TN; i += 128) {
		int r = i / LP_MG_TN, col = i % LP_MG_TN, a = rows[r];
		if (a >= 0 && n0 + col < n_out)
			c[(size_t)a * n_out + n0 + col] = st(cs[r][col]);
	}
}

extern "C" int lp_llm_k_moe_gemm(uint16_t *c, const uint16_t *a_mat, int a_div, const uint16_t *w,
	const int32_t *sorted, const int32_t *tile_expert, const int *n_tiles, int max_tiles,
	int n_out, int k_in, void *stream, struct lp_err *err)
{
	if (k_in % 8 || a_div < 1)
		return lp_err_set(err, LP_EOTHER, "moe_gemm: k %d is not a multiple of 8", k_in);
	k_moe_gemm<<<dim3((unsigned)max_tiles, (unsigned)((n_out + LP_MG_TN - 1) / LP_MG_TN)), 128, 0,
		STREAM(stream)>>>(c, a_mat, a_div, w, sorted, tile_expert, n_tiles, n_out, k_in);
	LP_LAUNCHED("moe_gemm");
	return 0;
}

static __global__ void k_moe_combine(uint16_t *out, const uint16_t *eo, const float *weights,
	const uint16_t *shared, size_t n, int k, int h)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		size_t r = i / h, c = i % h;
		float v = shared ? ld(shared + i) : 0.0f;
		for (int s = 0; s < k; s++)
			v += weights[r * k + s] * ld(eo + (r * k + s) * h + c);
		out[i] = st(v);
	}
}

extern "C" int lp_llm_k_moe_combine(uint16_t *out, const uint16_t *eo, const float *weights,
	const uint16_t *shared, int t, int k, int h, void *stream, struct lp_err *err)
{
	size_t n = (size_t)t * h;
	k_moe_combine<<<blocks_for(n, 256), 256, 0, STREAM(stream)>>>(out, eo, weights, shared, n, k, h);
	LP_LAUNCHED("moe_combine");
	return 0;
}

/* --- GEMV for decode (t <= LP_LLM_GEMV_MAX_T tokens): one warp per output row, 16-byte loads of
 * the weight row (the only large stream), x re-read from L1/L2. An alternative to cuBLAS for the
 * memory-bound batch-1 projections (--gemv own). k must be a multiple of 8. --- */
static __global__ void __launch_bounds__(256) k_gemv(void *y, int y_f32, const uint16_t *x,
	const uint16_t *w, int t, int n, int k)
{
	int lane = threadIdx.x & 31;
	int row = blockIdx.x * 8 + (threadIdx.x >> 5);
	float acc[LP_LLM_GEMV_MAX_T];
	if (row >= n)
		return;
	for (int j = 0; j < LP_LLM_GEMV_MAX_T; j++)
		acc[j] = 0.0f;
	const uint4 *wr = (const uint4 *)(w + (size_t)row * k);
#pragma unroll 4
	for (int c = lane; c < k / 8; c += 32) {
		uint4 wv = __ldcs(wr + c); /* streamed once: do not keep it in L2 */
		const uint16_t *we = (const uint16_t *)&wv;
		for (int j = 0; j < t; j++) {
			uint4 xv = __ldg((const uint4 *)(x + (size_t)j * k) + c);
			const uint16_t *xe = (const uint16_t *)&xv;
			float s = 0.0f;
			for (int i = 0; i < 8; i++)
				s += __uint_as_float((uint32_t)we[i] << 16) * __uint_as_float((uint32_t)xe[i] << 16);
			acc[j] += s;
		}
	}
	for (int j = 0; j < t; j++) {
		float v = warp_sum(acc[j]);
		if (lane == 0) {
			if (y_f32)
				((float *)y)[(size_t)j * n + row] = v;
			else
				((uint16_t *)y)[(size_t)j * n + row] = st(v);
		}
	}
}

extern "C" int lp_llm_k_gemv(void *y, int y_f32, const uint16_t *x, const uint16_t *w, int t, int n,
	int k, void *stream, struct lp_err *err)
{
	if (t < 1 || t > LP_LLM_GEMV_MAX_T || k % 8)
		return lp_err_set(err, LP_EOTHER, "gemv: %d tokens, k %d: out of its range", t, k);
	k_gemv<<<(unsigned)((n + 7) / 8), 256, 0, STREAM(stream)>>>(y, y_f32, x, w, t, n, k);
	LP_LAUNCHED("gemv");
	return 0;
}

/* --- cuBLAS --- */

#define LP_BLAS_WORKSPACE (32u << 20)

struct lp_llm_blas {
	cublasHandle_t h;
	void *workspace;
};

extern "C" int lp_llm_blas_create(lp_llm_blas **out, void *stream, struct lp_err *err)
{
	lp_llm_blas *b = (lp_llm_blas *)calloc(1, sizeof(*b));
	*out = NULL;
	if (!b)
		return lp_oom(err);
	if (cudaMalloc(&b->workspace, LP_BLAS_WORKSPACE) != cudaSuccess) {
		free(b);
		return lp_err_set(err, LP_EOTHER, "cannot allocate the cuBLAS workspace");
	}
	*out = b;
	LP_BLAS_TRY(cublasCreate(&b->h));
	/* a fixed workspace: no allocation inside a CUDA-graph capture */
	LP_BLAS_TRY(cublasSetWorkspace(b->h, b->workspace, LP_BLAS_WORKSPACE));
	LP_BLAS_TRY(cublasSetStream(b->h, STREAM(stream)));
	return 0;
}

extern "C" void lp_llm_blas_free(lp_llm_blas *b)
{
	if (!b)
		return;
	if (b->h)
		cublasDestroy(b->h);
	cudaFree(b->workspace);
	free(b);
}

/* Row-major y[t][n] = x[t][k] W[n][k]^T is column-major y^T (n x t) = W^T-as-stored (op T of the
 * k x n column-major view of W) times x^T (k x t). */
extern "C" int lp_llm_gemm(lp_llm_blas *b, void *y, int y_f32, const uint16_t *x, const uint16_t *w,
	int t, int n, int k, struct lp_err *err)
{
	const float alpha = 1.0f, beta = 0.0f;
	LP_BLAS_TRY(cublasGemmEx(b->h, CUBLAS_OP_T, CUBLAS_OP_N, n, t, k, &alpha, w, CUDA_R_16BF, k,
		x, CUDA_R_16BF, k, &beta, y, y_f32 ? CUDA_R_32F : CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
		CUBLAS_GEMM_DEFAULT));
	return 0;
}
