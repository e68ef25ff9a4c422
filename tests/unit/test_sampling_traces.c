/* test_sampling_traces.c: sampled traces end to end (issue 24), on fixture traces written by the
 * tracer's own writer (build/tests/lp_trace_fixture: NVTX half and sample.c for real, CUPTI and
 * the GPU faked) in exact and in sampled mode from the same deterministic program, and on a real
 * H100 sampled trace (tests/fixtures/trace/h100_hf_tiny_sampled): the units' strata replayed from
 * the range tree equal the tracer's STAGE flags, every STAGE GPU time equals the program's, the
 * exact table is the raw sums, the sampled table's estimates hold the exact totals within their
 * intervals, and the derived figures (timeline, waterfall, Perfetto, summary.json, stage notes)
 * mark or leave out the unrecorded steps. The statistics themselves: test_sampling.c; bursts (CUPTI
 * detached between clusters): test_sampling_bursts.c; the shared fixture helpers: sampling_traces.h. */
#include "testutil.h"

#include <math.h>
#include <string.h>
#include <zlib.h>

#include "analyze/analysis.h"
#include "analyze/sampling.h"
#include "report/figures.h"
#include "report/html.h"
#include "report/perfetto.h"
#include "report/reports.h"
#include "report/sections.h"
#include "report/tracing_mode.h"
#include "core/fs.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"

#include "sampling_traces.h"

static const struct lp_tsample_row *row(const struct lp_tsample_table *t, const char *key)
{
	size_t i;
	for (i = 0; i < t->n_rows; i++)
		if (!strcmp(t->rows[i].key, key))
			return &t->rows[i];
	fail_msg("no row '%s'", key);
	return NULL;
}

static const struct lp_op_row *orow(const struct lp_op_table *t, const char *name)
{
	size_t i;
	for (i = 0; i < t->n_rows; i++)
		if (!strcmp(t->rows[i].name, name))
			return &t->rows[i];
	fail_msg("no operator row '%s'", name);
	return NULL;
}

/* The analysis's own tables (Top Kernels, Operators, summary.json) of the sampled trace `a`,
 * scaled to every unit, against the exact trace `b` of the same program. */
static void scaled_tables(const struct lp_analysis *a, const struct lp_analysis *b, uint32_t rec)
{
	static const char *const unit_kernels[] = { "gemm_mlp", "attention_decode", "gemm_qkv", "rmsnorm", "rope" };
	static const char *const ops[] = { "mlp", "attention" };
	struct lp_buf out = LP_BUF_INIT;
	size_t i;
	json_t *sum;
	char of[64], html_of[64], html_mode[96];
	snprintf(of, sizeof(of), "(%u of 138 units) |", rec);
	snprintf(html_of, sizeof(html_of), "(%u of 138)</td>", rec);
	snprintf(html_mode, sizeof(html_mode), "tracing mode: Sampled: kernels were traced in %u of 144", 6 + rec);
	assert_true(a->kernels.sampled && !b->kernels.sampled);
	assert_int_equal(a->kernels.sample_n, rec);
	assert_int_equal(a->kernels.sample_N, 138);
	assert_int_equal(a->kernels.sample_exact, 6);
	assert_int_equal(a->kernels.n_rows, b->kernels.n_rows);
	for (i = 0; i < 5; i++) {
		const struct lp_kernel_row *s = krow(&a->kernels, unit_kernels[i]), *e = krow(&b->kernels, unit_kernels[i]);
		assert_true(s->sampled && s->ci_ms > 0 && s->ci_ms < 0.1 * e->total_ms);
		/* the estimate within its interval of the exact run's total, launches exact (one per step) */
		if (fabs(s->total_ms - e->total_ms) > s->ci_ms)
			fail_msg("%s: %.4f +- %.4f ms against %.4f exact", s->name, s->total_ms, s->ci_ms, e->total_ms);
		assert_int_equal(s->calls, e->calls);
		assert_int_equal(s->calls, 144);
		assert_true(fabs(s->stage_ms[1] - s->total_ms) < 1e-9);   /* all in decode */
		assert_true(fabs(s->busy_ms / s->total_ms - e->busy_ms / e->total_ms) < 1e-9);
		assert_true(fabs(s->share - e->share) < 0.01);
	}
	/* rows outside the units stay exact, bit for bit */
	for (i = 0; i < 2; i++) {
		const char *name = i ? "gemm_prefill" : "argmax_between_steps";
		const struct lp_kernel_row *s = krow(&a->kernels, name), *e = krow(&b->kernels, name);
		assert_false(s->sampled);
		assert_true(s->total_ms == e->total_ms && s->calls == e->calls && s->ci_ms == 0);
	}
	assert_true(fabs(a->kernels.total_ms - b->kernels.total_ms) < 0.02 * b->kernels.total_ms);
	/* the stages' kernel sums and busy time, so the bound verdicts and the advice see the whole decode */
	{
		const struct lp_stage *sd = lp_stages_find(&a->stages, LP_STAGE_DECODE), *ed = lp_stages_find(&b->stages, LP_STAGE_DECODE);
		assert_non_null(sd);
		assert_non_null(ed);
		assert_true(fabs(sd->kernels.mean - ed->kernels.mean) < 1e-9);   /* 48 x 5 + 48 argmax */
		assert_true(fabs(sd->kernels.mean - 288) < 1e-9);
		assert_true(fabs(sd->kernel_ms.mean - ed->kernel_ms.mean) < 0.02 * ed->kernel_ms.mean);
		assert_true(fabs(sd->gpu_ms.mean - ed->gpu_ms.mean) < 0.02 * ed->gpu_ms.mean);
		/* (the bound verdict also depends on host timing, which differs between the two runs) */
	}
	/* operators: GPU times scaled with an interval, calls and host time exact */
	assert_true(a->ops.sampled && !b->ops.sampled);
	for (i = 0; i < 2; i++) {
		const struct lp_op_row *s = orow(&a->ops, ops[i]), *e = orow(&b->ops, ops[i]);
		assert_true(s->sampled && s->ci_ms > 0);
		if (fabs(s->gpu_incl_ms - e->gpu_incl_ms) > s->ci_ms)
			fail_msg("%s: %.4f +- %.4f ms against %.4f exact", s->name, s->gpu_incl_ms, s->ci_ms, e->gpu_incl_ms);
		assert_true(fabs(s->gpu_excl_ms - s->gpu_incl_ms) < 1e-9);
		assert_int_equal(s->calls, 144);
		assert_int_equal(s->kernels, e->kernels);
		assert_true(fabs(s->share - e->share) < 0.01);
	}
	/* the reports mark the scaled rows, with the sample size and the interval */
	assert_int_equal(lp_section_top_kernels(a, 10, &out), 0);
	assert_non_null(strstr(out.data, "| gemm\\_mlp | 0 | ~6.0"));
	assert_non_null(strstr(out.data, of));
	assert_non_null(strstr(out.data, "| gemm\\_prefill | 0 | 0.900 |"));
	assert_non_null(strstr(out.data, "| exact |"));
	lp_buf_reset(&out);
	assert_int_equal(lp_section_top_kernels(b, 10, &out), 0);
	assert_null(strstr(out.data, "~"));
	assert_null(strstr(out.data, "sampled"));
	lp_buf_reset(&out);
	assert_int_equal(lp_section_top_ops(a, 10, &out), 0);
	assert_non_null(strstr(out.data, "| decode\\_all | mlp | ~6.0"));
	lp_buf_reset(&out);
	/* kernels.md and operators.md: the per-stage split marked too */
	assert_int_equal(lp_report_kernels_md(a, &out), 0);
	assert_non_null(strstr(out.data, "| gemm\\_mlp | 0 | ~6.0"));
	assert_non_null(strstr(out.data, "| 0.000 | ~6.0"));   /* prefill_ms (exact: no unit), decode_ms */
	assert_non_null(strstr(out.data, "| +- "));
	assert_non_null(strstr(out.data, of));
	lp_buf_reset(&out);
	assert_int_equal(lp_report_kernels_md(b, &out), 0);
	assert_null(strstr(out.data, "~"));
	assert_null(strstr(out.data, "sampled"));
	lp_buf_reset(&out);
	assert_int_equal(lp_report_operators_md(a, &out), 0);
	assert_non_null(strstr(out.data, "| decode\\_all | mlp | workload | 144 | ~6.0"));
	assert_non_null(strstr(out.data, of));
	lp_buf_reset(&out);
	assert_int_equal(lp_report_operators_md(b, &out), 0);
	assert_null(strstr(out.data, "~"));
	lp_buf_reset(&out);
	sum = summary_of(a);
	{
		json_t *k = json_object_get(sum, "kernels"), *r0 = json_array_get(json_object_get(k, "rows"), 0);
		json_t *tr = json_object_get(sum, "tracing");
		assert_int_equal(json_integer_value(json_object_get(json_object_get(k, "sampled"), "units_recorded")), rec);
		assert_true(json_is_true(json_object_get(r0, "sampled")));
		assert_true(json_real_value(json_object_get(r0, "ci_ms")) > 0);
		assert_string_equal(json_string_value(json_object_get(tr, "mode")), "sampled");
		assert_string_equal(json_string_value(json_object_get(tr, "why")), "schedule");
		assert_int_equal(json_integer_value(json_object_get(tr, "every")), 4);
	}
	json_decref(sum);
	sum = summary_of(b);
	assert_null(json_object_get(json_object_get(sum, "kernels"), "sampled"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(sum, "tracing"), "mode")), "exact");
	assert_string_equal(json_string_value(json_object_get(json_object_get(sum, "tracing"), "why")), "off");
	json_decref(sum);
	assert_int_equal(lp_report_html(a, NULL, &out), 0);
	assert_non_null(strstr(out.data, html_of));
	assert_non_null(strstr(out.data, html_mode));
	lp_buf_release(&out);
}

