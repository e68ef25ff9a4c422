/* test_config_errors.c: every documented configuration error, message and hint exactly
 * (docs/config.md lists the same). Each one is LP_EUSAGE and leaves the config empty. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "config/config.h"

struct bad_case {
	const char *override;
	const char *msg;
	const char *hint;  /* NULL: no hint expected; "*" any */
};

static const struct bad_case cases[] = {
	{ "run.top_n_kernel=3", "unknown key 'run.top_n_kernel'", "did you mean 'run.top_n_kernels'" },
	{ "repeats=3", "unknown key 'repeats'", "did you mean 'run.repeats'" },
	{ "run.repeats=abc", "invalid value 'abc' for 'run.repeats': expected an integer", NULL },
	{ "run.repeats=2.5", "invalid value '2.5' for 'run.repeats': expected an integer", NULL },
	{ "run.repeats=0", "invalid value '0' for 'run.repeats': expected an integer >= 1", NULL },
	{ "run.top_n_kernels=0", "invalid value '0' for 'run.top_n_kernels': expected an integer >= 1", NULL },
	{ "run.warmup=-1", "invalid value '-1' for 'run.warmup': expected an integer >= 0", NULL },
	{ "run.timeout_s=0", "invalid value '0' for 'run.timeout_s': expected a number > 0", NULL },
	{ "run.repeats=null", "invalid value 'null' for 'run.repeats': expected an integer", NULL },
	{ "run.measure_overhead=yes", "invalid value 'yes' for 'run.measure_overhead': expected a boolean (true or false)", NULL },
	{ "run.mode=fast", "invalid value 'fast' for 'run.mode': expected one of deep, light", NULL },
	{ "run.device=gpu", "invalid value 'gpu' for 'run.device': expected one of auto, cpu, cuda", NULL },
	{ "profiling.ncu.replay_mode=kernels", "invalid value 'kernels' for 'profiling.ncu.replay_mode': expected one of kernel, application, range, app-range", NULL },
	{ "profiling.ncu.kernel_name_base=short", "invalid value 'short' for 'profiling.ncu.kernel_name_base': expected one of function, demangled, mangled", NULL },
	{ "profiling.ncu.clock_control=max", "invalid value 'max' for 'profiling.ncu.clock_control': expected one of base, none", NULL },
	{ "profiling.ncu.cache_control=some", "invalid value 'some' for 'profiling.ncu.cache_control': expected one of all, none", NULL },
	{ "profiling.ncu.launch_count=0", "invalid value '0' for 'profiling.ncu.launch_count': expected an integer >= 1", NULL },
	{ "profiling.ncu.launch_skip=-2", "invalid value '-2' for 'profiling.ncu.launch_skip': expected an integer >= 0", NULL },
	{ "artifacts.keep_last=0", "invalid value '0' for 'artifacts.keep_last': expected an integer >= 1", NULL },
	{ "artifacts.keep_last=two", "invalid value 'two' for 'artifacts.keep_last': expected an integer", NULL },
	{ "profiling.ncu.sections=SpeedOfLight", "invalid value 'SpeedOfLight' for 'profiling.ncu.sections': expected a list", "write a list: profiling.ncu.sections=[SpeedOfLight]" },
	{ "profiling.ncu.sections=[a, 1]", "invalid value '[\"a\",1]' for 'profiling.ncu.sections': expected a list of strings", NULL },
	{ "run=3", "invalid value '3' for 'run': expected a mapping", NULL },
	{ "run={mod: x}", "unknown key 'run.mod'", "did you mean 'mode'" },
	{ "profiling/ncu=ncu.hgh", "unknown option 'ncu.hgh' for group 'profiling/ncu'", "available: ncu.default, ncu.high, ncu.light, ncu.rtx3090" },
	{ "model=nope", "unknown option 'nope' for group 'model'", "available: deepseek-ocr-lm, llama-3.1-8b, llama-3.2-1b, qwen2.5-1.5b, tiny, tiny-moe" },
	{ "profiling/ncu=../x", "invalid option '../x' for group 'profiling/ncu'", "*" },
	{ "profiling/ncu=", "invalid override 'profiling/ncu=': expected an option name for group 'profiling/ncu'", "*" },
	{ "profiling/nope=x", "unknown group 'profiling/nope'", NULL },
	{ "+runner=stage2", "cannot add group 'runner': it is in the defaults list", "select an option with 'runner=stage2'" },
	{ "++model=tiny", "invalid override '++model=tiny': '++' is for keys, not groups", NULL },
	{ "=x", "invalid override '=x': missing key before '='", NULL },
	{ "a..b=1", "invalid override 'a..b=1': empty key segment in 'a..b'", NULL },
	{ ".a=1", "invalid override '.a=1': empty key segment in '.a'", NULL },
	{ "a.=1", "invalid override 'a.=1': empty key segment in 'a.'", NULL },
	{ "a b=1", "invalid override 'a b=1': invalid character ' ' in key 'a b'", NULL },
	{ "a/b.c=1", "invalid override 'a/b.c=1': 'a/b.c' mixes '.' (a key) and '/' (a group)", NULL },
	{ "run.mode", "invalid override 'run.mode': expected KEY=VALUE", "overrides are key=value, +key=value, ++key=value, ~key or group=option" },
	{ "+run.mode=light", "cannot add 'run.mode': the key exists", "set it with 'run.mode=light' (or '++run.mode=light')" },
	{ "~run.nope", "unknown key 'run.nope'", "*" },
	{ "~run.repeats=7", "cannot delete 'run.repeats': its value is '3', not '7'", NULL },
	{ "run.mode.x=1", "cannot apply 'run.mode.x=1': 'run.mode' is not a mapping", NULL },
	{ "x=[1", "override 'x=[1':2:1: did not find expected ',' or ']' while parsing a flow sequence", NULL },
	{ "x=[1] 2", "override 'x=[1] 2':1:5: did not find expected <document start>", NULL },
	{ "x='a': b", "invalid override 'x='a': b': the value is not one quoted string", NULL },
	{ "run.id=../x", "invalid run id '../x': '/' is not allowed", "run ids use letters, digits, '.', '_' and '-'" },
	{ "run.id=a/b", "invalid run id 'a/b': '/' is not allowed", "*" },
	{ "run.id=..", "invalid run id '..': '..' is not allowed", NULL },
	{ "run.id=.hidden", "invalid run id '.hidden': it must not start with '.'", NULL },
	{ "~run.mode", "missing key 'run.mode'", "*" },
	{ "run.timeout_s=abc", "invalid value 'abc' for 'run.timeout_s': expected a number", NULL },
	/* invalid UTF-8 is a usage error naming the byte (was "out of memory", exit 1) */
	{ "run.id=a\xff", "invalid override 'run.id=a...': byte 9 (0xff) is not valid UTF-8", NULL },
	{ "+x=\xc0\xaf", "invalid override '+x=...': byte 4 (0xc0) is not valid UTF-8", NULL },
	{ "model=\xe2\x82", "invalid override 'model=...': byte 7 (0xe2) is not valid UTF-8", NULL },
	{ "+x=\xed\xa0\x80", "invalid override '+x=...': byte 4 (0xed) is not valid UTF-8", NULL },
	{ "\xff=1", "invalid override '...': byte 1 (0xff) is not valid UTF-8", NULL },
};

