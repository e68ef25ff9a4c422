/* advice.c: measured numbers -> takeaways and recommendations (see advice.h). Last step of
 * lp_analyze; the stakeholder summary prints the result under "Stage Takeaways" and
 * "Recommendations". Every rule states its threshold next to the numbers it saw. */
#include "analyze/advice.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"

struct ctx {
	struct lp_analysis *a;
	size_t cap;
	int oom;
};

static void add(struct ctx *c, enum lp_advice_kind kind, const char *rule, const char *fmt, ...) LP_PRINTF(4, 5);

static void add(struct ctx *c, enum lp_advice_kind kind, const char *rule, const char *fmt, ...)
{
	struct lp_buf b = LP_BUF_INIT;
	struct lp_advice *it;
	va_list ap;
	if (c->oom)
		return;
	if (LP_ARRAY_RESERVE(c->a->advice, c->cap, c->a->n_advice + 1, NULL) < 0) {
		c->oom = 1;
		return;
	}
	va_start(ap, fmt);
	lp_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	it = &c->a->advice[c->a->n_advice];
	it->kind = kind;
	it->rule = lp_arena_strdup(&c->a->arena, rule);
	it->text = lp_arena_strdup(&c->a->arena, b.data);
	if (b.oom || !it->rule || !it->text)
		c->oom = 1;
	else
		c->a->n_advice++;
	lp_buf_release(&b);
}

static double pct(double x)
{
	return 100.0 * x;
}

static void stage_dominance(struct ctx *c)
{
	const struct lp_stage *pf = lp_stages_find(&c->a->stages, LP_STAGE_PREFILL);
	const struct lp_stage *dec = lp_stages_find(&c->a->stages, LP_STAGE_DECODE);
	double p, d, tot;
	if (!pf || !dec || !pf->n_iters || !dec->n_iters)
		return;
	p = pf->lat_ms.mean;
	d = dec->lat_ms.mean;
	tot = p + d;
	if (tot <= 0)
		return;
	if (d / tot > LP_ADVICE_DOMINANT)
		add(c, LP_ADVICE_TAKEAWAY, "stage-dominates",
			"Decode dominates: %.1f%% of the latency per iteration (decode %.3f ms vs prefill %.3f ms; "
			"threshold > %.0f%%).", pct(d / tot), d, p, pct(LP_ADVICE_DOMINANT));
	else if (p / tot > LP_ADVICE_DOMINANT)
		add(c, LP_ADVICE_TAKEAWAY, "stage-dominates",
			"Prefill dominates: %.1f%% of the latency per iteration (prefill %.3f ms vs decode %.3f ms; "
			"threshold > %.0f%%).", pct(p / tot), p, d, pct(LP_ADVICE_DOMINANT));
}

/* The three clocks of each stage: GPU-bound or waiting on the host (stages.h), and kernel overlap. */
static void clocks(struct ctx *c)
{
	size_t i;
	for (i = 0; i < c->a->stages.n_stages; i++) {
		const struct lp_stage *st = &c->a->stages.stages[i];
		char rule[48];
		if (st->kind == LP_STAGE_OTHER || !st->n_iters || isnan(st->idle_frac))
			continue;
		snprintf(rule, sizeof(rule), "clocks-%s", st->kind == LP_STAGE_PREFILL ? "prefill"
			: st->kind == LP_STAGE_MIXED ? "mixed" : "decode");
		add(c, LP_ADVICE_TAKEAWAY, rule,
			"%s is %s: latency %.3f ms per iteration, GPU busy %.3f ms (idle %.1f%% of the latency), host "
			"launch/CPU time %.3f ms (GPU-bound at idle <= %.0f%%; launch-bound at idle >= %.0f%% with the host "
			"busy >= %.0f%% of the latency).", st->kind == LP_STAGE_PREFILL ? "Prefill" : st->kind == LP_STAGE_MIXED ? "Mixed"
			: "Decode", st->bound,
			st->lat_ms.mean, st->gpu_ms.mean, pct(st->idle_frac), st->host_ms.mean, pct(LP_STAGE_GPU_BOUND_IDLE),
			pct(LP_STAGE_LAUNCH_BOUND_IDLE), pct(LP_STAGE_HOST_BUSY));
		if (st->overlap > LP_ADVICE_OVERLAP) {
			snprintf(rule, sizeof(rule), "overlap-%s", st->kind == LP_STAGE_PREFILL ? "prefill"
				: st->kind == LP_STAGE_MIXED ? "mixed" : "decode");
			add(c, LP_ADVICE_TAKEAWAY, rule,
				"Kernels overlap in %s: their summed durations (%.3f ms) are %.2fx the GPU busy time (%.3f ms) "
				"per iteration (concurrent streams or programmatic dependent launch; a kernel's duration then "
				"includes waiting). Kernel shares use each kernel's share of busy time (busy_ms), which adds up "
				"to 100%%.", st->name, st->kernel_ms.mean, st->overlap, st->gpu_ms.mean);
		}
	}
}

