/* test_yaml.c: YAML to JSON values and back (src/config/yaml.c). */
#include "testutil.h"

#include <string.h>

#include "config/yaml.h"

static json_t *load(const char *text, struct lp_err *err)
{
	json_t *v = NULL;
	if (lp_yaml_load_string(text, strlen(text), "t.yaml", &v, err) < 0)
		return NULL;
	return v;
}

static void test_scalars_resolve_by_core_schema(void **state)
{
	struct lp_err err = LP_ERR_INIT;
	json_t *v = load("a: 1\nb: 1.5\nc: true\nd: ~\ne: hello\nf: '1'\ng: 0x10\nh: 1e3\ni: [x, 2]\n", &err);
	(void)state;
	assert_non_null(v);
	assert_true(json_is_integer(json_object_get(v, "a")));
	assert_true(json_is_real(json_object_get(v, "b")));
	assert_true(json_is_true(json_object_get(v, "c")));
	assert_true(json_is_null(json_object_get(v, "d")));
	assert_string_equal(json_string_value(json_object_get(v, "e")), "hello");
	assert_string_equal(json_string_value(json_object_get(v, "f")), "1");
	assert_int_equal(json_integer_value(json_object_get(v, "g")), 16);
	assert_true(json_real_value(json_object_get(v, "h")) == 1000.0);
	assert_int_equal(json_array_size(json_object_get(v, "i")), 2);
	json_decref(v);
}

static void test_errors_name_file_line_col(void **state)
{
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_null(load("a: 1\nb: [1, 2\n", &err));
	assert_int_equal(err.kind, LP_EUSAGE);
	assert_true(strncmp(err.msg, "t.yaml:3:1: ", 12) == 0);
	assert_null(load("a: 1\na: 2\n", &err));
	assert_string_equal(err.msg, "t.yaml:2:1: duplicate key 'a'");
	assert_null(load("a: &x 1\nb: *x\n", &err));
	assert_non_null(strstr(err.msg, "aliases are not supported"));
}

static void test_dump_round_trips(void **state)
{
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf out = LP_BUF_INIT;
	json_t *v = load("run:\n  mode: deep\n  repeats: 3\n  ratio: 0.25\nnames: ['true', '1', plain, '']\n"
			 "empty: {}\nnested: [{a: 1}]\n", &err), *back = NULL;
	(void)state;
	assert_non_null(v);
	assert_int_equal(lp_yaml_dump(v, &out, &err), 0);
	assert_int_equal(lp_yaml_load_string(out.data, out.len, "dump", &back, &err), 0);
	assert_true(json_equal(v, back));
	json_decref(v);
	json_decref(back);
	lp_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars_resolve_by_core_schema),
		cmocka_unit_test(test_errors_name_file_line_col),
		cmocka_unit_test(test_dump_round_trips),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
