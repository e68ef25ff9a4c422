/* test_sampling_bursts.c: sampled traces in bursts (issue 24, docs/tracer.md "Bursts": a cluster
 * of consecutive units per block, CUPTI detached between clusters), on fixture traces written by the
 * tracer's own writer (build/tests/lp_trace_fixture, CUPTI and the GPU faked, a detach pausing the
 * program 3 ms): the tracer's flags follow the schedule, every step's GPU time is the program's own
 * (the steps that held a detach included), and the analysis scales the clusters to every step
 * within their intervals. The one-unit-per-block schedules: test_sampling_traces.c. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/sampling.h"
#include "report/reports.h"
#include "report/sections.h"
#include "report/tracing_mode.h"

#include "sampling_traces.h"

/* The analysis of the fixture trace in `dir` with run.skip_first's default (the first of its
 * generations left out: it marks no warm-up); *p holds the profile. */
static struct lp_analysis *analyze_first_left_out(const char *dir, struct lp_profile *p)
{
	struct lp_analysis_input in;
	struct lp_stage_rules rules = { .skip_first = LP_SKIP_FIRST_AUTO };
	struct lp_analysis *a = calloc(1, sizeof(*a));
	struct lp_err err = LP_ERR_INIT;
	assert_non_null(a);
	load(dir, p);
	memset(&in, 0, sizeof(in));
	in.profile = p;
	in.stage_rules = &rules;
	assert_int_equal(lp_analyze(&in, a, &err), 0);
	return a;
}

/* auto with bursts on a program whose first steps are slow: the decision to sample comes at a
 * pop, and the detach for the unrecorded step after it pauses the program there, in the step
 * that holds the pop, as a burst's detach does; every step's time agrees with the program's. */
static void test_auto_burst_steps(void **state)
{
	const char *dir = LP_TEST_TMP "/sampling_auto_burst";
	struct stage_list *st = calloc(1, sizeof(*st));
	size_t i, d, held;
	(void)state;
	setenv("LP_FIXTURE_SLOW", "4", 1);
	/* seed 4: generation 0's first cluster is steps 14-17 (sample_check.py burst_schedule), so the
	 * step at the decision (5-13) is not recorded and CUPTI detaches for it */
	lp_test_trace_fixture(dir, "auto,rate=500,every=16,burst=4,first=2,seed=4", LP_TEST_TMP "/sampling_auto_burst.txt");
	unsetenv("LP_FIXTURE_SLOW");
	read_stages(dir, st);
	assert_int_equal(st->sampling.mode, LP_TRACE_SAMPLE_SAMPLED);
	assert_int_equal(st->sampling.burst, 4);
	assert_int_equal(st->n, 144);
	for (d = 2; d < 48 && st->r[d].sample == LP_TRACE_STAGE_MEASURED; d++) {
	}
	if (d < 5 || d > 16)
		fail_msg("auto decided at step %zu", d);
	held = steps_as_program(LP_TEST_TMP "/sampling_auto_burst.txt", st);
	/* the step before the decision held the detach */
	if (d > 13)
		fail_msg("auto decided at step %zu", d);
	assert_int_equal(st->r[d].sample, LP_TRACE_STAGE_SKIPPED);
	assert_true(st->r[d - 1].gpu_elapsed_ns >= 3000000);
	for (i = 0; i < d - 1; i++)
		assert_true(st->r[i].gpu_elapsed_ns < 3000000);
	assert_true(held >= 1 + 2 * 2); /* and in generations 1 and 2 a burst's in each full block */
	{
		/* the reports say how many steps auto traced exactly before it chose, at what rate, and
		 * (with the first generation left out as warm-up) what lets the tracer skip them */
		struct lp_profile p;
		struct lp_analysis *a = analyze_first_left_out(dir, &p);
		struct lp_buf md = LP_BUF_INIT;
		json_t *sum, *tr;
		char want[160];
		assert_int_equal(a->units_measured, d - 2);
		assert_int_equal(a->units_measured_left_out, d - 2); /* all in generation 0, left out */
		/* 5 kernels a step, two of the measured steps 50 ms long: well under the threshold */
		assert_true(a->units_measured_rate > 5 && a->units_measured_rate < 500);
		assert_int_equal(lp_tracing_mode_text(a, &md), 0);
		snprintf(want, sizeof(want), " after it traced %zu decode_step ranges exactly while measuring", d - 2);
		assert_non_null(strstr(md.data, want));
		/* a few steps: no advice (LONG_EXACT_PHASE, tracing_mode.c) */
		assert_null(strstr(md.data, "The program marks no warm-up range"));
		sum = summary_of(a);
		tr = json_object_get(sum, "tracing");
		assert_int_equal(json_integer_value(json_object_get(tr, "units_measured")), (json_int_t)(d - 2));
		assert_true(json_is_real(json_object_get(tr, "units_measured_rate")));
		json_decref(sum);
		lp_buf_release(&md);
		lp_analysis_release(a);
		free(a);
		lp_profile_release(&p);
	}
	free(st);
}

/* auto's exact phase through most of a cold first generation (its first 24 steps 50 ms each,
 * under the threshold; run 33 on the H200: 127 steps, which cost every later step ~2.5 points):
 * the Tracing mode section, with the first generation left out, says how many, at what rate, and
 * what lets the tracer skip them. */
static void test_auto_long_exact_phase(void **state)
{
	const char *dir = LP_TEST_TMP "/sampling_auto_long";
	struct lp_profile p;
	struct lp_analysis *a;
	struct lp_buf md = LP_BUF_INIT;
	char want[160];
	(void)state;
	setenv("LP_FIXTURE_SLOW", "24", 1);
	lp_test_trace_fixture(dir, "auto,rate=500,every=16,burst=4,first=2,seed=4", LP_TEST_TMP "/sampling_auto_long.txt");
	unsetenv("LP_FIXTURE_SLOW");
	a = analyze_first_left_out(dir, &p);
	/* steps 2-23 slow and measured, the fast 24th decides (measured too; a later one if the host
	 * stalled a fast step past 10 ms) */
	if (a->units_measured < 23 || a->units_measured > 30)
		fail_msg("auto measured %llu units", (unsigned long long)a->units_measured);
	assert_int_equal(a->units_measured_left_out, a->units_measured);
	assert_true(a->units_measured_rate > 5 && a->units_measured_rate < 500);
	assert_int_equal(lp_tracing_mode_text(a, &md), 0);
	snprintf(want, sizeof(want), "after it traced %llu decode_step ranges exactly while measuring",
		(unsigned long long)a->units_measured);
	assert_non_null(strstr(md.data, want));
	snprintf(want, sizeof(want), "auto traced %llu decode_step ranges of its first generation exactly",
		(unsigned long long)a->units_measured);
	assert_non_null(strstr(md.data, want));
	snprintf(want, sizeof(want), "trace.sample=auto,rate=N with N under %.0f lets auto decide sooner",
		a->units_measured_rate);
	assert_non_null(strstr(md.data, want));
	assert_non_null(strstr(md.data, "run.auto_warmup=1"));
	lp_buf_release(&md);
	lp_analysis_release(a);
	free(a);
	lp_profile_release(&p);
}

