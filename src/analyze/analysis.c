/* analysis.c: lp_analyze, the step between the loaded artifacts and the reports (see analysis.h).
 * It runs stages.c, operators.c and kernels.c on the profile, resolves tokens, device and peaks,
 * divides the model's FLOPs and minimum bytes (flops.c) by the measured GPU time for MFU/MBU,
 * cross-checks with the FLOPs Nsight Compute counted, and derives the advice (advice.c). */
#include "analyze/analysis.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advice.h"

void lp_num_set(struct lp_num *n, double value)
{
	n->valid = 1;
	n->value = value;
	n->why[0] = '\0';
}

void lp_num_na(struct lp_num *n, const char *fmt, ...)
{
	va_list ap;
	n->valid = 0;
	n->value = 0;
	va_start(ap, fmt);
	vsnprintf(n->why, sizeof(n->why), fmt, ap);
	va_end(ap);
}

int lp_num_format(const struct lp_num *n, int decimals, double scale, const char *suffix, struct lp_buf *out)
{
	if (!n->valid)
		return lp_buf_addf(out, "n/a (%s)", n->why);
	return lp_buf_addf(out, "%.*f%s", decimals, n->value * scale, suffix ? suffix : "");
}

void lp_analysis_release(struct lp_analysis *a)
{
	lp_stage_set_release(&a->stages);
	lp_op_table_release(&a->ops);
	lp_kernel_set_release(&a->kernels);
	free(a->phases);
	free(a->advice);
	if (a->env)
		json_decref(a->env);
	lp_arena_release(&a->arena);
	memset(a, 0, sizeof(*a));
}

static const char *dup(struct lp_analysis *a, const char *s)
{
	const char *d = lp_arena_strdup(&a->arena, s ? s : "");
	return d ? d : "";
}

/* Batch, prompt length and decode steps from payloads and inputs.* (see analysis.h). */
static void resolve_tokens(const struct lp_analysis_input *in, struct lp_analysis *a)
{
	const struct lp_stage *pf = lp_stages_find(&a->stages, LP_STAGE_PREFILL);
	const struct lp_stage *dec = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	uint64_t payload = 0;
	int have_payload = 0;
	a->batch = in->batch > 0 ? in->batch : 0;
	a->prompt_len = in->prompt_len > 0 ? in->prompt_len : 0;
	if (pf && pf->n_iters && pf->iters[0].has_payload && pf->iters[0].payload > 0) {
		have_payload = 1;
		payload = pf->iters[0].payload;
	}
	if (have_payload) {
		if (!a->batch && a->prompt_len && payload % (uint64_t)a->prompt_len == 0)
			a->batch = (int64_t)(payload / (uint64_t)a->prompt_len);
		if (a->batch && !a->prompt_len && payload % (uint64_t)a->batch == 0)
			a->prompt_len = (int64_t)(payload / (uint64_t)a->batch);
	}
	if (dec && dec->steps.n && dec->steps.mean > 0)
		a->steps = (int64_t)llround(dec->steps.mean);
	else if (in->new_tokens > 0)
		a->steps = in->new_tokens;
	a->tokens_why[0] = '\0';
	if (!a->batch && !a->prompt_len)
		snprintf(a->tokens_why, sizeof(a->tokens_why), "batch and prompt length unknown: set inputs.batch and inputs.prompt_len");
	else if (!a->batch)
		snprintf(a->tokens_why, sizeof(a->tokens_why), "batch unknown: set inputs.batch");
	else if (!a->prompt_len)
		snprintf(a->tokens_why, sizeof(a->tokens_why), "prompt length unknown: set inputs.prompt_len");

	if (have_payload)
		lp_num_set(&a->prefill_tokens, (double)payload);
	else if (a->batch && a->prompt_len)
		lp_num_set(&a->prefill_tokens, (double)(a->batch * a->prompt_len));
	else
		lp_num_na(&a->prefill_tokens, "%s", a->tokens_why[0] ? a->tokens_why : "no prefill payload");
	if (!dec || !dec->n_iters) {
		lp_num_na(&a->decode_tokens, "no measured decode_all range");
		lp_num_na(&a->decode_tokens_per_s, "no measured decode_all range");
		lp_num_na(&a->decode_step_ms, "no measured decode_all range");
	} else if (!a->steps) {
		lp_num_na(&a->decode_tokens, "no decode_step ranges and inputs.new_tokens unset");
		lp_num_na(&a->decode_tokens_per_s, "%s", a->decode_tokens.why);
		lp_num_na(&a->decode_step_ms, "%s", a->decode_tokens.why);
	} else {
		lp_num_set(&a->decode_step_ms, dec->lat_ms.mean / (double)a->steps);
		if (!a->batch) {
			lp_num_na(&a->decode_tokens, "batch unknown: set inputs.batch");
			lp_num_na(&a->decode_tokens_per_s, "batch unknown: set inputs.batch");
		} else {
			lp_num_set(&a->decode_tokens, (double)(a->batch * a->steps));
			if (dec->lat_ms.mean > 0)
				lp_num_set(&a->decode_tokens_per_s, a->decode_tokens.value / (dec->lat_ms.mean / 1e3));
			else
				lp_num_na(&a->decode_tokens_per_s, "decode latency is 0");
		}
	}
	if (pf && pf->n_iters)
		lp_num_set(&a->ttft_ms, pf->lat_ms.mean);
	else
		lp_num_na(&a->ttft_ms, "no measured prefill range");
}

