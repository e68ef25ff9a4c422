/* test_md.c: Markdown escaping, shortening and tables (src/report/md.c). */
#include "testutil.h"

#include <string.h>

#include "report/md.h"

/* Splits a table row into cells the way GFM does: on unescaped `|`. */
static int count_cells(const char *row)
{
	int n = 0;
	const char *s;
	for (s = row; *s && *s != '\n'; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			continue;
		}
		if (*s == '|')
			n++;
	}
	return n - 1;
}

static void test_escaping_keeps_one_cell(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	const char *cells[] = { "void k<a|b>(x*, y_z) `q`\nnext", "1.0" };
	(void)state;
	assert_int_equal(lp_md_row(&b, 2, cells, 0), 0);
	assert_string_equal(b.data, "| void k&lt;a\\|b&gt;(x\\*, y\\_z) \\`q\\` next | 1.0 |\n");
	assert_int_equal(count_cells(b.data), 2);
	assert_null(strchr(b.data, '<'));
	lp_buf_release(&b);
	lp_md_text(&b, "a & b [c] \\");
	assert_string_equal(b.data, "a &amp; b \\[c\\] \\\\");
	lp_buf_release(&b);
}

static void test_shortening_is_utf8_safe(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	(void)state;
	lp_md_cell(&b, "abcdefghij", 5);
	assert_string_equal(b.data, "abcd\xE2\x80\xA6");
	assert_int_equal(lp_md_strlen_utf8(b.data), 5);
	lp_buf_reset(&b);
	lp_md_cell(&b, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", 3);  /* four e-acute */
	assert_string_equal(b.data, "\xC3\xA9\xC3\xA9\xE2\x80\xA6");
	lp_buf_reset(&b);
	lp_md_cell(&b, "abc", 3);
	assert_string_equal(b.data, "abc");
	lp_buf_release(&b);
}

static void test_header(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	const char *cols[] = { "kernel_name", "total_ms", "x" };
	(void)state;
	lp_md_header(&b, 3, cols, "lrc");
	assert_string_equal(b.data, "| kernel_name | total_ms | x |\n| --- | ---: | :---: |\n");
	lp_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escaping_keeps_one_cell),
		cmocka_unit_test(test_shortening_is_utf8_safe),
		cmocka_unit_test(test_header),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
