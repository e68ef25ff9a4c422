/* test_latency.c: the clock the user sees (src/analyze/latency.c, stages.h): stage latency when
 * the GPU work ends after the range pops (CUDA graph replay, asynchronous launching), the wait for
 * work queued before the push, copies that end last, per-step latencies and percentiles, the bound
 * verdict; kernel overlap and busy shares (kernels.c); the workload's own timings and the
 * self-check (parse/workload_timings.c, analysis.c). Traces are built in memory with known times. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/stages.h"
#include "parse/workload_timings.h"

#define US 1000ull
#define MS 1000000ull

static int32_t R(struct lp_profile *p, int32_t parent, const char *name, uint64_t s, uint64_t e)
{
	return lp_test_range(p, parent, "LLM", name, s, e);
}

/* A kernel launched at `launch` inside `range`, running [s, e] on stream 7 of device 0. */
static void K(struct lp_profile *p, int32_t range, const char *name, uint64_t launch, uint64_t s, uint64_t e)
{
	struct lp_kernel *k = lp_test_kernel(p, range, name, s, e);
	k->stream = 7;
	k->launch_ns = launch;
}

static int near(double a, double b)
{
	return fabs(a - b) < 1e-9 * (fabs(b) + 1);
}

/* Asynchronous launching, as a CUDA-graph decode does: every range pops long before its GPU work
 * ends. Iteration at t: prefill host [t, t+1 ms], its kernel launched at t+0.5 runs [t+1, t+12].
 * decode_all host [t+1.1, t+1.5] with two steps, launched at t+1.2 / t+1.4 (the graph), running
 * [t+12, t+17] and [t+17, t+22] (queued behind prefill). A CUDA event at the decode push would fire
 * at t+12: decode latency 10 ms, steps 5 ms each; prefill latency 12 ms. */
static void build_async(struct lp_profile *p, int iters)
{
	int i;
	for (i = 0; i < iters; i++) {
		uint64_t t = (uint64_t)(100 * i) * MS;
		int32_t pf = R(p, -1, "prefill", t, t + 1 * MS), dec, s0, s1;
		K(p, pf, "gemm", t + 500 * US, t + 1 * MS, t + 12 * MS);
		dec = R(p, -1, "decode_all", t + 1100 * US, t + 1500 * US);
		s0 = R(p, dec, "decode_step", t + 1150 * US, t + 1250 * US);
		s1 = R(p, dec, "decode_step", t + 1350 * US, t + 1450 * US);
		K(p, s0, "gemv", t + 1200 * US, t + 12 * MS, t + 17 * MS);
		K(p, s1, "gemv", t + 1400 * US, t + 17 * MS, t + 22 * MS);
	}
}

