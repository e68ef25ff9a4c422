/* workload.c: what `llmprof run` runs (see pipeline.h): the reference model's argv (with the
 * inputs and, for model.* overrides, the shape it must run) or the command after `--`; the model
 * shape the analysis reads; run.auto_stages; the tools found; and the environments the capture
 * and the tools get. Nothing runs here: errors are usage (2) or environment (4) errors. */
#include "run/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/llm_model.h"
#include "core/fs.h"
#include "run/pipeline_int.h"

/* Does some override's key (past its +, ++ or ~) satisfy `pred`? */
static int some_override(const struct lp_run *run, int (*pred)(const char *key))
{
	const json_t *o;
	size_t i;
	json_array_foreach(run->cfg.overrides, i, o) {
		const char *s = json_string_value(o);
		if (!s)
			continue;
		while (*s == '+' || *s == '~')
			s++;
		if (pred(s))
			return 1;
	}
	return 0;
}

/* model.hidden_size=256: a model.* key beyond choosing the model (model.hf_config) */
static int is_shape_key(const char *s)
{
	return !strncmp(s, "model.", 6) && strncmp(s, "model.hf_config", 15) != 0;
}

/* model=..., model.x=..., +model.x=... */
static int is_model_key(const char *s)
{
	return !strncmp(s, "model", 5) && (s[5] == '=' || s[5] == '.');
}

/* Did an override change a model.* key (model.hidden_size=256), beyond choosing the model? */
static int shape_overridden(const struct lp_run *run)
{
	return some_override(run, is_shape_key);
}

/* The reference workload runs the shape the analysis reads: with model.* overrides the
 * composed model object is written to <run>/model.json and given as --model PATH (the workload
 * reads model YAML/JSON files), instead of the unchanged preset's name. `arg` gets the path. */