/* The fixture writer's program behind a warm-up range, its first 4 steps slow, traced with `spec`;
 * the analysis with the first iteration left out. */
static struct lp_analysis *warmup_fixture(const char *dir, const char *spec, struct lp_profile *p)
{
	struct lp_analysis *a;
	setenv("LP_FIXTURE_SLOW", "4", 1);
	setenv("LP_FIXTURE_WARMUP", "1", 1);
	lp_test_trace_fixture(dir, spec, NULL);
	unsetenv("LP_FIXTURE_WARMUP");
	unsetenv("LP_FIXTURE_SLOW");
	a = analyze_first_left_out(dir, p);
	return a;
}

/* auto behind a warm-up range (hf_generate.py --warmup 1): CUPTI is detached for the warm-up, so
 * its units, flagged as measured while auto waits, hold no kernels and measured nothing; auto
 * decides in the next generation. The Tracing mode section must not claim it traced them (an H200
 * light run of run 36 read "after it traced 126 decode_step ranges exactly while measuring (0
 * launches/s in them)"). */
static void test_auto_after_detached_warmup(void **state)
{
	const char *dir = LP_TEST_TMP "/sampling_auto_warmup";
	struct lp_profile p;
	struct lp_analysis *a;
	struct lp_buf md = LP_BUF_INIT;
	json_t *tr;
	size_t i, flagged = 0;
	(void)state;
	/* gen=0: the fixture's generations launch 5 kernels a step, which auto's gen= (2,000 launches
	 * a generation) keeps exact (test_auto_short_generations) */
	a = warmup_fixture(dir, "auto,rate=500,every=16,burst=4,first=2,seed=4,gen=0", &p);
	assert_int_equal(a->sampling.mode, LP_TRACE_SAMPLE_SAMPLED);
	assert_int_equal(a->sampling.warmup, LP_TRACE_WARMUP_DETACHED);
	for (i = 0; i < p.n_ranges; i++)
		flagged += p.ranges[i].sample == LP_TRACE_STAGE_MEASURED;
	assert_true(flagged >= 40); /* the warm-up's steps past the first 2 */
	assert_int_equal(a->units_measured, 0);
	assert_int_equal(a->units_measured_left_out, 0);
	assert_true(a->units_measured_rate == 0);
	assert_int_equal(lp_tracing_mode_text(a, &md), 0);
	assert_non_null(strstr(md.data, "chosen by trace.sample=auto at "));
	assert_null(strstr(md.data, "exactly while measuring"));
	assert_null(strstr(md.data, "The program marks no warm-up range"));
	tr = lp_tracing_mode_json(a);
	assert_int_equal(json_integer_value(json_object_get(tr, "units_measured")), 0);
	assert_true(json_is_null(json_object_get(tr, "units_measured_rate")));
	json_decref(tr);
	lp_buf_release(&md);
	lp_analysis_release(a);
	free(a);
	lp_profile_release(&p);
}

/* The same program with auto's default gen= (2,000): its generations after the warm-up are
 * foreseen from the warm-up's count of steps at 5 launches each, so auto keeps them exact although
 * their launch rate is above its threshold: a burst's attach and detach (15-20 ms) would cost
 * more (run 37: a 2-layer tensor-parallel decode of ~1,100 launches paid 19 ms a 24 ms generation). Everything
 * after the warm-up is traced, and the reports say why. */
static void test_auto_short_generations(void **state)
{
	const char *dir = LP_TEST_TMP "/sampling_auto_short";
	struct lp_profile p;
	struct lp_analysis *a;
	struct lp_buf md = LP_BUF_INIT;
	json_t *tr;
	size_t i, skipped = 0, measured = 0;
	(void)state;
	a = warmup_fixture(dir, "auto,rate=500,every=16,burst=4,first=2,seed=4", &p);
	assert_int_equal(a->sampling.mode, LP_TRACE_SAMPLE_EXACT);
	assert_int_equal(a->sampling.why, LP_TRACE_SAMPLE_WHY_AUTO_SHORT);
	assert_true(a->sampling.launch_rate > 500);
	assert_int_equal(a->sampling.toggles, 2); /* the warm-up's detach and attach, no burst's */
	for (i = 0; i < p.n_ranges; i++) {
		skipped += p.ranges[i].sample == LP_TRACE_STAGE_SKIPPED;
		measured += p.ranges[i].sample == LP_TRACE_STAGE_MEASURED && p.ranges[i].start_ns;
	}
	assert_int_equal(skipped, 0);
	assert_true(measured >= 80);
	assert_false(a->kernels.sampled);
	assert_int_equal(lp_tracing_mode_text(a, &md), 0);
	assert_non_null(strstr(md.data, "Exact: every launch traced (trace.sample=auto: "));
	assert_non_null(strstr(md.data, "but the generations were foreseen to launch fewer times than its gen="));
	/* exact after the warm-up, whose kernels auto left unrecorded: said, as in a sampled run */
	assert_non_null(strstr(md.data, "CUPTI was detached inside the program's warm-up range"));
	tr = lp_tracing_mode_json(a);
	assert_string_equal(json_string_value(json_object_get(tr, "why")), "auto_short");
	json_decref(tr);
	lp_buf_release(&md);
	lp_analysis_release(a);
	free(a);
	lp_profile_release(&p);
}

/* gen= counts launches, not time (run 38: HF's static cache, 64 steps in 0.18 s, cost +34% exact
 * against +13% in bursts, with ~5,600 launch calls a generation; graph_decode.py's 0.36 s ones
 * +4% exact against +7.5%, with ~1,600). The fixture's generations last milliseconds and launch
 * 48 x 5 = 240 times: with gen=240 auto samples them (a time rule keeps them exact), with gen=241
 * they stay exact. */
static void test_auto_gen_counts_launches(void **state)
{
	static const struct { const char *spec; int mode; } c[] = {
		{ "auto,rate=500,every=16,burst=4,first=2,seed=4,gen=240", LP_TRACE_SAMPLE_SAMPLED },
		{ "auto,rate=500,every=16,burst=4,first=2,seed=4,gen=241", LP_TRACE_SAMPLE_EXACT },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char dir[256];
		struct lp_profile p;
		struct lp_analysis *a;
		snprintf(dir, sizeof(dir), LP_TEST_TMP "/sampling_auto_gen%zu", i);
		a = warmup_fixture(dir, c[i].spec, &p);
		assert_int_equal(a->sampling.mode, c[i].mode);
		assert_int_equal(a->sampling.why, c[i].mode == LP_TRACE_SAMPLE_EXACT ? LP_TRACE_SAMPLE_WHY_AUTO_SHORT
			: LP_TRACE_SAMPLE_WHY_AUTO_HIGH);
		lp_analysis_release(a);
		free(a);
		lp_profile_release(&p);
	}
}

/* auto that measured no rate: the tracer measures a unit over 0.1 ms or more, and the built-in
 * model's 0.04 ms steps left it at 0; the report read "0 launches/s in the fastest of the first
 * decode_step ranges" (run 37). */
