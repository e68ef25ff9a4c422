/* ncu.c: the Nsight Compute phase (see ncu.h): preset -> flags, the run (with the app-range
 * retry), the raw and details exports that parse/ncu_raw.c and parse/ncu_details.c read. */
#include "collect/ncu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/tools.h"
#include "core/fs.h"
#include "core/str.h"
#include "core/vec.h"
#include "parse/ncu_raw.h"

static const char *const known_keys[] = {
	"name", "target_processes", "replay_mode", "nvtx", "set", "sections", "metrics", "kernel_name",
	"kernel_name_base", "launch_skip", "launch_count", "clock_control", "cache_control",
	"force_overwrite", "regions", "sample_per_group", "coverage", "budget_s", "cache", "cache_dir", "rank", "stop_early",
	"warmup_picks", "stall_s", "nccl_p2p_off", NULL,
};

static int one_of(const char *v, const char *const *allowed)
{
	size_t i;
	for (i = 0; allowed[i]; i++)
		if (!strcmp(v, allowed[i]))
			return 1;
	return 0;
}

static int get_str(const json_t *o, const char *key, const char *const *allowed, const char **out, struct lp_err *err)
{
	json_t *v = json_object_get(o, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return lp_err_set(err, LP_EUSAGE, "'profiling.ncu.%s' must be a string", key);
	*out = json_string_value(v);
	if (allowed && !one_of(*out, allowed)) {
		struct lp_buf b = LP_BUF_INIT;
		size_t i;
		for (i = 0; allowed[i]; i++)
			lp_buf_addf(&b, "%s%s", i ? ", " : "", allowed[i]);
		lp_err_set(err, LP_EUSAGE, "'profiling.ncu.%s' is '%s'", key, *out);
		lp_err_hint(err, "use one of: %s", b.data);
		lp_buf_release(&b);
		return -1;
	}
	return 0;
}

static int get_count(const json_t *o, const char *key, long *out, struct lp_err *err)
{
	json_t *v = json_object_get(o, key);
	*out = -1;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return lp_err_set(err, LP_EUSAGE, "'profiling.ncu.%s' must be a whole number >= 0", key);
	*out = (long)json_integer_value(v);
	return 0;
}

static int each_string(const json_t *list, const char *key, struct lp_argv *out, const char *flag, struct lp_err *err)
{
	size_t i;
	json_t *x;
	if (!list || json_is_null(list))
		return 0;
	if (!json_is_array(list))
		return lp_err_set(err, LP_EUSAGE, "'profiling.ncu.%s' must be a list", key);
	json_array_foreach(list, i, x) {
		if (!json_is_string(x) || !*json_string_value(x))
			return lp_err_set(err, LP_EUSAGE, "'profiling.ncu.%s[%zu]' must be a non-empty string", key, i);
		if (out) {
			lp_argv_add(out, flag);
			lp_argv_add(out, json_string_value(x));
		}
	}
	return 0;
}

int lp_ncu_argv(const struct lp_ncu_plan *p, struct lp_argv *out, struct lp_err *err)
{
	static const char *const replay[] = { "kernel", "application", "range", "app-range", NULL };
	static const char *const targets[] = { "all", "application-only", NULL };
	static const char *const bases[] = { "function", "demangled", "mangled", NULL };
	static const char *const clocks[] = { "base", "none", "reset", NULL };
	static const char *const caches[] = { "all", "none", NULL };
	const json_t *pr = p->preset, *nvtx, *metrics, *fo;
	const char *name, *target, *mode, *set, *kname, *kbase, *clock, *cache, *key;
	long skip, count;
	json_t *v;
	size_t i;
	if (!json_is_object(pr))
		return lp_err_set(err, LP_EUSAGE, "'profiling.ncu' must be a mapping");
	json_object_foreach((json_t *)(uintptr_t)pr, key, v) {
		(void)v;
		if (!one_of(key, known_keys))
			return lp_err_set(err, LP_EUSAGE, "unknown key 'profiling.ncu.%s'", key);
	}
	if (get_str(pr, "name", NULL, &name, err) < 0 || get_str(pr, "target_processes", targets, &target, err) < 0 ||
			get_str(pr, "replay_mode", replay, &mode, err) < 0 || get_str(pr, "set", NULL, &set, err) < 0 ||
			get_str(pr, "kernel_name", NULL, &kname, err) < 0 ||
			get_str(pr, "kernel_name_base", bases, &kbase, err) < 0 ||
			get_str(pr, "clock_control", clocks, &clock, err) < 0 ||
			get_str(pr, "cache_control", caches, &cache, err) < 0 || get_count(pr, "launch_skip", &skip, err) < 0 ||
			get_count(pr, "launch_count", &count, err) < 0)
		return -1;
	if (p->replay_override)
		mode = p->replay_override;
	if (p->kernel_filter)
		kname = p->kernel_filter;
	if (p->launch_count_total > 0)
		count = p->launch_count_total;
	lp_argv_add(out, p->ncu);
	if (target) {
		lp_argv_add(out, "--target-processes");
		lp_argv_add(out, target);
	}
	if (mode) {
		lp_argv_add(out, "--replay-mode");
		lp_argv_add(out, mode);
	}
	lp_argv_add(out, "--nvtx");
	nvtx = json_object_get(pr, "nvtx");
	if (nvtx && !json_is_null(nvtx) && !json_is_object(nvtx))
		return lp_err_set(err, LP_EUSAGE, "'profiling.ncu.nvtx' must be a mapping with include/exclude");
	if (nvtx && json_is_object(nvtx)) {
		if (each_string(json_object_get(nvtx, "include"), "nvtx.include", out, "--nvtx-include", err) < 0 ||
				each_string(json_object_get(nvtx, "exclude"), "nvtx.exclude", out, "--nvtx-exclude", err) < 0)
			return -1;
	}
	if (set) {
		lp_argv_add(out, "--set");
		lp_argv_add(out, set);
	}
	if (each_string(json_object_get(pr, "sections"), "sections", out, "--section", err) < 0)
		return -1;
	metrics = json_object_get(pr, "metrics");
	if (each_string(metrics, "metrics", NULL, NULL, err) < 0)
		return -1;
	if (metrics && json_array_size(metrics) > 0) {
		struct lp_buf b = LP_BUF_INIT;
		json_t *x;
		json_array_foreach(metrics, i, x)
			lp_buf_addf(&b, "%s%s", i ? "," : "", json_string_value(x));
		lp_argv_add(out, "--metrics");
		lp_argv_add(out, b.data);
		lp_buf_release(&b);
	}
	if (kname && !p->kernel_id) {
		lp_argv_add(out, "--kernel-name");
		lp_argv_add(out, kname);
	}
	if (p->kernel_id) {
		lp_argv_add(out, "--kernel-id");
		lp_argv_add(out, p->kernel_id);
	}
	if (kbase) {
		lp_argv_add(out, "--kernel-name-base");
		lp_argv_add(out, kbase);
	}
	if (p->filter_mode) {
		lp_argv_add(out, "--filter-mode");
		lp_argv_add(out, p->filter_mode);
	}
	if (skip > 0)
		lp_argv_addf(out, "--launch-skip=%ld", skip);
	if (count > 0)
		lp_argv_addf(out, "--launch-count=%ld", count);
	if (count > 0 && p->kill_after_count)
		lp_argv_add(out, "--kill=on");
	if (clock) {
		lp_argv_add(out, "--clock-control");
		lp_argv_add(out, clock);
	}
	if (cache) {
		lp_argv_add(out, "--cache-control");
		lp_argv_add(out, cache);
	}
	fo = json_object_get(pr, "force_overwrite");
	if (fo && !json_is_boolean(fo) && !json_is_null(fo))
		return lp_err_set(err, LP_EUSAGE, "'profiling.ncu.force_overwrite' must be true or false");
	if (json_is_true(fo))
		lp_argv_add(out, "--force-overwrite");
	lp_argv_add(out, "--export");
	lp_argv_addf(out, "%s/%s", p->out_dir, name ? name : "run");
	if (!p->workload || !p->workload[0])
		return lp_err_set(err, LP_EUSAGE, "no workload to profile");
	for (i = 0; p->workload[i]; i++)
		lp_argv_add(out, p->workload[i]);
	return 0;
}

/* ---- sections ---- */

void lp_ncu_sections_release(struct lp_ncu_sections *s)
{
	size_t i;
	for (i = 0; i < s->n; i++)
		free(s->ids[i]);
	free(s->ids);
	s->ids = NULL;
	s->n = 0;
}

int lp_ncu_sections_parse(const char *text, struct lp_ncu_sections *out)
{
	const char *line = text;
	size_t cap = 0;
	int in_table = 0;
	memset(out, 0, sizeof(*out));
	while (line && *line) {
		const char *eol = strchr(line, '\n'), *p = line;
		size_t n;
		while (*p == ' ' || *p == '\t')
			p++;
		n = strcspn(p, " \t\r\n");
		if (!in_table) {
			if (n == 10 && !strncmp(p, "Identifier", 10))
				in_table = 1;
		} else if (n > 0 && *p != '-' && *p != '=') {
			if (LP_ARRAY_RESERVE(out->ids, cap, out->n + 1, NULL) < 0)
				return -1;
			out->ids[out->n] = strndup(p, n);
			if (!out->ids[out->n])
				return -1;
			out->n++;
		}
		line = eol ? eol + 1 : NULL;
	}
	return out->n ? 0 : -1;
}

int lp_ncu_sections_list(const char *ncu, double timeout_s, struct lp_ncu_sections *out, struct lp_err *err)
{
	const char *argv[] = { ncu, "--list-sections", NULL };
	struct lp_proc_spec s;
	struct lp_proc_result r;
	struct lp_buf text = LP_BUF_INIT;
	int rc = -1;
	memset(out, 0, sizeof(*out));
	memset(&s, 0, sizeof(s));
	s.argv = argv;
	s.timeout_s = timeout_s > 0 ? timeout_s : 60;
	if (lp_tools_query(&s, 1 << 20, &text, &r, err) == 0) {
		if (!(r.exited && r.exit_code == 0) || lp_ncu_sections_parse(text.data, out) < 0)
			lp_err_set(err, LP_EENV, "'%s --list-sections' gave no section table: %.200s", ncu, text.data);
		else
			rc = 0;
	}
	lp_buf_release(&text);
	return rc;
}

int lp_ncu_sections_check(const json_t *preset, const struct lp_ncu_sections *known, struct lp_err *err)
{
	json_t *list = json_object_get(preset, "sections"), *x;
	size_t i, j;
	if (!json_is_array(list))
		return 0;
	json_array_foreach(list, i, x) {
		const char *s = json_string_value(x);
		const char *best = NULL;
		int best_d = 4, found = 0;
		if (!s || lp_str_starts_with(s, "regex:"))
			continue;
		for (j = 0; j < known->n; j++) {
			int d;
			if (!strcmp(known->ids[j], s)) {
				found = 1;
				break;
			}
			d = lp_str_edit_distance(s, known->ids[j], 4);
			if (d < best_d) {
				best_d = d;
				best = known->ids[j];
			}
		}
		if (!found) {
			lp_err_set(err, LP_EUSAGE, "unknown ncu section 'profiling.ncu.sections[%zu]': '%s'", i, s);
			if (best)
				lp_err_hint(err, "did you mean '%s'? ('ncu --list-sections' lists this version's identifiers)", best);
			else
				lp_err_hint(err, "'ncu --list-sections' lists this version's identifiers");
			return -1;
		}
	}
	return 0;
}

/* ---- running ---- */

int lp_ncu_log_scan(const char *text)
{
	int f = 0;
	if (strstr(text, "No kernels were profiled"))
		f |= LP_NCU_LOG_NOTHING_PROFILED;
	if (strstr(text, "Unsupported API during capture"))
		f |= LP_NCU_LOG_UNSUPPORTED_API;
	if (strstr(text, "is not supported in range replay"))
		f |= LP_NCU_LOG_RANGE_METRIC;
	if (strstr(text, "ERR_NVGPUCTRPERM"))
		f |= LP_NCU_LOG_NVGPUCTRPERM;
	return f;
}

void lp_ncu_log_progress(const char *text, struct lp_ncu_log_progress *out)
{
	static const char key[] = "==PROF== Profiling \"";
	const char *at = text;
	memset(out, 0, sizeof(*out));
	while (at && (at = strstr(at, key)) != NULL) {
		const char *name = at + sizeof(key) - 1, *q = strchr(name, '"');
		const char *end = strstr(name, "==PROF==");
		const char *e2 = strstr(name, "==ERROR==");
		const char *c, *passes;
		if (e2 && (!end || e2 < end))
			end = e2;
		if (!end)
			end = name + strlen(name);
		for (c = q ? q : name; c < end && *c != '\n'; c++)
			out->marks += *c == '.' || *c == '%';
		passes = strstr(q ? q : name, " passes");
		if (passes && passes < end) {
			out->done++;
			out->open = 0;
			out->open_name[0] = '\0';
		} else if (*end) {
			out->failed++;
		} else {
			out->open = 1;
			snprintf(out->open_name, sizeof(out->open_name), "%.*s", q ? (int)(q - name) : 0, name);
		}
		at = end;
	}
}

void lp_ncu_outcome_release(struct lp_ncu_outcome *o)
{
	lp_buf_release(&o->metrics_na);
}

int lp_ncu_export(const char *ncu, const char *report, const char *page, const char *csv_path,
	const char *log_path, double timeout_s, struct lp_buf *cmds, struct lp_err *err)
{
	const char *argv[] = { ncu, "--import", report, "--csv", "--page", page, "--print-units", "base", NULL };
	struct lp_proc_env env[] = { { "LC_ALL", "C" } };
	struct lp_proc_spec s;
	struct lp_proc_result r;
	struct lp_buf d = LP_BUF_INIT;
	memset(&s, 0, sizeof(s));
	s.argv = argv;
	s.env = env;
	s.n_env = 1;
	s.stdout_path = csv_path;
	s.stderr_path = log_path;
	s.timeout_s = timeout_s;
	if (cmds)
		lp_proc_render(&s, cmds);
	if (lp_proc_run(&s, &r, err) < 0)
		return -1;
	if (r.exited && r.exit_code == 0)
		return 0;
	lp_proc_describe(&r, &s, &d);
	lp_err_set(err, LP_EPARTIAL, "exporting the %s page of '%s' failed: %s", page, report, d.data);
	lp_err_hint(err, "see %s", log_path);
	lp_buf_release(&d);
	return -1;
}

struct na_ctx {
	const json_t *wanted;
	int *seen;
	int rows;
};

static int na_cb(const struct lp_ncu_result *r, void *vctx, struct lp_err *err)
{
	struct na_ctx *c = vctx;
	size_t i, j;
	(void)err;
	c->rows++;
	for (i = 0; i < json_array_size(c->wanted); i++) {
		const char *w = json_string_value(json_array_get(c->wanted, i));
		for (j = 0; w && j < r->n_metrics; j++)
			if (r->metrics[j].valid && !strcmp(r->metrics[j].name, w))
				c->seen[i] = 1;
	}
	return 0;
}

/* Rank mode (see ncu.h): ncu's argv up to the workload goes into LLMPROF_NCU_EXEC (0x1f between
 * the arguments, a readable copy into cmds), the process runs the workload alone with the gate
 * preloaded. env has room for 4 more; *argv_out points into av. */
static int gate_spawn(const struct lp_ncu_plan *p, const struct lp_argv *av, struct lp_proc_env *env, size_t *n_env,
	struct lp_buf *exec, struct lp_buf *preload, struct lp_buf *glog, struct lp_buf *rank, struct lp_buf *cmds,
	const char *const **argv_out, struct lp_err *err)
{
	const char *const *a = lp_argv_get(av);
	const char *old = getenv("LD_PRELOAD");
	size_t n_wl = 0, n = av->n, i;
	while (p->workload[n_wl])
		n_wl++;
	if (n_wl == 0 || n_wl >= n)
		return lp_err_set(err, LP_EOTHER, "internal: the ncu command line does not end with the workload");
	lp_buf_adds(cmds, "# only rank ");
	lp_buf_addf(rank, "%d", p->rank);
	lp_buf_adds(cmds, rank->data);
	lp_buf_adds(cmds, " runs under ncu (libllmprof_ncu_gate.so re-executes it as):");
	for (i = 0; i < n - n_wl; i++) {
		lp_buf_addf(exec, "%s%s", i ? "\x1f" : "", a[i]);
		lp_buf_addf(cmds, " %s", a[i]);
	}
	lp_buf_adds(cmds, " <its argv>\n");
	lp_buf_adds(preload, p->rank_gate);
	if (old && *old)
		lp_buf_addf(preload, ":%s", old);
	lp_fs_join(glog, p->logs_dir, "ncu_gate.log");
	if (exec->oom || preload->oom || glog->oom || rank->oom || cmds->oom)
		return lp_oom(err);
	env[(*n_env)++] = (struct lp_proc_env){ "LD_PRELOAD", preload->data };
	env[(*n_env)++] = (struct lp_proc_env){ "LLMPROF_NCU_RANK", rank->data };
	env[(*n_env)++] = (struct lp_proc_env){ "LLMPROF_NCU_EXEC", exec->data };
	env[(*n_env)++] = (struct lp_proc_env){ "LLMPROF_NCU_GATE_LOG", glog->data };
	*argv_out = a + (n - n_wl);
	return 0;
}

int lp_ncu_run(const struct lp_ncu_plan *p, struct lp_ncu_outcome *o, struct lp_err *err)
{
	struct lp_argv av = LP_ARGV_INIT;
	struct lp_buf cmds = LP_BUF_INIT, log = LP_BUF_INIT, text = LP_BUF_INIT, path = LP_BUF_INIT;
	struct lp_buf gexec = LP_BUF_INIT, gpre = LP_BUF_INIT, glog = LP_BUF_INIT, grank = LP_BUF_INIT;
	struct lp_proc_env env[38];
	struct lp_proc_spec s;
	struct lp_ncu_plan plan = *p;
	const char *name = json_string_value(json_object_get(p->preset, "name"));
	size_t n_env = 0, i;
	int rc = -1, flags = 0, attempt;
	memset(o, 0, sizeof(*o));
	lp_buf_init(&o->metrics_na, 0);
	if (!name)
		name = "run";
	if (lp_fs_mkdir_p(p->out_dir, err) < 0 || lp_fs_mkdir_p(p->logs_dir, err) < 0)
		return -1;
	if (p->sections_known && lp_ncu_sections_check(p->preset, p->sections_known, err) < 0)
		return -1;
	env[n_env++] = (struct lp_proc_env){ "LC_ALL", "C" };
	for (i = 0; i < p->n_env && n_env < 34; i++)
		env[n_env++] = p->env[i];   /* 4 left for the rank mode */
	lp_fs_join(&log, p->logs_dir, "ncu.log");
	snprintf(o->report, sizeof(o->report), "%s/%s.ncu-rep", p->out_dir, name);
	for (attempt = 0; attempt < 2; attempt++) {
		lp_argv_release(&av);
		if (lp_ncu_argv(&plan, &av, err) < 0)
			goto out;
		memset(&s, 0, sizeof(s));
		s.argv = lp_argv_get(&av);
		s.env = env;
		s.n_env = n_env;
		if (p->rank_gate) {
			lp_buf_reset(&gexec);
			lp_buf_reset(&gpre);
			lp_buf_reset(&glog);
			lp_buf_reset(&grank);
			if (gate_spawn(p, &av, env, &s.n_env, &gexec, &gpre, &glog, &grank, &cmds, &s.argv, err) < 0)
				goto out;
		}
		s.stdout_path = log.data;
		s.stderr_path = log.data;
		s.timeout_s = p->timeout_s;
		s.tick = p->tick;
		s.tick_ctx = p->tick_ctx;
		s.should_stop = p->should_stop;
		lp_proc_render(&s, &cmds);
		remove(o->report);
		if (lp_proc_run(&s, &o->profile, err) < 0)
			goto out;
		lp_buf_reset(&text);
		lp_fs_read_file(log.data, &text, 64u << 20, NULL);
		flags = lp_ncu_log_scan(text.data);
		if (o->profile.interrupted || o->profile.timed_out || o->profile.stopped) {
			lp_buf_reset(&path);
			lp_proc_describe(&o->profile, &s, &path);
			if ((o->profile.timed_out || o->profile.stopped) && !o->profile.interrupted && p->keep_on_timeout &&
			    lp_fs_is_file(o->report)) {
				/* ncu got SIGTERM: it ends the program and closes its report ("Trying to shutdown
				 * target application"); the exports below say whether anything is in it */
				o->stopped_by_limit = 1;
				snprintf(o->limit_note, sizeof(o->limit_note), "ncu %s", path.data);
				break;
			}
			lp_err_set(err, LP_EPARTIAL, "ncu %s", path.data);
			lp_err_hint(err, "see %s", log.data);
			goto out;
		}
		if (flags & LP_NCU_LOG_NVGPUCTRPERM) {
			lp_err_set(err, LP_EENV, "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM)");
			lp_err_hint(err, "run as root, or set 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' "
				"in /etc/modprobe.d/ and reload the driver");
			goto out;
		}
		if (flags & LP_NCU_LOG_RANGE_METRIC) {
			lp_err_set(err, LP_EUSAGE, "a metric of profiling.ncu.metrics is not supported in %s replay "
				"(see %s)", plan.replay_override ? plan.replay_override : "range", log.data);
			lp_err_hint(err, "range replay cannot count SASS instructions: use profiling/ncu=ncu.light or drop "
				"the smsp__sass_* metrics");
			goto out;
		}
		if ((flags & LP_NCU_LOG_UNSUPPORTED_API) && attempt == 0 &&
				!lp_fs_is_file(o->report)) {
			const char *m = plan.replay_override ? plan.replay_override :
				json_string_value(json_object_get(p->preset, "replay_mode"));
			if (m && !strcmp(m, "range")) {
				plan.replay_override = "app-range";
				o->retried_app_range = 1;
				continue;
			}
		}
		break;
	}
	if (flags & LP_NCU_LOG_NOTHING_PROFILED) {
		o->profiled_nothing = 1;
		rc = 0;
		goto out;
	}
	if (!lp_fs_is_file(o->report)) {
		lp_buf_reset(&path);
		lp_proc_describe(&o->profile, &s, &path);
		lp_err_set(err, LP_EPARTIAL, "ncu wrote no report '%s' (%s)", o->report, path.data);
		lp_err_hint(err, "see %s", log.data);
		goto out;
	}
	snprintf(o->raw_csv, sizeof(o->raw_csv), "%s/%s_raw.csv", p->out_dir, name);
	snprintf(o->details_csv, sizeof(o->details_csv), "%s/%s_details.csv", p->out_dir, name);
	lp_fs_join(&path, p->logs_dir, "ncu_export_raw.log");
	if (lp_ncu_export(p->ncu, o->report, "raw", o->raw_csv, path.data, p->timeout_s, &cmds, err) < 0) {
		if (o->stopped_by_limit) {
			lp_err_set(err, LP_EPARTIAL, "%s, and its report could not be read (%s)", o->limit_note, err->msg);
			lp_err_hint(err, "see %s", log.data);
		}
		goto out;
	}
	lp_fs_join(&path, p->logs_dir, "ncu_export_details.log");
	if (lp_ncu_export(p->ncu, o->report, "details", o->details_csv, path.data, p->timeout_s, &cmds, err) < 0)
		goto out;
	{
		const json_t *wanted = json_object_get(p->preset, "metrics");
		struct na_ctx c = { wanted, NULL, 0 };
		size_t n = json_array_size(wanted);
		c.seen = calloc(n + 1, sizeof(int));
		if (!c.seen) {
			lp_oom(err);
			goto out;
		}
		if (lp_ncu_raw_stream_ex(o->raw_csv, LP_NCU_RAW_SKIP_NVTX, na_cb, &c, err) < 0) {
			free(c.seen);
			goto out;
		}
		for (i = 0; i < n; i++)
			if (!c.seen[i])
				lp_buf_addf(&o->metrics_na, "%s%s", o->metrics_na.len ? ", " : "",
					json_string_value(json_array_get(wanted, i)));
		o->results = c.rows;
		free(c.seen);
	}
	rc = 0;
out:
	rc = lp_tools_write_cmds(p->out_dir, &cmds, rc, err);
	lp_argv_release(&av);
	lp_buf_release(&cmds);
	lp_buf_release(&log);
	lp_buf_release(&text);
	lp_buf_release(&path);
	lp_buf_release(&gexec);
	lp_buf_release(&gpre);
	lp_buf_release(&glog);
	lp_buf_release(&grank);
	return rc;
}
