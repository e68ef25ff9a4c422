/* phases.c: phases 2 to 4 of `llmprof run` (see pipeline.h): the capture of the workload under
 * our tracer (and the bandwidth probe before it), nsys, and the top-N selection of kernels for
 * ncu. Each phase records what it wrote in manifest.json and ends with its status. */
#include "run/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/nsys.h"
#include "collect/rundir.h"
#include "core/fs.h"
#include "core/proc.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"
#include "run/pipeline_int.h"

static int run_workload(struct lp_pl_state *st, const char *trace_dir, const char *out_rel, const char *err_rel,
	struct lp_proc_result *res, struct lp_err *err)
{
	struct lp_pipeline *pl = st->pl;
	struct lp_proc_env env[LP_PL_ENV_MAX];
	struct lp_proc_spec spec;
	struct lp_buf out = LP_BUF_INIT, errp = LP_BUF_INIT;
	size_t n_env = trace_dir ? lp_pl_capture_env(pl, trace_dir, env) : lp_pl_tool_env(pl, env);
	int rc;
	memset(&spec, 0, sizeof(spec));
	lp_rundir_path(&st->run->dir, out_rel, &out);
	lp_rundir_path(&st->run->dir, err_rel, &errp);
	spec.argv = lp_argv_get(&pl->workload);
	spec.env = env;
	spec.n_env = n_env;
	spec.stdout_path = out.data;
	spec.stderr_path = errp.data;
	spec.timeout_s = lp_pl_cfg_num(st->run, "run.timeout_s", 1800);
	spec.tick = lp_pl_tick;
	spec.tick_ctx = &(struct lp_pl_ticker){ st->sink, trace_dir ? "capture" : "untraced run", NULL, 0, 0 };
	rc = lp_proc_run(&spec, res, err);
	lp_pl_tick_end(st->sink, res->wall_s);
	if (rc == 0 && trace_dir) {
		struct lp_buf cmd = LP_BUF_INIT;
		struct lp_err werr = LP_ERR_INIT;
		lp_proc_render(&spec, &cmd);
		lp_pl_wrote(st, PH_CAPTURE, lp_rundir_write(&st->run->dir, "trace/cmd.txt", cmd.data, cmd.len, "capture", &werr),
			"trace/cmd.txt", &werr);
		lp_buf_release(&cmd);
	}
	lp_buf_release(&out);
	lp_buf_release(&errp);
	return rc;
}

/* A workload stopped before its first NVTX or CUDA call never loaded the tracer, so it left no
 * trace file. An empty trace (the preamble of docs/trace-format.md, no records: what the tracer
 * writes first) stands for it, under the name the tracer would have used, so that the run folder
 * stays readable (`llmprof report`, `llmprof kernels`) and says "nothing was recorded". */
static void empty_trace_if_none(struct lp_pl_state *st, const char *trace_dir, long pid)
{
	struct lp_trace_preamble pre;
	struct lp_buf name = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	char host[256] = "unknown", **files = NULL;
	size_t n = 0, i;
	if (lp_trace_list_files(trace_dir, &files, &n, &err) == 0)
		lp_trace_list_free(files, n);
	if (n)
		return;
	if (gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "unknown");
	for (i = 0; host[i]; i++)
		if (host[i] == '/')
			host[i] = '_';
	memset(&pre, 0, sizeof(pre));
	memcpy(pre.magic, LP_TRACE_MAGIC, sizeof(pre.magic));
	pre.version_major = LP_TRACE_VERSION_MAJOR;
	pre.version_minor = LP_TRACE_VERSION_MINOR;
	lp_buf_addf(&name, "trace/%s.%ld%s", host, pid, LP_TRACE_FILE_SUFFIX);
	if (lp_pl_wrote(st, PH_CAPTURE, lp_rundir_write(&st->run->dir, name.data, &pre, sizeof(pre), "capture", &err),
		    name.data, &err) == 0)
		lp_run_infof(st->sink, "the workload left no trace: wrote an empty one (%s)", name.data);
	lp_buf_release(&name);
}

/* run.probe_bandwidth=true on a GPU run: llmprof-probe measures the device-to-device copy bandwidth
 * into <run>/probe.json before the capture (the gap waterfall's floor at the measured peak). A
 * failed probe is a warning: the floor at the datasheet peak is still there. */
