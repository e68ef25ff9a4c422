/* test_regions_report.c: the regions config (collect/regions_args.c: defaults, ncu flags, the
 * preset rewrite, the app-range fallback, the fingerprint) and the report folder
 * (report/regions_report.c: report.json, report.md, per-region slices), incl. determinism and the
 * no-match case. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "analyze/regions.h"
#include "analyze/regions_args.h"
#include "config/yaml.h"
#include "core/fs.h"
#include "report/regions_report.h"
#include "run/regions_run.h"

static json_t *yaml(const char *text)
{
	json_t *v = NULL;
	struct lp_err err = LP_ERR_INIT;
	if (lp_yaml_load_string(text, strlen(text), "test", &v, &err) < 0)
		fail_msg("%s", err.msg);
	return v;
}

static const char *PRESET =
	"name: t\nreplay_mode: kernel\nkernel_name_base: demangled\nset: roofline\nlaunch_count: 1\n"
	"metrics: [gpu__time_duration.sum, dram__bytes_read.sum]\n"
	"nvtx: {include: [LLM@decode_all/], exclude: []}\n"
	"regions:\n  include: [A/, 'A::A1/', B/]\n  exclude: [C/]\n"
	"  kernels: {include: [k_a, 'regex:^k_b'], exclude: [memset_kernel]}\n"
	"  sections: [SpeedOfLight]\n  metrics: [sm__throughput.avg.pct_of_peak_sustained_elapsed]\n";

static void test_cfg_flags(void **state)
{
	json_t *p = yaml(PRESET), *q;
	struct lp_regions_cfg c;
	struct lp_regions_list f;
	struct lp_err err = LP_ERR_INIT;
	static const char *const want[] = { "--nvtx", "--nvtx-include", "A/", "--nvtx-include", "A/A1/",
		"--nvtx-include", "B/", "--nvtx-exclude", "C/", "--kernel-name", "regex:^k_a$|(^k_b)",
		"--kernel-name-base", "demangled", "--section", "SpeedOfLight", "--metrics",
		"gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed" };
	size_t i;
	(void)state;
	assert_int_equal(lp_regions_cfg_load(p, 0, &c, &err), 0);
	assert_true(lp_regions_cfg_active(&c));
	assert_int_equal(c.include_defaulted, 0);
	assert_int_equal(c.metrics_from_preset, 0);
	assert_int_equal(lp_regions_ncu_flags(&c, &f, &err), 0);
	assert_int_equal(f.n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < f.n; i++)
		assert_string_equal(f.v[i], want[i]);
	assert_null(f.v[f.n]);
	lp_regions_list_release(&f);
	/* the preset the ncu phase runs with */
	assert_int_equal(lp_regions_apply_preset(p, &c, &q, &err), 0);
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(q, "nvtx"), "include"), 1)), "A/A1/");
	assert_string_equal(json_string_value(json_object_get(q, "kernel_name")), "regex:^k_a$|(^k_b)");
	assert_true(json_is_null(json_object_get(q, "set")));
	assert_int_equal(json_integer_value(json_object_get(q, "launch_count")), 0);
	assert_int_equal(json_array_size(json_object_get(q, "metrics")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(q, "sections"), 0)), "SpeedOfLight");
	json_decref(q);
	lp_regions_cfg_release(&c);
	json_decref(p);
}

static void test_cfg_defaults(void **state)
{
	json_t *p = yaml("name: t\nreplay_mode: app-range\nmetrics: [dram__bytes_read.sum]\n"
		"regions: {include: [], exclude: [], kernels: {include: [], exclude: []}, sections: [], metrics: []}\n");
	struct lp_regions_cfg c;
	struct lp_regions_list f;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	/* a user workload with no include: no region report */
	assert_int_equal(lp_regions_cfg_load(p, 0, &c, &err), 0);
	assert_false(lp_regions_cfg_active(&c));
	lp_regions_cfg_release(&c);
	/* the reference workload: the LLM stages */
	assert_int_equal(lp_regions_cfg_load(p, 1, &c, &err), 0);
	assert_true(lp_regions_cfg_active(&c));
	assert_int_equal(c.include_defaulted, 1);
	assert_int_equal(c.include.n, 2);
	assert_string_equal(c.include.v[0], "LLM@prefill/");
	assert_string_equal(c.include.v[1], "LLM@decode_all/");
	assert_string_equal(c.replay_mode, "app-range");
	assert_int_equal(c.metrics_from_preset, 1);
	assert_string_equal(c.metrics.v[0], "dram__bytes_read.sum");
	assert_int_equal(lp_regions_ncu_flags(&c, &f, &err), 0);
	assert_int_equal(f.n, 5);   /* --nvtx + two includes; the preset's metrics stay the preset's */
	lp_regions_list_release(&f);
	lp_regions_cfg_release(&c);
	json_decref(p);
}

