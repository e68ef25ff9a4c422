/* test_stages.c: stage statistics on a synthetic profile (src/analyze/stages.c): iterations with
 * known durations, warm-up excluded, the GPU busy time as a union of overlapping kernels, decode
 * steps counted, nested vision ranges reported as a note, the LLM domain preferred, the top-level
 * fallback and CPU-only profiles; the stage mapping (default names in the default domain,
 * configured names and regexes, the LLM domain winning per role, bad regexes), the skip-first
 * warm-up rule (automatic, explicit, with a warm-up range, with one iteration), outlier
 * iterations and the whole-run numbers of a profile without stages. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/stages.h"

#define MS 1000000ull

static int32_t R(struct lp_profile *p, int32_t parent, const char *domain, const char *name, uint64_t s, uint64_t e)
{
	return lp_test_range(p, parent, domain, name, s, e);
}

static void K(struct lp_profile *p, int32_t range, const char *name, uint64_t s, uint64_t e)
{
	lp_test_kernel(p, range, name, s, e);
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


/* A hand-written KV-cache loop as people write it: default-domain `prefill`, `decode` around the
 * steps and `decode_step` per token, no warm-up range. Iteration i: prefill [t, t+pf_ms], decode
 * [t+10, t+10+dec_ms] with `steps` steps, one kernel per range. */
static void build_plain(struct lp_profile *p, int iters, const uint64_t *dec_ms, int steps, const char *dec_name,
	const char *step_name)
{
	int i, s;
	for (i = 0; i < iters; i++) {
		uint64_t t = (uint64_t)(1000 * i) * MS;
		int32_t pf = R(p, -1, "", "prefill", t, t + 8 * MS), dec;
		K(p, pf, "gemm", t + 1 * MS, t + 8 * MS);
		dec = R(p, -1, "", dec_name, t + 10 * MS, t + 10 * MS + dec_ms[i] * MS);
		for (s = 0; s < steps; s++) {
			uint64_t u = t + 10 * MS + (uint64_t)s * (dec_ms[i] * MS / (uint64_t)steps);
			int32_t st = R(p, dec, "", step_name, u, u + dec_ms[i] * MS / (uint64_t)steps);
			K(p, st, "gemv", u, u + MS / 2);
		}
	}
}

static const struct lp_stage_map_entry *map_find(const struct lp_stage_set *st, enum lp_stage_role role,
	const char *name)
{
	size_t i;
	for (i = 0; i < st->n_map; i++)
		if (st->map[i].role == role && !strcmp(st->map[i].name, name))
			return &st->map[i];
	return NULL;
}

/* map_find for a row that must be there (fails the test otherwise, so no NULL is dereferenced) */
static const struct lp_stage_map_entry *map_get(const struct lp_stage_set *st, enum lp_stage_role role,
	const char *name)
{
	const struct lp_stage_map_entry *e = map_find(st, role, name);
	if (!e)
		fail_msg("no mapping row %d '%s'", (int)role, name);   /* never returns */
	return e;
}

/* Default names cover `decode` / `step` in the default domain; the rows keep canonical names; the
 * automatic rule drops the first (cold) iteration; the plain API drops nothing. */