static void check(struct lp_analysis *a, const char *what, const struct lp_num *ours, double theirs)
{
	struct lp_self_check *c;
	if (!ours->valid || theirs <= 0 || a->n_checks >= sizeof(a->checks) / sizeof(a->checks[0]))
		return;
	c = &a->checks[a->n_checks++];
	c->what = what;
	c->ours = ours->value;
	c->theirs = theirs;
	c->diff = (ours->value - theirs) / theirs;
	if (fabs(c->diff) > LP_SELF_CHECK_TOL)
		a->check_failed = 1;
}

/* llmprof's headline numbers against the workload's own (analysis.h). */
static void self_check(struct lp_analysis *a)
{
	const struct lp_stage *dec = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	struct lp_num dec_ms;
	if (!a->own.valid)
		return;
	if (dec && dec->n_iters)
		lp_num_set(&dec_ms, dec->lat_ms.mean);
	else
		lp_num_na(&dec_ms, "no decode stage");
	check(a, "time to first token (ms)", &a->ttft_ms, a->own.prefill_ms);
	check(a, "decode latency per iteration (ms)", &dec_ms, a->own.decode_ms);
	check(a, "decode ms per step", &a->decode_step_ms, a->own.decode_ms_per_step);
	check(a, "decode tokens/s", &a->decode_tokens_per_s, a->own.tokens_per_s);
}

static void perf_na_all(struct lp_perf *p, const char *why)
{
	lp_num_na(&p->flops, "%s", why);
	lp_num_na(&p->bytes, "%s", why);
	lp_num_na(&p->tflops_per_s, "%s", why);
	lp_num_na(&p->gbs, "%s", why);
	lp_num_na(&p->mfu, "%s", why);
	lp_num_na(&p->mbu, "%s", why);
	lp_num_na(&p->mfu_lat, "%s", why);
	lp_num_na(&p->mbu_lat, "%s", why);
}