/* Everything else drawn from the sampled trace `a` (b: the exact one of the same program): the
 * timeline marks the unrecorded steps over their GPU window (never idle GPU), the waterfall's gaps
 * are located in the recorded steps only and say so, in report.md, the HTML and summary.json. */
static void derived_figures(const struct lp_analysis *a, const struct lp_analysis *b, const struct stage_list *st,
	uint32_t rec)
{
	const struct lp_timeline *t = &a->timeline;
	const struct lp_waterfall *ws = &a->waterfall[1], *we = &b->waterfall[1];
	struct lp_buf out = LP_BUF_INIT;
	size_t i, k = 0, skipped0 = 0, bands = 0;
	json_t *sum;
	char want[160];
	/* the timeline shows measured generation 1 (the fixture's first, no warm-up): 48 steps */
	for (i = 0; i < 48; i++)
		skipped0 += st->r[i].sample == LP_TRACE_STAGE_SKIPPED;
	assert_true(skipped0 > 30);
	assert_int_equal(t->n_unrecorded, skipped0);
	assert_int_equal(t->n_unit_steps, 48);
	assert_int_equal(b->timeline.n_unrecorded, 0);
	for (i = 0; i < t->n_events; i++) {
		const struct lp_tl_event *e = &t->events[i];
		if (e->kind != LP_TL_EV_UNRECORDED)
			continue;
		bands++;
		assert_int_equal(t->lanes[e->lane].kind, LP_TL_LANE_GPU);
		/* over the step's GPU window (its STAGE times): the k-th skipped step of generation 0 */
		while (k < 48 && st->r[k].sample != LP_TRACE_STAGE_SKIPPED)
			k++;
		assert_true(k < 48);
		assert_true(e->end_ns - e->start_ns == st->r[k].gpu_end_ns - st->r[k].gpu_start_ns);
		assert_true(e->start_ns + t->origin_ns == st->r[k].gpu_start_ns);
		k++;
	}
	assert_int_equal(bands, skipped0);
	for (i = 0; i < b->timeline.n_events; i++)
		assert_int_not_equal(b->timeline.events[i].kind, LP_TL_EV_UNRECORDED);
	assert_int_equal(lp_figure_render(a, LP_FIG_TIMELINE, &out), 0);
	snprintf(want, sizeof(want), "Sampled trace: the kernels of %zu of the 48 decode steps here were not recorded", skipped0);
	assert_non_null(strstr(out.data, want));
	assert_non_null(strstr(out.data, "fill=\"url(#lp-unrec-0)\""));
	lp_buf_reset(&out);
	assert_int_equal(lp_figure_render(b, LP_FIG_TIMELINE, &out), 0);
	assert_null(strstr(out.data, "lp-unrec"));
	assert_null(strstr(out.data, "Sampled trace"));
	lp_buf_reset(&out);
	/* waterfall: the exact trace's gaps over the decode occurrences; the sampled one's inside the
	 * recorded steps (the fixture's GPU leaves 2 us after each kernel: a few us per step, where a
	 * gap across unrecorded steps would be hundreds) */
	assert_true(ws->valid && we->valid);
	assert_int_equal(ws->gaps_sampled, 1);
	assert_int_equal(ws->gaps_steps, 6 + rec);
	assert_int_equal(we->gaps_sampled, 0);
	assert_true(ws->n_gaps > 0);
	for (i = 0; i < ws->n_gaps; i++)
		if (ws->gaps[i].ms > 0.012)
			fail_msg("gap '%s': %.4f ms per recorded step", ws->gaps[i].label, ws->gaps[i].ms);
	assert_int_equal(lp_report_report_md(a, NULL, &out), 0);
	snprintf(want, sizeof(want), "Largest idle gaps, located in the %u recorded decode steps", 6 + rec);
	assert_non_null(strstr(out.data, want));
	assert_non_null(strstr(out.data, "Sampled trace: the kernel items and the GPU busy time"));
	lp_buf_reset(&out);
	assert_int_equal(lp_report_report_md(b, NULL, &out), 0);
	assert_null(strstr(out.data, "recorded decode steps"));
	lp_buf_reset(&out);
	assert_int_equal(lp_report_html(a, NULL, &out), 0);
	assert_non_null(strstr(out.data, "located in the"));
	assert_non_null(strstr(out.data, "lp-unrec-0"));
	sum = summary_of(a);
	{
		json_t *w1 = json_array_get(json_object_get(sum, "waterfall"), 1);
		assert_true(json_is_true(json_object_get(w1, "sampled")));
		assert_int_equal(json_integer_value(json_object_get(w1, "gaps_recorded_steps")), 6 + rec);
	}
	json_decref(sum);
	sum = summary_of(b);
	assert_null(json_object_get(json_array_get(json_object_get(sum, "waterfall"), 1), "sampled"));
	json_decref(sum);
	lp_buf_release(&out);
}