static void test_latency_outlasts_the_range(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_stage *pf, *dec;
	(void)state;
	lp_profile_init(&p, "async");
	build_async(&p, 3);
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	pf = lp_stages_find(&st, LP_STAGE_PREFILL);
	dec = lp_stages_find(&st, LP_STAGE_DECODE);
	assert_non_null(pf);
	assert_non_null(dec);
	assert_int_equal(pf->n_iters, 3);
	/* host time is only the launch time; latency runs to the end of the GPU work */
	assert_true(near(pf->host_ms.mean, 1.0));
	assert_true(near(pf->lat_ms.mean, 12.0));
	assert_true(near(dec->host_ms.mean, 0.4));
	assert_true(near(dec->lat_ms.mean, 10.0));
	assert_int_equal(dec->iters[0].wait_ns, 12 * MS - 1100 * US);
	assert_int_equal(dec->iters[0].gpu_end_ns, 22 * MS);
	/* per-step latencies: start at the previous step's end (queued work), 5 ms each */
	assert_int_equal(dec->n_step_lat, 6);
	assert_true(near(dec->step_ms.mean, 5.0) && near(dec->step_p50, 5.0) && near(dec->step_p99, 5.0));
	/* the GPU is busy the whole latency: GPU-bound, even though the host range is tiny */
	assert_string_equal(dec->bound, "GPU-bound");
	assert_true(near(dec->idle_frac, 0.0));
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

/* Without launch times (launch_ns 0: unknown) nothing counts as queued: latency from the push. */
static void test_unknown_launch_times_start_at_the_push(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	size_t i;
	(void)state;
	lp_profile_init(&p, "nolaunch");
	build_async(&p, 1);
	for (i = 0; i < p.n_kernels; i++)
		p.kernels[i].launch_ns = 0;
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	assert_true(near(lp_stages_find(&st, LP_STAGE_DECODE)->lat_ms.mean, 22.0 - 1.1));
	assert_int_equal(lp_stages_find(&st, LP_STAGE_DECODE)->iters[0].wait_ns, 0);
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

/* A device-to-host copy (the sampled token) that ends after the last kernel extends the latency;
 * a range whose GPU work ends before its pop keeps its host time. */
static void test_copies_and_synchronous_ranges(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	struct lp_copy *c;
	int32_t pf, dec;
	(void)state;
	lp_profile_init(&p, "copies");
	pf = R(&p, -1, "prefill", 0, 10 * MS);
	K(&p, pf, "gemm", 1 * MS, 2 * MS, 8 * MS);        /* synchronous: done before the pop */
	dec = R(&p, -1, "decode_all", 20 * MS, 21 * MS);
	K(&p, dec, "gemv", 20 * MS + 100 * US, 21 * MS, 24 * MS);
	c = lp_profile_add_copy(&p);
	assert_non_null(c);
	c->kind = LP_COPY_DTOH;
	c->pid = 1;
	c->stream = 7;
	c->launch_ns = 20 * MS + 200 * US;
	c->start_ns = 24 * MS;
	c->end_ns = 25 * MS;
	c->range = dec;
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	assert_true(near(lp_stages_find(&st, LP_STAGE_PREFILL)->lat_ms.mean, 10.0));
	assert_true(near(lp_stages_find(&st, LP_STAGE_DECODE)->lat_ms.mean, 5.0));
	/* decode: GPU busy 3 ms of 5 (idle 40%), host 1 ms: the GPU waits, but not on launches */
	assert_string_equal(lp_stages_find(&st, LP_STAGE_DECODE)->bound, "GPU idle (waits)");
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

/* 100 decode steps with latencies 1..100 ms: nearest-rank p50 = 50, p90 = 90, p99 = 99, max 100;
 * and a launch-bound decode: host busy all the latency, GPU busy a little of each step. */
static void test_step_percentiles_and_launch_bound(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_stage *dec;
	uint64_t t = 0;
	int32_t d;
	int i;
	(void)state;
	lp_profile_init(&p, "steps");
	d = R(&p, -1, "decode_all", 0, 5050 * MS);
	for (i = 1; i <= 100; i++) {
		/* step i: host [t, t + i ms]; a 10 us kernel launched at its start, running at its end */
		int32_t s = R(&p, d, "decode_step", t, t + (uint64_t)i * MS);
		K(&p, s, "gemv", t + 1 * US, t + (uint64_t)i * MS - 10 * US, t + (uint64_t)i * MS);
		t += (uint64_t)i * MS;
	}
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	dec = lp_stages_find(&st, LP_STAGE_DECODE);
	assert_int_equal(dec->n_step_lat, 100);
	assert_true(near(dec->step_p50, 50.0));
	assert_true(near(dec->step_p90, 90.0));
	assert_true(near(dec->step_p99, 99.0));
	assert_true(near(dec->step_ms.max, 100.0) && near(dec->step_ms.min, 1.0));
	assert_true(near(dec->step_ms.mean, 50.5));
	assert_string_equal(dec->bound, "CPU/launch-bound");
	assert_true(dec->idle_frac > 0.99);
	lp_stage_set_release(&st);
	lp_profile_release(&p);
	{
		double x[1] = { 7 };
		assert_true(near(lp_percentile_sorted(x, 1, 99), 7));
		assert_true(isnan(lp_percentile_sorted(x, 0, 50)));
	}
}

/* Two kernels overlapping (PDL / streams): [0, 4] and [2, 6] ms, plus a lone one [10, 11]. Summed
 * durations 9 ms, busy 7 ms; busy shares: a = 2 + 1, b = 1 + 2, c = 1; overlap 9/7. */
static void test_overlap_and_busy_shares(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_stage *dec;
	double sum = 0;
	size_t i;
	int32_t d;
	(void)state;
	lp_profile_init(&p, "overlap");
	d = R(&p, -1, "decode_all", 0, 12 * MS);
	K(&p, d, "ka", 1, 0, 4 * MS);
	K(&p, d, "kb", 2, 2 * MS, 6 * MS);
	K(&p, d, "kc", 3, 10 * MS, 11 * MS);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	dec = lp_stages_find(&a.stages, LP_STAGE_DECODE);
	assert_true(near(dec->kernel_ms.mean, 9.0));
	assert_true(near(dec->gpu_ms.mean, 7.0));
	assert_true(near(dec->overlap, 9.0 / 7.0));
	assert_true(near(a.kernels.total_ms, 9.0));
	assert_true(near(a.kernels.busy_ms, 7.0));
	for (i = 0; i < a.kernels.n_rows; i++) {
		const struct lp_kernel_row *r = &a.kernels.rows[i];
		double want = !strcmp(r->name, "kc") ? 1.0 : 3.0;
		assert_true(near(r->busy_ms, want));
		assert_true(near(r->share, want / 7.0));
		sum += r->share;
	}
	assert_true(near(sum, 1.0));
	for (i = 0; i < a.n_advice; i++)
		if (!strcmp(a.advice[i].rule, "overlap-decode"))
			break;
	assert_true(i < a.n_advice);
	assert_non_null(strstr(a.advice[i].text, "1.29x the GPU busy time"));
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

static void test_workload_timings(void **state)
{
	static const char text[] =
		"loading model\n"
		"{\"iter\": 0, \"prefill_ms\": 10.0, \"decode_ms\": 100.0, \"tokens_per_s\": 80}\n"
		"{\"iter\": 1, \"prefill_ms\": 12.0, \"decode_ms\": 120.0, \"tokens_per_s\": \"fast\"}\n"
		"{not json}\n";
	static const char with_summary[] =
		"{\"iter\": 0, \"prefill_ms\": 10.0}\n"
		"  {\"summary\": true, \"prefill_ms\": 11.5, \"decode_ms\": -3, \"decode_ms_per_step\": 1.25, \"iters\": 3}";
	struct lp_own_timings t;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	lp_workload_timings_parse(text, sizeof(text) - 1, &t);
	assert_true(t.valid);
	assert_true(near(t.prefill_ms, 11.0) && near(t.decode_ms, 110.0));
	assert_true(near(t.tokens_per_s, 80.0));     /* the string value is ignored, not averaged */
	assert_true(t.decode_ms_per_step < 0);
	assert_int_equal(t.iters, 2);
	lp_workload_timings_parse(with_summary, sizeof(with_summary) - 1, &t);
	assert_true(near(t.prefill_ms, 11.5) && near(t.decode_ms_per_step, 1.25));
	assert_true(t.decode_ms < 0);                /* negative: unknown */
	assert_int_equal(t.iters, 3);
	lp_workload_timings_parse("hello\n", 6, &t);
	assert_false(t.valid);
	assert_int_equal(lp_workload_timings_read("/nonexistent/workload.stdout", &t, NULL, NULL, &err), 0);
	assert_false(t.valid);
	{
		/* per step: the iteration lines' step_ms in order; the summary's and non-iteration
		 * lines' ignored; one bad value makes the list unknown */
		static const char steps[] =
			"{\"iter\": 0, \"step_ms\": [1.5, 2]}\n"
			"{\"summary\": true, \"step_ms\": [9]}\n"
			"{\"step_ms\": [8]}\n"
			"{\"iter\": 1, \"step_ms\": [2.5]}\n";
		static const char bad[] = "{\"iter\": 0, \"step_ms\": [1.5, -2]}\n{\"iter\": 1, \"step_ms\": [2.5]}\n";
		double *v;
		size_t n;
		assert_int_equal(lp_workload_steps_parse(steps, sizeof(steps) - 1, &v, &n), 0);
		assert_int_equal(n, 3);
		assert_true(v[0] == 1.5 && v[1] == 2.0 && v[2] == 2.5);
		free(v);
		assert_int_equal(lp_workload_steps_parse(bad, sizeof(bad) - 1, &v, &n), 0);
		assert_true(!v && !n);
		assert_int_equal(lp_workload_steps_parse(text, sizeof(text) - 1, &v, &n), 0);
		assert_true(!v && !n);
		assert_int_equal(lp_workload_timings_read("/nonexistent/workload.stdout", &t, &v, &n, &err), 0);
		assert_true(!v && !n);
	}
}

/* The self-check: llmprof's TTFT / decode numbers beside the workload's own, flagged past 5%. */
static void test_self_check(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	size_t i;
	int found = 0;
	(void)state;
	lp_profile_init(&p, "async");
	build_async(&p, 2);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	in.batch = 1;
	in.prompt_len = 8;
	in.own.valid = 1;
	in.own.prefill_ms = 12.1;           /* llmprof: 12.0, -0.8% */
	in.own.decode_ms = 10.0;
	in.own.decode_ms_per_step = 5.0;
	in.own.tokens_per_s = 150.0;        /* llmprof: 2 tokens / 10 ms = 200, +33% */
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	assert_true(near(a.ttft_ms.value, 12.0));
	assert_true(near(a.decode_step_ms.value, 5.0));
	assert_true(near(a.decode_tokens_per_s.value, 200.0));
	assert_int_equal(a.n_checks, 4);
	assert_true(near(a.checks[0].diff, (12.0 - 12.1) / 12.1));
	assert_true(a.check_failed);
	for (i = 0; i < a.n_advice; i++)
		if (!strcmp(a.advice[i].rule, "self-check")) {
			assert_non_null(strstr(a.advice[i].text, "decode tokens/s is 200.000"));
			found++;
		}
	assert_int_equal(found, 1);
	lp_analysis_release(&a);
	in.own.tokens_per_s = 199.0;
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	assert_false(a.check_failed);
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

/* A decode step whose pop paused the program (a burst's detach, 3 ms after the pop): the tracer
 * marked its end again after the pause (docs/tracer.md "Switches at a pop"), and the step's
 * latency runs to that mark although its kernel ended before the pop, as the program's own events
 * see it; every step then agrees with the workload's step_ms (the step check, analysis.h). Host
 * times: s0 [1, 4], s1 [4, 7] (its GPU end mark at 10), s2 [10, 13]; kernels inside each. */
static void test_step_check_and_paused_pop(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_stage *dec;
	const double own[] = { 3.0, 6.0, 3.03 }, short_own[] = { 3.0, 6.0 };
	int32_t pf, da, s[3];
	int k;
	(void)state;
	lp_profile_init(&p, "paused");
	pf = R(&p, -1, "prefill", 0, 1 * MS);
	K(&p, pf, "gemm", 100 * US, 200 * US, 900 * US);
	da = R(&p, -1, "decode_all", 1 * MS, 13 * MS);
	for (k = 0; k < 3; k++) {
		uint64_t t0 = (uint64_t)(k == 2 ? 10 : 1 + 3 * k) * MS;
		s[k] = R(&p, da, "decode_step", t0, t0 + 3 * MS);
		K(&p, s[k], "gemv", t0 + 500 * US, t0 + 1 * MS, t0 + 2500 * US);
	}
	p.ranges[s[1]].gpu_status = 1;
	p.ranges[s[1]].gpu_start_ns = 4 * MS;
	p.ranges[s[1]].gpu_end_ns = 10 * MS;
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	in.own_steps = own;
	in.n_own_steps = 3;
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	dec = lp_stages_find(&a.stages, LP_STAGE_DECODE);
	assert_non_null(dec);
	assert_int_equal(dec->n_step_lat, 3);
	assert_true(near(dec->step_lat_ms[0], 3.0) && near(dec->step_lat_ms[1], 6.0) && near(dec->step_lat_ms[2], 3.0));
	assert_true(a.step_check.done);
	assert_int_equal(a.step_check.within, 3);
	assert_int_equal(a.step_check.max_at, 2);
	assert_true(fabs(a.step_check.max_abs_pct - 0.03 / 3.03 * 100) < 1e-9);
	assert_true(near(a.step_check.median_abs_pct, 0.0));
	assert_true(near(a.step_check.median_gap_ms, 0.0)); /* gaps 0, 0, +0.03 */
	assert_int_equal(a.step_check.stage, LP_STAGE_DECODE);
	assert_false(a.check_failed);
	lp_analysis_release(&a);
	/* the workload's steps 0.1 ms longer each but the second (a program timing host work around
	 * each step's range): the signed median gap says by how much llmprof's are lower */
	{
		const double longer[] = { 3.1, 6.0, 3.13 };
		in.own_steps = longer;
		assert_int_equal(lp_analyze(&in, &a, &err), 0);
		assert_true(fabs(a.step_check.median_gap_ms - 0.1) < 1e-9);
		in.own_steps = own;
	}
	lp_analysis_release(&a);
	/* a different count: said, not compared */
	in.own_steps = short_own;
	in.n_own_steps = 2;
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	assert_false(a.step_check.done);
	assert_true(a.step_check.ours == 3 && a.step_check.theirs == 2);
	assert_non_null(strstr(a.step_check.why_not, "different numbers"));
	lp_analysis_release(&a);
	lp_profile_release(&p);
}

/* A recorded step with the tracer's marks (STAGE records): the GPU reached the push 50 us after
 * the host pushed (an idle GPU, a compiled step's first launch), as a CUDA event the program
 * recorded there says: the latency starts at the mark, not at the host's push, and ends at the
 * later of the kernels' end and the pop mark. Host [1, 3] ms, kernel [1.2, 2.5], marks 1.05 and
 * 3.02: 1.97 ms. A mark after the pop mark (a broken record) is not used. A prefill starts at its
 * mark too (host [0, 0.5] ms, mark 0.3, kernel to 0.4: 0.2 ms), unless its push attached CUPTI
 * before the mark (STAGE flag push_attached): that pause is inside the time of a program that
 * records its start event before the push, so it keeps the host's push: 0.5 ms. */
static void test_push_mark_starts_a_recorded_step(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_stage *dec;
	int32_t pf, da, s0, s1;
	(void)state;
	lp_profile_init(&p, "marks");
	pf = R(&p, -1, "prefill", 0, 500 * US);
	K(&p, pf, "gemm", 100 * US, 200 * US, 400 * US);
	p.ranges[pf].gpu_status = 1;
	p.ranges[pf].gpu_start_ns = 300 * US;
	p.ranges[pf].gpu_end_ns = 450 * US;
	da = R(&p, -1, "decode_all", 900 * US, 9 * MS);
	s0 = R(&p, da, "decode_step", 1 * MS, 3 * MS);
	K(&p, s0, "gemv", 1100 * US, 1200 * US, 2500 * US);
	p.ranges[s0].gpu_status = 1;
	p.ranges[s0].gpu_start_ns = 1050 * US;
	p.ranges[s0].gpu_end_ns = 3020 * US;
	s1 = R(&p, da, "decode_step", 5 * MS, 7 * MS);
	K(&p, s1, "gemv", 5100 * US, 5200 * US, 6500 * US);
	p.ranges[s1].gpu_status = 1;
	p.ranges[s1].gpu_start_ns = 7500 * US;
	p.ranges[s1].gpu_end_ns = 7100 * US;
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	dec = lp_stages_find(&st, LP_STAGE_DECODE);
	assert_non_null(dec);
	assert_int_equal(dec->n_step_lat, 2);
	assert_true(near(dec->step_lat_ms[0], 1.97));
	assert_true(near(dec->step_lat_ms[1], 2.1));
	assert_true(near(lp_stages_find(&st, LP_STAGE_PREFILL)->lat_ms.mean, 0.2));
	lp_stage_set_release(&st);
	p.ranges[pf].push_attached = 1;
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	assert_true(near(lp_stages_find(&st, LP_STAGE_PREFILL)->lat_ms.mean, 0.5));
	assert_true(near(lp_stages_find(&st, LP_STAGE_DECODE)->step_lat_ms[0], 1.97));
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

/* A hand-written loop under the Python shim (tokens.loop_decodes): its decode_all closes at the
 * next prefill or at exit, here 2 s after its last step. Iteration at t: prefill [t, t+1 ms]
 * (kernel [t+0.5, t+1]), two synchronous steps [t+2, t+3] and [t+3, t+4] (kernels ending at
 * t+2.9 and t+3.9), decode_all [t+1.5, t+2000]. Without the rule: 1998.5 ms; with it: ended at the
 * last step's pop, 2.5 ms (host and latency); prefill and the steps unchanged. */
static void test_loop_decode_ends_at_its_last_step(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_stage_rules rules;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_stage *dec, *pf;
	int i, on;
	(void)state;
	lp_profile_init(&p, "loop");
	for (i = 0; i < 2; i++) {
		uint64_t t = (uint64_t)(3000 * i) * MS;
		int32_t pr = R(&p, -1, "prefill", t, t + 1 * MS), dec_r, s0, s1;
		K(&p, pr, "gemm", t + 100 * US, t + 500 * US, t + 1 * MS);
		dec_r = R(&p, -1, "decode_all", t + 1500 * US, t + 2000 * MS);
		s0 = R(&p, dec_r, "decode_step", t + 2 * MS, t + 3 * MS);
		s1 = R(&p, dec_r, "decode_step", t + 3 * MS, t + 4 * MS);
		K(&p, s0, "gemv", t + 2100 * US, t + 2200 * US, t + 2900 * US);
		K(&p, s1, "gemv", t + 3100 * US, t + 3200 * US, t + 3900 * US);
	}
	for (on = 0; on <= 1; on++) {
		memset(&rules, 0, sizeof(rules));
		rules.skip_first = 0;
		rules.decode_to_last_step = on;
		assert_int_equal(lp_stages_compute_ex(&p, &rules, &st, &err), 0);
		dec = lp_stages_find(&st, LP_STAGE_DECODE);
		pf = lp_stages_find(&st, LP_STAGE_PREFILL);
		assert_non_null(dec);
		assert_int_equal(dec->n_iters, 2);
		assert_true(near(dec->lat_ms.mean, on ? 2.5 : 1998.5));
		assert_true(near(dec->host_ms.mean, on ? 2.5 : 1998.5));
		assert_int_equal(st.decode_ends_moved, on ? 2 : 0);
		assert_true(near(pf->lat_ms.mean, 1.0));
		assert_true(near(dec->step_ms.mean, 1.0));
		lp_stage_set_release(&st);
	}
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_latency_outlasts_the_range),
		cmocka_unit_test(test_unknown_launch_times_start_at_the_push),
		cmocka_unit_test(test_copies_and_synchronous_ranges),
		cmocka_unit_test(test_step_percentiles_and_launch_bound),
		cmocka_unit_test(test_overlap_and_busy_shares),
		cmocka_unit_test(test_workload_timings),
		cmocka_unit_test(test_self_check),
		cmocka_unit_test(test_step_check_and_paused_pop),
		cmocka_unit_test(test_push_mark_starts_a_recorded_step),
		cmocka_unit_test(test_loop_decode_ends_at_its_last_step),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