/* Fills the ratios of a perf row whose flops/bytes/gpu_s/host_s are set or n/a. */
static void perf_ratios(struct lp_analysis *a, struct lp_perf *p)
{
	if (!p->flops.valid || !p->gpu_s.valid) {
		lp_num_na(&p->tflops_per_s, "%s", !p->flops.valid ? p->flops.why : p->gpu_s.why);
		lp_num_na(&p->mfu, "%s", p->tflops_per_s.why);
	} else {
		lp_num_set(&p->tflops_per_s, p->flops.value / p->gpu_s.value / 1e12);
		if (a->peak.flops_valid)
			lp_num_set(&p->mfu, p->flops.value / p->gpu_s.value / a->peak.flops_per_s);
		else
			lp_num_na(&p->mfu, "%s", a->peak.flops_source);
	}
	if (!p->bytes.valid || !p->gpu_s.valid) {
		lp_num_na(&p->gbs, "%s", !p->bytes.valid ? p->bytes.why : p->gpu_s.why);
		lp_num_na(&p->mbu, "%s", p->gbs.why);
	} else {
		lp_num_set(&p->gbs, p->bytes.value / p->gpu_s.value / 1e9);
		if (a->peak.bw_valid)
			lp_num_set(&p->mbu, p->bytes.value / p->gpu_s.value / a->peak.bytes_per_s);
		else
			lp_num_na(&p->mbu, "%s", a->peak.bw_source);
	}
	if (p->flops.valid && p->lat_s.valid && p->lat_s.value > 0 && a->peak.flops_valid)
		lp_num_set(&p->mfu_lat, p->flops.value / p->lat_s.value / a->peak.flops_per_s);
	else
		lp_num_na(&p->mfu_lat, "%s", !p->flops.valid ? p->flops.why : !a->peak.flops_valid ? a->peak.flops_source
			: p->lat_s.valid ? "latency is 0" : p->lat_s.why);
	if (p->bytes.valid && p->lat_s.valid && p->lat_s.value > 0 && a->peak.bw_valid)
		lp_num_set(&p->mbu_lat, p->bytes.value / p->lat_s.value / a->peak.bytes_per_s);
	else
		lp_num_na(&p->mbu_lat, "%s", !p->bytes.valid ? p->bytes.why : !a->peak.bw_valid ? a->peak.bw_source
			: p->lat_s.valid ? "latency is 0" : p->lat_s.why);
}

/* FLOPs ncu counted for one stage kind, per iteration, and the kernel time they cover. */
static void ncu_crosscheck(struct lp_analysis *a, int kind, size_t n_iters, struct lp_perf *p)
{
	double flops = 0, covered = 0, all = 0;
	size_t i;
	int any = 0;
	for (i = 0; i < a->kernels.n_rows; i++) {
		const struct lp_kernel_row *r = &a->kernels.rows[i];
		double ms = kind < 0 ? r->stage_ms[0] + r->stage_ms[1] : r->stage_ms[kind];
		uint64_t calls = kind < 0 ? r->stage_calls[0] + r->stage_calls[1] : r->stage_calls[kind];
		all += ms;
		if (r->ncu.joined && !isnan(r->ncu.flops) && calls > 0) {
			flops += r->ncu.flops * (double)calls;
			covered += ms;
			any = 1;
		}
	}
	if (!a->kernels.n_ncu_records) {
		lp_num_na(&p->ncu_flops, "no Nsight Compute data (light mode or ncu skipped)");
		lp_num_na(&p->ncu_coverage, "%s", p->ncu_flops.why);
	} else if (!any || !n_iters) {
		lp_num_na(&p->ncu_flops, "no ncu FLOP counters joined to this stage's kernels");
		lp_num_na(&p->ncu_coverage, "%s", p->ncu_flops.why);
	} else {
		lp_num_set(&p->ncu_flops, flops / (double)n_iters);
		lp_num_set(&p->ncu_coverage, all > 0 ? covered / all : 0);
	}
}

