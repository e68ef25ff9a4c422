/* cuda_moe.cu: the fused MoE decode kernels (cuda_api.h, "fused MoE decode"): what the MLP of an
 * MoE layer runs in a decode step of the fused path, in 3 kernels instead of the 11 of the
 * op-by-op path (router GEMV, top-k, shared gate/up, SwiGLU, shared down, align, grouped gate/up,
 * SwiGLU, grouped down, combine, residual add), tested against the CPU reference ops
 * (tests/unit/test_gpu_workload_decode.c).
 *
 * A decode step of t <= 8 tokens reads the router, the shared experts and only the experts the
 * tokens picked, each once: an expert picked by several tokens is read once and dotted with each
 * of their inputs. The kernels are GEMVs like cuda_decode.cu's (a warp streams two weight rows
 * with 16-byte loads, the next rows in flight while the current ones are summed):
 *   ROUTE: x = rmsnorm(resid) * norm_w; router logits; the block that finishes last runs the
 *     top-k of every token and groups the assignments by expert (the experts in use, ascending;
 *     per expert and token the assignment and its weight).
 *   UP: the shared experts' gate/up rows and SwiGLU (they need no routing, so they run while ROUTE
 *     finishes: the kernel waits for ROUTE only when its first routed row pair comes up), then the
 *     routed experts' gate/up rows and SwiGLU for the tokens that picked them.
 *   DOWN: each output row pair reads the shared experts' down rows and the used experts' down rows
 *     as one long row, sums each token's weighted expert outputs and adds them to the residual.
 * With programmatic dependent launch each kernel loads its first weights before it waits. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_common.cuh" /* first: core/err.h with C linkage */
#include "cuda_api.h"

#include <cooperative_groups.h>

#define MD_WARPS 4
#define MD_THREADS (MD_WARPS * 32)
#define MD_NCH 5 /* 16-byte chunks per lane and row in one load group: 1280 values a row */
#define MD_SMEM_MAX (200u << 10)

enum { MD_ROUTE = 0, MD_UP = 1, MD_DOWN = 2 };

/* The rows of one item (a row pair) of a warp: PH ROUTE and UP, two row bases; DOWN, the first
 * row's index (rows are segmented: shared experts, then each used expert). UP's routed items:
 * sl, the lane's token's assignment slot (lanes < t; -1: that token did not pick the expert). */
struct md_rows {
	const uint4 *b0, *b1;
	int r0, sl;
};

/* What a thread of UP learns once, at its first routed item: the routing is there (waited), the
 * number of experts in use; its warp's copy of their ids is in shared memory. */
struct md_up_state {
	bool waited;
	int n_used;
};

template <int PH>
static __device__ __forceinline__ void md_load(uint4 (&w0)[MD_NCH], uint4 (&w1)[MD_NCH],
	const lp_llm_moe_dec &a, const int *s_used, const md_rows &r, int g, int k8, int lane)
{
#pragma unroll
	for (int v = 0; v < MD_NCH; v++) {
		int c = (g * MD_NCH + v) * 32 + lane;
		if (c < k8) {
			const uint4 *p0, *p1;
			if (PH != MD_DOWN) {
				p0 = r.b0 + c;
				p1 = r.b1 + c;
			} else {
				const int s8 = a.sh / 8, m8 = a.mi / 8;
				if (c < s8) {
					p0 = (const uint4 *)a.sh_down + (size_t)r.r0 * s8 + c;
					p1 = p0 + s8;
				} else {
					int cc = c - s8, u = cc / m8, off = cc - u * m8;
					p0 = (const uint4 *)a.down + ((size_t)s_used[u] * a.h + r.r0) * m8 + off;
					p1 = p0 + m8;
				}
			}
			w0[v] = __ldcs(p0);
			w1[v] = __ldcs(p1);
		} else {
			w0[v] = make_uint4(0, 0, 0, 0);
			w1[v] = make_uint4(0, 0, 0, 0);
		}
	}
}

/* md_load's addresses of DOWN's load group g, asked of L2 (prefetch), nothing in registers */
static __device__ __forceinline__ void md_prefetch(const lp_llm_moe_dec &a, const int *s_used,
	const md_rows &r, int g, int k8, int lane)
{
	const int s8 = a.sh / 8, m8 = a.mi / 8;
#pragma unroll
	for (int v = 0; v < MD_NCH; v++) {
		int c = (g * MD_NCH + v) * 32 + lane;
		if (c < k8) {
			const uint4 *p0;
			if (c < s8) {
				p0 = (const uint4 *)a.sh_down + (size_t)r.r0 * s8 + c;
			} else {
				int cc = c - s8, u = cc / m8, off = cc - u * m8;
				p0 = (const uint4 *)a.down + ((size_t)s_used[u] * a.h + r.r0) * m8 + off;
			}
			asm volatile("prefetch.global.L2 [%0];" ::"l"(p0));
			asm volatile("prefetch.global.L2 [%0];" ::"l"(p0 + (c < s8 ? s8 : m8)));
		}
	}
}

/* DOWN's sums of one 16-byte chunk of a row pair (w0, w1), for both DOWN kernels (md_dot with the
 * weights in registers, k_moe_down_async with them in shared memory). The shared experts' chunk c:
 * with every token's shared activations (xs, s8 chunks a token). */
