/* test_real_ncu.c: the ncu parsers on REAL pages captured on an H200 (tests/fixtures/ncu/h200_*,
 * README there): the raw page of the reference workload (units, identity, NVTX stacks of domain
 * LLM), the same report exported without --print-units base (every value must agree once
 * normalized), PyTorch's default-domain stacks, app-range rows, the details page (rules with
 * speedup estimates, a "no data" value) and the --print-summary CSVs (with ncu's misplaced line
 * breaks). Expected values are read off the CSV cells by hand. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "parse/ncu_details.h"
#include "parse/ncu_raw.h"
#include "parse/ncu_summary.h"

#define K_EMBED "k_embed(float *, const unsigned short *, const int *, int)"

static const struct lp_metric *metric(const struct lp_ncu_result *r, const char *name)
{
	size_t i;
	for (i = 0; i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].name, name))
			return &r->metrics[i];
	fail_msg("no metric '%s'", name);   /* never returns */
}

static void assert_near(double got, double want, double rel)
{
	if (fabs(got - want) > rel * fabs(want))
		fail_msg("got %.9g, want %.9g", got, want);
}

/* ---- raw page ---- */

struct llm_raw {
	int n;
};

static int llm_raw_row(const struct lp_ncu_result *r, void *ctx, struct lp_err *err)
{
	struct llm_raw *x = ctx;
	const struct lp_metric *m;
	struct lp_buf path = LP_BUF_INIT;
	(void)err;
	x->n++;
	assert_int_equal(r->line, 3);
	assert_int_equal(r->id, 0);
	assert_int_equal(r->pid, 2674);
	assert_string_equal(r->process, "llmprof-llm");
	assert_string_equal(r->host, "127.0.0.1");
	assert_string_equal(r->kernel_name, K_EMBED);
	assert_string_equal(r->short_name, "k_embed");
	assert_string_equal(r->context, "1");
	assert_string_equal(r->stream, "13");
	assert_int_equal(r->device, 0);
	assert_string_equal(r->cc, "9.0");
	assert_false(r->is_range);
	assert_true(r->has_launch);
	assert_int_equal(r->block[0], 256);
	assert_int_equal(r->block[1], 1);
	assert_int_equal(r->grid[0], 1);
	assert_int_equal(r->registers_per_thread, 16);
	/* "gpu__time_duration.sum" units row "ns", cell "2272" */
	assert_true(r->duration_ns == 2272);
	m = metric(r, "gpu__time_duration.sum");
	assert_non_null(m);
	assert_string_equal(m->unit, "nsecond");
	/* dram__bytes_read.sum "byte" 3328; ...per_second "byte/s" -> byte/second; hz */
	m = metric(r, "dram__bytes_read.sum");
	assert_true(m->valid && m->value == 3328);
	assert_string_equal(m->unit, "byte");
	m = metric(r, "dram__bytes_write.sum");
	assert_true(m->valid && m->value == 0);
	m = metric(r, "dram__bytes.sum.per_second");
	assert_string_equal(m->unit, "byte/second");
	assert_near(m->value, 1464788732.39, 1e-12);
	m = metric(r, "gpc__cycles_elapsed.avg.per_second");
	assert_string_equal(m->unit, "hz");
	assert_near(m->value, 1942451584.51, 1e-12);
	m = metric(r, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
	assert_string_equal(m->unit, "%");
	assert_near(m->value, 0.01, 1e-12);
	assert_int_equal(r->n_metrics, 1407 - 13);   /* every column but the 13 identity ones */
	/* the stack: decode_all > decode_step (payload 0) from one LLM domain handle, then warmup
	 * (payload 1) from another handle named LLM (ncu prints each handle's stack in turn) */
	assert_int_equal(r->pushpop->tid, 2674);
	assert_int_equal(r->pushpop->n, 3);
	assert_string_equal(r->pushpop->levels[0].domain, "LLM");
	assert_string_equal(r->pushpop->levels[0].name, "decode_all");
	assert_int_equal(r->pushpop->levels[0].payload_type, LP_PAYLOAD_NONE);
	assert_string_equal(r->pushpop->levels[1].name, "decode_step");
	assert_int_equal(r->pushpop->levels[1].payload_type, LP_PAYLOAD_U64);   /* printed "Uint64" */
	assert_int_equal(r->pushpop->levels[1].payload.u64, 0);
	assert_string_equal(r->pushpop->levels[2].name, "warmup");
	assert_int_equal(r->pushpop->levels[2].payload.u64, 1);
	assert_int_equal(r->startend->n, 0);
	lp_ncu_nvtx_stack_path(r->pushpop, &path);
	assert_string_equal(path.data, "LLM@decode_all/LLM@decode_step/LLM@warmup");
	assert_true(lp_ncu_stack_matches(r->pushpop, "LLM@decode_all"));
	assert_true(lp_ncu_stack_matches(r->pushpop, "decode_step"));
	assert_false(lp_ncu_stack_matches(r->pushpop, "@decode_all"));   /* not the default domain */
	lp_buf_release(&path);
	return 0;
}

static void test_llm_raw(void **state)
{
	struct llm_raw x = { 0 };
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	if (lp_ncu_raw_stream(lp_test_fixture("ncu/h200_llm_raw.csv"), llm_raw_row, &x, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(x.n, 1);
}

/* The same report exported with ncu's own units (us, Kbyte, Mbyte/s, Ghz, Kbyte/block, %/Kbyte):
 * after normalization every metric has the same base unit, and the same value within the 7
 * significant digits ncu prints, as the --print-units base export. */
struct unit_pair {
	struct lp_metric *base;
	size_t n;
	int scaled;               /* metrics whose printed unit differed */
	struct lp_arena names;
};

static int keep_metrics(const struct lp_ncu_result *r, void *ctx, struct lp_err *err)
{
	struct unit_pair *u = ctx;
	size_t i;
	(void)err;
	u->base = calloc(r->n_metrics, sizeof(*u->base));
	assert_non_null(u->base);
	u->n = r->n_metrics;
	for (i = 0; i < r->n_metrics; i++) {
		u->base[i] = r->metrics[i];
		u->base[i].name = lp_arena_strdup(&u->names, r->metrics[i].name);
		u->base[i].unit = lp_arena_strdup(&u->names, r->metrics[i].unit);
	}
	return 0;
}

static int compare_metrics(const struct lp_ncu_result *r, void *ctx, struct lp_err *err)
{
	struct unit_pair *u = ctx;
	size_t i;
	(void)err;
	assert_int_equal(r->n_metrics, u->n);
	assert_true(r->duration_ns == 2272);   /* "2.272000" us */
	for (i = 0; i < r->n_metrics; i++) {
		const struct lp_metric *a = &u->base[i], *b = &r->metrics[i];
		assert_string_equal(a->name, b->name);
		if (strcmp(a->unit, b->unit) != 0)
			fail_msg("'%s': base unit '%s' vs '%s'", a->name, a->unit, b->unit);
		if (!a->valid || !b->valid)
			continue;
		/* ncu's --print-units base multiplies %/Kbyte by 1000 instead of dividing (2614 "%/byte"
		 * vs 2.614 "%/Kbyte"): its base export of this one metric is wrong, ours is right */
		if (!strcmp(a->name, "derived__pct_occupancy_per_shared_mem_size")) {
			assert_near(b->value, 0.002614, 1e-9);
			continue;
		}
		if (fabs(a->value - b->value) > 1e-6 * fabs(a->value) + 0.005)
			fail_msg("'%s': %.9g (base) vs %.9g", a->name, a->value, b->value);
		if (fabs(a->value) > 1e3 && fabs(a->value - b->value) > 1e-6 * fabs(a->value))
			fail_msg("'%s': %.9g (base) vs %.9g", a->name, a->value, b->value);
		u->scaled += fabs(a->value) >= 1e3;
	}
	return 0;
}

static void test_units_against_base_export(void **state)
{
	struct unit_pair u;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	memset(&u, 0, sizeof(u));
	if (lp_ncu_raw_stream(lp_test_fixture("ncu/h200_llm_raw.csv"), keep_metrics, &u, &err) < 0 ||
			lp_ncu_raw_stream(lp_test_fixture("ncu/h200_llm_raw_units.csv"), compare_metrics, &u, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(u.scaled > 50);
	lp_arena_release(&u.names);
	free(u.base);
}

static int torch_row(const struct lp_ncu_result *r, void *ctx, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT;
	(void)err;
	(void)ctx;
	assert_string_equal(r->process, "python3.12");
	assert_string_equal(r->kernel_name, "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT");
	assert_int_equal(r->pushpop->n, 2);
	assert_string_equal(r->pushpop->levels[0].domain, "");   /* <default domain>, Msg_Type none */
	assert_string_equal(r->pushpop->levels[0].name, "decode_all");
	assert_string_equal(r->pushpop->levels[1].name, "decode_step");
	lp_ncu_nvtx_stack_path(r->pushpop, &path);
	assert_string_equal(path.data, "decode_all/decode_step");
	assert_true(lp_ncu_stack_matches(r->pushpop, "@decode_all"));
	assert_false(lp_ncu_stack_matches(r->pushpop, "LLM@decode_all"));
	assert_true(r->duration_ns > 7000 && r->duration_ns < 7200);
	lp_buf_release(&path);
	return 0;
}

static void test_torch_raw(void **state)
{
	struct lp_err err = LP_ERR_INIT;
	struct lp_kernel_table t;
	struct lp_ncu_select sel = { "decode_all", 0 };
	(void)state;
	if (lp_ncu_raw_stream(lp_test_fixture("ncu/h200_torch_raw.csv"), torch_row, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture("ncu/h200_torch_raw.csv"), &sel, &t, &err), 0);
	assert_int_equal(t.n_rows, 1);
	lp_kernel_table_release(&t);
	sel.stage = "LLM@decode_all";
	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture("ncu/h200_torch_raw.csv"), &sel, &t, &err), 0);
	assert_int_equal(t.n_rows, 0);
	lp_kernel_table_release(&t);
}

/* app-range and range replay rows: Kernel Name "range", Stream n/a, no Block/Grid columns */
struct ranges {
	int n;
	double total_ns;
};

static int range_row(const struct lp_ncu_result *r, void *ctx, struct lp_err *err)
{
	struct ranges *x = ctx;
	(void)err;
	assert_true(r->is_range);
	assert_string_equal(r->kernel_name, "range");
	assert_string_equal(r->stream, "n/a");
	assert_false(r->has_launch);
	assert_int_equal(r->pushpop->n, 1);
	x->n++;
	x->total_ns += r->duration_ns;
	return 0;
}

static void test_apprange_rows(void **state)
{
	static const struct { const char *f; double total_ns; } cases[] = {
		{ "regions/h200_demo_apprange_raw.csv", 1608096 + 746016 },
		{ "regions/h200_demo_range_raw.csv", 545632 + 276576 },
		{ "regions/h200_torch_apprange_raw.csv", 254875232.0 + 112027360.0 },
		{ "regions/h200_llm_apprange_raw.csv", 2018624 + 1114048 },
	};
	struct lp_err err = LP_ERR_INIT;
	struct lp_kernel_table t;
	struct lp_ncu_select sel = { NULL, 0 };
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ranges x = { 0, 0 };
		if (lp_ncu_raw_stream(lp_test_fixture(cases[i].f), range_row, &x, &err) < 0)
			fail_msg("%s", err.msg);
		assert_int_equal(x.n, 2);
		assert_near(x.total_ns, cases[i].total_ns, 1e-12);
	}
	/* ranges are not kernels: an empty table unless asked for */
	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture(cases[0].f), &sel, &t, &err), 0);
	assert_int_equal(t.n_rows, 0);
	lp_kernel_table_release(&t);
	sel.include_ranges = 1;
	assert_int_equal(lp_ncu_raw_kernel_table(lp_test_fixture(cases[0].f), &sel, &t, &err), 0);
	assert_int_equal(t.n_rows, 1);
	assert_int_equal(t.rows[0].calls, 2);
	lp_kernel_table_release(&t);
}

