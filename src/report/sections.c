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

size_t lp_measured_iterations(const struct lp_analysis *a)
{
	size_t i, n = 0;
	for (i = 0; i < a->stages.n_stages; i++)
		if (a->stages.stages[i].n_iters > n)
			n = a->stages.stages[i].n_iters;
	return n;
}

int lp_fmt_token_counts(const struct lp_analysis *a, struct lp_buf *out)
{
	const int64_t v[3] = { a->batch, a->prompt_len, a->steps };
	int k;
	for (k = 0; k < 3; k++) {
		if (k)
			lp_buf_adds(out, " / ");
		if (v[k])
			lp_buf_addf(out, "%lld", (long long)v[k]);
		else
			lp_buf_adds(out, "n/a");
	}
	return out->oom ? -1 : 0;
}

int lp_fmt_peaks(const struct lp_analysis *a, lp_text_fn text, struct lp_buf *out)
{
	lp_buf_adds(out, "Peak FLOP/s: ");
	if (a->peak.flops_valid)
		lp_buf_addf(out, "%.1f TFLOP/s (", a->peak.flops_per_s / 1e12);
	else
		lp_buf_adds(out, "n/a (");
	text(out, a->peak.flops_source);
	lp_buf_adds(out, "). Peak bandwidth: ");
	if (a->peak.bw_valid)
		lp_buf_addf(out, "%.0f GB/s (", a->peak.bytes_per_s / 1e9);
	else
		lp_buf_adds(out, "n/a (");
	text(out, a->peak.bw_source);
	lp_buf_adds(out, ")");
	return out->oom ? -1 : 0;
}

int lp_fmt_floor(const struct lp_waterfall *w, lp_text_fn text, struct lp_buf *out)
{
	if (strncmp(w->floor_source, "floor n/a: ", 11))
		return text(out, w->floor_source);
	lp_buf_adds(out, "n/a (");
	text(out, w->floor_source + 11);
	return lp_buf_adds(out, ")");
}

int lp_fmt_gaps(const struct lp_waterfall *w, lp_text_fn text, struct lp_buf *out)
{
	size_t i;
	for (i = 0; i < w->n_gaps; i++) {
		lp_buf_adds(out, i ? "; " : "");
		text(out, w->gaps[i].label);
		if (w->gaps[i].count >= 0.95 || w->gaps[i].count <= 0)
			lp_buf_addf(out, " %.4f ms per %s (%.1f times)", w->gaps[i].ms, w->unit, w->gaps[i].count);
		else   /* rarer than once a unit: "0.0 times" would hide it */
			lp_buf_addf(out, " %.4f ms per %s (once every %.0f %ss)", w->gaps[i].ms, w->unit, 1.0 / w->gaps[i].count,
				w->unit);
	}
	return out->oom ? -1 : 0;
}

/* The stage (enum lp_stage_kind, -1 none) of a comparison in which llmprof's number is `gap_ms`
 * lower than the workload's, when that can be the host time the workload's own timer holds around
 * the stage's range: a gap of at most LP_CHECK_HOST_GAP_MS on a stage whose GPU sat idle at least
 * 90% of it (lp_fmt_step_check, lp_fmt_check_host). NULL otherwise. */
static const struct lp_stage *cpu_bound_stage(const struct lp_analysis *a, int stage, double gap_ms)
{
	const struct lp_stage *st = stage >= 0 ? lp_stages_find(&a->stages, (enum lp_stage_kind)stage) : NULL;
	if (!st || !(st->idle_frac >= 0.9) || !(gap_ms > 0) || gap_ms > LP_CHECK_HOST_GAP_MS)
		return NULL;
	return st;
}

int lp_fmt_step_check(const struct lp_analysis *a, struct lp_buf *out)
{
	const struct lp_stage *st;
	const struct lp_step_check *c = &a->step_check;
	if (!c->theirs)
		return 0;
	if (!c->done)
		lp_buf_addf(out, " Every decode step against the workload's own step times: not compared (%s; %zu in the "
			"trace, %zu in its lines).", c->why_not ? c->why_not : "unknown", c->ours, c->theirs);
	else
		lp_buf_addf(out, " Every decode step against the workload's own step times: %zu of %zu within %.0f%% "
			"(median %.2f%%, largest %.2f%% at step %zu).", c->within, c->ours, LP_STEP_CHECK_PCT,
			c->median_abs_pct, c->max_abs_pct, c->max_at);
	if (!c->done || 2 * c->within >= c->ours)
		return out->oom ? -1 : 0;
	/* most steps outside, all lower by a host dispatch's worth, on an idle GPU: the workload's
	 * step events hold host time outside the step's range (lp_fmt_check_host's case, per step) */
	if ((st = cpu_bound_stage(a, c->stage, c->median_gap_ms)) != NULL)
		lp_buf_addf(out, " The steps ran CPU-bound (the GPU idle %.0f%% of their stage): a workload's step "
			"events then hold the host time around each step's range too (the call into the model, the "
			"sampling between steps), which can account for llmprof's steps being %.3f ms lower at the "
			"median (docs/nvtx.md, torch.compile).", 100 * st->idle_frac, c->median_gap_ms);
	/* most steps outside, all by about the same small amount: where the two clocks start and stop
	 * (HF's static cache on the H200: 35-55 of 381 within 2%, llmprof's 0.047 ms longer at the
	 * median, the 10th to 90th percentile within 0.02 ms of it, the decode per generation
	 * within 0.1%; run 37) */
	else if (fabs(c->median_gap_ms) <= LP_CHECK_HOST_GAP_MS &&
		 c->gap_p90_ms - c->gap_p10_ms <= fabs(c->median_gap_ms))
		lp_buf_addf(out, " llmprof's steps are %.3f ms %s than the workload's at the median, and by about as much "
			"in every step (%+.3f to %+.3f ms, the workload's minus llmprof's, 10th to 90th percentile): a fixed "
			"offset between where each step's range opens and closes and where the workload's own step "
			"timer starts and stops (host work between the two, such as another hook or a graph break; "
			"docs/nvtx.md, torch.compile), not steps that disagree.", fabs(c->median_gap_ms),
			c->median_gap_ms < 0 ? "longer" : "shorter", c->gap_p10_ms, c->gap_p90_ms);
	return out->oom ? -1 : 0;
}

