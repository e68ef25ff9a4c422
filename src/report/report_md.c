/* report_md.c: report.md (artifacts with phase statuses, per-stage timings, MFU/MBU, top kernels,
 * tracer overhead) and stakeholder_summary.md (fixed section order, see reports.h and
 * docs/reports.md). Both are rendered from the analysis; report.md also lists what exists in the
 * run folder (names, file counts and sizes: deterministic for identical artifacts). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fs.h"
#include "report/ncu_coverage.h"
#include "report/figures.h"
#include "report/baseline_report.h"
#include "llmprof/trace_format.h"
#include "report/md.h"
#include "report/ranks_report.h"
#include "report/reports.h"
#include "report/sections.h"
#include "report/tracing_mode.h"

/* Files directly in `dir` (count, bytes), sub-folders counted as entries. */
static void dir_stats(const char *dir, unsigned long long *files, unsigned long long *bytes)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	*files = *bytes = 0;
	if (!d)
		return;
	while ((e = readdir(d))) {
		struct lp_buf p = LP_BUF_INIT;
		struct stat st;
		if (e->d_name[0] == '.')
			continue;
		lp_fs_join(&p, dir, e->d_name);
		if (stat(p.data, &st) == 0) {
			(*files)++;
			if (S_ISREG(st.st_mode))
				*bytes += (unsigned long long)st.st_size;
		}
		lp_buf_release(&p);
	}
	closedir(d);
}

static void artifacts(const char *run_dir, struct lp_buf *out)
{
	static const struct { const char *name; const char *what; } known[] = {
		{ "config.yaml", "resolved configuration" },
		{ "env.json", "environment: host, GPUs, driver, tools" },
		{ "inputs.yaml", "workload argv and inputs" },
		{ "phases.json", "phase statuses" },
		{ "trace", "built-in tracer files" },
		{ "nsys", "Nsight Systems report, stats and sqlite export" },
		{ "ncu", "Nsight Compute reports and CSV exports" },
		{ "logs", "tool logs and command lines" },
	};
	size_t i;
	lp_buf_adds(out, "| artifact | what | size |\n| --- | --- | ---: |\n");
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		struct lp_buf p = LP_BUF_INIT;
		lp_fs_join(&p, run_dir, known[i].name);
		if (lp_fs_is_dir(p.data)) {
			unsigned long long files, bytes;
			dir_stats(p.data, &files, &bytes);
			lp_buf_addf(out, "| %s/ | %s | %llu %s, %llu %s |\n", known[i].name, known[i].what, files,
				files == 1 ? "entry" : "entries", bytes, bytes == 1 ? "byte" : "bytes");
		} else if (lp_fs_is_file(p.data)) {
			lp_buf_addf(out, "| %s | %s | %lld bytes |\n", known[i].name, known[i].what, (long long)lp_fs_size(p.data));
		}
		lp_buf_release(&p);
	}
	for (i = 0; i < LP_REPORT_N_FILES; i++)
		lp_buf_addf(out, "| %s | report (this analysis) | |\n", lp_report_files[i].name);
	lp_buf_addf(out, "| %s/ | figures of this analysis (SVG) | |\n", LP_FIGURES_DIR);
	lp_buf_adds(out, "\nmanifest.json (when present) lists every artifact with its size and sha256.\n");
}

static void phases(const struct lp_analysis *a, struct lp_buf *out)
{
	size_t i;
	if (!a->n_phases) {
		lp_buf_adds(out, "No phase statuses were recorded (no phases.json or summary.json phases).\n");
		return;
	}
	lp_buf_adds(out, "| phase | status | reason |\n| --- | --- | --- |\n");
	for (i = 0; i < a->n_phases; i++) {
		const char *cells[3] = { a->phases[i].name, a->phases[i].status, a->phases[i].reason };
		lp_md_row(out, 3, cells, 0);
	}
}

