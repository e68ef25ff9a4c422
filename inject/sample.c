/* sample.c: stage ranges in the injected tracer (docs/tracer.md "Sampled tracing").
 *
 * Two things happen at the push and pop of a stage range (by name: LLMPROF_TRACE_STAGES, default
 * prefill, decode_all, decode_step, mixed (a serving loop's chunked prefill, since run 39), in any domain):
 *   - its GPU boundaries are timed: a CUDA event on the legacy default stream at push and at pop
 *     (stage_gpu.c); the flush thread turns finished pairs into STAGE records, so every stage
 *     instance has an exact GPU latency whether its kernels were recorded or not;
 *   - when it is the sampling unit (decode_step), the schedule decides whether this instance is
 *     recorded: the first `first` instances under each parent range always, then one in each block
 *     of `every`, at a random position drawn per block from the seed (a stratified sample: the
 *     block's first unit would be biased on a series that drifts with the context length;
 *     include/llmprof/trace_format.h has the formula, docs/tracer.md the statistics).
 *     Inside an instance that is not, CUPTI's kernel/copy activity and launch callbacks are off
 *     (cupti.c lp_inj_cupti_record): that is where the tracer's cost per launch goes away.
 * LLMPROF_TRACE_SAMPLE picks the mode: `off` (exact: everything recorded), `every=N[,first=K]`
 * (sampled), `auto` (the default: sampled when the launches inside the first recorded units run
 * faster than `rate` per second, exact otherwise), with
 * `unit=NAME`, `rate=R`, `seed=S` and `pick=random|first` as options (defaults every=8, first=2,
 * rate=5000, unit=decode_step, seed=0, pick=random; the rate was 20000 until run 34: a cold first
 * generation ran under it and was traced whole, bench/tracer/README.md).
 * `burst=B` (B dividing N; N defaults to 128 then; B = 0: no bursts) records one cluster of B
 * consecutive units per block instead of one unit, and detaches CUPTI (cuptiFinalize) between
 * bursts, the only state in which CUPTI leaves nothing on the launch path (bench/tracer/README.md
 * runs 22 and 23): it detaches at the pop of a burst's last unit, once the GPU reached that pop
 * (without stage events, LLMPROF_TRACE_STAGE_EVENTS=0, it cannot wait: kernels still queued then
 * may lose their records), and attaches again at the pop of the unit before the next burst
 * (`lead=L`, default 2: the flush thread attaches L units ahead, the kinds go on at that pop), and
 * ahead of the parent's foreseen end (REATTACH_END_UNITS before the previous parent's count of
 * units) and at its pop, so the next generation's prefill finds CUPTI attached; a stage instance
 * that is no unit (prefill, mixed) is recorded when CUPTI is ready at its push, and the ones the
 * schedule wants are attached ahead for ("stage instances under bursts" below; `stage=N`). The
 * work between two units is therefore recorded exactly when the unit after it is. Plain `auto` (the
 * default) means bursts of 4 in blocks of 128 above its rate (bench/tracer/README.md runs 23, 24 and 27); every=N without burst=,
 * and burst=0, keep one unit per block with CUPTI attached and switched per unit. The default seed is fixed on purpose: every process of a
 * job (tensor-parallel ranks) records the same steps, so their collectives stay aligned
 * (docs/ranks.md), and two runs of a program are sampled alike.
 * The SAMPLING record says which mode ran and why.
 *
 * Threads: the schedule is per thread (the parent range and the index are the pushing thread's);
 * CUPTI's switch is process-wide, so it is off while at least one thread is inside an unrecorded
 * unit (launches of other threads in that time are not recorded either). The hot path of a range
 * that is no stage is one comparison per configured name.
 */

#include "inject.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STAGES 8
#define MAX_PENDING 4096                 /* stage instances waiting for their GPU times */
#define REATTACH_END_UNITS 4             /* bursts: the attach this many units before the parent's foreseen end */
#define INST_FIRST 2                     /* bursts: stage instances recorded after this many of each name
                                          * (then one in each block of `stage=N`, INST_EVERY) ... */
#define INST_LEAD_NS 30000000ull         /* ... attached ahead of the foreseen one by this much (in units) */
#define INST_PAUSE_NS 1000000ull         /* a stage push that waited this long for CUPTI says so (flag) */

/* frame marks (struct lp_inj_frame.stage) */
#define MARK_STAGE 1u                    /* a stage range */
#define MARK_SKIPPED 2u                  /* an unrecorded unit: CUPTI back on at its pop */
#define MARK_MEASURED 4u                 /* a recorded unit whose launch rate auto mode uses */
#define MARK_UNIT_REC 8u                /* bursts: a recorded unit */
#define MARK_BURST_SKIP 16u              /* bursts: an unrecorded unit (CUPTI detached) */
#define MARK_WARMUP 32u                  /* LLMPROF_TRACE_CUPTI_DELAY=warmup: the warmup range (no stage) */
#define MARK_SLOT_SHIFT 6                /* pending slot + 1 above these bits (0: none) */

enum { MODE_EXACT = LP_TRACE_SAMPLE_EXACT, MODE_SAMPLED = LP_TRACE_SAMPLE_SAMPLED, MODE_PENDING = LP_INJ_SAMPLE_AUTO };

struct pending {
	uint64_t range_id;
	void *ev[2];                         /* push and pop events */
	uint32_t tid, index, name_sid;
	uint8_t sample, gpu;
	uint8_t state;                       /* 0 free, 1 open, 2 closed, 3 being resolved */
	uint16_t flags;                      /* LP_TRACE_STAGE_F_* */
};

