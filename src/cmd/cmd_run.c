/* cmd_run.c: `llmprof run`: resolve the configuration, make the run folder, write provenance,
 * then (issue 6) run the phases. The work is in src/run/ (prepare.h, pipeline.h); this file only
 * maps the command line onto it and prints what the run reports (run/events.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/fs.h"
#include "core/buf.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/proc.h"
#include "report/reports.h"
#include "run/pipeline.h"
#include "run/prepare.h"

static const char usage_line[] =
	"llmprof run [--mode light|deep] [--cfg] [--dry-run] [overrides...] [-- workload argv...]";
static const char description[] =
	"Profile an LLM workload and write the artifact bundle under artifacts.stage2_dir.\n"
	"Without '--' the workload is the reference model (model=tiny by default).\n"
	"Overrides: key=value, +key=value, ++key=value, ~key, group=option (docs/config.md),\n"
	"e.g. 'run.repeats=5 profiling/ncu=ncu.high model=llama-3.2-1b'.";

static const char *opt_mode;
static int opt_cfg, opt_dry_run;
static const struct lp_opt opts[] = {
	LP_OPT_STRING(0, "mode", &opt_mode, "MODE", "light or deep (shorthand for run.mode=MODE)"),
	LP_OPT_FLAG(0, "cfg", &opt_cfg, "print the resolved configuration as YAML and exit"),
	LP_OPT_FLAG(0, "dry-run", &opt_dry_run, "resolve everything and print the plan, run nothing"),
	LP_OPT_END,
};

static int print_cfg(const struct lp_run *run)
{
	struct lp_buf out = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	if (lp_config_dump_yaml(&run->cfg, &out, &err) < 0)
		return lp_cmd_fail(&err);
	fwrite(out.data, 1, out.len, stdout);
	lp_buf_release(&out);
	return 0;
}

static double jnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : -1;
}

/* Whether a sampled row among the terminal's top 5 has a rerun interval (none when the recorded
 * units past the first ones lie in one block: report.md's Tracing mode says so). */
static int any_interval(const json_t *rows)
{
	size_t i;
	int sampled = 0;
	for (i = 0; i < json_array_size(rows) && i < 5; i++) {
		const json_t *r = json_array_get(rows, i);
		if (!json_is_true(json_object_get(r, "sampled")))
			continue;
		if (jnum(r, "rerun_ci_ms") >= 0)
			return 1;
		sampled = 1;
	}
	return !sampled;
}

static void print_pct(const char *label, const json_t *perf, const char *key)
{
	double v = jnum(perf, key);
	if (v >= 0)
		printf("  %s %.1f%%", label, 100 * v);
	else
		printf("  %s n/a", label);
}

/* 1 when <run_dir>/<name> exists. */
static int exists_in(const char *run_dir, const char *name)
{
	struct lp_buf p = LP_BUF_INIT;
	int ok;
	lp_fs_join(&p, run_dir, name);
	ok = lp_fs_is_file(p.data);
	lp_buf_release(&p);
	return ok;
}

/* "reports: DIR/{a,b}" for the reports that exist (a failed or interrupted run has none). */
static void announce_reports(const char *run_dir)
{
	size_t i, n = 0;
	struct lp_buf list = LP_BUF_INIT;
	for (i = 0; i < LP_REPORT_N_FILES; i++)
		if (exists_in(run_dir, lp_report_files[i].name))
			lp_buf_addf(&list, "%s%s", n++ ? "," : "", lp_report_files[i].name);
	if (n == 1)
		printf("reports: %s/%s\n", run_dir, list.data);
	else if (n > 1)
		printf("reports: %s/{%s}\n", run_dir, list.data);
	else
		printf("reports: none written\n");
	lp_buf_release(&list);
}