/* The Perfetto export of the sampled trace: the unrecorded steps' slices say so. */
static void perfetto_marks(const struct lp_profile *p, size_t n_skipped)
{
	const char *path = LP_TEST_TMP "/sampling_sampled.json.gz";
	struct lp_perfetto_opts o = { .flows = 0 };
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf text = LP_BUF_INIT;
	char chunk[65536];
	const char *at;
	size_t n = 0;
	int got;
	gzFile f;
	assert_int_equal(lp_perfetto_write(p, path, &o, &err), 0);
	assert_non_null(f = gzopen(path, "rb"));
	while ((got = gzread(f, chunk, sizeof(chunk))) > 0)
		lp_buf_add(&text, chunk, (size_t)got);
	gzclose(f);
	for (at = text.data; (at = strstr(at, "\"kernels_recorded\":false")) != NULL; at++)
		n++;
	assert_int_equal(n, n_skipped);
	lp_buf_release(&text);
}

static void test_fixture_traces(void **state)
{
	const char *ex_dir = LP_TEST_TMP "/sampling_exact", *sa_dir = LP_TEST_TMP "/sampling_sampled";
	const char *ex_out = LP_TEST_TMP "/sampling_exact.txt", *sa_out = LP_TEST_TMP "/sampling_sampled.txt";
	struct lp_tsample_plan exact_plan = PLAN(0, 4, 2), plan = PLAN(1, 4, 2);
	struct lp_profile ex, sa;
	uint32_t rec = 0;            /* recorded units of the sampled stratum (the tracer's flags) */
	struct lp_tsample_table te, ts;
	struct lp_tsample_units units;
	struct stage_list *st = calloc(1, sizeof(*st));
	struct lp_err err = LP_ERR_INIT;
	size_t i, k, inside = 0, big = 0;
	double total_exact = 0;
	(void)state;

	lp_test_trace_fixture(ex_dir, "off", ex_out);
	lp_test_trace_fixture(sa_dir, "every=4,first=2,seed=7", sa_out);
	load(ex_dir, &ex);
	load(sa_dir, &sa);

	/* the tracer's flags and GPU times: 3 generations x 48 steps; first 2 + every 4th of 46 */
	read_stages(sa_dir, st);
	assert_int_equal(st->sampling.mode, LP_TRACE_SAMPLE_SAMPLED);
	assert_int_equal(st->sampling.pick, LP_TRACE_SAMPLE_PICK_RANDOM);
	assert_true(st->sampling.seed == 7);
	assert_int_equal(st->sampling.units, 144);
	assert_int_equal(st->n, 144);
	for (i = 0; i < st->n; i++)
		rec += st->r[i].index >= 2 && st->r[i].sample == LP_TRACE_STAGE_RECORDED;
	/* per generation: 11 full blocks of 4 (one unit each) and a block of 2 (one when the pick falls
	 * on it) */
	assert_true(rec >= 3 * 11 && rec <= 3 * 12);
	assert_int_equal(st->sampling.units_recorded, 6 + rec);
	assert_int_equal(st->sampling.toggles, 2 * (144 - 6 - rec)); /* off and on around each skipped unit */
	plan.pick = LP_TRACE_SAMPLE_PICK_RANDOM;
	plan.seed = 7;
	/* exact for every step, recorded or not */
	assert_int_equal(steps_as_program(sa_out, st), 0);

	/* the strata replayed from the range tree are the tracer's */
	assert_int_equal(lp_tsample_units_find(&sa, &plan, 0, &units, &err), 0);
	assert_int_equal(units.n_exact, 6);
	assert_int_equal(units.n_recorded, rec);
	assert_int_equal(units.n_skipped, 138 - rec);
	assert_int_equal(units.n_chains, 3);
	for (i = 0, k = 0; i < sa.n_ranges; i++) {
		if (units.stratum[i] == LP_TSAMPLE_OUTSIDE)
			continue;
		assert_true(k < st->n);
		assert_int_equal(units.unit_index[i], st->r[k].index);
		assert_int_equal(units.stratum[i] == LP_TSAMPLE_SKIPPED, st->r[k].sample == LP_TRACE_STAGE_SKIPPED);
		k++;
	}
	assert_int_equal(k, 144);
	lp_tsample_units_release(&units);

	/* the reader carries the tracer's records: the plan, every unit's flags and GPU times */
	{
		struct lp_tsample_plan got;
		struct lp_tsample_units replay;
		uint8_t *flags = calloc(sa.n_ranges, 1);
		assert_int_equal(lp_tsample_plan_of(&sa, &got), 1);
		assert_true(got.every == 4 && got.first == 2 && !strcmp(got.unit, "decode_step"));
		assert_true(got.pick == LP_TRACE_SAMPLE_PICK_RANDOM && got.seed == 7);
		assert_int_equal(lp_tsample_plan_of(&ex, &got), 0);
		assert_int_equal(sa.processes[0].sampling.units_recorded, 6 + rec);
		assert_int_equal(sa.processes[0].sampling.toggles, 2 * (138 - rec));
		for (i = 0, k = 0; i < sa.n_ranges; i++) {
			if (strcmp(sa.ranges[i].name, "decode_step"))
				continue;
			assert_int_equal(sa.ranges[i].gpu_status, LP_TRACE_STAGE_GPU_EVENTS);
			assert_true(sa.ranges[i].gpu_elapsed_ns == st->r[k].gpu_elapsed_ns);
			assert_int_equal(sa.ranges[i].sample, st->r[k].sample);
			flags[i] = sa.ranges[i].sample;
			sa.ranges[i].sample = 0; /* as a reader without STAGE records would leave it */
			k++;
		}
		assert_int_equal(lp_tsample_units_find(&sa, &plan, 0, &units, &err), 0);
		assert_int_equal(lp_tsample_units_find(&sa, &plan, 0, &replay, &err), 0);
		for (i = 0; i < sa.n_ranges; i++)
			sa.ranges[i].sample = flags[i];
		lp_tsample_units_release(&replay);
		assert_int_equal(lp_tsample_units_find(&sa, &plan, 0, &replay, &err), 0);
		for (i = 0; i < sa.n_ranges; i++)
			assert_int_equal(units.stratum[i], replay.stratum[i]); /* flags == replayed schedule */
		lp_tsample_units_release(&units);
		lp_tsample_units_release(&replay);
		free(flags);
	}

	/* exact: no interval, the raw sums */
	assert_int_equal(lp_tsample_kernel_table(&ex, &exact_plan, 0.95, &te, &err), 0);
	assert_false(te.sampled);
	assert_int_equal(te.n_rows, 7);
	for (i = 0; i < ex.n_kernels; i++) {
		const struct lp_kernel *kk = &ex.kernels[i];
		if (kk->range >= 0 && lp_profile_range_find_ancestor(&ex, kk->range, "decode_step") >= 0)
			total_exact += (double)(kk->end_ns - kk->start_ns);
	}
	assert_true(fabs(te.total_ns.total - total_exact) < 1);

	/* the schedule replayed on the exact trace (lp_tsample_coverage): every kernel's interval
	 * holds its exact total in about 95% of 500 draws of the positions */
	{
		struct lp_tsample_plan cp = PLAN(1, 4, 2);
		struct lp_tsample_coverage cov;
		cp.pick = LP_TRACE_SAMPLE_PICK_RANDOM;
		assert_int_equal(lp_tsample_coverage(&ex, NULL, &cp, LP_TSAMPLE_VAR_BALANCED, 500, 3, 0.95, &cov, &err), 0);
		assert_int_equal(cov.units, 144);
		assert_int_equal(cov.units_exact, 6);
		assert_int_equal(cov.n_rows, 5); /* the kernels inside units */
		assert_true(fabs(cov.units_ns - total_exact) < 1);
		for (i = 0; i < cov.n_rows; i++) {
			const struct lp_tsample_cov_row *r = &cov.rows[i];
			if (r->covered < 430 || r->unknown)
				fail_msg("%s: %u of 500 inside", r->key, r->covered);
			assert_true(fabs(r->bias) < 0.002 && r->rmse < 0.02 && r->half_rel > 0);
		}
		assert_true(cov.rows[0].exact_ns >= cov.rows[1].exact_ns);
		lp_tsample_coverage_release(&cov);
	}
	assert_true(te.total_ns.half_ci == 0);
	assert_true(row(&te, "gemm_mlp")->calls.total == 144);
	assert_true(row(&te, "argmax_between_steps")->outside_calls == 144);
	assert_true(row(&te, "gemm_prefill")->outside_calls == 3);

	/* sampled: every row of over 1% of the unit time within its interval of the exact total */
	assert_int_equal(lp_tsample_kernel_table(&sa, &plan, 0.95, &ts, &err), 0);
	assert_true(ts.sampled);
	assert_int_equal(ts.units_recorded, rec);
	assert_int_equal(ts.units_sampled_stratum, 138);
	assert_int_equal(ts.units_exact, 6);
	for (i = 0; i < ts.n_rows; i++) {
		const struct lp_tsample_row *s = &ts.rows[i], *e = row(&te, s->key);
		if (e->time_ns.total <= 0.01 * te.total_ns.total)
			continue;
		big++;
		assert_true(s->time_ns.half_ci > 0);
		assert_true(s->time_ns.n == rec && s->time_ns.N == 138);
		inside += fabs(s->time_ns.total - e->time_ns.total) <= s->time_ns.half_ci;
		/* one launch of each kernel per step: the count is estimated without error */
		assert_true(fabs(s->calls.total - 144) < 1e-6 && fabs(s->calls.half_ci) < 1e-6);
		/* and the interval is honest about its size: a few percent here, not 0, not 50% */
		assert_true(s->time_ns.half_ci < 0.1 * e->time_ns.total);
	}
	assert_int_equal(big, 5);
	assert_int_equal(inside, big);
	assert_true(fabs(ts.total_ns.total - te.total_ns.total) <= ts.total_ns.half_ci);
	/* what lies outside the units is exact in both */
	assert_true(row(&ts, "argmax_between_steps")->outside_ns == row(&te, "argmax_between_steps")->outside_ns);
	assert_true(row(&ts, "gemm_prefill")->outside_ns == 3 * 300000.0);

	/* the analysis and the stakeholder report: the mode, why, and the scaled rows */
	{
		struct lp_analysis_input in;
		struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
		struct lp_buf md = LP_BUF_INIT;
		char want[256];
		memset(&in, 0, sizeof(in));
		in.profile = &sa;
		assert_int_equal(lp_analyze(&in, a, &err), 0);
		assert_int_equal(a->sampling.mode, 2);
		assert_int_equal(a->sampled.n_rows, ts.n_rows);
		assert_true(fabs(a->sampled.rows[0].time_ns.total - ts.rows[0].time_ns.total) < 1e-6);
		assert_int_equal(lp_report_stakeholder_md(a, &md), 0);
		snprintf(want, sizeof(want), "## Tracing Mode\n\nSampled: kernels were traced in %u of 144 decode\\_step "
			"ranges (the first 2 under each parent, then 1 in 4, at a random position in each block: seed 7), "
			"as trace.sample asked", 6 + rec);
		if (!strstr(md.data, want))
			fail_msg("%s", strstr(md.data, "## Tracing") ? strstr(md.data, "## Tracing") : md.data);
		assert_non_null(strstr(md.data, "| gemm\\_mlp | 6.0"));
		/* blocks of 4: bursts of 4 would record every unit, so no word on them */
		assert_null(strstr(md.data, "burst=4 detaches it"));
		in.profile = &ex;
		assert_int_equal(lp_analyze(&in, b, &err), 0);
		lp_buf_reset(&md);
		assert_int_equal(lp_report_stakeholder_md(b, &md), 0);
		assert_non_null(strstr(md.data, "## Tracing Mode\n\nExact: every launch traced (trace.sample=off)."));
		b->mode = "deep"; /* deep mode resolves trace.sample=auto to off (run/workload.c) and says why */
		lp_buf_reset(&md);
		assert_int_equal(lp_report_stakeholder_md(b, &md), 0);
		assert_non_null(strstr(md.data, "Exact: every launch traced (deep mode traces every launch: Nsight "
						"Compute's sampling numbers them)."));
		b->mode = "";
		scaled_tables(a, b, rec);
		derived_figures(a, b, st, rec);
		perfetto_marks(&sa, 138 - rec);
		lp_buf_release(&md);
		lp_analysis_release(a);
		lp_analysis_release(b);
		free(a);
		free(b);
	}

	lp_tsample_table_release(&te);
	lp_tsample_table_release(&ts);
	lp_profile_release(&ex);
	lp_profile_release(&sa);
	free(st);
}

