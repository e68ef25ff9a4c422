/* test_advice.c: the advice rules (src/analyze/advice.c) trigger on synthetic data built to cross
 * their thresholds, carry the numbers that triggered them, and stay silent otherwise. */
#include "testutil.h"

#include <string.h>

#include "analyze/advice.h"

#define US 1000ull
#define MS 1000000ull

/* The advice's text, "" when absent (the assert before it already failed the test). */
static const char *advice_text(const struct lp_advice *ad)
{
	return ad ? ad->text : "";
}

static int32_t R(struct lp_profile *p, int32_t parent, const char *name, uint64_t s, uint64_t e)
{
	return lp_test_range(p, parent, "LLM", name, s, e);
}

static void K(struct lp_profile *p, int32_t range, const char *name, uint64_t s, uint64_t e)
{
	lp_test_kernel(p, range, name, s, e);
}

/* One iteration: prefill of `prefill_ms`; decode of 4 steps of 1 ms host each, in which
 * `kernels` kernels of `kernel_us` run back to back from the step start. */
static void build(struct lp_profile *p, uint64_t prefill_ms, int kernels, uint64_t kernel_us, const char *kname)
{
	int32_t pf = R(p, -1, "prefill", 0, prefill_ms * MS), dec;
	int s, k;
	K(p, pf, "gemm_prefill", 0, prefill_ms * MS);
	dec = R(p, -1, "decode_all", prefill_ms * MS, prefill_ms * MS + 4 * MS);
	for (s = 0; s < 4; s++) {
		uint64_t t = prefill_ms * MS + (uint64_t)s * MS;
		int32_t st = R(p, dec, "decode_step", t, t + MS);
		for (k = 0; k < kernels; k++)
			K(p, st, kname, t + (uint64_t)k * kernel_us * US, t + (uint64_t)(k + 1) * kernel_us * US);
	}
}

static const struct lp_advice *rule(const struct lp_analysis *a, const char *id, enum lp_advice_kind kind)
{
	size_t i;
	for (i = 0; i < a->n_advice; i++)
		if (!strcmp(a->advice[i].rule, id) && a->advice[i].kind == kind)
			return &a->advice[i];
	return NULL;
}

static void analyze(struct lp_profile *p, struct lp_analysis *a)
{
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	memset(&in, 0, sizeof(in));
	in.profile = p;
	assert_int_equal(lp_analyze(&in, a, &err), 0);
}

static void test_idle_gap_triggers_cuda_graph_advice(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	const struct lp_advice *ad;
	(void)state;
	lp_profile_init(&p, "idle");
	build(&p, 1, 2, 200, "gemv_kernel");   /* 400 us busy of 1000 us per step: 60% idle */
	analyze(&p, &a);
	ad = rule(&a, "decode-idle", LP_ADVICE_TAKEAWAY);
	assert_non_null(ad);
	assert_non_null(strstr(advice_text(ad), "idle 60.0% of the decode latency"));
	assert_non_null(strstr(advice_text(ad), "busy 1.600 ms of 4.000 ms"));
	assert_non_null(rule(&a, "decode-idle", LP_ADVICE_RECOMMENDATION));
	assert_null(rule(&a, "decode-fusion", LP_ADVICE_TAKEAWAY));   /* 2 kernels per step */
	/* decode 4 ms vs prefill 1 ms */
	ad = rule(&a, "stage-dominates", LP_ADVICE_TAKEAWAY);
	assert_non_null(ad);
	assert_non_null(strstr(advice_text(ad), "Decode dominates: 80.0%"));
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

static void test_busy_decode_gives_no_gap_advice(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	(void)state;
	lp_profile_init(&p, "busy");
	build(&p, 8, 4, 240, "gemv_kernel");   /* 960 us of 1000 us: 4% idle */
	analyze(&p, &a);
	assert_null(rule(&a, "decode-idle", LP_ADVICE_TAKEAWAY));
	assert_null(rule(&a, "decode-idle", LP_ADVICE_RECOMMENDATION));
	assert_null(rule(&a, "decode-fusion", LP_ADVICE_TAKEAWAY));
	/* prefill 8 ms vs decode 4 ms: prefill dominates at 66.7% */
	assert_non_null(strstr(advice_text(rule(&a, "stage-dominates", LP_ADVICE_TAKEAWAY)), "Prefill dominates: 66.7%"));
	/* no model shape: no boundness claims */
	assert_null(rule(&a, "bound-decode", LP_ADVICE_TAKEAWAY));
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

static void test_many_small_kernels_trigger_fusion(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	const struct lp_advice *ad;
	(void)state;
	lp_profile_init(&p, "small");
	build(&p, 1, 40, 5, "rmsnorm_kernel");   /* 40 kernels of 5 us per step */
	analyze(&p, &a);
	ad = rule(&a, "decode-fusion", LP_ADVICE_TAKEAWAY);
	assert_non_null(ad);
	assert_non_null(strstr(advice_text(ad), "40 kernels per step with a mean kernel time of 5.00 us"));
	/* norm kernels are 100% of decode kernel time: the small-op fusion rule fires too */
	assert_non_null(rule(&a, "families-decode", LP_ADVICE_RECOMMENDATION));
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

static void test_cpu_profile_says_so(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	(void)state;
	lp_profile_init(&p, "cpu");
	R(&p, -1, "prefill", 0, MS);
	R(&p, -1, "decode_all", MS, 3 * MS);
	analyze(&p, &a);
	assert_non_null(rule(&a, "cpu-run", LP_ADVICE_TAKEAWAY));
	assert_null(rule(&a, "decode-idle", LP_ADVICE_TAKEAWAY));
	assert_null(rule(&a, "families-decode", LP_ADVICE_TAKEAWAY));
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle_gap_triggers_cuda_graph_advice),
		cmocka_unit_test(test_busy_decode_gives_no_gap_advice),
		cmocka_unit_test(test_many_small_kernels_trigger_fusion),
		cmocka_unit_test(test_cpu_profile_says_so),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
