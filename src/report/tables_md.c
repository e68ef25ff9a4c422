/* tables_md.c: kernels.md and operators.md, the two full tables of a run (see reports.h).
 * kernels.md keeps the seed tool's KernelRecord columns first (kernel_name | device | total_ms |
 * calls | mean_ms) so existing readers of that table keep working. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/ncu_coverage.h"
#include "report/md.h"
#include "report/reports.h"
#include "report/sections.h"

int lp_report_kernels_md(const struct lp_analysis *a, struct lp_buf *out)
{
	static const char *const cols[] = { "kernel_name", "device", "total_ms", "calls", "mean_ms", "busy_ms", "share",
					    "prefill_ms", "decode_ms", "other_ms", "family", "sampled: 95% CI of total_ms" };
	const struct lp_kernel_set *k = &a->kernels;
	size_t nc = k->sampled ? 12 : 11;
	char b[12][96];
	size_t i;
	lp_buf_adds(out, "# Kernels\n\n");
	if (!k->n_rows) {
		lp_buf_adds(out, "No GPU kernels were recorded in this run");
		lp_buf_adds(out, a->stages.have_gpu ? " outside warm-up.\n" : " (a CPU run, or no CUDA activity was traced). "
										  "Host timings are in report.md.\n");
		return out->oom ? -1 : 0;
	}
	lp_buf_addf(out, "%zu kernel%s, %.3f ms of summed kernel durations and %.3f ms of GPU busy time over the measured "
			 "iterations (warm-up excluded), sorted by busy_ms. busy_ms = the kernel's share of busy time (time "
			 "it ran alone plus an equal split of time shared with concurrent kernels); share = busy_ms / busy "
			 "time, adding up to 100%%; names longer than %d characters are shortened (full names in "
			 "summary.json).\n", k->n_rows, k->n_rows == 1 ? "" : "s", k->total_ms, k->busy_ms, LP_MD_NAME_MAX);
	if (k->busy_ms > 0 && k->total_ms > k->busy_ms * 1.02)
		lp_buf_addf(out, "\nKernels overlap: summed durations are %.2fx the busy time (concurrent streams or "
				 "programmatic dependent launch), so total_ms columns add up to more than the GPU time.\n",
			k->total_ms / k->busy_ms);
	if (k->sampled)
		lp_buf_addf(out, "\nSampled trace (report.md, Tracing mode): ~ marks estimates. Kernels were recorded in %u "
				 "of the %u sampled units and in all %u units of the exact stratum; each ~ row is scaled to "
				 "every unit, with the 95%% interval of its total_ms (sampling error only); busy_ms is scaled "
				 "like total_ms; a stage column without ~ (prefill_ms, mostly) holds no unit and is exact; "
				 "rows marked exact lie outside every unit.", k->sample_n, k->sample_N,
			k->sample_exact);
	if (k->sampled) {
		lp_section_rerun_note(a, out);
		lp_buf_adds(out, "\n");
	}
	if (k->sample_missing) {
		lp_buf_adds(out, "\n");
		lp_section_missing_note(a, out);
		lp_buf_adds(out, "\n");
	}
	lp_buf_adds(out, "\n");
	lp_md_header(out, nc, cols, "lrrrrrrrrrll");
	for (i = 0; i < k->n_rows; i++) {
		const struct lp_kernel_row *r = &k->rows[i];
		const char *cells[12], *m = r->sampled ? "~" : "";
		size_t j;
		snprintf(b[1], sizeof(b[1]), "%d", r->device);
		snprintf(b[2], sizeof(b[2]), "%s%.3f", m, r->total_ms);
		snprintf(b[3], sizeof(b[3]), "%s%llu", m, (unsigned long long)r->calls);
		snprintf(b[4], sizeof(b[4]), "%.4f", r->mean_ms);
		snprintf(b[5], sizeof(b[5]), "%s%.3f", m, r->busy_ms);
		snprintf(b[6], sizeof(b[6]), "%.1f%%", 100.0 * r->share);
		for (j = 0; j < 3; j++) /* a stage's part is an estimate only where units were scaled */
			snprintf(b[7 + j], sizeof(b[7 + j]), "%s%.3f", r->sampled && r->stage_sampled[j] ? "~" : "",
				r->stage_ms[j]);
		cells[0] = r->name;
		for (j = 1; j < 10; j++)
			cells[j] = b[j];
		cells[10] = lp_kname_family_name(r->family);
		lp_section_sample_cell(b[11], sizeof(b[11]), r->sampled, r->ci_ms, r->rerun_ms, k->sample_n, k->sample_N);
		cells[11] = b[11];
		lp_md_row(out, nc, cells, LP_MD_NAME_MAX);
	}
	if (k->n_ncu_records) {
		static const char *const ncols[] = { "kernel_name", "ncu launches", "duration_us", "SM %", "DRAM %",
						     "DRAM MB", "occupancy %", "GFLOP", "FLOP/byte", "roofline" };
		lp_buf_addf(out, "\n## Nsight Compute metrics (per launch)\n\n%zu of %zu kernels joined to %zu ncu records. "
				 "Roofline class against the ridge point %.1f FLOP/byte, balanced within %.0fx of it.\n\n",
			k->n_joined_rows, k->n_rows, k->n_ncu_records, k->ridge_flop_per_byte, LP_ROOF_BAND);
		lp_md_header(out, 10, ncols, "lrrrrrrrrl");
		for (i = 0; i < k->n_rows; i++) {
			const struct lp_kernel_row *r = &k->rows[i];
			const struct lp_kernel_ncu *n = &r->ncu;
			const char *cells[10];
			size_t j;
			if (!n->joined)
				continue;
			snprintf(b[1], sizeof(b[1]), "%llu", (unsigned long long)n->records);
			lp_fmt_num(b[2], sizeof(b[2]), n->duration_ns / 1e3, 2);
			lp_fmt_num(b[3], sizeof(b[3]), n->sm_pct, 1);
			lp_fmt_num(b[4], sizeof(b[4]), n->dram_pct, 1);
			lp_fmt_num(b[5], sizeof(b[5]), n->dram_bytes / 1e6, 3);
			lp_fmt_num(b[6], sizeof(b[6]), n->occupancy_pct, 1);
			lp_fmt_num(b[7], sizeof(b[7]), n->flops / 1e9, 4);
			lp_fmt_num(b[8], sizeof(b[8]), n->intensity, 2);
			cells[0] = r->name;
			for (j = 1; j < 9; j++)
				cells[j] = b[j];
			cells[9] = lp_roofline_name(n->roofline);
			lp_md_row(out, 10, cells, LP_MD_NAME_MAX);
		}
	}
	lp_report_ncu_coverage_md(a->ncu_sampling, 1, out);
	return out->oom ? -1 : 0;
}