static void overhead(const struct lp_analysis *a, struct lp_buf *out)
{
	if (a->n_processes) {
		lp_buf_addf(out, "- tracer overhead records: %.3f ms in total across %zu traced processes; dropped records: %llu",
			(double)a->tracer_overhead_ns / 1e6, a->n_processes, (unsigned long long)a->dropped_records);
		if (a->dropped_at_detach)
			lp_buf_addf(out, " (%llu of them CUPTI's count at its detaches, one a detach, no kernel's: "
				"docs/tracer.md \"Bursts\")", (unsigned long long)a->dropped_at_detach);
		lp_buf_adds(out, "\n");
	} else
		lp_buf_adds(out, "- tracer overhead records: n/a (the profile lists no traced processes)\n");
	if (a->traced_s > 0 && a->untraced_s > 0)
		lp_buf_addf(out, "- workload time with tracing %.3f s, without %.3f s: %+.1f%%\n", a->traced_s, a->untraced_s,
			100.0 * (a->traced_s - a->untraced_s) / a->untraced_s);
	else
		lp_buf_adds(out, "- workload time with vs without tracing: not measured (set run.measure_overhead=true)\n");
}

/* llmprof's headline numbers beside the workload's own (analysis.h, docs/metrics.md "Self-check"). */
static void self_check(const struct lp_analysis *a, struct lp_buf *out)
{
	static const char *const cols[] = { "number", "llmprof", "workload's own", "difference" };
	size_t i;
	if (!a->own.valid) {
		lp_buf_adds(out, "The workload printed no timings of its own (a JSON line with `\"summary\": true` and "
				 "`prefill_ms` / `decode_ms` / `decode_ms_per_step` / `tokens_per_s`, docs/metrics.md): nothing to "
				 "compare with.\n");
		return;
	}
	if (!a->n_checks) {
		lp_buf_adds(out, "The workload printed timings, but none of them has a llmprof counterpart in this run.\n");
		return;
	}
	lp_md_header(out, 4, cols, "lrrr");
	for (i = 0; i < a->n_checks; i++) {
		const struct lp_self_check *c = &a->checks[i];
		char b[3][64];
		const char *cells[4];
		snprintf(b[0], sizeof(b[0]), "%.3f", c->ours);
		snprintf(b[1], sizeof(b[1]), "%.3f", c->theirs);
		snprintf(b[2], sizeof(b[2]), "%+.2f%%%s", 100.0 * c->diff, fabs(c->diff) > LP_SELF_CHECK_TOL ? " (over tolerance)" : "");
		cells[0] = c->what;
		cells[1] = b[0];
		cells[2] = b[1];
		cells[3] = b[2];
		lp_md_row(out, 4, cells, 0);
	}
	lp_buf_adds(out, "\nThe workload's numbers are its own measurements of the same run (trace/workload.stdout)");
	if (a->check_rank_label[0])
		lp_buf_addf(out, ", %s's: compared with %s's stages (Per-rank stages), not the means over the ranks",
			a->check_rank_label, a->check_rank_label);
	lp_buf_addf(out, ". %s (tolerance %.0f%%).", a->check_failed ? "At least one differs by more than the tolerance: read "
			 "the stage numbers with care" : "All agree", 100.0 * LP_SELF_CHECK_TOL);
	lp_fmt_step_check(a, out);
	lp_fmt_check_host(a, out);
	lp_buf_adds(out, "\n");
}

static void tracing_mode(const struct lp_analysis *a, struct lp_buf *out);

int lp_report_report_md(const struct lp_analysis *a, const char *run_dir, struct lp_buf *out)
{
	lp_buf_adds(out, "# llmprof report");
	if (a->run_id[0]) {
		lp_buf_adds(out, ": ");
		lp_md_text(out, a->run_id);
	}
	lp_buf_adds(out, "\n\n");
	if (a->mode[0]) {
		lp_buf_adds(out, "Mode: ");
		lp_md_text(out, a->mode);
		lp_buf_adds(out, ". ");
	}
	lp_buf_adds(out, "Model: ");
	lp_md_text(out, a->have_model ? (a->model.name[0] ? a->model.name : "unnamed") : a->model_why);
	lp_buf_adds(out, ". Device: ");
	lp_md_text(out, a->have_device ? a->device.name : "none");
	lp_buf_adds(out, ".\n\n## Artifacts\n\n");
	if (run_dir)
		artifacts(run_dir, out);
	lp_buf_adds(out, "\n## Phases\n\n");
	phases(a, out);
	lp_buf_adds(out, "\n## Per-stage timings\n\n");
	lp_section_stages(a, out);
	if (lp_ranks_report_wanted(&a->ranks)) {
		lp_buf_adds(out, "\n");
		lp_ranks_md(&a->ranks, out);
	}
	lp_buf_adds(out, "\n## Self-check against the workload's own timings\n\n");
	self_check(a, out);
	lp_baseline_md(a, out);
	lp_buf_adds(out, "\n## MFU and MBU\n\n");
	lp_section_mfu(a, out);
	lp_buf_adds(out, "\n## Where the time goes: from the floor to the measured latency\n\n");
	lp_section_waterfall(a, out);
	lp_buf_adds(out, "\n## Tracing mode\n\n");
	tracing_mode(a, out);
	lp_buf_addf(out, "\n## Top kernels\n\n");
	lp_section_top_kernels(a, LP_REPORT_TOP_KERNELS, out);
	lp_report_ncu_coverage_md(a->ncu_sampling, 0, out);
	lp_buf_adds(out, "\n## Tracer overhead\n\n");
	overhead(a, out);
	lp_figures_md(a, out);
	return out->oom ? -1 : 0;
}