static void test_cfg_errors(void **state)
{
	static const struct { const char *yaml, *msg; } cases[] = {
		{ "regions: {include: [A/B]}\n", "regions.include[0]" },
		{ "regions: {include: [A/], kernels: {exclude: ['regex:([']}}\n", "kernels.exclude[0]" },
		{ "regions: {include: A/}\n", "'profiling.ncu.regions.include' must be a list" },
		{ "regions: {includes: [A/]}\n", "unknown key 'profiling.ncu.regions.includes'" },
		{ "regions: {include: [A/], kernels: {only: [x]}}\n", "unknown key 'profiling.ncu.regions.kernels.only'" },
		{ "replay_mode: ranges\nregions: {include: [A/]}\n", "'profiling.ncu.replay_mode' is 'ranges'" },
		{ "regions: {include: ['']}\n", "must be a non-empty string" },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *p = yaml(cases[i].yaml);
		struct lp_regions_cfg c;
		struct lp_err err = LP_ERR_INIT;
		assert_int_equal(lp_regions_cfg_load(p, 1, &c, &err), -1);
		assert_int_equal(err.kind, LP_EUSAGE);
		if (!strstr(err.msg, cases[i].msg))
			fail_msg("'%s' -> '%s'", cases[i].yaml, err.msg);
		json_decref(p);
	}
}

static void test_fingerprint_and_fallback(void **state)
{
	json_t *p = yaml(PRESET), *p2 = yaml(PRESET), *p3;
	struct lp_regions_cfg a, b, c;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_int_equal(lp_regions_cfg_load(p, 0, &a, &err), 0);
	assert_int_equal(lp_regions_cfg_load(p2, 0, &b, &err), 0);
	assert_string_equal(a.fingerprint, b.fingerprint);
	assert_int_equal(strlen(a.fingerprint), 64);
	p3 = yaml("name: t\nregions: {include: []}\n");
	assert_int_equal(lp_regions_cfg_load(p3, 1, &c, &err), 0);
	assert_string_not_equal(a.fingerprint, c.fingerprint);
	/* the resolved include (defaults applied) is what is hashed */
	assert_int_equal(json_array_size(json_object_get(json_object_get(c.resolved, "regions"), "include")), 2);
	lp_regions_cfg_release(&a);
	lp_regions_cfg_release(&b);
	lp_regions_cfg_release(&c);
	json_decref(p);
	json_decref(p2);
	json_decref(p3);
	assert_string_equal(lp_regions_replay_fallback("range",
		"==PROF== ...\n==ERROR== Unsupported API during capture (cuKernelSetAttribute)\n"), "app-range");
	assert_null(lp_regions_replay_fallback("kernel", "Unsupported API during capture"));
	assert_null(lp_regions_replay_fallback("range", "==WARNING== No kernels were profiled."));
}

/* ---- the report folder ---- */

static json_t *load_json(const char *path)
{
	json_error_t je;
	json_t *v = json_load_file(path, 0, &je);
	if (!v)
		fail_msg("%s: %s", path, je.text);
	return v;
}

static const json_t *region_in(const json_t *scope, const char *name)
{
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(scope, "regions"), i, r)
		if (!strcmp(json_string_value(json_object_get(r, "name")), name))
			return r;
	fail_msg("no region '%s'", name);
	return NULL;
}