template <int T>
static __device__ __forceinline__ void md_down_shared(float (&s0)[T], float (&s1)[T], const uint4 &w0, const uint4 &w1,
	const uint16_t *xs, int c, int s8)
{
#pragma unroll
	for (int j = 0; j < T; j++) {
		uint4 xv = ((const uint4 *)xs)[(size_t)j * s8 + c];
		s0[j] += dot8(w0, xv);
		s1[j] += dot8(w1, xv);
	}
}

/* A used expert u's chunk off (of m8): with the activations of each token that picked it (xr, by
 * assignment slot), times its routing weight */
template <int T>
static __device__ __forceinline__ void md_down_expert(float (&s0)[T], float (&s1)[T], const uint4 &w0, const uint4 &w1,
	const uint4 *xr, const int *s_slot, const float *s_wgt, int u, int off, int m8)
{
#pragma unroll
	for (int j = 0; j < T; j++) {
		int sl = s_slot[u * T + j];
		if (sl >= 0) {
			uint4 xv = xr[(size_t)sl * m8 + off];
			float wt = s_wgt[u * T + j];
			s0[j] = fmaf(wt, dot8(w0, xv), s0[j]);
			s1[j] = fmaf(wt, dot8(w1, xv), s1[j]);
		}
	}
}

/* Sums of one load group: ROUTE and UP dot every token's input; DOWN dots the shared segment with
 * every token's shared activations and an expert's segment with the activations of each token
 * that picked it, times its routing weight. */
template <int T, int PH>
static __device__ __forceinline__ void md_dot(float (&s0)[T], float (&s1)[T],
	const uint4 (&w0)[MD_NCH], const uint4 (&w1)[MD_NCH], const lp_llm_moe_dec &a,
	const uint16_t *xs, const int *s_slot, const float *s_wgt, int g, int k8, int lane)
{
#pragma unroll
	for (int v = 0; v < MD_NCH; v++) {
		int c = (g * MD_NCH + v) * 32 + lane;
		if (c >= k8)
			continue;
		if (PH != MD_DOWN) {
#pragma unroll
			for (int j = 0; j < T; j++) {
				uint4 xv = ((const uint4 *)xs)[(size_t)j * k8 + c];
				s0[j] += dot8(w0[v], xv);
				s1[j] += dot8(w1[v], xv);
			}
		} else {
			const int s8 = a.sh / 8, m8 = a.mi / 8;
			if (c < s8) {
				md_down_shared<T>(s0, s1, w0[v], w1[v], xs, c, s8);
			} else {
				const uint4 *xr = (const uint4 *)(xs + (size_t)T * a.sh);
				int cc = c - s8, u = cc / m8, off = cc - u * m8;
				md_down_expert<T>(s0, s1, w0[v], w1[v], xr, s_slot, s_wgt, u, off, m8);
			}
		}
	}
}

/* The rows of item p; false when p is past the last item. UP waits for ROUTE (once per thread,
 * st.waited) before its first routed item: that needs the routing; then its warp copies the ids
 * of the experts in use into w_used (shared memory: one round trip, not one an item), and each
 * lane < t loads its token's slot with the item's rows (used at the item's end). */
template <int T, int PH>
static __device__ __forceinline__ bool md_item(const lp_llm_moe_dec &a, int p, md_up_state &st,
	md_rows &r, int *w_used, int lane)
{
	const int h8 = a.h / 8;
	r.sl = -1;
	if (PH == MD_ROUTE) {
		if (p >= a.e / 2)
			return false;
		r.b0 = (const uint4 *)a.router + (size_t)(2 * p) * h8;
		r.b1 = r.b0 + h8;
		return true;
	}
	if (PH == MD_DOWN) {
		if (p >= a.h / 2)
			return false;
		r.r0 = 2 * p;
		return true;
	}
	if (p < a.sh) { /* shared experts: gate row p, up row sh + p */
		r.b0 = (const uint4 *)a.sh_gate_up + (size_t)p * h8;
		r.b1 = r.b0 + (size_t)a.sh * h8;
		return true;
	}
	if (!st.waited) {
		const int umax = T * a.k < a.e ? T * a.k : a.e;
		pdl_wait();
		pdl_launch_next();
		st.waited = true;
		st.n_used = __ldcg(a.n_used);
		for (int x = lane; x < umax; x += 32)
			w_used[x] = __ldcg(a.used + x);
		__syncwarp();
	}
	int q = p - a.sh, u = q / a.mi, i = q - u * a.mi;
	if (u >= st.n_used)
		return false;
	r.b0 = (const uint4 *)a.gate_up + ((size_t)w_used[u] * 2 * a.mi + i) * h8;
	r.b1 = r.b0 + (size_t)a.mi * h8;
	r.sl = lane < T ? __ldcg(a.slot + u * T + lane) : -1; /* used at the item's end */
	return true;
}

/* The outputs of item p, s0/s1 summed over the warp (every lane holds the sums): ROUTE, lane 0
 * (and into lg0, when not NULL: the cluster's gather buffer); UP, lane j writes token j's (DOWN
 * adds up its warps' sums in md_down_pair_end). */