/* The short terminal summary, read back from summary.json (the reports hold the rest). */
static void print_summary(const char *run_dir, int status)
{
	struct lp_buf path = LP_BUF_INIT;
	json_t *sum;
	size_t i;
	lp_buf_addf(&path, "%s/summary.json", run_dir);
	sum = json_load_file(path.data, 0, NULL);
	printf("run: %s (exit %d)\n", run_dir, status);
	if (sum) {
		const json_t *stages = json_object_get(sum, "stages"), *st;
		const json_t *rows = json_object_get(json_object_get(sum, "kernels"), "rows");
		const json_t *perf = json_object_get(sum, "perf"), *tok = json_object_get(sum, "tokens");
		printf("%-12s %24s %12s %12s %8s  %s\n", "stage", "latency ms (mean ± std)", "host ms", "GPU busy ms",
			"kernels", "bound");
		json_array_foreach(stages, i, st) {
			const json_t *l = json_object_get(st, "latency_ms"), *h = json_object_get(st, "host_ms");
			const json_t *g = json_object_get(st, "gpu_busy_ms"), *k = json_object_get(st, "kernels");
			const char *bound = json_string_value(json_object_get(st, "bound"));
			char gpu[32] = "n/a", kern[32] = "n/a", sd[32] = "n/a";
			if (jnum(g, "mean") >= 0)
				snprintf(gpu, sizeof(gpu), "%.3f", jnum(g, "mean"));
			if (jnum(k, "mean") >= 0)
				snprintf(kern, sizeof(kern), "%.0f", jnum(k, "mean"));
			if (jnum(l, "n") > 1)
				snprintf(sd, sizeof(sd), "%.3f", jnum(l, "std"));
			if (jnum(l, "n") == 0) {   /* only warm-up ranges: nothing measured, not zeros */
				printf("%-12s %14s   %-7s %12s %12s %8s  %s\n", json_string_value(json_object_get(st, "name")),
					"n/a", "", "n/a", "n/a", "n/a", "n/a (no measured iteration)");
				continue;
			}
			printf("%-12s %14.3f ± %-7s %12.3f %12s %8s  %s\n", json_string_value(json_object_get(st, "name")),
				jnum(l, "mean"), sd, jnum(h, "mean"), gpu, kern, bound ? bound : "n/a");
		}
		if (jnum(tok, "ttft_ms") >= 0)
			printf("time to first token: %.3f ms\n", jnum(tok, "ttft_ms"));
		if (jnum(tok, "decode_tokens_per_s") >= 0)
			printf("decode: %.1f tokens/s, %.3f ms/step\n", jnum(tok, "decode_tokens_per_s"), jnum(tok, "decode_step_ms"));
		{   /* run.baseline=reference: the program against the reference on its shape */
			const json_t *b = json_object_get(sum, "baseline"), *r;
			json_array_foreach(json_object_get(b, "rows"), i, r)
				if (jnum(r, "ratio") > 0)
					printf("vs reference: %s %.3f vs %.3f (%.2fx)\n", json_string_value(json_object_get(r, "what")),
						jnum(r, "program"), jnum(r, "reference"), jnum(r, "ratio"));
			if (json_is_object(b) && !json_is_true(json_object_get(b, "valid")))
				printf("vs reference: none (%s)\n", json_string_value(json_object_get(b, "why")));
		}
		{
			const json_t *sc = json_object_get(sum, "self_check"), *c;
			json_array_foreach(json_object_get(sc, "checks"), i, c)
				if (fabs(jnum(c, "diff")) > jnum(sc, "tolerance"))
					lp_log_warn("self-check: llmprof's %s is %.3f, the workload's own %.3f (%+.1f%%)",
						json_string_value(json_object_get(c, "what")), jnum(c, "llmprof"), jnum(c, "workload"),
						100 * jnum(c, "diff"));
		}
		json_array_foreach(perf, i, st) {
			printf("%-8s", json_string_value(json_object_get(st, "stage")));
			print_pct("MFU", st, "mfu");
			print_pct("MBU", st, "mbu");
			printf("\n");
		}
		if (json_array_size(rows)) {
			/* a sampled trace: ~ marks rows scaled from the recorded units, with their rerun interval */
			const json_t *smp = json_object_get(json_object_get(sum, "kernels"), "sampled");
			if (smp && json_is_true(json_object_get(smp, "from_first_units")))
				printf("top kernels (measured iterations, warm-up excluded; share of GPU busy time; ~ estimated "
				       "from each generation's first units, none of the %lld sampled units recorded: report.md, "
				       "Tracing mode):\n", (long long)json_integer_value(json_object_get(smp, "units_sampled_stratum")));
			else if (smp)
				printf("top kernels (measured iterations, warm-up excluded; share of GPU busy time; ~ scaled "
				       "from %lld of %lld sampled units, %s, kernels.md):\n",
					(long long)json_integer_value(json_object_get(smp, "units_recorded")),
					(long long)json_integer_value(json_object_get(smp, "units_sampled_stratum")),
					any_interval(rows) ? "+- the 95% interval of a rerun"
							   : "all in one block: no interval (report.md, Tracing mode)");
			else
				printf("top kernels (measured iterations, warm-up excluded; share of GPU busy time):\n");
			for (i = 0; i < json_array_size(rows) && i < 5; i++) {
				const json_t *r = json_array_get(rows, i);
				const char *name = json_string_value(json_object_get(r, "label"));
				int est = json_is_true(json_object_get(r, "sampled"));
				char ci[40] = "";
				if (est && jnum(r, "rerun_ci_ms") >= 0)
					snprintf(ci, sizeof(ci), " +- %.3f", jnum(r, "rerun_ci_ms"));
				printf("  %zu. %-60s %s%10.3f ms%s %6.1f%% %s%8.0f calls\n", i + 1, name ? name : "?", est ? "~" : "",
					jnum(r, "busy_ms"), ci, 100 * jnum(r, "share"), est ? "~" : "", jnum(r, "calls"));
			}
		} else {
			printf("no GPU kernels were recorded\n");
		}
		json_decref(sum);
	}
	announce_reports(run_dir);
	lp_buf_release(&path);
}

