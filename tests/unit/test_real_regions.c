/* test_real_regions.c: the region model and report on REAL ncu raw pages captured on an H200
 * (tests/fixtures/regions/h200_*, README there): kernel replay with A / A::A1 / B stacks from
 * regions_demo and PyTorch, the reference workload's LLM@prefill / LLM@decode_all, range and
 * app-range results, overlapping start/end ranges, an include that matched nothing, and the
 * no-kernels case with the ranges seen by a real nsys capture. Expected numbers are the
 * gpu__time_duration.sum cells of the CSVs added up by hand (python), and agree with what the
 * lead's run printed (tests/fixtures/regions/README.md). report.md is compared with golden files
 * (tests/fixtures/golden/h200_regions_*.md; LP_UPDATE_GOLDEN=1 rewrites them). */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/regions.h"
#include "analyze/regions_args.h"
#include "collect/ncu.h"
#include "core/fs.h"
#include "parse/nsys_sqlite.h"
#include "report/regions_report.h"
#include "run/regions_run.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const METRICS[] = { "dram__bytes_read.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed" };

struct loaded {
	struct lp_regions_spec spec;
	struct lp_regions r;
	struct lp_region_scope s;
};

static void load(struct loaded *L, const char *fixture, const char *const *inc, size_t n_inc)
{
	struct lp_err err = LP_ERR_INIT;
	memset(L, 0, sizeof(*L));
	L->spec.include = inc;
	L->spec.n_include = n_inc;
	L->spec.metrics = METRICS;
	L->spec.n_metrics = N(METRICS);
	if (lp_regions_init(&L->r, &L->spec, &err) < 0 ||
			lp_regions_load_ncu_raw(&L->r, lp_test_fixture(fixture), &err) < 0 ||
			lp_regions_finish(&L->r, &err) < 0 ||
			lp_regions_scope(&L->r, LP_REGION_SCOPE_AGGREGATE, 0, -1, &L->s, &err) < 0)
		fail_msg("%s: %s", fixture, err.msg);
}

static void unload(struct loaded *L)
{
	lp_regions_scope_release(&L->s);
	lp_regions_release(&L->r);
}

static const struct lp_region_stats *stats(const struct loaded *L, const char *name)
{
	size_t i;
	for (i = 0; i < L->r.n_nodes; i++)
		if (!strcmp(L->r.nodes[i].name, name))
			return &L->s.stats[i];
	fail_msg("no region '%s'", name);
	return NULL;
}

static int32_t parent_of(const struct loaded *L, const char *name)
{
	size_t i;
	for (i = 0; i < L->r.n_nodes; i++)
		if (!strcmp(L->r.nodes[i].name, name))
			return L->r.nodes[i].parent;
	return -2;
}

static const char *parent_name(const struct loaded *L, const char *name)
{
	int32_t p = parent_of(L, name);
	return p >= 0 ? L->r.nodes[p].name : "";
}

static void assert_ms(double got, double want)
{
	if (fabs(got - want) > 1e-9)
		fail_msg("got %.9f ms, want %.9f ms", got, want);
}

/* calls of the kernel whose short name is `sn` among the region's inclusive kernels */
static uint64_t calls_of(const struct lp_region_stats *st, const char *sn)
{
	size_t i;
	for (i = 0; i < st->n_kernels; i++)
		if (!strcmp(st->kernels[i].rec.short_name, sn))
			return st->kernels[i].rec.calls;
	return 0;
}

/* Every present region: inclusive == exclusive + sum(children inclusive) within 1%, and flagged so. */
static void assert_reconciled(const struct loaded *L)
{
	size_t i, j;
	for (i = 0; i < L->r.n_nodes; i++) {
		const struct lp_region_stats *st = &L->s.stats[i];
		double child = 0;
		if (!st->present)
			continue;
		for (j = 0; j < L->r.n_nodes; j++)
			if (L->r.nodes[j].parent == (int32_t)i && L->s.stats[j].present)
				child += L->s.stats[j].incl_ms;
		if (fabs(st->incl_ms - (st->excl_ms + child)) > 0.01 * st->incl_ms || !st->reconciled)
			fail_msg("'%s': inclusive %.6f != exclusive %.6f + children %.6f", L->r.nodes[i].name,
				st->incl_ms, st->excl_ms, child);
	}
}

