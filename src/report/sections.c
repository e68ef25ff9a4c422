/* sections.c: the Markdown sections that report.md and stakeholder_summary.md share (see
 * sections.h). Numbers come from the analysis only; every table goes through report/md.h. */
#include "report/sections.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze/advice.h"
#include "report/md.h"

const char *lp_fmt_num(char *buf, size_t cap, double v, int decimals)
{
	if (isnan(v) || isinf(v))
		snprintf(buf, cap, "n/a");
	else
		snprintf(buf, cap, "%.*f", decimals, v);
	return buf;
}

static void num(struct lp_buf *b, const struct lp_num *n, int decimals, double scale, const char *suffix)
{
	lp_buf_reset(b);
	lp_num_format(n, decimals, scale, suffix, b);
}

int lp_section_stages(const struct lp_analysis *a, struct lp_buf *out)
{
	enum { NC = 11 };
	static const char *const cols[NC] = { "stage", "iterations", "latency_ms mean", "latency_ms std",
					      "host_ms mean (launch/CPU)", "gpu_busy_ms mean", "gpu_span_ms mean",
					      "kernels / iter", "tokens / iter", "throughput", "bound" };
	const struct lp_stage_set *s = &a->stages;
	struct lp_buf c[NC];
	size_t i, j;
	int gpu = s->have_gpu;
	if (!s->n_stages) {
		return lp_buf_adds(out, "No measured stage ranges were found (no `prefill` / `decode_all` ranges and no "
					"top-level NVTX ranges outside warm-up).\n");
	}
	for (j = 0; j < NC; j++)
		lp_buf_init(&c[j], 0);
	lp_md_header(out, NC, cols, "lrrrrrrrrll");
	for (i = 0; i < s->n_stages; i++) {
		const struct lp_stage *st = &s->stages[i];
		const char *cells[NC];
		for (j = 0; j < NC; j++)
			lp_buf_reset(&c[j]);
		lp_buf_adds(&c[0], st->name);
		lp_buf_addf(&c[1], "%zu", st->n_iters);
		lp_buf_addf(&c[2], "%.3f", st->lat_ms.mean);
		if (st->n_iters > 1)
			lp_buf_addf(&c[3], "%.3f", st->lat_ms.std);
		else
			lp_buf_adds(&c[3], "n/a (1 iteration)");
		lp_buf_addf(&c[4], "%.3f", st->host_ms.mean);
		if (gpu) {
			lp_buf_addf(&c[5], "%.3f", st->gpu_ms.mean);
			lp_buf_addf(&c[6], "%.3f", st->gpu_span_ms.mean);
			lp_buf_addf(&c[7], "%.1f", st->kernels.mean);
		} else {
			for (j = 5; j <= 7; j++)
				lp_buf_adds(&c[j], "n/a (CPU run)");
		}
		if (st->kind == LP_STAGE_PREFILL) {
			lp_num_format(&a->prefill_tokens, 0, 1, "", &c[8]);
			lp_buf_adds(&c[9], "time to first token ");
			lp_num_format(&a->ttft_ms, 3, 1, " ms", &c[9]);
		} else if (st->kind == LP_STAGE_DECODE) {
			lp_num_format(&a->decode_tokens, 0, 1, "", &c[8]);
			lp_num_format(&a->decode_tokens_per_s, 1, 1, " tokens/s", &c[9]);
			if (a->decode_step_ms.valid)
				lp_buf_addf(&c[9], ", %.3f ms/step (%.0f steps)", a->decode_step_ms.value, st->steps.mean);
		} else {
			lp_buf_adds(&c[8], "n/a (not an LLM stage)");
			lp_buf_adds(&c[9], "n/a");
		}
		if (gpu && !isnan(st->idle_frac))
			lp_buf_addf(&c[10], "%s (GPU idle %.0f%%)", st->bound, 100.0 * st->idle_frac);
		else
			lp_buf_adds(&c[10], gpu ? st->bound : "n/a (CPU run)");
		for (j = 0; j < NC; j++)
			cells[j] = c[j].data;
		lp_md_row(out, NC, cells, 0);
	}
	for (i = 0; i < s->n_stages; i++) {
		const struct lp_stage *st = &s->stages[i];
		if (!st->n_step_lat)
			continue;
		lp_buf_adds(out, "\n");
		lp_md_text(out, st->name);
		lp_buf_addf(out, " steps: %zu measured `decode_step` ranges, latency per step mean %.3f ms, p50 %.3f, p90 %.3f, "
				 "p99 %.3f, max %.3f ms (min %.3f).\n", st->n_step_lat, st->step_ms.mean, st->step_p50,
			st->step_p90, st->step_p99, st->step_ms.max, st->step_ms.min);
	}
	for (i = 0; i < s->n_stages; i++) {
		const struct lp_stage *st = &s->stages[i];
		if (!gpu || st->overlap <= LP_ADVICE_OVERLAP)
			continue;
		lp_buf_adds(out, "\nOverlap (");
		lp_md_text(out, st->name);
		lp_buf_addf(out, "): kernels run concurrently (streams or programmatic dependent launch): their summed "
				 "durations, %.3f ms per iteration, are %.2fx the GPU busy time. Kernel shares in this report use "
				 "each kernel's share of busy time (busy_ms), so they add up to 100%%.\n",
			st->kernel_ms.mean, st->overlap);
	}
	lp_buf_adds(out, "\nstd is the sample standard deviation (n - 1) across measured iterations. ");
	lp_buf_adds(out, "Latency is what a user timing the stage sees (CUDA events, a synchronize): from the push of the stage "
			 "range (or the end of GPU work still queued before it) to the later of its pop and the end of the "
			 "last GPU work launched inside; TTFT, tokens/s and ms/step come from it. Host time is push to pop on "
			 "the CPU (for asynchronous launching only the launch time); GPU busy time the union of the kernels "
			 "launched inside; GPU span from the first kernel's start to the last kernel's end. Bound: GPU-bound "
			 "when the GPU is idle at most 10% of the latency, CPU/launch-bound when idle at least 30% with the "
			 "host busy launching (docs/metrics.md).");
	{
		uint64_t warm = 0;
		for (i = 0; i < s->n_stages; i++)
			warm += s->stages[i].excluded_warmup;
		lp_buf_addf(out, " Warm-up iterations excluded: %llu stage ranges.", (unsigned long long)warm);
	}
	if (s->top_level_fallback)
		lp_buf_adds(out, " No `prefill` / `decode_all` ranges were found: the stages are the workload's top-level "
				 "NVTX ranges, each repetition one iteration.");
	lp_buf_adds(out, "\n");
	for (i = 0; i < s->n_stages; i++) {
		const struct lp_stage *st = &s->stages[i];
		double n = st->n_iters ? (double)st->n_iters : 1;
		if (!st->n_notes)
			continue;
		lp_buf_adds(out, "\nNote (");
		lp_md_text(out, st->name);
		lp_buf_adds(out, "): nested ranges that are not LLM stages, reported as part of ");
		lp_md_text(out, st->name);
		lp_buf_adds(out, " and not as separate stages: ");
		for (j = 0; j < st->n_notes; j++) {
			const struct lp_stage_note *nt = &st->notes[j];
			lp_buf_adds(out, j ? "; " : "");
			lp_md_text(out, nt->name);
			lp_buf_addf(out, " %.3f ms host", (double)nt->host_ns / 1e6 / n);
			if (gpu)
				lp_buf_addf(out, ", %.3f ms GPU kernel time", (double)nt->kernel_ns / 1e6 / n);
			lp_buf_addf(out, " per iteration (%llu calls)", (unsigned long long)nt->calls);
		}
		lp_buf_adds(out, ".\n");
	}
	for (j = 0; j < NC; j++)
		lp_buf_release(&c[j]);
	return out->oom ? -1 : 0;
}

