/* tracing_mode.c: the tracer's mode and why, for every report (tracing_mode.h). */
#include "report/tracing_mode.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/utf8.h"
#include "llmprof/trace_format.h"

const char *lp_tracing_mode_name(const struct lp_analysis *a)
{
	return a->sampling.mode == 2 ? "sampled" : a->sampling.mode == 1 ? "exact" : "unknown";
}

static const char *why_name(unsigned why)
{
	switch (why) {
	case LP_TRACE_SAMPLE_WHY_OFF: return "off";
	case LP_TRACE_SAMPLE_WHY_FORCED: return "schedule";
	case LP_TRACE_SAMPLE_WHY_AUTO_HIGH: return "auto_above";
	case LP_TRACE_SAMPLE_WHY_AUTO_LOW: return "auto_below";
	case LP_TRACE_SAMPLE_WHY_AUTO_NONE: return "auto_no_unit";
	case LP_TRACE_SAMPLE_WHY_AUTO_SHORT: return "auto_short";
	default: return "unknown";
	}
}

/* Auto's exact phase this long inside iterations left out as warm-up gets the report's advice: run
 * 33 (bench/tracer/README.md) measured ~2.5 points on every later step when it held a whole cold
 * generation (127 steps), none when it held one step, and no gain when only 4 were detached */
#define LONG_EXACT_PHASE 16

/* Bursts' switches at or above this share of the decode stage's time get the report's advice:
 * generations of ~0.45 s (HF's static cache on an H200) hold a burst each, and its attach and
 * detach stall the program ~5 ms apiece; every=512 instead of 128 took the tracer's cost from
 * +8.5% to +5.9% there (bench/tracer/README.md run 35) */
#define BURST_SWITCH_ADVICE 0.02

/* The bursts' share of CUPTI's switches in the measured decode time: 2 switches per burst (its
 * attach and its detach) at the run's mean switch time, over the decode stage's measured
 * iterations; the bursts counted from the recorded units of the sampled stratum in them. -1 when
 * not sampled in bursts or nothing to measure by; *bursts and *ms get the count and the time. */
static double burst_switch_share(const struct lp_analysis *a, double *bursts, double *ms)
{
	const struct lp_sampling *s = &a->sampling;
	const struct lp_stage *d = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	double decode_ms;
	*bursts = *ms = 0;
	if (s->mode != 2 || !s->burst || !s->toggles || !a->kernels.sampled || !d || !d->n_iters ||
	    !(d->lat_ms.mean > 0))
		return -1;
	decode_ms = d->lat_ms.mean * (double)d->n_iters;
	*bursts = (double)a->kernels.sample_n / s->burst;
	*ms = 2 * *bursts * ((double)s->toggle_ns / 1e6 / (double)s->toggles);
	return *ms / decode_ms;
}

/* No warm-up range was seen and the first iteration of a stage was left out as warm-up
 * (run.skip_first's default): the program repeats its generation without marking the first. */
static int first_left_out(const struct lp_analysis *a)
{
	size_t i;
	if (!a->stages.skip_auto)
		return 0;
	for (i = 0; i < a->stages.n_stages; i++)
		if (a->stages.stages[i].skipped_first)
			return 1;
	return 0;
}

/* The advice's trace.sample prefix: `auto,` when auto chose to sample (its decision kept), none for
 * a schedule the user gave. */
static const char *auto_prefix(const struct lp_sampling *s)
{
	return s->why == LP_TRACE_SAMPLE_WHY_AUTO_HIGH ? "auto," : "";
}

/* The warm-up's sentence: CUPTI detached inside the program's warm-up range (exact, auto or
 * bursts; trace.warmup). A kernel a process first launches with CUPTI attached can run slower for
 * the rest of it: run 39 (bench/tracer/README.md) measured cuBLAS's split-K GEMV 5% slower, in the
 * program's own CUDA events too, and the same kernel loaded without CUPTI as fast as in a process
 * with no tool; run 38 saw runs that differed only in this disagree on small kernels by 1-4%. */
static void warmup_detached(const struct lp_sampling *s, struct lp_buf *out)
{
	if (s->warmup == LP_TRACE_WARMUP_DETACHED)
		lp_buf_adds(out, " CUPTI was detached inside the program's warm-up range: its kernels were not "
			"recorded (the reports leave the warm-up out), and the program loaded them without CUPTI, so they run "
			"as they do without a profiler (a kernel first launched with CUPTI attached can run up to 5% slower "
			"for the rest of the process; trace.warmup=record records the warm-up anyway).");
}

