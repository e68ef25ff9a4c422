/* test_config.c: composition of conf/, every override form, getters (src/config/config.c,
 * override.c, config_get.c). Error messages are in test_config_errors.c. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/yaml.h"
#include "core/fs.h"

static struct lp_config load_ok(const char *const *ovr, size_t n)
{
	struct lp_config cfg;
	struct lp_err err = LP_ERR_INIT;
	if (lp_config_load(&cfg, LP_CONF_DIR, ovr, n, &err) < 0)
		fail_msg("load failed: %s (hint: %s)", err.msg, err.hint);
	return cfg;
}

static const char *str(const struct lp_config *cfg, const char *key)
{
	return json_string_value(lp_config_get(cfg, key));
}

static void test_defaults_compose_groups_under_packages(void **state)
{
	struct lp_config cfg = load_ok(NULL, 0);
	int64_t n;
	(void)state;
	/* runner is `# @package _global_`: its keys sit at the root */
	assert_string_equal(str(&cfg, "run.mode"), "deep");
	assert_string_equal(str(&cfg, "artifacts.stage2_dir"), "tmp/stage2");
	/* group profiling/ncu lands under profiling.ncu */
	assert_string_equal(str(&cfg, "profiling.ncu.name"), "ncu_default");
	assert_string_equal(str(&cfg, "profiling.ncu.replay_mode"), "kernel");
	assert_non_null(lp_config_get(&cfg, "profiling.nsys.trace"));
	/* model: tiny is found one level deeper, conf/model/llm/tiny.yaml */
	assert_string_equal(str(&cfg, "model.name"), "tiny");
	assert_true(json_is_null(lp_config_get(&cfg, "model.hf_config")));
	/* _self_ keys and no leftover defaults list */
	assert_non_null(lp_config_get(&cfg, "tools.nsys"));
	assert_null(lp_config_get(&cfg, "defaults"));
	assert_int_equal(lp_config_get_int(&cfg, "run.top_n_kernels", &n, NULL), 0);
	assert_int_equal(n, 5);
	assert_string_equal(lp_config_choice(&cfg, "profiling/ncu"), "ncu.default");
	assert_string_equal(lp_config_choice(&cfg, "model"), "tiny");
	lp_config_release(&cfg);
}

static void test_group_selection_replaces_the_preset(void **state)
{
	/* the key override comes first on the command line, yet groups compose first */
	const char *ovr[] = { "profiling.ncu.launch_count=2", "profiling/ncu=ncu.high" };
	struct lp_config cfg = load_ok(ovr, 2);
	const char **list;
	size_t n, i;
	int found = 0;
	(void)state;
	assert_string_equal(str(&cfg, "profiling.ncu.name"), "ncu_high");
	assert_int_equal(json_integer_value(lp_config_get(&cfg, "profiling.ncu.launch_count")), 2);
	assert_int_equal(lp_config_get_string_list(&cfg, "profiling.ncu.sections", &list, &n, NULL), 0);
	for (i = 0; i < n; i++)
		found += !strcmp(list[i], "WarpStateStats");
	assert_int_equal(found, 1);
	assert_null(list[n]);
	free(list);
	assert_string_equal(lp_config_choice(&cfg, "profiling/ncu"), "ncu.high");
	lp_config_release(&cfg);
}

