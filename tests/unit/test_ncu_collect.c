/* test_ncu_collect.c: the ncu phase against a fake `ncu` (a shell script): preset -> flags,
 * section checks against --list-sections, exports, "No kernels were profiled" (exit 0),
 * the app-range retry, ERR_NVGPUCTRPERM, n/a metrics, cmd.txt. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdlib.h>

#include "analyze/topn.h"
#include "collect/ncu.h"
#include "parse/ncu_raw.h"
#include "parse/nsys_sqlite.h"
#include "config/yaml.h"
#include "core/fs.h"

static char dir[2048], ncu[4096], modefile[4096];

static const char fake[] =
	"#!/bin/sh\n"
	"D='%s'\n"
	"echo \"$*\" >> \"$D/calls\"\n"
	"case \"$*\" in\n"
	"*--list-sections*) printf -- '----\\nIdentifier   Display Name   Filename\\n----\\n"
	"SpeedOfLight   GPU Speed Of Light Throughput   x.section\\nMemoryWorkloadAnalysis  Memory Workload Analysis  y\\n"
	"Occupancy  Occupancy  z\\nSchedulerStats  Scheduler Statistics  w\\n'; exit 0;;\n"
	"*--page\\ raw*) cat '%s'; exit 0;;\n"
	"*--page\\ details*) cat '%s'; exit 0;;\n"
	"esac\n"
	"out=''; prev=''\n"
	"for a in \"$@\"; do [ \"$prev\" = --export ] && out=\"$a\"; prev=\"$a\"; done\n"
	"mode=$(cat \"$D/mode\")\n"
	"case \"$mode\" in\n"
	"ok) echo '==PROF== Disconnected'; touch \"$out.ncu-rep\";;\n"
	"nothing) echo '==WARNING== No kernels were profiled.'; echo '==WARNING== Note: the NVTX expression matched push/pop ranges';;\n"
	"perm) echo '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters'; exit 1;;\n"
	"range) case \"$*\" in *'--replay-mode range'*) echo '==ERROR== Unsupported API during capture (cuKernelSetAttribute)'; exit 1;; esac; touch \"$out.ncu-rep\";;\n"
	"esac\n"
	"exit 0\n";

static json_t *preset(const char *file)
{
	char path[4096];
	json_t *p;
	struct lp_err err = LP_ERR_INIT;
	snprintf(path, sizeof(path), "%s/profiling/ncu/%s", LP_CONF_DIR, file);
	if (lp_yaml_load_file(path, &p, &err) < 0)
		fail_msg("%s", err.msg);
	return p;
}

static void setup_fake(const char *name, const char *mode)
{
	char text[8192];
	snprintf(dir, sizeof(dir), "%s", lp_test_tmpdir(name));
	snprintf(ncu, sizeof(ncu), "%s/fake-ncu", dir);
	snprintf(modefile, sizeof(modefile), "%s/mode", dir);
	snprintf(text, sizeof(text), fake, dir, lp_test_fixture("ncu/synthetic_raw.csv"),
		lp_test_fixture("ncu/synthetic_details.csv"));
	lp_test_write(ncu, text);
	assert_int_equal(chmod(ncu, 0755), 0);
	lp_test_write(modefile, mode);
}

static void test_argv_from_default_preset(void **state)
{
	json_t *p = preset("ncu.default.yaml");
	const char *wl[] = { "build/bin/llmprof-llm", "--model", "tiny", NULL };
	struct lp_ncu_plan plan;
	struct lp_argv av = LP_ARGV_INIT;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf b = LP_BUF_INIT;
	size_t i;
	(void)state;
	memset(&plan, 0, sizeof(plan));
	plan.ncu = "ncu";
	plan.preset = p;
	plan.out_dir = "run/ncu";
	plan.workload = wl;
	assert_int_equal(lp_ncu_argv(&plan, &av, &err), 0);
	for (i = 0; i < av.n; i++)
		lp_buf_addf(&b, "%s%s", i ? " " : "", av.v[i]);
	assert_string_equal(b.data,
		"ncu --target-processes all --replay-mode kernel --nvtx --nvtx-include LLM@decode_all/ --set roofline "
		"--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section SchedulerStats "
		"--metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,"
		"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,"
		"sm__ops_path_tensor_src_bf16_dst_fp32.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,"
		"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum "
		"--kernel-name-base demangled --launch-count=1 --clock-control none --cache-control all --force-overwrite "
		"--export run/ncu/ncu_default build/bin/llmprof-llm --model tiny");
	lp_argv_release(&av);

	/* top-N: the filter and the total launch count replace the preset's */
	plan.kernel_filter = "regex:^(a|b)$";
	plan.launch_count_total = 2;
	assert_int_equal(lp_ncu_argv(&plan, &av, &err), 0);
	lp_buf_reset(&b);
	for (i = 0; i < av.n; i++)
		lp_buf_addf(&b, "%s ", av.v[i]);
	assert_non_null(strstr(b.data, "--kernel-name regex:^(a|b)$ --kernel-name-base demangled --launch-count=2 "));
	lp_argv_release(&av);

	json_object_set_new(p, "replay_mode", json_string("sometimes"));
	assert_int_equal(lp_ncu_argv(&plan, &av, &err), -1);
	assert_string_equal(err.msg, "'profiling.ncu.replay_mode' is 'sometimes'");
	lp_argv_release(&av);
	json_object_set_new(p, "replay_mode", json_string("kernel"));
	json_object_set_new(p, "colour", json_true());
	assert_int_equal(lp_ncu_argv(&plan, &av, &err), -1);
	assert_string_equal(err.msg, "unknown key 'profiling.ncu.colour'");
	lp_argv_release(&av);
	lp_buf_release(&b);
	json_decref(p);
}