static double num(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static void run_report(const char *dir, const char *preset_yaml, const char *fixture, const struct lp_profile *cap,
	struct lp_regions_outcome *o)
{
	json_t *p = yaml(preset_yaml);
	struct lp_regions_run run;
	struct lp_err err = LP_ERR_INIT;
	memset(&run, 0, sizeof(run));
	run.run_dir = dir;
	run.ncu_preset = p;
	run.raw_csv = fixture ? lp_test_fixture(fixture) : NULL;
	run.capture = cap;
	run.generated_at = "2025-01-01T00:00:00Z";
	if (lp_regions_run_report(&run, o, &err) < 0)
		fail_msg("%s", err.msg);
	json_decref(p);
}

/* Markdown tables: every row of a table has as many unescaped '|' as its header. */
static void assert_tables_ok(const char *md)
{
	const char *line = md;
	int want = -1;
	while (*line) {
		const char *nl = strchr(line, '\n'), *c;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		int pipes = 0;
		for (c = line; c < line + len; c++)
			if (*c == '|' && (c == line || c[-1] != '\\'))
				pipes++;
		if (len && line[0] == '|') {
			if (want < 0)
				want = pipes;
			else if (pipes != want)
				fail_msg("table row with %d cells separators, header %d: %.*s", pipes, want, (int)len, line);
		} else {
			want = -1;
		}
		line += len + (nl ? 1 : 0);
	}
}

static const char *KREPORT =
	"name: t\nreplay_mode: kernel\nmetrics: [gpu__time_duration.sum]\n"
	"regions:\n  include: [A/, B/]\n  kernels: {exclude: [memset_kernel]}\n"
	"  metrics: [dram__bytes_read.sum, sm__throughput.avg.pct_of_peak_sustained_elapsed, nope.sum]\n";

static void test_report_kernel(void **state)
{
	char dir[512], path[600];
	struct lp_regions_outcome o;
	json_t *j, *agg;
	const json_t *a, *a1, *k;
	struct lp_buf md = LP_BUF_INIT;
	(void)state;
	snprintf(dir, sizeof(dir), "%s", lp_test_tmpdir("regions_report_kernel"));
	run_report(dir, KREPORT, "regions/kernel_nested_raw.csv", NULL, &o);
	assert_true(o.active);
	assert_int_equal(o.n_regions, 5);
	assert_int_equal(o.n_unmatched, 0);
	assert_int_equal(o.n_warnings, 1);       /* nope.sum is not a column */
	snprintf(path, sizeof(path), "%s/ncu/regions/report.json", dir);
	j = load_json(path);
	assert_int_equal(json_array_size(json_object_get(j, "scopes")), 1);   /* one process, one device */
	agg = json_array_get(json_object_get(j, "scopes"), 0);
	assert_string_equal(json_string_value(json_object_get(agg, "scope")), "aggregate");
	assert_string_equal(json_string_value(json_object_get(j, "generated_at")), "2025-01-01T00:00:00Z");
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "metrics_missing"), 0)), "nope.sum");
	a = region_in(agg, "A");
	a1 = region_in(agg, "A::A1");
	assert_true(fabs(num(a, "total_ms_inclusive") - 1.330) < 1e-9);
	assert_true(fabs(num(a, "total_ms_exclusive") - 1.210) < 1e-9);
	assert_string_equal(json_string_value(json_object_get(a1, "parent")), "A");
	assert_int_equal(json_integer_value(json_object_get(a1, "depth")), 1);
	assert_int_equal(json_integer_value(json_object_get(a, "process")), 5000);
	assert_string_equal(json_string_value(json_object_get(json_object_get(a1, "files"), "csv")),
		"ncu/regions/A_A1/raw.csv");
	/* inclusive = exclusive + children within 1% */
	assert_true(fabs(num(a, "total_ms_inclusive") - num(a, "total_ms_exclusive") - num(a1, "total_ms_inclusive")) <
		0.01 * num(a, "total_ms_inclusive"));
	assert_true(json_is_true(json_object_get(a, "reconciled")));
	k = json_array_get(json_object_get(a1, "kernels"), 0);
	assert_string_equal(json_string_value(json_object_get(k, "kernel_name")), "k_a1");
	assert_int_equal(json_integer_value(json_object_get(k, "calls")), 2);
	assert_true(fabs(num(k, "mean_ms") - 0.05) < 1e-12);
	assert_true(json_is_null(json_object_get(json_object_get(k, "metrics"), "nope.sum")));
	assert_true(fabs(num(json_object_get(k, "metrics"), "dram__bytes_read.sum") - 1e6) < 1e-6);
	json_decref(j);
	/* report.md: valid tables, the tree, a section per region */
	snprintf(path, sizeof(path), "%s/ncu/regions/report.md", dir);
	lp_test_read(path, &md);
	assert_tables_ok(md.data);
	assert_non_null(strstr(md.data, "- **A**: 1.330 ms inclusive, 1.210 ms exclusive"));
	assert_non_null(strstr(md.data, "  - **A::A1**: 0.120 ms inclusive"));
	assert_non_null(strstr(md.data, "### A::A1\n"));
	assert_non_null(strstr(md.data, "void k\\_a&lt;float&gt;(float \\*, int)"));
	lp_buf_release(&md);
	snprintf(path, sizeof(path), "%s/ncu/regions/A_A1/region.md", dir);
	lp_test_read(path, &md);
	assert_tables_ok(md.data);
	assert_non_null(strstr(md.data, "# A::A1\n"));
	lp_buf_release(&md);
}

