/* rebuild.c: run folder -> analysis input -> lp_analyze -> reports (see rebuild.h). The one
 * place that knows which artifact feeds which part of the analysis. */
#include "run/rebuild.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "collect/rundir.h"
#include "config/yaml.h"
#include "core/fs.h"
#include "core/str.h"
#include "parse/ncu_raw.h"
#include "parse/trace_read.h"
#include "parse/workload_timings.h"
#include "report/ncu_coverage.h"
#include "report/reports.h"

/* The main ncu export of the run: the first ncu/<name>_raw.csv in name order (a run writes one;
 * ncu/regions/ holds slices of it, not separate results). */
int lp_rebuild_load_ncu(const char *run_dir, struct lp_kernel_table *out, struct lp_err *err)
{
	struct lp_buf dir = LP_BUF_INIT, path = LP_BUF_INIT;
	struct dirent **names = NULL;
	int n, i, rc = 0;
	memset(out, 0, sizeof(*out));
	lp_fs_join(&dir, run_dir, "ncu");
	n = lp_fs_is_dir(dir.data) ? scandir(dir.data, &names, NULL, alphasort) : 0;
	for (i = 0; i < n; i++) {
		if (!path.len && lp_str_ends_with(names[i]->d_name, "_raw.csv")) {
			lp_fs_join(&path, dir.data, names[i]->d_name);
			if (lp_fs_is_file(path.data) && lp_fs_size(path.data) > 0 &&
			    lp_ncu_raw_kernel_table(path.data, NULL, out, err) < 0)
				rc = -1;
		}
		free(names[i]);
	}
	free(names);
	lp_buf_release(&dir);
	lp_buf_release(&path);
	return rc;
}

static int64_t get_i64(const json_t *o, const char *const *keys)
{
	for (; *keys; keys++) {
		const json_t *v = json_object_get(o, *keys);
		if (json_is_integer(v))
			return (int64_t)json_integer_value(v);
		if (json_is_real(v))
			return (int64_t)json_real_value(v);
	}
	return 0;
}

int lp_rebuild_device_from_env(const json_t *env, struct lp_device *out)
{
	static const char *const k_sm[] = { "sm_count", "multiprocessor_count", "sms", NULL };
	static const char *const k_clk[] = { "sm_clock_mhz", "max_sm_clock_mhz", "clock_sm_max_mhz", NULL };
	static const char *const k_mclk[] = { "mem_clock_mhz", "max_mem_clock_mhz", "memory_clock_mhz", NULL };
	static const char *const k_bus[] = { "mem_bus_width_bits", "memory_bus_width_bits", "memory_bus_width", NULL };
	static const char *const k_mem[] = { "mem_bytes", "memory_bytes", "memory_total_bytes", NULL };
	static const char *const k_ccM[] = { "cc_major", NULL };
	static const char *const k_ccm[] = { "cc_minor", NULL };
	const json_t *gpus = json_object_get(env, "gpus"), *g, *cc, *clocks;
	memset(out, 0, sizeof(*out));
	out->name = "";
	out->uuid = "";
	if (!json_is_array(gpus) || !json_array_size(gpus) || !json_is_object(g = json_array_get(gpus, 0)))
		return -1;
	if (!json_is_string(json_object_get(g, "name")))
		return -1;
	out->name = json_string_value(json_object_get(g, "name"));
	if (json_is_string(json_object_get(g, "uuid")))
		out->uuid = json_string_value(json_object_get(g, "uuid"));
	out->id = (int32_t)get_i64(g, (const char *const[]){ "index", "id", NULL });
	out->sm_count = (int32_t)get_i64(g, k_sm);
	out->sm_clock_mhz = (uint32_t)get_i64(g, k_clk);
	out->mem_clock_mhz = (uint32_t)get_i64(g, k_mclk);
	clocks = json_object_get(g, "clocks");
	if (json_is_object(clocks)) {
		if (!out->sm_clock_mhz)
			out->sm_clock_mhz = (uint32_t)get_i64(clocks, (const char *const[]){ "sm_max_mhz", "sm_mhz", "sm", NULL });
		if (!out->mem_clock_mhz)
			out->mem_clock_mhz = (uint32_t)get_i64(clocks, (const char *const[]){ "mem_max_mhz", "mem_mhz", "mem", NULL });
	}
	out->mem_bus_width_bits = (uint32_t)get_i64(g, k_bus);
	out->mem_bytes = (uint64_t)get_i64(g, k_mem);
	out->cc_major = (int32_t)get_i64(g, k_ccM);
	out->cc_minor = (int32_t)get_i64(g, k_ccm);
	cc = json_object_get(g, "compute_capability");
	if (!cc)
		cc = json_object_get(g, "cc");
	if (json_is_string(cc)) {
		const char *s = json_string_value(cc), *dot = strchr(s, '.');
		if (dot && s[0] >= '0' && s[0] <= '9') {
			out->cc_major = (int32_t)strtol(s, NULL, 10);
			out->cc_minor = (int32_t)strtol(dot + 1, NULL, 10);
		}
	}
	return 0;
}