int lp_fmt_check_host(const struct lp_analysis *a, struct lp_buf *out)
{
	size_t i;
	for (i = 0; i < a->n_checks; i++) {
		const struct lp_self_check *c = &a->checks[i];
		int prefill = c->stage == LP_STAGE_PREFILL;
		double gap = c->theirs - c->ours;
		const struct lp_stage *st = cpu_bound_stage(a, c->stage, gap);
		if (fabs(c->diff) <= LP_SELF_CHECK_TOL || !st)
			continue;
		lp_buf_addf(out, " The %s ran CPU-bound (its GPU idle %.0f%% of it): there a workload's CUDA events measure "
			"host time, and its own timer holds what lies outside the stage's range, before the range opens and "
			"after it closes (the call into the model, %s), which can account for llmprof's %s being %.3f ms "
			"lower (docs/nvtx.md, torch.compile).", st->name, 100 * st->idle_frac,
			prefill ? "the first token's sampling" : "the sampling between steps",
			prefill ? "time to first token" : c->stage == LP_STAGE_MIXED ? "mixed forward latency" : "decode latency",
			gap);
	}
	return out->oom ? -1 : 0;
}

/* A table's n/a reasons, each said once under it: cells read "n/a [k]". */
struct na_notes {
	const char *why[8];
	size_t n;
};

/* num() for a table cell: an n/a value refers to its reason in `nn` (the 9th distinct reason on
 * is written out in the cell). */
static void num_cell(struct lp_buf *b, struct na_notes *nn, const struct lp_num *n, int decimals, double scale,
	const char *suffix)
{
	size_t i;
	if (n->valid) {
		lp_num_format(n, decimals, scale, suffix, b);
		return;
	}
	for (i = 0; i < nn->n && strcmp(nn->why[i], n->why); i++)
		;
	if (i == nn->n && nn->n < sizeof(nn->why) / sizeof(nn->why[0]))
		nn->why[nn->n++] = n->why;
	if (i < nn->n)
		lp_buf_addf(b, "n/a [%zu]", i + 1);
	else
		lp_num_format(n, decimals, scale, suffix, b);
}

static void na_notes_md(const struct na_notes *nn, struct lp_buf *out)
{
	size_t i;
	for (i = 0; i < nn->n; i++) {
		lp_buf_addf(out, "%sn/a [%zu]: ", i ? "; " : "\n", i + 1);
		lp_md_text(out, nn->why[i]);
		lp_buf_adds(out, i + 1 == nn->n ? ".\n" : "");
	}
}

static const char *domain_text(const char *domain)
{
	return domain && *domain ? domain : "default domain";
}

/* 1 when the stages came from llmprof's own contract (LLM@prefill, LLM@decode_all, ...) with the
 * default names: nothing to say about the mapping. */
static int mapping_is_canonical(const struct lp_stage_set *s)
{
	size_t i;
	if (!s->names_default || s->map_truncated)
		return 0;
	for (i = 0; i < s->n_map; i++) {
		const struct lp_stage_map_entry *e = &s->map[i];
		if (e->ignored || strcmp(e->domain, "LLM") || strcmp(e->name, lp_stage_role_name(e->role)))
			return 0;
	}
	return 1;
}

/* "Stage ranges taken as stages ...": which (domain, name) ranges became which stage. */
static void mapping_line(const struct lp_stage_set *s, struct lp_buf *out)
{
	static const enum lp_stage_role roles[] = { LP_ROLE_PREFILL, LP_ROLE_DECODE, LP_ROLE_MIXED, LP_ROLE_STEP,
						    LP_ROLE_WARMUP };
	size_t i, k, shown = 0, ignored = 0;
	lp_buf_adds(out, "\nStage mapping (");
	lp_md_text(out, s->names_source);
	lp_buf_adds(out, "; `stages.prefill`, `stages.decode_all`, `stages.decode_step`, `stages.mixed`, `stages.warmup` change it, docs/nvtx.md): ");
	for (k = 0; k < sizeof(roles) / sizeof(roles[0]); k++) {
		for (i = 0; i < s->n_map; i++) {
			const struct lp_stage_map_entry *e = &s->map[i];
			if (e->role != roles[k] || e->ranges == e->ignored)
				continue;
			lp_buf_adds(out, shown++ ? "; " : "");
			lp_md_text(out, lp_stage_role_name(e->role));
			lp_buf_adds(out, " <- \"");
			lp_md_text(out, e->name);
			lp_buf_adds(out, "\" (");
			lp_md_text(out, domain_text(e->domain));
			lp_buf_addf(out, ", %llu range%s)", (unsigned long long)(e->ranges - e->ignored), e->ranges - e->ignored == 1 ? "" : "s");
		}
	}
	if (!shown)
		lp_buf_adds(out, "no range matched");
	for (i = 0; i < s->n_map; i++) {
		const struct lp_stage_map_entry *e = &s->map[i];
		if (!e->ignored)
			continue;
		lp_buf_adds(out, ignored++ ? "; \"" : ". Ignored: \"");
		lp_md_text(out, e->name);
		lp_buf_adds(out, "\" (");
		lp_md_text(out, domain_text(e->domain));
		lp_buf_addf(out, ", %llu range%s: the LLM domain has %s ranges)", (unsigned long long)e->ignored,
			e->ignored == 1 ? "" : "s", lp_stage_role_name(e->role));
	}
	if (s->map_truncated)
		lp_buf_adds(out, "; more names than shown");
	lp_buf_adds(out, ".\n");
}

