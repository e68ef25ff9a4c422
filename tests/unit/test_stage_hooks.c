/* test_stage_hooks.c: stage hooks and the stages they feed (issue 23): the `stages.hooks` grammar
 * (src/config/stage_hooks.c) with good and bad entries, the schema's one-line errors naming the key,
 * the engine presets of conf/stages/ (stages=sglang | vllm | hf); the `mixed` stage with its own
 * statistics and tokens/s from payloads; decode steps outside any decode range analysed as steps
 * (per-step latency distribution, tokens/s from their payloads, a nested step staying part of its
 * step); and the analysis of hook accounts: calls summed over processes, a warning per hook that
 * never matched, written into report.md and summary.json. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/stages.h"
#include "config/config.h"
#include "config/stage_hooks.h"
#include "core/buf.h"
#include "report/reports.h"

#define MS 1000000ull

static int32_t R(struct lp_profile *p, int32_t parent, const char *name, uint64_t s, uint64_t e, int64_t payload)
{
	int32_t r = lp_test_range(p, parent, "LLM", name, s, e);
	if (payload >= 0) {
		p->ranges[r].payload_type = LP_PAYLOAD_U64;
		p->ranges[r].payload.u64 = (uint64_t)payload;
	}
	return r;
}

static void K(struct lp_profile *p, int32_t range, uint64_t s, uint64_t e)
{
	lp_test_kernel(p, range, "gemm", s, e)->launch_ns = s > 100 ? s - 100 : 1;
}

static void test_hook_grammar(void **state)
{
	static const char *const good[] = {
		"sglang.srt.model_executor.model_runner:ModelRunner.forward_decode=decode_step@arg1.batch_size",
		"pkg:run=prefill", " pkg : run = warmup ", "m:A.B.f=mixed@len(kw.seqs)", "m:f=decode_all@arg0.shape[0]",
		"m:f=decode_step@arg2[-1].x", "__main__:Server.step=decode_step@ len( arg1 ) ", NULL,
	};
	static const struct {
		const char *entry, *why;
	} bad[] = {
		{ "no_colon=prefill", "expected MODULE:QUALNAME=STAGE" },
		{ "m:f", "expected MODULE:QUALNAME=STAGE" },
		{ "m:f=decode", "unknown stage 'decode'" },
		{ "m-x:f=prefill", "'m-x' is not a module name" },
		{ "m:f()=prefill", "'f()' is not a function" },
		{ "m:a.b.c.d.e.f.g.h.i=prefill", "is not a function" },
		{ "m:f=prefill@", "empty payload" },
		{ "m:f=prefill@eval(arg1)", "must start with argN or kw.NAME" },
		{ "m:f=prefill@arg1.__class__", "unexpected '.__class__'" },
		{ "m:f=prefill@arg1.numel()", "unexpected '()'" },
		{ "m:f=prefill@len(arg1", "must start with argN" },
		{ "m:f=prefill@arg1+arg2", "unexpected '+arg2'" },
		{ "m:f=prefill@arg1.a.a.a.a.a.a.a.a.a", "more than 8 accessors" },
		{ "m:f=prefill@arg123", "unexpected '3'" },
	};
	char why[200];
	size_t i;
	(void)state;
	for (i = 0; good[i]; i++) {
		why[0] = '\0';
		if (lp_stage_hook_check(good[i], why, sizeof(why)) != 0)
			fail_msg("'%s' refused: %s", good[i], why);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(lp_stage_hook_check(bad[i].entry, why, sizeof(why)), -1);
		if (!strstr(why, bad[i].why))
			fail_msg("'%s': got '%s', expected '%s'", bad[i].entry, why, bad[i].why);
		assert_null(strchr(why, '\n'));
	}
}

static size_t hooks_of(const char *const *ovr, size_t n, const char **first)
{
	struct lp_config cfg;
	struct lp_err err = LP_ERR_INIT;
	const json_t *h;
	size_t k;
	if (lp_config_load(&cfg, LP_CONF_DIR, ovr, n, &err) < 0)
		fail_msg("config: %s", err.msg);
	h = lp_config_get(&cfg, "stages.hooks");
	assert_true(json_is_array(h));
	k = json_array_size(h);
	*first = NULL;
	if (k) {
		static char buf[512];
		snprintf(buf, sizeof(buf), "%s", json_string_value(json_array_get(h, 0)));
		*first = buf;
	}
	assert_true(json_is_null(lp_config_get(&cfg, "stages.mixed")));
	lp_config_release(&cfg);
	return k;
}

static void test_presets_and_schema(void **state)
{
	static const char *const sg[] = { "stages=sglang" }, *const vl[] = { "stages=vllm" }, *const hf[] = { "stages=hf" };
	static const char *const both[] = { "stages=vllm", "stages.hooks=[m:Engine.step=mixed@len(arg1)]" };
	static const char *const bad[] = { "stages.hooks=[m:f=prefill, m:f=decode]" };
	static const char *const notlist[] = { "stages.hooks=m:f=prefill" };
	static const char *const nope[] = { "stages=nope" };
	struct lp_config cfg;
	struct lp_err err = LP_ERR_INIT;
	const char *first;
	(void)state;
	assert_int_equal(hooks_of(NULL, 0, &first), 0);
	assert_int_equal(hooks_of(sg, 1, &first), 2);
	assert_non_null(strstr(first, "sglang.srt.model_executor.model_runner:ModelRunner.forward_extend=prefill"));
	assert_int_equal(hooks_of(vl, 1, &first), 1);
	assert_non_null(strstr(first, "=mixed@"));
	assert_int_equal(hooks_of(hf, 1, &first), 1);
	assert_int_equal(hooks_of(both, 2, &first), 1);   /* the override wins over the preset */
	assert_string_equal(first, "m:Engine.step=mixed@len(arg1)");

	assert_int_equal(lp_config_load(&cfg, LP_CONF_DIR, bad, 1, &err), -1);
	assert_int_equal(err.kind, LP_EUSAGE);
	assert_string_equal(err.msg, "invalid entry 'm:f=decode' in 'stages.hooks': unknown stage 'decode' (expected "
				     "prefill, decode_step, decode_all, mixed or warmup)");
	assert_null(strchr(err.msg, '\n'));
	err = (struct lp_err)LP_ERR_INIT;
	assert_int_equal(lp_config_load(&cfg, LP_CONF_DIR, notlist, 1, &err), -1);
	assert_non_null(strstr(err.msg, "'stages.hooks'"));
	err = (struct lp_err)LP_ERR_INIT;
	assert_int_equal(lp_config_load(&cfg, LP_CONF_DIR, nope, 1, &err), -1);
	assert_non_null(strstr(err.msg, "unknown option 'nope' for group 'stages'"));
}