/* The gap waterfall's three largest items above the floor, with what usually fixes each. */
static void waterfall(struct ctx *c)
{
	int k, t;
	for (k = 1; k >= 0; k--) {
		const struct lp_waterfall *w = &c->a->waterfall[k];
		struct lp_buf b = LP_BUF_INIT;
		char rule[32];
		if (!w->valid || w->top[0] < 0)
			continue;
		lp_buf_addf(&b, "%s %s: %.4f ms measured against a floor of %.4f ms; the largest items above it: ",
			k ? "Decode" : "Prefill", k ? "step" : "iteration", w->latency_ms, w->floor_ms);
		for (t = 0; t < 3 && w->top[t] >= 0; t++) {
			const struct lp_wf_item *it = &w->items[w->top[t]];
			lp_buf_addf(&b, "%s(%d) %s %.4f ms (%.0f%%): %s", t ? "; " : "", t + 1, it->label, it->ms,
				pct(it->ms / w->latency_ms), it->fix);
		}
		lp_buf_adds(&b, ".");
		snprintf(rule, sizeof(rule), "waterfall-%s", k ? "decode" : "prefill");
		add(c, LP_ADVICE_RECOMMENDATION, rule, "%s", b.data);
		if (b.oom)
			c->oom = 1;
		lp_buf_release(&b);
	}
}

static void self_check(struct ctx *c)
{
	size_t i;
	for (i = 0; i < c->a->n_checks; i++) {
		const struct lp_self_check *k = &c->a->checks[i];
		if (fabs(k->diff) > LP_SELF_CHECK_TOL)
			add(c, LP_ADVICE_TAKEAWAY, "self-check",
				"Self-check: llmprof's %s is %.3f, the workload's own measurement %.3f (%+.1f%%, tolerance "
				"%.0f%%): read the stage numbers with care and see docs/metrics.md.", k->what, k->ours, k->theirs,
				pct(k->diff), pct(LP_SELF_CHECK_TOL));
	}
}