static void test_auto_no_rate_text(void **state)
{
	struct lp_analysis *a = calloc(1, sizeof(*a));
	struct lp_buf md = LP_BUF_INIT;
	(void)state;
	assert_non_null(a);
	a->sampling.mode = LP_TRACE_SAMPLE_EXACT;
	a->sampling.why = LP_TRACE_SAMPLE_WHY_AUTO_LOW;
	a->sampling.auto_rate = 5000;
	assert_int_equal(lp_tracing_mode_text(a, &md), 0);
	assert_non_null(strstr(md.data, "no decode_step range lasted the 0.1 ms auto needs to measure its launch rate"));
	assert_null(strstr(md.data, "0 launches/s"));
	lp_buf_release(&md);
	a->sampling.launch_rate = 3100;
	assert_int_equal(lp_tracing_mode_text(a, &md), 0);
	assert_non_null(strstr(md.data, "3100 launches/s in the fastest of the first decode_step ranges"));
	lp_buf_release(&md);
	free(a);
}

/* the sampled trace's analysis into a, the exact one's into b (default stage rules: nothing
 * skipped) */
/* the two analyses, the stage list and the two profiles of a test */
static void release_all(struct lp_analysis *a, struct lp_analysis *b, struct stage_list *st, struct lp_profile *ex,
	struct lp_profile *sa)
{
	lp_analysis_release(a);
	lp_analysis_release(b);
	free(a);
	free(b);
	free(st);
	lp_profile_release(ex);
	lp_profile_release(sa);
}

/* Bursts (every=8,burst=4,first=2: one cluster of 4 consecutive steps per block of 8, CUPTI
 * detached between bursts): the tracer's flags follow lp_tsample_recorded's clusters, the work
 * between two steps is recorded exactly when the step after it is, and the analysis scales both
 * the steps' kernels and that work (argmax_between_steps) to every step, each estimate within its
 * interval of the exact run's total. */
static void test_burst_fixture(void **state)
{
	const char *ex_dir = LP_TEST_TMP "/sampling_burst_exact", *sa_dir = LP_TEST_TMP "/sampling_burst";
	static const char *const names[] = { "gemm_mlp", "attention_decode", "gemm_qkv", "rmsnorm", "rope",
		"argmax_between_steps" };
	struct lp_tsample_plan plan = PLAN(1, 8, 2), got;
	struct stage_list *st = calloc(1, sizeof(*st));
	struct lp_profile ex, sa;
	struct lp_analysis_input in;
	struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct lp_err err = LP_ERR_INIT;
	size_t i, run = 0, gaps = 0, gaps_want = 0, held = 0, held_want = 0;
	uint32_t rec = 0;
	(void)state;
	lp_test_trace_fixture(ex_dir, "off", LP_TEST_TMP "/sampling_burst_exact.txt");
	lp_test_trace_fixture(sa_dir, "every=8,burst=4,first=2,seed=7", LP_TEST_TMP "/sampling_burst.txt");
	read_stages(sa_dir, st);
	assert_int_equal(st->sampling.mode, LP_TRACE_SAMPLE_SAMPLED);
	assert_int_equal(st->sampling.burst, 4);
	assert_int_equal(st->n, 144);
	plan.pick = LP_TRACE_SAMPLE_PICK_RANDOM;
	plan.seed = 7;
	plan.burst = 4;
	/* per generation (parent ordinal g + 1): the schedule's clusters, 4 consecutive steps in each
	 * full block of 8 (5 of them; the last block of 6 holds 2 or 4) */
	for (i = 0; i < st->n; i++) {
		uint32_t g = (uint32_t)(i / 48), idx = st->r[i].index;
		int want = lp_tsample_recorded(&plan, g + 1, idx);
		assert_int_equal(idx, i % 48);
		assert_int_equal(st->r[i].sample == LP_TRACE_STAGE_SKIPPED, !want);
		if (idx >= 2 && want)
			rec++;
		run = want ? run + 1 : 0;
		assert_true(run <= 8); /* two clusters meet across a block boundary */
		/* the argmax launched after this step: recorded when the next step is (48: past the end) */
		gaps_want += lp_tsample_recorded(&plan, g + 1, idx + 1);
	}
	assert_true(rec >= 3 * (5 * 4 + 2) && rec <= 3 * (5 * 4 + 4));
	assert_int_equal(st->sampling.units_recorded, 6 + rec);
	/* every step's GPU time is the program's own, also for the steps that held a detach at their
	 * pop (a burst's last) */
	held = steps_as_program(LP_TEST_TMP "/sampling_burst.txt", st);
	for (i = 0; i < st->n; i++) {
		uint32_t g = (uint32_t)(i / 48), idx = st->r[i].index;
		/* a recorded step whose next is not (the last step of a generation holds none: CUPTI
		 * stays attached for the next prefill) */
		held_want += lp_tsample_recorded(&plan, g + 1, idx) && idx + 1 < 48 &&
			!lp_tsample_recorded(&plan, g + 1, idx + 1);
	}
	assert_true(held_want > 0);
	assert_int_equal(held, held_want);
	assert_true(st->sampling.toggles > 0);
	load(ex_dir, &ex);
	load(sa_dir, &sa);
	assert_int_equal(lp_tsample_plan_of(&sa, &got), 1);
	assert_true(got.burst == 4 && got.every == 8 && got.first == 2 && got.seed == 7);
	for (i = 0; i < sa.n_kernels; i++)
		gaps += !strcmp(sa.kernels[i].name, "argmax_between_steps");
	assert_int_equal(gaps, gaps_want);
	assert_true(gaps < 144);
	analyze_both(&sa, &ex, a, b);
	assert_int_equal(a->kernels.sample_n, rec);
	assert_int_equal(a->kernels.sample_N, 138);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct lp_kernel_row *s = krow(&a->kernels, names[i]), *e = krow(&b->kernels, names[i]);
		assert_non_null(s);
		assert_non_null(e);
		/* (argmax_between_steps takes the same time every step: an interval of 0, exact) */
		assert_true(s->sampled && (s->ci_ms > 0 || i == 5) && s->ci_ms < 0.1 * e->total_ms);
		if (fabs(s->total_ms - e->total_ms) > s->ci_ms + 1e-9 * e->total_ms)
			fail_msg("%s: %.4f +- %.4f ms against %.4f exact", s->name, s->total_ms, s->ci_ms, e->total_ms);
		assert_int_equal(s->calls, 144);
	}
	{
		const struct lp_kernel_row *s = krow(&a->kernels, "gemm_prefill"), *e = krow(&b->kernels, "gemm_prefill");
		assert_false(s->sampled); /* prefill: always recorded (CUPTI attached again at its push) */
		assert_true(s->total_ms == e->total_ms && s->calls == 3);
	}
	{
		const struct lp_stage *sd = lp_stages_find(&a->stages, LP_STAGE_DECODE), *ed = lp_stages_find(&b->stages, LP_STAGE_DECODE);
		assert_non_null(sd);
		assert_non_null(ed);
		assert_true(fabs(sd->kernels.mean - 288) < 1.5);   /* 48 x 5 + 48 argmax, scaled */
		assert_true(fabs(sd->kernel_ms.mean - ed->kernel_ms.mean) < 0.02 * ed->kernel_ms.mean);
	}
	/* the reports say so */
	{
		json_t *sum = summary_of(a), *tr = json_object_get(sum, "tracing");
		assert_int_equal(json_integer_value(json_object_get(tr, "burst")), 4);
		assert_int_equal(json_integer_value(json_object_get(tr, "every")), 8);
		assert_true(json_real_value(json_object_get(tr, "burst_switch_pct")) > 2);
		json_decref(sum);
		sum = summary_of(b);
		assert_true(json_is_null(json_object_get(json_object_get(sum, "tracing"), "burst")));
		assert_true(json_is_null(json_object_get(json_object_get(sum, "tracing"), "burst_switch_pct")));
		json_decref(sum);
	}
	{
		struct lp_buf md = LP_BUF_INIT;
		assert_int_equal(lp_tracing_mode_text(a, &md), 0);
		assert_non_null(strstr(md.data, "then a burst of 4 consecutive in each 8, CUPTI detached between bursts, "
			"at a random place in each block: seed 7)"));
		assert_non_null(strstr(md.data, "the work between two decode_step ranges was traced only before a traced one"));
		assert_null(strstr(md.data, "run.auto_warmup")); /* nothing left out as warm-up */
		/* the fixture's steps are microseconds and each detach pauses it 3 ms: the bursts'
		 * switches are most of its decode time, and the report says what fewer bursts would take */
		/* a schedule the user gave stays one: auto's decision is not put in its place */
		assert_non_null(strstr(md.data, "trace.sample=every=32,burst=4 records a burst in a quarter as many blocks"));
		lp_buf_release(&md);
		assert_int_equal(lp_tracing_mode_text(b, &md), 0);
		assert_null(strstr(md.data, "every=32")); /* exact: no bursts */
		lp_buf_release(&md);
	}
	{
		/* no warm-up range and run.skip_first's default: the first of the three generations is
		 * left out */
		struct lp_stage_rules rules = { .skip_first = LP_SKIP_FIRST_AUTO };
		struct lp_analysis *c = calloc(1, sizeof(*c));
		struct lp_buf md = LP_BUF_INIT;
		memset(&in, 0, sizeof(in));
		in.profile = &sa;
		in.stage_rules = &rules;
		assert_int_equal(lp_analyze(&in, c, &err), 0);
		assert_int_equal(lp_tracing_mode_text(c, &md), 0);
		/* a schedule, not auto: the first generation was traced as the others (run 33: its cost
		 * was auto's exact phase), so no advice */
		assert_null(strstr(md.data, "The program marks no warm-up range"));
		lp_buf_release(&md);
		/* the kernel rows hold the two measured generations, as the stage columns and the busy
		 * time do (they held the skipped one's kernels in total_ms and calls: an H200 light run
		 * of the unmodified program read "summed durations 6.69x the busy time", run 33) */
		{
			struct lp_analysis *e = calloc(1, sizeof(*e));
			in.profile = &ex;
			assert_int_equal(lp_analyze(&in, e, &err), 0);
			assert_int_equal(lp_tracing_mode_text(e, &md), 0);
			assert_null(strstr(md.data, "run.auto_warmup")); /* exact: CUPTI stays anyway */
			lp_buf_release(&md);
			for (i = 0; i < sizeof(names) / sizeof(names[0]) + 1; i++) {
				const char *nm = i < sizeof(names) / sizeof(names[0]) ? names[i] : "gemm_prefill";
				const struct lp_kernel_row *s = krow(&c->kernels, nm), *x = krow(&e->kernels, nm);
				assert_non_null(s);
				assert_non_null(x);
				assert_int_equal(x->calls, i < sizeof(names) / sizeof(names[0]) ? 96 : 2);
				assert_int_equal(s->calls, x->calls);
				assert_true(fabs(x->total_ms - (x->stage_ms[0] + x->stage_ms[1] + x->stage_ms[2])) < 1e-9);
				assert_true(fabs(x->busy_ms - x->total_ms) < 1e-9); /* no overlap in the fixture */
				assert_true(fabs(s->busy_ms - s->total_ms) < 1e-9 * x->total_ms);
				if (fabs(s->total_ms - x->total_ms) > s->ci_ms + 1e-9 * x->total_ms)
					fail_msg("%s: %.4f +- %.4f ms against %.4f exact", nm, s->total_ms, s->ci_ms, x->total_ms);
			}
			assert_true(fabs(c->kernels.busy_ms - c->kernels.total_ms) < 1e-9 * c->kernels.total_ms);
			lp_analysis_release(e);
			free(e);
		}
		lp_analysis_release(c);
		free(c);
	}
	release_all(a, b, st, &ex, &sa);
}