/* ---- details page ---- */

static const struct lp_ncu_rule *rule(const struct lp_ncu_details_result *r, const char *name, size_t nth)
{
	size_t i;
	for (i = 0; i < r->n_rules; i++)
		if (!strcmp(r->rules[i].name, name) && nth-- == 0)
			return &r->rules[i];
	fail_msg("no rule '%s'", name);
	return NULL;
}

static const struct lp_ncu_detail_metric *dmetric(const struct lp_ncu_details_result *r, const char *section,
	const char *name)
{
	size_t i;
	for (i = 0; i < r->n_metrics; i++)
		if (!strcmp(r->metrics[i].section, section) && !strcmp(r->metrics[i].name, name))
			return &r->metrics[i];
	fail_msg("no metric '%s/%s'", section, name);
	return NULL;
}

static void test_details(void **state)
{
	struct lp_ncu_details d;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_ncu_details_result *r;
	const struct lp_ncu_rule *ru;
	const struct lp_ncu_detail_metric *m;
	(void)state;
	if (lp_ncu_details_load(lp_test_fixture("ncu/h200_llm_details.csv"), &d, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(d.n_results, 1);
	r = &d.results[0];
	assert_string_equal(r->kernel_name, K_EMBED);
	assert_int_equal(r->pid, 2674);
	assert_true(r->duration_ns == 2272);
	assert_string_equal(r->nvtx_path, "LLM@decode_all/LLM@decode_step/LLM@warmup");
	assert_int_equal(r->n_metrics, 64 - 1 - 4);   /* lines - header - rule rows */
	assert_int_equal(r->n_rules, 4);
	ru = rule(r, "SOLBottleneck", 0);
	assert_string_equal(ru->section, "SpeedOfLight");   /* identifiers on rule rows */
	assert_string_equal(ru->type, "OPT");
	assert_false(ru->has_speedup);
	assert_non_null(strstr(ru->description, "grid is too small"));
	ru = rule(r, "SOLFPRoofline", 0);
	assert_string_equal(ru->type, "INF");
	assert_false(ru->has_speedup);
	ru = rule(r, "IssueSlotUtilization", 0);
	assert_string_equal(ru->section, "SchedulerStats");
	assert_string_equal(ru->speedup_type, "local");
	assert_true(ru->has_speedup);
	assert_near(ru->speedup_pct, 97.7, 1e-12);
	ru = rule(r, "AchievedOccupancy", 0);
	assert_string_equal(ru->speedup_type, "global");
	assert_near(ru->speedup_pct, 92.52, 1e-12);
	/* display names on metric rows; base units; "no data" kept as text */
	m = dmetric(r, "GPU Speed Of Light Throughput", "Duration");
	assert_string_equal(m->unit, "nsecond");
	assert_true(m->valid && m->value == 2272);
	m = dmetric(r, "Memory Workload Analysis", "Memory Throughput");
	assert_string_equal(m->unit, "byte/second");
	assert_near(m->value, 1464788732.39, 1e-12);
	m = dmetric(r, "Memory Workload Analysis", "Local Memory Spilling Request Overhead");
	assert_false(m->valid);
	assert_string_equal(m->text, "no data");
	m = dmetric(r, "Command line profiler metrics", "dram__bytes_read.sum");
	assert_true(m->value == 3328);
	lp_ncu_details_release(&d);

	if (lp_ncu_details_load(lp_test_fixture("ncu/h200_torch_details.csv"), &d, &err) < 0)
		fail_msg("%s", err.msg);
	r = &d.results[0];
	assert_string_equal(r->nvtx_path, "decode_all/decode_step");
	assert_int_equal(r->n_rules, 7);
	assert_near(rule(r, "TheoreticalOccupancy", 0)->speedup_pct, 66.92, 1e-12);
	assert_near(rule(r, "WorkloadImbalance", 0)->speedup_pct, 5.647, 1e-12);
	assert_near(rule(r, "WorkloadImbalance", 2)->speedup_pct, 5.447, 1e-12);
	lp_ncu_details_release(&d);
}

/* ---- --print-summary ---- */

struct sum_rows {
	int n, kind;
	uint64_t groups;
	int saw_mem_throughput, saw_no_data, saw_l2_hit;
	uint64_t mem_throughput_line;
	double duration_ns;
	char stack[2][128];
};

static int sum_row(const struct lp_ncu_summary_row *r, void *ctx, struct lp_err *err)
{
	struct sum_rows *x = ctx;
	(void)err;
	x->n++;
	x->groups = r->group + 1;
	assert_string_equal(r->kernel_name, K_EMBED);
	assert_string_equal(r->short_name, "k_embed");
	assert_int_equal(r->device, 0);
	assert_int_equal(r->invocations, 1);
	assert_true(r->has_launch);
	assert_int_equal(r->block[0], 256);
	if (r->kind == LP_NCU_SUMMARY_PER_KERNEL) {
		assert_int_equal(r->pid, 2674);
		assert_string_equal(r->process, "llmprof-llm");
		assert_int_equal(r->nvtx->n, 0);
	} else if (r->group < 2 && !x->stack[r->group][0]) {
		struct lp_buf p = LP_BUF_INIT;
		lp_ncu_nvtx_stack_path(r->nvtx, &p);
		snprintf(x->stack[r->group], sizeof(x->stack[0]), "%s", p.data);
		lp_buf_release(&p);
	}
	if (!strcmp(r->metric, "gpu__time_duration.sum")) {
		assert_string_equal(r->unit, "nsecond");
		x->duration_ns = r->avg;
	}
	/* rows of the section whose line breaks ncu misplaced come out whole */
	if (!strcmp(r->section, "Memory Workload Analysis") && !strcmp(r->metric, "Memory Throughput")) {
		assert_string_equal(r->unit, "byte/second");
		assert_near(r->min, 1464788732.39, 1e-12);
		assert_near(r->avg, 1464788732.39, 1e-12);
		x->saw_mem_throughput++;
		x->mem_throughput_line = r->line;
	}
	if (!strcmp(r->metric, "L2 Hit Rate")) {
		assert_near(r->max, 52.26, 1e-12);
		x->saw_l2_hit++;
	}
	if (!strcmp(r->metric, "Local Memory Spilling Request Overhead"))
		x->saw_no_data++;
	assert_true(r->valid);
	return 0;
}

static void test_summary_per_kernel(void **state)
{
	struct sum_rows x;
	struct lp_err err = LP_ERR_INIT;
	struct lp_kernel_table t;
	struct lp_ncu_select sel = { NULL, 0 };
	int kind = 0;
	(void)state;
	memset(&x, 0, sizeof(x));
	if (lp_ncu_summary_stream(lp_test_fixture("ncu/h200_llm_summary_per_kernel.csv"), &kind, sum_row, &x, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(kind, LP_NCU_SUMMARY_PER_KERNEL);
	assert_int_equal(x.groups, 1);
	assert_int_equal(x.n, 58);              /* the details page's 59 metrics but the one without data */
	assert_int_equal(x.saw_mem_throughput, 1);
	assert_int_equal(x.mem_throughput_line, 32);  /* its first cells are at the end of line 32 */
	assert_int_equal(x.saw_l2_hit, 1);
	assert_int_equal(x.saw_no_data, 0);
	assert_true(x.duration_ns == 2272);
	/* the kernel table agrees with the raw page */
	if (lp_ncu_summary_kernel_table(lp_test_fixture("ncu/h200_llm_summary_per_kernel.csv"), &sel, &t, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(t.n_rows, 1);
	assert_string_equal(t.rows[0].kernel_name, K_EMBED);
	assert_int_equal(t.rows[0].calls, 1);
	assert_near(t.rows[0].total_ms, 0.002272, 1e-12);
	assert_near(t.rows[0].min_ms, 0.002272, 1e-12);
	assert_int_equal(t.rows[0].n_metrics, 58);
	assert_true(lp_kernel_record_metric(&t.rows[0], "Command line profiler metrics/dram__bytes_read.sum")->value == 3328);
	assert_near(lp_kernel_record_metric(&t.rows[0], "Memory Workload Analysis/L2 Hit Rate")->value, 52.26, 1e-12);
	lp_kernel_table_release(&t);
	/* no stage on a per-kernel summary */
	sel.stage = "LLM@decode_all";
	assert_int_equal(lp_ncu_summary_kernel_table(lp_test_fixture("ncu/h200_llm_summary_per_kernel.csv"), &sel, &t, &err), -1);
	assert_int_equal(err.kind, LP_EUSAGE);
}

static void test_summary_per_nvtx(void **state)
{
	struct sum_rows x;
	struct lp_err err = LP_ERR_INIT;
	struct lp_kernel_table t;
	struct lp_ncu_select sel = { "LLM@decode_all", 0 };
	int kind = 0;
	(void)state;
	memset(&x, 0, sizeof(x));
	if (lp_ncu_summary_stream(lp_test_fixture("ncu/h200_llm_summary_per_nvtx.csv"), &kind, sum_row, &x, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(kind, LP_NCU_SUMMARY_PER_NVTX);
	/* one group per domain handle: LLM decode_all > decode_step, then LLM warmup */
	assert_int_equal(x.groups, 2);
	assert_int_equal(x.n, 2 * 58);
	assert_string_equal(x.stack[0], "LLM@decode_all/LLM@decode_step");
	assert_string_equal(x.stack[1], "LLM@warmup");
	assert_int_equal(x.saw_mem_throughput, 2);
	assert_int_equal(x.saw_no_data, 0);
	if (lp_ncu_summary_kernel_table(lp_test_fixture("ncu/h200_llm_summary_per_nvtx.csv"), &sel, &t, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(t.n_rows, 1);
	assert_int_equal(t.rows[0].calls, 1);
	assert_near(t.rows[0].total_ms, 0.002272, 1e-12);
	lp_kernel_table_release(&t);
	sel.stage = "prefill";
	assert_int_equal(lp_ncu_summary_kernel_table(lp_test_fixture("ncu/h200_llm_summary_per_nvtx.csv"), &sel, &t, &err), 0);
	assert_int_equal(t.n_rows, 0);
	lp_kernel_table_release(&t);
	/* without a stage: refused (a kernel is listed once per domain) */
	sel.stage = NULL;
	assert_int_equal(lp_ncu_summary_kernel_table(lp_test_fixture("ncu/h200_llm_summary_per_nvtx.csv"), &sel, &t, &err), -1);
	assert_int_equal(err.kind, LP_EUSAGE);
	assert_non_null(strstr(err.msg, "per-NVTX summary"));
}

/* Synthetic edge cases in the real shape: the misaligned run at the end of the file, a metric
 * without data as the very last record, two kernels, a truncated row, a missing column. */
static int count_row(const struct lp_ncu_summary_row *r, void *ctx, struct lp_err *err)
{
	int *n = ctx;
	(void)err;
	if (!strcmp(r->metric, "M2"))
		assert_true(r->avg == 2000);     /* 2 Kbyte */
	(*n)++;
	return 0;
}

static void test_summary_edges(void **state)
{
	static const char *H = "\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Invocations\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Minimum\",\"Maximum\",\"Average\"\n";
#define ID(k) "\"1\",\"p\",\"h\",\"" k "\",\"(32, 1, 1)\",\"(2, 1, 1)\",\"0\",\"9.0\",\"3\",\"S\""
	const char *dir = lp_test_tmpdir("real_ncu_summary_edges");
	struct lp_buf p = LP_BUF_INIT, text = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	struct lp_kernel_table t;
	int n = 0;
	(void)state;
	/* kernel a: M1, then a metric without data, then M2 and M3 shifted, ending with a lone comma;
	 * kernel b: gpu__time_duration.sum, then a metric without data as the last record */
	lp_buf_addf(&text, "%s%s,\"M1\",\"\",\"1\",\"1\",\"1\"\n", H, ID("a(int)"));
	lp_buf_addf(&text, "%s,\"1\",\"p\",\"h\",\"a(int)\",\"(32, 1, 1)\"\n", ID("a(int)"));
	lp_buf_adds(&text, "\"(2, 1, 1)\",\"0\",\"9.0\",\"3\",\"S\",\"M2\",\"Kbyte\",\"2\",\"2\",\"2\",\"1\",\"p\",\"h\",\"a(int)\",\"(32, 1, 1)\"\n");
	lp_buf_adds(&text, "\"(2, 1, 1)\",\"0\",\"9.0\",\"3\",\"S\",\"M3\",\"\",\"3\",\"3\",\"3\",\n");
	lp_buf_addf(&text, "%s,\"gpu__time_duration.sum\",\"us\",\"1\",\"3\",\"2\"\n", ID("b(float)"));
	lp_buf_addf(&text, "%s\n", ID("b(float)"));
	lp_buf_addf(&p, "%s/s.csv", dir);
	lp_test_write(p.data, text.data);
	if (lp_ncu_summary_stream(p.data, NULL, count_row, &n, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(n, 4);
	if (lp_ncu_summary_kernel_table(p.data, NULL, &t, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(t.n_rows, 2);
	assert_string_equal(t.rows[0].kernel_name, "b(float)");   /* 3 x 2 us */
	assert_int_equal(t.rows[0].calls, 3);
	assert_near(t.rows[0].total_ms, 0.006, 1e-12);
	assert_near(t.rows[0].min_ms, 0.001, 1e-12);
	assert_near(t.rows[0].max_ms, 0.003, 1e-12);
	assert_string_equal(t.rows[1].kernel_name, "a(int)");     /* no duration: 0 ms, 3 calls */
	assert_int_equal(t.rows[1].calls, 3);
	assert_int_equal(t.rows[1].n_metrics, 3);
	lp_kernel_table_release(&t);

	/* truncated: the last record stops inside its metric cells */
	lp_buf_reset(&text);
	lp_buf_addf(&text, "%s%s,\"M1\",\"\",\"1\",\"1\",\"1\"\n%s,\"M2\",\"\"\n", H, ID("a(int)"), ID("a(int)"));
	lp_test_write(p.data, text.data);
	assert_int_equal(lp_ncu_summary_stream(p.data, NULL, count_row, &n, &err), -1);
	assert_int_equal(err.kind, LP_EPARSE);
	assert_non_null(strstr(err.msg, "s.csv:3: truncated row"));
	/* out of step: a row whose Block Size cell is not a launch shape */
	lp_buf_reset(&text);
	lp_buf_addf(&text, "%s\"1\",\"p\",\"h\",\"a\",\"x\",\"(2, 1, 1)\",\"0\",\"9.0\",\"3\",\"S\",\"M\",\"\",\"1\",\"1\",\"1\"\n", H);
	lp_test_write(p.data, text.data);
	assert_int_equal(lp_ncu_summary_stream(p.data, NULL, count_row, &n, &err), -1);
	assert_non_null(strstr(err.msg, "s.csv:2: row out of step"));
	/* a missing column, named */
	lp_test_write(p.data, "\"Kernel Name\",\"Invocations\",\"Section Name\",\"Metric Name\",\"Average\"\n");
	assert_int_equal(lp_ncu_summary_stream(p.data, NULL, count_row, &n, &err), -1);
	assert_non_null(strstr(err.msg, "column 'Device' missing"));
	lp_buf_release(&p);
	lp_buf_release(&text);
#undef ID
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_llm_raw),
		cmocka_unit_test(test_units_against_base_export),
		cmocka_unit_test(test_torch_raw),
		cmocka_unit_test(test_apprange_rows),
		cmocka_unit_test(test_details),
		cmocka_unit_test(test_summary_per_kernel),
		cmocka_unit_test(test_summary_per_nvtx),
		cmocka_unit_test(test_summary_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
