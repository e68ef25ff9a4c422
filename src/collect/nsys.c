/* nsys.c: the Nsight Systems phase (see nsys.h). Reads the preset json, runs nsys through the
 * process runner, leaves nsys/run.nsys-rep, summary_<report>.csv and run.sqlite for the parsers
 * (parse/nsys_csv.c, parse/nsys_sqlite.c). */
#include "collect/nsys.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "collect/tools.h"
#include "core/buf.h"
#include "core/fs.h"

static const char *const known_keys[] = {
	"enable", "trace", "sample", "capture_range", "capture_range_end", "nvtx_capture",
	"stats_reports", "export_sqlite", "extra_args", NULL,
};

static int check_keys(const json_t *preset, struct lp_err *err)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)(uintptr_t)preset, key, v) {
		size_t i;
		int ok = 0;
		(void)v;
		for (i = 0; known_keys[i]; i++)
			if (!strcmp(key, known_keys[i]))
				ok = 1;
		if (!ok)
			return lp_err_set(err, LP_EUSAGE, "unknown key 'profiling.nsys.%s'", key);
	}
	return 0;
}

/* A string value, NULL for null/absent; "none" counts as absent when none_is_null. */
static int get_str(const json_t *preset, const char *key, int none_is_null, const char **out, struct lp_err *err)
{
	json_t *v = json_object_get(preset, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return lp_err_set(err, LP_EUSAGE, "'profiling.nsys.%s' must be a string", key);
	*out = json_string_value(v);
	if (none_is_null && !strcmp(*out, "none"))
		*out = NULL;
	return 0;
}

static int join_list(const json_t *preset, const char *key, struct lp_buf *out, struct lp_err *err)
{
	json_t *v = json_object_get(preset, key), *x;
	size_t i;
	lp_buf_reset(out);
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return lp_err_set(err, LP_EUSAGE, "'profiling.nsys.%s' must be a list", key);
	json_array_foreach(v, i, x) {
		if (!json_is_string(x))
			return lp_err_set(err, LP_EUSAGE, "'profiling.nsys.%s[%zu]' must be a string", key, i);
		if (i)
			lp_buf_addc(out, ',');
		lp_buf_adds(out, json_string_value(x));
	}
	return 0;
}

int lp_nsys_profile_argv(const struct lp_nsys_plan *p, struct lp_argv *out, int *needs_register_env,
	struct lp_err *err)
{
	struct lp_buf b = LP_BUF_INIT;
	const char *sample, *range, *range_end, *capture;
	json_t *extra;
	size_t i;
	*needs_register_env = 0;
	if (!json_is_object(p->preset))
		return lp_err_set(err, LP_EUSAGE, "'profiling.nsys' must be a mapping");
	if (check_keys(p->preset, err) < 0 || get_str(p->preset, "sample", 0, &sample, err) < 0 ||
			get_str(p->preset, "capture_range", 1, &range, err) < 0 ||
			get_str(p->preset, "capture_range_end", 0, &range_end, err) < 0 ||
			get_str(p->preset, "nvtx_capture", 0, &capture, err) < 0)
		return -1;
	if (range && strcmp(range, "nvtx") && strcmp(range, "cudaProfilerApi") && strcmp(range, "hotkey"))
		return lp_err_set(err, LP_EUSAGE, "'profiling.nsys.capture_range' is '%s': use none, cudaProfilerApi or nvtx", range);
	if (range && !strcmp(range, "nvtx") && !capture)
		return lp_err_set(err, LP_EUSAGE, "'profiling.nsys.capture_range' is nvtx but 'profiling.nsys.nvtx_capture' is null");
	if (capture) {
		size_t n = strlen(capture);
		if (n && capture[n - 1] == '/') {
			lp_err_set(err, LP_EUSAGE, "'profiling.nsys.nvtx_capture' is '%s', in ncu's form", capture);
			return lp_err_hint(err, "nsys wants range@domain without '/', e.g. decode_all@LLM");
		}
	}
	lp_argv_add(out, p->nsys);
	lp_argv_add(out, "profile");
	if (join_list(p->preset, "trace", &b, err) < 0)
		goto fail;
	if (b.len)
		lp_argv_addf(out, "--trace=%s", b.data);
	if (sample)
		lp_argv_addf(out, "--sample=%s", sample);
	if (range) {
		lp_argv_addf(out, "--capture-range=%s", range);
		if (range_end)
			lp_argv_addf(out, "--capture-range-end=%s", range_end);
	}
	if (capture) {
		if (!range)
			lp_argv_add(out, "--capture-range=nvtx");
		lp_argv_addf(out, "--nvtx-capture=%s", capture);
		*needs_register_env = 1;
	}
	lp_argv_addf(out, "--output=%s/run", p->out_dir);
	lp_argv_add(out, "--force-overwrite=true");
	extra = json_object_get(p->preset, "extra_args");
	if (extra && !json_is_null(extra)) {
		json_t *x;
		if (!json_is_array(extra)) {
			lp_err_set(err, LP_EUSAGE, "'profiling.nsys.extra_args' must be a list");
			goto fail;
		}
		json_array_foreach(extra, i, x) {
			if (!json_is_string(x)) {
				lp_err_set(err, LP_EUSAGE, "'profiling.nsys.extra_args[%zu]' must be a string", i);
				goto fail;
			}
			lp_argv_add(out, json_string_value(x));
		}
	}
	for (i = 0; p->workload && p->workload[i]; i++)
		lp_argv_add(out, p->workload[i]);
	lp_buf_release(&b);
	if (!p->workload || !p->workload[0])
		return lp_err_set(err, LP_EUSAGE, "no workload to profile");
	return 0;
fail:
	lp_buf_release(&b);
	return -1;
}

/* Runs one step, appends its command to cmd.txt; -1 when it could not start or failed. */
static int step(const struct lp_nsys_plan *p, const char *const *argv, const struct lp_proc_env *env, size_t n_env,
	const char *log_name, struct lp_buf *cmds, struct lp_proc_result *r, int allow_nonzero, struct lp_err *err)
{
	struct lp_buf log = LP_BUF_INIT, d = LP_BUF_INIT;
	struct lp_proc_spec s;
	int rc = 0;
	lp_fs_join(&log, p->logs_dir, log_name);
	memset(&s, 0, sizeof(s));
	s.argv = argv;
	s.env = env;
	s.n_env = n_env;
	s.stdout_path = log.data;
	s.stderr_path = log.data;
	s.timeout_s = p->timeout_s;
	s.tick = p->tick;
	s.tick_ctx = p->tick_ctx;
	lp_proc_render(&s, cmds);
	if (lp_proc_run(&s, r, err) < 0) {
		rc = -1;
	} else if (r->interrupted || r->timed_out || (!allow_nonzero && !(r->exited && r->exit_code == 0))) {
		lp_proc_describe(r, &s, &d);
		lp_err_set(err, r->interrupted ? LP_EPARTIAL : LP_EPARTIAL, "'%s %s' failed: %s", argv[0], argv[1], d.data);
		lp_err_hint(err, "see %s", log.data);
		rc = -1;
	}
	lp_buf_release(&log);
	lp_buf_release(&d);
	return rc;
}

int lp_nsys_run(const struct lp_nsys_plan *p, struct lp_nsys_outcome *o, struct lp_err *err)
{
	struct lp_argv av = LP_ARGV_INIT;
	struct lp_buf cmds = LP_BUF_INIT, path = LP_BUF_INIT, base = LP_BUF_INIT;
	struct lp_proc_env env[34];
	struct lp_proc_result r;
	size_t n_env = 0, i;
	int reg, rc = -1;
	json_t *reports, *x, *exp;
	memset(o, 0, sizeof(*o));
	if (lp_fs_mkdir_p(p->out_dir, err) < 0 || lp_fs_mkdir_p(p->logs_dir, err) < 0)
		return -1;
	if (lp_nsys_profile_argv(p, &av, &reg, err) < 0)
		goto out;
	env[n_env++] = (struct lp_proc_env){ "LC_ALL", "C" };
	if (reg)
		env[n_env++] = (struct lp_proc_env){ "NSYS_NVTX_PROFILER_REGISTER_ONLY", "0" };
	for (i = 0; i < p->n_env && n_env < 34; i++)
		env[n_env++] = p->env[i];
	/* nsys returns the workload's exit status: a failing workload is reported, not fatal here */
	if (step(p, lp_argv_get(&av), env, n_env, "nsys_profile.log", &cmds, &o->profile, 1, err) < 0)
		goto out;
	o->workload_exit = o->profile.exited ? o->profile.exit_code : -1;
	lp_buf_reset(&path);
	lp_buf_addf(&path, "%s/run.nsys-rep", p->out_dir);
	if (!lp_fs_is_file(path.data)) {
		lp_buf_reset(&path);
		lp_buf_addf(&path, "%s/run.qdrep", p->out_dir);
	}
	if (!lp_fs_is_file(path.data)) {
		lp_buf_reset(&path);
		lp_buf_addf(&path, "%s/run.qdstrm", p->out_dir);
		if (lp_fs_is_file(path.data)) {
			lp_err_set(err, LP_EENV, "nsys left only '%s': its importer failed", path.data);
			lp_err_hint(err, "the importer needs libdw.so.1 and libelf.so.1 (Debian: libdw1, libelf1); "
				"put them on LD_LIBRARY_PATH and rerun");
		} else {
			lp_err_set(err, LP_EPARTIAL, "nsys wrote no report in '%s'", p->out_dir);
			lp_err_hint(err, "see %s/nsys_profile.log", p->logs_dir);
		}
		goto out;
	}
	snprintf(o->report, sizeof(o->report), "%s", path.data);

	reports = json_object_get(p->preset, "stats_reports");
	if (json_is_array(reports) && json_array_size(reports) > 0) {
		lp_argv_release(&av);
		lp_argv_add(&av, p->nsys);
		lp_argv_add(&av, "stats");
		json_array_foreach(reports, i, x) {
			if (!json_is_string(x)) {
				lp_err_set(err, LP_EUSAGE, "'profiling.nsys.stats_reports[%zu]' must be a string", i);
				goto out;
			}
			lp_argv_add(&av, "--report");
			lp_argv_add(&av, json_string_value(x));
		}
		lp_buf_reset(&base);
		lp_buf_addf(&base, "%s/summary", p->out_dir);
		lp_argv_add(&av, "--format");
		lp_argv_add(&av, "csv");
		lp_argv_add(&av, "--output");
		lp_argv_add(&av, base.data);
		lp_argv_add(&av, "--force-export=true");
		lp_argv_add(&av, o->report);
		json_array_foreach(reports, i, x) {  /* no stale CSV from an earlier run may survive */
			lp_buf_reset(&path);
			lp_buf_addf(&path, "%s_%s.csv", base.data, json_string_value(x));
			remove(path.data);
		}
		if (step(p, lp_argv_get(&av), env, 1, "nsys_stats.log", &cmds, &r, 0, err) < 0)
			goto out;
		json_array_foreach(reports, i, x) {
			lp_buf_reset(&path);
			lp_buf_addf(&path, "%s_%s.csv", base.data, json_string_value(x));
			if (lp_fs_is_file(path.data))
				o->n_stats++;
		}
	}
	exp = json_object_get(p->preset, "export_sqlite");
	if (!exp || json_is_true(exp)) {
		lp_argv_release(&av);
		lp_buf_reset(&path);
		lp_buf_addf(&path, "%s/run.sqlite", p->out_dir);
		lp_argv_add(&av, p->nsys);
		lp_argv_add(&av, "export");
		lp_argv_add(&av, "--type");
		lp_argv_add(&av, "sqlite");
		lp_argv_add(&av, "--force-overwrite=true");
		lp_argv_add(&av, "--output");
		lp_argv_add(&av, path.data);
		lp_argv_add(&av, o->report);
		if (step(p, lp_argv_get(&av), env, 1, "nsys_export.log", &cmds, &r, 0, err) < 0)
			goto out;
		if (lp_fs_is_file(path.data))
			snprintf(o->sqlite, sizeof(o->sqlite), "%s", path.data);
	}
	rc = 0;
out:
	rc = lp_tools_write_cmds(p->out_dir, &cmds, rc, err);
	lp_argv_release(&av);
	lp_buf_release(&cmds);
	lp_buf_release(&path);
	lp_buf_release(&base);
	return rc;
}