void lp_pl_probe_bandwidth(struct lp_pl_state *st)
{
	struct lp_pipeline *pl = st->pl;
	struct lp_buf exe = LP_BUF_INIT, out = LP_BUF_INIT, errp = LP_BUF_INIT;
	struct lp_proc_spec spec;
	struct lp_proc_result res;
	struct lp_err err = LP_ERR_INIT;
	const char *argv[2];
	if (!lp_pl_cfg_bool(st->run, "run.probe_bandwidth"))
		return;
	if (!pl->outlook.gpu_run) {
		lp_run_warnf(st->sink, "run.probe_bandwidth: not a GPU run, no bandwidth probe");
		return;
	}
	lp_buf_addf(&exe, "%s/llmprof-probe", pl->opts.exe_dir);
	argv[0] = exe.data;
	argv[1] = NULL;
	memset(&spec, 0, sizeof(spec));
	lp_rundir_path(&st->run->dir, "probe.json", &out);
	lp_rundir_path(&st->run->dir, "logs/probe.stderr", &errp);
	spec.argv = argv;
	spec.stdout_path = out.data;
	spec.stderr_path = errp.data;
	spec.timeout_s = 60;
	if (!lp_fs_is_file(exe.data))
		lp_run_warnf(st->sink, "run.probe_bandwidth: '%s' is missing (a build without CUDA)", exe.data);
	else if (lp_proc_run(&spec, &res, &err) < 0 || !res.exited || res.exit_code != 0)
		lp_run_warnf(st->sink, "run.probe_bandwidth: the probe failed (logs/probe.stderr)%s%s", err.msg[0] ? ": " : "", err.msg);
	lp_buf_release(&exe);
	lp_buf_release(&out);
	lp_buf_release(&errp);
}

void lp_pl_phase_capture(struct lp_pl_state *st)
{
	struct lp_proc_result res;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf trace = LP_BUF_INIT, why = LP_BUF_INIT;
	double t0;

	lp_pl_progress(st, PH_CAPTURE, st->pl->workload.v[0]);
	if (!st->pl->inject[0]) {
		lp_pl_set_phase(st, PH_CAPTURE, "failed", "the tracer library libllmprof_inject.so was not found next to llmprof (../lib)");
		st->pl->fail_kind = LP_EENV;
		goto out;
	}
	lp_rundir_path(&st->run->dir, "trace", &trace);
	lp_pl_abs_path(trace.data, &trace);
	t0 = lp_mono_s();
	if (run_workload(st, trace.data, "trace/workload.stdout", "logs/capture.stderr", &res, &err) < 0) {
		lp_pl_set_phase(st, PH_CAPTURE, "failed", "%s", err.msg);
		st->pl->fail_kind = err.kind == LP_EENV ? LP_EENV : LP_EPARTIAL;
		goto out;
	}
	st->traced_s = lp_mono_s() - t0;
	if (!res.exited || res.exit_code != 0)
		empty_trace_if_none(st, trace.data, res.pid);
	lp_pl_record_tree(st, "trace", PH_CAPTURE);
	lp_pl_record_tree(st, "auto", PH_CAPTURE);
	lp_pl_record_tree(st, "logs", PH_CAPTURE);
	if (!res.exited || res.exit_code != 0) {
		struct lp_proc_spec limit;
		memset(&limit, 0, sizeof(limit));
		limit.timeout_s = lp_pl_cfg_num(st->run, "run.timeout_s", 1800);
		lp_proc_describe(&res, &limit, &why);
		lp_pl_set_phase(st, PH_CAPTURE, "failed", "the workload %s%s%s (see logs/capture.stderr)",
			res.interrupted ? "was " : "", why.data, res.timed_out ? ": run.timeout_s" : "");
		st->pl->fail_kind = LP_EPARTIAL;
		goto out;
	}
	{
		char **files = NULL;
		size_t n_files = 0;
		if (lp_trace_list_files(trace.data, &files, &n_files, &err) == 0)
			lp_trace_list_free(files, n_files);
		if (!n_files) {
			lp_pl_set_phase(st, PH_CAPTURE, "failed", "the workload left no trace: it made no NVTX or CUDA "
				"calls the tracer could see (is it instrumented? see docs/nvtx.md)");
			st->pl->fail_kind = LP_EPARTIAL;
			goto out;
		}
	}
	lp_profile_init(&st->prof, trace.data);
	st->have_prof = 1;
	if (lp_trace_load(trace.data, &st->prof, &err) < 0) {
		lp_pl_set_phase(st, PH_CAPTURE, "failed", "%s", err.msg);
		st->pl->fail_kind = LP_EPARTIAL;
		goto out;
	}
	if (st->prof.n_ranges == 0 && st->prof.n_kernels == 0)
		lp_pl_set_phase(st, PH_CAPTURE, "ok", "the trace holds no NVTX ranges and no kernels (is the workload instrumented?)");
	else
		lp_pl_set_phase(st, PH_CAPTURE, "ok", NULL);
	if (lp_pl_cfg_bool(st->run, "run.measure_overhead")) {
		struct lp_proc_result r2;
		t0 = lp_mono_s();
		if (run_workload(st, NULL, "logs/untraced.stdout", "logs/untraced.stderr", &r2, &err) == 0 &&
		    r2.exited && r2.exit_code == 0)
			st->untraced_s = lp_mono_s() - t0;
		lp_buf_reset(&trace);
		lp_rundir_path(&st->run->dir, "logs/untraced.stdout", &trace);
		if (lp_fs_is_file(trace.data)) {   /* the untraced run may not have started */
			lp_err_clear(&err);
			lp_pl_wrote(st, PH_CAPTURE, lp_rundir_record(&st->run->dir, "logs/untraced.stdout", "capture", &err),
				"logs/untraced.stdout", &err);
		}
	}
out:
	lp_buf_release(&trace);
	lp_buf_release(&why);
	lp_pl_save_phases(st);
}