/* auto on a program whose first steps are slow (module loading): it keeps measuring recorded
 * units (flagged MEASURED: exact stratum) until one runs faster than the threshold, then samples;
 * the scaled tables still agree with the exact run. */
static void test_auto_fixture(void **state)
{
	const char *ex_dir = LP_TEST_TMP "/sampling_auto_exact", *sa_dir = LP_TEST_TMP "/sampling_auto";
	struct lp_tsample_plan plan = PLAN(1, 4, 2);
	struct stage_list *st = calloc(1, sizeof(*st));
	struct lp_profile ex, sa;
	struct lp_tsample_units units;
	struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct lp_err err = LP_ERR_INIT;
	size_t i, d = 0, n_measured = 0;
	(void)state;
	setenv("LP_FIXTURE_SLOW", "4", 1);
	lp_test_trace_fixture(sa_dir, "auto,rate=500,every=4,first=2", LP_TEST_TMP "/sampling_auto.txt");
	unsetenv("LP_FIXTURE_SLOW");
	lp_test_trace_fixture(ex_dir, "off", LP_TEST_TMP "/sampling_auto_exact.txt");
	read_stages(sa_dir, st);
	assert_int_equal(st->sampling.mode, LP_TRACE_SAMPLE_SAMPLED);
	assert_int_equal(st->sampling.why, LP_TRACE_SAMPLE_WHY_AUTO_HIGH);
	assert_true(st->sampling.launch_rate > 500);
	assert_int_equal(st->n, 144);
	/* generation 0: the first 2 recorded, then measured until the decision at d, then the schedule */
	assert_int_equal(st->r[0].sample, LP_TRACE_STAGE_RECORDED);
	assert_int_equal(st->r[1].sample, LP_TRACE_STAGE_RECORDED);
	for (i = 2; i < 48 && st->r[i].sample == LP_TRACE_STAGE_MEASURED; i++)
		n_measured++;
	d = i;
	if (d < 5 || d > 16)   /* the 4 slow steps and the first fast one are measured at least */
		fail_msg("auto decided at step %zu", d);
	load(sa_dir, &sa);
	load(ex_dir, &ex);
	/* from the decision on, and in generations 1 and 2 from their start: the schedule, as the
	 * analysis replays it from the process's seed (the tracer's flags ignored) */
	assert_int_equal(lp_tsample_plan_of(&sa, &plan), 1);
	assert_int_equal(plan.pick, LP_TRACE_SAMPLE_PICK_RANDOM);
	{
		struct lp_tsample_units replay;
		size_t k = 0, n_rec = 0;
		assert_int_equal(lp_tsample_units_find(&sa, &plan, 1, &replay, &err), 0);
		for (i = 0; i < sa.n_ranges; i++) {
			if (replay.stratum[i] == LP_TSAMPLE_OUTSIDE)
				continue;
			assert_true(k < 144);
			if (k >= d) {
				uint8_t want = replay.stratum[i] == LP_TSAMPLE_SKIPPED ? LP_TRACE_STAGE_SKIPPED : LP_TRACE_STAGE_RECORDED;
				assert_int_equal(st->r[k].sample, want);
				n_rec += k % 48 >= 2 && want == LP_TRACE_STAGE_RECORDED;
			}
			k++;
		}
		assert_int_equal(k, 144);
		assert_true(n_rec >= 2 * 11); /* one in each full block at least */
		lp_tsample_units_release(&replay);
	}
	assert_int_equal(lp_tsample_units_find(&sa, &plan, 0, &units, &err), 0);
	assert_int_equal(units.n_exact, 6 + n_measured);
	lp_tsample_units_release(&units);
	analyze_both(&sa, &ex, a, b);
	assert_int_equal(a->kernels.sample_exact, 6 + n_measured);
	assert_int_equal(a->kernels.sample_N, 138 - n_measured);
	/* auto's seed is the process's own (and its decision point moves with the host's timing), so
	 * this sample is a new one each run: each row within twice its 95% interval (for a normal
	 * error a miss of that size has a probability of about 1e-4 per row; the 95% coverage itself
	 * is checked in test_design_coverage and on the fixed-seed trace above) */
	for (i = 0; i < b->kernels.n_rows; i++) {
		const struct lp_kernel_row *e = &b->kernels.rows[i], *s = krow(&a->kernels, e->name);
		if (fabs(s->total_ms - e->total_ms) > (s->sampled ? 2 * s->ci_ms : 0))
			fail_msg("%s: %.4f +- %.4f ms against %.4f exact", s->name, s->total_ms, s->ci_ms, e->total_ms);
		assert_int_equal(s->calls, e->calls);
	}
	lp_analysis_release(a);
	lp_analysis_release(b);
	free(a);
	free(b);
	lp_profile_release(&ex);
	lp_profile_release(&sa);
	free(st);
}

