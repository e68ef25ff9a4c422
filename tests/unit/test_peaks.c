/* test_peaks.c: the peak table, name matching, derived peaks and overrides (src/analyze/peaks.c). */
#include "testutil.h"

#include <string.h>

#include "analyze/peaks.h"

static struct lp_device dev(const char *name, int sms, int ccM, int ccm, unsigned clk, unsigned mclk, unsigned bus)
{
	struct lp_device d;
	memset(&d, 0, sizeof(d));
	d.name = name;
	d.uuid = "";
	d.sm_count = sms;
	d.cc_major = ccM;
	d.cc_minor = ccm;
	d.sm_clock_mhz = clk;
	d.mem_clock_mhz = mclk;
	d.mem_bus_width_bits = bus;
	return d;
}

static void test_table_matches_by_name(void **state)
{
	static const struct { const char *name; const char *label; double tf, gbs; } cases[] = {
		{ "NVIDIA H100 80GB HBM3", "H100 SXM", 989.4, 3350 },
		{ "NVIDIA H100 PCIe", "H100 PCIe", 756, 2000 },
		{ "NVIDIA H200", "H200 SXM", 989.4, 4800 },
		{ "NVIDIA A100-SXM4-80GB", "A100 80GB SXM", 312, 2039 },
		{ "NVIDIA A100-SXM4-40GB", "A100 40GB", 312, 1555 },
		{ "NVIDIA L40S", "L40S", 362.05, 864 },
		{ "NVIDIA GeForce RTX 4090", "RTX 4090", 165.2, 1008 },
		{ "NVIDIA GeForce RTX 3090", "RTX 3090", 71, 936 },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lp_device d = dev(cases[i].name, 0, 0, 0, 0, 0, 0);
		struct lp_peak pk;
		lp_peak_resolve(&d, "bf16", 0, 0, &pk);
		assert_string_equal(pk.matched, cases[i].label);
		assert_true(pk.flops_valid && pk.bw_valid);
		assert_true(pk.flops_per_s == cases[i].tf * 1e12);
		assert_true(pk.bw_valid && pk.bytes_per_s == cases[i].gbs * 1e9);
		assert_non_null(strstr(pk.flops_source, "NVIDIA"));
	}
}

static void test_unknown_gpu_is_derived_or_na(void **state)
{
	struct lp_device d = dev("NVIDIA Hopper Engineering Sample", 132, 9, 0, 1830, 2619, 5120);
	struct lp_peak pk;
	(void)state;
	lp_peak_resolve(&d, "bf16", 0, 0, &pk);
	/* 132 SMs x 1830 MHz x 4096 = 989.43 TFLOP/s */
	assert_true(pk.flops_valid);
	assert_true(pk.flops_per_s == 132.0 * 1830e6 * 4096.0);
	assert_non_null(strstr(pk.flops_source, "derived"));
	/* 2619 MHz x 5120 bit / 8 x 2 = 3.352 TB/s */
	assert_true(pk.bw_valid && pk.bytes_per_s == 2619e6 * 640.0 * 2.0);
	d = dev("Mystery GPU", 10, 12, 0, 1000, 0, 0);
	lp_peak_resolve(&d, "bf16", 0, 0, &pk);
	assert_false(pk.flops_valid);
	assert_false(pk.bw_valid);
	assert_non_null(strstr(pk.flops_source, "set device.peak_tflops"));
	assert_non_null(strstr(pk.bw_source, "set device.peak_bw_gbs"));
	/* fp32 models have no tensor peak in the table */
	d = dev("NVIDIA H100 80GB HBM3", 132, 9, 0, 1980, 2619, 5120);
	lp_peak_resolve(&d, "fp32", 0, 0, &pk);
	assert_false(pk.flops_valid);
	assert_true(pk.bw_valid);
	/* no device at all */
	lp_peak_resolve(NULL, "bf16", 0, 0, &pk);
	assert_false(pk.flops_valid);
	assert_false(pk.bw_valid);
}

static void test_overrides_win(void **state)
{
	struct lp_device d = dev("NVIDIA H100 80GB HBM3", 132, 9, 0, 1980, 2619, 5120);
	struct lp_peak pk;
	(void)state;
	lp_peak_resolve(&d, "bf16", 500, 1000, &pk);
	assert_true(pk.flops_per_s == 500e12);
	assert_true(pk.bytes_per_s == 1000e9);
	assert_non_null(strstr(pk.flops_source, "override"));
	lp_peak_resolve(NULL, "fp8", 100, 0, &pk);
	assert_true(pk.flops_valid && pk.flops_per_s == 100e12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_matches_by_name),
		cmocka_unit_test(test_unknown_gpu_is_derived_or_na),
		cmocka_unit_test(test_overrides_win),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
