/* test_ncu.c: NVTX cells, the raw page (units, thousands separators, NVTX stacks, app-range
 * rows, bad input) and the details page (ragged rule rows), on tests/fixtures/ncu. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "parse/ncu_details.h"
#include "parse/ncu_nvtx.h"
#include "parse/ncu_raw.h"

static void test_nvtx_cells(void **state)
{
	struct lp_ncu_nvtx_stack st = LP_NCU_NVTX_STACK_INIT;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf path = LP_BUF_INIT;
	(void)state;
	assert_int_equal(lp_ncu_nvtx_parse("3872  \"LLM:decode_all:none:none:none:none:ASCII:decode_all\"  "
		"\"LLM:decode_step:uint64:3:none:none:ASCII:decode_step\" ", 0, &st, &err), 0);
	assert_int_equal(st.tid, 3872);
	assert_int_equal(st.n, 2);
	assert_string_equal(st.levels[0].domain, "LLM");
	assert_string_equal(st.levels[0].name, "decode_all");
	assert_int_equal(st.levels[0].payload_type, 0);
	assert_string_equal(st.levels[1].name, "decode_step");
	assert_int_equal(st.levels[1].payload_type, 1);
	assert_int_equal(st.levels[1].payload.u64, 3);
	lp_ncu_nvtx_stack_path(&st, &path);
	assert_string_equal(path.data, "LLM@decode_all/LLM@decode_step");
	assert_true(lp_ncu_stack_matches(&st, "LLM@decode_step"));
	assert_true(lp_ncu_stack_matches(&st, "decode_all"));
	assert_false(lp_ncu_stack_matches(&st, "@decode_all"));

	/* default domain, a name with ':' that the message repeats */
	assert_int_equal(lp_ncu_nvtx_parse("7  \"<default domain>:a:b:c:none:none:none:none:ASCII:a:b:c\" ", 0, &st, &err), 0);
	assert_int_equal(st.n, 1);
	assert_string_equal(st.levels[0].domain, "");
	assert_string_equal(st.levels[0].name, "a:b:c");
	/* message "none": the six fields come off the end */
	assert_int_equal(lp_ncu_nvtx_parse("1  \"<default domain>:x:y:none:none:none:none:none:none\"", 0, &st, &err), 0);
	assert_string_equal(st.levels[0].name, "x:y");
	/* torch's default-domain "LLM@decode_all" stays a name, not a domain */
	assert_int_equal(lp_ncu_nvtx_parse("1  \"<default domain>:LLM@decode_all:int64:-5:none:none:ASCII:LLM@decode_all\"", 0, &st, &err), 0);
	assert_string_equal(st.levels[0].name, "LLM@decode_all");
	assert_int_equal(st.levels[0].payload.i64, -5);
	assert_true(lp_ncu_stack_matches(&st, "@LLM@decode_all"));  /* "@" first: the default domain */
	assert_true(lp_ncu_stack_matches(&st, "LLM@decode_all") == 0);
	/* start/end form */
	assert_int_equal(lp_ncu_nvtx_parse(" \"5:LLM:prefill:double:0.5:none:none:ASCII:prefill\" \"6:<default domain>:io:none:none:none:none:ASCII:io\"", 1, &st, &err), 0);
	assert_int_equal(st.n, 2);
	assert_int_equal(st.levels[0].id, 5);
	assert_true(st.levels[0].payload.f64 == 0.5);
	assert_string_equal(st.levels[1].name, "io");
	/* empty and broken cells */
	assert_int_equal(lp_ncu_nvtx_parse("", 0, &st, &err), 0);
	assert_int_equal(st.n, 0);
	assert_int_equal(lp_ncu_nvtx_parse("1  \"LLM:short:none\"", 0, &st, &err), -1);
	assert_non_null(strstr(err.msg, "expected 8"));
	assert_int_equal(lp_ncu_nvtx_parse("1  \"LLM:open", 0, &st, &err), -1);
	assert_int_equal(lp_ncu_nvtx_parse("1  junk", 0, &st, &err), -1);
	lp_ncu_nvtx_stack_release(&st);
	lp_buf_release(&path);
}

/* Cells from a real capture (regions/h100_cross_domain_raw.csv): ncu lists the default domain
 * first; the parser puts operator ranges innermost, the LLM stage ranges outside them. */