/* A server: three iterations of [prefill (payload 100 tokens), mixed (40 tokens), two free decode
 * steps (8 tokens each)], each range 10 * k ms long with a kernel ending inside it. */
static void build_server(struct lp_profile *p, int nested_step)
{
	int i;
	for (i = 0; i < 3; i++) {
		uint64_t t = (uint64_t)(1000 * i) * MS;
		int32_t pf = R(p, -1, "prefill", t, t + 10 * MS, 100);
		int32_t mx = R(p, -1, "mixed", t + 100 * MS, t + (120 + 10 * (uint64_t)i) * MS, 40);
		int32_t s0 = R(p, -1, "decode_step", t + 200 * MS, t + 210 * MS, 8);
		int32_t s1 = R(p, -1, "decode_step", t + 300 * MS, t + (320 + 10 * (uint64_t)i) * MS, 8);
		K(p, pf, t + 1 * MS, t + 9 * MS);
		K(p, mx, t + 101 * MS, t + 119 * MS);
		K(p, s0, t + 201 * MS, t + 209 * MS);
		K(p, s1, t + 301 * MS, t + 319 * MS);
		if (nested_step)
			K(p, R(p, s1, "decode_step", t + 301 * MS, t + 302 * MS, 8), t + 301 * MS, t + 302 * MS);
	}
}