int lp_report_operators_md(const struct lp_analysis *a, struct lp_buf *out)
{
	static const char *const cols[] = { "stage", "operator", "source", "calls", "gpu_incl_ms", "gpu_excl_ms",
					    "gpu_mean_ms", "host_ms", "host_mean_ms", "share of stage", "kernels",
					    "sampled: 95% CI of gpu_incl_ms" };
	const struct lp_op_table *t = &a->ops;
	size_t nc = t->sampled ? 12 : 11;
	char b[12][96];
	size_t i, n_zero = 0;
	int gpu = a->stages.have_gpu;
	lp_buf_adds(out, "# Operators\n\n");
	if (!t->n_rows) {
		lp_buf_adds(out, "No operator ranges were recorded: run the reference workload with `--nvtx-ops on`, or a "
				 "PyTorch program under `torch.autograd.profiler.emit_nvtx()`.\n");
		return out->oom ? -1 : 0;
	}
	lp_buf_adds(out, "Op ranges (the workload's own and PyTorch emit_nvtx ranges with their `, seq = N` / "
			 "`, op_id = N` suffixes stripped), summed over the measured iterations. Inclusive GPU time counts "
			 "the kernels launched in the range and in ranges nested in it; exclusive only those whose innermost "
			 "op range it is.");
	lp_buf_adds(out, gpu ? " share = inclusive GPU time / the stage's kernel time.\n\n"
			     : " CPU run: no GPU kernels; share = host time / the stage's host time.\n\n");
	if (t->sampled) {
		lp_buf_adds(out, "Sampled trace (report.md, Tracing mode): ~ marks GPU times and kernel counts scaled to every "
				 "sampling unit, with the 95% interval of gpu_incl_ms; calls and host times are exact.");
		lp_section_rerun_note(a, out);
		lp_buf_adds(out, "\n\n");
	}
	lp_md_header(out, nc, cols, "lllrrrrrrrrl");
	for (i = 0; i < t->n_rows; i++) {
		const struct lp_op_row *r = &t->rows[i];
		const char *cells[12], *m = r->sampled ? "~" : "";
		size_t j;
		double calls = r->calls ? (double)r->calls : 1;
		cells[0] = r->stage;
		cells[1] = r->name;
		cells[2] = r->pytorch ? "pytorch" : "workload";
		snprintf(b[3], sizeof(b[3]), "%llu", (unsigned long long)r->calls);
		if (gpu) {
			snprintf(b[4], sizeof(b[4]), "%s%.3f", m, r->gpu_incl_ms);
			snprintf(b[5], sizeof(b[5]), "%s%.3f", m, r->gpu_excl_ms);
			snprintf(b[6], sizeof(b[6]), "%s%.4f", m, r->gpu_incl_ms / calls);
		} else {
			for (j = 4; j < 7; j++)
				snprintf(b[j], sizeof(b[j]), "n/a (CPU run)");
		}
		snprintf(b[7], sizeof(b[7]), "%.3f", r->host_ms);
		snprintf(b[8], sizeof(b[8]), "%.4f", r->host_ms / calls);
		if (r->share >= 0)
			snprintf(b[9], sizeof(b[9]), "%.1f%%", 100.0 * r->share);
		else
			snprintf(b[9], sizeof(b[9]), "n/a");
		snprintf(b[10], sizeof(b[10]), "%s%llu%s", m, (unsigned long long)r->kernels, r->zero_gpu_why ? " (see below)" : "");
		for (j = 3; j < 11; j++)
			cells[j] = b[j];
		lp_section_sample_cell(b[11], sizeof(b[11]), r->sampled, r->ci_ms, r->rerun_ms, a->kernels.sample_n, a->kernels.sample_N);
		cells[11] = b[11];
		lp_md_row(out, nc, cells, LP_MD_NAME_MAX);
		n_zero += r->zero_gpu_why != NULL;
	}
	if (n_zero) {
		lp_buf_adds(out, "\n## Operators without GPU time\n\n");
		for (i = 0; i < t->n_rows; i++) {
			const struct lp_op_row *r = &t->rows[i];
			if (!r->zero_gpu_why)
				continue;
			lp_buf_adds(out, "- ");
			lp_md_text(out, r->name);
			lp_buf_adds(out, " (");
			lp_md_text(out, r->stage);
			lp_buf_adds(out, "): ");
			lp_md_text(out, r->zero_gpu_why);
			lp_buf_adds(out, "\n");
		}
	}
	return out->oom ? -1 : 0;
}