static void aggregates(const struct lp_analysis *a, struct lp_buf *out)
{
	struct lp_buf t = LP_BUF_INIT;
	size_t i;
	if (a->have_model) {
		lp_buf_adds(out, "- model: ");
		lp_md_text(out, a->model.name[0] ? a->model.name : "unnamed");
		{
			/* billions for real models, millions for small ones (tiny has 0.46 M) */
			double scale = a->params.total >= 1e9 ? 1e9 : 1e6;
			const char *unit = a->params.total >= 1e9 ? "B" : "M";
			lp_buf_addf(out, " (%s, %s): %.3f %s parameters, %.3f %s matmul parameters per token\n",
				a->model.family[0] ? a->model.family : "unknown family",
				a->model.dtype[0] ? a->model.dtype : "unknown dtype",
				(double)a->params.total / scale, unit, (double)a->params.matmul_active / scale, unit);
		}
	} else {
		lp_buf_adds(out, "- model: n/a (");
		lp_md_text(out, a->model_why);
		lp_buf_adds(out, ")\n");
	}
	lp_buf_addf(out, "- measured iterations: %zu\n", lp_measured_iterations(a));
	lp_buf_adds(out, "- batch / prompt length / decode steps: ");
	lp_fmt_token_counts(a, out);
	if (a->tokens_why[0]) {
		lp_buf_adds(out, " (");
		lp_md_text(out, a->tokens_why);
		lp_buf_adds(out, ")");
	}
	lp_buf_adds(out, "\n");
	if (a->stages.have_gpu)
		lp_buf_addf(out, "- GPU kernel time (measured iterations): %.3f ms in %zu distinct kernels\n", a->kernels.total_ms,
			a->kernels.n_rows);
	else
		lp_buf_adds(out, "- GPU kernel time: n/a (no GPU kernels were recorded: CPU run)\n");
	lp_buf_adds(out, "- time to first token (prefill latency): ");
	lp_num_format(&a->ttft_ms, 3, 1, " ms", &t);
	lp_md_text(out, t.data);
	lp_buf_reset(&t);
	lp_buf_adds(out, "\n- decode throughput: ");
	lp_num_format(&a->decode_tokens_per_s, 1, 1, " tokens/s", &t);
	if (a->decode_step_ms.valid)
		lp_buf_addf(&t, " (%.3f ms per step)", a->decode_step_ms.value);
	lp_md_text(out, t.data);
	lp_buf_reset(&t);
	{
		const struct lp_stage *dec = lp_stages_find(&a->stages, LP_STAGE_DECODE);
		if (dec && dec->n_step_lat)
			lp_buf_addf(out, "\n- decode step latency: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.3f ms over %zu steps",
				dec->step_p50, dec->step_p90, dec->step_p99, dec->step_ms.max, dec->n_step_lat);
	}
	if (a->n_checks) {
		double worst = 0;
		for (i = 0; i < a->n_checks; i++)
			if (fabs(a->checks[i].diff) > fabs(worst))
				worst = a->checks[i].diff;
		lp_buf_addf(out, "\n- self-check against the workload's own timings: %s (largest difference %+.1f%%, "
				 "tolerance %.0f%%)", a->check_failed ? "DIFFERS" : "agrees", 100.0 * worst, 100.0 * LP_SELF_CHECK_TOL);
	}
	lp_buf_adds(out, "\n- model MFU / MBU: ");
	lp_num_format(&a->perf[2].mfu, 2, 100, "%", &t);
	lp_buf_adds(&t, " / ");
	lp_num_format(&a->perf[2].mbu, 2, 100, "%", &t);
	lp_md_text(out, t.data);
	lp_buf_adds(out, "\n");
	lp_buf_release(&t);
}