/* What the run layer reports, on stderr: progress and phase statuses (quiet when stderr is not a
 * terminal), warnings, and the once-a-second ticker of a running child on a terminal. */
static void on_run_event(void *ctx, const struct lp_run_event *ev)
{
	(void)ctx;
	switch (ev->kind) {
	case LP_RUN_EV_PROGRESS:
		lp_log_info("[%d/%d] %s: %s", ev->index + 1, ev->count, ev->phase, ev->text);
		break;
	case LP_RUN_EV_PHASE:
		if (!strcmp(ev->status, "ok"))
			lp_log_debug("phase %s: ok", ev->phase);
		else
			lp_log_info("phase %s: %s%s%s", ev->phase, ev->status, ev->text[0] ? ": " : "", ev->text);
		break;
	case LP_RUN_EV_INFO:
		lp_log_info("%s", ev->text);
		break;
	case LP_RUN_EV_WARN:
		lp_log_warn("%s", ev->text);
		break;
	case LP_RUN_EV_TICK:
		if (ev->profiled >= 0)
			fprintf(stderr, "\r  %s: %.0f s, %ld kernels profiled   ", ev->phase, ev->elapsed_s, ev->profiled);
		else
			fprintf(stderr, "\r  %s: %.0f s   ", ev->phase, ev->elapsed_s);
		fflush(stderr);
		break;
	case LP_RUN_EV_TICK_END:
		if (ev->elapsed_s >= 1.0)   /* a tick was shown: end its line */
			fputc('\n', stderr);
		break;
	}
}

/* One line before anything runs: a CPU run or a GPU run, and what it will leave out. */
static int announce_and_run(struct lp_pipeline *pl, struct lp_run *run, struct lp_err *err)
{
	lp_log_note("%s", pl->outlook.what);
	if (pl->outlook.fail_kind)
		lp_log_warn("this run will exit %d: %s", lp_exit_status(pl->outlook.fail_kind), pl->outlook.why);
	return lp_pipeline_run(pl, run, err);
}

