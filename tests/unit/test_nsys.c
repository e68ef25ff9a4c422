/* test_nsys.c: nsys stats CSVs and the SQLite export (built here from
 * tests/fixtures/nsys/synthetic.sql): domains per process, range nesting, kernel-to-range
 * attribution by the launching thread, direct aggregation, bad input. */
#include "testutil.h"

#include <math.h>
#include <sqlite3.h>
#include <string.h>

#include "parse/nsys_csv.h"
#include "parse/nsys_sqlite.h"

static const char *make_db(const char *name, const char *sql_fixture, const char *extra_sql)
{
	static char path[4096];
	const char *dir = lp_test_tmpdir(name);
	struct lp_buf sql = LP_BUF_INIT;
	sqlite3 *db;
	char *msg = NULL;
	snprintf(path, sizeof(path), "%s/x.sqlite", dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (sql_fixture)
		lp_test_read(lp_test_fixture(sql_fixture), &sql);
	if (extra_sql)
		lp_buf_adds(&sql, extra_sql);
	if (sqlite3_exec(db, sql.data, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("sql: %s", msg);
	sqlite3_close(db);
	lp_buf_release(&sql);
	return path;
}

static const struct lp_kernel *kernel_by_corr(const struct lp_profile *p, uint32_t corr, uint32_t pid)
{
	size_t i;
	for (i = 0; i < p->n_kernels; i++)
		if (p->kernels[i].correlation_id == corr && p->kernels[i].pid == pid)
			return &p->kernels[i];
	fail_msg("no kernel with correlation id %u", corr);
	return &p->kernels[0];  /* not reached */
}

static void test_sqlite_profile(void **state)
{
	const char *path = make_db("nsys_profile", "nsys/synthetic.sql", NULL);
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf rp = LP_BUF_INIT;
	struct lp_kernel_filter f = { "LLM@decode_all", -1, 0, NULL };
	struct lp_kernel_table t;
	const struct lp_kernel *k;
	size_t i;
	int n_other = 0;
	(void)state;
	lp_profile_init(&p, path);
	if (lp_nsys_sqlite_load(path, &p, &err) < 0)
		fail_msg("%s", err.msg);
	assert_string_equal(p.source_kind, "nsys-sqlite");
	assert_int_equal(p.n_devices, 1);
	assert_string_equal(p.devices[0].name, "NVIDIA H100 80GB HBM3");
	assert_int_equal(p.devices[0].sm_count, 132);
	assert_int_equal(p.n_kernels, 7);
	for (i = 1; i < p.n_kernels; i++)
		assert_true(p.kernels[i - 1].start_ns <= p.kernels[i].start_ns);
	assert_int_equal(p.n_ranges, 7);
	for (i = 0; i < p.n_ranges; i++)
		if (!strcmp(p.ranges[i].domain, "OTHER"))
			n_other++;
	assert_int_equal(n_other, 1);  /* domain 1 of pid 200 is OTHER, of pid 100 is LLM */

	k = kernel_by_corr(&p, 12, 100);  /* launched at 2100 inside decode_step #1 */
	assert_true(k->range >= 0);
	lp_profile_range_path(&p, k->range, &rp);
	assert_string_equal(rp.data, "decode_all/decode_step");
	assert_string_equal(p.ranges[k->range].domain, "LLM");
	assert_int_equal(p.ranges[k->range].payload.u64, 1);
	assert_int_equal(k->launch_tid, 101);
	k = kernel_by_corr(&p, 13, 100);  /* at 5100: decode_step #2 (the first closed at 5000) */
	assert_int_equal(p.ranges[k->range].payload.u64, 2);
	k = kernel_by_corr(&p, 14, 100);  /* at 8500: only decode_all */
	lp_profile_range_path(&p, k->range, &rp);
	assert_string_equal(rp.data, "decode_all");
	k = kernel_by_corr(&p, 15, 100);  /* another thread: no range there */
	assert_int_equal(k->range, -1);
	k = kernel_by_corr(&p, 16, 100);  /* at 9500, after decode_all closed */
	assert_int_equal(k->range, -1);
	k = kernel_by_corr(&p, 11, 100);
	assert_string_equal(p.ranges[k->range].name, "warmup");
	k = kernel_by_corr(&p, 12, 200);  /* same correlation id in another process */
	lp_profile_range_path(&p, k->range, &rp);
	assert_string_equal(rp.data, "decode_all");
	assert_string_equal(p.ranges[k->range].domain, "OTHER");

	assert_int_equal(lp_kernel_table_build(&p, &f, &t, &err), 0);
	assert_int_equal(t.n_rows, 2);
	assert_string_equal(t.rows[0].kernel_name, "void gemv_kernel<float, 4>(const float *, float *, int)");
	assert_int_equal(t.rows[0].calls, 2);
	assert_true(fabs(t.rows[0].total_ms - 0.001) < 1e-12);
	lp_kernel_table_release(&t);
	lp_buf_release(&rp);
	lp_profile_release(&p);
}

static void test_sqlite_table_and_errors(void **state)
{
	const char *path = make_db("nsys_table", "nsys/synthetic.sql", NULL);
	struct lp_kernel_table t;
	struct lp_err err = LP_ERR_INIT;
	struct lp_profile p;
	(void)state;
	assert_int_equal(lp_nsys_sqlite_kernel_table(path, &t, &err), 0);
	assert_int_equal(t.n_rows, 5);
	assert_string_equal(t.rows[0].kernel_name, "void gemv_kernel<float, 4>(const float *, float *, int)");
	assert_string_equal(t.rows[0].short_name, "gemv_kernel");
	assert_int_equal(t.rows[0].calls, 3);
	assert_true(fabs(t.rows[0].total_ms - 0.0015) < 1e-12);
	lp_kernel_table_release(&t);

	path = make_db("nsys_not", NULL, "CREATE TABLE foo (a INT); INSERT INTO foo VALUES (1);");
	assert_int_equal(lp_nsys_sqlite_kernel_table(path, &t, &err), -1);
	assert_int_equal(err.kind, LP_EPARSE);
	assert_non_null(strstr(err.msg, "is corrupt or not an nsys export: table 'StringIds' missing"));

	path = make_db("nsys_nokern", NULL, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);");
	assert_int_equal(lp_nsys_sqlite_kernel_table(path, &t, &err), 0);
	assert_int_equal(t.n_rows, 0);
	lp_profile_init(&p, path);
	assert_int_equal(lp_nsys_sqlite_load(path, &p, &err), 0);
	assert_int_equal(p.n_kernels, 0);
	lp_profile_release(&p);

	assert_int_equal(lp_nsys_sqlite_kernel_table(lp_test_fixture("ncu/synthetic_raw.csv"), &t, &err), -1);
	assert_non_null(strstr(err.msg, "is not an SQLite database"));
}

static void test_stats_csv(void **state)
{
	struct lp_kernel_table t;
	struct lp_nsys_range_table r;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_int_equal(lp_nsys_kern_sum_load(lp_test_fixture("nsys/summary_cuda_gpu_kern_sum.csv"), &t, &err), 0);
	assert_int_equal(t.n_rows, 3);
	assert_true(t.rows[0].total_ms == 1.2);  /* "1,200,000" ns */
	assert_int_equal(t.rows[0].calls, 300);
	assert_true(fabs(t.rows[0].mean_ms - 0.004) < 1e-15);
	assert_true(t.rows[0].min_ms == 0.003);
	assert_int_equal(t.rows[0].device, -1);
	assert_string_equal(t.rows[2].kernel_name, "name:with:colons, and commas");
	lp_kernel_table_release(&t);
	assert_int_equal(lp_nsys_kern_sum_load(lp_test_fixture("nsys/empty_cuda_gpu_kern_sum.csv"), &t, &err), 0);
	assert_int_equal(t.n_rows, 0);
	assert_int_equal(lp_nsys_kern_sum_load(lp_test_fixture("nsys/summary_nvtx_sum.csv"), &t, &err), -1);
	assert_non_null(strstr(err.msg, "column 'Name' missing"));

	assert_int_equal(lp_nsys_range_sum_load(lp_test_fixture("nsys/summary_nvtx_sum.csv"), &r, &err), 0);
	assert_int_equal(r.n_rows, 3);
	assert_false(r.projected);
	assert_string_equal(r.rows[0].domain, "LLM");
	assert_string_equal(r.rows[0].name, "decode_all");
	assert_string_equal(r.rows[1].domain, "");
	assert_string_equal(r.rows[1].name, "outer");
	assert_int_equal(r.rows[1].instances, 8);
	assert_string_equal(r.rows[2].name, "a:b");
	assert_string_equal(r.rows[2].style, "StartEnd");
	lp_nsys_range_table_release(&r);
	assert_int_equal(lp_nsys_range_sum_load(lp_test_fixture("nsys/summary_nvtx_sum_old.csv"), &r, &err), 0);
	assert_string_equal(r.rows[0].domain, "");
	assert_string_equal(r.rows[0].name, "decode_all");
	lp_nsys_range_table_release(&r);
	assert_int_equal(lp_nsys_range_sum_load(lp_test_fixture("nsys/summary_nvtx_gpu_proj_sum.csv"), &r, &err), 0);
	assert_true(r.projected);
	assert_true(r.rows[0].total_ns == 7.5e6);
	assert_true(r.rows[0].range_total_ns == 9e6);
	assert_int_equal(r.rows[0].instances, 1);
	lp_nsys_range_table_release(&r);
	assert_int_equal(lp_nsys_range_sum_load(lp_test_fixture("nsys/summary_cuda_api_sum.csv"), &r, &err), 0);
	assert_int_equal(r.n_rows, 0);
	assert_true(lp_nsys_header_ns("Avg (us)") == 1e3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sqlite_profile),
		cmocka_unit_test(test_sqlite_table_and_errors),
		cmocka_unit_test(test_stats_csv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