/* Which tracing mode ran and why (docs/tracer.md "Sampled tracing"); for a sampled trace the
 * kernel table of its unit scaled to every unit, each row with its 95% interval. */
static void tracing_mode(const struct lp_analysis *a, struct lp_buf *out)
{
	const struct lp_sampling *s = &a->sampling;
	const struct lp_tsample_table *t = &a->sampled;
	static const char *const cols[] = { "Kernel", "Time in units (ms, est.)", "95% interval (ms)",
		"Launches (est.)", "Outside units (ms, exact)" };
	size_t i;
	struct lp_buf text = LP_BUF_INIT;
	lp_tracing_mode_text(a, &text);
	lp_md_text(out, text.data ? text.data : "");
	lp_buf_release(&text);
	if (s->mode != 2) {
		lp_buf_adds(out, "\n");
		return;
	}
	if (a->kernels.sample_missing)
		lp_buf_addf(out, " The units' kernels below are the first units' alone, as recorded (%u of them; the "
			"kernel tables estimate the others from them); what lies outside the units is exact.\n\n",
			t->units_exact);
	else
		lp_buf_addf(out, " The units' kernels below (%s: %u exact, %u of %u sampled); what lies outside the "
			"units is exact.\n\n", s->warmup == LP_TRACE_WARMUP_DETACHED ?
			"every unit but the warm-up's, which CUPTI did not record" : "every unit, the warm-up's included",
			t->units_exact, t->units_recorded, t->units_sampled_stratum);
	lp_md_header(out, 5, cols, "lrrrr");
	for (i = 0; i < t->n_rows && i < LP_REPORT_TOP_KERNELS; i++) {
		const struct lp_tsample_row *r = &t->rows[i];
		char c1[32], c2[32], c3[32], c4[32];
		const char *cells[5];
		snprintf(c1, sizeof(c1), "%.3f", r->time_ns.total / 1e6);
		if (a->kernels.sample_missing) /* nothing sampled to scale by (Tracing mode says so) */
			snprintf(c2, sizeof(c2), "n/a (none sampled)");
		else if (r->time_ns.half_ci < 0)
			snprintf(c2, sizeof(c2), "n/a (n < 2)");
		else
			snprintf(c2, sizeof(c2), "+- %.3f", r->time_ns.half_ci / 1e6);
		snprintf(c3, sizeof(c3), "%.0f", r->calls.total);
		snprintf(c4, sizeof(c4), "%.3f", r->outside_ns / 1e6);
		cells[0] = r->key;
		cells[1] = c1;
		cells[2] = c2;
		cells[3] = c3;
		cells[4] = c4;
		lp_md_row(out, 5, cells, LP_MD_NAME_MAX);
	}
}

int lp_report_stakeholder_md(const struct lp_analysis *a, struct lp_buf *out)
{
	lp_buf_adds(out, "# Stakeholder summary");
	if (a->run_id[0]) {
		lp_buf_adds(out, ": ");
		lp_md_text(out, a->run_id);
	}
	lp_buf_adds(out, "\n\n## Environment\n\n");
	lp_section_environment(a, out);
	lp_buf_adds(out, "\n## Aggregates\n\n");
	aggregates(a, out);
	lp_buf_adds(out, "\n## Per-Stage Timings\n\n");
	lp_section_stages(a, out);
	lp_buf_adds(out, "\n## MFU\n\n");
	lp_section_mfu(a, out);
	lp_buf_adds(out, "\n## Where the Time Goes\n\n");
	lp_section_waterfall(a, out);
	lp_buf_adds(out, "\n## Stage Takeaways\n\n");
	lp_section_advice(a, LP_ADVICE_TAKEAWAY, out);
	lp_buf_adds(out, "\n## Top Operators\n\n");
	lp_section_top_ops(a, LP_REPORT_TOP_OPS, out);
	lp_buf_adds(out, "\n## Top Kernels\n\n");
	lp_section_top_kernels(a, LP_REPORT_TOP_KERNELS, out);
	lp_buf_adds(out, "\n## Tracing Mode\n\n");
	tracing_mode(a, out);
	lp_buf_adds(out, "\n## Recommendations\n\n");
	lp_section_advice(a, LP_ADVICE_RECOMMENDATION, out);
	lp_figures_md(a, out);
	return out->oom ? -1 : 0;
}