/* A sampled kernel table none of whose scaled rows has an interval (ci_ms < 0): the recorded units
 * past the first ones form one stratum (one burst, or one unit), whose spread says nothing of the
 * spread between blocks (sampling_design.c); e.g. a serving loop's 190 decode steps under no parent
 * with blocks of 128 (run 39: examples/serve_plain.py drew one burst). */
static int sampled_rows_lack_interval(const struct lp_kernel_set *k)
{
	size_t i;
	int any = 0;
	for (i = 0; i < k->n_rows; i++) {
		if (!k->rows[i].sampled)
			continue;
		if (k->rows[i].ci_ms >= 0)
			return 0;
		any = 1;
	}
	return any;
}

/* ...its sentence, with a schedule of blocks short enough for two bursts: the largest power of two
 * of at most half the sampled units (and at least the burst), or trace.sample=off. */
static void no_interval(const struct lp_sampling *s, const struct lp_kernel_set *k, const char *unit,
	struct lp_buf *out)
{
	uint32_t b = s->burst ? s->burst : 1, e = b;
	lp_buf_addf(out, "; kernel and operator times inside the sampled ranges are scaled to all of them, but "
		"without an interval: the %u recorded %s ranges past the first ones lie in one block of the %u "
		"(consecutive ranges say nothing of the spread between blocks, and the interval needs two)", k->sample_n,
		unit, k->sample_N);
	while (e * 2 <= k->sample_N / 2)
		e *= 2;
	if (e > b && s->burst)
		lp_buf_addf(out, "; trace.sample=%severy=%u,burst=%u records a burst in each block of %u", auto_prefix(s), e,
			s->burst, e);
	else if (e > b)
		lp_buf_addf(out, "; trace.sample=%severy=%u records one in each block of %u", auto_prefix(s), e, e);
	else
		lp_buf_adds(out, "; trace.sample=off records every one");
}