template <int T, int PH>
static __device__ __forceinline__ void md_epilogue(const lp_llm_moe_dec &a, int p,
	const float (&s0)[T], const float (&s1)[T], int sl, int lane, float *lg0)
{
#pragma unroll
	for (int j = 0; j < T; j++) {
		if (PH == MD_ROUTE) {
			if (lane == 0) {
				a.r_logits[(size_t)j * a.e + 2 * p] = s0[j];
				a.r_logits[(size_t)j * a.e + 2 * p + 1] = s1[j];
				if (lg0) { /* cluster ROUTE: into the first block's shared memory too */
					lg0[(size_t)j * a.e + 2 * p] = s0[j];
					lg0[(size_t)j * a.e + 2 * p + 1] = s1[j];
				}
			}
		} else if (lane == j) {
			float g = bf_round(s0[j]), u = bf_round(s1[j]);
			uint16_t o = st(g / (1.0f + expf(-g)) * u);
			if (p < a.sh) {
				a.sh_act[(size_t)j * a.sh + p] = o;
			} else if (sl >= 0) {
				int q = p - a.sh, ue = q / a.mi, i = q - ue * a.mi;
				a.r_act[(size_t)sl * a.mi + i] = o;
			}
		}
	}
}

/* ROUTE's last block: top-k per token (warp j, like k_moe_topk) of the logits lg [T][e] (a.r_logits,
 * read through L2; or, L2 false, the cluster's gathered copy in shared memory), then the grouping
 * by expert. */
template <int T, bool L2>
static __device__ void md_route(const lp_llm_moe_dec &a, const float *lg)
{
	__shared__ int32_t sids[LP_LLM_MOE_DEC_MAX_ASSIGN];
	__shared__ float sw[LP_LLM_MOE_DEC_MAX_ASSIGN];
	__shared__ int flag[LP_LLM_MAX_EXPERTS];
	__shared__ int slot[LP_LLM_MOE_DEC_MAX_ASSIGN * T];
	__shared__ float wgt[LP_LLM_MOE_DEC_MAX_ASSIGN * T];
	const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5, k = a.k, n = T * a.k;
	const int umax = n < a.e ? n : a.e;
	for (int j = wid; j < T; j += MD_WARPS)
		moe_topk_warp<L2>(sids + j * k, sw + j * k, lg + (size_t)j * a.e, a.e, k, a.sigmoid,
			a.norm_topk, a.scale, lane);
	for (int x = tid; x < a.e; x += MD_THREADS)
		flag[x] = -1;
	for (int i = tid; i < umax * T; i += MD_THREADS) {
		slot[i] = -1;
		wgt[i] = 0.0f;
	}
	__syncthreads();
	for (int i = tid; i < n; i += MD_THREADS) {
		flag[sids[i]] = 0;
		a.ids[i] = sids[i];
		a.weights[i] = sw[i];
	}
	__syncthreads();
	if (wid == 0) { /* the experts in use, ascending: flag[x] = its index */
		int base = 0;
		for (int b = 0; b < a.e; b += 32) {
			int x = b + lane;
			bool f = x < a.e && flag[x] == 0;
			unsigned m = __ballot_sync(0xffffffffu, f);
			if (f) {
				int r = base + __popc(m & ((1u << lane) - 1u));
				flag[x] = r;
				a.used[r] = x;
			}
			base += __popc(m);
		}
		if (lane == 0)
			*a.n_used = base;
	}
	__syncthreads();
	for (int i = tid; i < n; i += MD_THREADS) {
		int u = flag[sids[i]], j = i / k;
		slot[u * T + j] = i;
		wgt[u * T + j] = sw[i];
	}
	__syncthreads();
	for (int i = tid; i < umax * T; i += MD_THREADS) {
		a.slot[i] = slot[i];
		a.wgt[i] = wgt[i];
	}
	if (L2 && tid == 0)
		*a.done = 0;
}

/* dst[0..n1 + n2) = src1[0..n1) then src2[0..n2) (16-byte units) by a block of NT threads, 8
 * loads of a thread in flight before its stores: one round trip for two input vectors. */
template <int NT>
static __device__ __forceinline__ void block_copy16x2(uint4 *dst, const uint4 *src1, int n1,
	const uint4 *src2, int n2)
{
	const int n = n1 + n2;
	for (int i0 = threadIdx.x; i0 < n; i0 += 8 * NT) {
		uint4 v[8];
#pragma unroll
		for (int u = 0; u < 8; u++) {
			int i = i0 + u * NT;
			if (i < n)
				v[u] = i < n1 ? src1[i] : src2[i - n1];
		}
#pragma unroll
		for (int u = 0; u < 8; u++)
			if (i0 + u * NT < n)
				dst[i0 + u * NT] = v[u];
	}
}

/* The end of DOWN's row pair p, in both DOWN kernels: each warp's partial sums s0, s1 (token j's
 * dots with the pair's two rows over the warp's load groups) summed over the warp, then over the
 * block's warps in warp order, rounded to bf16 (the stored expert output) and added to the
 * residual values rv of the pair (thread j < T holds token j's), stored; then rv holds pair pn's
 * values when has_next (read long before they are needed). One barrier inside; the caller syncs
 * before the next pair's call writes part[] again. */
template <int T>
static __device__ __forceinline__ void md_down_pair_end(const lp_llm_moe_dec &a, float (&s0)[T],
	float (&s1)[T], float2 &rv, int p, int pn, bool has_next, int lane, int wid)
{
	__shared__ float part[MD_WARPS][T][2];
#pragma unroll
	for (int j = 0; j < T; j++) {
		s0[j] = warp_sum(s0[j]);
		s1[j] = warp_sum(s1[j]);
	}
	if (lane == 0)
#pragma unroll
		for (int j = 0; j < T; j++) {
			part[wid][j][0] = s0[j];
			part[wid][j][1] = s1[j];
		}
	__syncthreads();
	if (threadIdx.x < T) {
		const int j = threadIdx.x;
		float x0 = 0.0f, x1 = 0.0f;
		for (int w = 0; w < MD_WARPS; w++) {
			x0 += part[w][j][0];
			x1 += part[w][j][1];
		}
		rv.x += bf_round(x0);
		rv.y += bf_round(x1);
		*(float2 *)(a.resid + (size_t)j * a.h + 2 * p) = rv;
		if (has_next)
			rv = *(const float2 *)(a.resid + (size_t)j * a.h + 2 * pn);
	}
}