static size_t count_of(const char *s, const char *what)
{
	size_t n = 0;
	for (; (s = strstr(s, what)) != NULL; s += strlen(what))
		n++;
	return n;
}

/* Blocks longer than the generations (the fixture's 46 steps past the first 2; the Tracing mode
 * section's advice for short generations makes them so): most generations record no unit past
 * their first ones, and their units' stratum is collapsed into a neighbouring generation's. Each
 * estimate lies within its interval of the exact total where there is one; with a single cluster
 * there is none (n/a), and where no unit past the first ones was recorded at all the tables and
 * the stages estimate them from the first ones, with no interval, and the Tracing mode section says
 * so, with a block that fits. */
static void test_blocks_longer_than_generations(void **state)
{
	static const char *const specs[] = { "every=64,burst=4,first=2,seed=3", "every=64,first=2,seed=3",
		"every=128,burst=4,first=2,seed=5", "every=128,first=2,seed=5" };
	static const uint32_t want_n[] = { 8, 1, 4, 0 };
	static const char *const names[] = { "gemm_mlp", "attention_decode", "gemm_qkv", "rmsnorm", "rope" };
	const char *ex_dir = LP_TEST_TMP "/sampling_long_exact";
	struct lp_profile ex;
	size_t k, i;
	(void)state;
	lp_test_trace_fixture(ex_dir, "off", LP_TEST_TMP "/sampling_long_exact.txt");
	load(ex_dir, &ex);
	for (k = 0; k < sizeof(specs) / sizeof(specs[0]); k++) {
		char dir[256], out[256];
		struct lp_profile sa;
		struct lp_analysis_input in;
		struct lp_err err = LP_ERR_INIT;
		struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
		struct lp_buf md = LP_BUF_INIT;
		json_t *sum;
		snprintf(dir, sizeof(dir), LP_TEST_TMP "/sampling_long_%zu", k);
		snprintf(out, sizeof(out), LP_TEST_TMP "/sampling_long_%zu.txt", k);
		lp_test_trace_fixture(dir, specs[k], out);
		load(dir, &sa);
		memset(&in, 0, sizeof(in));
		in.profile = &sa;
		assert_int_equal(lp_analyze(&in, a, &err), 0);
		in.profile = &ex;
		assert_int_equal(lp_analyze(&in, b, &err), 0);
		assert_int_equal(lp_tracing_mode_text(a, &md), 0);
		sum = summary_of(a);
		if (!want_n[k]) {
			/* no unit of the sampled stratum: the first ones stand for the others (from_first), with
			 * no interval, and the reports say so; before, the tables and the stage held the first
			 * ones alone (run 36: a decode stage 3.85 ms busy for 24 steps, MBU 323%) */
			const struct lp_stage *ds = lp_stages_find(&a->stages, LP_STAGE_DECODE);
			const struct lp_stage *de = lp_stages_find(&b->stages, LP_STAGE_DECODE);
			assert_true(a->kernels.sampled);
			assert_int_equal(a->kernels.sample_n, 0);
			assert_int_equal(a->kernels.sample_missing, 138);
			assert_non_null(strstr(md.data, "No decode_step range past the first 2 under each parent was traced "
				"(138 of them in the measured iterations"));
			assert_non_null(strstr(md.data, "(trace.sample=every=46,burst=1)")); /* the schedule asked for */
			{
				/* auto's own choice keeps auto in the advice */
				struct lp_buf m2 = LP_BUF_INIT;
				uint32_t why = a->sampling.why;
				a->sampling.why = LP_TRACE_SAMPLE_WHY_AUTO_HIGH;
				assert_int_equal(lp_tracing_mode_text(a, &m2), 0);
				assert_non_null(strstr(m2.data, "(trace.sample=auto,every=46,burst=1)"));
				a->sampling.why = why;
				lp_buf_release(&m2);
			}
			assert_int_equal(json_integer_value(json_object_get(json_object_get(sum, "tracing"), "units_missing")), 138);
			assert_true(json_is_true(json_object_get(json_object_get(json_object_get(sum, "kernels"), "sampled"),
				"from_first_units")));
			/* a kernel alike at every step: near its exact total; one that grows with the step
			 * (attention_decode, +150 ns a step): under it, the bias the text names */
			for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
				const struct lp_kernel_row *r = krow(&a->kernels, names[i]);
				assert_true(r->sampled && r->ci_ms < 0);
			}
			assert_true(fabs(krow(&a->kernels, "gemm_mlp")->total_ms / krow(&b->kernels, "gemm_mlp")->total_ms - 1) < 0.1);
			assert_true(krow(&a->kernels, "attention_decode")->total_ms < 0.95 * krow(&b->kernels, "attention_decode")->total_ms);
			assert_true(fabs(ds->gpu_ms.mean / de->gpu_ms.mean - 1) < 0.15);
			assert_true(fabs(ds->kernels.mean / de->kernels.mean - 1) < 0.01);
			{
				/* the operator table the same way: decode's mlp (gemm_mlp alone) near exact */
				const struct lp_op_row *os = NULL, *oe = NULL;
				for (i = 0; i < a->ops.n_rows; i++)
					if (!strcmp(a->ops.rows[i].name, "mlp") && !strcmp(a->ops.rows[i].stage, "decode_all"))
						os = &a->ops.rows[i];
				for (i = 0; i < b->ops.n_rows; i++)
					if (!strcmp(b->ops.rows[i].name, "mlp") && !strcmp(b->ops.rows[i].stage, "decode_all"))
						oe = &b->ops.rows[i];
				assert_true(os && oe && os->sampled && os->ci_ms < 0);
				if (os && oe)
					assert_true(fabs(os->gpu_incl_ms / oe->gpu_incl_ms - 1) < 0.1);
			}
			{
				/* and the kernel tables themselves (report.md's top kernels, kernels.md) */
				struct lp_buf t = LP_BUF_INIT;
				assert_int_equal(lp_section_top_kernels(a, 10, &t), 0);
				assert_int_equal(lp_report_kernels_md(a, &t), 0);
				assert_int_equal(count_of(t.data, "no sampling unit past the first ones under each parent was "
					"recorded (138 of them, in generations shorter than a block): these rows estimate their "
					"kernels from the first ones (6 units), with no interval."), 2);
				assert_non_null(strstr(t.data, "| n/a (0 of 138 units) |"));
				lp_buf_release(&t);
				/* the Tracing mode table: no interval where nothing was sampled (run 36's read +- 0.000) */
				assert_int_equal(lp_report_report_md(a, NULL, &t), 0);
				assert_non_null(strstr(t.data, "| n/a (none sampled) |"));
				assert_non_null(strstr(t.data, "The units' kernels below are the first units' alone, as "
					"recorded (6 of them; the kernel tables estimate the others from them)"));
				assert_null(strstr(t.data, "| +- 0.000 |"));
				lp_buf_release(&t);
			}
		} else {
			assert_true(a->kernels.sampled);
			assert_int_equal(a->kernels.sample_n, want_n[k]);
			assert_int_equal(a->kernels.sample_missing, 0);
			assert_null(strstr(md.data, "No decode_step range past the first"));
			/* one unit per block (run 35: 9-18% a step): the bursts' schedule of the same block named */
			assert_true(!a->sampling.burst == (strstr(md.data, "trace.sample=every=64,burst=4 detaches it between "
				"bursts of 4.") != NULL));
			{
				struct lp_buf t = LP_BUF_INIT;
				assert_int_equal(lp_report_kernels_md(a, &t), 0);
				assert_null(strstr(t.data, "no sampling unit past the first ones"));
				lp_buf_release(&t);
			}
			assert_int_equal(json_integer_value(json_object_get(json_object_get(sum, "tracing"), "units_missing")), 0);
			assert_null(json_object_get(json_object_get(json_object_get(sum, "kernels"), "sampled"), "from_first_units"));
			for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
				const struct lp_kernel_row *s = krow(&a->kernels, names[i]), *e = krow(&b->kernels, names[i]);
				/* an interval from two or more clusters; none (unknown) from one */
				assert_true(want_n[k] > (a->sampling.burst ? a->sampling.burst : 1) ? s->ci_ms > 0 : s->ci_ms < 0);
				if (s->ci_ms > 0 && fabs(s->total_ms - e->total_ms) > s->ci_ms)
					fail_msg("%s %s: %.4f +- %.4f ms against %.4f exact", specs[k], names[i], s->total_ms,
						s->ci_ms, e->total_ms);
				/* one cluster of 46 steps scaled: still the right size */
				assert_true(fabs(s->total_ms - e->total_ms) < 0.4 * e->total_ms);
			}
		}
		json_decref(sum);
		lp_buf_release(&md);
		lp_analysis_release(a);
		lp_analysis_release(b);
		free(a);
		free(b);
		lp_profile_release(&sa);
	}
	lp_profile_release(&ex);
}