int lp_tracing_mode_text(const struct lp_analysis *a, struct lp_buf *out)
{
	const struct lp_sampling *s = &a->sampling;
	const char *unit = s->unit && *s->unit ? s->unit : "decode_step";
	int no_ci;
	if (!s->mode)
		return lp_buf_adds(out, "Exact: every launch traced (the trace says nothing about sampling: an older "
					"tracer, or no CUDA).");
	if (s->mode == 1) {
		lp_buf_adds(out, "Exact: every launch traced");
		if (s->why == LP_TRACE_SAMPLE_WHY_AUTO_LOW && !s->launch_rate)
			/* the tracer measures a unit's rate only over 0.1 ms or more (inject/sample.c): the
			 * built-in model's 0.04 ms steps read "0 launches/s" (run 37) */
			lp_buf_addf(out, " (trace.sample=auto: no %s range lasted the 0.1 ms auto needs to measure its "
				"launch rate, so it stayed at its start)", unit);
		else if (s->why == LP_TRACE_SAMPLE_WHY_AUTO_LOW)
			lp_buf_addf(out, " (trace.sample=auto: %llu launches/s in the fastest of the first %s ranges, "
				"a CUDA graph's counted as its kernels, at or below the threshold of %u)",
				(unsigned long long)s->launch_rate, unit, s->auto_rate);
		else if (s->why == LP_TRACE_SAMPLE_WHY_AUTO_SHORT)
			lp_buf_addf(out, " (trace.sample=auto: %llu launches/s, above the threshold of %u, but the "
				"generations were foreseen to launch fewer times than its gen= (2,000 kernels, CUDA graphs and "
				"copies unless trace.sample sets it): one burst's CUPTI attach and detach, 15-40 ms of pauses, "
				"would cost more than tracing every launch)",
				(unsigned long long)s->launch_rate, s->auto_rate);
		else if (s->why == LP_TRACE_SAMPLE_WHY_AUTO_NONE)
			lp_buf_addf(out, " (trace.sample=auto: no %s range past the first %u, nothing to decide on)", unit,
				s->first);
		else if (a->mode && !strcmp(a->mode, "deep"))
			lp_buf_adds(out, " (deep mode traces every launch: Nsight Compute's sampling numbers them)");
		else
			lp_buf_adds(out, " (trace.sample=off)");
		lp_buf_adds(out, ".");
		/* auto waits with CUPTI detached through a warm-up, whatever it decides after it (run 37:
		 * "every launch traced" above a run whose warm-up kernels were not) */
		warmup_detached(s, out);
		return out->oom ? -1 : 0;
	}
	lp_buf_addf(out, "Sampled: kernels were traced in %llu of %llu %s ranges", (unsigned long long)s->units_recorded,
		(unsigned long long)s->units, unit);
	if (a->sampling_processes > 1)
		lp_buf_addf(out, " of %u processes together", a->sampling_processes);
	lp_buf_addf(out, " (the first %u under each parent, then ", s->first);
	if (s->burst)
		lp_buf_addf(out, "a burst of %u consecutive in each %u, CUPTI detached between bursts", s->burst, s->every);
	else
		lp_buf_addf(out, "1 in %u", s->every);
	if (s->burst && s->pick == LP_TRACE_SAMPLE_PICK_RANDOM)
		lp_buf_addf(out, ", at a random place in each block: seed %llu)", (unsigned long long)s->seed);
	else if (s->burst)
		lp_buf_adds(out, ", the first of each block)");
	else if (s->pick == LP_TRACE_SAMPLE_PICK_RANDOM)
		lp_buf_addf(out, ", at a random position in each block: seed %llu)", (unsigned long long)s->seed);
	else
		lp_buf_adds(out, ", the first of each block)");
	if (s->why == LP_TRACE_SAMPLE_WHY_AUTO_HIGH)
		lp_buf_addf(out, ", chosen by trace.sample=auto at %llu launches/s (above the threshold of %u)",
			(unsigned long long)s->launch_rate, s->auto_rate);
	if (s->why == LP_TRACE_SAMPLE_WHY_AUTO_HIGH && a->units_measured)
		lp_buf_addf(out, " after it traced %llu %s ranges exactly while measuring (%.0f launches/s in them)",
			(unsigned long long)a->units_measured, unit, a->units_measured_rate);
	else if (s->why != LP_TRACE_SAMPLE_WHY_AUTO_HIGH)
		lp_buf_adds(out, ", as trace.sample asked");
	if (s->burst)
		lp_buf_addf(out, "; CUPTI was detached or attached again %llu times (%.3f ms in all), and the work "
			"between two %s ranges was traced only before a traced one (scaled with it)",
			(unsigned long long)s->toggles, (double)s->toggle_ns / 1e6, unit);
	else
		lp_buf_addf(out, "; CUPTI was switched %llu times (%.3f ms in all)", (unsigned long long)s->toggles,
			(double)s->toggle_ns / 1e6);
	no_ci = sampled_rows_lack_interval(&a->kernels);
	lp_buf_adds(out, ". Step latencies are exact (CUDA events at every stage range)");
	if (!a->kernels.sample_missing && !no_ci)
		lp_buf_addf(out, "; kernel and operator times inside the sampled ranges are scaled to all of them, with "
			"95%% intervals of the sampling error (of this run's %s ranges)", unit);
	else if (!a->kernels.sample_missing)
		no_interval(s, &a->kernels, unit, out);
	if (a->rerun_sd_pct > 0 && !a->kernels.sample_missing && !no_ci)
		lp_buf_addf(out, " and for the totals a separate exact run would record (\"a rerun\": %.2g%% of a "
			"total per run added, trace.rerun_sd)", a->rerun_sd_pct);
	lp_buf_adds(out, ".");
	if (!s->burst && s->every >= 16 && s->every % 4 == 0) /* bursts of 4 in 16 or more: a quarter at most */
		lp_buf_addf(out, " One %s range per block keeps CUPTI attached between them, which cost 9-18%% a step on "
			"an H200 (bench/tracer/README.md run 35): trace.sample=%severy=%u,burst=4 detaches it between bursts of 4.",
			unit, auto_prefix(s), s->every);
	if (a->kernels.sample_missing) {
		/* a block that fits the generations: its cluster then falls inside each of them */
		uint32_t parents = s->first && a->kernels.sample_exact ? a->kernels.sample_exact / s->first : 0;
		uint32_t per = parents ? a->kernels.sample_missing / parents : 0, k = s->burst ? s->burst : 1;
		lp_buf_addf(out, " No %s range past the first %u under each parent was traced (%u of them in the measured "
			"iterations: generations shorter than a block of %u hold its %s only sometimes): the kernel and "
			"operator tables and the stages' kernel times (GPU busy, MFU, MBU) estimate their kernels from the "
			"first ones, as if the later steps ran like them, with no interval (a generation's first steps can "
			"differ); ", unit, s->first, a->kernels.sample_missing, s->every, s->burst ? "burst" : "unit");
		if (per >= 2 * k)
			lp_buf_addf(out, "a block no longer than a generation (trace.sample=%severy=%u,burst=%u) or "
				"trace.sample=off traces them.", auto_prefix(s),
				per / k * k, k);
		else
			lp_buf_adds(out, "trace.sample=off traces them.");
	}
	if (s->graphs_all)
		lp_buf_addf(out, " CUDA graphs were launched while CUPTI's kinds were switched per %s range, which gives "
			"their kernels wrong end times once the kinds went off and on, so every %s range was traced from the "
			"first graph launch on (exact from there; trace.sample=auto's bursts, which detach CUPTI, sample "
			"graphs).", unit, unit);
	warmup_detached(s, out);
	if (a->n_stage_inst) {
		size_t k;
		lp_buf_adds(out, " Stage ranges between the units were sampled on their own (CUPTI detached at their push "
			"leaves them unrecorded rather than pausing the program inside them to attach; the ones the schedule "
			"wants, the first 2 of each name then 1 in 8, are attached ahead for): ");
		for (k = 0; k < a->n_stage_inst; k++)
			lp_buf_addf(out, "%s%s %u of %u recorded", k ? ", " : "", a->stage_inst[k].name, a->stage_inst[k].recorded,
				a->stage_inst[k].of);
		lp_buf_adds(out, ". Their kernels are scaled to every instance as a simple random sample of them (the "
			"interval assumes instances alike but for chance: prompts of one length); their latencies are "
			"exact for every instance.");
	}
	if (a->push_attached)
		lp_buf_addf(out, " %u of the %u prefill ranges waited at their push for CUPTI to attach after a burst, a "
			"pause of the program inside them (a switch of CUPTI took %.1f ms on average here): their latency "
			"includes it, as the program's own timing does, but an unprofiled run's does not; trace.sample=off "
			"avoids it at the cost of recording every step.",
			a->push_attached, a->push_attached_of, s->toggles ? (double)s->toggle_ns / (double)s->toggles / 1e6 : 0.0);
	if (s->warmup == LP_TRACE_WARMUP_DETACHED && a->graph_uncaptured)
		lp_buf_addf(out, " %llu kernels of CUDA graphs have no capture record (graphs captured inside the "
			"warm-up with trace.warmup=detach, or outside every range): each is attributed to the range "
			"that launched its graph, not to the ranges it was captured in; trace.warmup=graphs (the default) "
			"or record keeps the ranges of graphs captured inside the warm-up.",
			(unsigned long long)a->graph_uncaptured);
	else if (s->burst && first_left_out(a) && a->units_measured_left_out >= LONG_EXACT_PHASE)
		lp_buf_addf(out, " The program marks no warm-up range, and auto traced %llu %s ranges of its first "
			"generation exactly while it measured (a cold generation runs slower, here under the threshold), "
			"which costs every later step a few percent (docs/tracer.md \"The warm-up\"); it repeats the "
			"generation and the first was left out as warm-up anyway: run.auto_warmup=1 (Python programs "
			"under llmprof's shim) or an NVTX range named warmup around it lets the tracer detach there, and "
			"trace.sample=auto,rate=N with N under %.0f lets auto decide sooner.",
			(unsigned long long)a->units_measured_left_out, unit, a->units_measured_rate);
	{
		double bursts, ms, share = burst_switch_share(a, &bursts, &ms);
		if (share >= BURST_SWITCH_ADVICE && s->every <= 1000000 / 4)
			lp_buf_addf(out, " The bursts' attaches and detaches took about %.0f ms of host time (%.0f bursts in "
				"the measured generations, 2 switches each at this run's mean), %.1f%% of the decode time, "
				"much of it paid by the program as pauses: trace.sample=%severy=%u,burst=%u records a burst in a quarter as "
				"many blocks (about %.1f%% of the decode time less, a quarter of the sampled %s ranges: "
				"intervals about twice as wide; docs/tracer.md \"Bursts\").",
				ms, bursts, 100 * share, auto_prefix(s), s->every * 4,
				s->burst, 75 * share, unit);
	}
	if (a->sampling_others)
		lp_buf_addf(out, " %u other traced process%s ran in another mode (trace.sample=auto decides in each "
			"process): %s tables are exact.", a->sampling_others, a->sampling_others == 1 ? "" : "es",
			a->sampling_others == 1 ? "its" : "their");
	return out->oom ? -1 : 0;
}