/* Thread block cluster barriers (sm_90; CL kernels are never launched below, moe_route_cluster_ok):
 * arrive without ordering (the cluster's blocks have started), and wait. */
static __device__ __forceinline__ void cluster_arrive_relaxed(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
}

static __device__ __forceinline__ void cluster_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#endif
}

/* DOWN at one or two tokens: at most 102 registers, so that 5 blocks fit an SM and the 640 row
 * pairs of a 1280-wide model run in one wave (4 blocks an SM left a second wave of 112).
 * CL (ROUTE only): the grid is one thread block cluster; each warp also writes its logits into
 * the first block's shared memory (distributed shared memory), and after a cluster barrier that
 * block routes from there: no fence, atomic or reload of the logits from L2 (the last-block
 * scheme, CL false). */
template <int T, int PH, bool CL = false>
static __global__ void __launch_bounds__(MD_THREADS, PH == MD_DOWN && T <= 2 ? 5 : 1)
	k_moe_dec(const lp_llm_moe_dec a)
{
	extern __shared__ __align__(16) uint16_t xs[]; /* ROUTE, UP: [T][h]; DOWN: [T][sh], [T k][mi] */
	__shared__ float red[T][MD_WARPS];
	__shared__ int s_used[PH == MD_DOWN ? LP_LLM_MOE_DEC_MAX_ASSIGN : 1];
	__shared__ int s_slot[PH == MD_DOWN ? LP_LLM_MOE_DEC_MAX_ASSIGN * T : 1];
	__shared__ float s_wgt[PH == MD_DOWN ? LP_LLM_MOE_DEC_MAX_ASSIGN * T : 1];
	__shared__ int w_used[PH == MD_UP ? MD_WARPS : 1][PH == MD_UP ? LP_LLM_MOE_DEC_MAX_ASSIGN : 1];
	__shared__ int last;
	__shared__ float lg[CL ? T * LP_LLM_MAX_EXPERTS : 1]; /* CL: the first block gathers [T][e] */
	const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
	int *wu = w_used[PH == MD_UP ? wid : 0];
	float *lg0 = NULL;
	if (CL) /* this block has started: the others may write into its shared memory */
		cluster_arrive_relaxed();
	/* ROUTE, UP: warps take row pairs in turn; DOWN: blocks take row pairs in turn, warp w sums
	 * the row's load groups w, w + MD_WARPS, ... (a long row, few pairs), the block adds up */
	const int stride = PH == MD_DOWN ? gridDim.x : gridDim.x * MD_WARPS;
	const int gstep = PH == MD_DOWN ? MD_WARPS : 1;
	int p = PH == MD_DOWN ? blockIdx.x : blockIdx.x * MD_WARPS + wid, n_used = 0, k8;
	md_up_state ust = { PH != MD_UP, 0 };
	bool has, hn = false;
	uint4 c0[MD_NCH], c1[MD_NCH], n0[MD_NCH], n1[MD_NCH];
	md_rows cur, nxt;
	int pn = 0, gn = 0;
	float2 rv = make_float2(0.0f, 0.0f); /* DOWN: thread j < T, the residual of its pair */

	/* Before the wait (programmatic dependent launch; see k_dec_gemv): DOWN reads the routing,
	 * final since the kernel before the one before it (ROUTE) is complete, and the residual
	 * values of its first pair (o_proj, their last writer, is complete too); every kernel loads
	 * the weights of its first item, and DOWN asks L2 for the rest of its first pair's. UP
	 * reads its input before the wait too: the residual is final for the same reason (ROUTE
	 * only reads it); it waits for ROUTE before its first routed item (md_item). */
	if (PH == MD_DOWN) { /* one round trip: the entries past n_used are read and not used */
		const int umax = T * a.k < a.e ? T * a.k : a.e;
		n_used = __ldcg(a.n_used);
		for (int i = threadIdx.x; i < umax; i += MD_THREADS)
			s_used[i] = __ldcg(a.used + i);
		for (int i = threadIdx.x; i < umax * T; i += MD_THREADS) {
			s_slot[i] = __ldcg(a.slot + i);
			s_wgt[i] = __ldcg(a.wgt + i);
		}
		if (threadIdx.x < T && p < a.h / 2)
			rv = *(const float2 *)(a.resid + (size_t)threadIdx.x * a.h + 2 * p);
		__syncthreads();
		k8 = (a.sh + n_used * a.mi) / 8;
	} else {
		k8 = a.h / 8;
	}
	const int groups = (k8 + 32 * MD_NCH - 1) / (32 * MD_NCH);
	int g = PH == MD_DOWN ? wid : 0;
	/* the item after (p, g): (pn, gn), rows nxt; hn false past the last. DOWN: a warp without
	 * a group of this pair (g >= groups) still takes part in its sums (zeros). */
#define MD_NEXT()                                                                          \
	do {                                                                               \
		gn = g + gstep;                                                            \
		pn = p;                                                                    \
		hn = true;                                                                 \
		if (gn >= groups) {                                                        \
			gn = PH == MD_DOWN ? wid : 0;                                      \
			pn = p + stride;                                                   \
			hn = md_item<T, PH>(a, pn, ust, nxt, wu, lane);                    \
		} else {                                                                   \
			nxt = cur;                                                         \
		}                                                                          \
	} while (0)
	if (PH == MD_UP && p >= a.sh) { /* a routed item first: wait in md_item, after the prologue */
		has = false;
	} else {
		has = md_item<T, PH>(a, p, ust, cur, wu, lane);
		if (has && g < groups)
			md_load<PH>(c0, c1, a, s_used, cur, g, k8, lane);
		/* DOWN: the rest of the warp's groups of its first pair into L2 (registers for them
		 * would spill at 5 blocks an SM) */
		for (int gg = g + gstep; PH == MD_DOWN && has && gg < groups; gg += gstep)
			md_prefetch(a, s_used, cur, gg, k8, lane);
	}
	if (PH != MD_UP) {
		pdl_wait();
		pdl_launch_next();
	}
	if (CL) { /* every block of the cluster has started (long ago) */
		cluster_wait();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
		lg0 = cooperative_groups::this_cluster().map_shared_rank(&lg[0], 0);
#endif
	}
	if (PH == MD_DOWN) {
		block_copy16x2<MD_THREADS>((uint4 *)xs, (const uint4 *)a.sh_act, T * a.sh / 8,
			(const uint4 *)a.r_act, T * a.k * a.mi / 8);
	} else { /* xs = rmsnorm(resid) * norm_w, as lp_llm_k_rmsnorm computes it */
		/* UP's runs while ROUTE does: its registers are worth more than the round trip */
		block_rmsnorm_bf16<T, MD_THREADS, PH != MD_UP>(xs, a.resid, (size_t)a.h, NULL, a.norm_w, a.h,
			a.eps, &red[0][0]);
	}
	__syncthreads();
	if (PH == MD_UP && !has) {
		has = md_item<T, PH>(a, p, ust, cur, wu, lane);
		if (has)
			md_load<PH>(c0, c1, a, s_used, cur, 0, k8, lane);
	}

	/* items (p, g): the next one's loads go out before the current one is summed */
	float s0[T], s1[T];
#pragma unroll
	for (int j = 0; j < T; j++)
		s0[j] = s1[j] = 0.0f;
	while (has) {
		MD_NEXT();
		if (hn && gn < groups)
			md_load<PH>(n0, n1, a, s_used, nxt, gn, k8, lane);
		if (g < groups)
			md_dot<T, PH>(s0, s1, c0, c1, a, xs, s_slot, s_wgt, g, k8, lane);
		if (pn != p) { /* the pair is done */
			if (PH == MD_DOWN) {
				md_down_pair_end<T>(a, s0, s1, rv, p, pn, hn, lane, wid);
				__syncthreads(); /* part[] read before the next pair's writes */
			} else {
#pragma unroll
				for (int j = 0; j < T; j++) {
					s0[j] = warp_sum(s0[j]);
					s1[j] = warp_sum(s1[j]);
				}
				md_epilogue<T, PH>(a, p, s0, s1, cur.sl, lane, lg0);
			}
#pragma unroll
			for (int j = 0; j < T; j++)
				s0[j] = s1[j] = 0.0f;
		}
#pragma unroll
		for (int v = 0; v < MD_NCH; v++) {
			c0[v] = n0[v];
			c1[v] = n1[v];
		}
		cur = nxt;
		p = pn;
		g = gn;
		has = hn;
	}
#undef MD_NEXT
	if (PH == MD_UP && !ust.waited) { /* DOWN relies on ROUTE being complete once UP has launched it */
		pdl_wait();
		pdl_launch_next();
	}
	if (PH != MD_ROUTE)
		return;
	if (CL) { /* the routing: the first block, once every block's logits are in its lg */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
		__syncwarp();
		cooperative_groups::this_cluster().sync();
		if (blockIdx.x == 0)
			md_route<T, false>(a, lg);
#else
		(void)lg;
#endif
		return;
	}
	/* the routing: the last block to finish (one atomic per block) */
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0)
		last = atomicAdd(a.done, 1) == (int)gridDim.x - 1;
	__syncthreads();
	if (!last)
		return;
	__threadfence();
	md_route<T, true>(a, a.r_logits);
}

