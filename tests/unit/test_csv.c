/* test_csv.c: the RFC 4180 reader (quotes, CRLF, limits, truncation) and number cells. */
#include "testutil.h"

#include <string.h>

#include "parse/csv.h"

static void expect_record(struct lp_csv *c, const char *const *want, size_t n)
{
	struct lp_err err = LP_ERR_INIT;
	size_t i;
	assert_int_equal(lp_csv_next(c, &err), 1);
	assert_int_equal(c->n_fields, n);
	for (i = 0; i < n; i++) {
		assert_string_equal(c->fields[i], want[i]);
		assert_int_equal(c->lens[i], strlen(want[i]));
	}
}

static void test_quotes_and_line_ends(void **state)
{
	static const char in[] = "\xEF\xBB\xBF" "a,\"b,c\",\"say \"\"hi\"\"\"\r\n"
				 "\"multi\nline\",,x\n"
				 "\n"
				 "last,\"\"";
	const char *r1[] = { "a", "b,c", "say \"hi\"" };
	const char *r2[] = { "multi\nline", "", "x" };
	const char *r3[] = { "" };
	const char *r4[] = { "last", "" };
	struct lp_csv c;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	lp_csv_open_mem(&c, in, sizeof(in) - 1, "mem", NULL);
	expect_record(&c, r1, 3);
	assert_int_equal(c.line, 1);
	expect_record(&c, r2, 3);
	assert_int_equal(c.line, 2);
	expect_record(&c, r3, 1);
	assert_int_equal(c.line, 4);
	expect_record(&c, r4, 2);
	assert_int_equal(lp_csv_next(&c, &err), 0);
	lp_csv_close(&c);
}

static void test_truncated_and_limits(void **state)
{
	static const char trunc[] = "a,b\n\"open,field\n";
	static const char wide[] = "1,2,3,4,5\n";
	static const char longf[] = "abcdefghijkl\n";
	struct lp_csv_limits lim = { 0, 4, 0 }, flim = { 8, 0, 0 };
	struct lp_csv c;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	lp_csv_open_mem(&c, trunc, sizeof(trunc) - 1, "t.csv", NULL);
	assert_int_equal(lp_csv_next(&c, &err), 1);
	assert_int_equal(lp_csv_next(&c, &err), -1);
	assert_string_equal(err.msg, "t.csv:2: end of file inside a quoted field (truncated file?)");
	assert_int_equal(err.status, LP_EPARTIAL);
	lp_csv_close(&c);

	lp_csv_open_mem(&c, wide, sizeof(wide) - 1, "w.csv", &lim);
	assert_int_equal(lp_csv_next(&c, &err), -1);
	assert_string_equal(err.msg, "w.csv:1: more than 4 columns");
	lp_csv_close(&c);

	lp_csv_open_mem(&c, longf, sizeof(longf) - 1, "l.csv", &flim);
	assert_int_equal(lp_csv_next(&c, &err), -1);
	assert_non_null(strstr(err.msg, "longer than 8 bytes"));
	lp_csv_close(&c);
}

static void test_file_chunks(void **state)
{
	/* records crossing the 1 MiB read boundary, quoted and not */
	const char *dir = lp_test_tmpdir("csv_chunks");
	char path[4096];
	struct lp_buf b = LP_BUF_INIT;
	struct lp_csv c;
	struct lp_err err = LP_ERR_INIT;
	int i, rows = 0, rc;
	(void)state;
	for (i = 0; i < 40000; i++)
		lp_buf_addf(&b, "%d,\"q,%d\"\"x\",%s\n", i, i, i % 7 ? "plain" : "");
	snprintf(path, sizeof(path), "%s/big.csv", dir);
	lp_test_write(path, b.data);
	assert_int_equal(lp_csv_open(&c, path, NULL, &err), 0);
	while ((rc = lp_csv_next(&c, &err)) > 0) {
		char want[64];
		assert_int_equal(c.n_fields, 3);
		snprintf(want, sizeof(want), "q,%d\"x", rows);
		assert_string_equal(c.fields[1], want);
		rows++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(rows, 40000);
	lp_csv_close(&c);
	lp_buf_release(&b);
	assert_int_equal(lp_csv_open(&c, "/nonexistent/x.csv", NULL, &err), -1);
	assert_non_null(strstr(err.msg, "cannot open '/nonexistent/x.csv'"));
}

static void test_numbers(void **state)
{
	static const struct { const char *in; int rc; double v; } cases[] = {
		{ "2,336", 1, 2336 }, { "1,234,567.25", 1, 1234567.25 }, { "-3", 1, -3 }, { "1.5e3", 1, 1500 },
		{ "42", 1, 42 }, { "", 0, 0 }, { "n/a", 0, 0 }, { "N/A", 0, 0 }, { "nan", 0, 0 }, { "-", 0, 0 },
		{ "1,2", -1, 0 }, { "12,3456", -1, 0 }, { "abc", -1, 0 }, { "3 ms", -1, 0 }, { ",123", -1, 0 },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double v = -999;
		int rc = lp_csv_number(cases[i].in, &v);
		if (rc != cases[i].rc)
			fail_msg("'%s': rc %d, want %d", cases[i].in, rc, cases[i].rc);
		if (rc == 1 && v != cases[i].v)
			fail_msg("'%s': %g, want %g", cases[i].in, v, cases[i].v);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quotes_and_line_ends),
		cmocka_unit_test(test_truncated_and_limits),
		cmocka_unit_test(test_file_chunks),
		cmocka_unit_test(test_numbers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