void lp_pl_phase_nsys(struct lp_pl_state *st)
{
	struct lp_pipeline *pl = st->pl;
	struct lp_nsys_plan plan;
	struct lp_nsys_outcome oc;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf out = LP_BUF_INIT, logs = LP_BUF_INIT, ldpath = LP_BUF_INIT;
	struct lp_proc_env env[LP_PL_ENV_MAX];
	size_t n_env = lp_pl_tool_env(pl, env);
	const char *libdir = lp_pl_cfg_str(st->run, "tools.nsys_lib_dir");

	if (!lp_pl_cfg_bool(st->run, "profiling.nsys.enable")) {
		lp_pl_set_phase(st, PH_NSYS, "skipped", "not enabled (profiling.nsys.enable=true turns it on)");
		goto out;
	}
	if (!pl->tools->nsys.found || pl->tools->nsys.problem[0]) {
		lp_pl_set_phase(st, PH_NSYS, "skipped", "nsys is not usable here: %s",
			pl->tools->nsys.problem[0] ? pl->tools->nsys.problem : "not found");
		pl->fail_kind = pl->fail_kind ? pl->fail_kind : LP_EENV;
		goto out;
	}
	lp_pl_progress(st, PH_NSYS, pl->tools->nsys.path);
	if (libdir) {
		lp_tools_nsys_ld_path(libdir, &ldpath);  /* where `llmprof check` looked for the importer */
		env[n_env++] = (struct lp_proc_env){ "LD_LIBRARY_PATH", ldpath.data };
	}
	memset(&plan, 0, sizeof(plan));
	lp_rundir_path(&st->run->dir, "nsys", &out);
	lp_rundir_path(&st->run->dir, "logs", &logs);
	plan.nsys = pl->tools->nsys.path;
	plan.preset = lp_config_get(&st->run->cfg, "profiling.nsys");
	plan.out_dir = out.data;
	plan.logs_dir = logs.data;
	plan.workload = lp_argv_get(&pl->workload);
	plan.env = env;
	plan.n_env = n_env;
	plan.timeout_s = lp_pl_cfg_num(st->run, "run.timeout_s", 1800);
	plan.tick = lp_pl_tick;
	plan.tick_ctx = &(struct lp_pl_ticker){ st->sink, "nsys", NULL, 0, 0 };
	memset(&oc, 0, sizeof(oc));
	if (lp_nsys_run(&plan, &oc, &err) < 0) {
		lp_pl_set_phase(st, PH_NSYS, "failed", "%s", err.msg);
		pl->fail_kind = err.kind == LP_EENV ? LP_EENV : (pl->fail_kind ? pl->fail_kind : LP_EPARTIAL);
	} else {
		lp_pl_set_phase(st, PH_NSYS, "ok", NULL);
	}
	lp_pl_record_tree(st, "nsys", PH_NSYS);
	lp_pl_record_tree(st, "logs", PH_NSYS);
out:
	lp_buf_release(&out);
	lp_buf_release(&logs);
	lp_buf_release(&ldpath);
	lp_pl_save_phases(st);
}

