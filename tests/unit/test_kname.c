/* test_kname.c: kernel names (src/parse/kname.c): the short name the reports show and the ncu
 * join uses, ncu's function name, the qualified start, sameness, demangling and families. */
#include "testutil.h"

#include <string.h>

#include "parse/kname.h"

static void test_family(void **state)
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
		/* collectives are communication, whatever else their name says (copy, Sum, bf16) */
		{ "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)", LP_FAM_COMM },
		{ "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)", LP_FAM_COMM },
		{ "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t", LP_FAM_COMM },
		{ "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(...)", LP_FAM_COMM },
		{ "c10d::symmetric_memory::one_shot_all_reduce_kernel<float>", LP_FAM_COMM },
		{ "void at::native::reduce_kernel<512, 1>(...)", LP_FAM_OTHER },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (lp_kname_family(t[i].name) != t[i].f)
			fail_msg("'%s' classified as %s", t[i].name, lp_kname_family_name(lp_kname_family(t[i].name)));
	}
	assert_string_equal(lp_kname_family_name(LP_FAM_COUNT), "other");
	assert_string_equal(lp_kname_family_name(LP_FAM_COMM), "comm");
	/* the family and the per-rank view's communication test are one rule */
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(lp_kname_is_comm(t[i].name), t[i].f == LP_FAM_COMM);
	assert_false(lp_kname_is_comm(NULL));
}

/* One rule for the reports (the tracer's and nsys's short names) and the ncu join (which had a
 * second shortener until issue 16: it cut "(anonymous namespace)" as if it were the parameter list). */
static void test_short(void **state)
{
	static const struct { const char *in, *out; } t[] = {
		{ "gemv_kernel", "gemv_kernel" },
		{ "void gemv_kernel<float, 4>(float const*, int)", "gemv_kernel" },
		{ "void scale_kernel<4>(float*, float, int)", "scale_kernel" },
		{ "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int>(T13)", "kernel" },
		{ "void ns::inner::rmsnorm<(bool)0>(float*, float const*)", "rmsnorm" },
		{ "rope_kernel(float*)", "rope_kernel" },
		{ "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false>(float*, "
		  "const float*, int, int, int)", "softmax_warp_forward" },
		{ "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float*)", "cunn_SoftMaxForward" },
		{ "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>("
		  "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)", "Kernel2" },
		{ "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, float, float, float, float, "
		  "false, true, true, false, 7, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float "
		  "const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, "
		  "float> >(T13)", "kernel" },
		{ "void k (int)", "k" },            /* a space before the list: no trailing space kept */
		{ "ns::", "ns::" },                 /* nothing after the last "::": the name stays */
		{ "<lambda>", "<lambda>" },         /* nothing left: the whole name */
		{ "", "" },
	};
	struct lp_buf b = LP_BUF_INIT;
	struct lp_profile p;
	size_t i;
	(void)state;
	lp_profile_init(&p, "names");
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(lp_kname_short(t[i].in, &b), 0);
		if (strcmp(b.data, t[i].out))
			fail_msg("'%s' -> '%s', expected '%s'", t[i].in, b.data, t[i].out);
		assert_string_equal(lp_kname_short_intern(&p, t[i].in), t[i].out);
	}
	lp_profile_release(&p);
	lp_buf_release(&b);
}

static void test_ncu_function(void **state)
{
	static const struct { const char *in, *out; } names[] = {
		{ "void gemv_kernel<float, 4>(const float *, float *, int)", "gemv_kernel" },
		{ "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::array<char *, 1>>(int, T2, T3)",
		  "vectorized_elementwise_kernel" },
		{ "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, (bool)0>(T13)", "kernel" },
		{ "void ns::S::f(int) const", "f" },
		{ "ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nn" },
		{ "name:with:colons, and commas", "name:with:colons, and commas" },
		{ "f(void (*)(int))", "f" },
	};
	struct lp_buf b = LP_BUF_INIT;
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(lp_kname_ncu_function(names[i].in, &b), 0);
		assert_string_equal(b.data, names[i].out);
	}
	lp_buf_release(&b);
}

static void test_bracket_open(void **state)
{
	const char *sig = "ns::k<a<b>, c>(int (*)(int), float)";
	size_t at = 99, end = strlen(sig);
	(void)state;
	assert_int_equal(lp_kname_bracket_open(sig, end, '(', ')', &at), 0);
	assert_int_equal(at, 14);
	assert_int_equal(lp_kname_bracket_open(sig, at, '<', '>', &at), 0);
	assert_int_equal(at, 5);
	/* unbalanced: nothing found, *at untouched */
	at = 99;
	assert_int_equal(lp_kname_bracket_open("f(int))", 7, '(', ')', &at), -1);
	assert_int_equal(at, 99);
	assert_int_equal(lp_kname_bracket_open(")", 1, '(', ')', &at), -1);
	assert_int_equal(at, 99);
}

static void test_qualified_and_same(void **state)
{
	(void)state;
	assert_string_equal(lp_kname_qualified_start("std::enable_if<!T7, void>::type ns::k<int>(T13)"), "ns::k<int>(T13)");
	assert_string_equal(lp_kname_qualified_start("void a::b::gemv<float, 4>(float const*)"), "a::b::gemv<float, 4>(float const*)");
	assert_string_equal(lp_kname_qualified_start("plain_name"), "plain_name");
	/* the tracer's and ncu's forms of one kernel */
	assert_true(lp_kname_same("k<1, 0>(float const*)", "void k<1, 0>(const float *)"));
	assert_true(lp_kname_same("gemv", "gemv"));
	assert_false(lp_kname_same("k<1, 0>(float const*)", "void k<1, 1>(const float *)"));
	assert_false(lp_kname_same("k", "k2"));
	assert_true(lp_kname_has_template_args("void k<1>(int)"));
	assert_false(lp_kname_has_template_args("void k(std::vector<int>)"));
}

/* CUPTI gives some names mangled (a CUTLASS kernel of a PyTorch MoE program): the profile has
 * them demangled, with the bare function name beside them. */
static void test_demangle(void **state)
{
	struct lp_profile p;
	const char *d;
	(void)state;
	lp_profile_init(&p, "names");
	d = lp_kname_demangle_intern(&p, "_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIiEEEEvNT_6ParamsE");
	assert_string_equal(d, "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<int> >"
		"(cutlass::gemm::kernel::GemmUniversal<int>::Params)");
	assert_string_equal(lp_kname_short_intern(&p, d), "device_kernel");
	assert_string_equal(lp_kname_demangle_intern(&p, "not_mangled"), "not_mangled");
	assert_string_equal(lp_kname_demangle_intern(&p, "_Zbroken"), "_Zbroken");
	assert_string_equal(lp_kname_demangle_intern(&p, NULL), "");
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family),
		cmocka_unit_test(test_short),
		cmocka_unit_test(test_ncu_function),
		cmocka_unit_test(test_bracket_open),
		cmocka_unit_test(test_qualified_and_same),
		cmocka_unit_test(test_demangle),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