int lp_section_mfu(const struct lp_analysis *a, struct lp_buf *out)
{
	static const char *const cols[] = { "stage", "model GFLOP / iter", "min MB / iter", "gpu_s / iter",
					    "TFLOP/s", "MFU", "GB/s", "MBU", "MFU / MBU over latency", "ncu GFLOP / iter (coverage)" };
	struct lp_buf c[10];
	size_t j;
	int k;
	for (j = 0; j < 10; j++)
		lp_buf_init(&c[j], 0);
	lp_md_header(out, 10, cols, "lrrrrrrrrr");
	for (k = 0; k < 3; k++) {
		const struct lp_perf *p = &a->perf[k];
		const char *cells[10];
		lp_buf_reset(&c[0]);
		lp_buf_adds(&c[0], p->label);
		num(&c[1], &p->flops, 3, 1e-9, "");
		num(&c[2], &p->bytes, 3, 1e-6, "");
		num(&c[3], &p->gpu_s, 6, 1, "");
		num(&c[4], &p->tflops_per_s, 3, 1, "");
		num(&c[5], &p->mfu, 2, 100, "%");
		num(&c[6], &p->gbs, 1, 1, "");
		num(&c[7], &p->mbu, 2, 100, "%");
		num(&c[8], &p->mfu_lat, 2, 100, "%");
		lp_buf_adds(&c[8], " / ");
		lp_num_format(&p->mbu_lat, 2, 100, "%", &c[8]);
		num(&c[9], &p->ncu_flops, 3, 1e-9, "");
		if (p->ncu_flops.valid)
			lp_buf_addf(&c[9], " (%.1f%% of kernel time)", 100.0 * p->ncu_coverage.value);
		for (j = 0; j < 10; j++)
			cells[j] = c[j].data;
		lp_md_row(out, 10, cells, 0);
	}
	for (j = 0; j < 10; j++)
		lp_buf_release(&c[j]);
	lp_buf_adds(out, "\nPeak FLOP/s: ");
	if (a->peak.flops_valid)
		lp_buf_addf(out, "%.1f TFLOP/s (", a->peak.flops_per_s / 1e12);
	else
		lp_buf_adds(out, "n/a (");
	lp_md_text(out, a->peak.flops_source);
	lp_buf_adds(out, "). Peak bandwidth: ");
	if (a->peak.bw_valid)
		lp_buf_addf(out, "%.0f GB/s (", a->peak.bytes_per_s / 1e9);
	else
		lp_buf_adds(out, "n/a (");
	lp_md_text(out, a->peak.bw_source);
	lp_buf_adds(out, ").\nMFU = model FLOPs / (GPU busy time x dense peak); MBU = minimum bytes (weights once per "
			 "step, KV cache read and written) / (GPU busy time x peak bandwidth): how well the kernels use the GPU. "
			 "Over latency: the same over the stage latency, what the user gets end to end. Formulas: docs/metrics.md.\n");
	return out->oom ? -1 : 0;
}