static int write_model_shape(struct lp_run *run, int dry_run, struct lp_buf *arg, struct lp_err *err)
{
	const json_t *m = lp_config_get(&run->cfg, "model");
	struct lp_llm_config mc;
	char *text;
	int rc;
	if (lp_llm_config_from_json(m, "model", &mc, err) < 0 || lp_llm_config_validate(&mc, "model", err) < 0) {
		err->kind = LP_EUSAGE;
		return lp_err_prefix(err, "the model.* overrides do not give a shape the reference workload can run");
	}
	if (dry_run)
		return lp_buf_adds(arg, "<run>/model.json");
	text = json_dumps(m, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
	if (!text)
		return lp_oom(err);
	rc = lp_rundir_write(&run->dir, "model.json", text, strlen(text), "provenance", err);
	free(text);
	if (rc < 0)
		return -1;
	lp_rundir_path(&run->dir, "model.json", arg);
	lp_pl_abs_path(arg->data, arg);
	return 0;
}

static int resolve_reference(struct lp_pipeline *pl, struct lp_run *run, struct lp_err *err)
{
	struct lp_buf exe = LP_BUF_INIT, ovr = LP_BUF_INIT, shape = LP_BUF_INIT;
	static const char *const token_keys[][2] = {
		{ "inputs.batch", "1" }, { "inputs.prompt_len", "64" }, { "inputs.new_tokens", "32" },
	};
	const char *hf, *model, *device;
	size_t i;
	int rc = -1;

	/* the token counts are part of the run's inputs: unset ones get the workload's defaults and
	 * are written back so that config.yaml (and the analysis) knows them. lp_config_apply
	 * rebuilds the tree, so borrowed strings are read only after this loop. */
	for (i = 0; i < sizeof(token_keys) / sizeof(token_keys[0]); i++) {
		if (json_is_integer(lp_config_get(&run->cfg, token_keys[i][0])))
			continue;
		lp_buf_reset(&ovr);
		lp_buf_addf(&ovr, "%s=%s", token_keys[i][0], token_keys[i][1]);
		if (lp_config_apply(&run->cfg, ovr.data, err) < 0)
			goto out;
	}
	run->mode = lp_pl_cfg_str(run, "run.mode");
	hf = lp_pl_cfg_str(run, "model.hf_config");
	model = hf ? hf : lp_config_choice(&run->cfg, "model");
	device = lp_pl_cfg_str(run, "run.device");
	lp_buf_addf(&exe, "%s/llmprof-llm", pl->opts.exe_dir);
	if (!lp_fs_is_file(exe.data)) {
		lp_err_set(err, LP_EENV, "the reference workload '%s' is missing", exe.data);
		lp_err_hint(err, "build it with 'make', or give a workload after '--'");
		goto out;
	}
	if (!model) {
		lp_err_set(err, LP_EUSAGE, "no model chosen for the reference workload");
		lp_err_hint(err, "pick one with model=<name> (conf/model/llm/) or model.hf_config=PATH");
		goto out;
	}
	if (device && !strcmp(device, "cuda") && !pl->outlook.gpu_run) {
		lp_err_set(err, LP_EENV, "run.device=cuda, but the GPU cannot be used: %s", pl->outlook.cpu_why);
		lp_err_hint(err, "run.device=auto runs the reference model on the CPU here");
		goto out;
	}
	if (!device || !strcmp(device, "auto"))
		device = pl->outlook.gpu_run ? "cuda" : "cpu";  /* lp_tools_outlook decided it */
	snprintf(pl->device, sizeof(pl->device), "%s", device);
	pl->gpu_run = !strcmp(device, "cuda");
	if (!hf && shape_overridden(run)) {
		if (write_model_shape(run, pl->opts.dry_run, &shape, err) < 0)
			goto out;
		model = shape.data;
	}
	lp_argv_add(&pl->workload, exe.data);
	lp_argv_add(&pl->workload, "--model");
	lp_argv_add(&pl->workload, model);
	lp_argv_add(&pl->workload, "--device");
	lp_argv_add(&pl->workload, device);
	lp_argv_addf(&pl->workload, "--batch=%lld", (long long)lp_pl_cfg_int(run, "inputs.batch", 1));
	lp_argv_addf(&pl->workload, "--prompt-len=%lld", (long long)lp_pl_cfg_int(run, "inputs.prompt_len", 64));
	lp_argv_addf(&pl->workload, "--new-tokens=%lld", (long long)lp_pl_cfg_int(run, "inputs.new_tokens", 32));
	lp_argv_addf(&pl->workload, "--iters=%lld", (long long)lp_pl_cfg_int(run, "run.repeats", 3));
	lp_argv_addf(&pl->workload, "--warmup=%lld", (long long)lp_pl_cfg_int(run, "run.warmup", 1));
	/* the CPU path computes in fp32 whatever the preset's dtype (bf16 is the CUDA path's): the
	 * analysis counts bytes by the model's dtype, so config.yaml says what ran. lp_config_apply
	 * rebuilds the tree: nothing borrowed from it is used after this but run->mode, read again. */
	if (!strcmp(pl->device, "cpu") && json_is_object(lp_config_get(&run->cfg, "model")) &&
	    (!lp_pl_cfg_str(run, "model.dtype") || strcmp(lp_pl_cfg_str(run, "model.dtype"), "fp32"))) {
		if (lp_config_apply(&run->cfg, lp_pl_cfg_str(run, "model.dtype") ? "model.dtype=fp32" : "+model.dtype=fp32",
			    err) < 0)
			goto out;
		run->mode = lp_pl_cfg_str(run, "run.mode");
	}
	pl->reference = 1;
	rc = 0;
out:
	lp_buf_release(&exe);
	lp_buf_release(&ovr);
	lp_buf_release(&shape);
	return rc;
}

/* Did the user choose the model (model=..., model.x=..., +model.x=...)? */
static int model_chosen(const struct lp_run *run)
{
	return some_override(run, is_model_key);
}

/* The model shape the analysis reads (model.*): from model.hf_config when given (mapped like the
 * reference workload maps it); for a workload after `--` whose model was not chosen, removed, so
 * that MFU/MBU say "n/a (model unknown)" instead of using the default model's shape. */
static int resolve_model(struct lp_run *run, struct lp_err *err)
{
	const char *hf = lp_pl_cfg_str(run, "model.hf_config");
	struct lp_llm_config mc;
	struct lp_buf ovr = LP_BUF_INIT, path = LP_BUF_INIT;
	json_t *fields;
	const char *key;
	json_t *v;
	int rc = 0;

	if (!hf) {
		if (run->workload_argc && !model_chosen(run))
			json_object_set_new(run->cfg.root, "model", json_null());
		return 0;
	}
	lp_buf_adds(&path, hf);  /* the tree changes under `hf` below */
	if (lp_llm_config_load(path.data, run->cfg.conf_dir, &mc, err) < 0) {
		lp_err_prefix(err, "model.hf_config");
		lp_buf_release(&path);
		return -1;
	}
	fields = lp_llm_config_to_json(&mc);
	json_object_foreach(fields, key, v) {
		char *val = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
		lp_buf_reset(&ovr);
		lp_buf_addf(&ovr, "++model.%s=%s", key, val ? val : "null");
		free(val);
		if ((rc = lp_config_apply(&run->cfg, ovr.data, err)) < 0)
			break;
	}
	json_decref(fields);
	lp_buf_release(&ovr);
	lp_buf_release(&path);
	return rc;
}

/* run.auto_stages (docs/nvtx.md "Programs you did not write for llmprof"): the shim's site folder
 * goes first on the workload's PYTHONPATH (its sitecustomize runs any sitecustomize found later on
 * the path), and LLMPROF_AUTO_DIR tells it where to write the program's account. Only Python
 * reads either, so any workload after `--` gets them (a shell script that starts Python too). */
/* stages.hooks (validated by the schema) for the shim, one entry a line: LLMPROF_AUTO_HOOKS. */
static void auto_hooks_init(struct lp_pipeline *pl, struct lp_run *run)
{
	const json_t *v = lp_config_get(&run->cfg, "stages.hooks"), *x;
	size_t i, n = 0;
	json_array_foreach(v, i, x) {
		const char *s = json_string_value(x);
		int w;
		if (!s)
			continue;
		w = snprintf(pl->auto_hooks + n, sizeof(pl->auto_hooks) - n, "%s%s", n ? "\n" : "", s);
		if (w < 0 || (size_t)w >= sizeof(pl->auto_hooks) - n) {
			pl->auto_hooks[n] = '\0';
			lp_run_warnf(pl->opts.sink, "stages.hooks: more than %zu characters in all: hooks from '%s' on left out", sizeof(pl->auto_hooks), s);
			break;
		}
		n += (size_t)w;
	}
}

static void auto_stages_init(struct lp_pipeline *pl, struct lp_run *run)
{
	static const char *const rel[] = { "../../python/llmprof_auto/site", "../share/llmprof/python/llmprof_auto/site",
					   "../python/llmprof_auto/site" };
	struct lp_buf site = LP_BUF_INIT, dir = LP_BUF_INIT;
	const char *old = getenv("PYTHONPATH");
	size_t i;
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		lp_buf_reset(&site);
		lp_buf_addf(&site, "%s/%s/sitecustomize.py", pl->opts.exe_dir, rel[i]);
		if (lp_fs_is_file(site.data))
			break;
	}
	if (i == sizeof(rel) / sizeof(rel[0])) {
		lp_run_warnf(pl->opts.sink, "run.auto_stages: python/llmprof_auto was not found next to llmprof: no automatic stages");
	} else {
		lp_buf_reset(&site);
		lp_buf_addf(&site, "%s/%s", pl->opts.exe_dir, rel[i]);
		lp_pl_abs_path(site.data, &site);
		lp_buf_adds(&dir, run->dir.path ? run->dir.path : "<run>");   /* no folder on --dry-run */
		lp_pl_abs_path(dir.data, &dir);
		lp_buf_adds(&dir, "/auto");
		snprintf(pl->auto_pythonpath, sizeof(pl->auto_pythonpath), "%s%s%s", site.data, old && *old ? ":" : "",
			old ? old : "");
		snprintf(pl->auto_dir, sizeof(pl->auto_dir), "%s", dir.data);
		pl->auto_ops = lp_pl_cfg_bool(run, "run.auto_ops");
		snprintf(pl->auto_warmup, sizeof(pl->auto_warmup), "%lld", (long long)lp_pl_cfg_int(run, "run.auto_warmup", 0));
		auto_hooks_init(pl, run);
	}
	lp_buf_release(&site);
	lp_buf_release(&dir);
}

