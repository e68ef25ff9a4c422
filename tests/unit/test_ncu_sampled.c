/* test_ncu_sampled.c: the sampled ncu phase (run/ncu_sampled.h) against a fake `ncu`: the
 * --kernel-id flags it gets, the merged export keeping only the planned groups' results (a
 * same-named kernel of the prefill goes), the IDs of the details page following, sampling.json
 * with the coverage and each group's result IDs and weight, the region tables scaled by them, the
 * cache: a second run reuses every group and starts no ncu, and stop_early's --launch-count/--kill. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <math.h>

#include "run/ncu_sampled.h"
#include "run/regions_run.h"
#include "core/fs.h"
#include "parse/ncu_raw.h"

static char dir[2048], ncu[4096];

static const char fake[] =
	"#!/bin/sh\n"
	"D='%s'\n"
	"echo \"$*\" >> \"$D/calls\"\n"
	"case \"$*\" in\n"
	"*--page\\ raw*) cat \"$D/raw.csv\"; exit 0;;\n"
	"*--page\\ details*) cat \"$D/details.csv\"; exit 0;;\n"
	"esac\n"
	"out=''; prev=''\n"
	"for a in \"$@\"; do [ \"$prev\" = --export ] && out=\"$a\"; prev=\"$a\"; done\n"
	"echo '==PROF== Profiling \"k_gemv\" - 0: 0%%....50%%....100%% - 9 passes'\n"
	"touch \"$out.ncu-rep\"\n"
	"[ -f \"$D/hang\" ] && sleep 30\n"
	"[ -f \"$D/stall\" ] && printf '%%s' '==PROF== Profiling \"k_gemv\" - 1: 0%%' && sleep 30\n"
	"exit 0\n";

#define NVTX_COL "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"
#define SE_COL "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"

static const char raw[] =
	"\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"" NVTX_COL "\",\"" SE_COL "\",\"Kernel Name\",\"Context\","
	"\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\"\n"
	"\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"nsecond\"\n"
	"\"0\",\"7\",\"llm\",\"h\",\"7  \"\"LLM:prefill:none:none:none:none:ASCII:prefill\"\" \",\"\",\"k_gemv(int)\",\"1\","
	"\"7\",\"(32, 1, 1)\",\"(16, 1, 1)\",\"0\",\"9.0\",\"100\"\n"
	"\"1\",\"7\",\"llm\",\"h\",\"7  \"\"LLM:decode_all:none:none:none:none:ASCII:decode_all\"\"  "
	"\"\"LLM:decode_step:none:none:none:none:ASCII:decode_step\"\" \",\"\",\"k_gemv(int)\",\"1\",\"7\",\"(32, 1, 1)\","
	"\"(8, 1, 1)\",\"0\",\"9.0\",\"200\"\n"
	"\"2\",\"7\",\"llm\",\"h\",\"7  \"\"LLM:decode_all:none:none:none:none:ASCII:decode_all\"\" \",\"\",\"k_gemv(int)\","
	"\"1\",\"7\",\"(32, 1, 1)\",\"(8, 1, 1)\",\"0\",\"9.0\",\"300\"\n"
	"\"3\",\"7\",\"llm\",\"h\",\"7  \"\"LLM:decode_all:none:none:none:none:ASCII:decode_all\"\" \",\"\",\"k_other(int)\","
	"\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"5\"\n";

static const char details[] =
	"\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
	"\"0\",\"k_gemv(int)\",\"GPU Speed Of Light Throughput\",\"Duration\",\"nsecond\",\"100\"\n"
	"\"1\",\"k_gemv(int)\",\"GPU Speed Of Light Throughput\",\"Duration\",\"nsecond\",\"200\"\n"
	"\"2\",\"k_gemv(int)\",\"GPU Speed Of Light Throughput\",\"Duration\",\"nsecond\",\"300\"\n"
	"\"3\",\"k_other(int)\",\"GPU Speed Of Light Throughput\",\"Duration\",\"nsecond\",\"5\"\n";

static void capture(struct lp_profile *p)
{
	int32_t pf, da, st;
	uint32_t corr = 1;
	uint64_t t = 0;
	int s, l;
	struct lp_kernel *k;
	lp_profile_init(p, "test");
	pf = lp_test_range(p, -1, "LLM", "prefill", 0, 1000000);
	for (l = 0; l < 2; l++) {
		k = lp_test_kernel(p, pf, "k_gemv(int)", t, t + 100);
		k->grid[0] = 16, k->grid[1] = k->grid[2] = 1, k->block[0] = 32, k->block[1] = k->block[2] = 1;
		k->correlation_id = corr++;
		t += 1000;
	}
	da = lp_test_range(p, -1, "LLM", "decode_all", 0, 1000000);
	for (s = 0; s < 3; s++) {
		st = lp_test_range(p, da, "LLM", "decode_step", 0, 1000000);
		for (l = 0; l < 2; l++) {
			k = lp_test_kernel(p, st, "k_gemv(int)", t, t + 250);
			k->grid[0] = 8, k->grid[1] = k->grid[2] = 1, k->block[0] = 32, k->block[1] = k->block[2] = 1;
			k->correlation_id = corr++;
			t += 1000;
		}
		k = lp_test_kernel(p, st, "k_other(int)", t, t + 5);   /* 1.6% of the time: beyond 95% */
		k->grid[0] = k->grid[1] = k->grid[2] = 1, k->block[0] = k->block[1] = k->block[2] = 1;
		k->correlation_id = corr++;
		t += 1000;
	}
}