/* DOWN at one token with its weights copied into shared memory by asynchronous copies (sm_90:
 * bulk copies of the TMA unit, one per expert's row pair, completing on an mbarrier; before
 * sm_90, or with BULK 0: 16-byte cp.async of every thread). The register version above waits on
 * its loads in issue order: the activations, loaded after the wait, come back behind the weights
 * loaded before it, and registers for more than two load groups a warp spill. Here the weights
 * hold no registers and no place in a warp's load queue: all of a row pair's bytes are in flight
 * at once, the activations arrive first, and the sums read shared memory. The sums are the
 * register version's, in its order (warp w: load groups w, w + MD_WARPS, ...; lane's chunks as
 * md_dot's), so both give the same bits. Shared memory: the pair's rows (shared experts' two
 * rows, then each used expert's two), then the activations ([sh], [k][mi]). */
static __device__ __forceinline__ unsigned smem_u32(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}

/* dst[0..bytes) = src (16-byte aligned, bytes a multiple of 16): BULK, thread 0's one bulk copy
 * counted on mbarrier bar; else the calling thread's share (part of nt threads) of 16-byte
 * cp.async chunks */
template <int BULK>
static __device__ __forceinline__ void md_async_copy(void *dst, const void *src, unsigned bytes,
	uint64_t *bar, int part, int nt)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	if (BULK) {
		asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)),
			"r"(bytes) : "memory");
		asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
			::"r"(smem_u32(dst)), "l"(src), "r"(bytes), "r"(smem_u32(bar)) : "memory");
		return;
	}