static void boundness(struct ctx *c)
{
	int k;
	for (k = 0; k < 2; k++) {
		const struct lp_perf *p = &c->a->perf[k];
		char rule[32];
		if (!p->mfu.valid || !p->mbu.valid)
			continue;
		snprintf(rule, sizeof(rule), "bound-%s", p->label);
		if (p->mbu.value >= p->mfu.value) {
			add(c, LP_ADVICE_TAKEAWAY, rule,
				"%s is memory-bound: MBU %.1f%% of peak bandwidth vs MFU %.1f%% of peak FLOP/s "
				"(%.1f GB/s of %.0f GB/s).", k == 0 ? "Prefill" : "Decode", pct(p->mbu.value), pct(p->mfu.value),
				p->gbs.value, c->a->peak.bytes_per_s / 1e9);
			if (k == 1 && c->a->batch == 1)
				add(c, LP_ADVICE_RECOMMENDATION, rule,
					"Decode at batch 1 re-reads all weights every step (%.1f MB per step, MBU %.1f%%): batch "
					"more sequences per step or quantize the weights to raise tokens/s.",
					c->a->have_model ? lp_bytes_weights_step(&c->a->model, 1) / 1e6 : 0.0, pct(p->mbu.value));
			if (p->mbu.value < LP_ADVICE_LOW_UTIL)
				add(c, LP_ADVICE_RECOMMENDATION, rule,
					"%s reaches only %.1f%% of peak bandwidth while memory-bound (threshold %.0f%%): look for "
					"launch gaps, small kernels and uncoalesced access before anything else.",
					k == 0 ? "Prefill" : "Decode", pct(p->mbu.value), pct(LP_ADVICE_LOW_UTIL));
		} else {
			add(c, LP_ADVICE_TAKEAWAY, rule,
				"%s is compute-bound: MFU %.1f%% of peak FLOP/s vs MBU %.1f%% of peak bandwidth (%.1f TFLOP/s "
				"achieved).", k == 0 ? "Prefill" : "Decode", pct(p->mfu.value), pct(p->mbu.value), p->tflops_per_s.value);
			if (p->mfu.value < LP_ADVICE_LOW_UTIL)
				add(c, LP_ADVICE_RECOMMENDATION, rule,
					"%s reaches %.1f%% MFU while compute-bound (threshold %.0f%%): check that the GEMMs use "
					"tensor cores with well-shaped tiles and that attention uses a fused kernel.",
					k == 0 ? "Prefill" : "Decode", pct(p->mfu.value), pct(LP_ADVICE_LOW_UTIL));
		}
	}
}

static void roofline(struct ctx *c)
{
	double t[4] = { 0, 0, 0, 0 }, all = 0;
	size_t i;
	for (i = 0; i < c->a->kernels.n_rows; i++) {
		const struct lp_kernel_row *r = &c->a->kernels.rows[i];
		if (r->ncu.joined && r->ncu.roofline != LP_ROOF_NA) {
			t[r->ncu.roofline] += r->total_ms;
			all += r->total_ms;
		}
	}
	if (all <= 0)
		return;
	add(c, LP_ADVICE_TAKEAWAY, "roofline",
		"Roofline (ncu, ridge %.1f FLOP/byte, balanced within %.0fx): of the %.3f ms of classified kernel time, "
		"%.1f%% is memory-bound, %.1f%% balanced, %.1f%% compute-bound.",
		c->a->kernels.ridge_flop_per_byte, LP_ROOF_BAND, all, pct(t[LP_ROOF_MEMORY] / all),
		pct(t[LP_ROOF_BALANCED] / all), pct(t[LP_ROOF_COMPUTE] / all));
}

static void decode_gaps(struct ctx *c)
{
	const struct lp_stage *dec = lp_stages_find(&c->a->stages, LP_STAGE_DECODE);
	double idle, per_step, mean_us;
	if (!dec || !dec->n_iters || !c->a->stages.have_gpu || dec->lat_ms.mean <= 0 || dec->kernels.mean <= 0)
		return;
	idle = 1.0 - dec->gpu_ms.mean / dec->lat_ms.mean;
	if (idle > LP_ADVICE_IDLE) {
		add(c, LP_ADVICE_TAKEAWAY, "decode-idle",
			"The GPU is idle %.1f%% of the decode latency: busy %.3f ms of %.3f ms per iteration "
			"(threshold %.0f%%).", pct(idle), dec->gpu_ms.mean, dec->lat_ms.mean, pct(LP_ADVICE_IDLE));
		if (dec->host_ms.mean >= LP_STAGE_HOST_BUSY * dec->lat_ms.mean)
			add(c, LP_ADVICE_RECOMMENDATION, "decode-idle",
				"Capture the decode step in a CUDA graph (or otherwise cut per-launch host overhead): the GPU "
				"waits on the host for %.1f%% of decode while the host spends %.3f of %.3f ms launching.",
				pct(idle), dec->host_ms.mean, dec->lat_ms.mean);
		else
			add(c, LP_ADVICE_RECOMMENDATION, "decode-idle",
				"Remove the host synchronizations and host work between decode launches (e.g. per-step .item() "
				"or stopping checks, sampling on the CPU): the GPU is idle %.1f%% of decode while the host is "
				"launching only %.3f of %.3f ms.", pct(idle), dec->host_ms.mean, dec->lat_ms.mean);
	}
	per_step = c->a->steps > 0 ? dec->kernels.mean / (double)c->a->steps : dec->kernels.mean;
	mean_us = dec->kernel_ms.mean / dec->kernels.mean * 1e3;
	if (c->a->steps > 0 && per_step >= LP_ADVICE_FUSION_KERNELS && mean_us < LP_ADVICE_SHORT_US) {
		add(c, LP_ADVICE_TAKEAWAY, "decode-fusion",
			"Decode launches %.0f kernels per step with a mean kernel time of %.2f us (thresholds >= %.0f kernels, "
			"< %.0f us).", per_step, mean_us, LP_ADVICE_FUSION_KERNELS, LP_ADVICE_SHORT_US);
		add(c, LP_ADVICE_RECOMMENDATION, "decode-fusion",
			"Fuse the small decode kernels (norm + residual, RoPE into QKV, SwiGLU into the MLP GEMM epilogue): "
			"%.0f launches of %.2f us each per step leave the GPU launch-bound.", per_step, mean_us);
	}
}