static void test_nvtx_cross_domain(void **state)
{
	static const struct { const char *cell; const char *path; } cases[] = {
		{ "515  \"<default domain>:aten::copy_:none:none:none:none:none:none\"  \"LLM:decode_all:none:none:none:none:ASCII:decode_all\"  "
		  "\"LLM:decode_step:none:none:none:none:ASCII:decode_step\" ",
		  "LLM@decode_all/LLM@decode_step/aten::copy_" },
		{ "515  \"<default domain>:aten::mm, seq = 5:none:none:none:none:none:none\"  \"LLM:decode_all:none:none:none:none:ASCII:decode_all\"  "
		  "\"LLM:decode_step:none:none:none:none:ASCII:decode_step\"  \"LLM:attn:none:none:none:none:ASCII:attn\" ",
		  "LLM@decode_all/LLM@decode_step/LLM@attn/aten::mm, seq = 5" },
		/* a default-domain range that is no operator stays outermost, as ncu prints it */
		{ "1  \"<default domain>:generate:none:none:none:none:none:none\"  \"<default domain>:aten::add, op_id = 3:none:none:none:none:none:none\"  "
		  "\"LLM:decode_all:none:none:none:none:ASCII:decode_all\" ",
		  "generate/LLM@decode_all/aten::add, op_id = 3" },
		/* one domain only: untouched */
		{ "1  \"<default domain>:aten::linear:none:none:none:none:none:none\"  \"<default domain>:aten::addmm:none:none:none:none:none:none\" ",
		  "aten::linear/aten::addmm" },
	};
	struct lp_ncu_nvtx_stack st = LP_NCU_NVTX_STACK_INIT;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf path = LP_BUF_INIT;
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(lp_ncu_nvtx_parse(cases[i].cell, 0, &st, &err), 0);
		lp_ncu_nvtx_stack_path(&st, &path);
		assert_string_equal(path.data, cases[i].path);
	}
	lp_ncu_nvtx_stack_release(&st);
	lp_buf_release(&path);
}

static void test_units_and_dims(void **state)
{
	static const struct { const char *unit; double scale; const char *base; } cases[] = {
		{ "nsecond", 1, "nsecond" }, { "usecond", 1e3, "nsecond" }, { "msecond", 1e6, "nsecond" },
		{ "second", 1e9, "nsecond" }, { "byte", 1, "byte" }, { "Kbyte", 1e3, "byte" }, { "Mbyte", 1e6, "byte" },
		{ "Gbyte", 1e9, "byte" }, { "Tbyte/second", 1e12, "byte/second" }, { "Gbyte/second", 1e9, "byte/second" },
		{ "byte/usecond", 1e6, "byte/second" }, { "Ghz", 1e9, "hz" }, { "Mhz", 1e6, "hz" }, { "hz", 1, "hz" },
		{ "cycle/nsecond", 1e9, "cycle/second" }, { "inst/cycle", 1, "inst/cycle" }, { "%", 1, "%" }, { "", 1, "" },
		/* the short forms ncu 2025.3.1 really prints (tests/fixtures/ncu/h200_llm_raw_units.csv) */
		{ "us", 1e3, "nsecond" }, { "ns", 1, "nsecond" }, { "byte/s", 1, "byte/second" },
		{ "Mbyte/s", 1e6, "byte/second" }, { "Gbyte/s", 1e9, "byte/second" },
		/* ratios with a prefixed side that is not a time (were left unscaled) */
		{ "Kbyte/block", 1e3, "byte/block" }, { "Kbyte/cycle", 1e3, "byte/cycle" }, { "%/Kbyte", 1e-3, "%/byte" },
		{ "byte/block", 1, "byte/block" }, { "register/thread", 1, "register/thread" }, { "%/register", 1, "%/register" },
	};
	struct lp_buf b = LP_BUF_INIT;
	uint32_t d[3];
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double s;
		char base[64];
		lp_ncu_unit_to_base(cases[i].unit, &s, base, sizeof(base));
		if (fabs(s - cases[i].scale) > 1e-9 * cases[i].scale || strcmp(base, cases[i].base))
			fail_msg("'%s': %g %s, want %g %s", cases[i].unit, s, base, cases[i].scale, cases[i].base);
	}
	assert_int_equal(lp_ncu_parse_dim3("(66, 8, 1)", d), 0);
	assert_int_equal(d[0], 66);
	assert_int_equal(d[1], 8);
	assert_int_equal(lp_ncu_parse_dim3("66, 8, 1", d), -1);
	assert_int_equal(lp_ncu_parse_dim3("(1, 2)", d), -1);
	lp_buf_release(&b);
}