/* A real sampled trace (tests/fixtures/trace/README.md: h100_hf_tiny_sampled): examples/hf_generate.py
 * on an H100 with every=4,first=2, 3 generations (the first a warm-up range) of 24 decode steps. */
static void test_real_sampled_trace(void **state)
{
	struct lp_profile p;
	struct lp_analysis_input in;
	struct lp_analysis *a = calloc(1, sizeof(*a));
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf md = LP_BUF_INIT, prog = LP_BUF_INIT;
	size_t i, n_sampled = 0, n_steps = 0, within = 0;
	double step_ms[72];
	const char *line;
	(void)state;
	lp_profile_init(&p, "real");
	if (lp_trace_load(lp_test_fixture("trace/h100_hf_tiny_sampled"), &p, &err) < 0)
		fail_msg("%s", err.msg);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	assert_int_equal(lp_analyze(&in, a, &err), 0);
	assert_int_equal(a->sampling.mode, 2);
	assert_int_equal(a->sampling.every, 4);
	assert_int_equal(a->sampling.first, 2);
	assert_int_equal(a->sampling.units, 72);
	assert_int_equal(a->sampling.units_recorded, 24);
	assert_int_equal(a->sampling.toggles, 96);
	/* the warm-up generation is out of the tables: 2 measured generations of 24 steps, the first 2
	 * of each exact, 6 of the other 22 recorded (indices 2, 6, ..., 22) */
	assert_true(a->kernels.sampled && a->ops.sampled);
	assert_int_equal(a->kernels.sample_exact, 4);
	assert_int_equal(a->kernels.sample_N, 44);
	assert_int_equal(a->kernels.sample_n, 12);
	for (i = 0; i < a->kernels.n_rows; i++) {
		const struct lp_kernel_row *r = &a->kernels.rows[i];
		if (!r->sampled)
			continue;
		n_sampled++;
		assert_true(r->ci_ms >= 0 && r->ci_ms < r->total_ms);
		assert_true(r->stage_ms[1] > 0);
	}
	assert_true(n_sampled > 10);
	assert_int_equal(lp_section_top_kernels(a, 10, &md), 0);
	assert_non_null(strstr(md.data, "(12 of 44 units) |"));
	assert_non_null(strstr(md.data, "| ~"));
	assert_non_null(strstr(md.data, "Sampled trace (Tracing mode): ~ marks estimates. Kernels were recorded in 12 of "
					 "the 44 sampled units and in all 4 units of the exact stratum"));
	/* every step's latency from the STAGE records, recorded or not, against the program's own
	 * CUDA events (3.3 ms steps: the ~50-80 us between its event and ours is 2-3% here) */
	lp_test_read(lp_test_fixture("trace/h100_hf_tiny_sampled/program.txt"), &prog);
	for (line = prog.data; (line = strstr(line, "\"step_ms\": [")) != NULL;) {
		char *end;
		line += 12;
		while (*line && *line != ']' && n_steps < 72) {
			step_ms[n_steps++] = strtod(line, &end);
			line = end;
			while (*line == ',' || *line == ' ')
				line++;
		}
	}
	assert_int_equal(n_steps, 48);   /* the 2 measured generations */
	{
		size_t k = 0;
		for (i = 0; i < p.n_ranges && k < 72; i++) {
			const struct lp_range *r = &p.ranges[i];
			double ours;
			if (strcmp(r->name, "decode_step"))
				continue;
			assert_int_equal(r->gpu_status, LP_TRACE_STAGE_GPU_EVENTS);
			if (k++ < 24)
				continue;   /* the warm-up generation: the program prints no steps for it */
			ours = (double)r->gpu_elapsed_ns / 1e6;
			within += fabs(ours - step_ms[k - 25]) <= 0.04 * step_ms[k - 25];
			assert_true(fabs(ours - step_ms[k - 25]) <= 0.07 * step_ms[k - 25]);
		}
		assert_int_equal(k, 72);
	}
	assert_true(within >= 46);   /* measured: 47 of 48 within 4%, the worst 5.7% */
	/* the timeline of measured generation 1 marks its unrecorded steps; the gaps are located in the
	 * recorded steps of both measured generations (2 x (2 exact + 6 recorded)) */
	{
		size_t k = 0, skipped = 0;
		for (i = 0; i < p.n_ranges; i++) {
			if (strcmp(p.ranges[i].name, "decode_step"))
				continue;
			skipped += k >= 24 && k < 48 && p.ranges[i].sample == LP_TRACE_STAGE_SKIPPED;
			k++;
		}
		assert_int_equal(skipped, 16);
		assert_int_equal(a->timeline.n_unrecorded, skipped);
		assert_int_equal(a->timeline.n_unit_steps, 24);
		assert_int_equal(a->waterfall[1].gaps_sampled, 1);
		assert_int_equal(a->waterfall[1].gaps_steps, 16);
	}
	lp_buf_release(&md);
	lp_buf_release(&prog);
	lp_analysis_release(a);
	free(a);
	lp_profile_release(&p);
}