/* CUDA graphs under per-unit switching (one unit per block: CUPTI's kinds go off and on at every
 * unit, which gives graph kernels wrong end times, run 35): from the first graph launch on (the
 * fixture's generation 1) every unit is recorded and the SAMPLING record and the reports say so;
 * with graphs from the start every unit is, and the tables are the exact run's. Bursts, which
 * detach CUPTI, keep their sample. */
static void test_graphs_under_unit_switching(void **state)
{
	const char *ex_dir = LP_TEST_TMP "/sampling_graphs_exact", *sa_dir = LP_TEST_TMP "/sampling_graphs",
		   *g0_dir = LP_TEST_TMP "/sampling_graphs_g0", *bu_dir = LP_TEST_TMP "/sampling_graphs_bursts";
	static const char *const names[] = { "gemm_mlp", "attention_decode", "gemm_qkv", "rmsnorm", "rope",
		"argmax_between_steps" };
	struct stage_list *st = calloc(1, sizeof(*st));
	struct lp_profile ex, sa;
	struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct lp_buf md = LP_BUF_INIT;
	json_t *sum;
	size_t i;
	(void)state;
	lp_test_trace_fixture(ex_dir, "off", LP_TEST_TMP "/sampling_graphs_exact.txt");
	setenv("LP_FIXTURE_GRAPHS", "1", 1);
	lp_test_trace_fixture(sa_dir, "every=8,first=2,seed=7", LP_TEST_TMP "/sampling_graphs.txt");
	lp_test_trace_fixture(bu_dir, "every=8,burst=4,first=2,seed=7", LP_TEST_TMP "/sampling_graphs_bursts.txt");
	setenv("LP_FIXTURE_GRAPHS", "0", 1);
	lp_test_trace_fixture(g0_dir, "every=8,first=2,seed=7", LP_TEST_TMP "/sampling_graphs_g0.txt");
	unsetenv("LP_FIXTURE_GRAPHS");
	read_stages(sa_dir, st);
	assert_true(st->sampling.flags & LP_TRACE_SAMPLING_F_GRAPHS_ALL);
	assert_int_equal(st->n, 144);
	for (i = 48; i < st->n; i++) /* generation 0 sampled, 1 and 2 whole */
		assert_int_equal(st->r[i].sample, LP_TRACE_STAGE_RECORDED);
	assert_true(st->sampling.units_recorded >= 96 + 2 + 5 && st->sampling.units_recorded < 96 + 48);
	read_stages(bu_dir, st);
	assert_false(st->sampling.flags & LP_TRACE_SAMPLING_F_GRAPHS_ALL);
	assert_true(st->sampling.units_recorded < 96);
	load(ex_dir, &ex);
	load(sa_dir, &sa);
	analyze_both(&sa, &ex, a, b);
	assert_true(a->sampling.graphs_all);
	assert_int_equal(lp_tracing_mode_text(a, &md), 0);
	assert_non_null(strstr(md.data, "CUDA graphs were launched while CUPTI's kinds were switched per decode_step range"));
	sum = summary_of(a);
	assert_true(json_is_true(json_object_get(json_object_get(sum, "tracing"), "graphs_all")));
	json_decref(sum);
	sum = summary_of(b);
	assert_true(json_is_null(json_object_get(json_object_get(sum, "tracing"), "graphs_all")));
	json_decref(sum);
	lp_buf_release(&md);
	lp_analysis_release(a);
	memset(a, 0, sizeof(*a));
	lp_profile_release(&sa);
	/* graphs from the first generation on: every unit recorded, the exact run's totals */
	load(g0_dir, &sa);
	{
		struct lp_analysis_input in;
		struct lp_err err = LP_ERR_INIT;
		memset(&in, 0, sizeof(in));
		in.profile = &sa;
		assert_int_equal(lp_analyze(&in, a, &err), 0);
	}
	assert_int_equal(sa.processes[0].sampling.units_recorded, 144);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct lp_kernel_row *s = krow(&a->kernels, names[i]), *e = krow(&b->kernels, names[i]);
		assert_true(fabs(s->total_ms - e->total_ms) < 1e-9 * e->total_ms);
		assert_int_equal(s->calls, e->calls);
	}
	release_all(a, b, st, &ex, &sa);
}