static int cmd_run(const struct lp_args *args, struct lp_ctx *ctx)
{
	const char *mode = opt_mode;
	int cfg_only = opt_cfg, dry_run = opt_dry_run, rc = 0;
	struct lp_err err = LP_ERR_INIT;
	struct lp_run run;
	struct lp_run_opts ro;
	struct lp_buf mode_ovr = LP_BUF_INIT;
	const char **ovr;
	int i, n = 0;

	ovr = calloc((size_t)args->n_rest + 2, sizeof(*ovr));
	if (!ovr) {
		lp_log_error("out of memory");
		return LP_EXIT_OTHER;
	}
	if (mode) {
		lp_buf_addf(&mode_ovr, "run.mode=%s", mode);
		ovr[n++] = mode_ovr.data;
	}
	for (i = 0; i < args->n_rest; i++)
		ovr[n++] = args->rest[i];
	memset(&ro, 0, sizeof(ro));
	ro.conf_dir = ctx->conf_dir;
	ro.overrides = ovr;
	ro.n_overrides = (size_t)n;
	ro.workload_argv = args->tail;
	ro.workload_argc = (size_t)args->n_tail;
	ro.dry_run = cfg_only || dry_run;

	if (lp_run_prepare(&run, &ro, &err) < 0) {
		rc = lp_cmd_fail(&err);
		goto out;
	}
	if (cfg_only) {
		rc = print_cfg(&run);
	} else {
		struct lp_pipeline pl;
		struct lp_run_sink sink = { on_run_event, NULL, lp_log_progress_enabled() };
		struct lp_pipeline_opts po = { ctx->exe_dir, dry_run, &sink };
		if (lp_pipeline_init(&pl, &run, &po, &err) < 0) {
			if (run.dir.path)
				lp_fs_remove_tree(run.dir.path, NULL);  /* nothing ran: leave no empty run behind */
			rc = lp_cmd_fail(&err);
		} else if (dry_run) {
			/* the exit status the real run will have when the workload and the tools succeed */
			struct lp_buf plan = LP_BUF_INIT;
			int prc = lp_pipeline_plan(&pl, &run, &plan, &err);
			fwrite(plan.data, 1, plan.len, stdout);   /* what was planned up to a failure too */
			if (prc == 0 && pl.outlook.fail_kind)
				printf("expected exit: %d (%s)\n", lp_exit_status(pl.outlook.fail_kind), pl.outlook.why);
			else if (prc == 0)
				printf("expected exit: 0 when the workload and the tools succeed\n");
			fflush(stdout);
			rc = prc < 0 ? lp_cmd_fail(&err) : lp_exit_status(pl.outlook.fail_kind);
			lp_buf_release(&plan);
		} else if (announce_and_run(&pl, &run, &err) < 0) {
			rc = lp_cmd_fail(&err);
		} else {
			rc = lp_exit_status(pl.fail_kind);
			/* interrupted: the shell's convention, 128 + the signal (130 SIGINT, 143 SIGTERM) */
			if (lp_proc_interrupt_signal())
				rc = 128 + lp_proc_interrupt_signal();
			print_summary(run.dir.path, rc);
			if (run.n_pruned)
				lp_log_info("removed %zu older run(s) (artifacts.keep_last)", run.n_pruned);
			if (rc > 128)
				lp_log_warn("interrupted (%s): the phases after it did not run",
					strsignal(rc - 128));
			if (rc == LP_EXIT_ENV)
				lp_log_hint("'llmprof check' says what this machine lacks for the phases that did not run");
			else if (rc != 0 && exists_in(run.dir.path, "report.md"))
				lp_log_hint("see the phase statuses in %s/report.md and the logs in %s/logs", run.dir.path, run.dir.path);
			else if (rc != 0)
				lp_log_hint("see the phase statuses in %s/phases.json and the logs in %s/logs", run.dir.path, run.dir.path);
		}
		lp_pipeline_release(&pl);
	}
	lp_run_release(&run);
out:
	free(ovr);
	lp_buf_release(&mode_ovr);
	return rc;
}

const struct lp_cmd lp_cmd_run = {
	"run", cmd_run, "profile an LLM workload and write the artifact bundle", usage_line, description, opts,
};