/* A workload after `--` that cannot be started is a mistake on the command line (exit 2, before
 * anything runs), not a missing tool: name the program. A name without '/' is looked up on PATH,
 * as execvp does. */
/* trace.sample and trace.warmup for the capture (docs/tracer.md "Sampled tracing", "The warm-up").
 * Deep mode plans Nsight Compute from the capture's launch numbers, which only a trace of every
 * launch has, the warm-up's included: there `auto` (the default) traces every launch and the
 * warm-up is recorded unless trace.warmup says otherwise; an explicit `every=N` or warm-up mode is
 * kept (the ncu phase then runs unsampled, and says so). */
static void resolve_trace_sample(struct lp_pipeline *pl, struct lp_run *run)
{
	const char *ts = lp_pl_cfg_str(run, "trace.sample");
	int deep = run->mode && !strcmp(run->mode, "deep");
	if (!ts || !*ts)
		ts = "auto";
	if (deep && !strncmp(ts, "auto", 4)) {
		lp_run_infof(pl->opts.sink, "trace.sample=%s: exact tracing in deep mode (Nsight Compute's sampling "
			"numbers every launch of the capture)", ts);
		ts = "off";
	}
	snprintf(pl->trace_sample, sizeof(pl->trace_sample), "%s", ts);
	ts = lp_pl_cfg_str(run, "trace.warmup");
	snprintf(pl->trace_warmup, sizeof(pl->trace_warmup), "%s", ts && *ts ? ts : deep ? "record" : "graphs");
}