/* A kernel the exact prefill runs too (rmsnorm, LP_FIXTURE_PREFILL_SHARED): scaling its row to
 * every decode step leaves its prefill share as recorded, so the prefill's waterfall is the exact
 * run's (run 36 on the H200: the row's busy time per stage scaled with its total, and the prefill's
 * kernel items added up to 30 ms of a 3.9 ms busy prefill, "busy time outside the kernels' shares"
 * -26 ms). */
static void test_prefill_shared_kernel(void **state)
{
	const char *ex_dir = LP_TEST_TMP "/sampling_shared_exact", *sa_dir = LP_TEST_TMP "/sampling_shared";
	struct lp_profile ex, sa;
	struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	const struct lp_kernel_row *rs, *re;
	const struct lp_waterfall *ws, *we;
	size_t i, k;
	(void)state;
	setenv("LP_FIXTURE_PREFILL_SHARED", "1", 1);
	lp_test_trace_fixture(ex_dir, "off", NULL);
	lp_test_trace_fixture(sa_dir, "every=16,burst=4,first=2,seed=3", NULL);
	unsetenv("LP_FIXTURE_PREFILL_SHARED");
	load(ex_dir, &ex);
	load(sa_dir, &sa);
	analyze_both(&sa, &ex, a, b);
	rs = krow(&a->kernels, "rmsnorm");
	re = krow(&b->kernels, "rmsnorm");
	assert_true(rs->sampled && re->stage_ms[0] > 0);
	assert_true(fabs(rs->stage_ms[0] - re->stage_ms[0]) < 1e-9 * re->stage_ms[0]);
	assert_true(fabs(rs->stage_busy_ms[0] - re->stage_busy_ms[0]) < 1e-9 * re->stage_busy_ms[0]);
	/* the decode share scaled like the decode time, within the row's interval */
	assert_true(fabs(rs->stage_busy_ms[1] - re->stage_busy_ms[1]) <= rs->ci_ms);
	assert_true(fabs(rs->busy_ms - (rs->stage_busy_ms[0] + rs->stage_busy_ms[1] + rs->stage_busy_ms[2])) <
		1e-9 * rs->busy_ms);
	for (k = 0; k < a->kernels.n_rows; k++) {
		const struct lp_kernel_row *r = &a->kernels.rows[k];
		assert_true(fabs(r->stage_busy_ms[0] - krow(&b->kernels, r->name)->stage_busy_ms[0]) < 1e-6);
	}
	{
		/* kernels.md: its prefill part exact (no ~), its decode part scaled (~) */
		struct lp_buf t = LP_BUF_INIT;
		char want[96];
		assert_int_equal(lp_report_kernels_md(a, &t), 0);
		snprintf(want, sizeof(want), " | %.3f | ~%.3f | %.3f | ", rs->stage_ms[0], rs->stage_ms[1], rs->stage_ms[2]);
		assert_non_null(strstr(strstr(t.data, "| rmsnorm |"), want));
		lp_buf_release(&t);
	}
	ws = &a->waterfall[0];
	we = &b->waterfall[0];
	assert_true(ws->valid && we->valid);
	assert_int_equal(ws->n_items, we->n_items);
	assert_true(fabs(ws->busy_ms - we->busy_ms) < 1e-9);
	for (i = 0; i < ws->n_items; i++) {
		assert_int_equal(ws->items[i].kind, we->items[i].kind);
		if (ws->items[i].kind == LP_WF_IDLE)
			continue; /* latency - busy: the fixture's prefill latency is host time, run to run */
		if (fabs(ws->items[i].ms - we->items[i].ms) > 1e-6)
			fail_msg("prefill item '%s': %.6f ms sampled, %.6f exact", ws->items[i].label, ws->items[i].ms,
				we->items[i].ms);
		assert_true(ws->items[i].kind != LP_WF_OVERLAP || fabs(ws->items[i].ms) < 1e-6);
	}
	/* the decode's kernel shares add up to its scaled busy time: no item for what they leave out
	 * (a sampled stage's busy time is scaled in whole nanoseconds: 5e-9 ms was an item) */
	for (i = 0; i < a->waterfall[1].n_items; i++)
		assert_int_not_equal(a->waterfall[1].items[i].kind, LP_WF_OVERLAP);
	release_all(a, b, NULL, &ex, &sa);
}