static void compute_perf(struct lp_analysis *a)
{
	const struct lp_stage *pf = lp_stages_find(&a->stages, LP_STAGE_PREFILL);
	const struct lp_stage *dec = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	const struct lp_stage *st[2] = { pf, dec };
	static const char *const labels[3] = { "prefill", "decode", "model" };
	double sum_f = 0, sum_b = 0, sum_g = 0, sum_h = 0, sum_l = 0;
	int k, all_ok = 1;
	size_t i;
	for (k = 0; k < 3; k++) {
		memset(&a->perf[k], 0, sizeof(a->perf[k]));
		a->perf[k].label = labels[k];
	}
	for (k = 0; k < 2; k++) {
		struct lp_perf *p = &a->perf[k];
		const struct lp_stage *s = st[k];
		if (!s || !s->n_iters) {
			perf_na_all(p, k == 0 ? "no measured prefill range" : "no measured decode_all range");
			lp_num_na(&p->gpu_s, "%s", p->flops.why);
			lp_num_na(&p->host_s, "%s", p->flops.why);
			lp_num_na(&p->lat_s, "%s", p->flops.why);
			lp_num_na(&p->ncu_flops, "%s", p->flops.why);
			lp_num_na(&p->ncu_coverage, "%s", p->flops.why);
			all_ok = 0;
			continue;
		}
		lp_num_set(&p->host_s, s->host_ms.mean / 1e3);
		lp_num_set(&p->lat_s, s->lat_ms.mean / 1e3);
		if (!a->stages.have_gpu)
			lp_num_na(&p->gpu_s, "CPU run: no GPU kernels recorded");
		else if (s->gpu_ms.mean <= 0)
			lp_num_na(&p->gpu_s, "no kernels attributed to the stage");
		else
			lp_num_set(&p->gpu_s, s->gpu_ms.mean / 1e3);
		if (!a->have_model) {
			lp_num_na(&p->flops, "%s", a->model_why);
			lp_num_na(&p->bytes, "%s", a->model_why);
		} else if (k == 0 && (!a->batch || !a->prompt_len)) {
			lp_num_na(&p->flops, "%s", a->tokens_why);
			lp_num_na(&p->bytes, "%s", a->tokens_why);
		} else if (k == 1 && (!a->batch || !a->prompt_len || !a->steps)) {
			lp_num_na(&p->flops, "%s", a->tokens_why[0] ? a->tokens_why : "decode steps unknown");
			lp_num_na(&p->bytes, "%s", p->flops.why);
		} else if (k == 0) {
			lp_num_set(&p->flops, lp_flops_prefill(&a->model, a->batch, a->prompt_len));
			lp_num_set(&p->bytes, lp_bytes_prefill(&a->model, a->batch, a->prompt_len));
		} else {
			/* per iteration with its own step count, then the mean */
			double f = 0, b = 0;
			for (i = 0; i < s->n_iters; i++) {
				int64_t n = s->iters[i].steps ? (int64_t)s->iters[i].steps : a->steps;
				f += lp_flops_decode(&a->model, a->batch, a->prompt_len, n);
				b += lp_bytes_decode(&a->model, a->batch, a->prompt_len, n);
			}
			lp_num_set(&p->flops, f / (double)s->n_iters);
			lp_num_set(&p->bytes, b / (double)s->n_iters);
		}
		if (p->bytes.valid && !lp_dtype_bytes(a->model.dtype))
			lp_num_na(&p->bytes, "unknown dtype '%s' (model.dtype)", a->model.dtype);
		perf_ratios(a, p);
		ncu_crosscheck(a, k, s->n_iters, p);
		if (p->flops.valid && p->bytes.valid && p->gpu_s.valid && p->host_s.valid) {
			sum_f += p->flops.value;
			sum_b += p->bytes.value;
			sum_g += p->gpu_s.value;
			sum_h += p->host_s.value;
			sum_l += p->lat_s.value;
		} else {
			all_ok = 0;
		}
	}
	{
		struct lp_perf *m = &a->perf[2];
		if (all_ok) {
			lp_num_set(&m->flops, sum_f);
			lp_num_set(&m->bytes, sum_b);
			lp_num_set(&m->gpu_s, sum_g);
			lp_num_set(&m->host_s, sum_h);
			lp_num_set(&m->lat_s, sum_l);
			perf_ratios(a, m);
		} else {
			const struct lp_perf *bad = a->perf[0].mfu.valid || a->perf[0].gpu_s.valid ? &a->perf[1] : &a->perf[0];
			const char *why = !bad->flops.valid ? bad->flops.why : !bad->gpu_s.valid ? bad->gpu_s.why : bad->bytes.why;
			perf_na_all(m, why[0] ? why : "a stage is missing");
			lp_num_na(&m->gpu_s, "%s", m->flops.why);
			lp_num_na(&m->host_s, "%s", m->flops.why);
			lp_num_na(&m->lat_s, "%s", m->flops.why);
		}
		ncu_crosscheck(a, -1, pf && pf->n_iters ? pf->n_iters : dec ? dec->n_iters : 0, m);
	}
}

