/* test_stages.c: stage statistics on a synthetic profile (src/analyze/stages.c): iterations with
 * known durations, warm-up excluded, the GPU busy time as a union of overlapping kernels, decode
 * steps counted, nested vision ranges reported as a note, the LLM domain preferred, the top-level
 * fallback and CPU-only profiles. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/stages.h"

#define MS 1000000ull

static int32_t R(struct lp_profile *p, int32_t parent, const char *domain, const char *name, uint64_t s, uint64_t e)
{
	struct lp_range *r = lp_profile_add_range(p);
	assert_non_null(r);
	r->domain = lp_profile_intern(p, domain);
	r->name = lp_profile_intern(p, name);
	r->pid = 1;
	r->tid = 1;
	r->start_ns = s;
	r->end_ns = e;
	r->parent = parent;
	r->depth = parent >= 0 ? (uint16_t)(p->ranges[parent].depth + 1) : 0;
	return (int32_t)(p->n_ranges - 1);
}

static void K(struct lp_profile *p, int32_t range, const char *name, uint64_t s, uint64_t e)
{
	struct lp_kernel *k = lp_profile_add_kernel(p);
	assert_non_null(k);
	k->name = lp_profile_intern(p, name);
	k->short_name = k->name;
	k->pid = 1;
	k->start_ns = s;
	k->end_ns = e;
	k->range = range;
}

/* Warm-up at t=0, then three iterations at t = 100, 200, 300 ms:
 * prefill host 10, 12, 14 ms (payload 512); decode_all host 20, 20, 26 ms with 2 steps each. */
static void build(struct lp_profile *p)
{
	int i;
	int32_t w = R(p, -1, "LLM", "warmup", 0, 90 * MS);
	int32_t wp = R(p, w, "LLM", "prefill", 1 * MS, 20 * MS);
	K(p, wp, "gemm", 2 * MS, 10 * MS);
	for (i = 0; i < 3; i++) {
		uint64_t t = (uint64_t)(100 + 100 * i) * MS;
		uint64_t ph = (uint64_t)(10 + 2 * i) * MS;
		int32_t pf = R(p, -1, "LLM", "prefill", t, t + ph), sam, layer, dec, s0, s1;
		p->ranges[pf].payload_type = LP_PAYLOAD_U64;
		p->ranges[pf].payload.u64 = 512;
		sam = R(p, pf, "", "sam", t, t + 2 * MS);
		K(p, sam, "vit_kernel", t, t + 1 * MS);
		layer = R(p, pf, "LLM", "layer", t + 2 * MS, t + ph);
		/* overlapping kernels: [3,5] and [4,6] -> busy 3 ms; [7,8] -> 1 ms */
		K(p, layer, "gemm", t + 3 * MS, t + 5 * MS);
		K(p, layer, "gemm", t + 4 * MS, t + 6 * MS);
		K(p, layer, "norm", t + 7 * MS, t + 8 * MS);
		dec = R(p, -1, "LLM", "decode_all", t + ph, t + ph + (i == 2 ? 26 : 20) * MS);
		s0 = R(p, dec, "LLM", "decode_step", t + ph, t + ph + 10 * MS);
		s1 = R(p, dec, "LLM", "decode_step", t + ph + 10 * MS, t + ph + 20 * MS);
		K(p, s0, "gemv", t + ph + 1 * MS, t + ph + 5 * MS);
		K(p, s1, "gemv", t + ph + 11 * MS, t + ph + 15 * MS);
	}
	/* a default-domain decoy named prefill: ignored because LLM-domain stages exist */
	R(p, -1, "", "prefill", 900 * MS, 999 * MS);
	K(p, -1, "orphan", 950 * MS, 951 * MS);
}

