/* test_topn.c: top-N selection from an nsys-like profile (stage cut, warm-up excluded), regex
 * escaping, the demangled/function name bases, and the afterwards check. */
#include "testutil.h"

#include <sqlite3.h>
#include <string.h>

#include "analyze/topn.h"
#include "parse/nsys_sqlite.h"

static void test_escape(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	(void)state;
	lp_topn_regex_escape("void k<float, 4>(const float *, int) [clone .x] {a|b}^$?+\\", &b);
	assert_string_equal(b.data, "void k<float, 4>\\(const float \\*, int\\) \\[clone \\.x\\] \\{a\\|b\\}\\^\\$\\?\\+\\\\");
	lp_buf_release(&b);
}

static struct lp_kernel_record row(const char *name, double ms, uint64_t calls)
{
	struct lp_kernel_record r;
	memset(&r, 0, sizeof(r));
	r.kernel_name = name;
	r.short_name = name;
	r.total_ms = ms;
	r.calls = calls;
	return r;
}

static void test_from_table(void **state)
{
	struct lp_kernel_record rows[4];
	struct lp_kernel_table t;
	struct lp_topn sel;
	struct lp_topn_opts o = { 2, NULL, 0, NULL, 3 };
	struct lp_err err = LP_ERR_INIT;
	struct lp_kernel_record nrows[2];
	struct lp_kernel_table ncu;
	uint64_t prof[2];
	(void)state;
	rows[0] = row("std::enable_if<!T7, void>::type internal::gemvx::kernel<int, (bool)0>(T13)", 5, 10);
	rows[1] = row("void softmax<float>(float *, int)", 3, 10);
	rows[2] = row("ampere_sgemm_128x64_nn", 1, 2);
	rows[3] = row("tiny", 0.5, 1);
	memset(&t, 0, sizeof(t));
	t.rows = rows;
	t.n_rows = 4;
	t.total_ms = 9.5;
	assert_int_equal(lp_topn_from_table(&t, &o, &sel, &err), 0);
	assert_int_equal(sel.n_picks, 2);
	assert_string_equal(sel.picks[0].match_name, "internal::gemvx::kernel<int, (bool)0>(T13)");
	assert_string_equal(sel.picks[1].match_name, "softmax<float>(float *, int)");
	assert_string_equal(sel.regex, "regex:(^| )(internal::gemvx::kernel<int, \\(bool\\)0>\\(T13\\)|"
		"softmax<float>\\(float \\*, int\\))$");
	assert_int_equal(sel.launch_count_total, 6);
	assert_true(sel.picks[0].share > 0.52 && sel.picks[0].share < 0.53);

	/* ncu printed the first without its return type, and never profiled the second */
	nrows[0] = row("internal::gemvx::kernel<int, (bool)0>(T13)", 0.1, 3);
	nrows[1] = row("ampere_sgemm_128x64_nn", 0.1, 3);
	memset(&ncu, 0, sizeof(ncu));
	ncu.rows = nrows;
	ncu.n_rows = 2;
	assert_int_equal(lp_topn_check(&sel, &ncu, "demangled", prof), 1);
	assert_int_equal(prof[0], 3);
	assert_int_equal(prof[1], 0);
	lp_topn_release(&sel);

	o.name_base = "function";
	assert_int_equal(lp_topn_from_table(&t, &o, &sel, &err), 0);
	assert_string_equal(sel.regex, "regex:^(kernel|softmax)$");
	lp_topn_release(&sel);
	o.name_base = "mangled";
	assert_int_equal(lp_topn_from_table(&t, &o, &sel, &err), -1);
}

/* A tensor-parallel decode's top kernels are NCCL's: they are never picked (a replayed collective
 * waits for ranks that do not replay it), the next compute kernels are. */
static void test_no_collectives(void **state)
{
	struct lp_kernel_record rows[4];
	struct lp_kernel_table t;
	struct lp_topn sel;
	struct lp_topn_opts o = { 2, NULL, 0, "function", 1 };
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	rows[0] = row("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)", 50, 10);
	rows[1] = row("nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT", 5, 10);
	rows[2] = row("void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(int)", 4, 10);
	rows[3] = row("void rms_norm<float>(float *)", 1, 10);
	memset(&t, 0, sizeof(t));
	t.rows = rows;
	t.n_rows = 4;
	t.total_ms = 60;
	assert_int_equal(lp_topn_from_table(&t, &o, &sel, &err), 0);
	assert_int_equal(sel.n_picks, 2);
	assert_int_equal(sel.n_comm_skipped, 2);
	assert_string_equal(sel.regex, "regex:^(nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT|rms_norm)$");
	lp_topn_release(&sel);
}

static void test_from_profile(void **state)
{
	const char *dir = lp_test_tmpdir("topn_profile");
	char path[4096];
	struct lp_buf sql = LP_BUF_INIT;
	struct lp_profile p;
	struct lp_topn sel;
	struct lp_topn_opts o = { 5, NULL, 1, "function", 1 };
	struct lp_err err = LP_ERR_INIT;
	sqlite3 *db;
	(void)state;
	snprintf(path, sizeof(path), "%s/x.sqlite", dir);
	lp_test_read(lp_test_fixture("nsys/synthetic.sql"), &sql);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql.data, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	lp_profile_init(&p, path);
	assert_int_equal(lp_nsys_sqlite_load(path, &p, &err), 0);
	/* decode_all (default stage): gemv twice (pid 100) + once (pid 200), softmax once */
	assert_int_equal(lp_topn_from_profile(&p, &o, &sel, &err), 0);
	assert_int_equal(sel.n_picks, 2);
	assert_string_equal(sel.picks[0].match_name, "gemv_kernel");
	assert_int_equal(sel.picks[0].calls, 3);
	assert_string_equal(sel.regex, "regex:^(gemv_kernel|softmax_kernel)$");
	lp_topn_release(&sel);
	o.stage = "prefill";
	assert_int_equal(lp_topn_from_profile(&p, &o, &sel, &err), -1);
	assert_string_equal(err.msg, "no kernels ran under the stage 'prefill'");
	lp_profile_release(&p);
	lp_buf_release(&sql);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_from_table),
		cmocka_unit_test(test_no_collectives),
		cmocka_unit_test(test_from_profile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