static void families(struct ctx *c)
{
	static const char *const names[3] = { "prefill", "decode", "other" };
	static const int order[2] = { 1, 0 };
	int oi;
	for (oi = 0; oi < 2; oi++) {
		int k = order[oi];
		const double *fm = c->a->kernels.family_ms[k];
		double all = 0, small;
		int idx[LP_FAM_COUNT], i, j, n = 0;
		struct lp_buf b = LP_BUF_INIT;
		char rule[32];
		for (i = 0; i < LP_FAM_COUNT; i++)
			all += fm[i];
		if (all <= 0)
			continue;
		for (i = 0; i < LP_FAM_COUNT; i++)
			idx[i] = i;
		for (i = 0; i < LP_FAM_COUNT; i++)   /* stable selection sort by time, descending */
			for (j = i + 1; j < LP_FAM_COUNT; j++)
				if (fm[idx[j]] > fm[idx[i]]) {
					int t = idx[i];
					idx[i] = idx[j];
					idx[j] = t;
				}
		for (i = 0; i < LP_FAM_COUNT && n < 4; i++) {
			if (fm[idx[i]] <= 0)
				break;
			lp_buf_addf(&b, "%s%s %.1f%%", n ? ", " : "", lp_kname_family_name((enum lp_kernel_family)idx[i]),
				pct(fm[idx[i]] / all));
			n++;
		}
		snprintf(rule, sizeof(rule), "families-%s", names[k]);
		add(c, LP_ADVICE_TAKEAWAY, rule, "In %s, %s kernels dominate: %s of %.3f ms kernel time.", names[k],
			lp_kname_family_name((enum lp_kernel_family)idx[0]), b.data, all);
		lp_buf_release(&b);
		small = fm[LP_FAM_NORM] + fm[LP_FAM_ROPE] + fm[LP_FAM_SOFTMAX] + fm[LP_FAM_ELEMENTWISE];
		if (small / all > LP_ADVICE_SMALL_OPS)
			add(c, LP_ADVICE_RECOMMENDATION, rule,
				"In %s, norm/RoPE/softmax/elementwise kernels take %.1f%% of kernel time (threshold %.0f%%): "
				"fuse them into neighbouring GEMMs or into one another.", names[k], pct(small / all),
				pct(LP_ADVICE_SMALL_OPS));
		if (fm[LP_FAM_ATTENTION] / all > LP_ADVICE_ATTENTION)
			add(c, LP_ADVICE_RECOMMENDATION, rule,
				"In %s, attention takes %.1f%% of kernel time (threshold %.0f%%): %s", names[k],
				pct(fm[LP_FAM_ATTENTION] / all), pct(LP_ADVICE_ATTENTION),
				k == 1 ? "split the KV sequence across blocks (flash-decoding) and keep the KV cache in 16 bits or less."
				       : "use a fused flash-attention kernel for the causal prompt.");
		if (fm[LP_FAM_MEMCPY] / all > LP_ADVICE_MEMCPY)
			add(c, LP_ADVICE_RECOMMENDATION, rule,
				"In %s, copies and memsets take %.1f%% of GPU time (threshold %.0f%%): keep data on the device, "
				"use pinned memory and avoid per-step host round trips.", names[k], pct(fm[LP_FAM_MEMCPY] / all),
				pct(LP_ADVICE_MEMCPY));
	}
}