static void test_demo_kernel_replay(void **state)
{
	static const char *const inc[] = { "A/", "B/" };
	struct loaded L;
	const struct lp_region_stats *a, *a1, *b;
	(void)state;
	load(&L, "regions/h200_demo_kernel_raw.csv", inc, N(inc));
	assert_int_equal(L.r.results_read, 7);
	assert_int_equal(L.r.n_nodes, 3);
	a = stats(&L, "A");
	a1 = stats(&L, "A::A1");
	b = stats(&L, "B");
	assert_string_equal(parent_name(&L, "A::A1"), "A");
	assert_int_equal(parent_of(&L, "A"), -1);
	assert_int_equal(parent_of(&L, "B"), -1);
	/* only the kernels launched inside each region: k_a_scale x2, k_a_add, k_a1_mul x2 (in A1) */
	assert_int_equal(a->kernel_count, 5);
	assert_int_equal(a->kernel_count_excl, 3);
	assert_int_equal(a->n_kernels, 3);
	assert_int_equal(calls_of(a, "k_a_scale"), 2);
	assert_int_equal(calls_of(a, "k_a_add"), 1);
	assert_int_equal(calls_of(a, "k_a1_mul"), 2);
	assert_int_equal(a1->n_kernels, 1);
	assert_int_equal(calls_of(a1, "k_a1_mul"), 2);
	assert_int_equal(b->n_kernels, 2);
	assert_int_equal(calls_of(b, "k_b_scale"), 1);
	assert_int_equal(calls_of(b, "k_b_partial"), 1);
	assert_int_equal(calls_of(b, "k_a_scale"), 0);
	/* 4704 + 5376 + 5184 + 5312 + 4800 ns; A1 5184 + 5312; B 4736 + 7392 */
	assert_ms(a->incl_ms, 0.025376);
	assert_ms(a1->incl_ms, 0.010496);
	assert_ms(a->excl_ms, 0.025376 - 0.010496);
	assert_ms(b->incl_ms, 0.012128);
	assert_ms(L.s.total_ms, 0.025376 + 0.012128);
	assert_reconciled(&L);
	assert_int_equal(L.r.inc_hits[0], 5);
	assert_int_equal(L.r.inc_hits[1], 2);
	unload(&L);
}

static void test_torch_kernel_replay(void **state)
{
	static const char *const inc[] = { "A/", "B/" };
	struct loaded L;
	const struct lp_region_stats *a, *a1, *b;
	(void)state;
	load(&L, "regions/h200_torch_kernel_raw.csv", inc, N(inc));
	a = stats(&L, "A");
	a1 = stats(&L, "A::A1");
	b = stats(&L, "B");
	assert_string_equal(parent_name(&L, "A::A1"), "A");
	/* x @ w in A; (y @ w) and relu in A1; cast, scale and sum in B */
	assert_int_equal(a->kernel_count, 3);
	assert_int_equal(a->kernel_count_excl, 1);
	assert_int_equal(calls_of(a, "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT"), 2);
	assert_int_equal(a1->kernel_count, 2);
	assert_int_equal(calls_of(a1, "vectorized_elementwise_kernel"), 1);
	assert_int_equal(b->kernel_count, 3);
	assert_int_equal(calls_of(b, "reduce_kernel"), 1);
	assert_int_equal(calls_of(b, "unrolled_elementwise_kernel"), 1);
	assert_ms(a->incl_ms, 0.017376);
	assert_ms(a1->incl_ms, 0.010336);
	assert_ms(b->incl_ms, 0.016704);
	assert_reconciled(&L);
	unload(&L);
}