#endif
	(void)bar;
	for (unsigned i = (unsigned)part; i < bytes / 16; i += (unsigned)nt)
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32((uint4 *)dst + i)),
			"l"((const uint4 *)src + i) : "memory");
}

template <int T, int BULK>
static __global__ void __launch_bounds__(MD_THREADS) k_moe_down_async(const lp_llm_moe_dec a)
{
	extern __shared__ __align__(16) uint16_t dsm[]; /* [2 (sh + umax mi)] rows, [T][sh], [T k][mi] */
	__shared__ int s_used[LP_LLM_MOE_DEC_MAX_ASSIGN];
	__shared__ int s_slot[LP_LLM_MOE_DEC_MAX_ASSIGN * T];
	__shared__ float s_wgt[LP_LLM_MOE_DEC_MAX_ASSIGN * T];
	__shared__ __align__(8) uint64_t bar;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	constexpr int bulk = BULK;
#else
	constexpr int bulk = 0;
#endif
	const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, tid = threadIdx.x;
	const int umax = T * a.k < a.e ? T * a.k : a.e, s8 = a.sh / 8, m8 = a.mi / 8;
	uint4 *wsm = (uint4 *)dsm; /* 16-byte chunks: [2 s8] shared rows, then [2 m8] per used expert */
	uint16_t *xs = dsm + 2 * ((size_t)a.sh + (size_t)umax * a.mi);
	const uint4 *xr = (const uint4 *)(xs + (size_t)T * a.sh);
	const bool copier = bulk ? tid == 0 : true;
	unsigned phase = 0;
	int p = blockIdx.x;
	if (p >= a.h / 2)
		return;

	if (bulk && tid == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(&bar)) : "memory");
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	}
	__syncthreads();
	/* before the wait (see k_moe_dec): the shared experts' rows of the first pair need no
	 * routing; the routing (final: ROUTE is complete) in one round trip, then the used experts'
	 * rows; the residual of the pair */
	if (copier && s8 > 0)
		md_async_copy<bulk>(wsm, (const uint4 *)a.sh_down + (size_t)2 * p * s8, 32u * s8, &bar, tid, MD_THREADS);
	const int n_used = __ldcg(a.n_used);
	for (int i = tid; i < umax; i += MD_THREADS)
		s_used[i] = __ldcg(a.used + i);
	for (int i = tid; i < umax * T; i += MD_THREADS) {
		s_slot[i] = __ldcg(a.slot + i);
		s_wgt[i] = __ldcg(a.wgt + i);
	}
	float2 rv = make_float2(0.0f, 0.0f);
	if (tid < T)
		rv = *(const float2 *)(a.resid + (size_t)tid * a.h + 2 * p);
	__syncthreads();
	const int k8 = s8 + n_used * m8, groups = (k8 + 32 * MD_NCH - 1) / (32 * MD_NCH);
	for (;;) {
		if (copier) {
			for (int u = 0; u < n_used; u++)
				md_async_copy<bulk>(wsm + 2 * s8 + (size_t)u * 2 * m8,
					(const uint4 *)a.down + ((size_t)s_used[u] * a.h + 2 * p) * m8, 32u * m8, &bar,
					tid, MD_THREADS);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
			if (bulk)
				asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(&bar)) : "memory");
#endif
			if (!bulk)
				asm volatile("cp.async.commit_group;" ::: "memory");
		}
		if (phase == 0) { /* the activations (UP's output): after the wait */
			pdl_wait();
			pdl_launch_next();
			block_copy16x2<MD_THREADS>((uint4 *)xs, (const uint4 *)a.sh_act, T * a.sh / 8,
				(const uint4 *)a.r_act, T * a.k * a.mi / 8);
		}
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
		if (bulk) {
			unsigned ok = 0;
			while (!ok)
				asm volatile("{\n\t.reg .pred q;\n\t"
					     "mbarrier.try_wait.parity.shared::cta.b64 q, [%1], %2;\n\t"
					     "selp.u32 %0, 1, 0, q;\n\t}"
					     : "=r"(ok) : "r"(smem_u32(&bar)), "r"(phase & 1u) : "memory");
		}
#endif
		if (!bulk)
			asm volatile("cp.async.wait_group 0;" ::: "memory");
		__syncthreads();

		float s0[T], s1[T];
#pragma unroll
		for (int j = 0; j < T; j++)
			s0[j] = s1[j] = 0.0f;
		for (int g = wid; g < groups; g += MD_WARPS) {
#pragma unroll
			for (int v = 0; v < MD_NCH; v++) {
				int c = (g * MD_NCH + v) * 32 + lane;
				if (c >= k8)
					continue;
				if (c < s8) {
					uint4 w0 = wsm[c], w1 = wsm[s8 + c];
					md_down_shared<T>(s0, s1, w0, w1, xs, c, s8);
				} else {
					int cc = c - s8, u = cc / m8, off = cc - u * m8;
					uint4 w0 = wsm[2 * s8 + u * 2 * m8 + off], w1 = wsm[2 * s8 + u * 2 * m8 + m8 + off];
					md_down_expert<T>(s0, s1, w0, w1, xr, s_slot, s_wgt, u, off, m8);
				}
			}
		}
		/* its barrier also says: every thread is done with this pair's rows */
		const int pn = p + gridDim.x;
		md_down_pair_end<T>(a, s0, s1, rv, p, pn, pn < a.h / 2, lane, wid);
		if (pn >= a.h / 2)
			break;
		/* the next pair (a grid smaller than the pairs): its rows into the same buffer */
		p = pn;
		phase++;
		__syncthreads(); /* part[] read before the next pair's writes */
		if (copier && s8 > 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
			if (bulk)
				asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
			md_async_copy<bulk>(wsm, (const uint4 *)a.sh_down + (size_t)2 * p * s8, 32u * s8, &bar, tid,
				MD_THREADS);
		}
	}
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

