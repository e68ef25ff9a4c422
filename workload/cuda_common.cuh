/* cuda_common.cuh: helpers shared by the workload's CUDA files (cuda_kernels.cu, cuda_decode.cu):
 * error macros for launchers that return 0/-1 with `struct lp_err *err` in scope, bf16 <-> fp32
 * on raw uint16_t bits, warp reductions, and programmatic-dependent-launch controls. */
#ifndef LP_WORKLOAD_CUDA_COMMON_CUH
#define LP_WORKLOAD_CUDA_COMMON_CUH

extern "C" {
#include "core/err.h"
}
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

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

#endif
