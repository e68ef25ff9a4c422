/* test_rundir_prov.c: provenance artifacts: env.json fields, inputs.yaml declared inputs,
 * and the three files written and recorded in a run folder (src/collect/provenance.c,
 * prov_gpu.c, prepare.c). Runs with or without a GPU: only the shape of "gpus" differs. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/prepare.h"
#include "collect/provenance.h"
#include "config/yaml.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "core/str.h"

static void test_env_has_host_os_cpu_gpus_and_variables(void **state)
{
	struct lp_err err = LP_ERR_INIT;
	json_t *env, *tools = json_pack("{s:{s:s}}", "ncu", "path", "/opt/ncu");
	json_t *gpus;
	(void)state;
	setenv("CUDA_VISIBLE_DEVICES", "1,0", 1);
	assert_int_equal(lp_prov_env(tools, &env, &err), 0);
	assert_true(json_is_string(json_object_get(env, "host")));
	assert_true(json_is_string(json_object_get(json_object_get(env, "os"), "kernel_release")));
	assert_true(json_integer_value(json_object_get(json_object_get(env, "cpu"), "logical_cores")) >= 1);
	assert_true(json_integer_value(json_object_get(json_object_get(env, "memory"), "total_bytes")) > 0);
	/* the tracer's clock: its source where the kernel says (null where not) and one read's cost */
	{
		const json_t *c = json_object_get(env, "clock");
		double ns = (double)json_integer_value(json_object_get(c, "realtime_read_ns"));
		assert_true(json_is_string(json_object_get(c, "source")) || json_is_null(json_object_get(c, "source")));
		assert_true(ns >= 1 && ns < 1e6);
		assert_true(json_is_true(json_object_get(c, "slow")) == (ns > LP_SLOW_CLOCK_NS));
	}
	gpus = json_object_get(env, "gpus");
	assert_true(json_is_array(gpus));
	/* no GPU: an empty list and the reason; with GPUs: each has a name */
	if (json_array_size(gpus) == 0)
		assert_true(json_is_string(json_object_get(env, "gpus_reason")));
	else
		assert_true(json_is_string(json_object_get(json_array_get(gpus, 0), "name")));
	assert_non_null(json_object_get(json_object_get(env, "cuda"), "runtime"));
	assert_string_equal(json_string_value(json_object_get(json_object_get(env, "llmprof"), "version")),
		lp_version_string());
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(env, "tools"),
		"ncu"), "path")), "/opt/ncu");
	assert_string_equal(json_string_value(json_object_get(json_object_get(env, "environment"),
		"CUDA_VISIBLE_DEVICES")), "1,0");
	assert_true(json_object_get(json_object_get(env, "environment"), "NVTX_INJECTION64_PATH") != NULL);
	json_decref(env);
	/* no tools: an empty object */
	assert_int_equal(lp_prov_env(NULL, &env, &err), 0);
	assert_int_equal(json_object_size(json_object_get(env, "tools")), 0);
	json_decref(env);
	json_decref(tools);
}

static void test_inputs_hash_the_files_argv_names(void **state)
{
	const char *dir = lp_test_tmpdir("prov_inputs");
	char model[4200], prompt[4200], opt[4300];
	const char *argv[4];
	struct lp_err err = LP_ERR_INIT;
	json_t *in, *files;
	char sha[65];
	(void)state;
	snprintf(model, sizeof(model), "%s/model.json", dir);
	snprintf(prompt, sizeof(prompt), "%s/prompt.txt", dir);
	snprintf(opt, sizeof(opt), "--prompt=%s", prompt);
	lp_test_write(model, "{\"hidden_size\": 8}\n");
	lp_test_write(prompt, "hello");
	argv[0] = "python-that-does-not-exist";
	argv[1] = model;
	argv[2] = opt;
	argv[3] = "--iters=3";
	assert_int_equal(lp_prov_inputs(argv, 4, NULL, &in, &err), 0);
	assert_int_equal(json_array_size(json_object_get(json_object_get(in, "workload"), "argv")), 4);
	files = json_object_get(in, "files");
	assert_int_equal(json_array_size(files), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(files, 0), "path")), model);
	assert_string_equal(json_string_value(json_object_get(json_array_get(files, 1), "path")), prompt);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(files, 1), "argv_index")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(files, 1), "size_bytes")), 5);
	lp_sha256_hex("hello", 5, sha);
	assert_string_equal(json_string_value(json_object_get(json_array_get(files, 1), "sha256")), sha);
	json_decref(in);
	/* the program is looked up on PATH */
	argv[0] = "sh";
	assert_int_equal(lp_prov_inputs(argv, 1, NULL, &in, &err), 0);
	files = json_object_get(in, "files");
	assert_int_equal(json_array_size(files), 1);
	assert_true(lp_str_ends_with(json_string_value(json_object_get(json_array_get(files, 0), "path")), "/sh"));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(files, 0), "argv_index")), 0);
	json_decref(in);
}

static void test_prepare_writes_provenance_into_a_new_run(void **state)
{
	const char *dir = lp_test_tmpdir("prov_prepare");
	char root_ovr[4200];
	const char *ovr[2];
	const char *argv[] = { "/bin/true" };
	struct lp_run_opts o;
	struct lp_run run;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf p = LP_BUF_INIT;
	json_t *back = NULL;
	(void)state;
	snprintf(root_ovr, sizeof(root_ovr), "artifacts.stage2_dir=%s/stage2", dir);
	ovr[0] = root_ovr;
	ovr[1] = "run.repeats=2";
	memset(&o, 0, sizeof(o));
	o.conf_dir = LP_CONF_DIR;
	o.overrides = ovr;
	o.n_overrides = 2;
	o.workload_argv = argv;
	o.workload_argc = 1;
	/* a dry run makes nothing */
	o.dry_run = 1;
	assert_int_equal(lp_run_prepare(&run, &o, &err), 0);
	assert_null(run.dir.path);
	assert_string_equal(run.mode, "deep");
	lp_run_release(&run);
	lp_fs_join(&p, dir, "stage2");
	assert_false(lp_fs_exists(p.data));
	/* a bad override makes nothing either */
	ovr[1] = "run.repeats=0";
	o.dry_run = 0;
	assert_int_equal(lp_run_prepare(&run, &o, &err), -1);
	assert_false(lp_fs_exists(p.data));
	ovr[1] = "run.repeats=2";
	assert_int_equal(lp_run_prepare(&run, &o, &err), 0);
	assert_int_equal(lp_run_provenance(&run, NULL, &err), 0);
	assert_int_equal(json_array_size(json_object_get(run.dir.manifest, "artifacts")), 3);
	lp_rundir_path(&run.dir, "config.yaml", &p);
	assert_int_equal(lp_yaml_load_file(p.data, &back, &err), 0);
	assert_true(json_equal(back, run.cfg.root));
	json_decref(back);
	lp_rundir_path(&run.dir, "inputs.yaml", &p);
	assert_int_equal(lp_yaml_load_file(p.data, &back, &err), 0);
	assert_string_equal(json_string_value(json_array_get(json_object_get(back, "overrides"), 1)),
		"run.repeats=2");
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(back, "files"), 0),
		"path")), "/bin/true");
	json_decref(back);
	lp_rundir_path(&run.dir, "env.json", &p);
	assert_true(lp_fs_is_file(p.data));
	lp_run_release(&run);
	lp_buf_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_env_has_host_os_cpu_gpus_and_variables),
		cmocka_unit_test(test_inputs_hash_the_files_argv_names),
		cmocka_unit_test(test_prepare_writes_provenance_into_a_new_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