/* stages.hooks: what matched, how often, and a warning per hook that never did. */
static void hooks_lines(const struct lp_analysis *a, struct lp_buf *out)
{
	size_t i, shown = 0;
	if (!a->n_hooks)
		return;
	lp_buf_adds(out, "\nStage hooks (`stages.hooks`, docs/nvtx.md): ");
	for (i = 0; i < a->n_hooks; i++) {
		const struct lp_hook_row *h = &a->hooks[i];
		if (h->warning)
			continue;
		lp_buf_adds(out, shown++ ? "; `" : "`");
		lp_buf_adds(out, h->hook);
		lp_buf_addf(out, "` %llu call%s in %zu process%s", (unsigned long long)h->calls, h->calls == 1 ? "" : "s",
			h->found, h->found == 1 ? "" : "es");
		if (h->payload_misses)
			lp_buf_addf(out, " (%llu without a readable payload)", (unsigned long long)h->payload_misses);
	}
	if (!shown)
		lp_buf_adds(out, "none matched");
	lp_buf_adds(out, ".\n");
	for (i = 0; i < a->n_hooks; i++) {
		const struct lp_hook_row *h = &a->hooks[i];
		if (!h->warning)
			continue;
		lp_buf_adds(out, "\nWarning: stage hook `");
		lp_buf_adds(out, h->hook);
		lp_buf_adds(out, "` never matched: ");
		lp_md_text(out, h->warning);
		lp_buf_adds(out, ".\n");
	}
}