static json_t *preset(void)
{
	json_error_t je;
	return json_loads("{\"name\": \"ncu_light\", \"target_processes\": \"all\", \"replay_mode\": \"kernel\","
		"\"nvtx\": {\"include\": [\"LLM@decode_all/\"], \"exclude\": []}, \"set\": null, \"sections\": [],"
		"\"metrics\": [\"gpu__time_duration.sum\"], \"kernel_name\": null, \"kernel_name_base\": \"demangled\","
		"\"launch_skip\": 0, \"launch_count\": 1, \"sample_per_group\": 3, \"budget_s\": 60, \"cache\": true}", 0, &je);
}

/* A fresh folder LP_TEST_TMP/name (dir) with the fake ncu (ncu) and the raw page it copies
 * (raw_csv) beside the details page; out / logs (4096 bytes each): the run's ncu and logs folders. */
static void fake_ncu_dir(const char *name, const char *raw_csv, char *out, char *logs)
{
	char text[8192], path[8192];
	snprintf(dir, sizeof(dir), "%s", lp_test_tmpdir(name));
	snprintf(ncu, sizeof(ncu), "%s/fake-ncu", dir);
	snprintf(text, sizeof(text), fake, dir);
	lp_test_write(ncu, text);
	assert_int_equal(chmod(ncu, 0755), 0);
	snprintf(path, sizeof(path), "%s/calls", dir);
	remove(path);
	snprintf(path, sizeof(path), "%s/raw.csv", dir);
	lp_test_write(path, raw_csv);
	snprintf(path, sizeof(path), "%s/details.csv", dir);
	lp_test_write(path, details);
	snprintf(out, 4096, "%s/run/ncu", dir);
	snprintf(logs, 4096, "%s/run/logs", dir);
}

static int count_lines(const char *path, const char *needle)
{
	struct lp_buf b = LP_BUF_INIT;
	const char *p;
	int n = 0;
	if (lp_fs_read_file(path, &b, 1 << 20, NULL) == 0)
		for (p = b.data; (p = strstr(p, needle)) != NULL; p++)
			n++;
	lp_buf_release(&b);
	return n;
}

struct ids_ctx {
	int n;
	uint64_t ids[8];
};

static int ids_cb(const struct lp_ncu_result *r, void *vctx, struct lp_err *err)
{
	struct ids_ctx *c = vctx;
	(void)err;
	if (c->n < 8)
		c->ids[c->n] = r->id;
	c->n++;
	return 0;
}

static int plans_seen;