static void test_set_fits_values_to_the_existing_type(void **state)
{
	const char *ovr[] = {
		"run.repeats=7",                               /* int */
		"model.rope_theta=500000",                     /* int into a number */
		"run.measure_overhead=true",                   /* bool */
		"run.stage=123",                               /* a number into a string: its text */
		"profiling.ncu.sections=[SpeedOfLight,Occupancy]",
		"profiling.ncu.kernel_name='regex:gemm.*'",    /* quoted */
		"inputs.batch=4",                              /* null default takes a scalar */
		"model.hf_config=/x/config.json",
		"run={repeats: 9, warmup: 0}",                 /* a mapping merges */
		"profiling.nsys.nvtx_capture=decode_all@LLM",  /* '@' stays text */
	};
	struct lp_config cfg = load_ok(ovr, sizeof(ovr) / sizeof(ovr[0]));
	double d;
	int b;
	const char *s;
	const char **list;
	size_t n;
	(void)state;
	assert_int_equal(json_integer_value(lp_config_get(&cfg, "run.repeats")), 9);
	assert_int_equal(json_integer_value(lp_config_get(&cfg, "run.warmup")), 0);
	assert_string_equal(str(&cfg, "run.mode"), "deep");  /* untouched by the mapping merge */
	assert_true(json_is_real(lp_config_get(&cfg, "model.rope_theta")));
	assert_int_equal(lp_config_get_double(&cfg, "model.rope_theta", &d, NULL), 0);
	assert_true(d == 500000.0);
	assert_int_equal(lp_config_get_bool(&cfg, "run.measure_overhead", &b, NULL), 0);
	assert_int_equal(b, 1);
	assert_string_equal(str(&cfg, "run.stage"), "123");
	assert_int_equal(lp_config_get_string_list(&cfg, "profiling.ncu.sections", &list, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(list[0], "SpeedOfLight");
	assert_string_equal(list[1], "Occupancy");
	free(list);
	assert_string_equal(str(&cfg, "profiling.ncu.kernel_name"), "regex:gemm.*");
	assert_int_equal(json_integer_value(lp_config_get(&cfg, "inputs.batch")), 4);
	assert_int_equal(lp_config_get_string(&cfg, "model.hf_config", &s, NULL), 0);
	assert_string_equal(s, "/x/config.json");
	assert_string_equal(str(&cfg, "profiling.nsys.nvtx_capture"), "decode_all@LLM");
	assert_int_equal(json_array_size(cfg.overrides), sizeof(ovr) / sizeof(ovr[0]));
	lp_config_release(&cfg);
}

static void test_add_force_delete(void **state)
{
	const char *ovr[] = {
		"+extra.nested.key=1",       /* adds, with the mappings on the way */
		"++run.repeats=4",           /* sets an existing key */
		"++run.new_key=[a]",         /* adds a new one */
		"~profiling.ncu.regions",    /* deletes a subtree */
		"~run.stage=decode_all",     /* deletes when equal */
		"+run.stage=prefill",        /* and adds it back */
		"~run.warmup=",              /* '=' with nothing: no value check */
		"++run.warmup=2",
		"run.id=",                   /* empty value: the empty string, not a valid run id */
	};
	struct lp_config cfg;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	/* the last override makes the whole load fail */
	assert_int_equal(lp_config_load(&cfg, LP_CONF_DIR, ovr, 9, &err), -1);
	assert_string_equal(err.msg, "invalid run id '': it is empty");
	cfg = load_ok(ovr, 8);
	assert_int_equal(json_integer_value(lp_config_get(&cfg, "extra.nested.key")), 1);
	assert_int_equal(json_integer_value(lp_config_get(&cfg, "run.repeats")), 4);
	assert_int_equal(json_array_size(lp_config_get(&cfg, "run.new_key")), 1);
	assert_null(lp_config_get(&cfg, "profiling.ncu.regions"));
	assert_non_null(lp_config_get(&cfg, "profiling.ncu.metrics"));
	assert_string_equal(str(&cfg, "run.stage"), "prefill");
	assert_int_equal(json_integer_value(lp_config_get(&cfg, "run.warmup")), 2);
	lp_config_release(&cfg);
}

static void test_empty_value_is_empty_string_and_null_is_null(void **state)
{
	const char *ovr[] = { "model.family=", "profiling.ncu.set=null", "tools.ncu=~" };
	struct lp_config cfg = load_ok(ovr, 3);
	const char *s = "x";
	(void)state;
	assert_string_equal(str(&cfg, "model.family"), "");
	assert_int_equal(lp_config_get_string(&cfg, "profiling.ncu.set", &s, NULL), 0);
	assert_null(s);
	assert_true(json_is_null(lp_config_get(&cfg, "tools.ncu")));
	lp_config_release(&cfg);
}

static void test_deleting_a_group_drops_its_package(void **state)
{
	const char *ovr[] = { "~profiling/ncu" };
	struct lp_config cfg = load_ok(ovr, 1);
	(void)state;
	assert_null(lp_config_get(&cfg, "profiling.ncu"));
	assert_non_null(lp_config_get(&cfg, "profiling.nsys"));
	assert_null(lp_config_choice(&cfg, "profiling/ncu"));
	lp_config_release(&cfg);
}

static void test_getters_name_the_key(void **state)
{
	struct lp_config cfg = load_ok(NULL, 0);
	struct lp_err err = LP_ERR_INIT;
	int64_t i;
	int b;
	double d;
	const char *s;
	const char **list = NULL;
	size_t n;
	(void)state;
	assert_int_equal(lp_config_get_int(&cfg, "run.mode", &i, &err), -1);
	assert_string_equal(err.msg, "config key 'run.mode' is 'deep', expected an integer");
	assert_int_equal(lp_config_get_bool(&cfg, "run.repeats", &b, &err), -1);
	assert_string_equal(err.msg, "config key 'run.repeats' is '3', expected a boolean");
	assert_int_equal(lp_config_get_double(&cfg, "run.mode", &d, &err), -1);
	assert_non_null(strstr(err.msg, "'run.mode'"));
	assert_int_equal(lp_config_get_string(&cfg, "run.nope", &s, &err), -1);
	assert_string_equal(err.msg, "missing config key 'run.nope'");
	assert_int_equal(err.kind, LP_EUSAGE);
	assert_int_equal(lp_config_get_string_list(&cfg, "run.mode", &list, &n, &err), -1);
	assert_null(list);
	assert_non_null(strstr(err.msg, "expected a list of strings"));
	/* a null list reads as empty */
	assert_int_equal(lp_config_get_string(&cfg, "run.id", &s, &err), 0);
	assert_null(s);
	assert_int_equal(lp_config_get_double(&cfg, "run.repeats", &d, &err), 0);
	assert_true(d == 3.0);
	lp_config_release(&cfg);
}

static void test_apply_after_load_and_dump_round_trip(void **state)
{
	struct lp_config cfg = load_ok(NULL, 0);
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf out = LP_BUF_INIT;
	json_t *back = NULL;
	(void)state;
	assert_int_equal(lp_config_apply(&cfg, "run.repeats=11", &err), 0);
	assert_int_equal(json_integer_value(lp_config_get(&cfg, "run.repeats")), 11);
	/* a failing apply leaves the config as it was */
	assert_int_equal(lp_config_apply(&cfg, "run.repeats=0", &err), -1);
	assert_int_equal(json_integer_value(lp_config_get(&cfg, "run.repeats")), 11);
	assert_int_equal(lp_config_apply(&cfg, "profiling/ncu=ncu.high", &err), -1);
	assert_int_equal(lp_config_dump_yaml(&cfg, &out, &err), 0);
	assert_non_null(strstr(out.data, "top_n_kernels: 5\n"));
	assert_int_equal(lp_yaml_load_string(out.data, out.len, "dump", &back, &err), 0);
	assert_true(json_equal(back, cfg.root));
	json_decref(back);
	lp_buf_release(&out);
	lp_config_release(&cfg);
}

/* A private conf/ tree: _self_ order, explicit packages, sub-folder lookup, ambiguity. */
static const char *make_conf(void)
{
	static char root[4096];
	char p[4200];
	struct lp_err err = LP_ERR_INIT;
	snprintf(root, sizeof(root), "%s", lp_test_tmpdir("config_conf"));
	snprintf(p, sizeof(p), "%s/runner", root);
	assert_int_equal(lp_fs_mkdir_p(p, &err), 0);
	snprintf(p, sizeof(p), "%s/runner/stage2.yaml", root);
	lp_test_write(p, "# @package _global_\nrun: {mode: light, top_n_kernels: 1, stage: s, repeats: 1,\n"
			 "  warmup: 0, id: null, device: cpu, timeout_s: 1}\n"
			 "artifacts: {stage2_dir: out, keep_last: null}\nvalue: from-runner\n");
	snprintf(p, sizeof(p), "%s/box/a", root);
	assert_int_equal(lp_fs_mkdir_p(p, &err), 0);
	snprintf(p, sizeof(p), "%s/box/b", root);
	assert_int_equal(lp_fs_mkdir_p(p, &err), 0);
	snprintf(p, sizeof(p), "%s/box/a/one.yaml", root);
	lp_test_write(p, "# a comment first\n# @package somewhere.else\nx: 1\n");
	snprintf(p, sizeof(p), "%s/box/a/two.yaml", root);
	lp_test_write(p, "x: 2\n");
	snprintf(p, sizeof(p), "%s/box/b/two.yaml", root);
	lp_test_write(p, "x: 3\n");
	snprintf(p, sizeof(p), "%s/box/three.yaml", root);
	lp_test_write(p, "x: 4\n");
	return root;
}

static void test_self_order_and_packages(void **state)
{
	const char *conf = make_conf();
	struct lp_config cfg;
	struct lp_err err = LP_ERR_INIT;
	const char *self_first = "defaults:\n  - _self_\n  - runner: stage2\n  - box: one\nvalue: from-self\n";
	const char *self_last = "defaults:\n  - runner: stage2\n  - box: three\nvalue: from-self\n";
	const char *ovr[] = { "box=two" };
	(void)state;
	assert_int_equal(lp_config_load_string(&cfg, conf, self_first, strlen(self_first), "root.yaml",
		NULL, 0, &err), 0);
	assert_string_equal(str(&cfg, "value"), "from-runner");  /* later entries win */
	assert_int_equal(json_integer_value(lp_config_get(&cfg, "somewhere.else.x")), 1);
	assert_null(lp_config_get(&cfg, "box"));
	lp_config_release(&cfg);
	/* no _self_: implied last, so the root's own keys win; box/three.yaml beats the sub-folders */
	assert_int_equal(lp_config_load_string(&cfg, conf, self_last, strlen(self_last), "root.yaml",
		NULL, 0, &err), 0);
	assert_string_equal(str(&cfg, "value"), "from-self");
	assert_int_equal(json_integer_value(lp_config_get(&cfg, "box.x")), 4);
	lp_config_release(&cfg);
	/* two.yaml is in box/a and box/b */
	assert_int_equal(lp_config_load_string(&cfg, conf, self_last, strlen(self_last), "root.yaml",
		ovr, 1, &err), -1);
	assert_non_null(strstr(err.msg, "option 'two' of group 'box' is ambiguous"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_compose_groups_under_packages),
		cmocka_unit_test(test_group_selection_replaces_the_preset),
		cmocka_unit_test(test_set_fits_values_to_the_existing_type),
		cmocka_unit_test(test_add_force_delete),
		cmocka_unit_test(test_empty_value_is_empty_string_and_null_is_null),
		cmocka_unit_test(test_deleting_a_group_drops_its_package),
		cmocka_unit_test(test_getters_name_the_key),
		cmocka_unit_test(test_apply_after_load_and_dump_round_trip),
		cmocka_unit_test(test_self_order_and_packages),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