static int check_workload(const char *prog, struct lp_err *err)
{
	struct lp_buf found = LP_BUF_INIT;
	int ok;
	if (strchr(prog, '/')) {
		ok = access(prog, X_OK) == 0 && !lp_fs_is_dir(prog);
		if (!ok && access(prog, F_OK) == 0) {
			lp_err_set(err, LP_EUSAGE, "the workload '%s' is not an executable file", prog);
			return lp_err_hint(err, "make it executable (chmod +x), or name its interpreter first: "
				"'-- python3 %s'", prog);
		}
	} else {
		ok = lp_fs_which(prog, &found) == 0;
	}
	lp_buf_release(&found);
	if (ok)
		return 0;
	lp_err_set(err, LP_EUSAGE, "the workload '%s' was not found%s", prog, strchr(prog, '/') ? "" : " on PATH");
	return lp_err_hint(err, "check the program named after '--' (a relative path starts from the current folder)");
}

int lp_pipeline_init(struct lp_pipeline *pl, struct lp_run *run, const struct lp_pipeline_opts *o,
	struct lp_err *err)
{
	struct lp_tools_opts to;
	struct lp_buf lib = LP_BUF_INIT;
	size_t i;

	memset(pl, 0, sizeof(*pl));
	pl->opts = *o;
	pl->tools = calloc(1, sizeof(*pl->tools));
	if (!pl->tools)
		return lp_oom(err);
	memset(&to, 0, sizeof(to));
	to.nsys_path = lp_pl_cfg_str(run, "tools.nsys");
	to.ncu_path = lp_pl_cfg_str(run, "tools.ncu");
	to.nsys_lib_dir = lp_pl_cfg_str(run, "tools.nsys_lib_dir");
	to.exe_dir = o->exe_dir;
	to.probe_versions = 1;
	lp_tools_detect(&to, pl->tools);

	lp_buf_addf(&lib, "%s/../lib/libllmprof_inject.so", o->exe_dir);
	if (lp_fs_is_file(lib.data)) {
		struct lp_buf a = LP_BUF_INIT;
		lp_pl_abs_path(lib.data, &a);
		snprintf(pl->inject, sizeof(pl->inject), "%s", a.data);
		lp_buf_release(&a);
	}
	lp_buf_release(&lib);