/* ROUTE as one thread block cluster of `grid` blocks (k_moe_dec<T, MD_ROUTE, true>), where the
 * code loaded for this GPU has it (built for sm_90 or later), the grid fits a portable cluster (8
 * blocks: 64 experts at 4 warps a block) and a cluster of that size fits the GPU.
 LP_LLM_MOE_ROUTE=atomic (read once) keeps the last-block kernel, for comparisons. Returns 1 when launched, 0 when not (the caller
 * launches k_moe_dec<T, MD_ROUTE>), -1 on error. */
template <int T>
static int moe_route_cluster_launch(const lp_llm_moe_dec *a, int grid, size_t smem, cudaStream_t s,
	struct lp_err *err)
{
	static int off = -1;
	static signed char ok[9];
	static size_t smem_set = 48u << 10;
	void (*k)(const lp_llm_moe_dec) = k_moe_dec<T, MD_ROUTE, true>;
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute at[2];
	if (off < 0) {
		const char *v = getenv("LP_LLM_MOE_ROUTE");
		off = v && !strcmp(v, "atomic");
	}
	if (off || grid < 1 || grid > 8)
		return 0;
	if (smem > smem_set) {
		LP_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
		smem_set = smem;
	}
	cfg.gridDim = dim3((unsigned)grid);
	cfg.blockDim = dim3(MD_THREADS);
	cfg.dynamicSmemBytes = smem;
	cfg.stream = s;
	at[0].id = cudaLaunchAttributeClusterDimension;
	at[0].val.clusterDim.x = (unsigned)grid;
	at[0].val.clusterDim.y = 1;
	at[0].val.clusterDim.z = 1;
	at[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
	at[1].val.programmaticStreamSerializationAllowed = 1;
	cfg.attrs = at;
	if (!ok[grid]) {
		cudaFuncAttributes fa;
		int clusters = 0;
		ok[grid] = -1;
		cfg.numAttrs = 1;
		if (cudaFuncGetAttributes(&fa, k) == cudaSuccess && fa.binaryVersion >= 90 &&
		    cudaOccupancyMaxActiveClusters(&clusters, k, &cfg) == cudaSuccess && clusters > 0)
			ok[grid] = 1;
		cudaGetLastError();
	}
	if (ok[grid] < 0)
		return 0;
	cfg.numAttrs = a->pdl ? 2 : 1;
	LP_CUDA_TRY(cudaLaunchKernelEx(&cfg, k, *a));
	return 1;
}

/* UP's grid at one token: 3/8 of the blocks that fit (occ an SM; 1.5 an SM for deepseek-ocr-lm on
 * an H100, where 2 and 3 an SM, and all 4, were measured slower: bench/workload/NOTES.md v7), so
 * that DOWN's blocks (k_moe_down_async: few registers, its weights by bulk copies issued before
 * its wait) find room on the SMs while UP runs and have their rows in flight when UP ends; at full
 * occupancy UP holds every register until its last blocks leave. LP_LLM_MOE_UP_GRID=N (read once) caps the grid at
 * N blocks instead (0: no cap), for comparisons. */
static int moe_up_grid_cap(int t, int occ, int sms)
{
	static int cap = -2; /* -1: unset */
	if (cap == -2) {
		const char *v = getenv("LP_LLM_MOE_UP_GRID");
		cap = v ? (int)strtol(v, NULL, 10) : -1;
		if (v && cap < 0)
			cap = 0;
	}
	if (cap >= 0)
		return cap;
	return t == 1 && occ >= 2 ? 3 * occ * sms / 8 : 0;
}

template <int T, int PH>
static int moe_dec_launch(const lp_llm_moe_dec *a, cudaStream_t s, struct lp_err *err)
{
	static size_t smem_set = 48u << 10, occ_smem = 0;
	static int occ = 0;
	void (*k)(const lp_llm_moe_dec) = k_moe_dec<T, PH>;
	size_t smem = PH == MD_DOWN ? ((size_t)T * a->sh + (size_t)T * a->k * a->mi) * 2 : (size_t)T * a->h * 2;
	int sms = dev_sms(err), items, grid;
	int umax = T * a->k < a->e ? T * a->k : a->e;
	if (sms <= 0)
		return -1;
	if (smem > smem_set) {
		LP_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
		smem_set = smem;
	}
	if (!occ || occ_smem != smem) {
		LP_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k, MD_THREADS, smem));
		occ_smem = smem;
		if (occ < 1)
			occ = 1;
	}
	items = PH == MD_ROUTE ? a->e / 2 : PH == MD_DOWN ? a->h / 2 : a->sh + umax * a->mi;
	grid = PH == MD_DOWN ? items : (items + MD_WARPS - 1) / MD_WARPS; /* DOWN: a pair a block */
	if (grid > occ * sms)
		grid = occ * sms;
	if (PH == MD_UP) {
		const int cap = moe_up_grid_cap(T, occ, sms);
		if (cap > 0 && grid > cap)
			grid = cap;
	}
	if (PH == MD_ROUTE) {
		int r = moe_route_cluster_launch<T>(a, grid, smem, s, err);
		if (r)
			return r < 0 ? -1 : 0;
	}
	LP_CUDA_TRY(lp_llm_launch_pdl(k, dim3((unsigned)grid), dim3(MD_THREADS), smem, s, a->pdl, *a));
	return 0;
}

