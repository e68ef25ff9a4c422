/* rng.h: the counter-based generator behind the workload's weights and prompts.
 *
 * Weights are a pure function of (seed, tensor id, element index), so the CPU path and the CUDA
 * path build bit-identical models without copying gigabytes from the host, and a weight can be
 * recomputed anywhere (tests). The code is in this header, as `static inline`, because the very
 * same lines must compile as C and as CUDA C: any difference would break that identity.
 *
 * A value is "normal-ish": the sum of four 16-bit uniforms (Irwin-Hall, n = 4), centred, as an
 * exact integer; one float multiply scales it and one float add offsets it (no FMA contraction
 * on either side: the CPU is built in ISO C mode, the GPU uses __fmul_rn/__fadd_rn), then it is
 * rounded to bfloat16 (round to nearest even) because the models are bf16 checkpoints.
 */
#ifndef LP_WORKLOAD_RNG_H
#define LP_WORKLOAD_RNG_H

#include <stdint.h>

#ifdef __CUDACC__
#define LP_RNG_FN static __host__ __device__ __forceinline__
#else
#define LP_RNG_FN static inline
#endif

/* Standard deviation of the centred sum of four uniforms on [0, 65535]: 65536 * sqrt(4/12). */
#define LP_RNG_SUM4_STD 37837.23f

/* splitmix64's finalizer over a combination of the three counters. */
LP_RNG_FN uint64_t lp_rng_hash(uint64_t seed, uint64_t stream, uint64_t index)
{
	uint64_t z = seed * 0x9E3779B97F4A7C15ull + stream * 0xD1B54A32D192ED03ull + index;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Centred Irwin-Hall sum, exact in int32 and in float (|s| < 2^18). */
LP_RNG_FN int32_t lp_rng_sum4(uint64_t seed, uint64_t stream, uint64_t index)
{
	uint64_t h = lp_rng_hash(seed, stream, index);
	int32_t s = (int32_t)(h & 0xFFFF) + (int32_t)((h >> 16) & 0xFFFF) +
		    (int32_t)((h >> 32) & 0xFFFF) + (int32_t)(h >> 48);
	return s - 131070;
}

/* float -> nearest bfloat16 bits (ties to even); NaN stays NaN. */
LP_RNG_FN uint16_t lp_bf16_from_f32(float f)
{
	union { float f; uint32_t u; } v;
	v.f = f;
	if ((v.u & 0x7F800000u) == 0x7F800000u && (v.u & 0x007FFFFFu))
		return (uint16_t)((v.u >> 16) | 0x40u);
	v.u += 0x7FFFu + ((v.u >> 16) & 1u);
	return (uint16_t)(v.u >> 16);
}

LP_RNG_FN float lp_bf16_to_f32(uint16_t b)
{
	union { float f; uint32_t u; } v;
	v.u = (uint32_t)b << 16;
	return v.f;
}

/* One weight, as bf16 bits: offset + sum4 * (std / LP_RNG_SUM4_STD), with `mul` = that ratio
 * computed once per tensor by the caller (lp_llm_weight_mul). */
LP_RNG_FN uint16_t lp_rng_weight_bf16(uint64_t seed, uint64_t stream, uint64_t index, float mul,
	float offset)
{
	float s = (float)lp_rng_sum4(seed, stream, index);
#ifdef __CUDA_ARCH__
	float v = __fadd_rn(__fmul_rn(s, mul), offset);
#else
	float v = s * mul + offset;
#endif
	return lp_bf16_from_f32(v);
}

#endif
