/* test_nsys_collect.c: the nsys phase against a fake `nsys` (a shell script): preset -> flags
 * (nvtx_capture in range@domain order, the register-only variable), stats and export steps,
 * the importer failure that leaves only a .qdstrm, cmd.txt. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collect/nsys.h"
#include "config/yaml.h"
#include "core/fs.h"

static char dir[2048], nsys[4096], modefile[4096];

static const char fake[] =
	"#!/bin/sh\n"
	"D='%s'\n"
	"echo \"$* REG=${NSYS_NVTX_PROFILER_REGISTER_ONLY-unset}\" >> \"$D/calls\"\n"
	"cmd=$1; shift\n"
	"out=''; for a in \"$@\"; do case \"$a\" in --output=*) out=${a#--output=};; esac; done\n"
	"prev=''; for a in \"$@\"; do [ \"$prev\" = --output ] && out=\"$a\"; prev=\"$a\"; done\n"
	"case \"$cmd\" in\n"
	"profile) if [ \"$(cat \"$D/mode\")\" = qdstrm ]; then touch \"$out.qdstrm\"; else touch \"$out.nsys-rep\"; fi; exit 3;;\n"
	"stats) for r in cuda_gpu_kern_sum nvtx_sum; do case \"$*\" in *\"--report $r\"*) cp '%s' \"${out}_$r.csv\";; esac; done;;\n"
	"export) touch \"$out\";;\n"
	"esac\n"
	"exit 0\n";

static void test_profile_argv(void **state)
{
	const char *wl[] = { "python3", "gen.py", NULL };
	struct lp_nsys_plan p;
	struct lp_argv av = LP_ARGV_INIT;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf b = LP_BUF_INIT;
	json_t *preset;
	char path[4096];
	size_t i;
	int reg;
	(void)state;
	snprintf(path, sizeof(path), "%s/profiling/nsys/nsys.default.yaml", LP_CONF_DIR);
	assert_int_equal(lp_yaml_load_file(path, &preset, &err), 0);
	memset(&p, 0, sizeof(p));
	p.nsys = "nsys";
	p.preset = preset;
	p.out_dir = "r/nsys";
	p.workload = wl;
	assert_int_equal(lp_nsys_profile_argv(&p, &av, &reg, &err), 0);
	for (i = 0; i < av.n; i++)
		lp_buf_addf(&b, "%s%s", i ? " " : "", av.v[i]);
	assert_string_equal(b.data, "nsys profile --trace=cuda,nvtx,osrt --sample=none --output=r/nsys/run "
		"--force-overwrite=true --cuda-graph-trace=node python3 gen.py");
	assert_int_equal(reg, 0);
	lp_argv_release(&av);

	json_object_set_new(preset, "capture_range", json_string("nvtx"));
	json_object_set_new(preset, "capture_range_end", json_string("stop"));
	json_object_set_new(preset, "nvtx_capture", json_string("decode_all@LLM"));
	assert_int_equal(lp_nsys_profile_argv(&p, &av, &reg, &err), 0);
	lp_buf_reset(&b);
	for (i = 0; i < av.n; i++)
		lp_buf_addf(&b, "%s ", av.v[i]);
	assert_non_null(strstr(b.data, " --capture-range=nvtx --capture-range-end=stop --nvtx-capture=decode_all@LLM "));
	assert_int_equal(reg, 1);
	lp_argv_release(&av);

	json_object_set_new(preset, "nvtx_capture", json_string("LLM@decode_all/"));
	assert_int_equal(lp_nsys_profile_argv(&p, &av, &reg, &err), -1);
	assert_non_null(strstr(err.hint, "range@domain"));
	lp_argv_release(&av);
	json_object_set_new(preset, "nvtx_capture", json_null());
	assert_int_equal(lp_nsys_profile_argv(&p, &av, &reg, &err), -1);
	assert_non_null(strstr(err.msg, "'profiling.nsys.nvtx_capture' is null"));
	lp_argv_release(&av);
	json_object_set_new(preset, "tracee", json_true());
	assert_int_equal(lp_nsys_profile_argv(&p, &av, &reg, &err), -1);
	assert_string_equal(err.msg, "unknown key 'profiling.nsys.tracee'");
	lp_argv_release(&av);
	lp_buf_release(&b);
	json_decref(preset);
}

static void test_run(void **state)
{
	const char *wl[] = { "/bin/true", NULL };
	struct lp_nsys_plan p;
	struct lp_nsys_outcome o;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf b = LP_BUF_INIT;
	char text[8192], out[4096], logs[4096], path[8192];
	json_t *preset = json_pack("{s:[s,s],s:s,s:s,s:s,s:[s,s],s:b}", "trace", "cuda", "nvtx", "sample", "none",
		"capture_range", "nvtx", "nvtx_capture", "decode_all@LLM", "stats_reports", "cuda_gpu_kern_sum", "nvtx_sum",
		"export_sqlite", 1);
	(void)state;
	snprintf(dir, sizeof(dir), "%s", lp_test_tmpdir("nsys_run"));
	snprintf(nsys, sizeof(nsys), "%s/fake-nsys", dir);
	snprintf(modefile, sizeof(modefile), "%s/mode", dir);
	snprintf(text, sizeof(text), fake, dir, lp_test_fixture("nsys/summary_cuda_gpu_kern_sum.csv"));
	lp_test_write(nsys, text);
	assert_int_equal(chmod(nsys, 0755), 0);
	lp_test_write(modefile, "ok");
	snprintf(out, sizeof(out), "%s/nsys", dir);
	snprintf(logs, sizeof(logs), "%s/logs", dir);
	memset(&p, 0, sizeof(p));
	p.nsys = nsys;
	p.preset = preset;
	p.out_dir = out;
	p.logs_dir = logs;
	p.workload = wl;
	p.timeout_s = 30;
	if (lp_nsys_run(&p, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_non_null(strstr(o.report, "/nsys/run.nsys-rep"));
	assert_int_equal(o.workload_exit, 3);  /* passed on, not fatal */
	assert_int_equal(o.n_stats, 2);
	assert_non_null(strstr(o.sqlite, "/nsys/run.sqlite"));
	snprintf(path, sizeof(path), "%s/calls", dir);
	lp_test_read(path, &b);
	assert_non_null(strstr(b.data, "profile --trace=cuda,nvtx --sample=none --capture-range=nvtx "
		"--nvtx-capture=decode_all@LLM"));
	assert_non_null(strstr(b.data, "/bin/true REG=0\n"));
	assert_non_null(strstr(b.data, "stats --report cuda_gpu_kern_sum --report nvtx_sum --format csv --output "));
	assert_non_null(strstr(b.data, "export --type sqlite"));
	snprintf(path, sizeof(path), "%s/cmd.txt", out);
	lp_test_read(path, &b);
	assert_non_null(strstr(b.data, "LC_ALL=C NSYS_NVTX_PROFILER_REGISTER_ONLY=0 "));

	lp_test_write(modefile, "qdstrm");
	snprintf(path, sizeof(path), "%s/run.nsys-rep", out);
	remove(path);
	assert_int_equal(lp_nsys_run(&p, &o, &err), -1);
	assert_int_equal(err.kind, LP_EENV);
	assert_non_null(strstr(err.msg, "run.qdstrm': its importer failed"));
	assert_non_null(strstr(err.hint, "libdw.so.1 and libelf.so.1"));
	lp_buf_release(&b);
	json_decref(preset);
}

