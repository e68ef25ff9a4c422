/* pipeline.c: the phases of `llmprof run` in order (see pipeline.h). This is where run -> collect
 * -> parse -> analyze -> report is strung together: each phase leaves its artifacts in the run
 * folder, records them in manifest.json and its status in phases.json before the next starts.
 * The phases themselves are in phases.c and phase_ncu.c; resolving the workload in workload.c. */
#include "run/pipeline.h"

#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/rundir.h"
#include "core/fs.h"
#include "core/proc.h"
#include "run/pipeline_int.h"
#include "run/rebuild.h"

const char *const lp_pl_phase_names[PH_COUNT] = {
	"provenance", "capture", "nsys", "select", "ncu", "baseline", "analysis", "reports",
};

/* ---- small helpers ---- */

const char *lp_pl_cfg_str(const struct lp_run *run, const char *key)
{
	const json_t *v = lp_config_get(&run->cfg, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

int64_t lp_pl_cfg_int(const struct lp_run *run, const char *key, int64_t dflt)
{
	const json_t *v = lp_config_get(&run->cfg, key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

double lp_pl_cfg_num(const struct lp_run *run, const char *key, double dflt)
{
	const json_t *v = lp_config_get(&run->cfg, key);
	return json_is_number(v) ? json_number_value(v) : dflt;
}

int lp_pl_cfg_bool(const struct lp_run *run, const char *key)
{
	return json_is_true(lp_config_get(&run->cfg, key));
}

static void emit_phase(struct lp_pl_state *st, int ph)
{
	struct lp_run_event ev = { 0 };
	ev.kind = LP_RUN_EV_PHASE;
	ev.phase = lp_pl_phase_names[ph];
	ev.status = st->ph[ph].status;
	ev.text = st->ph[ph].reason;
	ev.profiled = -1;
	lp_run_emit(st->sink, &ev);
}

/* An ok phase whose artifacts could not all be written is failed; any other keeps its status.
 * The reason says which files (appended to what it says already). */
static void apply_write_failures(struct lp_pl_state *st, int ph, const char *what)
{
	struct lp_phase_status *p = &st->ph[ph];
	size_t n = strlen(p->reason);
	if (!strcmp(p->status, "ok"))
		snprintf(p->status, sizeof(p->status), "failed");
	snprintf(p->reason + n, sizeof(p->reason) - n, "%sartifacts not written: %s", n ? "; " : "", what);
}

void lp_pl_set_phase(struct lp_pl_state *st, int ph, const char *status, const char *fmt, ...)
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
	if (st->write_failed[ph].len)
		apply_write_failures(st, ph, st->write_failed[ph].data);
	emit_phase(st, ph);
}

int lp_pl_wrote(struct lp_pl_state *st, int ph, int rc, const char *rel, const struct lp_err *err)
{
	struct lp_buf one = LP_BUF_INIT;
	if (rc >= 0)
		return rc;
	lp_buf_addf(&one, "'%s' (%s)", rel, err && err->msg[0] ? err->msg : "unknown error");
	lp_buf_addf(&st->write_failed[ph], "%s%s", st->write_failed[ph].len ? "; " : "", one.data);
	lp_run_warnf(st->sink, "%s: could not write or record %s", lp_pl_phase_names[ph], one.data);
	if (st->ph[ph].status[0]) {   /* the phase has its status already: it changes now */
		apply_write_failures(st, ph, one.data);
		emit_phase(st, ph);
	}
	lp_buf_release(&one);
	return rc;
}

void lp_pl_save_phases(struct lp_pl_state *st)
{
	struct lp_err err = LP_ERR_INIT;
	size_t n = 0;
	while (n < PH_COUNT && st->ph[n].status[0])
		n++;
	if (lp_phases_write(st->run->dir.path, st->ph, n, st->traced_s, st->untraced_s, &err) < 0) {
		lp_run_warnf(st->sink, "%s", err.msg);
		return;
	}
	lp_pl_wrote(st, PH_ANALYSIS, lp_rundir_record(&st->run->dir, "phases.json", lp_pl_phase_names[PH_ANALYSIS], &err),
		"phases.json", &err);
}

void lp_pl_progress(struct lp_pl_state *st, int ph, const char *what)
{
	struct lp_run_event ev = { 0 };
	ev.kind = LP_RUN_EV_PROGRESS;
	ev.phase = lp_pl_phase_names[ph];
	ev.index = ph;
	ev.count = PH_COUNT;
	ev.text = what ? what : "";
	ev.profiled = -1;
	lp_run_emit(st->sink, &ev);
}

/* Counts the "==PROF== Profiling" lines ncu appended since the last tick. */
static void count_new_lines(struct lp_pl_ticker *t)
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

void lp_pl_tick(void *ctx, double elapsed_s)
{
	struct lp_pl_ticker *t = ctx;
	struct lp_run_event ev = { 0 };
	if (!t->sink || !t->sink->ticks)
		return;
	if (t->log_path)
		count_new_lines(t);
	ev.kind = LP_RUN_EV_TICK;
	ev.phase = t->phase;
	ev.text = "";
	ev.elapsed_s = elapsed_s;
	ev.profiled = t->log_path ? (long)t->profiled : -1;
	lp_run_emit(t->sink, &ev);
}

void lp_pl_tick_end(const struct lp_run_sink *sink, double wall_s)
{
	struct lp_run_event ev = { 0 };
	if (!sink || !sink->ticks)
		return;
	ev.kind = LP_RUN_EV_TICK_END;
	ev.text = "";
	ev.elapsed_s = wall_s;
	ev.profiled = -1;
	lp_run_emit(sink, &ev);
}

/* Records every file under run/<sub> (recursively) that the manifest does not list yet, under
 * `phase` (the logs/ folder is shared: a log keeps the phase that first wrote it). */
static void record_tree(struct lp_pl_state *st, const char *sub, int ph)
{
	struct lp_rundir *rd = &st->run->dir;
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
			if (lp_fs_is_dir(full.data)) {
				record_tree(st, rel.data, ph);
			} else if (lp_fs_is_file(full.data) && !lp_rundir_has(rd, rel.data)) {
				struct lp_err err = LP_ERR_INIT;
				lp_pl_wrote(st, ph, lp_rundir_record(rd, rel.data, lp_pl_phase_names[ph], &err), rel.data, &err);
			}
		}
		lp_buf_release(&full);
		free(names[i]);
	}
	free(names);
	lp_buf_release(&dir);
	lp_buf_release(&rel);
}

void lp_pl_record_tree(struct lp_pl_state *st, const char *sub, int ph)
{
	record_tree(st, sub, ph);
}

int lp_pl_abs_path(const char *path, struct lp_buf *out)
{
	char real[PATH_MAX];
	if (!realpath(path, real))
		return 0;  /* keep it as given */
	lp_buf_reset(out);
	return lp_buf_adds(out, real);
}

/* ---- 6 analysis + 7 reports ---- */

static void phase_analysis_reports(struct lp_pl_state *st)
{
	struct lp_err err = LP_ERR_INIT;
	struct lp_rebuild_outcome oc;
	size_t i;

	lp_pl_progress(st, PH_ANALYSIS, "stages, operators, kernels, MFU/MBU, reports");
	if (!st->have_prof) {
		lp_pl_set_phase(st, PH_ANALYSIS, "skipped", "no trace to analyze (the capture phase failed)");
		lp_pl_set_phase(st, PH_REPORTS, "skipped", "no analysis");
		lp_pl_save_phases(st);
		return;
	}
	/* recorded as ok before rendering, so that the reports show the statuses a later
	 * `llmprof report` reproduces; rewritten as failed when rendering fails */
	lp_pl_set_phase(st, PH_ANALYSIS, "ok", NULL);
	lp_pl_set_phase(st, PH_REPORTS, "ok", NULL);
	lp_pl_save_phases(st);
	if (lp_report_rebuild_ex(st->run->dir.path, &oc, &err) < 0) {
		lp_pl_set_phase(st, PH_ANALYSIS, "failed", "%s", err.msg);
		lp_pl_set_phase(st, PH_REPORTS, "failed", "no analysis");
		st->pl->fail_kind = st->pl->fail_kind ? st->pl->fail_kind : LP_EPARTIAL;
		lp_pl_save_phases(st);
		lp_rebuild_outcome_release(&oc);
		return;
	}
	if (oc.damaged) {
		lp_run_warnf(st->sink, "damaged artifacts: %s", oc.damage.data);
		st->pl->fail_kind = st->pl->fail_kind ? st->pl->fail_kind : LP_EPARTIAL;
	}
	for (i = 0; oc.wrote && i < LP_REPORT_N_FILES; i++) {
		lp_err_clear(&err);
		lp_pl_wrote(st, PH_REPORTS, lp_rundir_record(&st->run->dir, lp_report_files[i].name, "reports", &err),
			lp_report_files[i].name, &err);
	}
	if (st->write_failed[PH_REPORTS].len)
		lp_pl_save_phases(st);   /* the reports phase failed after all: phases.json says so */
	lp_rebuild_outcome_release(&oc);
}

int lp_pipeline_run(struct lp_pipeline *pl, struct lp_run *run, struct lp_err *err)
{
	struct lp_pl_state st;
	struct lp_err serr = LP_ERR_INIT;
	json_t *tools = lp_tools_to_json(pl->tools);
	int i, rc;

	memset(&st, 0, sizeof(st));
	st.pl = pl;
	st.run = run;
	st.sink = pl->opts.sink;
	for (i = 0; i < PH_COUNT; i++) {
		snprintf(st.ph[i].name, sizeof(st.ph[i].name), "%s", lp_pl_phase_names[i]);
		lp_buf_init(&st.write_failed[i], 0);
	}

	lp_pl_progress(&st, PH_PROVENANCE, run->dir.path);
	run->workload_argv = (const char *const *)lp_argv_get(&pl->workload);
	run->workload_argc = pl->workload.n;
	rc = lp_run_provenance(run, tools, err);
	json_decref(tools);
	if (rc < 0) {
		if (lp_rundir_set_status(&run->dir, LP_RUN_FAILED, &serr) < 0)
			lp_run_warnf(st.sink, "%s", serr.msg);
		return -1;
	}
	lp_pl_set_phase(&st, PH_PROVENANCE, "ok", NULL);
	lp_pl_save_phases(&st);

	lp_pl_probe_bandwidth(&st);
	lp_pl_phase_capture(&st);
	if (!lp_proc_interrupted())
		lp_pl_phase_nsys(&st);
	if (!lp_proc_interrupted())
		lp_pl_phase_select(&st);
	if (!lp_proc_interrupted())
		lp_pl_phase_ncu(&st);
	if (!lp_proc_interrupted())
		lp_pl_phase_baseline(&st);
	phase_analysis_reports(&st);

	for (i = 0; i < PH_COUNT; i++)
		if (!strcmp(st.ph[i].status, "failed") && !pl->fail_kind)
			pl->fail_kind = LP_EPARTIAL;
	if (lp_rundir_set_status(&run->dir, lp_proc_interrupted() ? LP_RUN_INTERRUPTED : pl->fail_kind == 0 ?
		    LP_RUN_OK : (st.have_prof ? LP_RUN_PARTIAL : LP_RUN_FAILED), &serr) < 0) {
		/* manifest.json still says "running": the folder is not what it should be */
		lp_run_warnf(st.sink, "%s", serr.msg);
		pl->fail_kind = pl->fail_kind ? pl->fail_kind : LP_EPARTIAL;
	}
	if (st.have_topn)
		lp_topn_release(&st.topn);
	if (st.have_prof)
		lp_profile_release(&st.prof);
	for (i = 0; i < PH_COUNT; i++)
		lp_buf_release(&st.write_failed[i]);
	return 0;
}