int lp_analyze(const struct lp_analysis_input *in, struct lp_analysis *out, struct lp_err *err)
{
	const struct lp_profile *p = in->profile;
	const struct lp_device *dev = in->device;
	size_t i;
	memset(out, 0, sizeof(*out));
	if (!p)
		return lp_err_set(err, LP_EUSAGE, "no profile to analyze");
	out->schema_version = LP_ANALYSIS_SCHEMA_VERSION;
	out->run_id = dup(out, in->run_id);
	out->mode = dup(out, in->mode);
	out->source = dup(out, p->source);
	out->source_kind = dup(out, p->source_kind);

	/* model shape */
	if (in->model && !json_is_null(in->model)) {
		struct lp_err merr = LP_ERR_INIT;
		if (lp_model_shape_from_json(in->model, &out->model, &merr) == 0) {
			out->have_model = 1;
			lp_model_params(&out->model, &out->params);
		} else {
			snprintf(out->model_why, sizeof(out->model_why), "%.190s", merr.msg);
		}
	} else {
		snprintf(out->model_why, sizeof(out->model_why), "no model shape: set model=<name>, model.hf_config or model.* keys");
	}

	/* device and peaks */
	if (!dev && p->n_devices)
		dev = &p->devices[0];
	if (dev) {
		out->have_device = 1;
		out->device = *dev;
		out->device.name = dup(out, dev->name);
		out->device.uuid = dup(out, dev->uuid);
	}
	lp_peak_resolve(dev, out->have_model ? out->model.dtype : NULL, in->peak_tflops, in->peak_bw_gbs, &out->peak);
	if (!out->have_model && !out->peak.flops_valid && dev)
		snprintf(out->peak.flops_source, sizeof(out->peak.flops_source), "dtype unknown: %.170s", out->model_why);

	if (lp_stages_compute(p, &out->stages, err) < 0 || lp_operators_compute(p, &out->stages, &out->ops, err) < 0 ||
	    lp_kernels_compute(p, &out->stages, in->ncu, in->n_ncu, &out->peak, &out->kernels, err) < 0) {
		lp_analysis_release(out);
		return -1;
	}
	resolve_tokens(in, out);
	compute_perf(out);

	for (i = 0; i < p->n_processes; i++) {
		out->tracer_overhead_ns += p->processes[i].overhead_ns;
		out->dropped_records += p->processes[i].dropped_records;
	}
	out->n_processes = p->n_processes;
	out->own = in->own;
	self_check(out);
	out->traced_s = in->traced_s;
	out->untraced_s = in->untraced_s;
	if (in->n_phases) {
		out->phases = malloc(in->n_phases * sizeof(*out->phases));
		if (!out->phases) {
			lp_analysis_release(out);
			return lp_err_set(err, LP_EOTHER, "out of memory");
		}
		memcpy(out->phases, in->phases, in->n_phases * sizeof(*out->phases));
		out->n_phases = in->n_phases;
	}
	if (in->env)
		out->env = json_incref((json_t *)(uintptr_t)in->env);
	if (lp_advice_compute(out, err) < 0) {
		lp_analysis_release(out);
		return -1;
	}
	return 0;
}