/* ---- damaged artifacts: reports are replaced only by equal-or-better ones ---- */

static void damage(struct lp_rebuild_outcome *oc, const char *fmt, ...) LP_PRINTF(2, 3);

static void damage(struct lp_rebuild_outcome *oc, const char *fmt, ...)
{
	va_list ap;
	if (oc->damage.len)
		lp_buf_adds(&oc->damage, "; ");
	va_start(ap, fmt);
	lp_buf_vaddf(&oc->damage, fmt, ap);
	va_end(ap);
	oc->damaged = 1;
}

/* A file the analysis reads: the trace files and the main ncu export. */
static int analysis_input(const char *rel)
{
	if (!strncmp(rel, "trace/", 6))
		return lp_str_ends_with(rel, ".lptrace");
	return !strncmp(rel, "ncu/", 4) && !strchr(rel + 4, '/') && lp_str_ends_with(rel, "_raw.csv");
}

/* What the trace reader read around (lp_trace_load_damage: one line per file), then inputs that
 * manifest.json lists but that are gone or no longer have the size it recorded (a file the
 * reader named already is not named twice). */
static void check_inputs(const char *run_dir, const struct lp_buf *trace_damage, struct lp_rebuild_outcome *oc)
{
	struct lp_buf path = LP_BUF_INIT;
	const char *line = trace_damage->data;
	size_t i;
	json_t *man, *item;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len)
			damage(oc, "%.*s", (int)len, line);
		line += len + (nl ? 1 : 0);
	}
	lp_fs_join(&path, run_dir, LP_RUNDIR_MANIFEST);
	man = json_load_file(path.data, 0, NULL);
	json_array_foreach(json_object_get(man, "artifacts"), i, item) {
		const char *p = json_string_value(json_object_get(item, "path"));
		const json_t *sz = json_object_get(item, "size_bytes");
		int64_t have;
		if (!p || !analysis_input(p))
			continue;
		if (oc->damage.len && strstr(oc->damage.data, strrchr(p, '/') + 1))
			continue;  /* said already */
		lp_fs_join(&path, run_dir, p);
		have = lp_fs_is_file(path.data) ? lp_fs_size(path.data) : -1;
		if (have < 0)
			damage(oc, "'%s' is missing (manifest.json lists it)", p);
		else if (json_is_integer(sz) && have != (int64_t)json_integer_value(sz))
			damage(oc, "'%s' has %lld bytes, manifest.json recorded %lld", p, (long long)have,
				(long long)json_integer_value(sz));
	}
	json_decref(man);
	lp_buf_release(&path);
}

/* A phase that says ncu ran, with no export left to read. */
static void check_ncu_export(const char *run_dir, const struct lp_phase_status *ph, size_t n,
	struct lp_rebuild_outcome *oc)
{
	struct lp_buf dir = LP_BUF_INIT;
	struct dirent **names = NULL;
	size_t i;
	int k, m, found = 0, ran = 0;
	for (i = 0; i < n; i++)
		ran |= !strcmp(ph[i].name, "ncu") && !strcmp(ph[i].status, "ok");
	if (!ran)
		return;
	lp_fs_join(&dir, run_dir, "ncu");
	m = lp_fs_is_dir(dir.data) ? scandir(dir.data, &names, NULL, alphasort) : 0;
	for (k = 0; k < m; k++) {
		found |= lp_str_ends_with(names[k]->d_name, "_raw.csv");
		free(names[k]);
	}
	free(names);
	if (!found && !strstr(oc->damage.data, "_raw.csv'"))
		damage(oc, "the ncu phase ran, but its export ncu/<name>_raw.csv is missing");
	lp_buf_release(&dir);
}

/* 1 when the folder holds reports from an earlier analysis. */
static int have_reports(const char *run_dir)
{
	struct lp_buf path = LP_BUF_INIT;
	size_t i;
	int any = 0;
	for (i = 0; i < LP_REPORT_N_FILES && !any; i++) {
		lp_fs_join(&path, run_dir, lp_report_files[i].name);
		any = lp_fs_is_file(path.data);
	}
	lp_buf_release(&path);
	return any;
}