struct seen {
	int n, ranges;
	double dram[8];
	int valid_sm[8];
	char paths[8][128];
};

static int collect(const struct lp_ncu_result *r, void *ctx, struct lp_err *err)
{
	struct seen *s = ctx;
	struct lp_buf p = LP_BUF_INIT;
	size_t i;
	(void)err;
	if (s->n >= 8)
		return 0;
	for (i = 0; i < r->n_metrics; i++) {
		if (!strcmp(r->metrics[i].name, "dram__bytes_read.sum"))
			s->dram[s->n] = r->metrics[i].valid ? r->metrics[i].value : -1;
		if (!strcmp(r->metrics[i].name, "sm__throughput.avg.pct_of_peak_sustained_elapsed"))
			s->valid_sm[s->n] = r->metrics[i].valid;
	}
	lp_ncu_nvtx_stack_path(r->pushpop, &p);
	snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s", p.data);
	lp_buf_release(&p);
	s->ranges += r->is_range;
	s->n++;
	return 0;
}

static void test_raw_page(void **state)
{
	struct seen s;
	struct lp_err err = LP_ERR_INIT;
	struct lp_kernel_table t;
	struct lp_ncu_select sel = { .stage = "LLM@decode_step" };
	const struct lp_metric *m;
	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(lp_ncu_raw_stream(lp_test_fixture("ncu/synthetic_raw.csv"), collect, &s, &err), 0);
	assert_int_equal(s.n, 4);
	assert_true(s.dram[0] == 1.5e6);          /* Mbyte -> byte */
	assert_true(s.dram[1] == 2336e6);         /* "2,336" Mbyte */
	assert_int_equal(s.valid_sm[1], 0);       /* n/a */
	assert_string_equal(s.paths[0], "LLM@decode_all/LLM@decode_step");
	assert_string_equal(s.paths[2], "outer:scope");
	assert_string_equal(s.paths[3], "");

	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture("ncu/synthetic_raw.csv"), NULL, &t, &err), 0);
	assert_int_equal(t.n_rows, 3);
	assert_string_equal(t.rows[0].kernel_name, "void attn::flash_fwd<64, (bool)1>(Params, int)");
	assert_string_equal(t.rows[0].short_name, "flash_fwd");
	assert_true(fabs(t.rows[0].total_ms - 0.030) < 1e-12);
	assert_int_equal(t.rows[0].grid[0], 66);
	assert_int_equal(t.rows[0].registers_per_thread, 128);
	assert_int_equal(t.rows[1].calls, 2);
	assert_true(fabs(t.rows[1].total_ms - 0.020) < 1e-12);
	assert_true(fabs(t.rows[1].mean_ms - 0.010) < 1e-12);
	m = lp_kernel_record_metric(&t.rows[1], "dram__bytes_read.sum");
	assert_non_null(m);
	assert_true(fabs(m->value - (1.5e6 + 2336e6) / 2) < 1e-3);  /* per-launch mean */
	assert_string_equal(m->unit, "byte");
	m = lp_kernel_record_metric(&t.rows[1], "sm__throughput.avg.pct_of_peak_sustained_elapsed");
	assert_true(m->valid && m->value == 45.25);  /* the n/a launch is left out of the mean */
	m = lp_kernel_record_metric(&t.rows[0], "smsp__cycles_active.avg.per_second");
	assert_false(m->valid);
	lp_kernel_table_release(&t);

	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture("ncu/synthetic_raw.csv"), &sel, &t, &err), 0);
	assert_int_equal(t.n_rows, 1);
	assert_int_equal(t.rows[0].calls, 2);
	lp_kernel_table_release(&t);
}