/* No stage at all: one line saying so, how to add ranges, and the whole-run numbers. */
static int no_stages(const struct lp_analysis *a, struct lp_buf *out)
{
	const struct lp_stage_set *s = &a->stages;
	lp_buf_adds(out, "No stage ranges were seen (no NVTX range matched the stage mapping, and no top-level range outside "
			 "warm-up): the numbers in this report are for the whole run. To get prefill and decode stages, push "
			 "ranges around them (docs/nvtx.md, \"Programs you did not write for llmprof\"):\n\n");
	lp_buf_adds(out, "- C: `#include <llmprof/nvtx.h>`, then `lp_nvtx_push_payload(\"prefill\", batch * prompt_len); "
			 "prefill(); lp_nvtx_pop();` and the same with `decode_all` around the decode loop\n");
	lp_buf_adds(out, "- C++: `nvtx3::scoped_range r{\"decode\"};` (`#include <nvtx3/nvtx3.hpp>`) at the top of the "
			 "prefill and decode scopes\n");
	lp_buf_adds(out, "- Python: `torch.cuda.nvtx.range_push(\"prefill\")` ... `torch.cuda.nvtx.range_pop()`; Hugging "
			 "Face models get them automatically under `llmprof run` (`run.auto_stages`, on by default)\n\n");
	lp_buf_addf(out, "Whole run: %.3f ms from the first to the last recorded event", (double)s->run_span_ns / 1e6);
	if (s->have_gpu)
		lp_buf_addf(out, "; GPU busy %.3f ms (%.0f%% of it) in %zu kernel launches", (double)s->run_busy_ns / 1e6,
			s->run_span_ns ? 100.0 * (double)s->run_busy_ns / (double)s->run_span_ns : 0.0, s->n_kernels);
	else
		lp_buf_adds(out, "; no GPU kernels were recorded");
	lp_buf_adds(out, ". Kernels and operators below cover the whole run.\n");
	hooks_lines(a, out);
	return out->oom ? -1 : 0;
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
	if (!s->n_stages)
		return no_stages(a, out);
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
		if (!st->n_iters) {
			/* every range of the stage was a warm-up: no measurement, not a zero */
			for (j = 2; j < NC; j++)
				lp_buf_adds(&c[j], j == 2 ? "n/a (no measured iteration)" : "n/a");
			for (j = 0; j < NC; j++)
				cells[j] = c[j].data;
			lp_md_row(out, NC, cells, 0);
			continue;
		}
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
		} else if (st->kind == LP_STAGE_MIXED || st->kind == LP_STAGE_STEPS) {
			if (!isnan(st->tokens_per_s)) {
				lp_buf_addf(&c[8], "%.1f", (double)st->tokens_total / (double)st->n_iters);
				lp_buf_addf(&c[9], "%.1f tokens/s", st->tokens_per_s);
			} else {
				lp_buf_adds(&c[8], "n/a (no payload)");
				lp_buf_adds(&c[9], "n/a (no payload: give the range or hook a payload, docs/nvtx.md)");
			}
			if (st->kind == LP_STAGE_STEPS)
				lp_buf_addf(&c[9], ", %.3f ms/step", st->lat_ms.mean);
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
	for (i = 0; i < s->n_stages; i++)
		if (s->stages[i].recorded_iters) {
			lp_buf_adds(out, "\nSampled trace (Tracing mode): the GPU busy and kernel columns of ");
			lp_md_text(out, s->stages[i].name);
			lp_buf_addf(out, " are over its %zu iterations whose kernels were recorded (of %zu); latency and host "
					 "time over all.\n", s->stages[i].recorded_iters, s->stages[i].n_iters);
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
	if (a->ranks.n_ranks > 1)
		lp_buf_addf(out, " A job of %zu ranks: each row pools the stage's iterations of all ranks (a program's "
				 "iteration counts once per rank); section Ranks has them per rank and lined up across the "
				 "ranks.", a->ranks.n_ranks);
	{
		uint64_t skipped = 0;
		for (i = 0; i < s->n_stages; i++)
			skipped += s->stages[i].skipped_first;
		if (skipped && s->skip_first == 1)
			lp_buf_addf(out, " %s: the first iteration of each stage with more than one was left out of the "
					 "statistics as warm-up (%llu stage ranges; run.skip_first=0 keeps it).",
				s->skip_auto ? "No warm-up range was seen" : "run.skip_first=1", (unsigned long long)skipped);
		else if (skipped)
			lp_buf_addf(out, " run.skip_first=%lld: the first %lld iterations of each stage with more than %lld were "
					 "left out of the statistics as warm-up (%llu stage ranges).",
				(long long)s->skip_first, (long long)s->skip_first, (long long)s->skip_first,
				(unsigned long long)skipped);
		else if (s->skip_first > 0 && s->skip_auto)
			lp_buf_adds(out, " No warm-up range was seen, and no stage ran more than once: the single iteration "
					 "measured includes first-run costs (run the generation twice for warm numbers).");
	}
	if (s->decode_ends_moved)
		lp_buf_addf(out, " The decode ranges llmprof's shim pushed around a hand-written loop close only at the "
				 "next prefill or at exit: each of the %zu measured here ends at the pop of its last decode step "
				 "(push a decode range of your own for other boundaries).", s->decode_ends_moved);
	if (s->top_level_fallback)
		lp_buf_adds(out, " No `prefill` / `decode_all` ranges were found: the stages are the workload's top-level "
				 "NVTX ranges, each repetition one iteration.");
	lp_buf_adds(out, "\n");
	if (!mapping_is_canonical(s))
		mapping_line(s, out);
	hooks_lines(a, out);
	if (a->auto_stages)
		lp_buf_adds(out, "\nThe stage ranges were pushed by llmprof_auto (run.auto_stages) around the program's Hugging Face "
				 "forward calls: the first forward of each generate() (or one on an empty cache) is prefill, each "
				 "later one-token forward a decode step inside decode_all (docs/nvtx.md).\n");
	for (i = 0; i < s->n_stages; i++) {
		const struct lp_stage *st = &s->stages[i];
		size_t shown = 0;
		if (!st->n_outliers)
			continue;
		lp_buf_adds(out, "\nOutlier iterations (");
		lp_md_text(out, st->name);
		lp_buf_addf(out, ", latency further from the median %.3f ms than both 3 scaled MADs and 5%% of it; kept in "
				 "the statistics): ",
			st->lat_median_ms);
		for (j = 0; j < st->n_iters; j++) {
			if (!st->iters[j].outlier)
				continue;
			lp_buf_addf(out, "%siteration %zu: %.3f ms", shown++ ? ", " : "", j + 1, (double)st->iters[j].latency_ns / 1e6);
		}
		lp_buf_adds(out, ".\n");
	}
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

int lp_section_waterfall(const struct lp_analysis *a, struct lp_buf *out)
{
	static const char *const cols[] = { "item", "ms", "share of latency", "cumulative ms", "what usually fixes it" };
	int k, any = 0;
	size_t i;
	for (k = 1; k >= 0; k--) {
		const struct lp_waterfall *w = &a->waterfall[k];
		double cum = 0;
		if (!w->valid) {
			lp_buf_addf(out, "%s: n/a (%s).\n\n", k ? "Decode step" : "Prefill", w->why);
			continue;
		}
		any = 1;
		lp_buf_addf(out, "**%s** (per %s, mean over %.0f): latency %.4f ms, GPU busy %.4f ms, summed kernel time "
				 "%.4f ms. Floor: ", k ? "Decode step" : "Prefill", w->unit, w->units, w->latency_ms, w->busy_ms,
			w->kernel_ms);
		lp_fmt_floor(w, lp_md_text, out);
		lp_buf_adds(out, ".");
		if (w->floor_measured_ms > 0)
			lp_buf_addf(out, " At the measured copy bandwidth (%.0f GB/s, llmprof-probe) the floor is %.4f ms.",
				a->measured_bw_gbs, w->floor_measured_ms);
		if (w->overlap_ms > 0.02 * w->busy_ms)
			lp_buf_addf(out, " Kernels overlap (summed durations %.2fx the busy time: streams or programmatic dependent "
					 "launch, where a kernel's duration includes its wait): each kernel's time below is its share "
					 "of busy time, so the %.4f ms of overlap is already taken out.", w->kernel_ms / w->busy_ms,
				w->overlap_ms);
		lp_buf_adds(out, "\n\n");
		lp_md_header(out, 5, cols, "lrrrl");
		for (i = 0; i < w->n_items; i++) {
			const struct lp_wf_item *it = &w->items[i];
			char b[3][48], lab[200];
			const char *cells[5];
			cum += it->ms;
			if (it->kind == LP_WF_KERNEL && it->floor_source && strcmp(it->floor_source, "none"))
				snprintf(lab, sizeof(lab), "%s (over its %s floor %.4f ms)", it->label, it->floor_source, it->floor_ms);
			else if (it->kind == LP_WF_KERNEL)   /* no floor known: the kernel's whole share */
				snprintf(lab, sizeof(lab), "%s", it->label);
			else
				snprintf(lab, sizeof(lab), "%s", it->label);
			snprintf(b[0], sizeof(b[0]), "%+.4f", it->ms);
			snprintf(b[1], sizeof(b[1]), "%.1f%%", 100.0 * it->ms / w->latency_ms);
			snprintf(b[2], sizeof(b[2]), "%.4f", cum);
			cells[0] = lab;
			cells[1] = b[0];
			cells[2] = b[1];
			cells[3] = b[2];
			cells[4] = it->fix;
			lp_md_row(out, 5, cells, 0);
		}
		lp_buf_addf(out, "\nThe items add up to %.4f ms = the measured latency per %s (%.4f ms).", cum, w->unit,
			w->latency_ms);
		if (w->gaps_sampled)
			lp_buf_adds(out, " Sampled trace: the kernel items and the GPU busy time (hence the idle item) are "
					 "estimates scaled from the recorded steps (Tracing mode); the latency is exact.");
		if (w->n_gaps) {
			if (w->gaps_sampled)
				lp_buf_addf(out, " Largest idle gaps, located in the %zu recorded decode steps (per recorded step; "
						 "the unrecorded steps have no kernels to locate gaps between): ", w->gaps_steps);
			else
				lp_buf_adds(out, " Largest idle gaps: ");
			lp_fmt_gaps(w, lp_md_text, out);
			lp_buf_adds(out, ".");
		}
		lp_buf_adds(out, "\n\n");
	}
	if (any)
		lp_buf_adds(out, "Floor = max(minimum bytes / peak bandwidth, model FLOPs / peak FLOP/s); each kernel's excess is "
				 "its share of the stage's GPU busy time minus its own floor (Nsight Compute's DRAM bytes and FLOPs "
				 "in deep mode, else the model's weights for GEMMs and KV cache for attention; 0 for other kernels); "
				 "idle = latency - GPU busy (docs/metrics.md \"Gap waterfall\").\n");
	return out->oom ? -1 : 0;
}

int lp_section_mfu(const struct lp_analysis *a, struct lp_buf *out)
{
	static const char *const cols[] = { "stage", "model GFLOP / iter", "min MB / iter", "gpu_s / iter",
					    "TFLOP/s", "MFU", "GB/s", "MBU", "MFU / MBU over latency", "ncu GFLOP / iter (coverage)" };
	struct lp_buf c[10];
	struct na_notes nn = { { NULL }, 0 };
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
		for (j = 1; j < 10; j++)
			lp_buf_reset(&c[j]);
		num_cell(&c[1], &nn, &p->flops, 3, 1e-9, "");
		num_cell(&c[2], &nn, &p->bytes, 3, 1e-6, "");
		num_cell(&c[3], &nn, &p->gpu_s, 6, 1, "");
		num_cell(&c[4], &nn, &p->tflops_per_s, 3, 1, "");
		num_cell(&c[5], &nn, &p->mfu, 2, 100, "%");
		num_cell(&c[6], &nn, &p->gbs, 1, 1, "");
		num_cell(&c[7], &nn, &p->mbu, 2, 100, "%");
		num_cell(&c[8], &nn, &p->mfu_lat, 2, 100, "%");
		lp_buf_adds(&c[8], " / ");
		num_cell(&c[8], &nn, &p->mbu_lat, 2, 100, "%");
		num_cell(&c[9], &nn, &p->ncu_flops, 3, 1e-9, "");
		if (p->ncu_flops.valid)
			lp_buf_addf(&c[9], " (%.1f%% of kernel time)", 100.0 * p->ncu_coverage.value);
		for (j = 0; j < 10; j++)
			cells[j] = c[j].data;
		lp_md_row(out, 10, cells, 0);
	}
	for (j = 0; j < 10; j++)
		lp_buf_release(&c[j]);
	na_notes_md(&nn, out);
	lp_buf_adds(out, "\n");
	lp_fmt_peaks(a, lp_md_text, out);
	lp_buf_adds(out, ".\nMFU = model FLOPs / (GPU busy time x dense peak); MBU = minimum bytes (weights once per "
			 "step, KV cache read and written) / (GPU busy time x peak bandwidth): how well the kernels use the GPU. "
			 "Over latency: the same over the stage latency, what the user gets end to end. Formulas: docs/metrics.md.\n");
	if (a->auto_used) {
		/* said only when the program's own account was used: explicit settings need no provenance line */
		lp_buf_adds(out, "\nWhere the inputs came from: model shape from ");
		lp_md_text(out, a->have_model && a->model_source[0] ? a->model_source : "nowhere (n/a)");
		if (a->auto_params > 0)
			lp_buf_addf(out, " (the program counted %.3f %s parameters)", a->auto_params / (a->auto_params >= 1e9 ? 1e9 : 1e6),
				a->auto_params >= 1e9 ? "B" : "M");
		lp_buf_adds(out, "; batch from ");
		lp_md_text(out, a->batch_source && *a->batch_source ? a->batch_source : "nowhere (n/a)");
		lp_buf_adds(out, "; prompt length from ");
		lp_md_text(out, a->prompt_source && *a->prompt_source ? a->prompt_source : "nowhere (n/a)");
		lp_buf_adds(out, "; decode steps from ");
		lp_md_text(out, a->steps_source && *a->steps_source ? a->steps_source : "nowhere (n/a)");
		lp_buf_adds(out, ". Settings (model=..., inputs.*) win over what the program reports.\n");
	}
	return out->oom ? -1 : 0;
}

void lp_section_rerun_note(const struct lp_analysis *a, struct lp_buf *out)
{
	if (a->rerun_sd_pct > 0)
		lp_buf_addf(out, " \"A rerun\" is the 95%% interval for the total a separate exact run would record: the "
				 "sampling interval and %.2g%% of the total per run (trace.rerun_sd: how much two runs' "
				 "totals of a kernel differ, docs/tracer.md \"A rerun's interval\").", a->rerun_sd_pct);
}

void lp_section_missing_note(const struct lp_analysis *a, struct lp_buf *out)
{
	const struct lp_kernel_set *k = &a->kernels;
	if (k->sample_missing)
		lp_buf_addf(out, "Sampled trace (Tracing mode): no sampling unit past the first ones under each parent was "
				 "recorded (%u of them, in generations shorter than a block): these rows estimate their "
				 "kernels from the first ones (%u units), with no interval.",
			k->sample_missing, k->sample_exact);
}

void lp_section_sample_cell(char *b, size_t cap, int sampled, double ci_ms, double rerun_ms, uint32_t n, uint32_t N)
{
	if (!sampled)
		snprintf(b, cap, "exact");
	else if (ci_ms < 0)
		snprintf(b, cap, "n/a (%u of %u units)", n, N);
	else if (rerun_ms > ci_ms)
		snprintf(b, cap, "+- %.3f ms, a rerun +- %.3f (%u of %u units)", ci_ms, rerun_ms, n, N);
	else
		snprintf(b, cap, "+- %.3f ms (%u of %u units)", ci_ms, n, N);
}

int lp_section_top_kernels(const struct lp_analysis *a, size_t n, struct lp_buf *out)
{
	static const char *const cols[] = { "kernel_name", "device", "total_ms", "busy_ms", "calls", "mean_ms", "share",
					    "family", "sampled: 95% CI of total_ms" };
	const struct lp_kernel_set *k = &a->kernels;
	size_t nc = k->sampled ? 9 : 8;
	char b[9][96];
	size_t i, j;
	if (!k->n_rows)
		return lp_buf_adds(out, "No GPU kernels were recorded in this run.\n");
	lp_md_header(out, nc, cols, "lrrrrrrll");
	for (i = 0; i < k->n_rows && i < n; i++) {
		const struct lp_kernel_row *r = &k->rows[i];
		const char *cells[9];
		cells[0] = r->name;
		snprintf(b[1], sizeof(b[1]), "%d", r->device);
		snprintf(b[2], sizeof(b[2]), "%s%.3f", r->sampled ? "~" : "", r->total_ms);
		snprintf(b[3], sizeof(b[3]), "%s%.3f", r->sampled ? "~" : "", r->busy_ms);
		snprintf(b[4], sizeof(b[4]), "%s%llu", r->sampled ? "~" : "", (unsigned long long)r->calls);
		snprintf(b[5], sizeof(b[5]), "%.4f", r->mean_ms);
		snprintf(b[6], sizeof(b[6]), "%.1f%%", 100.0 * r->share);
		for (j = 1; j < 7; j++)
			cells[j] = b[j];
		cells[7] = lp_kname_family_name(r->family);
		lp_section_sample_cell(b[8], sizeof(b[8]), r->sampled, r->ci_ms, r->rerun_ms, k->sample_n, k->sample_N);
		cells[8] = b[8];
		lp_md_row(out, nc, cells, LP_MD_NAME_MAX);
	}
	lp_buf_addf(out, "\nMeasured iterations, warm-up excluded. share = busy_ms (the kernel's share of GPU busy time) / "
			 "busy time %.3f ms", k->busy_ms);
	if (k->busy_ms > 0 && k->total_ms > k->busy_ms * 1.02)
		lp_buf_addf(out, "; kernels overlap, summed durations %.3f ms = %.2fx busy", k->total_ms, k->total_ms / k->busy_ms);
	lp_buf_adds(out, ".\n");
	if (k->sampled)
		lp_buf_addf(out, "\nSampled trace (Tracing mode): ~ marks estimates. Kernels were recorded in %u of the %u "
				 "sampled units and in all %u units of the exact stratum; each ~ row is scaled to every unit "
				 "(exact part + %u x the mean over the recorded ones), with the 95%% interval of its total; "
				 "busy_ms is scaled like total_ms.", k->sample_n, k->sample_N, k->sample_exact, k->sample_N);
	if (k->sampled) {
		lp_section_rerun_note(a, out);
		lp_buf_adds(out, "\n");
	}
	if (k->sample_missing) {
		lp_buf_adds(out, "\n");
		lp_section_missing_note(a, out);
		lp_buf_adds(out, "\n");
	}
	if (k->n_rows > n)
		lp_buf_addf(out, "\n%zu more kernels in kernels.md.\n", k->n_rows - n);
	return out->oom ? -1 : 0;
}

int lp_section_top_ops(const struct lp_analysis *a, size_t n, struct lp_buf *out)
{
	static const char *const cols[] = { "stage", "operator", "gpu_incl_ms", "gpu_excl_ms", "host_ms", "calls",
					    "share of stage", "sampled: 95% CI of gpu_incl_ms" };
	const struct lp_op_table *t = &a->ops;
	size_t nc = t->sampled ? 8 : 7;
	char b[8][96];
	size_t i, shown = 0;
	if (!t->n_rows)
		return lp_buf_adds(out, "No operator ranges were recorded (run the workload with NVTX op ranges, or "
					"PyTorch with emit_nvtx).\n");
	lp_md_header(out, nc, cols, "llrrrrrl");
	/* the n largest of each stage */
	for (i = 0; i < t->n_rows; i++) {
		const struct lp_op_row *r = &t->rows[i];
		const char *cells[8];
		if (i > 0 && r->stage_index == t->rows[i - 1].stage_index && shown >= n)
			continue;
		if (i > 0 && r->stage_index != t->rows[i - 1].stage_index)
			shown = 0;
		shown++;
		cells[0] = r->stage;
		cells[1] = r->name;
		if (a->stages.have_gpu) {
			snprintf(b[2], sizeof(b[2]), "%s%.3f", r->sampled ? "~" : "", r->gpu_incl_ms);
			snprintf(b[3], sizeof(b[3]), "%s%.3f", r->sampled ? "~" : "", r->gpu_excl_ms);
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
		lp_section_sample_cell(b[7], sizeof(b[7]), r->sampled, r->ci_ms, r->rerun_ms, a->kernels.sample_n, a->kernels.sample_N);
		cells[7] = b[7];
		lp_md_row(out, nc, cells, LP_MD_NAME_MAX);
	}
	lp_buf_adds(out, a->stages.have_gpu
		? "\nTimes are summed over the measured iterations; share = inclusive GPU time / the stage's kernel time "
		  "(inclusive shares of nested ops overlap).\n"
		: "\nTimes are summed over the measured iterations; share = host time / the stage's host time.\n");
	if (t->sampled) {
		lp_buf_adds(out, "\nSampled trace (Tracing mode): ~ marks GPU times scaled to every sampling unit, with the "
				 "95% interval of gpu_incl_ms; calls and host times are exact.");
		lp_section_rerun_note(a, out);
		lp_buf_adds(out, "\n");
	}
	return out->oom ? -1 : 0;
}

/* The Environment section is for people: the facts that explain the numbers, one line each. The
 * rest (OS details, tool paths, environment variables) stays in env.json. */
static const json_t *env_gpu(const struct lp_analysis *a)
{
	const json_t *gpus = json_object_get(a->env, "gpus"), *g;
	size_t i;
	json_array_foreach(gpus, i, g)
		if (a->have_device && a->device.name &&
		    !strcmp(json_string_value(json_object_get(g, "name")) ? json_string_value(json_object_get(g, "name")) : "",
			    a->device.name))
			return g;
	return json_array_get(gpus, 0);
}

static void env_mhz(struct lp_buf *out, const char *what, const json_t *g, const char *key)
{
	const json_t *v = json_object_get(g, key);
	if (json_is_integer(v) && json_integer_value(v) > 0)
		lp_buf_addf(out, ", %s %lld MHz", what, (long long)json_integer_value(v));
}

static const char *env_str(const json_t *o, const char *a, const char *b)
{
	const json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	return json_is_string(v) && *json_string_value(v) ? json_string_value(v) : NULL;
}

/* The host clock: its source and the cost of one read, with a word where the collector found a
 * read slow enough to weigh on the tracer, which stamps every NVTX range and traced launch. */
int lp_fmt_host_clock(const json_t *clock, struct lp_buf *out)
{
	const json_t *ns = json_object_get(clock, "realtime_read_ns");
	if (!json_is_number(ns))
		return 0;
	lp_buf_addf(out, "%s, %.0f ns a read", env_str(clock, "source", NULL) ? env_str(clock, "source", NULL)
					       : "source unknown", json_number_value(ns));
	if (json_is_true(json_object_get(clock, "slow")))
		lp_buf_adds(out, " (slow: a system call each time; the tracer reads it at every NVTX range and traced "
				 "launch, so its cost grows with it)");
	return 1;
}

static void env_clock(struct lp_buf *out, const json_t *clock)
{
	struct lp_buf t = LP_BUF_INIT;
	if (lp_fmt_host_clock(clock, &t)) {
		lp_buf_adds(out, "- host clock: ");
		lp_md_text(out, t.data);
		lp_buf_addc(out, '\n');
	}
	lp_buf_release(&t);
}

int lp_section_environment(const struct lp_analysis *a, struct lp_buf *out)
{
	const json_t *env = a->env, *g = env_gpu(a), *cpu = json_object_get(env, "cpu");
	const json_t *mem = json_object_get(json_object_get(env, "memory"), "total_bytes");
	const char *drv = env_str(env, "cuda", "nvidia_driver_version");
	const char *api = env_str(env, "cuda", "driver_api_version"), *rt = NULL;

	lp_buf_adds(out, "- GPU: ");
	if (g || a->have_device) {
		const json_t *m = json_object_get(g, "memory_total_bytes");
		lp_md_text(out, g && env_str(g, "name", NULL) ? env_str(g, "name", NULL) : a->device.name);
		if (json_is_integer(m))
			lp_buf_addf(out, ", %.0f GiB", (double)json_integer_value(m) / 1073741824.0);
		if (a->have_device && a->device.sm_count)
			lp_buf_addf(out, ", %d SMs, compute capability %d.%d", a->device.sm_count, a->device.cc_major,
				a->device.cc_minor);
		env_mhz(out, "SM clock up to", g, "sm_clock_max_mhz");
		env_mhz(out, "memory clock up to", g, "mem_clock_max_mhz");
		lp_buf_addc(out, '\n');
	} else {
		lp_buf_adds(out, "none used (a CPU run: stages and operators, no GPU kernels)\n");
	}
	if (!drv)
		drv = env_str(env, "tools", "driver_version");
	rt = env_str(json_object_get(env, "cuda"), "runtime", "version");
	if (drv || api || rt) {
		lp_buf_adds(out, "- driver / CUDA: ");
		if (drv)
			lp_buf_addf(out, "driver %s", drv);
		else
			lp_buf_adds(out, "no NVIDIA driver");
		if (api)
			lp_buf_addf(out, ", CUDA %s (driver API)", api);
		if (rt)
			lp_buf_addf(out, ", runtime %s", rt);
		lp_buf_addc(out, '\n');
	}
	if (env_str(cpu, "model", NULL) || json_is_integer(mem)) {
		lp_buf_adds(out, "- CPU: ");
		lp_md_text(out, env_str(cpu, "model", NULL) ? env_str(cpu, "model", NULL) : "unknown");
		if (json_is_integer(json_object_get(cpu, "usable_cores")))
			lp_buf_addf(out, ", %lld cores", (long long)json_integer_value(json_object_get(cpu, "usable_cores")));
		if (json_is_integer(mem))
			lp_buf_addf(out, ", %.0f GiB memory", (double)json_integer_value(mem) / 1073741824.0);
		if (env_str(env, "os", "name")) {
			lp_buf_adds(out, ", ");
			lp_md_text(out, env_str(env, "os", "name"));
		}
		lp_buf_addc(out, '\n');
	}
	env_clock(out, json_object_get(env, "clock"));
	if (env_str(env, "frameworks", "torch") || env_str(env, "frameworks", "transformers")) {
		lp_buf_adds(out, "- frameworks:");
		if (env_str(env, "frameworks", "torch"))
			lp_buf_addf(out, " torch %s", env_str(env, "frameworks", "torch"));
		if (env_str(env, "frameworks", "transformers"))
			lp_buf_addf(out, "%s transformers %s", env_str(env, "frameworks", "torch") ? "," : "",
				env_str(env, "frameworks", "transformers"));
		lp_buf_addc(out, '\n');
	}
	lp_buf_adds(out, "- model: ");
	if (a->have_model) {
		lp_md_text(out, a->model.name[0] ? a->model.name : "unnamed");
		if (a->params.total >= 1e9)
			lp_buf_addf(out, ", %.2f B parameters", a->params.total / 1e9);
		else if (a->params.total > 0)
			lp_buf_addf(out, ", %.3f M parameters", a->params.total / 1e6);
		if (a->model.dtype[0])
			lp_buf_addf(out, ", %s", a->model.dtype);
	} else {
		lp_buf_adds(out, "unknown");
		if (a->model_why[0]) {
			lp_buf_adds(out, " (");
			lp_md_text(out, a->model_why);
			lp_buf_addc(out, ')');
		}
	}
	lp_buf_addc(out, '\n');
	lp_buf_adds(out, "- inputs: ");
	if (a->batch > 0)
		lp_buf_addf(out, "batch %lld", (long long)a->batch);
	else
		lp_buf_adds(out, "batch n/a");
	if (a->prompt_len > 0)
		lp_buf_addf(out, ", prompt %lld tokens", (long long)a->prompt_len);
	if (a->steps > 0)
		lp_buf_addf(out, ", %lld new tokens", (long long)a->steps);
	lp_buf_addc(out, '\n');
	lp_buf_adds(out, "- llmprof: ");
	lp_md_text(out, env_str(env, "llmprof", "version") ? env_str(env, "llmprof", "version") : "unknown");
	if (env_str(env, "llmprof", "commit")) {
		lp_buf_adds(out, " (commit ");
		lp_md_text(out, env_str(env, "llmprof", "commit"));
		lp_buf_addc(out, ')');
	}
	lp_buf_adds(out, ", trace source ");
	lp_md_text(out, a->source_kind && a->source_kind[0] ? a->source_kind : "unknown");
	lp_buf_addc(out, '\n');
	lp_buf_adds(out, json_is_object(env) ? "- everything else (OS, tools and their paths, environment variables): env.json\n"
		: "- env.json: not available\n");
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
