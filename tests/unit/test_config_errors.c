/* test_config_errors.c: configuration errors of config files and folders, message exactly. The
 * errors of overrides (every documented one, message, kind and hint exactly; docs/config.md lists
 * the same) are data: tests/data/overrides.test, run by lp-test-tool. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "config/config.h"

static void test_yaml_errors_name_file_line_col(void **state)
{
	struct lp_config cfg;
	struct lp_err err = LP_ERR_INIT;
	const char *bad = "defaults:\n  - runner: stage2\nrun: [1,\n";
	const char *wrong_defaults = "defaults: {runner: stage2}\n";
	const char *bad_entry = "defaults:\n  - [x]\n";
	(void)state;
	assert_int_equal(lp_config_load_string(&cfg, LP_CONF_DIR, bad, strlen(bad), "my.yaml", NULL, 0,
		&err), -1);
	assert_int_equal(err.kind, LP_EUSAGE);
	assert_true(strncmp(err.msg, "my.yaml:4:1: ", 13) == 0);
	assert_int_equal(lp_config_load_string(&cfg, LP_CONF_DIR, wrong_defaults, strlen(wrong_defaults),
		"my.yaml", NULL, 0, &err), -1);
	assert_string_equal(err.msg, "my.yaml: 'defaults' must be a list");
	assert_int_equal(lp_config_load_string(&cfg, LP_CONF_DIR, bad_entry, strlen(bad_entry),
		"my.yaml", NULL, 0, &err), -1);
	assert_string_equal(err.msg, "my.yaml: defaults entry 1 is not 'group: option' or '_self_'");
}

static void test_wrong_types_in_files_are_caught(void **state)
{
	struct lp_config cfg;
	struct lp_err err = LP_ERR_INIT;
	const char *doc = "defaults:\n  - runner: stage2\n  - _self_\nrun:\n  repeats: many\n";
	(void)state;
	assert_int_equal(lp_config_load_string(&cfg, LP_CONF_DIR, doc, strlen(doc), "my.yaml", NULL, 0,
		&err), -1);
	assert_string_equal(err.msg, "invalid value 'many' for 'run.repeats': expected an integer");
}

static void test_missing_conf_dir(void **state)
{
	struct lp_config cfg;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_int_equal(lp_config_load(&cfg, "/nonexistent/conf", NULL, 0, &err), -1);
	assert_string_equal(err.msg, "no configuration at '/nonexistent/conf/config.yaml'");
	assert_int_equal(err.kind, LP_EUSAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml_errors_name_file_line_col),
		cmocka_unit_test(test_wrong_types_in_files_are_caught),
		cmocka_unit_test(test_missing_conf_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
