/* test_kernels.c: kernel families and the name normalization used to join ncu records to the
 * tracer's demangled names (src/analyze/kernels.c). */
#include "testutil.h"

#include <string.h>

#include "analyze/kernels.h"

static void test_classify(void **state)
{
	static const struct { const char *name; enum lp_kernel_family f; } t[] = {
		{ "nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_TNN", LP_FAM_GEMM },
		{ "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm>(T1::Params)", LP_FAM_GEMM },
		{ "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16>(T13)", LP_FAM_GEMM },
		{ "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64>>(Flash_fwd_params)", LP_FAM_ATTENTION },
		{ "decode_attention_kernel", LP_FAM_ATTENTION },
		{ "rmsnorm_kernel", LP_FAM_NORM },
		{ "rope_kernel", LP_FAM_ROPE },
		{ "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float*)", LP_FAM_SOFTMAX },
		{ "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)", LP_FAM_ELEMENTWISE },
		{ "argmax_kernel", LP_FAM_SAMPLING },
		{ "[CUDA memcpy HtoD]", LP_FAM_MEMCPY },
		{ "mystery", LP_FAM_OTHER },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (lp_kernel_classify(t[i].name) != t[i].f)
			fail_msg("'%s' classified as %s", t[i].name, lp_kernel_family_name(lp_kernel_classify(t[i].name)));
	}
}

static void test_normalize(void **state)
{
	static const struct { const char *in, *out; } t[] = {
		{ "void gemv_kernel<float, 4>(float const*, int)", "gemv_kernel" },
		{ "gemv_kernel", "gemv_kernel" },
		{ "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int>(T13)", "kernel" },
		{ "void ns::inner::rmsnorm<(bool)0>(float*, float const*)", "rmsnorm" },
		{ "rope_kernel(float*)", "rope_kernel" },
	};
	struct lp_buf b = LP_BUF_INIT;
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(lp_kernel_name_normalize(t[i].in, &b), 0);
		if (strcmp(b.data, t[i].out))
			fail_msg("'%s' -> '%s', expected '%s'", t[i].in, b.data, t[i].out);
	}
	lp_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_normalize),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
