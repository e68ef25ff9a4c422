/* plan.c: `llmprof run --dry-run` (see pipeline.h): the run folder, the workload, the tools and
 * each phase with the exact command line it would run (or why it would be skipped), as text; the
 * CLI prints it. Runs nothing and writes nothing. */
#include "run/pipeline.h"

#include <string.h>

#include "collect/ncu.h"
#include "collect/nsys.h"
#include "report/reports.h"
#include "run/pipeline_int.h"

static void add_cmd(struct lp_buf *out, const char *label, const struct lp_proc_spec *spec)
{
	struct lp_buf b = LP_BUF_INIT;
	lp_proc_render(spec, &b);
	lp_buf_addf(out, "  %s: %s", label, b.data);
	lp_buf_release(&b);
}

int lp_pipeline_plan(struct lp_pipeline *pl, struct lp_run *run, struct lp_buf *out, struct lp_err *err)
{
	struct lp_proc_env env[LP_PL_ENV_MAX];
	struct lp_proc_spec spec;
	const char *root = lp_pl_cfg_str(run, "artifacts.stage2_dir");
	const char *id = lp_pl_cfg_str(run, "run.id");
	const char *nsys_why = NULL, *ncu_why = NULL;
	int deep = !strcmp(run->mode, "deep");
	struct lp_buf ldpath = LP_BUF_INIT;
	size_t k;

	lp_buf_addf(out, "run folder: %s/%s\n", root ? root : "tmp/stage2", id ? id : "<YYYYmmdd-HHMMSS-xxxx>");
	lp_buf_addf(out, "mode: %s\n", run->mode);
	lp_buf_addf(out, "workload: %s%s\n", pl->reference ? "the reference model on " : "your command",
		pl->reference ? pl->device : "");
	lp_buf_addf(out, "%s\n", pl->outlook.what);
	lp_buf_addf(out, "tools: nsys %s, ncu %s, tracer %s, GPUs %d\n",
		pl->tools->nsys.found ? pl->tools->nsys.path : "not found",
		pl->tools->ncu.found ? pl->tools->ncu.path : "not found",
		pl->inject[0] ? pl->inject : "not found", pl->tools->n_gpus);
	lp_buf_addf(out, "phases:\n");
	lp_buf_addf(out, "  1 provenance: config.yaml, env.json, inputs.yaml, manifest.json\n");
	memset(&spec, 0, sizeof(spec));
	spec.argv = lp_argv_get(&pl->workload);
	spec.env = env;
	spec.n_env = lp_pl_capture_env(pl, "<run>/trace", env);
	spec.stdout_path = "<run>/trace/workload.stdout";
	spec.stderr_path = "<run>/logs/capture.stderr";
	add_cmd(out, "2 capture", &spec);
	if (!lp_pl_cfg_bool(run, "profiling.nsys.enable"))
		nsys_why = "not enabled (profiling.nsys.enable=true)";
	else if (!pl->tools->nsys.found || pl->tools->nsys.problem[0])
		nsys_why = "nsys is not usable here (exit 4)";
	if (nsys_why) {
		lp_buf_addf(out, "  3 nsys: skipped: %s\n", nsys_why);
	} else {
		struct lp_nsys_plan np;
		struct lp_argv av = LP_ARGV_INIT;
		int reg = 0;
		memset(&np, 0, sizeof(np));
		np.nsys = pl->tools->nsys.path;
		np.preset = lp_config_get(&run->cfg, "profiling.nsys");
		np.out_dir = "<run>/nsys";
		np.logs_dir = "<run>/logs";
		np.workload = lp_argv_get(&pl->workload);
		if (lp_nsys_profile_argv(&np, &av, &reg, err) < 0) {
			lp_argv_release(&av);
			return -1;
		}
		spec.argv = lp_argv_get(&av);
		spec.n_env = lp_pl_tool_env(pl, env);
		if (lp_pl_cfg_str(run, "tools.nsys_lib_dir")) {
			lp_tools_nsys_ld_path(lp_pl_cfg_str(run, "tools.nsys_lib_dir"), &ldpath);
			env[spec.n_env++] = (struct lp_proc_env){ "LD_LIBRARY_PATH", ldpath.data };
		}
		if (reg)
			env[spec.n_env++] = (struct lp_proc_env){ "NSYS_NVTX_PROFILER_REGISTER_ONLY", "0" };
		spec.stdout_path = spec.stderr_path = "<run>/logs/nsys.log";
		add_cmd(out, "3 nsys", &spec);
		lp_argv_release(&av);
		lp_buf_release(&ldpath);
	}
	lp_buf_addf(out, "  4 select: the top %lld kernels of stage '%s' from the capture\n",
		(long long)lp_pl_cfg_int(run, "run.top_n_kernels", 5), lp_pl_cfg_str(run, "run.stage") ? lp_pl_cfg_str(run, "run.stage") : "decode_all");
	if (!deep)
		ncu_why = "light mode";
	else if (!pl->gpu_run)
		ncu_why = "a CPU run records no kernels";
	else if (!pl->tools->ncu.found || pl->tools->ncu.problem[0])
		ncu_why = "ncu is not usable here (exit 4)";
	if (ncu_why) {
		lp_buf_addf(out, "  5 ncu: skipped: %s\n", ncu_why);
	} else {
		struct lp_ncu_plan cp;
		struct lp_argv av = LP_ARGV_INIT;
		memset(&cp, 0, sizeof(cp));
		cp.ncu = pl->tools->ncu.path;
		cp.preset = lp_config_get(&run->cfg, "profiling.ncu");
		cp.out_dir = "<run>/ncu";
		cp.logs_dir = "<run>/logs";
		cp.workload = lp_argv_get(&pl->workload);
		cp.kernel_filter = "regex:<top-N selection>";
		cp.filter_mode = "per-launch-config";
		if (lp_ncu_argv(&cp, &av, err) < 0) {
			lp_argv_release(&av);
			return -1;
		}
		spec.argv = lp_argv_get(&av);
		spec.n_env = lp_pl_tool_env(pl, env);
		spec.stdout_path = spec.stderr_path = "<run>/logs/ncu.log";
		add_cmd(out, "5 ncu", &spec);
		lp_argv_release(&av);
		if (lp_pl_cfg_int(run, "profiling.ncu.sample_per_group", 0) > 0) {
			const char *rm = lp_pl_cfg_str(run, "profiling.ncu.replay_mode");
			if (!rm || !strcmp(rm, "kernel"))
				lp_buf_addf(out, "    sampled instead (docs/ncu-sampling.md): %lld launches a group, groups up to %.0f%% "
					"of each region's kernel time, budget %.0f s; --kernel-id from the capture replaces the "
					"filters above\n", (long long)lp_pl_cfg_int(run, "profiling.ncu.sample_per_group", 0),
					100.0 * lp_pl_cfg_num(run, "profiling.ncu.coverage", 0.95),
					lp_pl_cfg_num(run, "profiling.ncu.budget_s", 0));
		}
	}
	lp_buf_addf(out, "  6 analysis + 7 reports:");
	for (k = 0; k < LP_REPORT_N_FILES; k++)
		lp_buf_addf(out, "%s %s", k ? "," : "", lp_report_files[k].name);
	lp_buf_addf(out, "\n");
	lp_buf_release(&ldpath);
	return out->oom ? lp_oom(err) : 0;
}