/* The run id as the artifacts state it (manifest.json, else config.yaml's run.id, else
 * summary.json), so that a copied or moved folder gives the same reports; the folder's name only
 * when none says. */
static void run_id_of(const char *run_dir, const json_t *cfg, struct lp_buf *id)
{
	static const char *const files[] = { LP_RUNDIR_MANIFEST, "summary.json" };
	struct lp_buf path = LP_BUF_INIT;
	const json_t *v = json_object_get(json_object_get(cfg, "run"), "id");
	const char *s, *e;
	size_t i;
	lp_buf_reset(id);
	for (i = 0; i < 2 && !id->len; i++) {
		json_t *doc;
		lp_fs_join(&path, run_dir, files[i]);
		doc = json_load_file(path.data, 0, NULL);
		if (json_is_string(json_object_get(doc, "run_id")) && *json_string_value(json_object_get(doc, "run_id")))
			lp_buf_adds(id, json_string_value(json_object_get(doc, "run_id")));
		json_decref(doc);
		if (!id->len && i == 0 && json_is_string(v) && *json_string_value(v))
			lp_buf_adds(id, json_string_value(v));
	}
	lp_buf_release(&path);
	if (id->len)
		return;
	s = run_dir;
	e = run_dir + strlen(run_dir);
	while (e > s && e[-1] == '/')
		e--;
	s = e;
	while (s > run_dir && s[-1] != '/')
		s--;
	lp_buf_add(id, s, (size_t)(e - s));
}

/* The Python shim's account of the program (python/llmprof_auto writes auto/program.<pid>.json,
 * one per process): the first file in name order that names a model, else the first one; NULL
 * when there is none. `rel` gets its path in the run folder. */
json_t *lp_rebuild_load_auto_info(const char *run_dir, struct lp_buf *rel)
{
	struct lp_buf dir = LP_BUF_INIT, path = LP_BUF_INIT;
	struct dirent **names = NULL;
	json_t *best = NULL;
	int n, i;
	lp_fs_join(&dir, run_dir, "auto");
	n = lp_fs_is_dir(dir.data) ? scandir(dir.data, &names, NULL, alphasort) : 0;
	for (i = 0; i < n; i++) {
		json_t *doc;
		if (lp_str_ends_with(names[i]->d_name, ".json") && names[i]->d_name[0] != '.' &&
		    (!best || !json_is_object(json_object_get(best, "model")))) {
			lp_fs_join(&path, dir.data, names[i]->d_name);
			doc = json_load_file(path.data, 0, NULL);
			if (json_is_object(doc) && (!best || json_is_object(json_object_get(doc, "model")))) {
				json_decref(best);
				best = doc;
				lp_buf_reset(rel);
				lp_buf_addf(rel, "auto/%s", names[i]->d_name);
			} else {
				json_decref(doc);
			}
		}
		free(names[i]);
	}
	free(names);
	lp_buf_release(&dir);
	lp_buf_release(&path);
	return best;
}

/* The "hooks" array of every process account in auto/ (stages.hooks, docs/nvtx.md), in name
 * order; an empty array when none lists hooks. */
static json_t *load_hook_accounts(const char *run_dir)
{
	struct lp_buf dir = LP_BUF_INIT, path = LP_BUF_INIT;
	struct dirent **names = NULL;
	json_t *all = json_array();
	int n, i;
	lp_fs_join(&dir, run_dir, "auto");
	n = lp_fs_is_dir(dir.data) ? scandir(dir.data, &names, NULL, alphasort) : 0;
	for (i = 0; i < n; i++) {
		if (lp_str_ends_with(names[i]->d_name, ".json") && names[i]->d_name[0] != '.' && all) {
			json_t *doc, *h;
			lp_fs_join(&path, dir.data, names[i]->d_name);
			doc = json_load_file(path.data, 0, NULL);
			h = json_object_get(doc, "hooks");
			if (json_is_array(h) && json_array_size(h))
				json_array_append(all, h);
			json_decref(doc);
		}
		free(names[i]);
	}
	free(names);
	lp_buf_release(&dir);
	lp_buf_release(&path);
	return all;
}

/* run.baseline=reference: the nested reference run's summary.json (baseline/, see run/baseline.c);
 * NULL with `why` (the baseline phase's reason, else the missing file) when there is none. NULL
 * and why NULL when no baseline was asked. */
