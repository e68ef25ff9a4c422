/* test_reports.c: the whole analysis on a synthetic GPU profile and a CPU profile, rendered into
 * the five reports (src/analyze/analysis.c, src/report/): section order, escaping inside tables,
 * n/a reasons, the ncu join, summary.json and byte-identical output on a second write. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "analyze/analysis.h"
#include "config/yaml.h"
#include "core/fs.h"
#include "report/reports.h"
#include "report/sections.h"

#define MS 1000000ull

static int32_t R(struct lp_profile *p, int32_t parent, const char *name, uint64_t s, uint64_t e, uint64_t payload)
{
	int32_t r = lp_test_range(p, parent, "LLM", name, s, e);
	if (payload) {
		p->ranges[r].payload_type = LP_PAYLOAD_U64;
		p->ranges[r].payload.u64 = payload;
	}
	return r;
}

static void K(struct lp_profile *p, int32_t range, const char *name, uint64_t s, uint64_t e)
{
	lp_test_kernel(p, range, name, s, e);
}

static const char *weird = "void ns::k<a|b, `c`>(float*, int) with a name longer than eighty characters so it is shortened";

/* Two iterations: prefill 10 ms (payload 64 = batch 1 x 64), decode_all 20 ms with 4 steps of
 * 5 ms host, each step 2 ms of kernels (GPU idle 60% of decode). */
static void build_gpu(struct lp_profile *p)
{
	struct lp_device *d = lp_profile_add_device(p);
	struct lp_process *pr = lp_profile_add_process(p);
	int it, s;
	d->name = lp_profile_intern(p, "NVIDIA H100 80GB HBM3");
	d->sm_count = 132;
	d->cc_major = 9;
	pr->pid = 7;
	pr->overhead_ns = 3 * MS;
	p->source_kind = lp_profile_intern(p, "llmprof-trace");
	for (it = 0; it < 2; it++) {
		uint64_t t = (uint64_t)(100 * it) * MS;
		int32_t pf = R(p, -1, "prefill", t, t + 10 * MS, 64), dec, att, q;
		q = R(p, pf, "qkv", t, t + 5 * MS, 0);
		K(p, q, "nvjet_hsh_gemm", t + 1 * MS, t + 6 * MS);
		K(p, pf, weird, t + 6 * MS, t + 7 * MS);
		dec = R(p, -1, "decode_all", t + 10 * MS, t + 30 * MS, 0);
		for (s = 0; s < 4; s++) {
			uint64_t u = t + (uint64_t)(10 + 5 * s) * MS;
			int32_t st = R(p, dec, "decode_step", u, u + 5 * MS, (uint64_t)s);
			q = R(p, st, "qkv", u, u + 1 * MS, 0);
			K(p, q, "gemv_kernel", u, u + 1 * MS);
			att = R(p, st, "attention", u + 1 * MS, u + 2 * MS, 0);
			K(p, att, "flash_decode_kernel", u + 1 * MS, u + 2 * MS);
		}
	}
}

static json_t *model(void)
{
	static const char *y = "name: small\nfamily: llama\ndtype: bf16\nvocab_size: 1000\nhidden_size: 256\n"
			       "intermediate_size: 512\nnum_hidden_layers: 2\nnum_attention_heads: 4\n"
			       "num_key_value_heads: 2\nhead_dim: 64\ntie_word_embeddings: true\n";
	json_t *v = NULL;
	struct lp_err err = LP_ERR_INIT;
	assert_int_equal(lp_yaml_load_string(y, strlen(y), "m", &v, &err), 0);
	return v;
}

static void read_file(const char *dir, const char *name, struct lp_buf *out)
{
	struct lp_buf p = LP_BUF_INIT;
	lp_fs_join(&p, dir, name);
	lp_buf_reset(out);
	lp_test_read(p.data, out);
	lp_buf_release(&p);
}