/* run.timeout_s is a number (docs/config.md): a fraction is accepted although the preset's
 * default is whole, and valid UTF-8 beyond ASCII passes. */
static void test_numbers_and_utf8_accepted(void **state)
{
	static const char *const good[] = { "run.timeout_s=1.5", "+note=caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80" };
	struct lp_config cfg;
	struct lp_err err = LP_ERR_INIT;
	const json_t *v;
	(void)state;
	if (lp_config_load(&cfg, LP_CONF_DIR, good, 2, &err) < 0)
		fail_msg("refused: %s", err.msg);
	v = lp_config_get(&cfg, "run.timeout_s");
	assert_true(json_is_real(v));
	assert_true(json_real_value(v) == 1.5);
	lp_config_release(&cfg);
}

static void test_each_bad_override_is_one_usage_error(void **state)
{
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lp_config cfg;
		struct lp_err err = LP_ERR_INIT;
		const char *ovr[1];
		ovr[0] = cases[i].override;
		if (lp_config_load(&cfg, LP_CONF_DIR, ovr, 1, &err) == 0)
			fail_msg("'%s' was accepted", cases[i].override);
		if (err.status != LP_EUSAGE || strcmp(err.msg, cases[i].msg))
			fail_msg("'%s': got [%d] '%s', want '%s'", cases[i].override, err.status, err.msg,
				cases[i].msg);
		if (cases[i].hint == NULL ? err.hint[0] != '\0' :
		    strcmp(cases[i].hint, "*") ? strcmp(err.hint, cases[i].hint) != 0 : err.hint[0] == '\0')
			fail_msg("'%s': hint '%s', want '%s'", cases[i].override, err.hint,
				cases[i].hint ? cases[i].hint : "(none)");
		assert_null(strchr(err.msg, '\n'));
		assert_null(cfg.root);
	}
}

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
	assert_int_equal(err.status, LP_EUSAGE);
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
	assert_int_equal(err.status, LP_EUSAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_bad_override_is_one_usage_error),
		cmocka_unit_test(test_numbers_and_utf8_accepted),
		cmocka_unit_test(test_yaml_errors_name_file_line_col),
		cmocka_unit_test(test_wrong_types_in_files_are_caught),
		cmocka_unit_test(test_missing_conf_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