static json_t *load_baseline(const char *run_dir, const json_t *cfg, const struct lp_phase_status *phases,
	size_t n_phases, const char **why)
{
	const json_t *mode = json_object_get(json_object_get(cfg, "run"), "baseline");
	struct lp_buf path = LP_BUF_INIT;
	json_t *doc = NULL;
	size_t i;
	*why = NULL;
	if (!json_is_string(mode) || strcmp(json_string_value(mode), "reference"))
		return NULL;
	lp_fs_join(&path, run_dir, "baseline/summary.json");
	if (lp_fs_is_file(path.data))
		doc = json_load_file(path.data, 0, NULL);
	lp_buf_release(&path);
	if (json_is_object(doc))
		return doc;
	json_decref(doc);
	*why = "baseline/summary.json is missing or unreadable";
	for (i = 0; i < n_phases; i++)
		if (!strcmp(phases[i].name, "baseline") && phases[i].reason[0])
			*why = phases[i].reason;
	return NULL;
}

static int64_t cfg_i64(const json_t *cfg, const char *a, const char *b)
{
	const json_t *v = json_object_get(json_object_get(cfg, a), b);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static double cfg_num(const json_t *cfg, const char *a, const char *b)
{
	const json_t *v = json_object_get(json_object_get(cfg, a), b);
	return json_is_number(v) ? json_number_value(v) : 0;
}

int lp_report_rebuild(const char *run_dir, struct lp_err *err)
{
	struct lp_rebuild_outcome oc;
	int rc = lp_report_rebuild_ex(run_dir, &oc, err);
	lp_rebuild_outcome_release(&oc);
	return rc;
}

void lp_rebuild_outcome_release(struct lp_rebuild_outcome *oc)
{
	lp_buf_release(&oc->damage);
}

int lp_report_rebuild_ex(const char *run_dir, struct lp_rebuild_outcome *oc, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT, trace_damage = LP_BUF_INIT;
	json_t *cfg = NULL, *env = NULL, *auto_info = NULL, *hook_accounts = NULL, *baseline = NULL;
	struct lp_buf auto_rel = LP_BUF_INIT;
	struct lp_stage_rules_buf rules;
	struct lp_profile prof;
	struct lp_kernel_table ncu;
	struct lp_phase_status *phases = NULL;
	struct lp_analysis_input in;
	struct lp_analysis a;
	struct lp_device env_dev;
	int rc = -1, have_prof = 0, have_ncu = 0;
	json_t *sampling = NULL;
	double *own_steps = NULL;

	memset(&in, 0, sizeof(in));
	memset(oc, 0, sizeof(*oc));
	lp_buf_init(&oc->damage, 0);
	if (!lp_fs_is_dir(run_dir))
		return lp_err_set(err, LP_EUSAGE, "'%s' is not a run folder", run_dir);
	lp_fs_join(&path, run_dir, "config.yaml");
	if (!lp_fs_is_file(path.data)) {
		lp_err_set(err, LP_EUSAGE, "'%s' is not a run folder: it has no config.yaml", run_dir);
		goto done;
	}
	if (lp_yaml_load_file(path.data, &cfg, err) < 0) {
		err->kind = LP_EUSAGE;
		goto done;
	}
	lp_fs_join(&path, run_dir, "env.json");
	if (lp_fs_is_file(path.data) && lp_yaml_load_file(path.data, &env, err) < 0) {
		err->kind = LP_EUSAGE;
		goto done;
	}
	lp_fs_join(&path, run_dir, "trace");
	if (!lp_fs_is_dir(path.data)) {
		lp_err_set(err, LP_EUSAGE, "'%s' is not a run folder: it has no trace/", run_dir);
		goto done;
	}
	lp_profile_init(&prof, path.data);
	have_prof = 1;
	if (lp_trace_load_damage(path.data, &prof, &trace_damage, err) < 0) {
		lp_err_prefix(err, "cannot analyze '%s'", run_dir);
		goto done;
	}
	/* named relative to the run folder: the reports must not depend on how the folder was spelled */
	prof.source = lp_profile_intern(&prof, "trace");
	check_inputs(run_dir, &trace_damage, oc);
	if (prof.warnings && !oc->damaged)
		damage(oc, "the trace reader met %llu problem(s) in trace/", (unsigned long long)prof.warnings);
	if (lp_rebuild_load_ncu(run_dir, &ncu, err) < 0)
		goto done;
	have_ncu = 1;
	if (lp_phases_load(run_dir, &phases, &in.n_phases, &in.traced_s, &in.untraced_s, err) < 0)
		goto done;
	check_ncu_export(run_dir, phases, in.n_phases, oc);

	/* the self-check: the workload's own timings, when it printed them (unreadable: none) */
	lp_fs_join(&path, run_dir, "trace/workload.stdout");
	{
		struct lp_err terr = LP_ERR_INIT;
		/* and its per-step latencies, for the check of every step (none when unreadable) */
		if (lp_workload_timings_read(path.data, &in.own, &own_steps, &in.n_own_steps, &terr) < 0)
			in.own.valid = 0;
		in.own_steps = own_steps;
	}
	/* the bandwidth probe (run.probe_bandwidth): a JSON line with copy_gb_per_s */
	lp_fs_join(&path, run_dir, "probe.json");
	if (lp_fs_is_file(path.data)) {
		json_t *probe = json_load_file(path.data, JSON_DISABLE_EOF_CHECK, NULL);
		if (json_is_number(json_object_get(probe, "copy_gb_per_s")))
			in.measured_bw_gbs = json_number_value(json_object_get(probe, "copy_gb_per_s"));
		json_decref(probe);
	}
	in.profile = &prof;
	in.model = json_object_get(cfg, "model");
	in.batch = cfg_i64(cfg, "inputs", "batch");
	in.prompt_len = cfg_i64(cfg, "inputs", "prompt_len");
	in.new_tokens = cfg_i64(cfg, "inputs", "new_tokens");
	in.peak_tflops = cfg_num(cfg, "device", "peak_tflops");
	in.peak_bw_gbs = cfg_num(cfg, "device", "peak_bw_gbs");
	{
		const json_t *sd = json_object_get(json_object_get(cfg, "trace"), "rerun_sd");
		in.rerun_sd_pct = json_is_number(sd) ? json_number_value(sd) : LP_TSAMPLE_RERUN_SD_PCT;
	}
	if (json_is_string(json_object_get(json_object_get(cfg, "run"), "mode")))
		in.mode = json_string_value(json_object_get(json_object_get(cfg, "run"), "mode"));
	if (!prof.n_devices && env && lp_rebuild_device_from_env(env, &env_dev) == 0)
		in.device = &env_dev;
	in.ncu = ncu.rows;
	in.n_ncu = ncu.n_rows;
	in.phases = phases;
	in.env = env;
	if (lp_stage_rules_from_config(cfg, &rules, err) < 0)
		goto done;
	in.stage_rules = &rules.rules;
	in.auto_info = auto_info = lp_rebuild_load_auto_info(run_dir, &auto_rel);
	in.auto_info_path = auto_rel.data;
	/* the shim's decode ranges around a hand-written loop end late: at their last step instead */
	{
		const json_t *loops = json_object_get(json_object_get(auto_info, "tokens"), "loop_decodes");
		const char *who = json_string_value(json_object_get(auto_info, "stage_ranges"));
		rules.rules.decode_to_last_step = json_is_integer(loops) && json_integer_value(loops) > 0 && who &&
			!strcmp(who, "pushed by llmprof_auto");
	}
	in.hooks_config = json_object_get(json_object_get(cfg, "stages"), "hooks");
	in.hook_accounts = hook_accounts = load_hook_accounts(run_dir);
	baseline = load_baseline(run_dir, cfg, phases, in.n_phases, &in.baseline_why);
	in.baseline = baseline;
	{
		struct lp_err serr = LP_ERR_INIT;
		if (lp_report_ncu_sampling_load(run_dir, &sampling, &serr) < 0)
			damage(oc, "%s", serr.msg);   /* the reports go on without the coverage */
		in.ncu_sampling = sampling;
	}
	{
		struct lp_buf id = LP_BUF_INIT;
		run_id_of(run_dir, cfg, &id);
		in.run_id = id.data;
		if (lp_analyze(&in, &a, err) == 0) {
			/* damaged inputs never replace reports made before: they stay as they are */
			if (oc->damaged && have_reports(run_dir)) {
				oc->kept_existing = 1;
				rc = 0;
			} else {
				rc = lp_report_write_all(run_dir, &a, err);
				oc->wrote = rc == 0;
			}
			lp_analysis_release(&a);
		}
		lp_buf_release(&id);
	}
done:
	json_decref(sampling);
	free(own_steps);
	if (have_ncu)
		lp_kernel_table_release(&ncu);
	if (have_prof)
		lp_profile_release(&prof);
	free(phases);
	if (cfg)
		json_decref(cfg);
	if (env)
		json_decref(env);
	json_decref(auto_info);
	json_decref(hook_accounts);
	json_decref(baseline);
	lp_buf_release(&auto_rel);
	lp_buf_release(&path);
	lp_buf_release(&trace_damage);
	return rc;
}