static void test_llm_kernel_replay(void **state)
{
	static const char *const inc[] = { "LLM@prefill/", "LLM@decode_all/" };
	static const char *const prefill_children[] = { "LLM@prefill::embed", "LLM@prefill::layer",
		"LLM@prefill::final_norm", "LLM@prefill::lm_head", "LLM@prefill::sample" };
	static const char *const layer_children[] = { "attn_norm", "qkv", "rope", "attention", "o_proj",
		"mlp_norm", "mlp" };
	struct loaded L;
	const struct lp_region_stats *p, *d, *ds;
	char name[96];
	size_t i;
	(void)state;
	load(&L, "regions/h200_llm_kernel_raw.csv", inc, N(inc));
	assert_int_equal(L.r.results_read, 118);
	assert_int_equal(L.r.n_nodes, 15);
	p = stats(&L, "LLM@prefill");
	d = stats(&L, "LLM@decode_all");
	ds = stats(&L, "LLM@decode_all::decode_step");
	assert_int_equal(p->kernel_count, 22);
	assert_int_equal(p->kernel_count_excl, 0);
	assert_int_equal(d->kernel_count, 96);   /* 4 decode steps x 24 kernels, CUDA-graph nodes included */
	assert_int_equal(d->kernel_count_excl, 0);
	assert_int_equal(ds->kernel_count, 96);
	assert_ms(p->incl_ms, 0.119680);
	assert_ms(d->incl_ms, 0.528608);
	assert_ms(ds->incl_ms, 0.528608);
	assert_ms(stats(&L, "LLM@prefill::layer::attention")->incl_ms, 0.054176);
	assert_int_equal(calls_of(ds, "k_attn_merge"), 8);
	assert_int_equal(calls_of(p, "k_attn_merge"), 0);
	for (i = 0; i < N(prefill_children); i++)
		assert_string_equal(parent_name(&L, prefill_children[i]), "LLM@prefill");
	for (i = 0; i < N(layer_children); i++) {
		snprintf(name, sizeof(name), "LLM@prefill::layer::%s", layer_children[i]);
		assert_string_equal(parent_name(&L, name), "LLM@prefill::layer");
		assert_int_equal(stats(&L, name)->kernel_count, strcmp(layer_children[i], "mlp") ? 2 : 6);
	}
	assert_string_equal(parent_name(&L, "LLM@decode_all::decode_step"), "LLM@decode_all");
	assert_reconciled(&L);
	unload(&L);
}

static void test_range_results(void **state)
{
	static const char *const ab[] = { "A/", "B/" };
	static const char *const llm[] = { "LLM@prefill/", "LLM@decode_all/" };
	static const struct { const char *file; const char *const *inc; double a_ms, b_ms; } cases[] = {
		{ "regions/h200_demo_range_raw.csv", ab, 0.545632, 0.276576 },
		{ "regions/h200_demo_apprange_raw.csv", ab, 1.608096, 0.746016 },
		{ "regions/h200_torch_apprange_raw.csv", ab, 254.875232, 112.027360 },
		{ "regions/h200_llm_apprange_raw.csv", llm, 2.018624, 1.114048 },
	};
	size_t i;
	(void)state;
	for (i = 0; i < N(cases); i++) {
		struct loaded L;
		const struct lp_region_stats *a, *b;
		load(&L, cases[i].file, cases[i].inc, 2);
		assert_int_equal(L.r.results_read, 2);
		assert_int_equal(L.r.n_nodes, 2);   /* one range result per region, no nested regions */
		a = stats(&L, L.r.nodes[0].name);
		b = stats(&L, L.r.nodes[1].name);
		if (!strcmp(L.r.nodes[0].name, "B") || !strcmp(L.r.nodes[0].name, "LLM@decode_all")) {
			const struct lp_region_stats *t = a;
			a = b;
			b = t;
		}
		assert_int_equal(a->range_instances, 1);
		assert_int_equal(a->kernel_count, 0);
		assert_ms(a->incl_ms, cases[i].a_ms);
		assert_ms(a->excl_ms, cases[i].a_ms);
		assert_ms(b->incl_ms, cases[i].b_ms);
		assert_reconciled(&L);
		unload(&L);
	}
}