static void on_plan(void *ctx, const struct lp_sample_plan *plan)
{
	(void)ctx;
	(void)plan;
	plans_seen++;
}

static void test_run_and_cache(void **state)
{
	struct lp_profile prof;
	struct lp_ncu_sampled s;
	struct lp_ncu_sampled_outcome o;
	struct lp_sample_select sel = { "decode_all", NULL, NULL, NULL, 0, 0 };
	struct lp_err err = LP_ERR_INIT;
	const char *wl[] = { "/bin/true", NULL };
	char out[4096], logs[4096], path[8192], cache[4096];
	struct ids_ctx ids = { 0, { 0 } };
	json_t *p = preset(), *sj, *g0;
	(void)state;
	fake_ncu_dir("ncu_sampled", raw, out, logs);
	snprintf(path, sizeof(path), "%s/cache", dir);
	lp_fs_remove_tree(path, NULL);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	capture(&prof);

	memset(&s, 0, sizeof(s));
	s.ncu = ncu;
	s.preset = p;
	s.out_dir = out;
	s.logs_dir = logs;
	s.workload = wl;
	s.capture = &prof;
	s.select = &sel;
	s.opts.k = 3;
	s.opts.coverage = 0.95;
	s.opts.budget_s = 60;
	s.workload_s = 0.1;
	s.use_cache = 1;
	s.cache_dir = cache;
	s.ident = (struct lp_ncu_cache_ident){ "NVIDIA H100 80GB HBM3", "580.65.06", "2025.3.1" };
	s.run_id = "run-1";
	s.timeout_s = 30;
	s.on_plan = on_plan;
	if (lp_ncu_sampled_run(&s, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(plans_seen, 1);
	assert_int_equal(o.plan.n_groups, 2);
	assert_int_equal(o.plan.n_procs, 1);
	assert_int_equal(o.procs_run, 1);
	assert_false(o.partial);
	/* invocations of k_gemv: 1, 2 in the prefill, then 2 a step; one in each step (the first of
	 * two equally central ones) -> 3, 5, 7 */
	assert_string_equal(o.plan.procs[0].kernel_id.data, "::regex:^(k_gemv)$:^(3|5|7)$");
	snprintf(path, sizeof(path), "%s/calls", dir);
	assert_int_equal(count_lines(path, "--kernel-id ::regex:^(k_gemv)$:^(3|5|7)$ "), 1);
	assert_int_equal(count_lines(path, "--kernel-name-base function"), 1);
	assert_int_equal(count_lines(path, "--nvtx-include"), 0);
	assert_int_equal(count_lines(path, "--launch-count"), 0);
	assert_int_equal(count_lines(path, "--export "), 1);
	/* every process's commands end up in ncu/cmd.txt */
	snprintf(path, sizeof(path), "%s/cmd.txt", out);
	assert_int_equal(count_lines(path, "--kernel-id"), 1);
	assert_int_equal(count_lines(path, "--page raw"), 1);
	/* the export: the decode's k_gemv results only, details following their IDs */
	assert_non_null(strstr(o.raw_csv, "/ncu/ncu_light_raw.csv"));
	assert_int_equal(lp_ncu_raw_stream(o.raw_csv, ids_cb, &ids, &err), 0);
	assert_int_equal(ids.n, 2);
	assert_int_equal(ids.ids[0], 1);
	assert_int_equal(ids.ids[1], 2);
	assert_int_equal(count_lines(o.details_csv, "k_gemv"), 2);
	assert_int_equal(count_lines(o.details_csv, "k_other"), 0);
	assert_int_equal(o.plan.groups[0].got, 2);
	assert_true(o.plan.groups[0].got_min_ns == 200 && o.plan.groups[0].got_max_ns == 300);
	assert_int_equal(o.plan.groups[1].status, LP_SAMPLE_BEYOND_TARGET);
	assert_int_equal(o.cache_stored, 1);
	snprintf(path, sizeof(path), "%s/sampling.json", out);
	sj = json_load_file(path, 0, NULL);
	assert_non_null(sj);
	assert_true(json_is_true(json_object_get(json_object_get(sj, "coverage"), "met")));
	g0 = json_array_get(json_object_get(sj, "groups"), 0);
	assert_string_equal(json_string_value(json_object_get(g0, "status")), "planned");
	assert_int_equal(json_integer_value(json_object_get(g0, "profiled")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(sj, "cache"), "stored")), 1);
	/* the fake ncu's one launch, done (and the process over) before the first once-a-second read:
	 * its time comes from the read after the process */
	assert_int_equal(json_array_size(json_object_get(json_array_get(json_object_get(sj, "runs"), 0), "result_s")), 1);
	/* the fake page is not what ncu would have profiled (its rows 0 and 3 are no planned launch):
	 * those rows went through the name/grid/block/region fallback, and were dropped */
	assert_int_equal(json_integer_value(json_object_get(sj, "results_attached_by_config")), 2);
	/* each of its 2 results stands for 3 of its 6 launches; their IDs in the merged export */
	assert_true(json_real_value(json_object_get(g0, "weight")) == 3.0);
	assert_int_equal(json_array_size(json_object_get(g0, "results")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(g0, "results"), 1), "id")), 2);
	/* row 2 is the third launch the process was to profile (k_gemv's invocation 7: the first of
	 * step 2, launch 8 of the capture) */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(g0, "results"), 1), "launch")), 8);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(g0, "results"), 1), "step")), 2);
	/* the selection (decode_all) is 3 launches a step from launch 2 on: launch 8 is its 7th */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(g0, "results"), 1), "ordinal")), 6);
	json_decref(sj);
	lp_ncu_sampled_outcome_release(&o);

	/* the region tables of the sampled run add up to every launch: (200 + 300) ns x 3 */
	{
		struct lp_regions_run rr;
		struct lp_regions_outcome ro;
		json_t *rp = json_deep_copy(p), *rj;
		char run_dir[4096];
		json_object_set_new(rp, "regions", json_pack("{s:[s]}", "include", "LLM@decode_all/"));
		snprintf(run_dir, sizeof(run_dir), "%s/run", dir);
		memset(&rr, 0, sizeof(rr));
		rr.run_dir = run_dir;
		rr.ncu_preset = rp;
		rr.raw_csv = o.raw_csv[0] ? o.raw_csv : NULL;
		snprintf(path, sizeof(path), "%s/ncu/ncu_light_raw.csv", run_dir);
		rr.raw_csv = path;
		if (lp_regions_run_report(&rr, &ro, &err) < 0)
			fail_msg("%s", err.msg);
		assert_true(fabs(ro.total_ms - 0.0015) < 1e-12);
		snprintf(path, sizeof(path), "%s/ncu/regions/report.json", run_dir);
		rj = json_load_file(path, 0, NULL);
		assert_non_null(rj);
		assert_non_null(strstr(json_string_value(json_object_get(json_object_get(rj, "config"), "sampled")),
			"each of the 2 results stands for the launches of its group (1 groups, 6 launches"));
		{
			json_t *sc = json_array_get(json_object_get(rj, "scopes"), 0);
			json_t *k0 = json_array_get(json_object_get(json_array_get(json_object_get(sc, "regions"), 0), "kernels"), 0);
			assert_int_equal(json_integer_value(json_object_get(json_object_get(sc, "totals"), "kernel_count")), 6);
			assert_int_equal(json_integer_value(json_object_get(k0, "calls")), 6);
			assert_true(fabs(json_real_value(json_object_get(k0, "mean_ms")) - 0.00025) < 1e-12);
			assert_true(fabs(json_real_value(json_object_get(k0, "max_ms")) - 0.0003) < 1e-12);   /* one launch's */
		}
		json_decref(rj);
		/* without ncu/sampling.json (an unsampled run) the rows count once */
		snprintf(path, sizeof(path), "%s/ncu/sampling.json", run_dir);
		assert_int_equal(remove(path), 0);
		snprintf(path, sizeof(path), "%s/ncu/ncu_light_raw.csv", run_dir);
		if (lp_regions_run_report(&rr, &ro, &err) < 0)
			fail_msg("%s", err.msg);
		assert_true(fabs(ro.total_ms - 0.0005) < 1e-12);
		json_decref(rp);
	}

	/* again: everything from the cache, no ncu process; the export has the cached rows */
	snprintf(path, sizeof(path), "%s/calls", dir);
	remove(path);
	if (lp_ncu_sampled_run(&s, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(o.plan.n_procs, 0);
	assert_int_equal(o.plan.n_cached, 1);
	assert_int_equal(o.plan.groups[0].status, LP_SAMPLE_CACHED);
	assert_false(lp_fs_is_file(path));
	ids.n = 0;
	assert_int_equal(lp_ncu_raw_stream(o.raw_csv, ids_cb, &ids, &err), 0);
	assert_int_equal(ids.n, 2);
	snprintf(path, sizeof(path), "%s/sampling.json", out);
	sj = json_load_file(path, 0, NULL);
	g0 = json_array_get(json_object_get(sj, "groups"), 0);
	assert_string_equal(json_string_value(json_object_get(g0, "status")), "cached");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(sj, "coverage"), "groups_reused")), 1);
	json_decref(sj);
	lp_ncu_sampled_outcome_release(&o);

	/* another preset's metrics: another key, profiled again; stop_early: ncu stops the workload
	 * after the 3 launches the plan predicts */
	json_array_append_new(json_object_get(p, "metrics"), json_string("dram__bytes.sum"));
	snprintf(path, sizeof(path), "%s/calls", dir);
	remove(path);
	s.stop_early = 1;
	if (lp_ncu_sampled_run(&s, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(o.plan.n_cached, 0);
	assert_int_equal(o.procs_run, 1);
	assert_int_equal(o.plan.procs[0].predicted, 3);
	assert_int_equal(count_lines(path, "--launch-count=3 --kill=on "), 1);
	lp_ncu_sampled_outcome_release(&o);

	/* ncu reaches its time limit: what its report holds is kept, the phase is partial */
	json_array_append_new(json_object_get(p, "metrics"), json_string("sm__cycles_elapsed.avg"));
	snprintf(path, sizeof(path), "%s/hang", dir);
	lp_test_write(path, "");
	s.timeout_s = 1;
	if (lp_ncu_sampled_run(&s, &o, &err) < 0)
		fail_msg("%s", err.msg);
	remove(path);
	assert_int_equal(o.procs_run, 1);
	assert_true(o.partial);
	assert_non_null(strstr(o.why, "ncu process 1 of 1: ncu timed out after"));
	assert_non_null(strstr(o.why, "kept the 4 results it had written (3 launches planned)"));
	assert_int_equal(o.plan.groups[0].got, 2);
	assert_non_null(strstr(o.raw_csv, "ncu_light_raw.csv"));
	lp_ncu_sampled_outcome_release(&o);

	/* a replay that stops advancing (the 2-GPU stall: "0%" and nothing more): the watchdog stops
	 * ncu after stall_s, long before the time limit, and what it wrote is kept */
	json_array_append_new(json_object_get(p, "metrics"), json_string("sm__inst_executed.sum"));
	snprintf(path, sizeof(path), "%s/stall", dir);
	lp_test_write(path, "");
	s.timeout_s = 60;
	s.stall_s = 2;
	if (lp_ncu_sampled_run(&s, &o, &err) < 0)
		fail_msg("%s", err.msg);
	remove(path);
	if (!o.partial)
		fail_msg("not partial: %zu procs run, %.1f s", o.procs_run, o.elapsed_s);
	assert_non_null(strstr(o.why, "ncu stalled: no progress for 2 s while profiling k_gemv"));
	assert_non_null(strstr(o.why, "kept the 4 results it had written"));
	assert_true(o.elapsed_s < 20);
	snprintf(path, sizeof(path), "%s/sampling.json", out);
	sj = json_load_file(path, 0, NULL);
	assert_non_null(sj);
	g0 = json_array_get(json_object_get(sj, "runs"), 0);
	assert_non_null(strstr(json_string_value(json_object_get(g0, "stalled")), "ncu stalled"));
	/* one launch was done (its line ends in "passes") before the stalled one */
	assert_int_equal(json_array_size(json_object_get(g0, "result_s")), 1);
	json_decref(sj);
	lp_ncu_sampled_outcome_release(&o);

	json_decref(p);
	lp_profile_release(&prof);
}

static void copy_into(const char *src, const char *to_dir, const char *rel)
{
	struct lp_buf b = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	char dst[8192];
	snprintf(dst, sizeof(dst), "%s/%s", to_dir, rel);
	if (lp_fs_read_file(src, &b, 1 << 24, &err) < 0 || lp_fs_write_atomic(dst, b.data, b.len, &err) < 0)
		fail_msg("%s", err.msg);
	lp_buf_release(&b);
}

/* The region tables of a real sampled run (tests/fixtures/ncu/h100_sampled_llama1b: llama-3.2-1b
 * decode of 2 tokens on an H100, 12 of 162 launches profiled): every row is weighed by its group,
 * so the totals count all 162 launches and add up to sum(weight x duration) of sampling.json. */
static void test_real_sampled_regions(void **state)
{
	struct lp_regions_run rr;
	struct lp_regions_outcome ro;
	struct lp_err err = LP_ERR_INIT;
	char run_dir[4096], path[8192];
	json_t *sj, *g, *r, *rp, *rj, *totals;
	double expect_ms = 0, launches = 0;
	size_t i, j;
	(void)state;
	snprintf(run_dir, sizeof(run_dir), "%s", lp_test_tmpdir("ncu_sampled_real"));
	snprintf(path, sizeof(path), "%s/ncu", run_dir);
	assert_int_equal(lp_fs_mkdir_p(path, &err), 0);
	copy_into(LP_FIXTURES "/ncu/h100_sampled_llama1b/ncu/sampling.json", run_dir, "ncu/sampling.json");
	copy_into(LP_FIXTURES "/ncu/h100_sampled_llama1b/ncu/ncu_light_raw.csv", run_dir, "ncu/ncu_light_raw.csv");
	snprintf(path, sizeof(path), "%s/ncu/sampling.json", run_dir);
	sj = json_load_file(path, 0, NULL);
	assert_non_null(sj);
	json_array_foreach(json_object_get(sj, "groups"), i, g) {
		launches += (double)json_integer_value(json_object_get(g, "launches"));
		json_array_foreach(json_object_get(g, "results"), j, r)
			expect_ms += json_real_value(json_object_get(g, "weight")) * json_real_value(json_object_get(r, "duration_us")) / 1e3;
	}
	assert_true(launches == 162);
	assert_true(expect_ms > 2.7 && expect_ms < 2.8);   /* 2.757 ms (the capture says 3.344: PDL waits) */
	rp = preset();
	json_object_set_new(rp, "metrics", json_pack("[sss]", "gpu__time_duration.sum",
		"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "sm__throughput.avg.pct_of_peak_sustained_elapsed"));
	json_object_set_new(rp, "regions", json_pack("{s:[s]}", "include", "LLM@decode_all/"));
	memset(&rr, 0, sizeof(rr));
	rr.run_dir = run_dir;
	rr.ncu_preset = rp;
	snprintf(path, sizeof(path), "%s/ncu/ncu_light_raw.csv", run_dir);
	rr.raw_csv = path;
	if (lp_regions_run_report(&rr, &ro, &err) < 0)
		fail_msg("%s", err.msg);
	assert_true(fabs(ro.total_ms - expect_ms) < 1e-9);
	snprintf(path, sizeof(path), "%s/ncu/regions/report.json", run_dir);
	rj = json_load_file(path, 0, NULL);
	assert_non_null(rj);
	totals = json_object_get(json_array_get(json_object_get(rj, "scopes"), 0), "totals");
	assert_int_equal(json_integer_value(json_object_get(totals, "kernel_count")), 162);
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(rj, "config"), "sampled")),
		"each of the 12 results stands for the launches of its group (6 groups, 162 launches"));
	json_decref(rj);
	json_decref(rp);
	json_decref(sj);
}