/* Decode steps with no decode range around them (a serving loop): the steps are the stage's
 * iterations; the unrecorded ones have no kernels, so the stage's kernel statistics are taken over
 * the recorded ones (not scaled per step: a recorded step is one step), and the reports say so. */
static void test_steps_only(void **state)
{
	const char *ex_dir = LP_TEST_TMP "/sampling_steps_exact", *sa_dir = LP_TEST_TMP "/sampling_steps";
	struct lp_profile ex, sa;
	struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct lp_buf md = LP_BUF_INIT;
	const struct lp_stage *ss, *es;
	size_t i, recorded = 0;
	char want[160];
	(void)state;
	setenv("LP_FIXTURE_STEPS_ONLY", "1", 1);
	lp_test_trace_fixture(sa_dir, "every=4,first=2,seed=7", LP_TEST_TMP "/sampling_steps.txt");
	lp_test_trace_fixture(ex_dir, "off", LP_TEST_TMP "/sampling_steps_exact.txt");
	unsetenv("LP_FIXTURE_STEPS_ONLY");
	load(sa_dir, &sa);
	load(ex_dir, &ex);
	analyze_both(&sa, &ex, a, b);
	ss = lp_stages_find(&a->stages, LP_STAGE_STEPS);
	es = lp_stages_find(&b->stages, LP_STAGE_STEPS);
	assert_non_null(ss);
	assert_non_null(es);
	assert_int_equal(ss->n_iters, 144);
	for (i = 0; i < sa.n_ranges; i++)
		recorded += !strcmp(sa.ranges[i].name, "decode_step") && sa.ranges[i].sample != 2;
	assert_true(recorded > 30 && recorded < 144);
	assert_int_equal(ss->recorded_iters, recorded);
	assert_int_equal(es->recorded_iters, 0);
	/* per step: the recorded steps' kernels, as in the exact run (one process each, same program) */
	assert_true(ss->kernel_ms.min > 0);
	assert_true(fabs(ss->kernel_ms.mean - es->kernel_ms.mean) < 0.05 * es->kernel_ms.mean);
	assert_true(ss->kernel_ms.std < 2 * es->kernel_ms.std + 1e-6);
	assert_true(fabs(ss->kernels.mean - es->kernels.mean) < 1e-9);
	assert_true(ss->gpu_ms.min > 0);
	/* the kernel table still scales to every step */
	assert_true(a->kernels.sampled);
	assert_true(fabs(a->kernels.total_ms - b->kernels.total_ms) < 0.03 * b->kernels.total_ms);
	assert_int_equal(lp_section_stages(a, &md), 0);
	snprintf(want, sizeof(want), "are over its %zu iterations whose kernels were recorded (of 144)", recorded);
	assert_non_null(strstr(md.data, want));
	lp_buf_reset(&md);
	assert_int_equal(lp_section_stages(b, &md), 0);
	assert_null(strstr(md.data, "whose kernels were recorded"));
	lp_buf_release(&md);
	lp_analysis_release(a);
	lp_analysis_release(b);
	free(a);
	free(b);
	lp_profile_release(&ex);
	lp_profile_release(&sa);
}