/* A region's raw.csv slice is itself a raw page: reading it back gives the region's figures. */
static void test_report_slice_roundtrip(void **state)
{
	char dir[512], path[600];
	struct lp_regions_outcome o;
	static const char *const inc[] = { "A/" };
	struct lp_regions_spec spec = { inc, 1, NULL, 0, NULL, 0, NULL, 0, NULL, 0 };
	struct lp_regions r;
	struct lp_region_scope s;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf csv = LP_BUF_INIT;
	(void)state;
	snprintf(dir, sizeof(dir), "%s", lp_test_tmpdir("regions_report_slice"));
	run_report(dir, KREPORT, "regions/kernel_nested_raw.csv", NULL, &o);
	snprintf(path, sizeof(path), "%s/ncu/regions/A/raw.csv", dir);
	lp_test_read(path, &csv);
	assert_non_null(strstr(csv.data, "\"2,048\""));      /* cells kept as ncu wrote them */
	assert_null(strstr(csv.data, "memset_kernel"));     /* filtered out */
	assert_null(strstr(csv.data, "k_outside"));
	lp_buf_release(&csv);
	assert_int_equal(lp_regions_init(&r, &spec, &err), 0);
	assert_int_equal(lp_regions_load_ncu_raw(&r, path, &err), 0);
	assert_int_equal(lp_regions_finish(&r, &err), 0);
	assert_int_equal(r.results_read, 7);
	assert_int_equal(lp_regions_scope(&r, LP_REGION_SCOPE_AGGREGATE, 0, -1, &s, &err), 0);
	assert_true(fabs(s.stats[0].incl_ms - 1.330) < 1e-9);
	lp_regions_scope_release(&s);
	lp_regions_release(&r);
}

static void test_report_deterministic(void **state)
{
	static const char *const files[] = { "report.json", "report.md", "A/raw.csv", "A_A1/region.md" };
	char d1[512], d2[512], p1[700], p2[700];
	struct lp_regions_outcome o;
	size_t i;
	(void)state;
	snprintf(d1, sizeof(d1), "%s", lp_test_tmpdir("regions_det1"));
	snprintf(d2, sizeof(d2), "%s", lp_test_tmpdir("regions_det2"));
	run_report(d1, KREPORT, "regions/kernel_nested_raw.csv", NULL, &o);
	run_report(d2, KREPORT, "regions/kernel_nested_raw.csv", NULL, &o);
	/* a second run into the same folder replaces it (no stale region survives) */
	snprintf(p1, sizeof(p1), "%s/ncu/regions/stale", d1);
	assert_int_equal(lp_fs_mkdir_p(p1, NULL), 0);
	run_report(d1, KREPORT, "regions/kernel_nested_raw.csv", NULL, &o);
	assert_false(lp_fs_exists(p1));
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct lp_buf a = LP_BUF_INIT, b = LP_BUF_INIT;
		snprintf(p1, sizeof(p1), "%s/ncu/regions/%s", d1, files[i]);
		snprintf(p2, sizeof(p2), "%s/ncu/regions/%s", d2, files[i]);
		lp_test_read(p1, &a);
		lp_test_read(p2, &b);
		assert_true(a.len > 0);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.data, b.data, a.len);
		lp_buf_release(&a);
		lp_buf_release(&b);
	}
}