int lp_section_top_kernels(const struct lp_analysis *a, size_t n, struct lp_buf *out)
{
	static const char *const cols[] = { "kernel_name", "device", "total_ms", "busy_ms", "calls", "mean_ms", "share",
					    "family" };
	const struct lp_kernel_set *k = &a->kernels;
	char b[8][64];
	size_t i, j;
	if (!k->n_rows)
		return lp_buf_adds(out, "No GPU kernels were recorded in this run.\n");
	lp_md_header(out, 8, cols, "lrrrrrrl");
	for (i = 0; i < k->n_rows && i < n; i++) {
		const struct lp_kernel_row *r = &k->rows[i];
		const char *cells[8];
		cells[0] = r->name;
		snprintf(b[1], sizeof(b[1]), "%d", r->device);
		snprintf(b[2], sizeof(b[2]), "%.3f", r->total_ms);
		snprintf(b[3], sizeof(b[3]), "%.3f", r->busy_ms);
		snprintf(b[4], sizeof(b[4]), "%llu", (unsigned long long)r->calls);
		snprintf(b[5], sizeof(b[5]), "%.4f", r->mean_ms);
		snprintf(b[6], sizeof(b[6]), "%.1f%%", 100.0 * r->share);
		for (j = 1; j < 7; j++)
			cells[j] = b[j];
		cells[7] = lp_kernel_family_name(r->family);
		lp_md_row(out, 8, cells, LP_MD_NAME_MAX);
	}
	lp_buf_addf(out, "\nMeasured iterations, warm-up excluded. share = busy_ms (the kernel's share of GPU busy time) / "
			 "busy time %.3f ms", k->busy_ms);
	if (k->busy_ms > 0 && k->total_ms > k->busy_ms * 1.02)
		lp_buf_addf(out, "; kernels overlap, summed durations %.3f ms = %.2fx busy", k->total_ms, k->total_ms / k->busy_ms);
	lp_buf_adds(out, ".\n");
	if (k->n_rows > n)
		lp_buf_addf(out, "\n%zu more kernels in kernels.md.\n", k->n_rows - n);
	return out->oom ? -1 : 0;
}

int lp_section_top_ops(const struct lp_analysis *a, size_t n, struct lp_buf *out)
{
	static const char *const cols[] = { "stage", "operator", "gpu_incl_ms", "gpu_excl_ms", "host_ms", "calls",
					    "share of stage" };
	const struct lp_op_table *t = &a->ops;
	char b[7][64];
	size_t i, shown = 0;
	if (!t->n_rows)
		return lp_buf_adds(out, "No operator ranges were recorded (run the workload with NVTX op ranges, or "
					"PyTorch with emit_nvtx).\n");
	lp_md_header(out, 7, cols, "llrrrrr");
	/* the n largest of each stage */
	for (i = 0; i < t->n_rows; i++) {
		const struct lp_op_row *r = &t->rows[i];
		const char *cells[7];
		if (i > 0 && r->stage_index == t->rows[i - 1].stage_index && shown >= n)
			continue;
		if (i > 0 && r->stage_index != t->rows[i - 1].stage_index)
			shown = 0;
		shown++;
		cells[0] = r->stage;
		cells[1] = r->name;
		if (a->stages.have_gpu) {
			snprintf(b[2], sizeof(b[2]), "%.3f", r->gpu_incl_ms);
			snprintf(b[3], sizeof(b[3]), "%.3f", r->gpu_excl_ms);
		} else {
			snprintf(b[2], sizeof(b[2]), "n/a (CPU run)");
			snprintf(b[3], sizeof(b[3]), "n/a (CPU run)");
		}
		snprintf(b[4], sizeof(b[4]), "%.3f", r->host_ms);
		snprintf(b[5], sizeof(b[5]), "%llu", (unsigned long long)r->calls);
		if (r->share >= 0)
			snprintf(b[6], sizeof(b[6]), "%.1f%%", 100.0 * r->share);
		else
			snprintf(b[6], sizeof(b[6]), "n/a");
		cells[2] = b[2];
		cells[3] = b[3];
		cells[4] = b[4];
		cells[5] = b[5];
		cells[6] = b[6];
		lp_md_row(out, 7, cells, LP_MD_NAME_MAX);
	}
	lp_buf_adds(out, a->stages.have_gpu
		? "\nTimes are summed over the measured iterations; share = inclusive GPU time / the stage's kernel time "
		  "(inclusive shares of nested ops overlap).\n"
		: "\nTimes are summed over the measured iterations; share = host time / the stage's host time.\n");
	return out->oom ? -1 : 0;
}

