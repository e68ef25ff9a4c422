/* test_kname.c: kernel names (src/parse/kname.c). The cases of the short name, ncu's function
 * name, demangling, families and sameness are data (tests/data/knames.test); this file keeps what
 * data cannot express: empty and NULL names, buffer reuse, bracket matching, the qualified start. */
#include "testutil.h"

#include <string.h>

#include "parse/kname.h"

/* The name -> short / ncu function / family cases are data: tests/data/knames.test (lp-test-tool
 * mode kname). Here: what a line of text cannot spell (the empty name, NULL, an out-of-range
 * family) and the helpers the join uses. */
static void test_edges(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	struct lp_profile p;
	(void)state;
	lp_profile_init(&p, "names");
	assert_int_equal(lp_kname_short("", &b), 0);
	assert_string_equal(b.data, "");
	assert_string_equal(lp_kname_short_intern(&p, ""), "");
	assert_int_equal(lp_kname_ncu_function("", &b), 0);
	assert_string_equal(b.data, "");
	assert_string_equal(lp_kname_demangle_intern(&p, NULL), "");
	assert_int_equal(lp_kname_family(""), LP_FAM_OTHER);
	assert_string_equal(lp_kname_family_name(LP_FAM_COUNT), "other");
	assert_string_equal(lp_kname_family_name(LP_FAM_COMM), "comm");
	assert_false(lp_kname_is_comm(NULL));
	/* the short name is reset, not appended to */
	lp_buf_adds(&b, "stale");
	assert_int_equal(lp_kname_short("void k<1>(int)", &b), 0);
	assert_string_equal(b.data, "k");
	lp_profile_release(&p);
	lp_buf_release(&b);
}

static void test_bracket_open(void **state)
{
	const char *sig = "ns::k<a<b>, c>(int (*)(int), float)";
	size_t at = 99, end = strlen(sig);
	(void)state;
	assert_int_equal(lp_kname_bracket_open(sig, end, '(', ')', &at), 0);
	assert_int_equal(at, 14);
	assert_int_equal(lp_kname_bracket_open(sig, at, '<', '>', &at), 0);
	assert_int_equal(at, 5);
	/* unbalanced: nothing found, *at untouched */
	at = 99;
	assert_int_equal(lp_kname_bracket_open("f(int))", 7, '(', ')', &at), -1);
	assert_int_equal(at, 99);
	assert_int_equal(lp_kname_bracket_open(")", 1, '(', ')', &at), -1);
	assert_int_equal(at, 99);
}

static void test_qualified(void **state)
{
	(void)state;
	assert_string_equal(lp_kname_qualified_start("std::enable_if<!T7, void>::type ns::k<int>(T13)"), "ns::k<int>(T13)");
	assert_string_equal(lp_kname_qualified_start("void a::b::gemv<float, 4>(float const*)"), "a::b::gemv<float, 4>(float const*)");
	assert_string_equal(lp_kname_qualified_start("plain_name"), "plain_name");
	/* sameness: tests/data/knames.test (mode kname-same) */
	assert_true(lp_kname_has_template_args("void k<1>(int)"));
	assert_false(lp_kname_has_template_args("void k(std::vector<int>)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_bracket_open),
		cmocka_unit_test(test_qualified),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