static void test_report_no_match(void **state)
{
	char dir[512], path[600];
	struct lp_regions_outcome o;
	struct lp_profile cap;
	json_t *j, *agg;
	struct lp_buf md = LP_BUF_INIT;
	(void)state;
	lp_profile_init(&cap, "capture");
	lp_test_range(&cap, -1, "", "LLM@decode_all", 0, 0);
	lp_test_range(&cap, -1, "", "A", 0, 0);
	snprintf(dir, sizeof(dir), "%s", lp_test_tmpdir("regions_report_nomatch"));
	run_report(dir, "name: t\nregions: {include: [LLM@decode_all/]}\n", "regions/kernel_nested_raw.csv", &cap, &o);
	assert_true(o.active);
	assert_int_equal(o.n_regions, 0);
	assert_int_equal(o.n_unmatched, 1);
	snprintf(path, sizeof(path), "%s/ncu/regions/report.json", dir);
	j = load_json(path);
	assert_string_equal(json_string_value(json_array_get(json_object_get(j, "unmatched"), 0)), "LLM@decode_all/");
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "ranges_seen"), "source")), "capture");
	assert_string_equal(json_string_value(json_array_get(json_object_get(json_object_get(j, "ranges_seen"), "ranges"), 1)),
		"LLM\\@decode_all/");
	agg = json_array_get(json_object_get(j, "scopes"), 0);
	assert_int_equal(json_array_size(json_object_get(agg, "regions")), 0);   /* no invented regions */
	json_decref(j);
	snprintf(path, sizeof(path), "%s/ncu/regions/report.md", dir);
	lp_test_read(path, &md);
	assert_non_null(strstr(md.data, "## Expressions that matched nothing\n\n- `LLM@decode_all/`"));
	assert_non_null(strstr(md.data, "Ranges seen (in the capture phase): `A/`, `LLM\\@decode_all/`."));
	lp_buf_release(&md);
	/* no raw page at all (ncu profiled nothing): still a report, ranges from the capture */
	run_report(dir, "name: t\nregions: {include: [A/]}\n", NULL, &cap, &o);
	assert_int_equal(o.n_unmatched, 1);
	lp_profile_release(&cap);
	/* without a capture profile, the ranges come from the ncu results */
	run_report(dir, "name: t\nregions: {include: [Z/]}\n", "regions/kernel_nested_raw.csv", NULL, &o);
	snprintf(path, sizeof(path), "%s/ncu/regions/report.json", dir);
	j = load_json(path);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "ranges_seen"), "source")), "ncu");
	assert_int_equal(json_array_size(json_object_get(json_object_get(j, "ranges_seen"), "ranges")), 5);
	json_decref(j);
}

static void test_report_scopes_and_apprange(void **state)
{
	char dir[512], path[600];
	struct lp_regions_outcome o;
	json_t *j, *s;
	struct lp_buf md = LP_BUF_INIT;
	(void)state;
	snprintf(dir, sizeof(dir), "%s", lp_test_tmpdir("regions_report_multi"));
	run_report(dir, "name: t\nregions: {include: [A/, B/]}\n", "regions/multi_raw.csv", NULL, &o);
	snprintf(path, sizeof(path), "%s/ncu/regions/report.json", dir);
	j = load_json(path);
	s = json_object_get(j, "scopes");
	assert_int_equal(json_array_size(s), 5);   /* aggregate, 2 processes, 2 devices */
	assert_string_equal(json_string_value(json_object_get(json_array_get(s, 1), "scope")), "process");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(s, 1), "process")), 100);
	assert_string_equal(json_string_value(json_object_get(json_array_get(s, 4), "scope")), "device");
	assert_true(json_is_null(json_object_get(region_in(json_array_get(s, 0), "A"), "process")));
	assert_int_equal(json_array_size(json_object_get(json_array_get(s, 3), "regions")), 2);  /* device 0: A, A::A1 */
	json_decref(j);
	snprintf(path, sizeof(path), "%s/ncu/regions/report.md", dir);
	lp_test_read(path, &md);
	assert_non_null(strstr(md.data, "## Process 200\n"));
	assert_non_null(strstr(md.data, "## Device 1\n"));
	assert_tables_ok(md.data);
	lp_buf_release(&md);
	/* app-range results, with the fallback recorded */
	{
		json_t *p = yaml("name: t\nreplay_mode: range\nregions: {include: [A/, B/]}\n");
		struct lp_regions_run run;
		struct lp_err err = LP_ERR_INIT;
		memset(&run, 0, sizeof(run));
		run.run_dir = dir;
		run.ncu_preset = p;
		run.raw_csv = lp_test_fixture("regions/apprange_raw.csv");
		run.replay_mode_used = "app-range";
		run.replay_note = "range replay failed (Unsupported API during capture): reran in app-range";
		assert_int_equal(lp_regions_run_report(&run, &o, &err), 0);
		json_decref(p);
	}
	snprintf(path, sizeof(path), "%s/ncu/regions/report.json", dir);
	j = load_json(path);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "config"), "replay_mode_used")), "app-range");
	s = json_array_get(json_object_get(j, "scopes"), 0);
	assert_true(fabs(num(region_in(s, "A"), "total_ms_inclusive") - 2.2) < 1e-9);
	assert_int_equal(json_integer_value(json_object_get(region_in(s, "A"), "range_instances")), 2);
	assert_true(json_is_true(json_object_get(region_in(s, "A"), "reconciled")));
	json_decref(j);
}