/* A capture with a warm-up iteration (warmup > decode_all > 3 decode steps) before the measured
 * one: with stand_ins the picks are the warm-up's launches, the one process profiles inside the
 * warm-up range (--nvtx-include LLM@warmup/), its results count for the measured group, and the
 * reports say they are warm-up launches. */
#define WSTACK "7  \"\"LLM:warmup:none:none:none:none:ASCII:warmup\"\"  \"\"LLM:decode_all:none:none:none:none:ASCII:decode_all\"\"  " \
	"\"\"LLM:decode_step:none:none:none:none:ASCII:decode_step\"\" "
#define WROW(id, name, dur) "\"" id "\",\"7\",\"llm\",\"h\",\"" WSTACK "\",\"\",\"" name "\",\"1\",\"7\",\"(32, 1, 1)\"," \
	"\"(8, 1, 1)\",\"0\",\"9.0\",\"" dur "\"\n"
/* the third as ncu 2025.3.1 prints a template argument in an anonymous namespace ("unnamed>") */
static const char raw_warm[] =
	"\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"" NVTX_COL "\",\"" SE_COL "\",\"Kernel Name\",\"Context\","
	"\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\"\n"
	"\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"nsecond\"\n"
	WROW("0", "k_gemv(int)", "210") WROW("1", "k_gemv(int)", "220")
	WROW("2", "void k_gemv<8, unnamed>::silu_kernel(TensorIteratorBase &)::[lambda() (instance 1)]>(int)", "230");