static void test_run_and_exports(void **state)
{
	json_t *p = preset("ncu.default.yaml");
	const char *wl[] = { "/bin/true", NULL };
	struct lp_ncu_plan plan;
	struct lp_ncu_outcome o;
	struct lp_ncu_sections known;
	struct lp_err err = LP_ERR_INIT;
	char out[4096], logs[4096], path[8192];
	struct lp_buf b = LP_BUF_INIT;
	(void)state;
	setup_fake("ncu_run", "ok");
	snprintf(out, sizeof(out), "%s/ncu", dir);
	snprintf(logs, sizeof(logs), "%s/logs", dir);
	assert_int_equal(lp_ncu_sections_list(ncu, 10, &known, &err), 0);
	assert_int_equal(known.n, 4);
	assert_string_equal(known.ids[0], "SpeedOfLight");
	memset(&plan, 0, sizeof(plan));
	plan.ncu = ncu;
	plan.preset = p;
	plan.out_dir = out;
	plan.logs_dir = logs;
	plan.workload = wl;
	plan.sections_known = &known;
	plan.timeout_s = 30;
	if (lp_ncu_run(&plan, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_false(o.profiled_nothing);
	assert_int_equal(o.results, 4);
	assert_true(lp_fs_is_file(o.raw_csv));
	assert_true(lp_fs_is_file(o.details_csv));
	assert_non_null(strstr(o.raw_csv, "/ncu/ncu_default_raw.csv"));
	/* the fixture has only two of the nine requested metrics */
	assert_non_null(strstr(o.metrics_na.data, "sm__ops_path_tensor_src_bf16_dst_fp32.sum"));
	assert_null(strstr(o.metrics_na.data, "dram__bytes_read.sum"));
	snprintf(path, sizeof(path), "%s/cmd.txt", out);
	lp_test_read(path, &b);
	assert_non_null(strstr(b.data, "LC_ALL=C "));
	assert_non_null(strstr(b.data, " --nvtx-include LLM@decode_all/ "));
	assert_non_null(strstr(b.data, " --import "));
	assert_non_null(strstr(b.data, "--page raw --print-units base >"));
	lp_ncu_outcome_release(&o);

	/* an unknown section is named, with the closest known one */
	json_array_append_new(json_object_get(p, "sections"), json_string("SpeedOfLite"));
	assert_int_equal(lp_ncu_run(&plan, &o, &err), -1);
	assert_string_equal(err.msg, "unknown ncu section 'profiling.ncu.sections[4]': 'SpeedOfLite'");
	assert_non_null(strstr(err.hint, "did you mean 'SpeedOfLight'?"));
	lp_ncu_outcome_release(&o);
	json_array_remove(json_object_get(p, "sections"), 4);

	lp_test_write(modefile, "nothing");
	assert_int_equal(lp_ncu_run(&plan, &o, &err), 0);
	assert_true(o.profiled_nothing);
	lp_ncu_outcome_release(&o);

	lp_test_write(modefile, "perm");
	assert_int_equal(lp_ncu_run(&plan, &o, &err), -1);
	assert_int_equal(err.kind, LP_EENV);
	assert_non_null(strstr(err.hint, "NVreg_RestrictProfilingToAdminUsers=0"));
	lp_ncu_outcome_release(&o);

	lp_test_write(modefile, "range");
	json_object_set_new(p, "replay_mode", json_string("range"));
	assert_int_equal(lp_ncu_run(&plan, &o, &err), 0);
	assert_true(o.retried_app_range);
	lp_test_read(path, &b);
	assert_non_null(strstr(b.data, "--replay-mode range"));
	assert_non_null(strstr(b.data, "--replay-mode app-range"));
	lp_ncu_outcome_release(&o);

	lp_ncu_sections_release(&known);
	lp_buf_release(&b);
	json_decref(p);
}

/* One rank of a multi-rank job (ncu.h "One rank"): the job runs without ncu, the real
 * libllmprof_ncu_gate.so (next to the tests, ../lib) makes the process with RANK=<rank> re-execute
 * itself under the (fake) ncu. The workload plays torchrun: a rankless shell starting rank 1 then
 * rank 0. */
static void test_rank_gate(void **state)
{
	json_t *p = preset("ncu.default.yaml");
	const char *wl[] = { "/bin/sh", "-c", "RANK=1 /bin/true rank-one; RANK=0 /bin/true rank-zero", NULL };
	struct lp_ncu_plan plan;
	struct lp_ncu_outcome o;
	struct lp_err err = LP_ERR_INIT;
	char out[4096], logs[4096], path[8192], gate[4200], exe[4096];
	struct lp_buf b = LP_BUF_INIT;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(gate, sizeof(gate), "%s/../lib/libllmprof_ncu_gate.so", exe);
	if (!lp_fs_is_file(gate))
		fail_msg("%s is not built", gate);
	setup_fake("ncu_rank", "ok");
	snprintf(out, sizeof(out), "%s/ncu", dir);
	snprintf(logs, sizeof(logs), "%s/logs", dir);
	memset(&plan, 0, sizeof(plan));
	plan.ncu = ncu;
	plan.preset = p;
	plan.out_dir = out;
	plan.logs_dir = logs;
	plan.workload = wl;
	plan.timeout_s = 30;
	plan.rank_gate = gate;
	plan.rank = 0;
	if (lp_ncu_run(&plan, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_false(o.profiled_nothing);
	assert_int_equal(o.results, 4);
	/* ncu ran once, over rank 0's own command line */
	snprintf(path, sizeof(path), "%s/calls", dir);
	lp_test_read(path, &b);
	assert_non_null(strstr(b.data, " --export "));
	assert_non_null(strstr(b.data, " --nvtx-include LLM@decode_all/ "));
	assert_non_null(strstr(b.data, " /bin/true rank-zero\n"));
	assert_null(strstr(b.data, "rank-one"));
	assert_null(strstr(b.data, "/bin/sh -c"));
	snprintf(path, sizeof(path), "%s/ncu_gate.log", logs);
	lp_test_read(path, &b);
	assert_non_null(strstr(b.data, "rank -1 (no rank variable): not profiled\n"));
	assert_non_null(strstr(b.data, "rank 1 (RANK): not profiled\n"));
	assert_non_null(strstr(b.data, "rank 0 (RANK): profiled, exec ncu\n"));
	/* cmd.txt: the job as run (gate preloaded) and what rank 0 ran under */
	snprintf(path, sizeof(path), "%s/cmd.txt", out);
	lp_test_read(path, &b);
	assert_non_null(strstr(b.data, "# only rank 0 runs under ncu (libllmprof_ncu_gate.so re-executes it as): "));
	assert_non_null(strstr(b.data, "LLMPROF_NCU_RANK=0"));
	assert_non_null(strstr(b.data, "libllmprof_ncu_gate.so"));
	lp_ncu_outcome_release(&o);

	/* the chosen rank never starts: no report, an error naming it */
	plan.rank = 2;
	assert_int_equal(lp_ncu_run(&plan, &o, &err), -1);
	assert_non_null(strstr(err.msg, "ncu wrote no report"));
	lp_ncu_outcome_release(&o);
	lp_buf_release(&b);
	json_decref(p);
}

/* Splits "a b c" on spaces into a NULL-terminated argv (the string is modified). */
static size_t split_words(char *s, const char **argv, size_t cap)
{
	size_t n = 0;
	char *save = NULL, *w;
	for (w = strtok_r(s, " ", &save); w && n + 1 < cap; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	return n;
}

/* A driver for scripts/gpu/nsight.sh, skipped unless LP_REAL_NCU, LP_REAL_OUT and
 * LP_REAL_WORKLOAD are set: the real ncu from a preset, driven by lp_ncu_run, then parsed.
 * Optional: LP_REAL_PRESET (yaml), LP_REAL_NVTX_INCLUDE (one expression), LP_REAL_REPLAY,
 * LP_REAL_SQLITE (an nsys export: top-N selection from it, stage LP_REAL_STAGE or decode_all). */
static void test_real_ncu(void **state)
{
	const char *ncu_path = getenv("LP_REAL_NCU"), *out = getenv("LP_REAL_OUT"), *wl = getenv("LP_REAL_WORKLOAD");
	const char *preset_path = getenv("LP_REAL_PRESET"), *incl = getenv("LP_REAL_NVTX_INCLUDE");
	const char *sqlite = getenv("LP_REAL_SQLITE"), *stage = getenv("LP_REAL_STAGE");
	char wlbuf[4096], ncu_dir[4096], logs[4096];
	const char *argv[64];
	struct lp_ncu_plan plan;
	struct lp_ncu_outcome o;
	struct lp_ncu_sections known;
	struct lp_err err = LP_ERR_INIT;
	struct lp_kernel_table t;
	struct lp_topn sel;
	struct lp_profile prof;
	int have_sel = 0;
	size_t i;
	json_t *p;
	(void)state;
	if (!ncu_path || !out || !wl) {
		skip();
		return;
	}
	if (preset_path) {
		assert_int_equal(lp_yaml_load_file(preset_path, &p, &err), 0);
	} else {
		p = preset("ncu.default.yaml");
	}
	if (incl && *incl)
		json_object_set_new(json_object_get(p, "nvtx"), "include", json_pack("[s]", incl));
	snprintf(wlbuf, sizeof(wlbuf), "%s", wl);
	split_words(wlbuf, argv, 64);
	snprintf(ncu_dir, sizeof(ncu_dir), "%s/ncu", out);
	snprintf(logs, sizeof(logs), "%s/logs", out);
	memset(&plan, 0, sizeof(plan));
	plan.ncu = ncu_path;
	plan.preset = p;
	plan.out_dir = ncu_dir;
	plan.logs_dir = logs;
	plan.workload = argv;
	plan.timeout_s = 480;
	plan.replay_override = getenv("LP_REAL_REPLAY") && *getenv("LP_REAL_REPLAY") ? getenv("LP_REAL_REPLAY") : NULL;
	if (lp_ncu_sections_list(ncu_path, 60, &known, &err) == 0) {
		printf("ncu --list-sections: %zu identifiers\n", known.n);
		plan.sections_known = &known;
	} else {
		printf("ncu --list-sections failed: %s\n", err.msg);
		memset(&known, 0, sizeof(known));
	}
	lp_profile_init(&prof, sqlite ? sqlite : "");
	if (sqlite && *sqlite) {
		struct lp_topn_opts to = { 5, stage ? stage : "decode_all", 1, "demangled", 1 };
		if (lp_nsys_sqlite_load(sqlite, &prof, &err) == 0 && lp_topn_from_profile(&prof, &to, &sel, &err) == 0) {
			have_sel = 1;
			plan.kernel_filter = sel.regex;
			plan.filter_mode = "per-launch-config";
			printf("top-%zu of %zu kernels under '%s' (%.3f ms): %s\n", sel.n_picks, sel.n_candidates, to.stage,
				sel.stage_total_ms, sel.regex);
		} else {
			printf("top-N selection failed: %s\n", err.msg);
		}
	}
	if (lp_ncu_run(&plan, &o, &err) < 0)
		fail_msg("ncu run failed: %s (%s)", err.msg, err.hint);
	printf("ncu: results=%d profiled_nothing=%d retried_app_range=%d wall=%.1fs metrics n/a: %s\n", o.results,
		o.profiled_nothing, o.retried_app_range, o.profile.wall_s, o.metrics_na.len ? o.metrics_na.data : "none");
	if (o.profiled_nothing && have_sel) {
		printf("NVTX ranges seen by nsys:");
		for (i = 0; i < prof.n_ranges && i < 20; i++)
			printf(" %s%s%s", prof.ranges[i].domain, *prof.ranges[i].domain ? "@" : "", prof.ranges[i].name);
		printf("\n");
	}
	if (!o.profiled_nothing) {
		struct lp_ncu_select all = { NULL, 1 };
		assert_int_equal(lp_ncu_raw_kernel_table(o.raw_csv, &all, &t, &err), 0);
		for (i = 0; i < t.n_rows; i++)
			printf("  %-90.90s dev %d calls %llu total %.4f ms\n", t.rows[i].kernel_name, t.rows[i].device,
				(unsigned long long)t.rows[i].calls, t.rows[i].total_ms);
		if (have_sel) {
			uint64_t prof_counts[16];
			size_t hit = lp_topn_check(&sel, &t, "demangled", prof_counts);
			printf("selected kernels profiled: %zu of %zu\n", hit, sel.n_picks);
			for (i = 0; i < sel.n_picks; i++)
				printf("  %s %llu x  %s\n", prof_counts[i] ? "yes" : "NO ", (unsigned long long)prof_counts[i],
					sel.picks[i].kernel_name);
		}
		lp_kernel_table_release(&t);
	}
	if (have_sel)
		lp_topn_release(&sel);
	lp_profile_release(&prof);
	lp_ncu_outcome_release(&o);
	lp_ncu_sections_release(&known);
	json_decref(p);
}

/* ncu's progress from its log, on the real log of a stalled replay (tests/fixtures/ncu/h200x2_stall,
 * README there): 19 launches profiled, the 20th stuck at "0%". As the watchdog saw it during the
 * stall (the log up to torchrun's SIGTERM), that launch is open; in the whole log, ncu's shutdown
 * lines follow it and it is a failed one. A log of a process that finished has nothing open. */
static void test_log_progress(void **state)
{
	struct lp_buf t = LP_BUF_INIT;
	struct lp_ncu_log_progress pg, pg2;
	char path[1024];
	const char *cut;
	(void)state;
	snprintf(path, sizeof(path), "%s/ncu.log", lp_test_fixture("ncu/h200x2_stall"));
	lp_test_read(path, &t);
	lp_ncu_log_progress(t.data, &pg);
	assert_int_equal(pg.done, 19);
	assert_int_equal(pg.failed, 1);
	assert_false(pg.open);
	cut = strstr(t.data, "W1124 07:14:51");
	assert_non_null(cut);
	t.data[cut - t.data] = '\0';
	lp_ncu_log_progress(t.data, &pg);
	assert_int_equal(pg.done, 19);
	assert_int_equal(pg.failed, 0);
	assert_true(pg.open);
	assert_string_equal(pg.open_name, "1:7:nvjet_sm90_tst_64x8_64x16_2x1_v_bz_TNT:5");
	{
		/* the marks grow while a replay advances: the next pass's dots are progress */
		struct lp_buf more = LP_BUF_INIT;
		lp_buf_adds(&more, t.data);
		lp_buf_adds(&more, "....");
		lp_ncu_log_progress(more.data, &pg2);
		assert_true(pg2.open);
		assert_int_equal(pg2.marks, pg.marks + 4);
		lp_buf_release(&more);
	}
	lp_buf_release(&t);
	snprintf(path, sizeof(path), "%s/ncu_done.log", lp_test_fixture("ncu/h200x2_stall"));
	lp_test_read(path, &t);
	lp_ncu_log_progress(t.data, &pg);
	assert_int_equal(pg.done, 6);
	assert_int_equal(pg.failed, 0);
	assert_false(pg.open);
	assert_int_equal(pg.marks, 6 * 11);   /* "0%....50%....100% - 18 passes": 8 dots, 3 percent signs */
	lp_buf_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_argv_from_default_preset),
		cmocka_unit_test(test_run_and_exports),
		cmocka_unit_test(test_rank_gate),
		cmocka_unit_test(test_log_progress),
		cmocka_unit_test(test_real_ncu),
	};
	if (getenv("LP_REAL_OUT"))  /* the GPU driver mode: only the real-tool test */
		cmocka_set_test_filter("test_real_*");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