static void test_startend_overlap(void **state)
{
	static const char *const inc[] = { "S1", "S2" };
	struct loaded L;
	const struct lp_region_stats *s1, *s2;
	(void)state;
	load(&L, "regions/h200_demo_startend_raw.csv", inc, N(inc));
	assert_int_equal(L.r.results_read, 12);
	s1 = stats(&L, "S1");
	s2 = stats(&L, "S2");
	assert_int_equal(s1->kernel_count, 4);
	assert_int_equal(s2->kernel_count, 11);
	assert_ms(s1->incl_ms, 0.113088);
	assert_ms(s2->incl_ms, 0.697152);
	assert_int_equal(calls_of(s2, "k_outside"), 1);   /* outside every push/pop range, inside S2 */
	/* overlapping: each result once in the total */
	assert_ms(L.s.total_ms, 0.702016);
	unload(&L);
}

/* A::A1/ in app-range: ncu gives no nested range result, so the expression matches nothing */
static void test_no_match_apprange(void **state)
{
	static const char *const inc[] = { "A/", "A::A1/", "B/" };
	struct loaded L;
	size_t i;
	int saw_a = 0, saw_b = 0, saw_s1 = 0;
	(void)state;
	load(&L, "regions/h200_demo_apprange_a1_raw.csv", inc, N(inc));
	assert_int_equal(L.r.inc_hits[0], 1);
	assert_int_equal(L.r.inc_hits[1], 0);
	assert_int_equal(L.r.inc_hits[2], 1);
	for (i = 0; i < L.r.n_seen; i++) {
		saw_a |= !strcmp(L.r.seen[i], "A/");
		saw_b |= !strcmp(L.r.seen[i], "B/");
		saw_s1 |= !strcmp(L.r.seen[i], "S1");
	}
	assert_true(saw_a && saw_b && saw_s1);
	assert_ms(stats(&L, "A")->incl_ms, 1.763392);
	unload(&L);
}

/* ---- the report folder, against golden report.md files ---- */

static json_t *preset(const char *mode, const char *const *inc, size_t n)
{
	json_t *p = json_object(), *reg = json_object(), *kern = json_object(), *in = json_array(), *met = json_array();
	size_t i;
	for (i = 0; i < n; i++)
		json_array_append_new(in, json_string(inc[i]));
	for (i = 0; i < N(METRICS); i++)
		json_array_append_new(met, json_string(METRICS[i]));
	json_object_set_new(kern, "include", json_array());
	json_object_set_new(kern, "exclude", json_array());
	json_object_set_new(reg, "include", in);
	json_object_set_new(reg, "exclude", json_array());
	json_object_set_new(reg, "kernels", kern);
	json_object_set_new(reg, "sections", json_array());
	json_object_set_new(reg, "metrics", met);
	json_object_set_new(p, "name", json_string("regions"));
	json_object_set_new(p, "replay_mode", json_string(mode));
	json_object_set_new(p, "regions", reg);
	return p;
}

static void run_report(const char *dir, const char *raw, const char *mode, const char *const *inc, size_t n,
	const char *note, const struct lp_profile *capture, struct lp_regions_outcome *o)
{
	struct lp_regions_run run;
	struct lp_err err = LP_ERR_INIT;
	json_t *p = preset(mode, inc, n);
	memset(&run, 0, sizeof(run));
	run.run_dir = dir;
	run.ncu_preset = p;
	run.raw_csv = raw ? lp_test_fixture(raw) : NULL;
	run.replay_note = note;
	run.capture = capture;
	run.generated_at = "2025-11-21T00:00:00Z";
	if (lp_regions_run_report(&run, o, &err) < 0)
		fail_msg("%s: %s", raw ? raw : "(none)", err.msg);
	json_decref(p);
}