/* A real ncu capture of ranges of two domains nested into each other
 * (tests/fixtures/regions/cross_domain_nvtx.cu): ncu prints the default domain first, the tree
 * must come out with the LLM stage ranges outermost and the PyTorch-style op ranges inside. */
static void test_report_cross_domain(void **state)
{
	char dir[512], path[600];
	struct lp_regions_outcome o;
	struct lp_buf md = LP_BUF_INIT;
	json_t *j, *agg;
	const json_t *r;
	(void)state;
	snprintf(dir, sizeof(dir), "%s", lp_test_tmpdir("regions_report_xdom"));
	run_report(dir, "name: t\nregions: {include: [LLM@decode_all/, \"aten\\\\:\\\\:to, op_id = 21/\"]}\n", "regions/h100_cross_domain_raw.csv",
		NULL, &o);
	assert_int_equal(o.n_unmatched, 0);
	snprintf(path, sizeof(path), "%s/ncu/regions/report.json", dir);
	j = load_json(path);
	agg = json_array_get(json_object_get(j, "scopes"), 0);
	/* upside down before: `aten::copy_` at the bottom, LLM@decode_all nested in it */
	r = region_in(agg, "LLM@decode_all::decode_step::@aten::copy_");
	assert_string_equal(json_string_value(json_object_get(r, "parent")), "LLM@decode_all::decode_step");
	assert_int_equal(json_integer_value(json_object_get(r, "depth")), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(r, "kernels"), 0), "kernel_name")),
		"k_copy(float *)");
	r = region_in(agg, "LLM@decode_all::decode_step");
	assert_int_equal(json_integer_value(json_object_get(r, "kernel_count_exclusive")), 1);   /* k_step */
	r = region_in(agg, "LLM@decode_all");
	assert_int_equal(json_integer_value(json_object_get(r, "depth")), 0);
	assert_int_equal(json_integer_value(json_object_get(r, "kernel_count")), 3);
	/* the op range under the LLM range pushed inside it (ncu cannot tell): innermost */
	assert_non_null(region_in(agg, "LLM@decode_all::decode_step::attn::@aten::mm, seq = 5"));
	json_decref(j);
	snprintf(path, sizeof(path), "%s/ncu/regions/report.md", dir);
	lp_test_read(path, &md);
	assert_tables_ok(md.data);
	assert_non_null(strstr(md.data, "    - **LLM@decode\\_all::decode\\_step::@aten::copy\\_**: "));
	lp_buf_release(&md);
}