static void capture_warm(struct lp_profile *p)
{
	int32_t w, da, st;
	uint32_t corr = 1;
	uint64_t t = 0;
	int it, s, l;
	struct lp_kernel *k;
	lp_profile_init(p, "test");
	/* a setup launch before the warm-up, outside any range (llmprof-llm's graph capture) */
	k = lp_test_kernel(p, -1, "k_gemv(int)", t, t + 250);
	k->grid[0] = 8, k->grid[1] = k->grid[2] = 1, k->block[0] = 32, k->block[1] = k->block[2] = 1;
	k->correlation_id = corr++;
	t += 1000;
	w = lp_test_range(p, -1, "LLM", "warmup", 0, 1000000);
	for (it = 0; it < 2; it++) {
		da = lp_test_range(p, it ? -1 : w, "LLM", "decode_all", 0, 1000000);
		for (s = 0; s < 3; s++) {
			st = lp_test_range(p, da, "LLM", "decode_step", 0, 1000000);
			for (l = 0; l < 2; l++) {
				k = lp_test_kernel(p, st, "k_gemv(int)", t, t + 250);
				k->grid[0] = 8, k->grid[1] = k->grid[2] = 1, k->block[0] = 32, k->block[1] = k->block[2] = 1;
				k->correlation_id = corr++;
				t += 1000;
			}
		}
	}
}