/* `in` with the absolute fixtures folder written as "tests/fixtures/" (golden files are portable) */
static void relative_paths(const char *in, struct lp_buf *out)
{
	char root[4096];
	size_t n;
	const char *p;
	snprintf(root, sizeof(root), "%s", lp_test_fixture("x"));
	n = strlen(root) - 1;
	root[n] = '\0';
	lp_buf_reset(out);
	while ((p = strstr(in, root)) != NULL) {
		lp_buf_add(out, in, (size_t)(p - in));
		lp_buf_adds(out, "tests/fixtures/");
		in = p + n;
	}
	lp_buf_adds(out, in);
}

static void check_golden(const char *dir, const char *golden)
{
	struct lp_buf got = LP_BUF_INIT, want = LP_BUF_INIT, path = LP_BUF_INIT, abs = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	lp_buf_addf(&path, "%s/ncu/regions/report.md", dir);
	lp_test_read(path.data, &abs);
	relative_paths(abs.data, &got);
	lp_buf_release(&abs);
	lp_buf_reset(&path);
	lp_buf_addf(&path, "golden/%s", golden);
	if (getenv("LP_UPDATE_GOLDEN")) {
		if (lp_fs_write_atomic(lp_test_fixture(path.data), got.data, got.len, &err) < 0)
			fail_msg("%s", err.msg);
	}
	lp_test_read(lp_test_fixture(path.data), &want);
	if (strcmp(got.data, want.data) != 0)
		fail_msg("%s/ncu/regions/report.md differs from tests/fixtures/%s", dir, path.data);
	lp_buf_release(&got);
	lp_buf_release(&want);
	lp_buf_release(&path);
}

static void test_reports_golden(void **state)
{
	static const char *const ab[] = { "A/", "B/" };
	static const char *const llm[] = { "LLM@prefill/", "LLM@decode_all/" };
	static const struct {
		const char *name, *mode;
		const char *const *inc;
		size_t n;
		const char *note;
		size_t regions;
	} cases[] = {
		{ "demo_kernel", "kernel", ab, 2, NULL, 3 },
		{ "torch_kernel", "kernel", ab, 2, NULL, 3 },
		{ "llm_kernel", "kernel", llm, 2, NULL, 15 },
		{ "demo_range", "range", ab, 2, NULL, 2 },
		{ "llm_apprange", "app-range", llm, 2, NULL, 2 },
		{ "torch_apprange", "app-range", ab, 2, "range replay failed (Unsupported API during capture): reran in app-range", 2 },
	};
	char raw[128], golden[128];
	size_t i;
	(void)state;
	for (i = 0; i < N(cases); i++) {
		const char *dir = lp_test_tmpdir(cases[i].name);
		struct lp_regions_outcome o;
		struct lp_buf j1 = LP_BUF_INIT, j2 = LP_BUF_INIT, m1 = LP_BUF_INIT, path = LP_BUF_INIT;
		snprintf(raw, sizeof(raw), "regions/h200_%s_raw.csv", cases[i].name);
		snprintf(golden, sizeof(golden), "h200_regions_%s.md", cases[i].name);
		run_report(dir, raw, cases[i].mode, cases[i].inc, cases[i].n, cases[i].note, NULL, &o);
		assert_int_equal(o.n_regions, cases[i].regions);
		assert_int_equal(o.n_unmatched, 0);
		check_golden(dir, golden);
		/* determinism: the same inputs give the same bytes */
		lp_buf_addf(&path, "%s/ncu/regions/report.json", dir);
		lp_test_read(path.data, &j1);
		lp_buf_reset(&path);
		lp_buf_addf(&path, "%s/ncu/regions/report.md", dir);
		lp_test_read(path.data, &m1);
		run_report(dir, raw, cases[i].mode, cases[i].inc, cases[i].n, cases[i].note, NULL, &o);
		lp_buf_reset(&path);
		lp_buf_addf(&path, "%s/ncu/regions/report.json", dir);
		lp_test_read(path.data, &j2);
		assert_string_equal(j1.data, j2.data);
		check_golden(dir, golden);
		lp_buf_release(&j1);
		lp_buf_release(&j2);
		lp_buf_release(&m1);
		lp_buf_release(&path);
	}
}