/* A kernel and a range name that are not UTF-8 keep their keys in report.json, with U+FFFD. */
static void test_report_bad_utf8(void **state)
{
	char dir[512], path[600];
	struct lp_buf raw = LP_BUF_INIT, csv = LP_BUF_INIT;
	struct lp_regions_run run;
	struct lp_regions_outcome o;
	struct lp_err err = LP_ERR_INIT;
	json_t *p, *j, *agg;
	const json_t *a1;
	char *at;
	(void)state;
	snprintf(dir, sizeof(dir), "%s", lp_test_tmpdir("regions_report_utf8"));
	lp_test_read(lp_test_fixture("regions/kernel_nested_raw.csv"), &raw);
	while ((at = strstr(raw.data, "\"k_a1\"")) != NULL)
		at[4] = '\xff';                       /* "k_a\xff" */
	while ((at = strstr(raw.data, ":A1:")) != NULL)
		at[2] = '\xfe';                       /* range A\xfe, its message too */
	while ((at = strstr(raw.data, ":A1\"")) != NULL)
		at[2] = '\xfe';
	lp_fs_join(&csv, dir, "bad_raw.csv");
	lp_test_write(csv.data, raw.data);
	p = yaml("name: t\nregions: {include: [A/]}\n");
	memset(&run, 0, sizeof(run));
	run.run_dir = dir;
	run.ncu_preset = p;
	run.raw_csv = csv.data;
	run.generated_at = "2025-01-01T00:00:00Z";
	if (lp_regions_run_report(&run, &o, &err) < 0)
		fail_msg("%s", err.msg);
	json_decref(p);
	snprintf(path, sizeof(path), "%s/ncu/regions/report.json", dir);
	j = load_json(path);
	agg = json_array_get(json_object_get(j, "scopes"), 0);
	a1 = region_in(agg, "A::A\xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(a1, "range")), "A\xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(a1, "kernels"), 0), "kernel_name")),
		"k_a\xef\xbf\xbd");
	json_decref(j);
	lp_buf_release(&raw);
	lp_buf_release(&csv);
}

/* "Ranges seen" entries paste back: each printed expression parses as one level named exactly as
 * the range (PyTorch emit_nvtx names hold "::"), in its domain, of its kind. */
static void test_seen_pasteable_roundtrip(void **state)
{
	static const struct { const char *domain, *name; int startend; const char *want; } cases[] = {
		{ "", "aten::to, op_id = 21", 0, "aten\\:\\:to, op_id = 21/" },
		{ "LLM", "aten::copy_", 0, "LLM@aten\\:\\:copy_/" },
		{ "", "LLM@decode_all", 0, "LLM\\@decode_all/" },
		{ "", "a::b:::c", 0, "a\\:\\:b\\:\\:\\:c/" },
		{ "", "x:y", 0, "x:y/" },
		{ "", "[first]", 0, "\\[first\\]/" },
		{ "", "*", 0, "\\*/" },
		{ "", "a/b", 0, "a\\/b/" },
		{ "", "io::wait", 1, "io\\:\\:wait" },
	};
	struct lp_profile p;
	struct lp_arena a = LP_ARENA_INIT;
	struct lp_err err = LP_ERR_INIT;
	const char **seen;
	size_t n, i, j;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lp_buf e = LP_BUF_INIT;
		struct lp_region_pattern pat;
		int32_t r;
		lp_profile_init(&p, "capture");
		r = lp_test_range(&p, -1, cases[i].domain, cases[i].name, 0, 0);
		p.ranges[r].kind = cases[i].startend ? LP_RANGE_STARTEND : LP_RANGE_PUSHPOP;
		assert_int_equal(lp_regions_profile_ranges(&p, &a, &seen, &n, &err), 0);
		assert_int_equal(n, 1);
		assert_int_equal(lp_regions_pasteable(seen[0], &e), 0);
		assert_string_equal(e.data, cases[i].want);
		if (lp_region_pattern_parse(e.data, &a, &pat, &err) < 0)
			fail_msg("'%s': %s", e.data, err.msg);
		assert_int_equal(pat.n_parts, 1);
		assert_string_equal(pat.parts[0], cases[i].name);
		assert_string_equal(pat.domain, cases[i].domain);
		assert_int_equal(pat.kind, cases[i].startend ? LP_REGION_STARTEND : LP_REGION_PUSHPOP);
		assert_false(pat.anchor_bottom || pat.anchor_top);
		for (j = 0; j < pat.n_parts; j++)
			assert_false(pat.gap_before[j]);
		lp_buf_release(&e);
		lp_profile_release(&p);
	}
	lp_arena_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cfg_flags),
		cmocka_unit_test(test_cfg_defaults),
		cmocka_unit_test(test_cfg_errors),
		cmocka_unit_test(test_fingerprint_and_fallback),
		cmocka_unit_test(test_report_kernel),
		cmocka_unit_test(test_report_slice_roundtrip),
		cmocka_unit_test(test_report_deterministic),
		cmocka_unit_test(test_report_no_match),
		cmocka_unit_test(test_report_scopes_and_apprange),
		cmocka_unit_test(test_seen_pasteable_roundtrip),
		cmocka_unit_test(test_report_cross_domain),
		cmocka_unit_test(test_report_bad_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
