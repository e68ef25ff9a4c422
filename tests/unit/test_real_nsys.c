/* test_real_nsys.c: the nsys readers on REAL captures from an H200 (tests/fixtures/nsys/h200_*,
 * README there), two sources checked against each other: the sqlite export's kernels against
 * nsys's own cuda_gpu_kern_sum CSV (per kernel name: calls and total time), its NVTX ranges
 * against nvtx_sum (instances per range), its kernel-to-range attribution against
 * nvtx_gpu_proj_sum (GPU ops and projected time per range); PyTorch's default-domain ranges; the
 * NVTX-gated capture with no kernel table at all and 0-byte reports. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "parse/csv.h"
#include "parse/nsys_csv.h"
#include "parse/nsys_sqlite.h"
#include "parse/source.h"

static const struct lp_kernel_record *find(const struct lp_kernel_table *t, const char *name)
{
	size_t i;
	for (i = 0; i < t->n_rows; i++)
		if (!strcmp(t->rows[i].kernel_name, name))
			return &t->rows[i];
	return NULL;
}

/* sqlite kernels == cuda_gpu_kern_sum, kernel by kernel (the CSV has whole ns: 0.5 ns rounding) */
static void cross_check_kernels(const char *sqlite, const char *csv, size_t want_rows, uint64_t want_calls)
{
	struct lp_kernel_table a, b;
	struct lp_err err = LP_ERR_INIT;
	uint64_t calls = 0;
	size_t i;
	if (lp_nsys_sqlite_kernel_table(lp_test_fixture(sqlite), &a, &err) < 0 ||
			lp_nsys_kern_sum_load(lp_test_fixture(csv), &b, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(a.n_rows, want_rows);
	assert_int_equal(b.n_rows, want_rows);
	for (i = 0; i < a.n_rows; i++) {
		const struct lp_kernel_record *x = &a.rows[i], *y = find(&b, x->kernel_name);
		if (!y)
			fail_msg("'%s' is in the export, not in cuda_gpu_kern_sum", x->kernel_name);
		assert_int_equal(x->calls, y->calls);
		if (fabs(x->total_ms - y->total_ms) > 1e-6 * 0.5 * (double)x->calls + 1e-12)
			fail_msg("'%s': %.6f ms (sqlite) vs %.6f ms (csv)", x->kernel_name, x->total_ms, y->total_ms);
		if (fabs(x->min_ms - y->min_ms) > 1e-6 || fabs(x->max_ms - y->max_ms) > 1e-6)
			fail_msg("'%s': min/max differ", x->kernel_name);
		calls += x->calls;
	}
	assert_int_equal(calls, want_calls);
	assert_true(fabs(a.total_ms - b.total_ms) < 1e-6 * (double)want_calls);
	lp_kernel_table_release(&a);
	lp_kernel_table_release(&b);
}

static void test_kernels_sqlite_vs_csv(void **state)
{
	(void)state;
	cross_check_kernels("nsys/h200_llm.sqlite", "nsys/h200_llm_cuda_gpu_kern_sum.csv", 11, 126);
	cross_check_kernels("nsys/h200_torch.sqlite", "nsys/h200_torch_cuda_gpu_kern_sum.csv", 7, 19);
}

static void test_llm_kern_sum_values(void **state)
{
	struct lp_kernel_table t;
	struct lp_err err = LP_ERR_INIT;
	const struct lp_kernel_record *r;
	(void)state;
	if (lp_nsys_kern_sum_load(lp_test_fixture("nsys/h200_llm_cuda_gpu_kern_sum.csv"), &t, &err) < 0)
		fail_msg("%s", err.msg);
	/* 46.3,178175,10,17817.5,18048.0,15776,18432,847.1,"k_attention(unsigned short *, ...)" */
	r = &t.rows[0];
	assert_string_equal(r->short_name, "k_attention");
	assert_int_equal(r->calls, 10);
	assert_true(fabs(r->total_ms - 0.178175) < 1e-12);
	assert_true(fabs(r->min_ms - 0.015776) < 1e-12);
	assert_true(fabs(r->max_ms - 0.018432) < 1e-12);
	assert_true(fabs(r->mean_ms - 0.0178175) < 1e-12);
	assert_int_equal(r->device, -1);
	r = find(&t, "nvjet_sm90_tst_64x8_64x16_2x4_h_bz_TNT");   /* no quotes: no comma in the name */
	assert_non_null(r);
	assert_int_equal(r->calls, 32);
	lp_kernel_table_release(&t);
}

/* Every range in nvtx_sum has as many instances in the export as nsys counted. */
static void cross_check_ranges(const char *sqlite, const char *nvtx_sum, size_t want_rows)
{
	struct lp_profile p;
	struct lp_nsys_range_table t;
	struct lp_err err = LP_ERR_INIT;
	size_t i, j;
	lp_profile_init(&p, sqlite);
	if (lp_nsys_sqlite_load(lp_test_fixture(sqlite), &p, &err) < 0 ||
			lp_nsys_range_sum_load(lp_test_fixture(nvtx_sum), &t, &err) < 0)
		fail_msg("%s", err.msg);
	assert_false(t.projected);
	assert_int_equal(t.n_rows, want_rows);
	for (i = 0; i < t.n_rows; i++) {
		uint64_t n = 0;
		assert_string_equal(t.rows[i].style, "PushPop");
		for (j = 0; j < p.n_ranges; j++)
			n += p.ranges[j].kind == LP_RANGE_PUSHPOP && !strcmp(p.ranges[j].domain, t.rows[i].domain) &&
				!strcmp(p.ranges[j].name, t.rows[i].name);
		if (n != t.rows[i].instances)
			fail_msg("range '%s:%s': %llu in the export, %llu in nvtx_sum", t.rows[i].domain, t.rows[i].name,
				(unsigned long long)n, (unsigned long long)t.rows[i].instances);
	}
	lp_nsys_range_table_release(&t);
	lp_profile_release(&p);
}

static void test_ranges_sqlite_vs_nvtx_sum(void **state)
{
	struct lp_nsys_range_table t;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	cross_check_ranges("nsys/h200_llm.sqlite", "nsys/h200_llm_nvtx_sum.csv", 16);
	cross_check_ranges("nsys/h200_torch.sqlite", "nsys/h200_torch_nvtx_sum.csv", 3);
	/* "LLM:decode_all" and torch's ":decode_all" (default domain) */
	if (lp_nsys_range_sum_load(lp_test_fixture("nsys/h200_llm_nvtx_sum.csv"), &t, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(t.rows[3].domain, "LLM");
	assert_string_equal(t.rows[3].name, "decode_all");
	assert_int_equal(t.rows[3].instances, 3);
	assert_true(t.rows[3].total_ns == 153514);
	lp_nsys_range_table_release(&t);
	if (lp_nsys_range_sum_load(lp_test_fixture("nsys/h200_torch_nvtx_sum.csv"), &t, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(t.rows[0].domain, "");
	assert_string_equal(t.rows[0].name, "decode_all");
	lp_nsys_range_table_release(&t);
}

/* "Total GPU Ops" of each nvtx_gpu_proj_sum row (the parser keeps times only) */
static uint64_t gpu_ops(const char *csv, const char *range)
{
	struct lp_csv c;
	struct lp_err err = LP_ERR_INIT;
	int col_r, col_o;
	double v = -1;
	if (lp_csv_open(&c, lp_test_fixture(csv), NULL, &err) < 0 || lp_csv_next(&c, &err) <= 0)
		fail_msg("%s", err.msg);
	col_r = lp_csv_column(&c, "Range");
	col_o = lp_csv_column(&c, "Total GPU Ops");
	assert_true(col_r >= 0 && col_o >= 0);
	while (lp_csv_next(&c, &err) > 0)
		if (!strcmp(c.fields[col_r], range))
			assert_int_equal(lp_csv_number(c.fields[col_o], &v), 1);
	lp_csv_close(&c);
	if (v < 0)
		fail_msg("no range '%s' in %s", range, csv);
	return (uint64_t)v;
}

static void stage_table(const char *sqlite, const char *stage, struct lp_kernel_table *t, uint64_t *calls)
{
	struct lp_source_opts o = { .stage = stage };
	struct lp_buf res = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	enum lp_source_kind kind;
	size_t i;
	if (lp_source_kernel_table(lp_test_fixture(sqlite), &o, t, &kind, &res, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(kind, LP_SOURCE_NSYS_SQLITE);
	*calls = 0;
	for (i = 0; i < t->n_rows; i++)
		*calls += t->rows[i].calls;
	lp_buf_release(&res);
}

/* Attribution (kernel -> innermost range at its launch call) against nsys's own projection. */
static void test_attribution_vs_gpu_proj_sum(void **state)
{
	/* ranges whose instances each hold one kernel: the projected time is the kernels' time */
	static const char *const single[] = { "attention", "qkv", "o_proj", "sample", "mlp_norm",
		"attn_norm", "rope", "lm_head", "final_norm", "embed" };
	struct lp_nsys_range_table proj;
	struct lp_kernel_table t;
	struct lp_err err = LP_ERR_INIT;
	char stage[64], cell[64];
	uint64_t calls;
	size_t i, j;
	(void)state;
	if (lp_nsys_range_sum_load(lp_test_fixture("nsys/h200_llm_nvtx_gpu_proj_sum.csv"), &proj, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(proj.projected);
	for (i = 0; i < sizeof(single) / sizeof(single[0]); i++) {
		const struct lp_nsys_range_row *row = NULL;
		for (j = 0; j < proj.n_rows; j++)
			if (!strcmp(proj.rows[j].name, single[i]))
				row = &proj.rows[j];
		assert_non_null(row);
		snprintf(stage, sizeof(stage), "LLM@%s", single[i]);
		snprintf(cell, sizeof(cell), "LLM:%s", single[i]);
		stage_table("nsys/h200_llm.sqlite", stage, &t, &calls);
		assert_int_equal(calls, gpu_ops("nsys/h200_llm_nvtx_gpu_proj_sum.csv", cell));
		if (fabs(t.total_ms * 1e6 - row->total_ns) > 0.5)
			fail_msg("%s: %.1f ns of kernels, %.1f ns projected", single[i], t.total_ms * 1e6, row->total_ns);
		lp_kernel_table_release(&t);
	}
	/* LLM:layer: 6 instances x 9 kernels, all kernels */
	stage_table("nsys/h200_llm.sqlite", "LLM@layer", &t, &calls);
	assert_int_equal(calls, 54);
	assert_int_equal(calls, gpu_ops("nsys/h200_llm_nvtx_gpu_proj_sum.csv", "LLM:layer"));
	lp_kernel_table_release(&t);
	/* LLM:prefill: 69 GPU ops = 66 kernels + 3 memsets (cudaMemsetAsync inside prefill) */
	stage_table("nsys/h200_llm.sqlite", "LLM@prefill", &t, &calls);
	assert_int_equal(calls, 66);
	assert_int_equal(gpu_ops("nsys/h200_llm_nvtx_gpu_proj_sum.csv", "LLM:prefill"), 69);
	lp_kernel_table_release(&t);
	{
		/* the copies are attributed the same way: the 3 other GPU ops of prefill are memsets */
		struct lp_profile cp;
		size_t n_prefill = 0;
		lp_profile_init(&cp, "copies");
		if (lp_nsys_sqlite_load(lp_test_fixture("nsys/h200_llm.sqlite"), &cp, &err) < 0)
			fail_msg("%s", err.msg);
		for (j = 0; j < cp.n_copies; j++)
			if (lp_profile_range_find_ancestor(&cp, cp.copies[j].range, "LLM@prefill") >= 0) {
				assert_int_equal(cp.copies[j].kind, LP_COPY_MEMSET);
				n_prefill++;
			}
		assert_int_equal(n_prefill, 3);
		lp_profile_release(&cp);
	}
	/* LLM:decode_all: the decode steps are CUDA graph launches, which nsys's default
	 * --cuda-graph-trace=graph records as whole graphs, not kernels: no GPU op projected, and
	 * nothing attributed */
	for (j = 0; j < proj.n_rows; j++)
		assert_true(strcmp(proj.rows[j].name, "decode_all") != 0 && strcmp(proj.rows[j].name, "decode_step") != 0);
	stage_table("nsys/h200_llm.sqlite", "LLM@decode_all", &t, &calls);
	assert_int_equal(calls, 0);
	lp_kernel_table_release(&t);
	lp_nsys_range_table_release(&proj);

	/* PyTorch: default-domain ranges; the "LLM@" form matches nothing */
	stage_table("nsys/h200_torch.sqlite", "@decode_all", &t, &calls);
	assert_int_equal(calls, 15);
	assert_int_equal(calls, gpu_ops("nsys/h200_torch_nvtx_gpu_proj_sum.csv", ":decode_all"));
	assert_int_equal(t.n_rows, 5);
	lp_kernel_table_release(&t);
	stage_table("nsys/h200_torch.sqlite", "decode_step", &t, &calls);
	assert_int_equal(calls, gpu_ops("nsys/h200_torch_nvtx_gpu_proj_sum.csv", ":decode_step"));
	lp_kernel_table_release(&t);
	stage_table("nsys/h200_torch.sqlite", "warmup", &t, &calls);
	assert_int_equal(calls, gpu_ops("nsys/h200_torch_nvtx_gpu_proj_sum.csv", ":warmup"));
	assert_string_equal(t.rows[0].kernel_name, "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT");
	lp_kernel_table_release(&t);
	stage_table("nsys/h200_torch.sqlite", "LLM@decode_all", &t, &calls);
	assert_int_equal(calls, 0);
	lp_kernel_table_release(&t);
}

static void test_profile_model(void **state)
{
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	size_t i, attributed = 0;
	(void)state;
	lp_profile_init(&p, "llm");
	if (lp_nsys_sqlite_load(lp_test_fixture("nsys/h200_llm.sqlite"), &p, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(p.n_kernels, 126);
	assert_int_equal(p.n_devices, 1);
	assert_non_null(strstr(p.devices[0].name, "H200"));
	assert_int_equal(p.n_ranges, 111);     /* 113 NVTX events - 2 domain creations */
	/* sqlite3: 5 memsets, 5 memcpys (copyKind 1 HtoD x2, 2 DtoH x3) */
	assert_int_equal(p.n_copies, 10);
	{
		size_t n_memset = 0, n_htod = 0, n_dtoh = 0;
		for (i = 0; i < p.n_copies; i++) {
			n_memset += p.copies[i].kind == LP_COPY_MEMSET;
			n_htod += p.copies[i].kind == LP_COPY_HTOD;
			n_dtoh += p.copies[i].kind == LP_COPY_DTOH;
			assert_true(p.copies[i].end_ns >= p.copies[i].start_ns);
			assert_true(p.copies[i].bytes > 0);
		}
		assert_int_equal(n_memset, 5);
		assert_int_equal(n_htod, 2);
		assert_int_equal(n_dtoh, 3);
	}
	for (i = 0; i < p.n_kernels; i++) {
		const struct lp_kernel *k = &p.kernels[i];
		assert_true(k->end_ns > k->start_ns);
		assert_true(i == 0 || k->start_ns >= p.kernels[i - 1].start_ns);   /* ORDER BY start */
		if (k->range >= 0) {
			const struct lp_range *r = &p.ranges[k->range];
			attributed++;
			assert_string_equal(r->domain, "LLM");
			assert_true(k->launch_ns >= r->start_ns && k->launch_ns <= r->end_ns);
			assert_int_equal(k->launch_tid, r->tid);
		}
	}
	/* exactly the 3 x 22 prefill kernels: the 60 launched before any range (14 fills and the
	 * un-ranged forward passes that build the decode graph) stay unattributed, and the decode
	 * kernels run inside graphs, which this export does not list as kernels */
	assert_int_equal(attributed, 66);
	lp_profile_release(&p);
}

/* NVTX-gated capture: the export has no CUPTI_ACTIVITY_KIND_KERNEL table, the stats CSVs are 0 bytes */
static void test_capture_without_kernels(void **state)
{
	struct lp_kernel_table t;
	struct lp_nsys_range_table r;
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_int_equal(lp_nsys_sqlite_kernel_table(lp_test_fixture("nsys/h200_llm_capture.sqlite"), &t, &err), 0);
	assert_int_equal(t.n_rows, 0);
	lp_kernel_table_release(&t);
	lp_profile_init(&p, "capture");
	assert_int_equal(lp_nsys_sqlite_load(lp_test_fixture("nsys/h200_llm_capture.sqlite"), &p, &err), 0);
	assert_int_equal(p.n_kernels, 0);
	assert_int_equal(p.n_ranges, 9);      /* decode_all and its 8 decode_step */
	lp_profile_release(&p);
	assert_int_equal(lp_nsys_kern_sum_load(lp_test_fixture("nsys/h200_llm_capture_cuda_gpu_kern_sum.csv"), &t, &err), 0);
	assert_int_equal(t.n_rows, 0);
	lp_kernel_table_release(&t);
	assert_int_equal(lp_nsys_range_sum_load(lp_test_fixture("nsys/h200_llm_capture_nvtx_gpu_proj_sum.csv"), &r, &err), 0);
	assert_int_equal(r.n_rows, 0);
	lp_nsys_range_table_release(&r);
	assert_int_equal(lp_nsys_range_sum_load(lp_test_fixture("nsys/h200_llm_capture_nvtx_sum.csv"), &r, &err), 0);
	assert_int_equal(r.n_rows, 2);
	assert_int_equal(r.rows[1].instances, 8);
	lp_nsys_range_table_release(&r);
}

/* cuda_api_sum is recognized as no kernel table: `kernels` refuses it with one line */
static void test_api_sum_refused(void **state)
{
	struct lp_kernel_table t;
	struct lp_buf res = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	enum lp_source_kind kind;
	(void)state;
	assert_int_equal(lp_source_kernel_table(lp_test_fixture("nsys/h200_llm_cuda_api_sum.csv"), NULL, &t, &kind,
		&res, &err), -1);
	assert_int_equal(err.kind, LP_EPARSE);
	assert_non_null(strstr(err.msg, "h200_llm_cuda_api_sum.csv"));
	lp_buf_release(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernels_sqlite_vs_csv),
		cmocka_unit_test(test_llm_kern_sum_values),
		cmocka_unit_test(test_ranges_sqlite_vs_nvtx_sum),
		cmocka_unit_test(test_attribution_vs_gpu_proj_sum),
		cmocka_unit_test(test_profile_model),
		cmocka_unit_test(test_capture_without_kernels),
		cmocka_unit_test(test_api_sum_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