static void test_gpu_run_reports(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	struct lp_err err = LP_ERR_INIT;
	struct lp_analysis_input in;
	struct lp_phase_status ph[2] = { { "capture", "ok", "" }, { "ncu", "skipped", "light mode" } };
	struct lp_kernel_record ncu[1];
	struct lp_metric m[4] = {
		{ "gpu__time_duration.sum", 1e6, "nsecond", 1 },
		{ "dram__bytes_read.sum", 4e6, "byte", 1 },
		{ "dram__bytes_write.sum", 1e6, "byte", 1 },
		{ "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1e6, "", 1 },
	};
	json_t *mdl = model(), *env = json_pack("{s:s, s:[{s:s}], s:{s:s, s:s}, s:{s:s, s:f, s:b}}", "host", "box",
						  "gpus", "name", "NVIDIA H100 80GB HBM3", "environment",
						  "CUDA_VISIBLE_DEVICES", "0", "PATH", "~/bin:/usr/bin", "clock", "source",
						  "kvm-clock", "realtime_read_ns", 812.4, "slow", 1);
	struct lp_buf b = LP_BUF_INIT, b2 = LP_BUF_INIT;
	const char *dir = lp_test_tmpdir("reports_gpu"), *order[] = { "## Environment", "## Aggregates",
		"## Per-Stage Timings", "## MFU", "## Stage Takeaways", "## Top Operators", "## Top Kernels",
		"## Recommendations" };
	const char *prev, *line;
	json_t *js;
	size_t i;
	(void)state;
	memset(ncu, 0, sizeof(ncu));
	ncu[0].kernel_name = "gemv_kernel";   /* function-style name as ncu prints it */
	ncu[0].calls = 1;
	ncu[0].metrics = m;
	ncu[0].n_metrics = 4;
	lp_profile_init(&p, "synthetic");
	build_gpu(&p);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	in.model = mdl;
	in.batch = 1;
	in.ncu = ncu;
	in.n_ncu = 1;
	in.phases = ph;
	in.n_phases = 2;
	in.env = env;
	in.run_id = "20250101-000000-abcd";
	in.mode = "deep";
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	json_decref(mdl);
	json_decref(env);
	lp_profile_release(&p);          /* the analysis keeps no pointer into the profile */

	assert_int_equal(a.batch, 1);
	assert_int_equal(a.prompt_len, 64);
	assert_int_equal(a.steps, 4);
	assert_string_equal(a.peak.matched, "H100 SXM");
	assert_true(a.perf[0].mfu.valid && a.perf[1].mbu.valid && a.perf[2].mfu.valid);
	/* decode: 4 tokens in 20 ms = 200 tokens/s */
	assert_true(fabs(a.decode_tokens_per_s.value - 200.0) < 1e-9);
	/* decode FLOPs per iteration come from flops.c; GPU time is 8 ms */
	assert_true(fabs(a.perf[1].gpu_s.value - 0.008) < 1e-12);
	assert_true(fabs(a.perf[1].flops.value - lp_flops_decode(&a.model, 1, 64, 4)) < 1e-3);
	/* the ncu record joined gemv_kernel: 2 MFLOP per launch over 5 MB */
	for (i = 0; i < a.kernels.n_rows; i++)
		if (!strcmp(a.kernels.rows[i].name, "gemv_kernel"))
			break;
	assert_true(i < a.kernels.n_rows);
	assert_true(a.kernels.rows[i].ncu.joined);
	assert_true(fabs(a.kernels.rows[i].ncu.flops - 2e6) < 1e-6);
	assert_true(fabs(a.kernels.rows[i].ncu.intensity - 0.4) < 1e-12);
	assert_int_equal(a.kernels.rows[i].ncu.roofline, LP_ROOF_MEMORY);
	assert_true(a.perf[1].ncu_flops.valid);
	assert_true(fabs(a.perf[1].ncu_flops.value - 4 * 2e6) < 1e-6);  /* 4 launches per iteration */

	assert_int_equal(lp_report_write_all(dir, &a, &err), 0);
	read_file(dir, "kernels.md", &b);
	assert_non_null(strstr(b.data, "| kernel_name | device | total_ms | calls | mean_ms | busy_ms | share |"));
	/* the weird name stays in one cell: escaped pipe, entities, shortened */
	line = strstr(b.data, "| void ns::k&lt;a\\|b, \\`c\\`&gt;");
	assert_non_null(line);
	assert_non_null(strstr(line, "\xE2\x80\xA6 |"));
	assert_non_null(strstr(b.data, "## Nsight Compute metrics"));
	read_file(dir, "stakeholder_summary.md", &b);
	prev = b.data;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		const char *at = strstr(b.data, order[i]);
		assert_non_null(at);
		assert_true(at >= prev);
		prev = at;
	}
	assert_non_null(strstr(b.data, "[decode-idle]"));
	/* the Environment section is a short curated list (issue 21); the rest stays in env.json */
	assert_non_null(strstr(b.data, "- GPU: NVIDIA H100 80GB HBM3"));
	assert_non_null(strstr(b.data, "- model: "));
	assert_non_null(strstr(b.data, "- host clock: kvm-clock, 812 ns a read (slow: a system call each time;"));
	assert_non_null(strstr(b.data, "- inputs: batch 1, prompt 64 tokens, 4 new tokens\n"));
	assert_non_null(strstr(b.data, "(OS, tools and their paths, environment variables): env.json"));
	assert_null(strstr(b.data, "box"));   /* env.json's host name */
	assert_null(strstr(b.data, "schema\\_version"));
	assert_null(strstr(b.data, "CUDA_VISIBLE_DEVICES"));
	read_file(dir, "report.md", &b);
	assert_non_null(strstr(b.data, "| ncu | skipped | light mode |"));
	assert_non_null(strstr(b.data, "tracer overhead records: 3.000 ms"));
	assert_non_null(strstr(b.data, "sample standard deviation"));
	read_file(dir, "summary.json", &b);
	js = json_loads(b.data, 0, NULL);
	assert_non_null(js);
	assert_int_equal(json_integer_value(json_object_get(js, "schema_version")), LP_ANALYSIS_SCHEMA_VERSION);
	/* summary.json keeps the environment variables but not the search paths (env.json has them) */
	assert_non_null(json_object_get(json_object_get(json_object_get(js, "environment"), "environment"),
		"CUDA_VISIBLE_DEVICES"));
	assert_null(json_object_get(json_object_get(json_object_get(js, "environment"), "environment"), "PATH"));
	assert_string_equal(json_string_value(json_object_get(json_array_get(
		json_object_get(json_object_get(js, "kernels"), "rows"), 0), "kernel_name")), "nvjet_hsh_gemm");
	json_decref(js);
	/* determinism: a second write gives the same bytes */
	read_file(dir, "summary.json", &b);
	assert_int_equal(lp_report_write_all(dir, &a, &err), 0);
	read_file(dir, "summary.json", &b2);
	assert_string_equal(b.data, b2.data);
	read_file(dir, "stakeholder_summary.md", &b);
	lp_report_stakeholder_md(&a, &b2);
	lp_buf_reset(&b2);
	lp_report_stakeholder_md(&a, &b2);
	assert_string_equal(b.data, b2.data);
	lp_buf_release(&b);
	lp_buf_release(&b2);
	lp_analysis_release(&a);
}