void lp_pl_phase_select(struct lp_pl_state *st)
{
	struct lp_topn_opts o;
	struct lp_err err = LP_ERR_INIT;
	char fallback[160] = "";
	json_t *sel;
	char *text;
	size_t i;

	if (!st->have_prof) {
		lp_pl_set_phase(st, PH_SELECT, "skipped", "no capture to select from");
		goto out;
	}
	if (st->prof.n_kernels == 0) {
		lp_pl_set_phase(st, PH_SELECT, "skipped", "no GPU kernels were recorded (a CPU run)");
		goto out;
	}
	memset(&o, 0, sizeof(o));
	o.n = (size_t)lp_pl_cfg_int(st->run, "run.top_n_kernels", 5);
	o.stage = lp_pl_cfg_str(st->run, "run.stage");
	o.exclude_warmup = 1;
	/* by function name: CUPTI's and ncu's demanglers format parameter lists differently
	 * ("unsigned short const*" / "const unsigned short *"), so a regex on whole demangled
	 * signatures misses C++ kernels; the ncu phase passes --kernel-name-base function to match */
	o.name_base = "function";
	o.launch_count = (long)lp_pl_cfg_int(st->run, "profiling.ncu.launch_count", 1);
	if (lp_topn_from_profile(&st->prof, &o, &st->topn, &err) < 0 || !st->topn.n_picks) {
		/* the stage ran no kernels (a workload without it, or one that runs it elsewhere):
		 * select from the whole measured run instead, and say so */
		lp_topn_release(&st->topn);  /* empty, or zeroed by the failed call */
		snprintf(fallback, sizeof(fallback), "stage '%s' ran no kernels: selected from the whole run",
			o.stage ? o.stage : "decode_all");
		o.stage = "";
		lp_err_clear(&err);
		if (lp_topn_from_profile(&st->prof, &o, &st->topn, &err) < 0) {
			lp_pl_set_phase(st, PH_SELECT, "failed", "%s", err.msg);
			st->pl->fail_kind = st->pl->fail_kind ? st->pl->fail_kind : LP_EPARTIAL;
			goto out;
		}
	}
	st->have_topn = 1;
	sel = json_object();
	json_object_set_new(sel, "stage", json_string(o.stage ? o.stage : "decode_all"));
	json_object_set_new(sel, "note", json_string(fallback));
	json_object_set_new(sel, "stage_total_ms", json_real(st->topn.stage_total_ms));
	json_object_set_new(sel, "candidates", json_integer((json_int_t)st->topn.n_candidates));
	json_object_set_new(sel, "kernel_filter", st->topn.regex ? json_string(st->topn.regex) : json_null());
	json_object_set_new(sel, "launch_count", json_integer(st->topn.launch_count));
	{
		json_t *arr = json_array();
		for (i = 0; i < st->topn.n_picks; i++) {
			const struct lp_topn_pick *p = &st->topn.picks[i];
			json_t *o2 = json_object();
			json_object_set_new(o2, "kernel_name", json_string(p->kernel_name));
			json_object_set_new(o2, "match_name", json_string(p->match_name));
			json_object_set_new(o2, "total_ms", json_real(p->total_ms));
			json_object_set_new(o2, "calls", json_integer((json_int_t)p->calls));
			json_object_set_new(o2, "share", json_real(p->share));
			json_array_append_new(arr, o2);
		}
		json_object_set_new(sel, "selected", arr);
	}
	text = json_dumps(sel, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	json_decref(sel);
	if (!text || lp_rundir_write(&st->run->dir, "ncu/selection.json", text, strlen(text), "select", &err) < 0)
		lp_pl_set_phase(st, PH_SELECT, "failed", "%s", text ? err.msg : "out of memory");
	else if (fallback[0])
		lp_pl_set_phase(st, PH_SELECT, "ok", "%s", fallback);
	else
		lp_pl_set_phase(st, PH_SELECT, "ok", NULL);
	free(text);
out:
	lp_pl_save_phases(st);
}

/* Distinct domain@name of the ranges the capture saw, for the "profiled nothing" message. */