	if (resolve_model(run, err) < 0)
		return -1;
	run->mode = lp_pl_cfg_str(run, "run.mode");
	resolve_trace_sample(pl, run);
	lp_tools_outlook(pl->tools, run->mode, lp_pl_cfg_str(run, "run.device"), lp_pl_cfg_bool(run, "profiling.nsys.enable"),
		!run->workload_argc, &pl->outlook);
	if (!run->workload_argc)
		return resolve_reference(pl, run, err);
	if (check_workload(run->workload_argv[0], err) < 0)
		return -1;
	for (i = 0; i < run->workload_argc; i++)
		lp_argv_add(&pl->workload, run->workload_argv[i]);
	pl->gpu_run = pl->outlook.gpu_run;
	if (lp_pl_cfg_bool(run, "run.auto_stages"))
		auto_stages_init(pl, run);
	return 0;
}

void lp_pipeline_release(struct lp_pipeline *pl)
{
	lp_argv_release(&pl->workload);
	free(pl->tools);
	memset(pl, 0, sizeof(*pl));
}

/* ---- the environments of the children ---- */

/* NVLink multicast off, where our own environment does not say otherwise (pipeline_int.h). */
static size_t multicast_off(struct lp_proc_env *env, size_t n)
{
	static const char *const vars[][2] = {
		{ "NCCL_NVLS_ENABLE", "0" }, { "TORCH_SYMM_MEM_DISABLE_MULTICAST", "1" }, { "NVSHMEM_DISABLE_NVLS", "1" },
	};
	size_t i;
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (!getenv(vars[i][0]))
			env[n++] = (struct lp_proc_env){ vars[i][0], vars[i][1] };
	return n;
}

/* The Python shim's variables (run.auto_stages) after env[0..n): its site first on PYTHONPATH, the
 * account's folder when `dir` (the capture writes the account), run.auto_ops, run.auto_warmup and
 * stages.hooks; nothing when the shim is off. Returns the new count. */
static size_t shim_env(const struct lp_pipeline *pl, const char *dir, struct lp_proc_env *env, size_t n)
{
	if (!pl->auto_pythonpath[0])
		return n;
	env[n++] = (struct lp_proc_env){ "PYTHONPATH", pl->auto_pythonpath };
	if (dir)
		env[n++] = (struct lp_proc_env){ "LLMPROF_AUTO_DIR", dir };
	env[n++] = (struct lp_proc_env){ "LLMPROF_AUTO_OPS", pl->auto_ops ? "1" : "0" };
	env[n++] = (struct lp_proc_env){ "LLMPROF_AUTO_WARMUP", pl->auto_warmup };
	env[n++] = (struct lp_proc_env){ "LLMPROF_AUTO_HOOKS", pl->auto_hooks[0] ? pl->auto_hooks : NULL };
	return n;
}

size_t lp_pl_capture_env(const struct lp_pipeline *pl, const char *trace_dir, struct lp_proc_env *env)
{
	size_t n = 0;
	env[n++] = (struct lp_proc_env){ "CUDA_INJECTION64_PATH", pl->inject };
	env[n++] = (struct lp_proc_env){ "NVTX_INJECTION64_PATH", pl->inject };
	env[n++] = (struct lp_proc_env){ "LLMPROF_TRACE_DIR", trace_dir };
	env[n++] = (struct lp_proc_env){ "LLMPROF_TRACE_SAMPLE", pl->trace_sample[0] ? pl->trace_sample : "auto" };
	env[n++] = (struct lp_proc_env){ "LLMPROF_TRACE_WARMUP", pl->trace_warmup[0] ? pl->trace_warmup : "graphs" };
	n = shim_env(pl, pl->auto_dir, env, n);
	return multicast_off(env, n);
}

/* The tools must not see our tracer: nsys and ncu hold the CUPTI slot themselves. The shim's
 * ranges stay (ncu's NVTX filters need them); its account is written by the capture only. */
size_t lp_pl_tool_env(const struct lp_pipeline *pl, struct lp_proc_env *env)
{
	size_t n = 0;
	env[n++] = (struct lp_proc_env){ "CUDA_INJECTION64_PATH", NULL };
	env[n++] = (struct lp_proc_env){ "NVTX_INJECTION64_PATH", NULL };
	n = shim_env(pl, NULL, env, n);
	return multicast_off(env, n);
}