static void test_raw_apprange_and_errors(void **state)
{
	struct seen s;
	struct lp_err err = LP_ERR_INIT;
	struct lp_kernel_table t;
	struct lp_ncu_select sel = { .include_ranges = 1 };
	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(lp_ncu_raw_stream(lp_test_fixture("ncu/synthetic_apprange_raw.csv"), collect, &s, &err), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.ranges, 1);
	assert_true(s.dram[0] == 3.5e9);
	assert_string_equal(s.paths[0], "LLM@decode_all");  /* default domain, '@' inside the name */
	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture("ncu/synthetic_apprange_raw.csv"), NULL, &t, &err), 0);
	assert_int_equal(t.n_rows, 0);
	lp_kernel_table_release(&t);
	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture("ncu/synthetic_apprange_raw.csv"), &sel, &t, &err), 0);
	assert_int_equal(t.n_rows, 1);
	assert_true(fabs(t.rows[0].total_ms - 1.25) < 1e-12);
	lp_kernel_table_release(&t);

	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture("ncu/truncated_row_raw.csv"), NULL, &t, &err), -1);
	assert_int_equal(err.kind, LP_EPARSE);
	assert_non_null(strstr(err.msg, "truncated_row_raw.csv:6: row has 9 cells, the header has 18"));
	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture("ncu/truncated_quote_raw.csv"), NULL, &t, &err), -1);
	assert_non_null(strstr(err.msg, "truncated_quote_raw.csv:6: end of file inside a quoted field"));
	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture("ncu/missing_column_raw.csv"), NULL, &t, &err), -1);
	assert_non_null(strstr(err.msg, "column 'Kernel Name' missing"));
	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture("nsys/summary_nvtx_sum.csv"), NULL, &t, &err), -1);
	assert_non_null(strstr(err.msg, "column 'ID' missing"));
}

static void test_details_page(void **state)
{
	struct lp_ncu_details d;
	struct lp_err err = LP_ERR_INIT;
	struct lp_kernel_table t;
	const struct lp_ncu_details_result *r;
	(void)state;
	assert_int_equal(lp_ncu_details_load(lp_test_fixture("ncu/synthetic_details.csv"), &d, &err), 0);
	assert_int_equal(d.n_results, 2);
	r = &d.results[0];
	assert_int_equal(r->n_metrics, 3);
	assert_string_equal(r->metrics[0].section, "GPU Speed Of Light Throughput");
	assert_true(r->metrics[0].value == 2619000000.0);
	assert_true(r->duration_ns == 12500);
	assert_int_equal(r->n_rules, 2);
	assert_string_equal(r->rules[0].section, "SpeedOfLight");
	assert_string_equal(r->rules[0].name, "SOLBottleneck");
	assert_string_equal(r->rules[0].type, "OPT");
	assert_true(r->rules[0].has_speedup && r->rules[0].speedup_pct == 12.5);
	assert_non_null(strstr(r->rules[0].description, "\"Memory Workload Analysis\", section"));
	assert_false(r->rules[1].has_speedup);
	assert_string_equal(r->nvtx_path, "LLM@decode_all/LLM@decode_step");
	r = &d.results[1];
	assert_true(r->duration_ns == 30000);  /* "30,000" nsecond */
	assert_false(r->metrics[1].valid);
	assert_string_equal(r->metrics[1].text, "CachePreferNone");
	lp_ncu_details_release(&d);

	assert_int_equal(lp_ncu_details_kernel_table(lp_test_fixture("ncu/synthetic_details.csv"), NULL, &t, &err), 0);
	assert_int_equal(t.n_rows, 2);
	assert_true(fabs(t.rows[1].total_ms - 0.0125) < 1e-12);
	assert_non_null(lp_kernel_record_metric(&t.rows[1], "GPU Speed Of Light Throughput/Memory Throughput"));
	lp_kernel_table_release(&t);
	assert_int_equal(lp_ncu_details_load(lp_test_fixture("ncu/synthetic_raw.csv"), &d, &err), -1);
	assert_non_null(strstr(err.msg, "column 'Section Name' missing"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nvtx_cells),
		cmocka_unit_test(test_nvtx_cross_domain),
		cmocka_unit_test(test_units_and_dims),
		cmocka_unit_test(test_raw_page),
		cmocka_unit_test(test_raw_apprange_and_errors),
		cmocka_unit_test(test_details_page),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