static int skip_key(const char *k)
{
	return !strcmp(k, "env") || !strcmp(k, "environment") || !strcmp(k, "variables") || !strcmp(k, "env_vars");
}

static void scalar(struct lp_buf *out, const char *key, const char *sub, const json_t *v)
{
	char tmp[64];
	const char *s = NULL;
	if (json_is_string(v))
		s = json_string_value(v);
	else if (json_is_integer(v)) {
		snprintf(tmp, sizeof(tmp), "%lld", (long long)json_integer_value(v));
		s = tmp;
	} else if (json_is_real(v)) {
		snprintf(tmp, sizeof(tmp), "%g", json_real_value(v));
		s = tmp;
	} else if (json_is_boolean(v)) {
		s = json_is_true(v) ? "true" : "false";
	}
	if (!s)
		return;
	lp_buf_adds(out, "- ");
	lp_md_text(out, key);
	if (sub) {
		lp_buf_addc(out, '.');
		lp_md_text(out, sub);
	}
	lp_buf_adds(out, ": ");
	lp_md_text(out, s);
	lp_buf_addc(out, '\n');
}

int lp_section_environment(const struct lp_analysis *a, struct lp_buf *out)
{
	const char *key;
	json_t *v;
	if (a->have_device) {
		lp_buf_adds(out, "- device used: ");
		lp_md_text(out, a->device.name);
		if (a->device.sm_count)
			lp_buf_addf(out, " (%d SMs, cc %d.%d)", a->device.sm_count, a->device.cc_major, a->device.cc_minor);
		lp_buf_addc(out, '\n');
	} else {
		lp_buf_adds(out, "- device used: none (no GPU in the profile or env.json)\n");
	}
	lp_buf_adds(out, "- trace source: ");
	lp_md_text(out, a->source_kind[0] ? a->source_kind : "unknown");
	lp_buf_addc(out, '\n');
	if (!json_is_object(a->env)) {
		lp_buf_adds(out, "- env.json: not available\n");
		return out->oom ? -1 : 0;
	}
	json_object_foreach(a->env, key, v) {
		if (skip_key(key))
			continue;
		if (json_is_object(v)) {
			const char *k2;
			json_t *v2;
			json_object_foreach(v, k2, v2)
				scalar(out, key, k2, v2);
		} else if (json_is_array(v)) {
			size_t i;
			json_t *e;
			json_array_foreach(v, i, e) {
				const json_t *name = json_is_object(e) ? json_object_get(e, "name") : e;
				char idx[32];
				snprintf(idx, sizeof(idx), "%zu", i);
				scalar(out, key, idx, name);
			}
		} else {
			scalar(out, key, NULL, v);
		}
	}
	return out->oom ? -1 : 0;
}

int lp_section_advice(const struct lp_analysis *a, enum lp_advice_kind kind, struct lp_buf *out)
{
	size_t i, n = 0;
	for (i = 0; i < a->n_advice; i++) {
		if (a->advice[i].kind != kind)
			continue;
		lp_buf_adds(out, "- ");
		lp_md_text(out, a->advice[i].text);
		lp_buf_adds(out, " [");
		lp_buf_adds(out, a->advice[i].rule);
		lp_buf_adds(out, "]\n");
		n++;
	}
	if (!n)
		lp_buf_adds(out, kind == LP_ADVICE_TAKEAWAY
			? "- No rule triggered: not enough measurements (see the thresholds in docs/metrics.md).\n"
			: "- No rule triggered a recommendation on these measurements (thresholds in docs/metrics.md).\n");
	return out->oom ? -1 : 0;
}