static struct {
	pthread_once_t once;
	_Atomic int ready;                   /* set last by init_once (the flush thread runs already) */
	char names[MAX_STAGES][64];
	uint32_t sids[MAX_STAGES];
	unsigned n_stages;
	uint32_t unit_sid;
	int events;                          /* LLMPROF_TRACE_STAGE_EVENTS (on) */
	_Atomic int mode;                    /* MODE_* */
	uint32_t why;
	uint32_t every, first, auto_rate;
	uint32_t gen_launches;               /* auto with bursts: generations foreseen to launch fewer stay
	                                      * exact (`gen=N`, AUTO_GEN_LAUNCHES; 0: not) */
	_Atomic int short_seen;              /* auto kept a generation exact for that */
	_Atomic uint64_t short_gen_launches; /* ... the last one's foreseen launches */
	uint32_t burst;                      /* bursts of `burst` units, CUPTI detached between (0: not) */
	uint32_t lead;                       /* bursts: the flush thread attaches `lead` units ahead */
	int reattach_parent;                 /* bursts: attach at the units' parent's pop (env): 1 the
	                                      * subscription, 2 with the kinds on (parentrec) */
	_Atomic int graphs_all;              /* graphs_all(): every unit recorded since a graph launch */
	int settle_end;                      /* bursts (LLMPROF_TRACE_SETTLE_END=0: not): the foreseen
	                                      * last unit waits for the attach ahead of the parent's
	                                      * end before its pop's mark (runs 35, 36) */
	int burst_kinds;                     /* LLMPROF_TRACE_BURST_SWITCH=kinds (a candidate, bench/tracer/
	                                      * README.md run 35): bursts switch the activity kinds and
	                                      * launch callbacks, CUPTI staying attached between them */
	uint64_t reattach_lead_ns;           /* LLMPROF_TRACE_REATTACH_LEAD_MS (0: off): the foreseen-end
	                                      * attach that long ahead, in the previous parent's units */
	int log_cycles;                      /* LLMPROF_TRACE_LOG_CYCLES=1: bursts' stages logged */
	uint32_t cupti_delay;                /* LLMPROF_TRACE_CUPTI_DELAY: CUPTI started before this
	                                      * parent ordinal (a diagnostic, cupti.c) */
	uint32_t inst_every;                 /* bursts: stage instances sampled on their own (`stage=N`) */
	uint32_t decode_all_sid;             /* the units' conventional parent: no instance of its own */
	uint32_t warmup_sid;                 /* LLMPROF_TRACE_CUPTI_DELAY=warmup: the name `warmup` ... */
	_Atomic int warmup_open;             /* ... its ranges open now ... */
	_Atomic int warmup_wait;             /* ... and CUPTI not started yet (1) */
	int warmup_detach;                   /* LLMPROF_TRACE_WARMUP: CUPTI detached inside the outermost
	                                      * warmup range (bursts only), its graph node callbacks kept
	                                      * (graphs, the default: 2) or not (detach: 1); record: 0 */
	_Atomic uint32_t warmup_state;       /* enum lp_trace_warmup, for the SAMPLING record */
	uint32_t pick;                       /* LP_TRACE_SAMPLE_PICK_* */
	uint64_t seed;
	_Atomic uint64_t launch_rate;
	_Atomic int auto_looked;             /* auto looked at a unit past the first ones */
	_Atomic uint64_t units, units_recorded;
	pthread_mutex_t switch_lock;         /* off_threads and the CUPTI switch */
	unsigned off_threads;
	pthread_mutex_t lock;                /* the pending table */
	struct pending p[MAX_PENDING];
	uint32_t free_top, free_slots[MAX_PENDING];
	uint64_t start_ns;
} S = {
	.once = PTHREAD_ONCE_INIT,
	.switch_lock = PTHREAD_MUTEX_INITIALIZER,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* ---- configuration ---- */

/* splitmix64's finalizer: the position of the recorded unit in a block (trace_format.h). */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* 1 once the program launched a CUDA graph while CUPTI's kinds are switched per unit (one unit
 * per block, burst=0, or LLMPROF_TRACE_BURST_SWITCH=kinds): CUPTI's records of graph kernels come
 * out with end times tens of milliseconds late once its kernel activity went off and on again
 * (bench/tracer/README.md run 35: HF's static cache read 3,500,000 ms for a 137 ms kernel), so from
 * then on every unit is recorded (the SAMPLING record's LP_TRACE_SAMPLING_F_GRAPHS_ALL, the STAGE
 * records which). Bursts that detach CUPTI (the default) start it afresh and keep their sample. */
static int graphs_all(void)
{
	if (S.burst && !S.burst_kinds)
		return 0;
	if (atomic_load_explicit(&S.graphs_all, memory_order_relaxed))
		return 1;
	if (!lp_inj_cupti_graphs())
		return 0;
	if (!atomic_exchange(&S.graphs_all, 1))
		lp_inj_log("stages: a CUDA graph was launched: CUPTI's kinds switched per unit give its kernels "
			"wrong end times, so every unit is recorded from here on (trace.sample=auto's bursts sample it)");
	return 1;
}

/* 1 when the unit at `index` (>= first) under the thread's current parent is recorded: one unit
 * per block, or with bursts one cluster of `burst` consecutive units, the block cut into
 * every / burst clusters (trace_format.h: every unit is recorded with the same probability); every
 * unit once graphs_all(). */
static int on_schedule(const struct lp_inj_thread *t, uint32_t index)
{
	uint32_t b = (index - S.first) / S.every, pos = (index - S.first) % S.every, k = S.burst ? S.burst : 1;
	uint32_t start = 0;
	if (graphs_all())
		return 1;
	if (S.pick != LP_TRACE_SAMPLE_PICK_FIRST)
		start = k * (uint32_t)(mix(mix(mix(S.seed) ^ t->unit_parents) ^ b) % (S.every / k));
	return pos >= start && pos < start + k;
}

/* Bursts: 1 when the unit at `index` under the thread's current parent will be recorded. */
static int will_record(const struct lp_inj_thread *t, uint32_t index)
{
	return index < S.first || atomic_load_explicit(&S.mode, memory_order_relaxed) != MODE_SAMPLED ||
		on_schedule(t, index);
}

static void add_stage(const char *name, size_t n)
{
	unsigned i;
	if (n == 0 || n >= sizeof(S.names[0]) || S.n_stages == MAX_STAGES)
		return;
	for (i = 0; i < S.n_stages; i++)
		if (strlen(S.names[i]) == n && !memcmp(S.names[i], name, n))
			return;
	memcpy(S.names[S.n_stages], name, n);
	S.names[S.n_stages][n] = '\0';
	S.n_stages++;
}

static void write_sampling(void)
{
	struct lp_trace_sampling r;
	int mode = atomic_load(&S.mode);
	memset(&r, 0, sizeof(r));
	r.mode = mode == MODE_SAMPLED ? LP_TRACE_SAMPLE_SAMPLED : LP_TRACE_SAMPLE_EXACT;
	r.why = S.why;
	r.every = S.every;
	r.first = S.first;
	r.unit_sid = S.unit_sid;
	r.auto_rate = S.auto_rate;
	r.launch_rate = atomic_load(&S.launch_rate);
	lp_inj_cupti_record_cost(&r.toggles, &r.toggle_ns, &r.toggle_max_ns);
	{
		/* bursts: the switches are detaches and attaches */
		uint64_t c[6];
		lp_inj_cupti_cycle_cost(c);
		r.toggles += c[0] + c[3];
		r.toggle_ns += c[1] + c[4];
		if (c[2] > r.toggle_max_ns)
			r.toggle_max_ns = c[2];
		if (c[5] > r.toggle_max_ns)
			r.toggle_max_ns = c[5];
	}
	r.units = atomic_load(&S.units);
	r.units_recorded = atomic_load(&S.units_recorded);
	r.pick = S.pick;
	r.burst = S.burst;
	r.seed = S.seed;
	r.warmup = atomic_load(&S.warmup_state);
	r.flags = atomic_load(&S.graphs_all) ? LP_TRACE_SAMPLING_F_GRAPHS_ALL : 0;
	lp_inj_append(LP_TREC_SAMPLING, &r, sizeof(r), NULL, 0);
}

static void init_once(void)
{
	const char *spec = getenv("LLMPROF_TRACE_SAMPLE");
	const char *stages = getenv("LLMPROF_TRACE_STAGES");
	struct lp_inj_sample_spec sp;
	const char *unit = sp.unit;
	unsigned i;
	/* the default is auto: sampled above the launch rate, exact below (the reports scale sampled tables) */
	int bad = lp_inj_sample_spec_parse(spec && *spec ? spec : "auto", &sp) < 0;

	S.mode = sp.mode;
	S.why = sp.why;
	S.every = sp.every;
	S.first = sp.first;
	S.auto_rate = sp.auto_rate;
	S.gen_launches = sp.gen_launches;
	S.inst_every = sp.inst_every;
	S.burst = sp.burst;
	S.lead = sp.lead;
	S.pick = sp.pick;
	S.seed = sp.seed;
	if (bad) {
		lp_inj_log("LLMPROF_TRACE_SAMPLE='%s' is not off, auto or every=N[,first=K][,burst=B][,rate=R][,unit=NAME]: "
			"tracing every launch", spec);
		S.mode = MODE_EXACT;
		S.why = LP_TRACE_SAMPLE_WHY_OFF;
	}
	if (!stages)
		stages = "prefill,decode_all,decode_step,mixed";
	while (*stages) {
		const char *end = strchr(stages, ',');
		size_t n = end ? (size_t)(end - stages) : strlen(stages);
		add_stage(stages, n);
		stages += n;
		if (*stages == ',')
			stages++;
	}
	add_stage(unit, strlen(unit));
	for (i = 0; i < S.n_stages; i++)
		S.sids[i] = lp_inj_intern(S.names[i], strlen(S.names[i]));
	S.unit_sid = lp_inj_intern(unit, strlen(unit));
	S.events = !lp_inj_env_off("LLMPROF_TRACE_STAGE_EVENTS");
	{
		const char *ra = getenv("LLMPROF_TRACE_BURST_REATTACH");
		/* default: at the parent's foreseen end and at its pop; `push`: only at the next push */
		const char *lead = getenv("LLMPROF_TRACE_REATTACH_LEAD_MS");
		S.reattach_parent = ra && !strcmp(ra, "push") ? 0 : ra && !strcmp(ra, "parentrec") ? 2 : 1;
		S.reattach_lead_ns = lead && *lead ? (uint64_t)strtoull(lead, NULL, 10) * 1000000ull : 0;
		S.log_cycles = lp_inj_env_on("LLMPROF_TRACE_LOG_CYCLES"); /* as cupti.c reads it */
		ra = getenv("LLMPROF_TRACE_BURST_SWITCH");
		S.burst_kinds = ra && !strcmp(ra, "kinds");
		S.settle_end = !lp_inj_env_off("LLMPROF_TRACE_SETTLE_END"); /* on by default (run 36) */
	}
	S.cupti_delay = lp_inj_cupti_delay();
	if (S.cupti_delay == LP_INJ_CUPTI_DELAY_WARMUP)
		atomic_store(&S.warmup_wait, 1);
	{
		const char *w = getenv("LLMPROF_TRACE_WARMUP");
		S.warmup_detach = w && !strcmp(w, "record") ? 0 : w && !strcmp(w, "detach") ? 1 : 2;
		if (w && *w && strcmp(w, "record") && strcmp(w, "detach") && strcmp(w, "graphs"))
			lp_inj_log("LLMPROF_TRACE_WARMUP='%s' is not graphs, detach or record: graphs", w);
	}
	/* the delay's diagnostics start CUPTI themselves: no detach for the warm-up beside them */
	if (S.cupti_delay)
		S.warmup_detach = 0;
	S.warmup_sid = lp_inj_intern("warmup", 6);
	S.decode_all_sid = lp_inj_intern("decode_all", 10);
	S.free_top = 0;
	for (i = MAX_PENDING; i > 0; i--)
		S.free_slots[S.free_top++] = i - 1;
	S.start_ns = lp_inj_now_ns();
	atomic_store_explicit(&S.ready, S.unit_sid != 0, memory_order_release);
	lp_inj_log("stages: sampling %s (unit %s, %u in each block of %u after the first %u%s, %s, seed %llu, "
		"auto above %u launches/s), GPU times %s",
		S.mode == MODE_EXACT ? "off" : S.mode == MODE_SAMPLED ? "on" : "auto", unit, S.burst ? S.burst : 1,
		S.every, S.first, !S.burst ? "" : S.burst_kinds ? ", CUPTI's kinds off between bursts" :
		", CUPTI detached between bursts",
		S.pick == LP_TRACE_SAMPLE_PICK_FIRST ? "the block's first" : "at a random position",
		(unsigned long long)S.seed, S.auto_rate, S.events ? "on" : "off");
	write_sampling();
}

void lp_inj_sample_init(void)
{
	pthread_once(&S.once, init_once);
}

/* ---- the CUPTI switch ---- */

static void skip_begin(void)
{
	pthread_mutex_lock(&S.switch_lock);
	if (S.off_threads++ == 0)
		lp_inj_cupti_record(0);
	pthread_mutex_unlock(&S.switch_lock);
}

static void skip_end(void)
{
	pthread_mutex_lock(&S.switch_lock);
	if (S.off_threads && --S.off_threads == 0)
		lp_inj_cupti_record(1);
	pthread_mutex_unlock(&S.switch_lock);
}

/* The host's time from one unit's push to the next over the thread's current parent's units so far
 * (their first and last push); 0 before two. */
static uint64_t unit_period_ns(const struct lp_inj_thread *t)
{
	if (t->unit_index < 2 || t->unit_last_ns <= t->unit_first_ns)
		return 0;
	return (t->unit_last_ns - t->unit_first_ns) / (t->unit_index - 1);
}

/* ---- stage instances under bursts ----
 * A stage range that is no unit (prefill, mixed; not decode_all, the units' parent) pushed while
 * CUPTI is detached between bursts used to attach it at its push: 12-40 ms inside the stage, which
 * in a serving loop (decode steps under no parent, so no end to foresee) hit every prefill after a
 * burst and doubled it (bench/tracer/README.md run 39). Now such an instance is recorded only when
 * CUPTI is ready at its push (attached, or an attach asked ahead: the push waits for that one and
 * says so if the wait took INST_PAUSE_NS); else only its GPU marks are taken (STAGE SKIPPED: its
 * kernels are missing, the reports scale its stage from the recorded instances, src/analyze/
 * sampling.c). The instances wanted are the first INST_FIRST of each name, then one in each block
 * of `stage=N` (INST_EVERY) of all of them on the thread, at a random position from the seed; for
 * one of those the flush thread attaches ahead (the kinds off) when the units since the last
 * instance come within INST_LEAD_NS of the units between the last two (inst_foreseen). An instance
 * that comes earlier than foreseen is not recorded; one that comes later finds CUPTI attached and
 * idle meanwhile (its kinds off). After a recorded instance, the push of the next unit not recorded
 * detaches CUPTI after its mark, as before: the pause (3-4 ms) lands in a decode step, the stage
 * with many more instances, not in the prefill. `stage=0`, and LLMPROF_TRACE_BURST_REATTACH=push:
 * every instance recorded, attaching at its push as before. */
static int inst_sampled(uint32_t name_sid)
{
	return S.inst_every && S.reattach_parent && name_sid != S.decode_all_sid && lp_inj_cupti_active() &&
		!atomic_load_explicit(&S.warmup_open, memory_order_relaxed);
}

/* 1 when the thread's next stage instance (its ordinal t->inst_n) is wanted. */
static int inst_wanted(const struct lp_inj_thread *t)
{
	uint32_t b = t->inst_n / S.inst_every, pos = t->inst_n % S.inst_every;
	unsigned i;
	for (i = 0; i < S.n_stages; i++)
		if ((t->inst_seen & (1u << i)) && t->inst_rec[i] < INST_FIRST)
			return 1;
	return pos == (uint32_t)(mix(mix(S.seed ^ 0x696e7374ull) ^ b) % S.inst_every);
}

/* At a unit's pop (bursts, the next unit not recorded): 1 when the next stage instance is wanted
 * and foreseen within INST_LEAD_NS' worth of units (at least 2). */
static int inst_foreseen(const struct lp_inj_thread *t)
{
	uint64_t period;
	uint32_t lead = 2;
	if (!S.inst_every || !S.reattach_parent || !t->inst_n || !t->inst_gap)
		return 0;
	if ((period = unit_period_ns(t)) > 0) {
		uint64_t k = (INST_LEAD_NS + period - 1) / period;
		lead = k < 2 ? 2 : k > 64 ? 64 : (uint32_t)k;
	}
	return t->inst_units + lead >= t->inst_gap && inst_wanted(t);
}

/* How many units before the foreseen end of the next parent the flush thread attaches: 4
 * (REATTACH_END_UNITS), or with LLMPROF_TRACE_REATTACH_LEAD_MS=T (a candidate, bench/tracer/
 * README.md run 32's next step) T's worth of the parent that just ended, from its units' period,
 * at least 4 and at most a quarter of its units. An attach takes 12-40 ms (run 24): 4 units of
 * 1.5 ms steps (graph_decode.py) leave the next prefill's push waiting for it. */
static uint32_t reattach_units(const struct lp_inj_thread *t)
{
	uint32_t n = t->unit_index, cap = n / 4 > REATTACH_END_UNITS ? n / 4 : REATTACH_END_UNITS;
	uint64_t period = unit_period_ns(t), k;
	if (!S.reattach_lead_ns || n < 2 || t->unit_last_ns <= t->unit_first_ns)
		return REATTACH_END_UNITS;
	k = period ? (S.reattach_lead_ns + period - 1) / period : cap;
	return k < REATTACH_END_UNITS ? REATTACH_END_UNITS : k > cap ? cap : (uint32_t)k;
}

/* auto with bursts (CUPTI detached between them): 1 when the thread's current parent is foreseen
 * to launch fewer than `gen` (AUTO_GEN_LAUNCHES) kernels, graphs and copies, a graph launch counted
 * once: tracing each of its launches then costs less than the switches of its bursts (an attach
 * and a detach, 15-20 ms of pauses together on eager PyTorch, 20-40 ms with CUDA graphs, at least
 * one cycle a generation). What tracing a generation exactly costs grows with the launch calls it
 * makes, not with its length (bench/tracer/README.md runs 37, 38, H200, against the program
 * without llmprof):
 *   - graph_decode.py (one graph launch a step): exact +4.0% at 128 and at 256 steps, bursts +10%
 *     and +8% (18-29 ms of switches a generation);
 *   - a 2-layer tensor-parallel decode (70 launches a step, 16 steps): bursts paid 19 ms in each
 *     24-40 ms generation, and the program's step times, taken inside the ranges, miss them;
 *   - HF's static cache (~87 launches a step around its graph, 64 steps, 0.18 s): exact +34%,
 *     bursts +13%; eager generate() (~750 a step): exact +19%, bursts +3-4%.
 * Those are 128-256, 1,100, 5,600 and (24 steps) 18,000 launches a generation; the static cache
 * with 32 steps (~2,800) still cost +38% exact against +27% in bursts (one generation measured),
 * so 2,000: exact tracing costs a generation about its launches x 4 us on eager PyTorch and up to
 * 11 us with graphs, a burst cycle 20-30 ms. The generation's duration does not tell them apart
 * (the static cache's 0.18 s against graph_decode.py's 0.36 s, run 37's 200 ms rule). Foreseen: its units (its payload or the
 * previous parent's count) times the launches of this parent's measured units so far, or of the
 * last parent's (units with no launch traced, CUPTI detached for a warm-up, left out). The
 * generation is traced as a measured one (exact stratum) and the next unit looks again; nothing
 * foreseen (the first parent without a payload, no measured unit yet): not short. */
static int short_generation(const struct lp_inj_thread *t)
{
	double per = t->par_api_units ? (double)t->par_api / t->par_api_units : (double)t->unit_api;
	uint64_t g = (uint64_t)(t->unit_prev * per + 0.5);
	if (!S.burst || S.burst_kinds || !S.gen_launches || !t->unit_prev || per <= 0 || g >= S.gen_launches)
		return 0;
	if (!atomic_exchange(&S.short_seen, 1))
		lp_inj_log("stages: auto: a generation foreseen to launch %llu times (%u units, %.1f launches each), "
			"under gen=%u: traced exactly", (unsigned long long)g, t->unit_prev, per, S.gen_launches);
	atomic_store(&S.short_gen_launches, g);
	return 1;
}

/* auto: the launch rate of the fastest unit recorded so far on this thread (or, with first=0, the
 * rate since the start). The fastest, not the mean: the first decode steps of a process load
 * modules and pick kernels (an H100 run measured 4.7k launches/s over its first two steps against
 * 55k/s later). Above the threshold, sampled from here on (decided once, for the process); at or
 * below it, nothing is decided yet: the unit is recorded (flagged MEASURED, exact stratum) and
 * measured, and the next one looks again (an H100 run of examples/hf_generate.py read 8.5k/s in
 * the fastest of its first two steps, 35k/s later). A program that never gets faster stays
 * exact; the end says so (lp_inj_sample_finish). */
static int decide(const struct lp_inj_thread *t, uint64_t now)
{
	uint64_t rate = t->rate_max, seen;
	int expect = MODE_PENDING;
	if (!rate && !t->rate_ns)
		rate = now > S.start_ns ? (uint64_t)((double)t->launches * 1e9 / (double)(now - S.start_ns)) : 0;
	atomic_store(&S.auto_looked, 1);
	seen = atomic_load(&S.launch_rate);
	while (rate > seen && !atomic_compare_exchange_weak(&S.launch_rate, &seen, rate)) {
	}
	if (rate <= S.auto_rate)
		return MODE_PENDING;
	if (short_generation(t))
		return MODE_PENDING;
	if (atomic_compare_exchange_strong(&S.mode, &expect, MODE_SAMPLED)) {
		S.why = LP_TRACE_SAMPLE_WHY_AUTO_HIGH;
		atomic_store(&S.launch_rate, rate);
		lp_inj_log("stages: auto sampling on: %llu launches/s in the fastest unit so far (threshold %u)",
			(unsigned long long)rate, S.auto_rate);
		write_sampling();
		return MODE_SAMPLED;
	}
	return expect;
}

/* Bursts: CUPTI attached (on) or detached; `ev` (a mark, or NULL) is waited for before a detach,
 * so the recorded work before it is complete when CUPTI flushes. Serialized with switch_lock. */
static void burst_switch(int on, void *ev)
{
	pthread_mutex_lock(&S.switch_lock);
	if (on) {
		if (S.burst_kinds)
			lp_inj_cupti_record(1);
		else
			lp_inj_cupti_attach();
	} else {
		lp_inj_gpu_wait(ev);
		if (S.burst_kinds)
			lp_inj_cupti_record(0);
		else
			lp_inj_cupti_detach();
	}
	pthread_mutex_unlock(&S.switch_lock);
}

/* ---- push and pop ---- */

/* The push of a range named `warmup` (no stage). The warm-up's kernels are left out of every
 * report, and CUPTI present while a process launches its kernels for the first time costs its
 * later steps 2.5-4% though detached for all but a few of them (bench/tracer/README.md runs 29
 * and 30), and some of those kernels run slower for the rest of the process (cuBLAS's split-K
 * GEMV 5%, run 39, in the program's own CUDA events too; loaded without CUPTI they run as in an
 * unprofiled process): exact and with bursts (sampled or auto, the default) CUPTI detaches at
 * the push of the outermost one, once the GPU reached it, and attaches again at its pop
 * (LLMPROF_TRACE_WARMUP=graphs, the default, keeps the graph node callbacks meanwhile, detach not
 * even those; record keeps CUPTI, as does the one-unit-per-block mode, which switches CUPTI's
 * kinds while attached). LLMPROF_TRACE_CUPTI_DELAY=warmup: remembered until its pop, which
 * starts CUPTI. */
static uint32_t warmup_push(void)
{
	uint32_t none = LP_TRACE_WARMUP_NONE;
	if (atomic_load_explicit(&S.warmup_wait, memory_order_relaxed)) {
		atomic_fetch_add(&S.warmup_open, 1);
		atomic_store(&S.warmup_state, LP_TRACE_WARMUP_DETACHED); /* not started yet: not recorded */
		return MARK_WARMUP;
	}
	if (!S.warmup_detach || (!S.burst && atomic_load_explicit(&S.mode, memory_order_relaxed) != MODE_EXACT)) {
		atomic_compare_exchange_strong(&S.warmup_state, &none, LP_TRACE_WARMUP_RECORDED);
		return 0;
	}
	if (atomic_fetch_add(&S.warmup_open, 1) == 0) {
		void *ev = NULL;
		lp_inj_gpu_mark(&ev); /* the work before the warm-up complete before CUPTI flushes */
		pthread_mutex_lock(&S.switch_lock);
		lp_inj_gpu_wait(ev);
		lp_inj_cupti_hold(S.warmup_detach);
		pthread_mutex_unlock(&S.switch_lock);
		lp_inj_gpu_release(ev);
		if (atomic_exchange(&S.warmup_state, LP_TRACE_WARMUP_DETACHED) != LP_TRACE_WARMUP_DETACHED)
			write_sampling();
	}
	return MARK_WARMUP;
}

static struct lp_trace_stage stage_record(uint64_t id, uint32_t tid, uint32_t index, uint32_t name_sid,
	uint8_t sample, uint8_t gpu, uint16_t flags)
{
	struct lp_trace_stage r;
	memset(&r, 0, sizeof(r));
	r.range_id = id;
	r.tid = tid;
	r.index = index;
	r.name_sid = name_sid;
	r.sample = sample;
	r.gpu = gpu;
	r.flags = flags;
	return r;
}

uint32_t lp_inj_stage_push(struct lp_inj_thread *t, uint32_t name_sid, uint64_t id, uint64_t parent,
	uint64_t payload)
{
	uint32_t mark = MARK_STAGE, index = 0, slot;
	uint16_t flags = 0;
	uint8_t sample = LP_TRACE_STAGE_NOT_UNIT;
	unsigned i;
	void *ev = NULL;
	int gpu = LP_TRACE_STAGE_GPU_NONE, burst = 0;

	if (!name_sid || !atomic_load_explicit(&S.ready, memory_order_acquire))
		return 0;
	if (name_sid == S.warmup_sid)
		return warmup_push();
	for (i = 0; i < S.n_stages && S.sids[i] != name_sid; i++) {
	}
	if (i == S.n_stages)
		return 0;
	if (name_sid != S.unit_sid) {
		t->plan_id = id;
		t->plan_units = payload < UINT32_MAX ? (uint32_t)payload : 0;
	}
	/* LLMPROF_TRACE_CUPTI_DELAY=1: the first stage range starts CUPTI (once), before its mark;
	 * =warmup: the first one outside a warmup range (a program that marks no warm-up) */
	if (S.cupti_delay == 1)
		lp_inj_cupti_start();
	if (__builtin_expect(atomic_load_explicit(&S.warmup_wait, memory_order_relaxed), 0) &&
	    !atomic_load(&S.warmup_open)) {
		atomic_store(&S.warmup_wait, 0);
		lp_inj_cupti_start();
	}
	if (name_sid == S.unit_sid && !t->unit_skipping) {
		int mode = atomic_load_explicit(&S.mode, memory_order_relaxed), record = 1;
		uint64_t now = lp_inj_now_ns();
		t->inst_units++;
		if (parent != t->unit_parent) {
			/* auto's gen= (short_generation): the launches per measured unit of the parent that
			 * ended */
			if (t->par_api_units)
				t->unit_api = (uint32_t)(t->par_api / t->par_api_units);
			t->par_api = 0;
			t->par_api_units = 0;
			if (t->unit_index) {
				t->unit_prev = t->unit_index;
				t->reattach_units = reattach_units(t);
				if (S.log_cycles && S.reattach_lead_ns)
					lp_inj_log("stages: the next parent's end foreseen %u units ahead (%u units before)",
						t->reattach_units, t->unit_prev);
			}
			/* the units the parent says it plans (decode_all's payload: the shim gives generate()'s
			 * max_new_tokens - 1) foresee its end better than the previous parent's count, and
			 * the first parent has no previous one: without it a first generation that auto
			 * samples attaches only at its pop, and the next prefill waits for that attach at its
			 * push (bench/tracer/README.md run 34) */
			if (parent == t->plan_id && t->plan_units) {
				t->unit_prev = t->plan_units;
				if (!t->reattach_units)
					t->reattach_units = REATTACH_END_UNITS;
			}
			t->unit_parent = parent;
			t->unit_index = 0;
			t->unit_parents++;
			t->unit_first_ns = now;
		}
		if (!t->unit_first_ns)
			t->unit_first_ns = now; /* units under no parent (a serving loop): its first one */
		t->unit_last_ns = now;
		index = t->unit_index++;
		if (index >= S.first) {
			if (mode == MODE_PENDING)
				mode = decide(t, now);
			if (mode == MODE_SAMPLED)
				record = on_schedule(t, index);
		}
		atomic_fetch_add_explicit(&S.units, 1, memory_order_relaxed);
		if (record) {
			atomic_fetch_add_explicit(&S.units_recorded, 1, memory_order_relaxed);
			sample = mode == MODE_PENDING && index >= S.first ? LP_TRACE_STAGE_MEASURED : LP_TRACE_STAGE_RECORDED;
			if (mode == MODE_PENDING) {
				mark |= MARK_MEASURED;
				t->unit_t0 = now;
				t->unit_l0 = t->launches;
				t->unit_a0 = t->api_launches;
			}
		} else {
			sample = LP_TRACE_STAGE_SKIPPED;
			mark |= S.burst ? MARK_BURST_SKIP : MARK_SKIPPED;
			t->unit_skipping = 1;
		}
		if (S.burst && mode == MODE_SAMPLED) {
			if (record)
				mark |= MARK_UNIT_REC;
			burst = record ? 1 : -1;
		}
	} else if (S.burst && !t->unit_skipping && atomic_load_explicit(&S.mode, memory_order_relaxed) == MODE_SAMPLED) {
		if (inst_sampled(name_sid)) {
			/* a stage instance (above inst_sampled): recorded when CUPTI is ready */
			uint64_t t0 = lp_inj_now_ns();
			int ready = lp_inj_cupti_attached() ? 3 : lp_inj_cupti_ready();
			if (t->inst_n)
				t->inst_gap = t->inst_units;
			t->inst_units = 0;
			index = t->inst_n++;
			t->inst_seen |= (uint8_t)(1u << i);
			if (ready) {
				sample = LP_TRACE_STAGE_RECORDED;
				if (t->inst_rec[i] < 255)
					t->inst_rec[i]++;
				if (ready < 3)
					burst_switch(1, NULL); /* the kinds on (1: the attach asked ahead, here) */
				if (lp_inj_now_ns() - t0 >= INST_PAUSE_NS)
					flags |= LP_TRACE_STAGE_F_PUSH_ATTACHED;
			} else {
				sample = LP_TRACE_STAGE_SKIPPED;
			}
			if (S.log_cycles)
				lp_inj_log("stages: instance %u (%s, %u units after the one before): %s", index,
					S.names[i], t->inst_gap, ready == 3 ? "recording" : ready == 2 ?
					"attached, kinds on" : ready ? "attach asked ahead" : "CUPTI detached: not recorded");
		} else {
			burst = 1; /* recorded, CUPTI attached at its push if it is not */
		}
	}
	/* bursts: normally the pop before switched; these are the cases it could not foresee (a new
	 * parent, auto's decision). An attach before the GPU mark: not in the stage's latency. */
	if (S.log_cycles && S.burst && name_sid != S.unit_sid)
		lp_inj_log("stages: push %u at %.3f ms, CUPTI %s", name_sid, (double)lp_inj_now_ns() / 1e6,
			lp_inj_cupti_attached() ? "recording" : "not recording");
	if (burst > 0 && !lp_inj_cupti_attached()) {
		burst_switch(1, NULL);
		flags |= LP_TRACE_STAGE_F_PUSH_ATTACHED;
	}
	/* the marks need libcuda, not CUPTI: also with CUPTI off (LLMPROF_TRACE_CUPTI=0), held by
	 * another subscriber or detached */
	if (S.events)
		gpu = lp_inj_gpu_mark(&ev);
	if (S.log_cycles && S.burst && name_sid != S.unit_sid)
		lp_inj_log("stages: push %u marked at %.3f ms", name_sid, (double)lp_inj_now_ns() / 1e6);
	if (burst < 0 && lp_inj_cupti_attached())
		burst_switch(0, ev);
	if (mark & MARK_SKIPPED)
		skip_begin();
	if (!ev) {
		/* nothing to wait for: the record is complete now */
		struct lp_trace_stage r = stage_record(id, t->tid, index, name_sid, sample, (uint8_t)gpu, flags);
		lp_inj_append(LP_TREC_STAGE, &r, sizeof(r), NULL, 0);
		return mark;
	}
	pthread_mutex_lock(&S.lock);
	if (S.free_top) {
		struct pending *p;
		slot = S.free_slots[--S.free_top];
		p = &S.p[slot];
		p->range_id = id;
		p->ev[0] = ev;
		p->ev[1] = NULL;
		p->tid = t->tid;
		p->index = index;
		p->name_sid = name_sid;
		p->sample = sample;
		p->gpu = (uint8_t)gpu;
		p->flags = flags;
		p->state = 1;
		mark |= (slot + 1) << MARK_SLOT_SHIFT;
		ev = NULL;
	}
	pthread_mutex_unlock(&S.lock);
	if (ev) {
		struct lp_trace_stage r = stage_record(id, t->tid, index, name_sid, sample, LP_TRACE_STAGE_GPU_BUSY, flags);
		lp_inj_gpu_release(ev);
		lp_inj_append(LP_TREC_STAGE, &r, sizeof(r), NULL, 0);
	}
	return mark;
}

/* Bursts, at the pop of a unit (the next unit under the same parent gets t->unit_index): after the
 * last unit of a burst CUPTI detaches (once the GPU reached `ev`, the pop's mark); before the
 * first one it attaches (here, between the two units: the next unit's latency does not hold it),
 * or with `lead` the flush thread attaches that many units ahead and here the kinds go on.
 * Returns 1 when it switched here, on the launching thread (the caller marks the pop again). */
static int burst_pop(struct lp_inj_thread *t, uint32_t mark, void *ev)
{
	int next = will_record(t, t->unit_index), switched = 0;
	uint32_t j;
	if ((mark & MARK_UNIT_REC) && !next) {
		burst_switch(0, ev);
		switched = 1;
	} else if (!(mark & MARK_UNIT_REC) && next) {
		burst_switch(1, NULL);
		switched = 1;
	} else if (!next && S.lead) {
		for (j = 1; j <= S.lead; j++) {
			if (will_record(t, t->unit_index + j)) {
				lp_inj_cupti_attach_ahead(0);
				break;
			}
		}
	}
	/* the parent's end foreseen (reattach_units() before it, the previous parent's count of
	 * units): the flush thread attaches now, so the next stage range (the next generation's
	 * prefill, a few milliseconds after this parent's pop) finds CUPTI attached instead of
	 * waiting for an attach of 12-40 ms at its push (bench/tracer/README.md run 24); the units
	 * left run attached with the kinds off. Only inside that window: a longer parent detaches
	 * after its next burst as usual (at most a block attached and idle). A no-op while attached
	 * or attaching. */
	if (S.reattach_parent && !next && t->unit_prev && t->unit_index < t->unit_prev &&
	    t->unit_index + t->reattach_units >= t->unit_prev)
		lp_inj_cupti_attach_ahead(0);
	/* That attach (CUPTI initializing again, 11-17 ms on the flush thread) pauses the launching
	 * thread's next CUDA calls for part of its time; after the foreseen last unit's pop that is
	 * outside every stage of a loop whose decode ends at its last step, inside the program's own
	 * end event (run 35: a compiled loop's decode read 6.5 ms, 7%, short). Here the last unit
	 * waits for it instead, before its pop is marked again (LLMPROF_TRACE_SETTLE_END=0: not;
	 * run 36 measured no added cost). */
	if (S.settle_end && !next && t->unit_prev && t->unit_index >= t->unit_prev && lp_inj_cupti_settle())
		switched = 1;
	/* the next stage instance (a serving loop's prefill) wanted and foreseen soon: attached ahead */
	if (!next && inst_foreseen(t))
		lp_inj_cupti_attach_ahead(0);
	return switched;
}

void lp_inj_stage_pop(struct lp_inj_thread *t, uint32_t mark, uint64_t id)
{
	uint32_t slot = mark >> MARK_SLOT_SHIFT;
	if (mark & MARK_WARMUP) {
		/* the last open warmup range's pop: CUPTI attached again, or (the delay) started once */
		if (atomic_fetch_sub(&S.warmup_open, 1) == 1) {
			if (S.warmup_detach) {
				pthread_mutex_lock(&S.switch_lock);
				lp_inj_cupti_hold(0);
				pthread_mutex_unlock(&S.switch_lock);
			} else if (atomic_exchange(&S.warmup_wait, 0)) {
				lp_inj_cupti_start();
			}
		}
		return;
	}
	if (S.log_cycles && S.burst && !(mark & (MARK_UNIT_REC | MARK_BURST_SKIP)))
		lp_inj_log("stages: pop of range %llu%s at %.3f ms", (unsigned long long)id,
			id == t->unit_parent ? " (the units' parent)" : "", (double)lp_inj_now_ns() / 1e6);
	if (mark & MARK_SKIPPED) {
		t->unit_skipping = 0;
		skip_end();
	}
	if (mark & MARK_BURST_SKIP)
		t->unit_skipping = 0;
	if (mark & MARK_MEASURED) {
		uint64_t dt = lp_inj_now_ns() - t->unit_t0, n = t->launches - t->unit_l0;
		if (t->api_launches > t->unit_a0) { /* none: CUPTI detached (a warm-up) */
			t->par_api += t->api_launches - t->unit_a0;
			t->par_api_units++;
		}
		t->rate_ns += dt;
		if (dt >= 100000 && (uint64_t)((double)n * 1e9 / (double)dt) > t->rate_max)
			t->rate_max = (uint64_t)((double)n * 1e9 / (double)dt);
		/* bursts: auto decides here, not at the next unit's push, and this recorded unit then
		 * ends as a burst's does (burst_pop: a detach for an unrecorded next unit after this
		 * pop's mark, marked again below); at the push the detach would pause the program after
		 * that unit's mark, inside the unit's latency but before the program's own start event
		 * where stage ranges come from the shim (run 27: the first sampled step of
		 * examples/hf_generate_plain.py read +56%) */
		if (S.burst && t->unit_index >= S.first &&
		    atomic_load_explicit(&S.mode, memory_order_relaxed) == MODE_PENDING &&
		    decide(t, lp_inj_now_ns()) == MODE_SAMPLED)
			mark |= MARK_UNIT_REC;
	}
	if ((mark & (MARK_UNIT_REC | MARK_BURST_SKIP)) && !slot) {
		burst_pop(t, mark, NULL);
		return;
	}
	if (slot) {
		void *ev = NULL;
		int gpu = lp_inj_gpu_mark(&ev), busy;
		/* a switch here (a burst's detach: its flush and cuptiFinalize, 3-4 ms) pauses the
		 * program between the pop and whatever it times next: the unit's end is marked again
		 * after it, so the unit's latency holds the pause as the program's own CUDA events do
		 * (run 27: without it the steps that held a detach read 18-45% below the program's
		 * events, the parent's and the sums agreeing) */
		if ((mark & (MARK_UNIT_REC | MARK_BURST_SKIP)) && burst_pop(t, mark, ev))
			lp_inj_gpu_remark(ev);
		pthread_mutex_lock(&S.lock);
		if (S.p[slot - 1].state == 1 && S.p[slot - 1].range_id == id) {
			S.p[slot - 1].ev[1] = ev;
			if (!ev)
				S.p[slot - 1].gpu = (uint8_t)gpu;
			S.p[slot - 1].state = 2;
			ev = NULL;
		}
		busy = S.free_top < MAX_PENDING / 4 * 3;
		pthread_mutex_unlock(&S.lock);
		if (ev)
			lp_inj_gpu_release(ev);
		/* the periodic flush round reads finished pairs; a wake-up (a write on the flush
		 * thread's pipe, then its round on another core, every step) only when the table
		 * fills up */
		if (busy)
			lp_inj_wake();
	}
	/* LLMPROF_TRACE_CUPTI_DELAY=N: the pop of the units' (N-1)-th parent starts CUPTI (once) */
	if (S.cupti_delay && id == t->unit_parent && t->unit_parents + 1 >= S.cupti_delay)
		lp_inj_cupti_start();
	/* bursts, LLMPROF_TRACE_BURST_REATTACH=parent (a candidate, not measured yet: run 23): the
	 * pop of the units' parent (a generation's decode_all) attaches CUPTI again, after the pop's
	 * mark (with lead > 0 on the flush thread), so that the next prefill finds it attached
	 * instead of paying the attach inside its time to first token */
	if (S.reattach_parent && S.burst && id == t->unit_parent && !(mark & (MARK_UNIT_REC | MARK_BURST_SKIP)) &&
	    atomic_load_explicit(&S.mode, memory_order_relaxed) == MODE_SAMPLED && !lp_inj_cupti_attached()) {
		if (S.lead)
			lp_inj_cupti_attach_ahead(S.reattach_parent == 2);
		else
			burst_switch(1, NULL);
	}
}

int lp_inj_sample_on(void)
{
	return atomic_load_explicit(&S.mode, memory_order_relaxed) == MODE_SAMPLED;
}

/* ---- the flush thread ---- */

void lp_inj_stage_drain(int final)
{
	static uint32_t todo[MAX_PENDING];
	uint32_t n = 0, i;
	if (!atomic_load_explicit(&S.ready, memory_order_acquire))
		return;
	pthread_mutex_lock(&S.lock);
	for (i = 0; i < MAX_PENDING; i++) {
		if (S.p[i].state == 2 || (final && S.p[i].state == 1)) {
			S.p[i].state = 3;
			todo[n++] = i;
		}
	}
	pthread_mutex_unlock(&S.lock);
	for (i = 0; i < n; i++) {
		struct pending *p = &S.p[todo[i]];
		struct lp_trace_stage r = stage_record(p->range_id, p->tid, p->index, p->name_sid, p->sample, p->gpu,
			p->flags);
		int rc = 0;
		if (p->ev[0] && p->ev[1]) {
			rc = lp_inj_gpu_times(p->ev[0], p->ev[1], final, &r.gpu_start_ns, &r.gpu_end_ns,
				&r.gpu_elapsed_ns);
			if (rc == 1) {
				pthread_mutex_lock(&S.lock);
				p->state = 2; /* not there yet: the next round */
				pthread_mutex_unlock(&S.lock);
				continue;
			}
			if (rc < 0)
				r.gpu = LP_TRACE_STAGE_GPU_ERROR;
		} else if (r.gpu == LP_TRACE_STAGE_GPU_EVENTS) {
			r.gpu = LP_TRACE_STAGE_GPU_ERROR; /* never popped (final) */
		}
		lp_inj_append(LP_TREC_STAGE, &r, sizeof(r), NULL, 0);
		lp_inj_gpu_release(p->ev[0]);
		lp_inj_gpu_release(p->ev[1]);
		pthread_mutex_lock(&S.lock);
		p->ev[0] = p->ev[1] = NULL;
		p->state = 0;
		S.free_slots[S.free_top++] = todo[i];
		pthread_mutex_unlock(&S.lock);
	}
}

void lp_inj_sample_finish(void)
{
	if (!atomic_load_explicit(&S.ready, memory_order_acquire))
		return;
	if (atomic_load(&S.mode) == MODE_PENDING) {
		uint64_t rate = atomic_load(&S.launch_rate);
		S.why = atomic_load(&S.short_seen) ? LP_TRACE_SAMPLE_WHY_AUTO_SHORT : atomic_load(&S.auto_looked) ?
			LP_TRACE_SAMPLE_WHY_AUTO_LOW : LP_TRACE_SAMPLE_WHY_AUTO_NONE;
		if (atomic_load(&S.short_seen))
			lp_inj_log("stages: auto sampling stayed off: generations foreseen to launch fewer than gen=%u times "
				"(the last %llu)", S.gen_launches, (unsigned long long)atomic_load(&S.short_gen_launches));
		else if (atomic_load(&S.auto_looked))
			lp_inj_log("stages: auto sampling stayed off: %llu launches/s in the fastest unit (threshold %u)",
				(unsigned long long)rate, S.auto_rate);
	}
	write_sampling();
}

void lp_inj_sample_forked(void)
{
	unsigned i;
	/* the parent's threads and events do not exist here (their locks may be held: reinitialized),
	 * and a fork child cannot use the parent's CUDA: no GPU marks */
	S.events = 0;
	pthread_mutex_init(&S.lock, NULL);
	pthread_mutex_init(&S.switch_lock, NULL);
	S.off_threads = 0;
	S.free_top = 0;
	for (i = MAX_PENDING; i > 0; i--) {
		S.p[i - 1].state = 0;
		S.p[i - 1].ev[0] = S.p[i - 1].ev[1] = NULL;
		S.free_slots[S.free_top++] = i - 1;
	}
}