static void test_cpu_run_reports(void **state)
{
	struct lp_profile p;
	struct lp_analysis a;
	struct lp_err err = LP_ERR_INIT;
	struct lp_analysis_input in;
	struct lp_buf b = LP_BUF_INIT;
	const char *dir = lp_test_tmpdir("reports_cpu");
	json_t *mdl = model();
	int it;
	(void)state;
	lp_profile_init(&p, "cpu");
	for (it = 0; it < 3; it++) {
		uint64_t t = (uint64_t)(100 * it) * MS;
		int32_t pf = R(&p, -1, "prefill", t, t + 10 * MS, 64), dec;
		R(&p, pf, "layer", t, t + 9 * MS, 0);
		dec = R(&p, -1, "decode_all", t + 10 * MS, t + 50 * MS, 0);
		R(&p, dec, "decode_step", t + 10 * MS, t + 30 * MS, 0);
		R(&p, dec, "decode_step", t + 30 * MS, t + 50 * MS, 0);
	}
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	in.model = mdl;
	in.prompt_len = 64;
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	assert_int_equal(a.batch, 1);                      /* payload 64 / prompt 64 */
	assert_false(a.perf[1].mfu.valid);
	assert_non_null(strstr(a.perf[1].mfu.why, "CPU run"));
	assert_int_equal(lp_report_write_all(dir, &a, &err), 0);
	read_file(dir, "kernels.md", &b);
	assert_non_null(strstr(b.data, "No GPU kernels were recorded in this run"));
	read_file(dir, "report.md", &b);
	assert_non_null(strstr(b.data, "n/a (CPU run)"));
	assert_non_null(strstr(b.data, "No phase statuses were recorded"));
	read_file(dir, "stakeholder_summary.md", &b);
	assert_non_null(strstr(b.data, "[cpu-run]"));
	assert_non_null(strstr(b.data, "| prefill | layer |"));
	lp_buf_release(&b);
	lp_analysis_release(&a);
	json_decref(mdl);
	lp_profile_release(&p);
}