static void put(json_t *o, const char *k, json_t *v)
{
	json_object_set_new(o, k, v ? v : json_null());
}

json_t *lp_tracing_mode_json(const struct lp_analysis *a)
{
	const struct lp_sampling *s = &a->sampling;
	json_t *o = json_object();
	put(o, "mode", lp_json_string(lp_tracing_mode_name(a)));
	put(o, "why", s->mode ? lp_json_string(why_name(s->why)) : json_null());
	put(o, "unit", s->mode && s->unit && *s->unit ? lp_json_string(s->unit) : json_null());
	put(o, "every", s->mode == 2 ? json_integer(s->every) : json_null());
	put(o, "burst", s->mode == 2 && s->burst ? json_integer(s->burst) : json_null());
	put(o, "first", s->mode == 2 ? json_integer(s->first) : json_null());
	if (s->mode == 2) {   /* sampled only: exact runs keep their bytes */
		put(o, "pick", lp_json_string(s->pick == LP_TRACE_SAMPLE_PICK_RANDOM ? "random" : "first"));
		char seed[24];
		snprintf(seed, sizeof(seed), "%llu", (unsigned long long)s->seed);
		/* above 2^63 JSON readers lose it as a number: a string then */
		put(o, "seed", s->seed <= INT64_MAX ? json_integer((json_int_t)s->seed) : lp_json_string(seed));
	}
	put(o, "auto_threshold", s->why >= LP_TRACE_SAMPLE_WHY_AUTO_HIGH ? json_integer(s->auto_rate) : json_null());
	put(o, "launch_rate", s->launch_rate ? json_integer((json_int_t)s->launch_rate) : json_null());
	put(o, "units", s->mode ? json_integer((json_int_t)s->units) : json_null());
	put(o, "units_recorded", s->mode ? json_integer((json_int_t)s->units_recorded) : json_null());
	put(o, "toggles", s->mode ? json_integer((json_int_t)s->toggles) : json_null());
	put(o, "toggle_ms", s->mode ? json_real((double)s->toggle_ns / 1e6) : json_null());
	put(o, "warmup", s->warmup == LP_TRACE_WARMUP_DETACHED ? lp_json_string("detached")
			 : s->warmup == LP_TRACE_WARMUP_RECORDED ? lp_json_string("recorded") : json_null());
	put(o, "graph_uncaptured", s->mode ? json_integer((json_int_t)a->graph_uncaptured) : json_null());
	put(o, "prefill_push_attached", s->mode ? json_integer((json_int_t)a->push_attached) : json_null());
	{
		json_t *si = json_object();
		size_t k;
		for (k = 0; si && k < a->n_stage_inst; k++) {
			json_t *e = json_object();
			put(e, "recorded", json_integer(a->stage_inst[k].recorded));
			put(e, "of", json_integer(a->stage_inst[k].of));
			put(si, a->stage_inst[k].name, e);
		}
		put(o, "stage_instances", si);
	}
	put(o, "units_measured", s->mode ? json_integer((json_int_t)a->units_measured) : json_null());
	put(o, "units_measured_left_out", s->mode ? json_integer((json_int_t)a->units_measured_left_out) : json_null());
	put(o, "units_measured_rate", a->units_measured_rate > 0 ? json_real(a->units_measured_rate) : json_null());
	{
		double bursts, ms, share = burst_switch_share(a, &bursts, &ms);
		put(o, "burst_switch_pct", share >= 0 ? json_real(100 * share) : json_null());
	}
	put(o, "units_missing", s->mode == 2 ? json_integer(a->kernels.sample_missing) : json_null());
	put(o, "graphs_all", s->mode == 2 ? json_boolean(s->graphs_all) : json_null());
	/* a job of several processes: how many the counts above sum, how many chose otherwise */
	put(o, "processes", s->mode ? json_integer(a->sampling_processes) : json_null());
	put(o, "processes_other", s->mode ? json_integer(a->sampling_others) : json_null());
	return o;
}