/* The real no-match: ncu's log says "No kernels were profiled" (the LLM@ domain form on torch's
 * default-domain ranges), so there is no raw page; the ranges seen come from a real nsys capture of
 * the same program. The report says which expression matched nothing and lists what was seen. */
static void test_no_kernels_profiled(void **state)
{
	static const char *const inc[] = { "LLM@decode_all/" };
	struct lp_buf log = LP_BUF_INIT, md = LP_BUF_INIT, path = LP_BUF_INIT;
	struct lp_profile cap;
	struct lp_err err = LP_ERR_INIT;
	struct lp_regions_outcome o;
	const char *dir = lp_test_tmpdir("real_nomatch");
	(void)state;
	lp_test_read(lp_test_fixture("ncu/h200_torch_nomatch_ncu.log"), &log);
	assert_int_equal(lp_ncu_log_scan(log.data), LP_NCU_LOG_NOTHING_PROFILED);
	lp_profile_init(&cap, "nsys");
	if (lp_nsys_sqlite_load(lp_test_fixture("nsys/h200_torch.sqlite"), &cap, &err) < 0)
		fail_msg("%s", err.msg);
	run_report(dir, NULL, "kernel", inc, N(inc), NULL, &cap, &o);
	assert_int_equal(o.n_regions, 0);
	assert_int_equal(o.n_unmatched, 1);
	lp_buf_addf(&path, "%s/ncu/regions/report.md", dir);
	lp_test_read(path.data, &md);
	assert_non_null(strstr(md.data, "`LLM@decode_all/`"));
	assert_non_null(strstr(md.data, "`decode_all/`"));     /* what torch.cuda.nvtx really made */
	assert_non_null(strstr(md.data, "`decode_step/`"));
	check_golden(dir, "h200_regions_torch_nomatch.md");
	lp_profile_release(&cap);
	lp_buf_release(&log);
	lp_buf_release(&md);
	lp_buf_release(&path);
}

/* Range replay on PyTorch: the real failure, and the fallback the collector takes on it. */
static void test_range_replay_fallback(void **state)
{
	struct lp_buf log = LP_BUF_INIT;
	(void)state;
	lp_test_read(lp_test_fixture("regions/h200_torch_range_ncu.log"), &log);
	assert_true(lp_ncu_log_scan(log.data) & LP_NCU_LOG_UNSUPPORTED_API);
	assert_string_equal(lp_regions_replay_fallback("range", log.data), "app-range");
	assert_null(lp_regions_replay_fallback("kernel", log.data));
	assert_false(lp_ncu_log_scan(log.data) & LP_NCU_LOG_RANGE_METRIC);
	/* the default preset's SASS metrics in range replay: a different failure, not an API one */
	lp_test_read(lp_test_fixture("ncu/h200_torch_range_metric_ncu.log"), &log);
	assert_int_equal(lp_ncu_log_scan(log.data), LP_NCU_LOG_RANGE_METRIC);
	lp_buf_release(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demo_kernel_replay),
		cmocka_unit_test(test_torch_kernel_replay),
		cmocka_unit_test(test_llm_kernel_replay),
		cmocka_unit_test(test_range_results),
		cmocka_unit_test(test_startend_overlap),
		cmocka_unit_test(test_no_match_apprange),
		cmocka_unit_test(test_reports_golden),
		cmocka_unit_test(test_no_kernels_profiled),
		cmocka_unit_test(test_range_replay_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