/* The settled end (the default since run 36; LLMPROF_TRACE_SETTLE_END=0 turns it off): the
 * attach asked ahead of a generation's foreseen end is waited for at the pop of its foreseen last
 * unit (the fake: 5 ms) and that pop is marked again, so the wait is inside the last step as the program's own timing has it (every
 * step's time the program's); with it off nothing waits there. Generation 0 has no foreseen end
 * (no previous count, no planned payload in the fixture); a last unit that is recorded, or whose
 * pop attaches for a cluster past the end, has nothing asked ahead. Over eight seeds. */
static void test_settle_end(void **state)
{
	struct stage_list *st = calloc(1, sizeof(*st));
	size_t waited = 0, plain = 0;
	int on, seed;
	(void)state;
	for (seed = 1; seed <= 8; seed++) {
		for (on = 0; on < 2; on++) {
			char dir[256], out[256], spec[64];
			size_t g;
			snprintf(dir, sizeof(dir), LP_TEST_TMP "/sampling_settle_%d_%d", seed, on);
			snprintf(out, sizeof(out), LP_TEST_TMP "/sampling_settle_%d_%d.txt", seed, on);
			snprintf(spec, sizeof(spec), "every=16,burst=4,first=2,seed=%d", seed);
			if (!on) /* on by default */
				setenv("LP_FIXTURE_SETTLE", "0", 1);
			lp_test_trace_fixture(dir, spec, out);
			unsetenv("LP_FIXTURE_SETTLE");
			read_stages(dir, st);
			assert_int_equal(st->n, 144);
			steps_as_program(out, st); /* every step's time is the program's, waits included */
			for (g = 0; g < 3; g++) {
				const struct lp_trace_stage *last = &st->r[g * 48 + 47];
				assert_int_equal(last->index, 47);
				if (last->gpu_elapsed_ns >= 5000000) {
					assert_true(on && g > 0 && last->sample == LP_TRACE_STAGE_SKIPPED);
					waited++;
				} else if (on && g > 0 && last->sample == LP_TRACE_STAGE_SKIPPED) {
					plain++; /* attached at its pop for a cluster past the end */
				}
			}
		}
	}
	print_message("settle: %zu last steps waited, %zu attached at their pop\n", waited, plain);
	assert_true(waited >= 2);
	free(st);
}

/* The bursts' switches against the decode time (tracing_mode.c): 3 bursts of 4 in the measured
 * generations, 16 switches of 8.375 ms on average (an H200 light run of HF's static cache, run 35:
 * 134 ms in all): 50.25 ms, 3.9% of three 430 ms generations, get the advice with its numbers;
 * the same switches in three 3 s generations (the eager program's, 0.56%) do not. */
static void test_burst_switch_advice(void **state)
{
	struct lp_analysis *a = calloc(1, sizeof(*a));
	struct lp_stage decode;
	struct lp_buf md = LP_BUF_INIT;
	json_t *sum;
	(void)state;
	assert_non_null(a);
	memset(&decode, 0, sizeof(decode));
	decode.kind = LP_STAGE_DECODE;
	decode.n_iters = 3;
	decode.lat_ms.mean = 430;
	a->stages.stages = &decode;
	a->stages.n_stages = 1;
	a->sampling.mode = 2;
	a->sampling.why = LP_TRACE_SAMPLE_WHY_AUTO_HIGH; /* run 35's default run */
	a->sampling.burst = 4;
	a->sampling.every = 128;
	a->sampling.first = 2;
	a->sampling.toggles = 16;
	a->sampling.toggle_ns = 134000000;
	a->kernels.sampled = 1;
	a->kernels.sample_n = 12;
	assert_int_equal(lp_tracing_mode_text(a, &md), 0);
	assert_non_null(strstr(md.data, "The bursts' attaches and detaches took about 50 ms of host time (3 bursts "
		"in the measured generations, 2 switches each at this run's mean), 3.9% of the decode time"));
	assert_non_null(strstr(md.data, "trace.sample=auto,every=512,burst=4 records a burst in a quarter as many blocks "
		"(about 2.9% of the decode time less"));
	sum = lp_tracing_mode_json(a);
	assert_true(fabs(json_real_value(json_object_get(sum, "burst_switch_pct")) - 100 * 50.25 / 1290) < 1e-9);
	json_decref(sum);
	lp_buf_release(&md);
	decode.lat_ms.mean = 3000;
	assert_int_equal(lp_tracing_mode_text(a, &md), 0);
	assert_null(strstr(md.data, "every=512"));
	lp_buf_release(&md);
	a->stages.stages = NULL; /* the stage is this frame's */
	a->stages.n_stages = 0;
	free(a);
}

static size_t count_kernels(const struct lp_profile *p, const char *name)
{
	size_t i, n = 0;
	for (i = 0; i < p->n_kernels; i++)
		n += !strcmp(p->kernels[i].name, name);
	return n;
}

/* The warm-up (docs/tracer.md "The warm-up"): generation 0 inside a `warmup` range. With bursts
 * CUPTI detaches for it (held: the bursts inside it attach nothing) and attaches again at its pop:
 * none of its kernels are in the trace, yet every step still has the program's own GPU time, the
 * SAMPLING record and the reports say so, and the analysis (which leaves the warm-up out anyway)
 * scales generations 1 and 2 to what the exact run (warm-up recorded) has, each kernel within its
 * interval. trace.warmup=record keeps the warm-up's kernels; exact mode detaches for it too (run
 * 39) and then has the same tables as with them. */