static void test_mixed_and_free_steps(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_stage *pf, *mx, *fs;
	int nested;
	(void)state;
	for (nested = 0; nested < 2; nested++) {
		lp_profile_init(&p, "synthetic");
		build_server(&p, nested);
		assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
		assert_int_equal(st.n_stages, 3);
		assert_false(st.top_level_fallback);
		assert_string_equal(st.stages[0].name, "prefill");
		assert_string_equal(st.stages[1].name, "mixed");
		assert_string_equal(st.stages[2].name, "decode_step");
		pf = lp_stages_find(&st, LP_STAGE_PREFILL);
		mx = lp_stages_find(&st, LP_STAGE_MIXED);
		fs = lp_stages_find(&st, LP_STAGE_STEPS);
		assert_null(lp_stages_find(&st, LP_STAGE_DECODE));
		assert_non_null(pf);
		assert_non_null(mx);
		assert_non_null(fs);
		/* mixed: 20, 30, 40 ms; 120 tokens in 90 ms */
		assert_int_equal(mx->n_iters, 3);
		assert_true(fabs(mx->lat_ms.mean - 30.0) < 1e-9);
		assert_int_equal(mx->tokens_total, 120);
		assert_true(fabs(mx->tokens_per_s - 120.0 / 0.090) < 1e-6);
		assert_int_equal(mx->n_step_lat, 0);
		/* prefill: 300 tokens in 30 ms */
		assert_true(fabs(pf->tokens_per_s - 10000.0) < 1e-6);
		/* free steps: 10, 20, 10, 30, 10, 40 ms -> mean 20, p50 10, p90 40, p99 40; 48 tokens in 120 ms */
		assert_int_equal(fs->n_iters, 6);
		assert_int_equal(fs->n_step_lat, 6);
		assert_true(fabs(fs->step_ms.mean - 20.0) < 1e-9);
		assert_true(fabs(fs->step_p50 - 10.0) < 1e-9);
		assert_true(fabs(fs->step_p90 - 40.0) < 1e-9);
		assert_true(fabs(fs->step_p99 - 40.0) < 1e-9);
		assert_true(fabs(fs->tokens_per_s - 400.0) < 1e-6);
		assert_true(fs->steps.mean == 0.0);   /* a step nested in a step is part of it: no iteration, no step */
		lp_stage_set_release(&st);
		lp_profile_release(&p);
	}
}