static void attention_vs_projections(struct ctx *c)
{
	const struct lp_stage *dec = lp_stages_find(&c->a->stages, LP_STAGE_DECODE);
	static const char *const proj[] = { "qkv", "o_proj", "mlp", "moe", "lm_head", NULL };
	double att = 0, pr = 0;
	size_t i, j;
	int have = 0;
	if (!dec || !c->a->stages.have_gpu)
		return;
	for (i = 0; i < c->a->ops.n_rows; i++) {
		const struct lp_op_row *r = &c->a->ops.rows[i];
		if (strcmp(r->stage, dec->name))
			continue;
		if (!strcmp(r->name, "attention")) {
			att += r->gpu_incl_ms;
			have = 1;
		}
		for (j = 0; proj[j]; j++)
			if (!strcmp(r->name, proj[j]))
				pr += r->gpu_incl_ms;
	}
	if (have && pr > 0 && dec->n_iters) {
		add(c, LP_ADVICE_TAKEAWAY, "attention-vs-proj",
			"Decode attention vs projections (op ranges): %.3f ms vs %.3f ms per iteration; attention is %.1f%% "
			"of their sum.", att / (double)dec->n_iters, pr / (double)dec->n_iters, pct(att / (att + pr)));
		return;
	}
	att = c->a->kernels.family_ms[1][LP_FAM_ATTENTION];
	pr = c->a->kernels.family_ms[1][LP_FAM_GEMM];
	if (att > 0 && pr > 0 && dec->n_iters)
		add(c, LP_ADVICE_TAKEAWAY, "attention-vs-proj",
			"Decode attention vs GEMM kernels (by kernel name, no op ranges): %.3f ms vs %.3f ms per iteration; "
			"attention is %.1f%% of their sum.", att / (double)dec->n_iters, pr / (double)dec->n_iters,
			pct(att / (att + pr)));
}

/* Several ranks: exposed communication and skew (analyze/ranks.h makes the text). */
static void ranks(struct ctx *c)
{
	size_t i;
	for (i = 0; i < c->a->ranks.n_advice; i++)
		add(c, LP_ADVICE_RECOMMENDATION, c->a->ranks.advice[i].rule, "%s", c->a->ranks.advice[i].text);
}

int lp_advice_compute(struct lp_analysis *a, struct lp_err *err)
{
	struct ctx c = { a, 0, 0 };
	if (!a->stages.have_gpu)
		add(&c, LP_ADVICE_TAKEAWAY, "cpu-run",
			"No GPU kernels were recorded (CPU run): only host times are available; MFU, MBU and the kernel "
			"table are n/a.");
	/* CUPTI's one record a detach is no kernel's (dropped_at_detach): not worth a takeaway */
	if (a->dropped_records > a->dropped_at_detach)
		add(&c, LP_ADVICE_TAKEAWAY, "dropped",
			"The tracer dropped %llu records: GPU times may be under-counted.",
			(unsigned long long)(a->dropped_records - a->dropped_at_detach));
	self_check(&c);
	stage_dominance(&c);
	clocks(&c);
	boundness(&c);
	roofline(&c);
	decode_gaps(&c);
	families(&c);
	attention_vs_projections(&c);
	waterfall(&c);
	ranks(&c);
	if (c.oom)
		return lp_oom(err);
	return 0;
}