/* A serving loop's 144 steps under no parent with blocks of 128 (run 39: examples/serve_plain.py's
 * 190 drew one burst): the steps past the first 2 that were recorded lie in one block, so no row has
 * an interval (a burst's consecutive steps say nothing of the spread between blocks), and the
 * Tracing mode section says so and which schedule gives one. */
static void test_one_block_no_interval(void **state)
{
	const char *dir = LP_TEST_TMP "/sampling_one_block";
	struct lp_profile sa;
	struct lp_analysis_input in;
	struct lp_analysis *a = calloc(1, sizeof(*a));
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf md = LP_BUF_INIT;
	size_t i, sampled = 0;
	(void)state;
	setenv("LP_FIXTURE_STEPS_ONLY", "1", 1);
	lp_test_trace_fixture(dir, "every=128,burst=4,first=2,seed=1", NULL);
	unsetenv("LP_FIXTURE_STEPS_ONLY");
	load(dir, &sa);
	memset(&in, 0, sizeof(in));
	in.profile = &sa;
	assert_int_equal(lp_analyze(&in, a, &err), 0);
	assert_true(a->kernels.sampled);
	assert_int_equal(a->kernels.sample_missing, 0);
	assert_int_equal(a->kernels.sample_n, 4);
	assert_int_equal(a->kernels.sample_N, 142);
	for (i = 0; i < a->kernels.n_rows; i++)
		if (a->kernels.rows[i].sampled) {
			assert_true(a->kernels.rows[i].ci_ms < 0);
			sampled++;
		}
	assert_true(sampled > 0);
	assert_int_equal(lp_tracing_mode_text(a, &md), 0);
	assert_non_null(strstr(md.data, "scaled to all of them, but without an interval: the 4 recorded decode_step "
		"ranges past the first ones lie in one block of the 142 (consecutive ranges say nothing of the spread "
		"between blocks, and the interval needs two); trace.sample=every=64,burst=4 records a burst in each "
		"block of 64."));
	assert_null(strstr(md.data, "95% intervals"));
	assert_null(strstr(md.data, "a rerun"));
	/* with no decode_all around the steps nothing foresees a generation's end: a prefill that finds
	 * CUPTI detached after a burst is not recorded (attaching at its push paused a serving loop's
	 * prefill ~12 ms, run 39) and is sampled on its own: the first (CUPTI attached from the start)
	 * recorded, the second (no gap between prefills known yet) not, the third attached ahead for */
	assert_int_equal(a->push_attached, 0);
	assert_int_equal(a->n_stage_inst, 1);
	assert_string_equal(a->stage_inst[0].name, "prefill");
	assert_int_equal(a->stage_inst[0].recorded, 2);
	assert_int_equal(a->stage_inst[0].of, 3);
	assert_int_equal(sa.ranges[lp_profile_range_find_ancestor(&sa, 0, "prefill")].sample, 1);
	assert_non_null(strstr(md.data, "): prefill 2 of 3 recorded. Their kernels are scaled to every instance"));
	assert_null(strstr(md.data, "waited at their push"));
	lp_buf_release(&md);
	lp_analysis_release(a);
	free(a);
	lp_profile_release(&sa);
}