static void test_warmup_stand_ins(void **state)
{
	struct lp_profile prof;
	struct lp_ncu_sampled s;
	struct lp_ncu_sampled_outcome o;
	struct lp_sample_select sel = { "decode_all", NULL, NULL, NULL, 0, 1 };
	struct lp_err err = LP_ERR_INIT;
	const char *wl[] = { "/bin/true", NULL };
	char out[4096], logs[4096], path[8192];
	json_t *p = preset(), *sj, *g0, *cov;
	size_t i;
	(void)state;
	fake_ncu_dir("ncu_sampled_warm", raw_warm, out, logs);
	capture_warm(&prof);

	memset(&s, 0, sizeof(s));
	s.ncu = ncu;
	s.preset = p;
	s.out_dir = out;
	s.logs_dir = logs;
	s.workload = wl;
	s.capture = &prof;
	s.select = &sel;
	s.opts.k = 3;
	s.opts.coverage = 0.95;
	s.workload_s = 0.1;
	s.timeout_s = 30;
	s.stop_early = 1;
	if (lp_ncu_sampled_run(&s, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(o.plan.n_groups, 1);
	assert_int_equal(o.plan.n_launches, 6);          /* the measured iteration's */
	assert_int_equal(o.plan.groups[0].n_stand, 6);   /* the warm-up's */
	assert_true(o.plan.groups[0].picks_from_warmup);
	assert_int_equal(o.plan.n_procs, 1);
	assert_true(o.plan.procs[0].warmup_only);
	/* the first k_gemv of each warm-up step: 1, 3, 5 among the warm-up's launches (ncu numbers the
	 * launches that pass its NVTX include; the setup launch is not one): only those, no extras
	 * after the warm-up */
	assert_string_equal(o.plan.procs[0].kernel_id.data, "::regex:^(k_gemv)$:^(1|3|5)$");
	assert_int_equal(o.plan.procs[0].predicted, 3);
	snprintf(path, sizeof(path), "%s/calls", dir);
	assert_int_equal(count_lines(path, "--nvtx-include LLM@warmup/ "), 1);
	assert_int_equal(count_lines(path, "--launch-count=3 --kill=on "), 1);
	assert_false(o.partial);
	/* the 3 rows are the 3 planned launches (attached in order, none by configuration) */
	assert_int_equal(o.plan.groups[0].got, 3);
	assert_int_equal(o.plan.groups[0].got_warmup, 3);
	assert_true(o.plan.groups[0].got_min_ns == 210 && o.plan.groups[0].got_max_ns == 230);
	snprintf(path, sizeof(path), "%s/sampling.json", out);
	sj = json_load_file(path, 0, NULL);
	assert_non_null(sj);
	assert_int_equal(json_integer_value(json_object_get(sj, "results_attached_by_config")), 0);
	cov = json_object_get(sj, "coverage");
	assert_true(json_is_true(json_object_get(cov, "met")));
	assert_int_equal(json_integer_value(json_object_get(cov, "results_warmup")), 3);
	assert_int_equal(json_integer_value(json_object_get(cov, "groups_from_warmup")), 1);
	g0 = json_array_get(json_object_get(sj, "groups"), 0);
	assert_int_equal(json_integer_value(json_object_get(g0, "profiled_warmup")), 3);
	assert_true(json_real_value(json_object_get(g0, "weight")) == 2.0);   /* 6 launches, 3 results */
	for (i = 0; i < 3; i++) {
		json_t *r = json_array_get(json_object_get(g0, "results"), i);
		assert_true(json_is_true(json_object_get(r, "warmup")));
		assert_true(json_is_null(json_object_get(r, "ordinal")));
		assert_int_equal(json_integer_value(json_object_get(r, "launch")), (json_int_t)(1 + 2 * i));
		assert_int_equal(json_integer_value(json_object_get(r, "step")), (json_int_t)i);
	}
	assert_true(json_is_true(json_object_get(json_array_get(json_object_get(sj, "processes"), 0), "warmup_only")));
	json_decref(sj);
	lp_ncu_sampled_outcome_release(&o);

	/* without stand-ins: the measured iteration's launches, no NVTX filter */
	sel.stand_ins = 0;
	snprintf(path, sizeof(path), "%s/calls", dir);
	remove(path);
	if (lp_ncu_sampled_run(&s, &o, &err) < 0)
		fail_msg("%s", err.msg);
	assert_false(o.plan.groups[0].picks_from_warmup);
	assert_string_equal(o.plan.procs[0].kernel_id.data, "::regex:^(k_gemv)$:^(8|10|12)$");
	assert_int_equal(count_lines(path, "--nvtx-include"), 0);
	/* the page's rows are taken for the expected launches (the measured steps' 8, 10, 12) */
	assert_int_equal(o.plan.groups[0].got, 3);
	assert_int_equal(o.plan.groups[0].got_warmup, 0);
	assert_int_equal(o.plan.groups[0].results[0].launch, 7);
	lp_ncu_sampled_outcome_release(&o);
	json_decref(p);
	lp_profile_release(&prof);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_warmup_stand_ins),
		cmocka_unit_test(test_run_and_cache),
		cmocka_unit_test(test_real_sampled_regions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