static void test_warmup_detach(void **state)
{
	const char *ex_dir = LP_TEST_TMP "/sampling_wu_exact", *sa_dir = LP_TEST_TMP "/sampling_wu",
		   *rec_dir = LP_TEST_TMP "/sampling_wu_record", *exd_dir = LP_TEST_TMP "/sampling_wu_exact_detached";
	static const char *const names[] = { "gemm_mlp", "attention_decode", "gemm_qkv", "rmsnorm", "rope",
		"argmax_between_steps", "gemm_prefill" };
	struct stage_list *st = calloc(1, sizeof(*st));
	struct lp_profile ex, sa, rec, exd;
	struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b)), *d = calloc(1, sizeof(*d));
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	size_t i;
	(void)state;
	setenv("LP_FIXTURE_WARMUP", "1", 1);
	lp_test_trace_fixture(exd_dir, "off", NULL);
	lp_test_trace_fixture(sa_dir, "every=8,burst=4,first=2,seed=7", LP_TEST_TMP "/sampling_wu.txt");
	setenv("LP_FIXTURE_WARMUP", "record", 1);
	lp_test_trace_fixture(ex_dir, "off", LP_TEST_TMP "/sampling_wu_exact.txt");
	lp_test_trace_fixture(rec_dir, "every=8,burst=4,first=2,seed=7", NULL);
	unsetenv("LP_FIXTURE_WARMUP");

	read_stages(sa_dir, st);
	assert_int_equal(st->sampling.warmup, LP_TRACE_WARMUP_DETACHED);
	assert_int_equal(st->n, 144); /* the warm-up's steps too: their latencies are measured */
	steps_as_program(LP_TEST_TMP "/sampling_wu.txt", st);
	read_stages(rec_dir, st);
	assert_int_equal(st->sampling.warmup, LP_TRACE_WARMUP_RECORDED);
	read_stages(ex_dir, st);
	assert_int_equal(st->sampling.warmup, LP_TRACE_WARMUP_RECORDED);
	read_stages(exd_dir, st);
	assert_int_equal(st->sampling.warmup, LP_TRACE_WARMUP_DETACHED);
	assert_int_equal(st->n, 144);

	load(ex_dir, &ex);
	load(sa_dir, &sa);
	load(rec_dir, &rec);
	load(exd_dir, &exd);
	/* exact with the warm-up detached: none of its kernels, the measured ones all there, the same
	 * tables as the exact run that recorded its warm-up */
	assert_int_equal(count_kernels(&exd, "gemm_prefill"), 2);
	memset(&in, 0, sizeof(in));
	in.profile = &exd;
	assert_int_equal(lp_analyze(&in, d, &err), 0);
	assert_int_equal(sa.n_processes, 1);
	assert_int_equal(sa.processes[0].sampling.warmup, LP_TRACE_WARMUP_DETACHED);
	/* one prefill kernel a generation: the warm-up's is missing only where CUPTI detached */
	assert_int_equal(count_kernels(&ex, "gemm_prefill"), 3);
	assert_int_equal(count_kernels(&rec, "gemm_prefill"), 3);
	assert_int_equal(count_kernels(&sa, "gemm_prefill"), 2);
	/* and no decode kernel of generation 0 either: the warm-up's first two steps (always
	 * recorded) and its bursts are in rec, not in sa */
	assert_true(count_kernels(&rec, "gemm_mlp") >= count_kernels(&sa, "gemm_mlp") + 2 + 4 * 5);

	analyze_both(&sa, &ex, a, b);
	assert_false(d->kernels.sampled);
	assert_int_equal(d->kernels.n_rows, b->kernels.n_rows);
	for (i = 0; i < b->kernels.n_rows; i++) {
		const struct lp_kernel_row *e = &b->kernels.rows[i], *x = krow(&d->kernels, e->name);
		assert_non_null(x);
		assert_int_equal(x->calls, e->calls);
		assert_float_equal(x->total_ms, e->total_ms, 1e-9 * e->total_ms);
	}
	assert_int_equal(a->kernels.sample_N, 92); /* generations 1 and 2, past their first 2 steps */
	/* the Tracing mode section's table: the warm-up's units are none of its strata */
	assert_int_equal(a->sampled.units_exact, 4);
	assert_int_equal(a->sampled.units_sampled_stratum, 92);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct lp_kernel_row *s = krow(&a->kernels, names[i]), *e = krow(&b->kernels, names[i]);
		if (fabs(s->total_ms - e->total_ms) > s->ci_ms + 1e-9 * e->total_ms)
			fail_msg("%s: %.4f +- %.4f ms against %.4f exact", s->name, s->total_ms, s->ci_ms, e->total_ms);
		assert_int_equal(s->calls, e->calls);
		assert_int_equal(s->calls, i == 6 ? 2 : 96);
	}
	{
		json_t *sum = summary_of(a);
		assert_string_equal(json_string_value(json_object_get(json_object_get(sum, "tracing"), "warmup")), "detached");
		json_decref(sum);
		sum = summary_of(b);
		assert_string_equal(json_string_value(json_object_get(json_object_get(sum, "tracing"), "warmup")), "recorded");
		json_decref(sum);
	}
	{
		struct lp_buf md = LP_BUF_INIT;
		assert_int_equal(lp_tracing_mode_text(a, &md), 0);
		assert_non_null(strstr(md.data, "CUPTI was detached inside the program's warm-up range"));
		/* kernels loaded without CUPTI run as without a profiler (run 39) */
		assert_non_null(strstr(md.data, "the program loaded them without CUPTI, so they run as they do without a "
			"profiler (a kernel first launched with CUPTI attached can run up to 5% slower for the rest of the "
			"process; trace.warmup=record records the warm-up anyway)."));
		assert_null(strstr(md.data, "run.auto_warmup"));
		assert_null(strstr(md.data, "CUDA graphs"));
		lp_buf_release(&md);
		/* graphs captured inside the warm-up would lose their capture-time ranges: said so */
		a->graph_uncaptured = 3;
		assert_int_equal(lp_tracing_mode_text(a, &md), 0);
		assert_non_null(strstr(md.data, " 3 kernels of CUDA graphs have no capture record (graphs captured "
			"inside the warm-up"));
		a->graph_uncaptured = 0;
		lp_buf_release(&md);
		assert_int_equal(lp_tracing_mode_text(b, &md), 0);
		assert_null(strstr(md.data, "warm-up range"));
		lp_buf_release(&md);
		/* an exact run detaches for the warm-up too (run 39), and says so */
		b->sampling.warmup = LP_TRACE_WARMUP_DETACHED;
		assert_int_equal(lp_tracing_mode_text(b, &md), 0);
		assert_non_null(strstr(md.data, "Exact: every launch traced"));
		assert_non_null(strstr(md.data, ". CUPTI was detached inside the program's warm-up range"));
		b->sampling.warmup = LP_TRACE_WARMUP_RECORDED;
		lp_buf_release(&md);
	}
	release_all(a, b, st, &ex, &sa);
	lp_profile_release(&rec);
	lp_analysis_release(d);
	free(d);
	lp_profile_release(&exd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_fixture),
		cmocka_unit_test(test_warmup_detach),
		cmocka_unit_test(test_auto_burst_steps),
		cmocka_unit_test(test_auto_long_exact_phase),
		cmocka_unit_test(test_auto_after_detached_warmup),
		cmocka_unit_test(test_auto_short_generations),
		cmocka_unit_test(test_auto_gen_counts_launches),
		cmocka_unit_test(test_auto_no_rate_text),
		cmocka_unit_test(test_burst_switch_advice),
		cmocka_unit_test(test_blocks_longer_than_generations),
		cmocka_unit_test(test_graphs_under_unit_switching),
		cmocka_unit_test(test_settle_end),
		cmocka_unit_test(test_prefill_shared_kernel),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