/* A serving loop (fixture_writer.c LP_FIXTURE_SERVE: 24 rounds of a prefill or a mixed forward, then
 * 8 decode steps, all under no parent) under bursts: a prefill or mixed range that finds CUPTI
 * detached is left unrecorded instead of attaching it at its push (run 39: a pause of ~12 ms inside a
 * serving loop's prefill), the first 2 of each name and one in 8 after them are attached ahead for,
 * and their kernels are scaled to every instance as a simple random sample: the exact run's totals
 * lie within the intervals, every instance's latency is the program's, the decode rows keep theirs,
 * and no unrecorded instance reads as idle GPU time. */
static void test_serving_loop(void **state)
{
	const char *ex_dir = LP_TEST_TMP "/sampling_serve_exact", *sa_dir = LP_TEST_TMP "/sampling_serve";
	const char *sa_out = LP_TEST_TMP "/sampling_serve.txt";
	static const char *const rows[] = { "gemm_prefill", "gemm_mixed", "gemm_mlp", "attention_decode" };
	struct lp_profile ex, sa;
	struct lp_analysis *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf prog = LP_BUF_INIT, md = LP_BUF_INIT;
	const char *line;
	size_t i, k, inst = 0, skipped = 0;
	(void)state;
	setenv("LP_FIXTURE_SERVE", "24", 1);
	lp_test_trace_fixture(sa_dir, "every=64,burst=4,seed=1", sa_out);
	lp_test_trace_fixture(ex_dir, "off", NULL);
	unsetenv("LP_FIXTURE_SERVE");
	load(sa_dir, &sa);
	load(ex_dir, &ex);
	analyze_both(&sa, &ex, a, b);
	/* the instances: 16 prefills and 8 mixed, some not recorded, none paused at its push */
	assert_int_equal(a->n_stage_inst, 2);
	for (k = 0; k < 2; k++) {
		const struct lp_stage_inst *si = &a->stage_inst[k];
		assert_int_equal(si->of, !strcmp(si->name, "prefill") ? 16 : 8);
		assert_true(si->recorded >= 2 && si->recorded < si->of);
	}
	assert_int_equal(a->push_attached, 0);
	assert_int_equal(b->n_stage_inst, 0);
	/* every instance's GPU time is the program's ("inst G NS" lines, in order) */
	assert_int_equal(lp_fs_read_file(sa_out, &prog, 1 << 20, &err), 0);
	for (line = prog.data; (line = strstr(line, "inst ")) != NULL; line++) {
		int g;
		unsigned long long ns;
		const struct lp_range *r = NULL;
		assert_int_equal(sscanf(line, "inst %d %llu", &g, &ns), 2);
		for (i = 0, k = 0; i < sa.n_ranges; i++)
			if (!strcmp(sa.ranges[i].name, "prefill") || !strcmp(sa.ranges[i].name, "mixed"))
				if (k++ == (size_t)g)
					r = &sa.ranges[i];
		assert_non_null(r);
		assert_int_equal(r->gpu_status, LP_TRACE_STAGE_GPU_EVENTS);
		assert_true(r->gpu_elapsed_ns == ns);
		skipped += r->sample == LP_TRACE_STAGE_SKIPPED;
		inst++;
	}
	assert_int_equal(inst, 24);
	assert_true(skipped > 0);
	/* the tables: each row's estimate against the exact run's total, within its interval */
	for (k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct lp_kernel_row *s = krow(&a->kernels, rows[k]), *e = krow(&b->kernels, rows[k]);
		assert_true(s->sampled);
		assert_true(s->ci_ms > 0);
		if (fabs(s->total_ms - e->total_ms) > s->ci_ms)
			fail_msg("%s: %.3f ms +- %.3f sampled, %.3f exact", rows[k], s->total_ms, s->ci_ms, e->total_ms);
		assert_true(fabs(s->calls - (double)e->calls) <= 0.5 * (double)e->calls);
	}
	/* the prefill stage's kernel statistics over its recorded iterations: an unrecorded one has no
	 * kernels, not zero kernel time or span */
	{
		const struct lp_stage *ps = lp_stages_find(&a->stages, LP_STAGE_PREFILL), *pe = lp_stages_find(&b->stages,
			LP_STAGE_PREFILL);
		assert_non_null(ps);
		assert_non_null(pe);
		assert_int_equal(ps->gpu_span_ms.n, ps->kernel_ms.n);
		assert_true(ps->kernel_ms.n < ps->n_iters);
		assert_true(ps->gpu_span_ms.min > 0 && ps->kernel_ms.min > 0);
		assert_true(fabs(ps->kernel_ms.mean - pe->kernel_ms.mean) < 0.2 * pe->kernel_ms.mean);
	}
	/* unrecorded prefills are no idle time of the prefill stage */
	assert_true(a->waterfall[0].gaps_sampled);
	assert_int_equal(lp_tracing_mode_text(a, &md), 0);
	assert_non_null(strstr(md.data, "Stage ranges between the units were sampled on their own"));
	lp_buf_release(&prog);
	lp_buf_release(&md);
	lp_analysis_release(a);
	lp_analysis_release(b);
	free(a);
	free(b);
	lp_profile_release(&ex);
	lp_profile_release(&sa);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_traces),
		cmocka_unit_test(test_auto_fixture),
		cmocka_unit_test(test_serving_loop),
		cmocka_unit_test(test_steps_only),
		cmocka_unit_test(test_one_block_no_interval),
		cmocka_unit_test(test_real_sampled_trace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