static void test_steps_inside_decode_all_stay_there(void **state)
{
	struct lp_profile p;
	struct lp_stage_set st;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_stage *dec, *fs;
	int32_t d;
	(void)state;
	lp_profile_init(&p, "synthetic");
	d = R(&p, -1, "decode_all", 0, 30 * MS, -1);
	K(&p, R(&p, d, "decode_step", 0, 10 * MS, 0), 1 * MS, 9 * MS);
	K(&p, R(&p, d, "decode_step", 10 * MS, 20 * MS, 1), 11 * MS, 19 * MS);
	K(&p, R(&p, -1, "decode_step", 100 * MS, 105 * MS, -1), 101 * MS, 104 * MS);   /* no payload */
	assert_int_equal(lp_stages_compute(&p, &st, &err), 0);
	dec = lp_stages_find(&st, LP_STAGE_DECODE);
	fs = lp_stages_find(&st, LP_STAGE_STEPS);
	assert_non_null(dec);
	assert_non_null(fs);
	assert_int_equal(dec->n_step_lat, 2);
	assert_true(dec->steps.mean == 2.0);
	assert_int_equal(fs->n_iters, 1);
	assert_true(isnan(fs->tokens_per_s));
	assert_true(isnan(dec->tokens_per_s));
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

static json_t *account(const char *hook, int imported, int found, int calls, const char *error)
{
	json_t *h = json_pack("{s:s, s:b, s:b, s:i, s:i, s:s?}", "hook", hook, "module_imported", imported, "found", found,
		"calls", calls, "payload_misses", 0, "error", error);
	assert_non_null(h);
	return h;
}

static void test_analysis_and_reports(void **state)
{
	struct lp_profile p;
	struct lp_analysis_input in;
	struct lp_analysis a;
	struct lp_err err = LP_ERR_INIT;
	json_t *cfg = json_pack("[s, s, s, s]", "srv:Engine.prefill=prefill@arg1.n", "srv:Engine.mixed=mixed@arg1.n",
		"srv:Engine.decode=decode_step@len(arg1.seqs)", "other:Nope.forward=prefill");
	json_t *accs = json_array(), *p1 = json_array(), *p2 = json_array(), *sum, *hooks;
	struct lp_buf md = LP_BUF_INIT, path = LP_BUF_INIT;
	const char *dir = lp_test_tmpdir("stage_hooks_report");
	size_t i;
	(void)state;
	/* two processes: a launcher that never imported srv, a worker that ran it */
	json_array_append_new(p1, account("srv:Engine.decode=decode_step@len(arg1.seqs)", 0, 0, 0, NULL));
	json_array_append_new(p1, account("other:Nope.forward=prefill", 0, 0, 0, NULL));
	json_array_append_new(p2, account("srv:Engine.prefill=prefill@arg1.n", 1, 1, 3, NULL));
	json_array_append_new(p2, account("srv:Engine.mixed=mixed@arg1.n", 1, 1, 3, NULL));
	json_array_append_new(p2, account("srv:Engine.decode=decode_step@len(arg1.seqs)", 1, 1, 6, NULL));
	json_array_append_new(p2, account("other:Nope.forward=prefill", 1, 0, 0, "AttributeError: module 'other' has no attribute 'Nope'"));
	json_array_append_new(accs, p1);
	json_array_append_new(accs, p2);
	lp_profile_init(&p, "synthetic");
	build_server(&p, 0);
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	in.hooks_config = cfg;
	in.hook_accounts = accs;
	in.own.valid = 1;
	in.own.prefill_ms = 10.0;
	in.own.decode_ms = in.own.tokens_per_s = -1;
	in.own.decode_ms_per_step = 20.2;    /* +1% */
	in.own.mixed_ms = 25.0;              /* ours 30: +20% */
	assert_int_equal(lp_analyze(&in, &a, &err), 0);
	assert_int_equal(a.n_hooks, 4);
	assert_int_equal(a.n_hook_accounts, 2);
	assert_int_equal(a.n_hook_warnings, 1);
	assert_int_equal(a.hooks[2].calls, 6);
	assert_int_equal(a.hooks[2].processes, 2);
	assert_int_equal(a.hooks[2].found, 1);
	assert_null(a.hooks[2].warning);
	assert_string_equal(a.hooks[3].warning, "AttributeError: module 'other' has no attribute 'Nope'");
	/* decode from the free steps */
	assert_true(a.decode_step_ms.valid && fabs(a.decode_step_ms.value - 20.0) < 1e-9);
	assert_true(a.decode_tokens_per_s.valid && fabs(a.decode_tokens_per_s.value - 400.0) < 1e-6);
	assert_int_equal(a.n_checks, 3);
	assert_string_equal(a.checks[2].what, "mixed forward latency (ms)");
	assert_true(fabs(a.checks[2].diff - 0.2) < 1e-9);
	assert_true(a.check_failed);

	assert_int_equal(lp_report_write_all(dir, &a, &err), 0);
	lp_buf_addf(&path, "%s/report.md", dir);
	lp_test_read(path.data, &md);
	if (!strstr(md.data, "Warning: stage hook `other:Nope.forward=prefill` never matched: AttributeError"))
		fail_msg("no hook warning in report.md:\n%s", md.data);
	assert_non_null(strstr(md.data, "`srv:Engine.decode=decode_step@len(arg1.seqs)` 6 calls in 1 process"));
	assert_non_null(strstr(md.data, "| mixed | 3 |"));
	assert_non_null(strstr(md.data, "1333.3 tokens/s"));
	assert_non_null(strstr(md.data, "400.0 tokens/s, 20.000 ms/step"));
	lp_buf_reset(&path);
	lp_buf_addf(&path, "%s/summary.json", dir);
	sum = json_load_file(path.data, 0, NULL);
	assert_non_null(sum);
	hooks = json_object_get(sum, "stage_hooks");
	assert_int_equal(json_array_size(hooks), 4);
	assert_true(json_is_false(json_object_get(json_array_get(hooks, 3), "matched")));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(hooks, 2), "calls")), 6);
	for (i = 0; i < json_array_size(json_object_get(sum, "stages")); i++) {
		json_t *s = json_array_get(json_object_get(sum, "stages"), i);
		if (!strcmp(json_string_value(json_object_get(s, "name")), "decode_step")) {
			assert_string_equal(json_string_value(json_object_get(s, "kind")), "decode_steps");
			assert_true(fabs(json_real_value(json_object_get(s, "tokens_per_s")) - 400.0) < 1e-6);
			assert_true(fabs(json_real_value(json_object_get(json_object_get(s, "step_latency_ms"), "p90")) - 40.0) < 1e-9);
		}
	}
	json_decref(sum);
	lp_buf_release(&md);
	lp_buf_release(&path);
	lp_analysis_release(&a);
	lp_profile_release(&p);
	json_decref(cfg);
	json_decref(accs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hook_grammar),
		cmocka_unit_test(test_presets_and_schema),
		cmocka_unit_test(test_mixed_and_free_steps),
		cmocka_unit_test(test_steps_inside_decode_all_stay_there),
		cmocka_unit_test(test_analysis_and_reports),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