/* DOWN's variant at one token (k_moe_down_async): LP_LLM_MOE_DOWN=regs|cpasync|bulk (default
 * bulk; cpasync is the path of builds before sm_90), read once: a diagnostic switch for timing the
 * variants against each other in one binary. Returns 1 when launched, 0 when the shape does not
 * fit it (the caller runs k_moe_dec), -1 on error. */
template <int T>
static int moe_down_async_launch(const lp_llm_moe_dec *a, cudaStream_t s, struct lp_err *err)
{
	static int mode = -1; /* 0 regs, 1 cpasync, 2 bulk */
	static int occ[2];
	static size_t occ_smem[2], smem_set[2] = { 48u << 10, 48u << 10 };
	int umax = T * a->k < a->e ? T * a->k : a->e, sms = dev_sms(err), grid, b;
	size_t smem = ((size_t)2 * (a->sh + (size_t)umax * a->mi) + (size_t)T * a->sh + (size_t)T * a->k * a->mi) * 2;
	if (mode < 0) {
		const char *v = getenv("LP_LLM_MOE_DOWN");
		mode = v && !strcmp(v, "regs") ? 0 : v && !strcmp(v, "cpasync") ? 1 : 2;
	}
	if (T != 1 || mode == 0 || smem > MD_SMEM_MAX)
		return 0;
	if (sms <= 0)
		return -1;
	b = mode == 2;
	void (*k)(const lp_llm_moe_dec) = b ? k_moe_down_async<T, 1> : k_moe_down_async<T, 0>;
	if (smem > smem_set[b]) {
		LP_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
		smem_set[b] = smem;
	}
	if (!occ[b] || occ_smem[b] != smem) {
		LP_CUDA_TRY(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout,
			cudaSharedmemCarveoutMaxShared));
		LP_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ[b], k, MD_THREADS, smem));
		occ_smem[b] = smem;
		if (occ[b] < 1)
			occ[b] = 1;
	}
	grid = a->h / 2;
	if (grid > occ[b] * sms)
		grid = occ[b] * sms;
	LP_CUDA_TRY(lp_llm_launch_pdl(k, dim3((unsigned)grid), dim3(MD_THREADS), smem, s, a->pdl, *a));
	return 1;
}

template <int T>
static int moe_dec_t(const lp_llm_moe_dec *a, int phases, cudaStream_t s, struct lp_err *err)
{
	if ((phases & LP_LLM_MOE_DEC_ROUTE) && moe_dec_launch<T, MD_ROUTE>(a, s, err) < 0)
		return -1;
	if ((phases & LP_LLM_MOE_DEC_UP) && moe_dec_launch<T, MD_UP>(a, s, err) < 0)
		return -1;
	if (phases & LP_LLM_MOE_DEC_DOWN) {
		int r = T == 1 ? moe_down_async_launch<1>(a, s, err) : 0;
		if (r < 0 || (r == 0 && moe_dec_launch<T, MD_DOWN>(a, s, err) < 0))
			return -1;
	}
	return 0;
}

extern "C" int lp_llm_moe_dec_fits(int t, int h, int e, int k, int mi, int sh)
{
	size_t down_smem = ((size_t)t * sh + (size_t)t * k * mi) * 2;
	return t >= 1 && t <= LP_LLM_MOE_DEC_MAX_T && h % 8 == 0 && h % 2 == 0 && e % 2 == 0 &&
	       e >= 2 && e <= LP_LLM_MAX_EXPERTS && k >= 1 && k <= e && k <= 32 &&
	       t * k <= LP_LLM_MOE_DEC_MAX_ASSIGN && mi % 8 == 0 && mi > 0 && sh % 8 == 0 && sh >= 0 &&
	       (size_t)t * h * 2 <= MD_SMEM_MAX && down_smem <= MD_SMEM_MAX;
}

extern "C" int lp_llm_k_moe_dec(const struct lp_llm_moe_dec *a, int phases, void *stream,
	struct lp_err *err)
{
	if (!lp_llm_moe_dec_fits(a->t, a->h, a->e, a->k, a->mi, a->sh))
		return lp_err_set(err, LP_EOTHER,
			"moe_dec: %d tokens, hidden %d, %d experts top %d of width %d, shared width %d: out of its range",
			a->t, a->h, a->e, a->k, a->mi, a->sh);
	switch (a->t) {
	case 1: return moe_dec_t<1>(a, phases, STREAM(stream), err);
	case 2: return moe_dec_t<2>(a, phases, STREAM(stream), err);
	case 3: return moe_dec_t<3>(a, phases, STREAM(stream), err);
	case 4: return moe_dec_t<4>(a, phases, STREAM(stream), err);
	case 5: return moe_dec_t<5>(a, phases, STREAM(stream), err);
	case 6: return moe_dec_t<6>(a, phases, STREAM(stream), err);
	case 7: return moe_dec_t<7>(a, phases, STREAM(stream), err);
	default: return moe_dec_t<8>(a, phases, STREAM(stream), err);
	}
}