/* A driver for scripts/gpu/nsight.sh, skipped unless LP_REAL_NSYS, LP_REAL_OUT and
 * LP_REAL_WORKLOAD are set: the real nsys from conf/profiling/nsys/nsys.default.yaml (or
 * LP_REAL_PRESET), stats and sqlite export enabled; LP_REAL_NVTX_CAPTURE gates it by NVTX. */
static void test_real_nsys(void **state)
{
	const char *path = getenv("LP_REAL_NSYS"), *out = getenv("LP_REAL_OUT"), *wl = getenv("LP_REAL_WORKLOAD");
	const char *preset_path = getenv("LP_REAL_PRESET"), *cap = getenv("LP_REAL_NVTX_CAPTURE");
	char wlbuf[4096], nsys_dir[4096], logs[4096], conf[4096];
	const char *argv[64];
	char *save = NULL, *w;
	size_t n = 0;
	struct lp_nsys_plan p;
	struct lp_nsys_outcome o;
	struct lp_err err = LP_ERR_INIT;
	json_t *preset;
	(void)state;
	if (!path || !out || !wl) {
		skip();
		return;
	}
	snprintf(conf, sizeof(conf), "%s/profiling/nsys/nsys.default.yaml", LP_CONF_DIR);
	assert_int_equal(lp_yaml_load_file(preset_path ? preset_path : conf, &preset, &err), 0);
	json_object_set_new(preset, "export_sqlite", json_true());
	if (cap && *cap)
		json_object_set_new(preset, "nvtx_capture", json_string(cap));
	snprintf(wlbuf, sizeof(wlbuf), "%s", wl);
	for (w = strtok_r(wlbuf, " ", &save); w && n + 1 < 64; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	snprintf(nsys_dir, sizeof(nsys_dir), "%s/nsys", out);
	snprintf(logs, sizeof(logs), "%s/logs", out);
	memset(&p, 0, sizeof(p));
	p.nsys = path;
	p.preset = preset;
	p.out_dir = nsys_dir;
	p.logs_dir = logs;
	p.workload = argv;
	p.timeout_s = 300;
	if (lp_nsys_run(&p, &o, &err) < 0)
		fail_msg("nsys run failed: %s (%s)", err.msg, err.hint);
	printf("nsys: report %s, %d stats CSVs, sqlite %s, workload exit %d, %.1fs\n", o.report, o.n_stats, o.sqlite,
		o.workload_exit, o.profile.wall_s);
	json_decref(preset);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_argv),
		cmocka_unit_test(test_run),
		cmocka_unit_test(test_real_nsys),
	};
	if (getenv("LP_REAL_OUT"))  /* the GPU driver mode: only the real-tool test */
		cmocka_set_test_filter("test_real_*");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