static void test_default_mapping_and_skip_first(void **state)
{
	static const uint64_t dec[4] = { 300, 40, 42, 44 };   /* the first one is cold */
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	struct lp_stage_rules rules;
	const struct lp_stage *pf, *d;
	const struct lp_stage_map_entry *e;
	size_t i, under_skipped = 0;
	(void)state;
	lp_profile_init(&p, "plain");
	build_plain(&p, 4, dec, 4, "decode", "step");
	memset(&rules, 0, sizeof(rules));
	rules.skip_first = LP_SKIP_FIRST_AUTO;
	assert_int_equal(lp_stages_compute_ex(&p, &rules, &st, &err), 0);
	assert_int_equal(st.n_stages, 2);
	pf = lp_stages_find(&st, LP_STAGE_PREFILL);
	d = lp_stages_find(&st, LP_STAGE_DECODE);
	assert_non_null(pf);
	assert_non_null(d);
	assert_string_equal(d->name, "decode_all");      /* canonical row name */
	assert_string_equal(d->domain, "");
	assert_false(st.have_warmup_range);
	assert_true(st.skip_auto);
	assert_int_equal(st.skip_first, 1);
	assert_int_equal(d->n_iters, 3);
	assert_int_equal(d->skipped_first, 1);
	assert_int_equal(pf->skipped_first, 1);
	assert_true(fabs(d->host_ms.mean - 42.0) < 1e-9);   /* 40, 42, 44: the 300 ms cold one is out */
	assert_true(d->steps.mean == 4.0);                 /* `step` counted as decode_step */
	assert_int_equal(d->n_step_lat, 12);              /* steps of the skipped iteration left out */
	/* kernels of the skipped iteration count as warm-up */
	for (i = 0; i < p.n_kernels; i++)
		if (p.kernels[i].start_ns < 1000 * MS) {
			assert_int_equal(st.kernel_stage[i], -2);
			under_skipped++;
		}
	assert_int_equal(under_skipped, 5);
	assert_true(lp_stage_range_excluded(&st, 0));     /* the first prefill */
	assert_false(lp_stage_range_excluded(&st, (int32_t)(p.n_ranges - 1)));
	assert_int_equal(lp_stage_range_role(&st, 0), LP_ROLE_PREFILL);
	/* the mapping says what was taken */
	assert_true(st.names_default);
	assert_string_equal(st.names_source, "built-in defaults");
	e = map_find(&st, LP_ROLE_DECODE, "decode");
	assert_non_null(e);
	assert_int_equal(e->ranges, 4);
	assert_int_equal(e->ignored, 0);
	e = map_find(&st, LP_ROLE_STEP, "step");
	assert_non_null(e);
	assert_int_equal(e->ranges, 16);
	lp_stage_set_release(&st);

	/* the plain API keeps every iteration (callers that measure everything) */
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	d = lp_stages_find(&st, LP_STAGE_DECODE);
	assert_int_equal(d->n_iters, 4);
	assert_int_equal(d->skipped_first, 0);
	lp_stage_set_release(&st);

	/* run.skip_first=0 keeps the cold one; =2 drops two */
	rules.skip_first = 0;
	assert_int_equal(lp_stages_compute_ex(&p, &rules, &st, &err), 0);
	assert_int_equal(lp_stages_find(&st, LP_STAGE_DECODE)->n_iters, 4);
	assert_false(st.skip_auto);
	lp_stage_set_release(&st);
	rules.skip_first = 2;
	assert_int_equal(lp_stages_compute_ex(&p, &rules, &st, &err), 0);
	assert_int_equal(lp_stages_find(&st, LP_STAGE_DECODE)->n_iters, 2);
	assert_int_equal(lp_stages_find(&st, LP_STAGE_DECODE)->skipped_first, 2);
	lp_stage_set_release(&st);
	/* more than there are: nothing skipped, every iteration kept */
	rules.skip_first = 9;
	assert_int_equal(lp_stages_compute_ex(&p, &rules, &st, &err), 0);
	assert_int_equal(lp_stages_find(&st, LP_STAGE_DECODE)->n_iters, 4);
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

/* With a warm-up range the automatic rule skips nothing; with one iteration nothing either. */
static void test_skip_first_with_warmup_or_one_iteration(void **state)
{
	static const uint64_t dec[1] = { 50 };
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	struct lp_stage_rules rules;
	(void)state;
	memset(&rules, 0, sizeof(rules));
	rules.skip_first = LP_SKIP_FIRST_AUTO;
	lp_profile_init(&p, "llm");
	build(&p);   /* LLM-domain contract with a warmup range, 3 iterations */
	assert_int_equal(lp_stages_compute_ex(&p, &rules, &st, &err), 0);
	assert_true(st.have_warmup_range);
	assert_int_equal(st.skip_first, 0);
	assert_int_equal(lp_stages_find(&st, LP_STAGE_PREFILL)->n_iters, 3);
	assert_int_equal(lp_stages_find(&st, LP_STAGE_PREFILL)->excluded_warmup, 1);
	/* the default-domain decoy is counted in the mapping as ignored */
	assert_int_equal(map_get(&st, LP_ROLE_PREFILL, "prefill")->ranges, 4);   /* 3 + the warm-up one, LLM */
	{
		size_t i, ignored = 0;
		for (i = 0; i < st.n_map; i++)
			ignored += st.map[i].ignored;
		assert_int_equal(ignored, 1);
	}
	lp_stage_set_release(&st);
	lp_profile_release(&p);

	lp_profile_init(&p, "once");
	build_plain(&p, 1, dec, 2, "decode_all", "decode_step");
	assert_int_equal(lp_stages_compute_ex(&p, &rules, &st, &err), 0);
	assert_int_equal(st.skip_first, 1);
	assert_int_equal(lp_stages_find(&st, LP_STAGE_DECODE)->n_iters, 1);
	assert_int_equal(lp_stages_find(&st, LP_STAGE_DECODE)->skipped_first, 0);
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

/* Configured names and regexes replace the defaults of their role only; a bad regex is a usage
 * error naming the key; LLM-domain ranges win per role. */
static void test_configured_mapping(void **state)
{
	static const uint64_t dec[3] = { 40, 40, 40 };
	static const char *const decode[] = { "generate_tokens", NULL };
	static const char *const step[] = { "regex:tok(en)?_[0-9]+", NULL };
	static const char *const bad[] = { "regex:(", NULL };
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	struct lp_stage_rules rules;
	const struct lp_stage *d;
	int i;
	(void)state;
	lp_profile_init(&p, "custom");
	build_plain(&p, 3, dec, 2, "generate_tokens", "token_7");
	R(&p, -1, "", "decode", 5000 * MS, 5001 * MS);   /* a default name that is no longer mapped */
	memset(&rules, 0, sizeof(rules));
	rules.names[LP_ROLE_DECODE] = decode;
	rules.names[LP_ROLE_STEP] = step;
	rules.source = "stages.* in the config";
	assert_int_equal(lp_stages_compute_ex(&p, &rules, &st, &err), 0);
	assert_false(st.names_default);
	assert_string_equal(st.names_source, "stages.* in the config");
	d = lp_stages_find(&st, LP_STAGE_DECODE);
	assert_non_null(d);
	assert_int_equal(d->n_iters, 3);
	assert_true(d->steps.mean == 2.0);
	assert_null(map_find(&st, LP_ROLE_DECODE, "decode"));
	assert_non_null(map_find(&st, LP_ROLE_STEP, "token_7"));
	/* `decode` is a top-level range of no role now, but prefill/decode stages exist: no extra row */
	assert_int_equal(st.n_stages, 2);
	lp_stage_set_release(&st);

	rules.names[LP_ROLE_STEP] = bad;
	assert_int_equal(lp_stages_compute_ex(&p, &rules, &st, &err), -1);
	assert_int_equal(err.kind, LP_EUSAGE);
	assert_non_null(strstr(err.msg, "stages.decode_step"));
	lp_profile_release(&p);

	/* LLM-domain decode ranges win over default-domain ones, per role: prefill stays default-domain */
	lp_profile_init(&p, "mixed");
	for (i = 0; i < 2; i++) {
		uint64_t t = (uint64_t)(100 * i) * MS;
		R(&p, -1, "", "prefill", t, t + 5 * MS);
		R(&p, -1, "LLM", "decode_all", t + 10 * MS, t + 30 * MS);
		R(&p, -1, "", "decode", t + 10 * MS, t + 31 * MS);
	}
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	assert_int_equal(lp_stages_find(&st, LP_STAGE_PREFILL)->n_iters, 2);
	d = lp_stages_find(&st, LP_STAGE_DECODE);
	assert_int_equal(d->n_iters, 2);
	assert_string_equal(d->domain, "LLM");
	assert_true(fabs(d->host_ms.mean - 20.0) < 1e-9);
	assert_int_equal(map_get(&st, LP_ROLE_DECODE, "decode")->ignored, 2);
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

/* A slow iteration among steady ones is flagged; jitter under 5% of the median is not. */
static void test_outliers(void **state)
{
	static const uint64_t dec[6] = { 40, 41, 40, 90, 42, 40 };
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_stage *d, *pf;
	size_t i;
	(void)state;
	lp_profile_init(&p, "outliers");
	build_plain(&p, 6, dec, 2, "decode_all", "decode_step");
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	d = lp_stages_find(&st, LP_STAGE_DECODE);
	pf = lp_stages_find(&st, LP_STAGE_PREFILL);
	assert_int_equal(d->n_outliers, 1);
	assert_true(fabs(d->lat_median_ms - 40.5) < 1e-9);
	for (i = 0; i < d->n_iters; i++)
		assert_int_equal(d->iters[i].outlier, i == 3);
	assert_int_equal(pf->n_outliers, 0);   /* identical prefills */
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

/* No range at all: no stage, and the whole-run timeline still comes out. */
static void test_no_ranges_whole_run(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	lp_profile_init(&p, "bare");
	K(&p, -1, "a", 10 * MS, 20 * MS);
	K(&p, -1, "b", 15 * MS, 25 * MS);   /* overlaps a: busy 15 ms */
	K(&p, -1, "c", 100 * MS, 110 * MS);
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	assert_int_equal(st.n_stages, 0);
	assert_int_equal(st.run_span_ns, 100 * MS);
	assert_int_equal(st.run_busy_ns, 25 * MS);
	assert_int_equal(st.kernel_stage[0], -1);
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
		cmocka_unit_test(test_default_mapping_and_skip_first),
		cmocka_unit_test(test_skip_first_with_warmup_or_one_iteration),
		cmocka_unit_test(test_configured_mapping),
		cmocka_unit_test(test_outliers),
		cmocka_unit_test(test_no_ranges_whole_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