static void test_phases_roundtrip(void **state)
{
	struct lp_phase_status ph[2] = { { "capture", "ok", "" }, { "nsys", "failed", "nsys not found" } }, *got;
	struct lp_err err = LP_ERR_INIT;
	const char *dir = lp_test_tmpdir("phases");
	size_t n;
	double ts, us;
	(void)state;
	assert_int_equal(lp_phases_load(dir, &got, &n, &ts, &us, &err), 0);
	assert_int_equal(n, 0);
	assert_int_equal(lp_phases_write(dir, ph, 2, 12.5, 12.0, &err), 0);
	assert_int_equal(lp_phases_load(dir, &got, &n, &ts, &us, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(got[1].status, "failed");
	assert_string_equal(got[1].reason, "nsys not found");
	assert_true(ts == 12.5 && us == 12.0);
	free(got);
}

/* `a`'s stages: `st` alone (the caller's), with its GPU idle `idle` of its latency. */
static void one_stage(struct lp_analysis *a, struct lp_stage *st, const char *name, enum lp_stage_kind kind,
	double idle)
{
	memset(st, 0, sizeof(*st));
	st->name = name;
	st->kind = kind;
	st->idle_frac = idle;
	a->stages.stages = st;
	a->stages.n_stages = 1;
}

/* `a`'s per-step check: done, `n` decode steps of both, `within` of them within 2%, the median and
 * largest |difference| (%), the largest's step and the median signed gap (ms) */
static struct lp_step_check *set_steps(struct lp_analysis *a, size_t n, size_t within, double median_pct,
	double max_pct, size_t max_at, double gap_ms)
{
	struct lp_step_check *c = &a->step_check;
	c->done = 1;
	c->ours = c->theirs = n;
	c->within = within;
	c->median_abs_pct = median_pct;
	c->max_abs_pct = max_pct;
	c->max_at = max_at;
	c->median_gap_ms = gap_ms;
	c->stage = LP_STAGE_DECODE;
	return c;
}

/* lp_fmt_step_check without the note that says `words` ("CPU-bound", "fixed offset") */
static void assert_no_step_note(const struct lp_analysis *a, const char *words)
{
	struct lp_buf t = LP_BUF_INIT;
	assert_int_equal(lp_fmt_step_check(a, &t), 0);
	assert_null(strstr(t.data, words));
	lp_buf_release(&t);
}

/* The per-step check's note (lp_fmt_step_check): most steps outside 2%, llmprof's lower by a host
 * dispatch's worth at the median, on a decode stage whose GPU sat idle (run 36's compiled loop on
 * the H200: 1 of 93 within 2%, median 8.1%, the GPU idle 96%) say why; a GPU-bound stage, steps
 * mostly within, or llmprof's higher do not. */
static void test_step_check_host_note(void **state)
{
	struct lp_analysis *a = calloc(1, sizeof(*a));
	struct lp_stage decode;
	struct lp_buf t = LP_BUF_INIT;
	struct lp_step_check *c;
	(void)state;
	assert_non_null(a);
	one_stage(a, &decode, "decode_all", LP_STAGE_DECODE, 0.957);
	c = set_steps(a, 93, 1, 8.12, 11.84, 33, 0.152);
	assert_int_equal(lp_fmt_step_check(a, &t), 0);
	assert_non_null(strstr(t.data, " Every decode step against the workload's own step times: 1 of 93 within 2% "
		"(median 8.12%, largest 11.84% at step 33). The steps ran CPU-bound (the GPU idle 96% of their stage)"));
	assert_non_null(strstr(t.data, "account for llmprof's steps being 0.152 ms lower at the median"));
	lp_buf_release(&t);
	decode.idle_frac = 0.4;
	assert_no_step_note(a, "CPU-bound");
	decode.idle_frac = 0.957;
	c->within = 60;
	assert_no_step_note(a, "CPU-bound");
	c->within = 1;
	c->median_gap_ms = -0.152;
	assert_no_step_note(a, "CPU-bound");
	c->median_gap_ms = 0.8; /* more than host dispatch */
	assert_no_step_note(a, "CPU-bound");
	a->stages.stages = NULL; /* the stage is this frame's */
	a->stages.n_stages = 0;
	free(a);
}

/* The per-step check's other note: most steps outside 2%, all by about the same small amount on a
 * busy GPU (HF's static cache on the H200, run 37: 55 of 381 within 2%, llmprof's 0.044 ms longer
 * at the median, 0.059 to 0.040 ms between the 10th and 90th percentile): a fixed offset where the
 * two clocks start and stop; a spread as wide as the offset, or steps mostly within, do not. */
static void test_step_check_offset_note(void **state)
{
	struct lp_analysis *a = calloc(1, sizeof(*a));
	struct lp_stage decode;
	struct lp_buf t = LP_BUF_INIT;
	struct lp_step_check *c;
	(void)state;
	assert_non_null(a);
	one_stage(a, &decode, "decode_all", LP_STAGE_DECODE, 0.12);
	c = set_steps(a, 381, 55, 2.31, 3.73, 228, -0.0444);
	c->gap_p10_ms = -0.0588;
	c->gap_p90_ms = -0.0401;
	assert_int_equal(lp_fmt_step_check(a, &t), 0);
	assert_non_null(strstr(t.data, "55 of 381 within 2% (median 2.31%, largest 3.73% at step 228). llmprof's steps "
		"are 0.044 ms longer than the workload's at the median, and by about as much in every step (-0.059 to "
		"-0.040 ms, the workload's minus llmprof's, 10th to 90th percentile): a fixed offset"));
	assert_null(strstr(t.data, "CPU-bound"));
	lp_buf_release(&t);
	c->gap_p10_ms = -0.1; /* a spread wider than the offset: steps that differ */
	assert_no_step_note(a, "fixed offset");
	c->gap_p10_ms = -0.0588;
	c->within = 300;
	assert_no_step_note(a, "fixed offset");
	a->stages.stages = NULL; /* the stage is this frame's */
	a->stages.n_stages = 0;
	free(a);
}

/* One self-check row: llmprof's `ours` against the workload's `theirs` for `stage`. */
static void set_check(struct lp_self_check *c, const char *what, int stage, double ours, double theirs)
{
	c->what = what;
	c->stage = stage;
	c->ours = ours;
	c->theirs = theirs;
	c->diff = (ours - theirs) / theirs;
}

/* A self-check over its tolerance on a CPU-bound stage: the compiled loop of run 35 (its prefill
 * 3.09 ms against the program's 3.33, GPU idle 97.7%) gets the sentence on the host time a
 * program's own timer holds; a GPU-bound stage, a gap of a millisecond, or llmprof's number the
 * higher, do not. */
static void test_check_host_note(void **state)
{
	struct lp_analysis *a = calloc(1, sizeof(*a));
	struct lp_stage prefill;
	struct lp_buf t = LP_BUF_INIT;
	(void)state;
	assert_non_null(a);
	one_stage(a, &prefill, "prefill", LP_STAGE_PREFILL, 0.977);
	a->n_checks = 1;
	set_check(&a->checks[0], "time to first token (ms)", LP_STAGE_PREFILL, 3.093, 3.330);
	assert_int_equal(lp_fmt_check_host(a, &t), 0);
	assert_non_null(strstr(t.data, " The prefill ran CPU-bound (its GPU idle 98% of it)"));
	assert_non_null(strstr(t.data, "account for llmprof's time to first token being 0.237 ms lower"));
	lp_buf_release(&t);
	prefill.idle_frac = 0.5; /* GPU-bound enough: the events time the GPU's work */
	assert_int_equal(lp_fmt_check_host(a, &t), 0);
	assert_int_equal(t.len, 0);
	prefill.idle_frac = 0.977;
	/* 1 ms: more than host dispatch */
	set_check(&a->checks[0], "time to first token (ms)", LP_STAGE_PREFILL, 2.3, 3.330);
	assert_int_equal(lp_fmt_check_host(a, &t), 0);
	assert_int_equal(t.len, 0);
	/* llmprof higher: not what the program's timer adds */
	set_check(&a->checks[0], "time to first token (ms)", LP_STAGE_PREFILL, 3.6, 3.330);
	assert_int_equal(lp_fmt_check_host(a, &t), 0);
	assert_int_equal(t.len, 0);
	/* a check reads the idle share of its own stage: the mixed forwards', not the prefill's */
	{
		struct lp_stage two[2];
		two[0] = prefill;
		two[0].idle_frac = 0.5;
		memset(&two[1], 0, sizeof(two[1]));
		two[1].name = "mixed";
		two[1].kind = LP_STAGE_MIXED;
		two[1].idle_frac = 0.95;
		a->stages.stages = two;
		a->stages.n_stages = 2;
		set_check(&a->checks[0], "mixed forward latency (ms)", LP_STAGE_MIXED, 2.9, 3.2);
		assert_int_equal(lp_fmt_check_host(a, &t), 0);
		assert_non_null(strstr(t.data, " The mixed ran CPU-bound (its GPU idle 95% of it)"));
		assert_non_null(strstr(t.data, "llmprof's mixed forward latency being 0.300 ms lower"));
		lp_buf_release(&t);
		a->checks[0].stage = -1; /* ms per step, tokens/s: no stage latency */
		assert_int_equal(lp_fmt_check_host(a, &t), 0);
		assert_int_equal(t.len, 0);
	}
	lp_buf_release(&t);
	a->stages.stages = NULL;
	a->stages.n_stages = 0;
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_run_reports),
		cmocka_unit_test(test_cpu_run_reports),
		cmocka_unit_test(test_phases_roundtrip),
		cmocka_unit_test(test_check_host_note),
		cmocka_unit_test(test_step_check_host_note),
		cmocka_unit_test(test_step_check_offset_note),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
