/* pipeline.c: the phases of `llmprof run` (see pipeline.h). This is where run -> collect ->
 * parse -> analyze -> report is strung together: each phase leaves its artifacts in the run
 * folder, records them in manifest.json and its status in phases.json before the next starts. */
#include "collect/pipeline.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analysis.h"
#include "analyze/topn.h"
#include "collect/ncu.h"
#include "collect/nsys.h"
#include "collect/regions_args.h"
#include "config/llm_model.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/str.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"
#include "report/rebuild.h"
#include "report/regions_report.h"
#include "report/reports.h"

enum { PH_PROVENANCE, PH_CAPTURE, PH_NSYS, PH_SELECT, PH_NCU, PH_ANALYSIS, PH_REPORTS, PH_COUNT };
static const char *const phase_names[PH_COUNT] = {
	"provenance", "capture", "nsys", "select", "ncu", "analysis", "reports",
};

struct state {
	struct lp_pipeline *pl;
	struct lp_run *run;
	struct lp_phase_status ph[PH_COUNT];
	double traced_s, untraced_s;
	struct lp_profile prof;
	int have_prof;
	struct lp_topn topn;
	int have_topn;
};

/* ---- small helpers ---- */

static const char *cfg_str(const struct lp_run *run, const char *key)
{
	const json_t *v = lp_config_get(&run->cfg, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int64_t cfg_int(const struct lp_run *run, const char *key, int64_t dflt)
{
	const json_t *v = lp_config_get(&run->cfg, key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

static double cfg_num(const struct lp_run *run, const char *key, double dflt)
{
	const json_t *v = lp_config_get(&run->cfg, key);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

static int cfg_bool(const struct lp_run *run, const char *key)
{
	return json_is_true(lp_config_get(&run->cfg, key));
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void set_phase(struct state *st, int ph, const char *status, const char *fmt, ...) LP_PRINTF(4, 5);

static void set_phase(struct state *st, int ph, const char *status, const char *fmt, ...)
{
	struct lp_phase_status *p = &st->ph[ph];
	snprintf(p->status, sizeof(p->status), "%s", status);
	p->reason[0] = '\0';
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
		va_end(ap);
	}
	if (!strcmp(status, "ok"))
		lp_log_debug("phase %s: ok", phase_names[ph]);
	else
		lp_log_info("phase %s: %s%s%s", phase_names[ph], status, p->reason[0] ? ": " : "", p->reason);
}

static void save_phases(struct state *st)
{
	struct lp_err err = LP_ERR_INIT;
	size_t n = 0;
	while (n < PH_COUNT && st->ph[n].status[0])
		n++;
	if (lp_phases_write(st->run->dir.path, st->ph, n, st->traced_s, st->untraced_s, &err) < 0)
		lp_log_warn("%s", err.msg);
	else
		lp_rundir_record(&st->run->dir, "phases.json", phase_names[PH_ANALYSIS], NULL);
}

static void progress(int ph, const char *what)
{
	lp_log_info("[%d/%d] %s: %s", ph + 1, PH_COUNT, phase_names[ph], what);
}

/* Once a second while a child runs, on a terminal only: the phase, its elapsed time and, for
 * ncu, how many kernels it has profiled so far (its "==PROF== Profiling" log lines). */
struct ticker {
	const char *phase;
	const char *log_path;   /* NULL: no count */
	long read_bytes;        /* how much of the log was counted already (complete lines) */
	size_t profiled;
};

/* Counts the "==PROF== Profiling" lines ncu appended since the last tick. */
static void count_new_lines(struct ticker *t)
{
	char chunk[65536];
	FILE *f = fopen(t->log_path, "r");
	size_t n;
	if (!f)
		return;
	if (fseek(f, t->read_bytes, SEEK_SET) == 0) {
		while ((n = fread(chunk, 1, sizeof(chunk) - 1, f)) > 0) {
			char *end, *p;
			chunk[n] = '\0';
			end = strrchr(chunk, '\n');
			if (!end && n < sizeof(chunk) - 1)
				break;   /* a line still being written: next tick */
			if (!end)
				end = chunk + n - 1;   /* one line longer than the chunk: take it as it is */
			end[1] = '\0';
			for (p = chunk; (p = strstr(p, "==PROF== Profiling")) != NULL; p++)
				t->profiled++;
			t->read_bytes += (long)(end + 1 - chunk);
			if (fseek(f, t->read_bytes, SEEK_SET) != 0)
				break;
		}
	}
	fclose(f);
}

static void tick(void *ctx, double elapsed_s)
{
	struct ticker *t = ctx;
	if (!lp_log_progress_enabled())
		return;
	if (t->log_path) {
		count_new_lines(t);
		fprintf(stderr, "\r  %s: %.0f s, %zu kernels profiled   ", t->phase, elapsed_s, t->profiled);
	} else {
		fprintf(stderr, "\r  %s: %.0f s   ", t->phase, elapsed_s);
	}
	fflush(stderr);
}

/* Records every file under run/<sub> (recursively) that the manifest does not list yet, under
 * `phase` (the logs/ folder is shared: a log keeps the phase that first wrote it). */
static void record_tree(struct lp_rundir *rd, const char *sub, const char *phase)
{
	struct lp_buf dir = LP_BUF_INIT, rel = LP_BUF_INIT;
	struct dirent **names = NULL;
	int n, i;
	lp_rundir_path(rd, sub, &dir);
	n = scandir(dir.data, &names, NULL, alphasort);
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		struct lp_buf full = LP_BUF_INIT;
		if (name[0] != '.' && !strstr(name, ".tmp.")) {
			lp_buf_reset(&rel);
			lp_buf_addf(&rel, "%s/%s", sub, name);
			lp_fs_join(&full, dir.data, name);
			if (lp_fs_is_dir(full.data))
				record_tree(rd, rel.data, phase);
			else if (lp_fs_is_file(full.data) && !lp_rundir_has(rd, rel.data))
				lp_rundir_record(rd, rel.data, phase, NULL);
		}
		lp_buf_release(&full);
		free(names[i]);
	}
	free(names);
	lp_buf_release(&dir);
	lp_buf_release(&rel);
}

/* `path` made absolute into `out` (which may hold `path` itself). */
static int abs_path(const char *path, struct lp_buf *out)
{
	char real[PATH_MAX];
	if (!realpath(path, real))
		return 0;  /* keep it as given */
	lp_buf_reset(out);
	return lp_buf_adds(out, real);
}

/* ---- resolving the workload ---- */

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
		err->status = LP_EUSAGE;
		return lp_err_prefix(err, "the model.* overrides do not give a shape the reference workload can run");
	}
	if (dry_run)
		return lp_buf_adds(arg, "<run>/model.json");
	text = json_dumps(m, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
	if (!text)
		return lp_err_set(err, LP_EOTHER, "out of memory");
	rc = lp_rundir_write(&run->dir, "model.json", text, strlen(text), "provenance", err);
	free(text);
	if (rc < 0)
		return -1;
	lp_rundir_path(&run->dir, "model.json", arg);
	abs_path(arg->data, arg);
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
	run->mode = cfg_str(run, "run.mode");
	hf = cfg_str(run, "model.hf_config");
	model = hf ? hf : lp_config_choice(&run->cfg, "model");
	device = cfg_str(run, "run.device");
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
	lp_argv_addf(&pl->workload, "--batch=%lld", (long long)cfg_int(run, "inputs.batch", 1));
	lp_argv_addf(&pl->workload, "--prompt-len=%lld", (long long)cfg_int(run, "inputs.prompt_len", 64));
	lp_argv_addf(&pl->workload, "--new-tokens=%lld", (long long)cfg_int(run, "inputs.new_tokens", 32));
	lp_argv_addf(&pl->workload, "--iters=%lld", (long long)cfg_int(run, "run.repeats", 3));
	lp_argv_addf(&pl->workload, "--warmup=%lld", (long long)cfg_int(run, "run.warmup", 1));
	/* the CPU path computes in fp32 whatever the preset's dtype (bf16 is the CUDA path's): the
	 * analysis counts bytes by the model's dtype, so config.yaml says what ran. lp_config_apply
	 * rebuilds the tree: nothing borrowed from it is used after this but run->mode, read again. */
	if (!strcmp(pl->device, "cpu") && json_is_object(lp_config_get(&run->cfg, "model")) &&
	    (!cfg_str(run, "model.dtype") || strcmp(cfg_str(run, "model.dtype"), "fp32"))) {
		if (lp_config_apply(&run->cfg, cfg_str(run, "model.dtype") ? "model.dtype=fp32" : "+model.dtype=fp32",
			    err) < 0)
			goto out;
		run->mode = cfg_str(run, "run.mode");
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
	const char *hf = cfg_str(run, "model.hf_config");
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
			lp_log_warn("stages.hooks: more than %zu characters in all: hooks from '%s' on left out", sizeof(pl->auto_hooks), s);
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
		lp_log_warn("run.auto_stages: python/llmprof_auto was not found next to llmprof: no automatic stages");
	} else {
		lp_buf_reset(&site);
		lp_buf_addf(&site, "%s/%s", pl->opts.exe_dir, rel[i]);
		abs_path(site.data, &site);
		lp_buf_adds(&dir, run->dir.path ? run->dir.path : "<run>");   /* no folder on --dry-run */
		abs_path(dir.data, &dir);
		lp_buf_adds(&dir, "/auto");
		snprintf(pl->auto_pythonpath, sizeof(pl->auto_pythonpath), "%s%s%s", site.data, old && *old ? ":" : "",
			old ? old : "");
		snprintf(pl->auto_dir, sizeof(pl->auto_dir), "%s", dir.data);
		pl->auto_ops = cfg_bool(run, "run.auto_ops");
		auto_hooks_init(pl, run);
	}
	lp_buf_release(&site);
	lp_buf_release(&dir);
}

/* A workload after `--` that cannot be started is a mistake on the command line (exit 2, before
 * anything runs), not a missing tool: name the program. A name without '/' is looked up on PATH,
 * as execvp does. */
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
		return lp_err_set(err, LP_EOTHER, "out of memory");
	memset(&to, 0, sizeof(to));
	to.nsys_path = cfg_str(run, "tools.nsys");
	to.ncu_path = cfg_str(run, "tools.ncu");
	to.nsys_lib_dir = cfg_str(run, "tools.nsys_lib_dir");
	to.exe_dir = o->exe_dir;
	to.probe_versions = 1;
	lp_tools_detect(&to, pl->tools);

	lp_buf_addf(&lib, "%s/../lib/libllmprof_inject.so", o->exe_dir);
	if (lp_fs_is_file(lib.data)) {
		struct lp_buf a = LP_BUF_INIT;
		abs_path(lib.data, &a);
		snprintf(pl->inject, sizeof(pl->inject), "%s", a.data);
		lp_buf_release(&a);
	}
	lp_buf_release(&lib);

	if (resolve_model(run, err) < 0)
		return -1;
	run->mode = cfg_str(run, "run.mode");
	lp_tools_outlook(pl->tools, run->mode, cfg_str(run, "run.device"), cfg_bool(run, "profiling.nsys.enable"),
		!run->workload_argc, &pl->outlook);
	if (!run->workload_argc)
		return resolve_reference(pl, run, err);
	if (check_workload(run->workload_argv[0], err) < 0)
		return -1;
	for (i = 0; i < run->workload_argc; i++)
		lp_argv_add(&pl->workload, run->workload_argv[i]);
	pl->gpu_run = pl->outlook.gpu_run;
	if (cfg_bool(run, "run.auto_stages"))
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

static size_t capture_env(const struct lp_pipeline *pl, const char *trace_dir, struct lp_proc_env *env)
{
	size_t n = 0;
	env[n++] = (struct lp_proc_env){ "CUDA_INJECTION64_PATH", pl->inject };
	env[n++] = (struct lp_proc_env){ "NVTX_INJECTION64_PATH", pl->inject };
	env[n++] = (struct lp_proc_env){ "LLMPROF_TRACE_DIR", trace_dir };
	if (pl->auto_pythonpath[0]) {
		env[n++] = (struct lp_proc_env){ "PYTHONPATH", pl->auto_pythonpath };
		env[n++] = (struct lp_proc_env){ "LLMPROF_AUTO_DIR", pl->auto_dir };
		env[n++] = (struct lp_proc_env){ "LLMPROF_AUTO_OPS", pl->auto_ops ? "1" : "0" };
		env[n++] = (struct lp_proc_env){ "LLMPROF_AUTO_HOOKS", pl->auto_hooks[0] ? pl->auto_hooks : NULL };
	}
	return n;
}

/* The tools must not see our tracer: nsys and ncu hold the CUPTI slot themselves. The shim's
 * ranges stay (ncu's NVTX filters need them); its account is written by the capture only. */
static size_t tool_env(const struct lp_pipeline *pl, struct lp_proc_env *env)
{
	size_t n = 0;
	env[n++] = (struct lp_proc_env){ "CUDA_INJECTION64_PATH", NULL };
	env[n++] = (struct lp_proc_env){ "NVTX_INJECTION64_PATH", NULL };
	if (pl->auto_pythonpath[0]) {
		env[n++] = (struct lp_proc_env){ "PYTHONPATH", pl->auto_pythonpath };
		env[n++] = (struct lp_proc_env){ "LLMPROF_AUTO_OPS", pl->auto_ops ? "1" : "0" };
		env[n++] = (struct lp_proc_env){ "LLMPROF_AUTO_HOOKS", pl->auto_hooks[0] ? pl->auto_hooks : NULL };
	}
	return n;
}

/* ---- phases ---- */

static int run_workload(struct state *st, const char *trace_dir, const char *out_rel, const char *err_rel,
	struct lp_proc_result *res, struct lp_err *err)
{
	struct lp_pipeline *pl = st->pl;
	struct lp_proc_env env[8];
	struct lp_proc_spec spec;
	struct lp_buf out = LP_BUF_INIT, errp = LP_BUF_INIT;
	size_t n_env = trace_dir ? capture_env(pl, trace_dir, env) : tool_env(pl, env);
	int rc;
	memset(&spec, 0, sizeof(spec));
	lp_rundir_path(&st->run->dir, out_rel, &out);
	lp_rundir_path(&st->run->dir, err_rel, &errp);
	spec.argv = lp_argv_get(&pl->workload);
	spec.env = env;
	spec.n_env = n_env;
	spec.stdout_path = out.data;
	spec.stderr_path = errp.data;
	spec.timeout_s = cfg_num(st->run, "run.timeout_s", 1800);
	spec.tick = tick;
	spec.tick_ctx = &(struct ticker){ trace_dir ? "capture" : "untraced run", NULL, 0, 0 };
	rc = lp_proc_run(&spec, res, err);
	if (lp_log_progress_enabled() && res->wall_s >= 1.0)
		fputc('\n', stderr);
	if (rc == 0 && trace_dir) {
		struct lp_buf cmd = LP_BUF_INIT;
		lp_proc_render(&spec, &cmd);
		lp_rundir_write(&st->run->dir, "trace/cmd.txt", cmd.data, cmd.len, "capture", NULL);
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
static void empty_trace_if_none(struct state *st, const char *trace_dir, long pid)
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
	if (lp_rundir_write(&st->run->dir, name.data, &pre, sizeof(pre), "capture", &err) < 0)
		lp_log_warn("%s", err.msg);
	else
		lp_log_info("the workload left no trace: wrote an empty one (%s)", name.data);
	lp_buf_release(&name);
}

/* run.probe_bandwidth=true on a GPU run: llmprof-probe measures the device-to-device copy bandwidth
 * into <run>/probe.json before the capture (the gap waterfall's floor at the measured peak). A
 * failed probe is a warning: the floor at the datasheet peak is still there. */
static void probe_bandwidth(struct state *st)
{
	struct lp_pipeline *pl = st->pl;
	struct lp_buf exe = LP_BUF_INIT, out = LP_BUF_INIT, errp = LP_BUF_INIT;
	struct lp_proc_spec spec;
	struct lp_proc_result res;
	struct lp_err err = LP_ERR_INIT;
	const char *argv[2];
	if (!cfg_bool(st->run, "run.probe_bandwidth"))
		return;
	if (!pl->outlook.gpu_run) {
		lp_log_warn("run.probe_bandwidth: not a GPU run, no bandwidth probe");
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
		lp_log_warn("run.probe_bandwidth: '%s' is missing (a build without CUDA)", exe.data);
	else if (lp_proc_run(&spec, &res, &err) < 0 || !res.exited || res.exit_code != 0)
		lp_log_warn("run.probe_bandwidth: the probe failed (logs/probe.stderr)%s%s", err.msg[0] ? ": " : "", err.msg);
	lp_buf_release(&exe);
	lp_buf_release(&out);
	lp_buf_release(&errp);
}

static void phase_capture(struct state *st)
{
	struct lp_proc_result res;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf trace = LP_BUF_INIT, why = LP_BUF_INIT;
	double t0;

	progress(PH_CAPTURE, st->pl->workload.v[0]);
	if (!st->pl->inject[0]) {
		set_phase(st, PH_CAPTURE, "failed", "the tracer library libllmprof_inject.so was not found next to llmprof (../lib)");
		st->pl->exit_status = LP_EENV;
		goto out;
	}
	lp_rundir_path(&st->run->dir, "trace", &trace);
	abs_path(trace.data, &trace);
	t0 = now_s();
	if (run_workload(st, trace.data, "trace/workload.stdout", "logs/capture.stderr", &res, &err) < 0) {
		set_phase(st, PH_CAPTURE, "failed", "%s", err.msg);
		st->pl->exit_status = err.status == LP_EENV ? LP_EENV : LP_EPARTIAL;
		goto out;
	}
	st->traced_s = now_s() - t0;
	if (!res.exited || res.exit_code != 0)
		empty_trace_if_none(st, trace.data, res.pid);
	record_tree(&st->run->dir, "trace", "capture");
	record_tree(&st->run->dir, "auto", "capture");
	record_tree(&st->run->dir, "logs", "capture");
	if (!res.exited || res.exit_code != 0) {
		struct lp_proc_spec limit;
		memset(&limit, 0, sizeof(limit));
		limit.timeout_s = cfg_num(st->run, "run.timeout_s", 1800);
		lp_proc_describe(&res, &limit, &why);
		set_phase(st, PH_CAPTURE, "failed", "the workload %s%s%s (see logs/capture.stderr)",
			res.interrupted ? "was " : "", why.data, res.timed_out ? ": run.timeout_s" : "");
		st->pl->exit_status = LP_EPARTIAL;
		goto out;
	}
	{
		char **files = NULL;
		size_t n_files = 0;
		if (lp_trace_list_files(trace.data, &files, &n_files, &err) == 0)
			lp_trace_list_free(files, n_files);
		if (!n_files) {
			set_phase(st, PH_CAPTURE, "failed", "the workload left no trace: it made no NVTX or CUDA "
				"calls the tracer could see (is it instrumented? see docs/nvtx.md)");
			st->pl->exit_status = LP_EPARTIAL;
			goto out;
		}
	}
	lp_profile_init(&st->prof, trace.data);
	st->have_prof = 1;
	if (lp_trace_load(trace.data, &st->prof, &err) < 0) {
		set_phase(st, PH_CAPTURE, "failed", "%s", err.msg);
		st->pl->exit_status = LP_EPARTIAL;
		goto out;
	}
	if (st->prof.n_ranges == 0 && st->prof.n_kernels == 0)
		set_phase(st, PH_CAPTURE, "ok", "the trace holds no NVTX ranges and no kernels (is the workload instrumented?)");
	else
		set_phase(st, PH_CAPTURE, "ok", NULL);
	if (cfg_bool(st->run, "run.measure_overhead")) {
		struct lp_proc_result r2;
		t0 = now_s();
		if (run_workload(st, NULL, "logs/untraced.stdout", "logs/untraced.stderr", &r2, &err) == 0 &&
		    r2.exited && r2.exit_code == 0)
			st->untraced_s = now_s() - t0;
		lp_rundir_record(&st->run->dir, "logs/untraced.stdout", "capture", NULL);
	}
out:
	lp_buf_release(&trace);
	lp_buf_release(&why);
	save_phases(st);
}

static void phase_nsys(struct state *st)
{
	struct lp_pipeline *pl = st->pl;
	struct lp_nsys_plan plan;
	struct lp_nsys_outcome oc;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf out = LP_BUF_INIT, logs = LP_BUF_INIT, ldpath = LP_BUF_INIT;
	struct lp_proc_env env[8];
	size_t n_env = tool_env(pl, env);
	const char *libdir = cfg_str(st->run, "tools.nsys_lib_dir");

	if (!cfg_bool(st->run, "profiling.nsys.enable")) {
		set_phase(st, PH_NSYS, "skipped", "not enabled (profiling.nsys.enable=true turns it on)");
		goto out;
	}
	if (!pl->tools->nsys.found || pl->tools->nsys.problem[0]) {
		set_phase(st, PH_NSYS, "skipped", "nsys is not usable here: %s",
			pl->tools->nsys.problem[0] ? pl->tools->nsys.problem : "not found");
		pl->exit_status = pl->exit_status ? pl->exit_status : LP_EENV;
		goto out;
	}
	progress(PH_NSYS, pl->tools->nsys.path);
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
	plan.timeout_s = cfg_num(st->run, "run.timeout_s", 1800);
	plan.tick = tick;
	plan.tick_ctx = &(struct ticker){ "nsys", NULL, 0, 0 };
	memset(&oc, 0, sizeof(oc));
	if (lp_nsys_run(&plan, &oc, &err) < 0) {
		set_phase(st, PH_NSYS, "failed", "%s", err.msg);
		pl->exit_status = err.status == LP_EENV ? LP_EENV : (pl->exit_status ? pl->exit_status : LP_EPARTIAL);
	} else {
		set_phase(st, PH_NSYS, "ok", NULL);
	}
	record_tree(&st->run->dir, "nsys", "nsys");
	record_tree(&st->run->dir, "logs", "nsys");
out:
	lp_buf_release(&out);
	lp_buf_release(&logs);
	lp_buf_release(&ldpath);
	save_phases(st);
}

static void phase_select(struct state *st)
{
	struct lp_topn_opts o;
	struct lp_err err = LP_ERR_INIT;
	char fallback[160] = "";
	json_t *sel;
	char *text;
	size_t i;

	if (!st->have_prof) {
		set_phase(st, PH_SELECT, "skipped", "no capture to select from");
		goto out;
	}
	if (st->prof.n_kernels == 0) {
		set_phase(st, PH_SELECT, "skipped", "no GPU kernels were recorded (a CPU run)");
		goto out;
	}
	memset(&o, 0, sizeof(o));
	o.n = (size_t)cfg_int(st->run, "run.top_n_kernels", 5);
	o.stage = cfg_str(st->run, "run.stage");
	o.exclude_warmup = 1;
	/* by function name: CUPTI's and ncu's demanglers format parameter lists differently
	 * ("unsigned short const*" / "const unsigned short *"), so a regex on whole demangled
	 * signatures misses C++ kernels; the ncu phase passes --kernel-name-base function to match */
	o.name_base = "function";
	o.launch_count = (long)cfg_int(st->run, "profiling.ncu.launch_count", 1);
	if (lp_topn_from_profile(&st->prof, &o, &st->topn, &err) < 0 || !st->topn.n_picks) {
		/* the stage ran no kernels (a workload without it, or one that runs it elsewhere):
		 * select from the whole measured run instead, and say so */
		lp_topn_release(&st->topn);  /* empty, or zeroed by the failed call */
		snprintf(fallback, sizeof(fallback), "stage '%s' ran no kernels: selected from the whole run",
			o.stage ? o.stage : "decode_all");
		o.stage = "";
		lp_err_clear(&err);
		if (lp_topn_from_profile(&st->prof, &o, &st->topn, &err) < 0) {
			set_phase(st, PH_SELECT, "failed", "%s", err.msg);
			st->pl->exit_status = st->pl->exit_status ? st->pl->exit_status : LP_EPARTIAL;
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
		set_phase(st, PH_SELECT, "failed", "%s", text ? err.msg : "out of memory");
	else if (fallback[0])
		set_phase(st, PH_SELECT, "ok", "%s", fallback);
	else
		set_phase(st, PH_SELECT, "ok", NULL);
	free(text);
out:
	save_phases(st);
}

/* Distinct domain@name of the ranges the capture saw, for the "profiled nothing" message. */
static void ranges_seen(const struct lp_profile *p, struct lp_buf *out)
{
	/* names are interned: pointer pairs identify a domain@name; only the listed ones need checking */
	const struct lp_range *listed[12];
	size_t i, j, shown = 0;
	for (i = 0; i < p->n_ranges && shown < 12; i++) {
		const struct lp_range *r = &p->ranges[i];
		int dup = 0;
		for (j = 0; j < shown && !dup; j++)
			dup = listed[j]->name == r->name && listed[j]->domain == r->domain;
		if (dup || r->kind == LP_RANGE_MARK)
			continue;
		lp_buf_addf(out, "%s%s@%s", shown ? ", " : "", r->domain, r->name);
		listed[shown++] = r;
	}
	if (!shown)
		lp_buf_adds(out, "none");
}

/* Adds to ncu/selection.json which selected kernels ncu profiled (and how often), and says in
 * the phase reason how many were missed. */
static void note_profiled(struct state *st, const char *raw_csv)
{
	struct lp_kernel_table t;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf path = LP_BUF_INIT;
	uint64_t *counts = calloc(st->topn.n_picks + 1, sizeof(*counts));
	json_t *sel, *arr, *item;
	size_t i, n_ok;
	char *text;
	if (!counts || lp_ncu_raw_kernel_table(raw_csv, NULL, &t, &err) < 0) {
		free(counts);
		return;
	}
	n_ok = lp_topn_check(&st->topn, &t, "function", counts);
	lp_rundir_path(&st->run->dir, "ncu/selection.json", &path);
	sel = json_load_file(path.data, 0, NULL);
	arr = json_object_get(sel, "selected");
	json_array_foreach(arr, i, item) {
		if (i >= st->topn.n_picks)
			break;
		json_object_set_new(item, "profiled_launches", json_integer((json_int_t)counts[i]));
		if (!counts[i])
			json_object_set_new(item, "not_profiled_why", json_string(
				"no launch matched the kernel filter inside the NVTX include ranges (launched "
				"outside them, or ncu names it differently)"));
	}
	json_object_set_new(sel, "profiled", json_integer((json_int_t)n_ok));
	text = sel ? json_dumps(sel, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
	if (text)
		lp_rundir_write(&st->run->dir, "ncu/selection.json", text, strlen(text), "ncu", NULL);
	if (n_ok < st->topn.n_picks)
		lp_log_warn("ncu profiled %zu of the %zu selected kernels (see ncu/selection.json)", n_ok,
			st->topn.n_picks);
	free(text);
	json_decref(sel);
	lp_kernel_table_release(&t);
	lp_buf_release(&path);
	free(counts);
}

static void phase_ncu(struct state *st)
{
	struct lp_pipeline *pl = st->pl;
	struct lp_ncu_plan plan;
	struct lp_ncu_outcome oc;
	struct lp_regions_cfg rc;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf out = LP_BUF_INIT, logs = LP_BUF_INIT, ncu_log = LP_BUF_INIT;
	struct lp_proc_env env[8];
	const json_t *preset = lp_config_get(&st->run->cfg, "profiling.ncu");
	json_t *preset_copy = NULL;   /* the preset as run (regions applied, or the top-N base name) */
	const json_t *inc = lp_config_get(&st->run->cfg, "profiling.ncu.regions.include");
	int explicit_regions = json_is_array(inc) && json_array_size(inc) > 0;
	int have_rc = 0;

	memset(&oc, 0, sizeof(oc));
	if (strcmp(st->run->mode, "deep") != 0) {
		set_phase(st, PH_NCU, "skipped", "light mode");
		goto out;
	}
	if (!st->have_prof || strcmp(st->ph[PH_CAPTURE].status, "ok") != 0) {
		set_phase(st, PH_NCU, "skipped", "the capture phase did not succeed");
		goto out;
	}
	if (st->prof.n_kernels == 0) {
		set_phase(st, PH_NCU, "skipped", "no GPU kernels were recorded (a CPU run)");
		goto out;
	}
	if (!pl->tools->ncu.found || pl->tools->ncu.problem[0]) {
		set_phase(st, PH_NCU, "skipped", "ncu is not usable here: %s",
			pl->tools->ncu.problem[0] ? pl->tools->ncu.problem : "not found");
		pl->exit_status = LP_EENV;
		goto out;
	}
	if (lp_regions_cfg_load(preset, pl->reference, &rc, &err) < 0) {
		set_phase(st, PH_NCU, "failed", "%s", err.msg);
		pl->exit_status = pl->exit_status ? pl->exit_status : LP_EPARTIAL;
		goto out;
	}
	have_rc = 1;
	if (explicit_regions) {
		/* a region run: the regions' NVTX and kernel filters replace the top-N selection */
		if (lp_regions_apply_preset(preset, &rc, &preset_copy, &err) < 0) {
			set_phase(st, PH_NCU, "failed", "%s", err.msg);
			pl->exit_status = pl->exit_status ? pl->exit_status : LP_EPARTIAL;
			goto out;
		}
		preset = preset_copy;
	} else if (!st->have_topn || !st->topn.regex) {
		set_phase(st, PH_NCU, "skipped", "no kernels were selected in stage '%s'",
			cfg_str(st->run, "run.stage") ? cfg_str(st->run, "run.stage") : "decode_all");
		goto out;
	} else {
		preset_copy = json_deep_copy(preset);
		json_object_set_new(preset_copy, "kernel_name_base", json_string("function"));
		preset = preset_copy;
	}
	progress(PH_NCU, explicit_regions ? "NVTX regions" : st->topn.regex);
	memset(&plan, 0, sizeof(plan));
	lp_rundir_path(&st->run->dir, "ncu", &out);
	lp_rundir_path(&st->run->dir, "logs", &logs);
	plan.ncu = pl->tools->ncu.path;
	plan.preset = preset;
	plan.out_dir = out.data;
	plan.logs_dir = logs.data;
	plan.workload = lp_argv_get(&pl->workload);
	plan.env = env;
	plan.n_env = tool_env(pl, env);
	if (!explicit_regions) {
		plan.kernel_filter = st->topn.regex;
		plan.filter_mode = "per-launch-config";
	}
	plan.timeout_s = cfg_num(st->run, "run.timeout_s", 1800);
	lp_fs_join(&ncu_log, logs.data, "ncu.log");
	plan.tick = tick;
	plan.tick_ctx = &(struct ticker){ "ncu", ncu_log.data, 0, 0 };
	if (lp_ncu_run(&plan, &oc, &err) < 0) {
		set_phase(st, PH_NCU, "failed", "%s", err.msg);
		pl->exit_status = err.status == LP_EENV ? LP_EENV : (pl->exit_status ? pl->exit_status : LP_EPARTIAL);
		record_tree(&st->run->dir, "ncu", "ncu");
		goto out;
	}
	if (oc.profiled_nothing) {
		struct lp_buf seen = LP_BUF_INIT;
		const json_t *ninc = json_object_get(json_object_get(preset, "nvtx"), "include");
		char *expr = ninc ? json_dumps(ninc, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
		ranges_seen(&st->prof, &seen);
		set_phase(st, PH_NCU, "failed", "ncu profiled no kernels with nvtx include %s; ranges seen in the capture: %s",
			expr ? expr : "[]", seen.data);
		free(expr);
		lp_buf_release(&seen);
		pl->exit_status = pl->exit_status ? pl->exit_status : LP_EPARTIAL;
	} else {
		struct lp_buf note = LP_BUF_INIT;
		if (oc.retried_app_range)
			lp_buf_adds(&note, "range replay failed (Unsupported API during capture): reran in app-range mode");
		if (oc.metrics_na.len)
			lp_buf_addf(&note, "%smetrics n/a on this GPU: %s", note.len ? "; " : "", oc.metrics_na.data);
		if (note.len)
			set_phase(st, PH_NCU, "ok", "%s", note.data);
		else
			set_phase(st, PH_NCU, "ok", NULL);
		lp_buf_release(&note);
	}
	if (!explicit_regions && oc.raw_csv[0])
		note_profiled(st, oc.raw_csv);
	if (lp_regions_cfg_active(&rc)) {
		struct lp_regions_run rr;
		struct lp_regions_outcome ro;
		memset(&rr, 0, sizeof(rr));
		rr.run_dir = st->run->dir.path;
		rr.ncu_preset = preset;
		rr.reference_workload = pl->reference;
		rr.raw_csv = oc.raw_csv[0] ? oc.raw_csv : NULL;
		rr.capture = &st->prof;
		rr.replay_mode_used = oc.retried_app_range ? "app-range" : NULL;
		rr.replay_note = oc.retried_app_range ?
			"range replay failed (Unsupported API during capture): reran in app-range" : NULL;
		if (lp_regions_run_report(&rr, &ro, &err) < 0)
			lp_log_warn("NVTX region report: %s", err.msg);
	}
	record_tree(&st->run->dir, "ncu", "ncu");
out:
	record_tree(&st->run->dir, "logs", "ncu");
	if (have_rc)
		lp_regions_cfg_release(&rc);
	json_decref(preset_copy);
	lp_ncu_outcome_release(&oc);
	lp_buf_release(&out);
	lp_buf_release(&logs);
	lp_buf_release(&ncu_log);
	save_phases(st);
}

static void phase_analysis_reports(struct state *st)
{
	struct lp_err err = LP_ERR_INIT;
	struct lp_rebuild_outcome oc;
	size_t i;

	progress(PH_ANALYSIS, "stages, operators, kernels, MFU/MBU, reports");
	if (!st->have_prof) {
		set_phase(st, PH_ANALYSIS, "skipped", "no trace to analyze (the capture phase failed)");
		set_phase(st, PH_REPORTS, "skipped", "no analysis");
		save_phases(st);
		return;
	}
	/* recorded as ok before rendering, so that the reports show the statuses a later
	 * `llmprof report` reproduces; rewritten as failed when rendering fails */
	set_phase(st, PH_ANALYSIS, "ok", NULL);
	set_phase(st, PH_REPORTS, "ok", NULL);
	save_phases(st);
	if (lp_report_rebuild_ex(st->run->dir.path, &oc, &err) < 0) {
		set_phase(st, PH_ANALYSIS, "failed", "%s", err.msg);
		set_phase(st, PH_REPORTS, "failed", "no analysis");
		st->pl->exit_status = st->pl->exit_status ? st->pl->exit_status : LP_EPARTIAL;
		save_phases(st);
		lp_rebuild_outcome_release(&oc);
		return;
	}
	if (oc.damaged) {
		lp_log_warn("damaged artifacts: %s", oc.damage.data);
		st->pl->exit_status = st->pl->exit_status ? st->pl->exit_status : LP_EPARTIAL;
	}
	for (i = 0; oc.wrote && i < LP_REPORT_N_FILES; i++)
		lp_rundir_record(&st->run->dir, lp_report_files[i], "reports", NULL);
	lp_rebuild_outcome_release(&oc);
}

int lp_pipeline_run(struct lp_pipeline *pl, struct lp_run *run, struct lp_err *err)
{
	struct state st;
	json_t *tools = lp_tools_to_json(pl->tools);
	int i, rc;

	memset(&st, 0, sizeof(st));
	st.pl = pl;
	st.run = run;
	for (i = 0; i < PH_COUNT; i++)
		snprintf(st.ph[i].name, sizeof(st.ph[i].name), "%s", phase_names[i]);

	progress(PH_PROVENANCE, run->dir.path);
	run->workload_argv = (const char *const *)lp_argv_get(&pl->workload);
	run->workload_argc = pl->workload.n;
	rc = lp_run_provenance(run, tools, err);
	json_decref(tools);
	if (rc < 0) {
		lp_rundir_set_status(&run->dir, LP_RUN_FAILED, NULL);
		return -1;
	}
	set_phase(&st, PH_PROVENANCE, "ok", NULL);
	save_phases(&st);

	probe_bandwidth(&st);
	phase_capture(&st);
	if (!lp_proc_interrupted())
		phase_nsys(&st);
	if (!lp_proc_interrupted())
		phase_select(&st);
	if (!lp_proc_interrupted())
		phase_ncu(&st);
	phase_analysis_reports(&st);

	for (i = 0; i < PH_COUNT; i++)
		if (!strcmp(st.ph[i].status, "failed") && !pl->exit_status)
			pl->exit_status = LP_EPARTIAL;
	lp_rundir_set_status(&run->dir, lp_proc_interrupted() ? LP_RUN_INTERRUPTED : pl->exit_status == 0 ? LP_RUN_OK :
		(st.have_prof ? LP_RUN_PARTIAL : LP_RUN_FAILED), NULL);
	if (st.have_topn)
		lp_topn_release(&st.topn);
	if (st.have_prof)
		lp_profile_release(&st.prof);
	return 0;
}

/* ---- --dry-run ---- */

static void print_cmd(const char *label, const struct lp_proc_spec *spec)
{
	struct lp_buf b = LP_BUF_INIT;
	lp_proc_render(spec, &b);
	printf("  %s: %s", label, b.data);
	lp_buf_release(&b);
}

int lp_pipeline_print_plan(struct lp_pipeline *pl, struct lp_run *run, struct lp_err *err)
{
	struct lp_proc_env env[8];
	struct lp_proc_spec spec;
	const char *root = cfg_str(run, "artifacts.stage2_dir");
	const char *id = cfg_str(run, "run.id");
	const char *nsys_why = NULL, *ncu_why = NULL;
	int deep = !strcmp(run->mode, "deep");
	struct lp_buf ldpath = LP_BUF_INIT;
	size_t k;

	printf("run folder: %s/%s\n", root ? root : "tmp/stage2", id ? id : "<YYYYmmdd-HHMMSS-xxxx>");
	printf("mode: %s\n", run->mode);
	printf("workload: %s%s\n", pl->reference ? "the reference model on " : "your command",
		pl->reference ? pl->device : "");
	printf("%s\n", pl->outlook.what);
	printf("tools: nsys %s, ncu %s, tracer %s, GPUs %d\n",
		pl->tools->nsys.found ? pl->tools->nsys.path : "not found",
		pl->tools->ncu.found ? pl->tools->ncu.path : "not found",
		pl->inject[0] ? pl->inject : "not found", pl->tools->n_gpus);
	printf("phases:\n");
	printf("  1 provenance: config.yaml, env.json, inputs.yaml, manifest.json\n");
	memset(&spec, 0, sizeof(spec));
	spec.argv = lp_argv_get(&pl->workload);
	spec.env = env;
	spec.n_env = capture_env(pl, "<run>/trace", env);
	spec.stdout_path = "<run>/trace/workload.stdout";
	spec.stderr_path = "<run>/logs/capture.stderr";
	print_cmd("2 capture", &spec);
	if (!cfg_bool(run, "profiling.nsys.enable"))
		nsys_why = "not enabled (profiling.nsys.enable=true)";
	else if (!pl->tools->nsys.found || pl->tools->nsys.problem[0])
		nsys_why = "nsys is not usable here (exit 4)";
	if (nsys_why) {
		printf("  3 nsys: skipped: %s\n", nsys_why);
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
		spec.n_env = tool_env(pl, env);
		if (cfg_str(run, "tools.nsys_lib_dir")) {
			lp_tools_nsys_ld_path(cfg_str(run, "tools.nsys_lib_dir"), &ldpath);
			env[spec.n_env++] = (struct lp_proc_env){ "LD_LIBRARY_PATH", ldpath.data };
		}
		if (reg)
			env[spec.n_env++] = (struct lp_proc_env){ "NSYS_NVTX_PROFILER_REGISTER_ONLY", "0" };
		spec.stdout_path = spec.stderr_path = "<run>/logs/nsys.log";
		print_cmd("3 nsys", &spec);
		lp_argv_release(&av);
		lp_buf_release(&ldpath);
	}
	printf("  4 select: the top %lld kernels of stage '%s' from the capture\n",
		(long long)cfg_int(run, "run.top_n_kernels", 5), cfg_str(run, "run.stage") ? cfg_str(run, "run.stage") : "decode_all");
	if (!deep)
		ncu_why = "light mode";
	else if (!pl->gpu_run)
		ncu_why = "a CPU run records no kernels";
	else if (!pl->tools->ncu.found || pl->tools->ncu.problem[0])
		ncu_why = "ncu is not usable here (exit 4)";
	if (ncu_why) {
		printf("  5 ncu: skipped: %s\n", ncu_why);
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
		spec.n_env = tool_env(pl, env);
		spec.stdout_path = spec.stderr_path = "<run>/logs/ncu.log";
		print_cmd("5 ncu", &spec);
		lp_argv_release(&av);
	}
	printf("  6 analysis + 7 reports:");
	for (k = 0; k < LP_REPORT_N_FILES; k++)
		printf("%s %s", k ? "," : "", lp_report_files[k]);
	printf("\n");
	if (pl->outlook.exit_status)
		printf("expected exit: %d (%s)\n", pl->outlook.exit_status, pl->outlook.why);
	else
		printf("expected exit: 0 when the workload and the tools succeed\n");
	lp_buf_release(&ldpath);
	return 0;
}
