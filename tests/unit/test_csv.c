/* test_csv.c: the RFC 4180 reader (quotes, CRLF, limits, truncation, ncu log preambles), number
 * cells (the rule for every number) and the UTF-8 sanitizer the writers use on names. */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "core/utf8.h"
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
	assert_int_equal(err.kind, LP_EPARSE);
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
		/* the rule for every number: never infinite, never hex, never an overflow */
		{ "inf", -1, 0 }, { "-inf", -1, 0 }, { "Infinity", -1, 0 }, { "1e999", -1, 0 }, { "-1e999", -1, 0 },
		{ "0x10", -1, 0 }, { "0X1p3", -1, 0 }, { "1e", -1, 0 }, { ".", -1, 0 }, { "1.5e-3", 1, 0.0015 },
		{ ".5", 1, 0.5 }, { "+7", 1, 7 }, { " 42 ", 1, 42 },
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

static void test_cell_numbers_and_counts(void **state)
{
	struct lp_err err = LP_ERR_INIT;
	double v;
	uint64_t n;
	(void)state;
	assert_int_equal(lp_csv_cell_number("f.csv", 3, 1, "Total Time", "inf", &v, &err), -1);
	assert_string_equal(err.msg, "f.csv:3:2: 'Total Time' value 'inf' is not a finite decimal number");
	assert_int_equal(err.kind, LP_EPARSE);
	assert_int_equal(lp_csv_cell_number("f.csv", 3, 1, "Total Time", "n/a", &v, &err), 0);
	assert_int_equal(lp_csv_cell_count("f.csv", 4, 2, "Instances", "2,336", UINT64_MAX, &n, &err), 1);
	assert_int_equal(n, 2336);
	lp_err_clear(&err);
	assert_int_equal(lp_csv_cell_count("f.csv", 4, 2, "Instances", "1e30", INT64_MAX, &n, &err), -1);
	assert_string_equal(err.msg, "f.csv:4:3: 'Instances' value '1e30' is not a count (negative, fractional or overflowing)");
	assert_int_equal(lp_csv_cell_count("f.csv", 4, 2, "Instances", "1.5", INT64_MAX, &n, &err), -1);
	assert_int_equal(lp_csv_cell_count("f.csv", 4, 2, "Instances", "-1", INT64_MAX, &n, &err), -1);
	assert_int_equal(lp_csv_cell_count("f.csv", 4, 2, "Device", "70000", 65535, &n, &err), -1);
	assert_int_equal(lp_csv_cell_count("f.csv", 4, 2, "Instances", "18446744073709551616", UINT64_MAX, &n, &err), -1);
	/* a damaged number, told apart from a text value */
	assert_true(lp_csv_numberish("12x"));
	assert_true(lp_csv_numberish("-inf"));
	assert_true(lp_csv_numberish("0x10"));
	assert_false(lp_csv_numberish("CachePreferNone"));
	assert_false(lp_csv_numberish("-"));
}

/* ncu --log-file output: "==PROF==" lines before the header are skipped, line numbers stay physical */
static void test_log_preamble(void **state)
{
	static const char in[] = "==PROF== Connected to process 1 (a,\"b)\n==WARNING== x, \"y\n\"ID\",\"Kernel Name\"\n1,k\n";
	static const char *const hdr[] = { "ID", "Kernel Name" };
	static const char *const row[] = { "1", "k" };
	struct lp_csv c;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	lp_csv_open_mem(&c, in, sizeof(in) - 1, "log.csv", NULL);
	expect_record(&c, hdr, 2);
	assert_int_equal(c.line, 3);
	assert_int_equal(c.preamble_lines, 2);
	expect_record(&c, row, 2);
	assert_int_equal(c.line, 4);
	lp_csv_close(&c);
	/* only before the first record: later "==" lines are data */
	lp_csv_open_mem(&c, "a\n==b\n", 6, "m.csv", NULL);
	assert_int_equal(lp_csv_next(&c, &err), 1);
	assert_int_equal(lp_csv_next(&c, &err), 1);
	assert_string_equal(c.fields[0], "==b");
	lp_csv_close(&c);
}

/* text that is not UTF-8: replaced byte by byte with U+FFFD, never dropped (core/utf8.h) */
static void test_utf8_sanitize(void **state)
{
	static const struct { const char *in, *out; int valid; } cases[] = {
		{ "plain", "plain", 1 }, { "caf\xC3\xA9", "caf\xC3\xA9", 1 }, { "\xF0\x9F\x98\x80", "\xF0\x9F\x98\x80", 1 },
		{ "\xFF(k)", "\xEF\xBF\xBD(k)", 0 }, { "a\xC3", "a\xEF\xBF\xBD", 0 },
		{ "\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD", 0 },                 /* overlong '/' */
		{ "\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", 0 },   /* a surrogate */
		{ "\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", 0 },  /* past U+10FFFF */
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lp_buf b = LP_BUF_INIT;
		json_t *j = lp_json_string(cases[i].in);
		assert_int_equal(lp_utf8_valid(cases[i].in), cases[i].valid);
		assert_int_equal(lp_utf8_sanitize(&b, cases[i].in), 0);
		assert_string_equal(b.data, cases[i].out);
		assert_non_null(j);   /* json_string() alone gives NULL for the invalid ones */
		assert_string_equal(json_string_value(j), cases[i].out);
		json_decref(j);
		lp_buf_release(&b);
	}
	{
		json_t *a = lp_json_real(NAN), *b = lp_json_real(INFINITY), *c = lp_json_real(1.5);
		assert_true(json_is_null(a));
		assert_true(json_is_null(b));
		assert_true(json_is_real(c));
		json_decref(a);
		json_decref(b);
		json_decref(c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quotes_and_line_ends),
		cmocka_unit_test(test_truncated_and_limits),
		cmocka_unit_test(test_file_chunks),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_cell_numbers_and_counts),
		cmocka_unit_test(test_log_preamble),
		cmocka_unit_test(test_utf8_sanitize),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