static void test_iterations_and_stats(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_stage *pf, *dec;
	(void)state;
	lp_profile_init(&p, "synthetic");
	build(&p);
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	assert_int_equal(st.n_stages, 2);
	assert_true(st.have_gpu);
	pf = lp_stages_find(&st, LP_STAGE_PREFILL);
	dec = lp_stages_find(&st, LP_STAGE_DECODE);
	assert_non_null(pf);
	assert_non_null(dec);
	assert_string_equal(pf->name, "prefill");
	assert_int_equal(pf->n_iters, 3);
	assert_int_equal(pf->excluded_warmup, 1);
	/* host 10, 12, 14: mean 12, sample std sqrt((4+0+4)/2) = 2 */
	assert_true(fabs(pf->host_ms.mean - 12.0) < 1e-9);
	assert_true(fabs(pf->host_ms.std - 2.0) < 1e-9);
	assert_true(pf->host_ms.min == 10.0 && pf->host_ms.max == 14.0);
	/* GPU busy: vit 1 ms + union([3,5],[4,6]) 3 ms + 1 ms = 5 ms; kernel sum 1+2+2+1 = 6 ms */
	assert_true(fabs(pf->gpu_ms.mean - 5.0) < 1e-9);
	assert_true(pf->gpu_ms.std == 0.0);
	assert_true(fabs(pf->kernel_ms.mean - 6.0) < 1e-9);
	assert_true(pf->kernels.mean == 4.0);
	assert_true(pf->iters[0].has_payload && pf->iters[0].payload == 512);
	/* decode 20, 20, 26: mean 22, std sqrt((4+4+16)/2) = sqrt(12) */
	assert_true(fabs(dec->host_ms.mean - 22.0) < 1e-9);
	assert_true(fabs(dec->host_ms.std - sqrt(12.0)) < 1e-9);
	assert_true(dec->steps.mean == 2.0);
	assert_true(fabs(dec->gpu_ms.mean - 8.0) < 1e-9);
	/* the vision range is a note of prefill, not a stage */
	assert_int_equal(pf->n_notes, 1);
	assert_string_equal(pf->notes[0].name, "sam");
	assert_int_equal(pf->notes[0].calls, 3);
	assert_int_equal(pf->notes[0].kernel_ns, 3 * MS);
	assert_int_equal(dec->n_notes, 0);
	/* kernel map: warm-up kernel -2, orphan -1 */
	assert_int_equal(st.kernel_stage[0], -2);
	assert_int_equal(st.kernel_stage[p.n_kernels - 1], -1);
	assert_int_equal(st.warmup_kernel_ns, 8 * MS);
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

static void test_top_level_fallback_and_cpu(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	int i;
	(void)state;
	lp_profile_init(&p, "cpu");
	for (i = 0; i < 4; i++) {
		int32_t g = R(&p, -1, "", "generate", (uint64_t)i * 100 * MS, (uint64_t)i * 100 * MS + (uint64_t)(50 + i) * MS);
		R(&p, g, "", "aten::mm, seq = 1", (uint64_t)i * 100 * MS, (uint64_t)i * 100 * MS + MS);
	}
	R(&p, -1, "", "aten::add, seq = 7", 999 * MS, 1000 * MS);  /* a top-level op is not a stage */
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	assert_true(st.top_level_fallback);
	assert_false(st.have_gpu);
	assert_int_equal(st.n_stages, 1);
	assert_string_equal(st.stages[0].name, "generate");
	assert_int_equal(st.stages[0].kind, LP_STAGE_OTHER);
	assert_int_equal(st.stages[0].n_iters, 4);
	assert_true(fabs(st.stages[0].host_ms.mean - 51.5) < 1e-9);
	assert_true(st.stages[0].gpu_ms.mean == 0.0);
	lp_stage_set_release(&st);
	lp_profile_release(&p);

	/* nothing at all: no stages, no failure */
	lp_profile_init(&p, "empty");
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	assert_int_equal(st.n_stages, 0);
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

static void test_stat_single_value(void **state)
{
	struct lp_stat s;
	double one = 3.5;
	(void)state;
	lp_stat_compute(&one, 1, &s);
	assert_true(s.mean == 3.5 && s.std == 0.0 && s.n == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iterations_and_stats),
		cmocka_unit_test(test_top_level_fallback_and_cpu),
		cmocka_unit_test(test_stat_single_value),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
