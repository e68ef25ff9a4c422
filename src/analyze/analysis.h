/* analysis.h: the analysis of one run: everything the reports show, computed from the artifacts.
 *
 * Input (struct lp_analysis_input): a profile (our tracer's or nsys's), the model shape (the
 * config's `model` object), token counts (NVTX payloads, else the `inputs.*` keys), the device
 * (the profile's, else env.json's) with optional peak overrides, optional Nsight Compute kernel
 * records (deep mode), the phase statuses of the run and the environment summary (env.json).
 * Output (struct lp_analysis): stages, operators, kernels, MFU/MBU per stage and for the model,
 * tracer overhead, takeaways and recommendations. Missing information gives "n/a" with a reason
 * (struct lp_num), never a guessed number. lp_analyze is deterministic: same input, same output.
 *
 * Tokens: batch = inputs.batch, else what the program reported (the Python shim, below), else
 * prefill payload / prompt_len; prompt_len = inputs.prompt_len, else the program's, else prefill
 * payload / batch; decode steps = the decode-step ranges counted per iteration, else
 * inputs.new_tokens (one step per new token, the workload's contract), else the program's.
 *
 * The program's own account (auto_info: what python/llmprof_auto wrote into the run folder,
 * docs/nvtx.md "Programs you did not write for llmprof"): its model's Hugging Face config, dtype
 * and parameter count, and the batch / prompt / new-token counts it saw. Explicit settings win:
 * the model comes from it only when the config has no model (`model` null), each token count only
 * when its inputs.* key is unset. The HF config is read like model.hf_config (config/llm_model.h);
 * architectures that reader does not know are read field by field (lp_model_json_from_hf).
 * Where each came from is kept (model_source, batch_source, ...) for the reports.
 *
 * Ownership: the analysis copies what it keeps (strings into its arena, json values by reference
 * count); the input may be released right after lp_analyze. lp_analysis_release frees it all.
 * Not thread-safe.
 *
 *   struct lp_analysis_input in = { .profile = &prof, .model = json_object_get(cfg, "model") };
 *   struct lp_analysis a;
 *   if (lp_analyze(&in, &a, err) < 0) return -1;
 *   if (lp_report_write_all(run_dir, &a, err) < 0) ...;      // report/reports.h
 *   lp_analysis_release(&a);
 */
#ifndef LP_ANALYZE_ANALYSIS_H
#define LP_ANALYZE_ANALYSIS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/baseline.h"
#include "analyze/flops.h"
#include "analyze/kernels.h"
#include "analyze/operators.h"
#include "analyze/peaks.h"
#include "analyze/ranks.h"
#include "analyze/sampling.h"
#include "analyze/stages.h"
#include "analyze/timeline.h"
#include "analyze/waterfall.h"
#include "parse/workload_timings.h"

#define LP_ANALYSIS_SCHEMA_VERSION 1

/* A number or the reason it is not known. */
struct lp_num {
	int valid;
	double value;
	char why[200];
};

struct lp_phase_status {
	char name[32];               /* "provenance", "capture", "nsys", "select", "ncu", "analysis", "reports" */
	char status[16];             /* "ok", "skipped", "failed" */
	char reason[768];            /* "" when ok */
};

struct lp_analysis_input {
	const struct lp_profile *profile;      /* required; may hold no kernels (CPU run) */
	const json_t *model;                   /* the config's `model` object; NULL unknown */
	int64_t batch, prompt_len, new_tokens; /* from inputs.* or the workload's args; 0 unknown */
	const struct lp_device *device;        /* NULL: the profile's first device */
	double peak_tflops, peak_bw_gbs;       /* device.peak_* overrides; <= 0 unset */
	const struct lp_kernel_record *ncu;    /* deep mode: ncu records (metrics in base units) */
	size_t n_ncu;
	const struct lp_phase_status *phases;
	size_t n_phases;
	const json_t *env;                     /* env.json; NULL unknown */
	const char *run_id;                    /* NULL: "" */
	const char *mode;                      /* "light" / "deep"; NULL: "" */
	double traced_s, untraced_s;           /* run.measure_overhead: workload seconds; <= 0 unknown */
	struct lp_own_timings own;             /* valid 0: the workload printed none */
	const double *own_steps;               /* the workload's per-step latencies (its iteration lines'
	                                        * step_ms, workload_timings.h), ms; NULL none */
	size_t n_own_steps;
	double measured_bw_gbs;                /* probe.json (run.probe_bandwidth): copy GB/s; <= 0 unknown */
	const struct lp_stage_rules *stage_rules; /* NULL: default names, nothing skipped (stages.h) */
	const json_t *auto_info;               /* the Python shim's account of the program; NULL none */
	const json_t *hooks_config;            /* stages.hooks (array of strings); NULL none */
	const json_t *hook_accounts;           /* array: each process account's "hooks" array; NULL none */
	const char *auto_info_path;            /* its path in the run folder, for the reports */
	const json_t *baseline;                /* run.baseline=reference: baseline/summary.json; NULL none */
	const char *baseline_why;              /* no baseline although asked: the phase's reason; NULL */
	const json_t *ncu_sampling;            /* ncu/sampling.json (docs/ncu-sampling.md); NULL none */
	double rerun_sd_pct;                   /* trace.rerun_sd: one run's own spread, percent, for a
	                                        * sampled row's rerun interval; 0: none (the interval alone) */
};

/* Stage rules from a resolved config (`stages.*` lists, `run.skip_first`); the names point into
 * cfg, which must outlive the rules. Missing keys give the defaults and LP_SKIP_FIRST_AUTO. */
struct lp_stage_rules_buf {
	struct lp_stage_rules rules;
	const char *names[LP_ROLE_COUNT][LP_STAGE_NAMES_MAX + 1];
};
int lp_stage_rules_from_config(const json_t *cfg, struct lp_stage_rules_buf *out, struct lp_err *err);

/* llmprof's model.* object for a Hugging Face config (the reader of model.hf_config, else field by
 * field for architectures it does not know: Qwen2-MoE's shared expert counts as
 * shared_expert_intermediate_size / moe_intermediate_size experts); dtype added. NULL with a reason
 * in `why` when the config lacks a needed field. New reference. */
json_t *lp_model_json_from_hf(const json_t *hf, const char *dtype, char *why, size_t why_cap);

/* MFU/MBU of one stage (per iteration) or of the whole measured run. */
struct lp_perf {
	const char *label;           /* "prefill", "decode", "model" */
	struct lp_num flops;         /* model FLOPs per iteration */
	struct lp_num bytes;         /* minimum DRAM bytes per iteration */
	struct lp_num gpu_s;         /* measured GPU busy seconds per iteration */
	struct lp_num host_s;        /* host (launch/CPU) seconds per iteration: shown, never divided by */
	struct lp_num lat_s;         /* latency seconds per iteration (stages.h) */
	struct lp_num tflops_per_s;  /* achieved, over GPU time */
	struct lp_num gbs;           /* achieved minimum-bytes rate, over GPU time */
	struct lp_num mfu, mbu;      /* fractions (0..1) over GPU busy time: how well the kernels use the GPU */
	struct lp_num mfu_lat, mbu_lat;   /* over the latency: what the user gets end to end */
	struct lp_num ncu_flops;     /* FLOPs ncu counted in the joined kernels (per iteration) */
	struct lp_num ncu_coverage;  /* share of the stage's kernel time those kernels cover */
};

/* One entry of stages.hooks and what the program's processes said of it (docs/nvtx.md "Stage hooks
 * by name"): counts summed over the accounts; warning set (a reason) when it never matched. */
struct lp_hook_row {
	const char *hook;
	uint64_t calls, payload_misses;
	size_t processes, imported, found;   /* accounts listing it / where its module ran / where it was wrapped */
	const char *warning;                 /* NULL: matched */
};
#define LP_HOOK_ROWS_MAX 64

/* llmprof's number beside the workload's own measurement of it (the self-check). */
struct lp_self_check {
	const char *what;            /* "time to first token (ms)", ... */
	int stage;                   /* enum lp_stage_kind whose latency per iteration it compares; -1 for
	                              * the others (ms per step, tokens/s) */
	double ours, theirs;
	double diff;                 /* (ours - theirs) / theirs */
};
#define LP_SELF_CHECK_TOL 0.05     /* a difference above this is warned about */

/* Every decode step's latency beside the workload's own (its step_ms), in order, when both list
 * the same number of measured steps (issue 24: within 2% each). Informative: it does not set
 * check_failed (a single step's host hiccup between the two clocks is not a wrong number). */
struct lp_step_check {
	int done;                    /* 1: compared step by step */
	const char *why_not;         /* done 0 though the workload listed steps: why not */
	size_t ours, theirs;         /* measured decode steps: llmprof's, the workload's */
	size_t within;               /* steps within LP_STEP_CHECK_PCT */
	double median_abs_pct, max_abs_pct;
	size_t max_at;               /* 0-based step (over the measured steps) of the largest */
	double median_gap_ms;        /* median of the workload's step minus llmprof's (> 0: ours lower) */
	double gap_p10_ms, gap_p90_ms; /* its 10th and 90th percentiles: a fixed offset varies little */
	int stage;                   /* the stage whose steps were compared (enum lp_stage_kind) */
};
#define LP_STEP_CHECK_PCT 2.0

enum lp_advice_kind { LP_ADVICE_TAKEAWAY = 0, LP_ADVICE_RECOMMENDATION = 1 };

struct lp_advice {
	enum lp_advice_kind kind;
	const char *rule;            /* stable id ("stage-dominates", "decode-idle", ...) */
	const char *text;            /* the statement with the numbers that triggered it */
};

struct lp_analysis {
	int schema_version;
	const char *run_id, *mode;
	const char *source, *source_kind;      /* the profile's */
	struct lp_stage_set stages;
	struct lp_op_table ops;
	struct lp_kernel_set kernels;
	struct lp_timeline timeline;            /* one measured iteration, for the timeline figure */
	struct lp_rank_view ranks;              /* several processes (docs/ranks.md); n_ranks <= 1: one */
	int have_model;
	struct lp_model_shape model;
	struct lp_model_params params;
	char model_why[200];
	int have_device;
	struct lp_device device;               /* strings point into the arena */
	struct lp_peak peak;
	int64_t batch, prompt_len, steps;      /* resolved; 0 unknown */
	char tokens_why[200];
	/* where the model and each token count came from: "config", "inputs.batch", "prefill payload",
	 * "decode_step ranges", "the program (llmprof_auto)", ...; "" unknown */
	char model_source[160];
	const char *batch_source, *prompt_source, *steps_source;
	int auto_used;                         /* something came from the program's account */
	int auto_stages;                       /* the program's stage ranges were pushed by llmprof_auto */
	double auto_params;                    /* parameter count the program reported; 0 unknown */
	struct lp_num prefill_tokens;          /* per iteration (batch x prompt) */
	struct lp_num decode_tokens;           /* per iteration (batch x steps) */
	struct lp_num decode_tokens_per_s;     /* decode tokens / decode latency */
	struct lp_num decode_step_ms;          /* decode latency / steps */
	struct lp_num ttft_ms;                 /* prefill latency */
	struct lp_own_timings own;             /* the workload's own report, if it printed one */
	struct lp_self_check checks[6];        /* own vs ours, where both are known */
	size_t n_checks;
	int check_failed;                      /* some |diff| > LP_SELF_CHECK_TOL */
	struct lp_step_check step_check;       /* every decode step against the workload's own */
	char check_rank_label[32];             /* "rank 0": the own numbers were that rank's, checked
	                                        * against its stages (several ranks); "" otherwise */
	struct lp_perf perf[3];                /* prefill, decode, model */
	struct lp_waterfall waterfall[2];      /* prefill (per iteration), decode (per step) */
	double measured_bw_gbs;                /* the probe's copy bandwidth; 0 unknown */
	uint64_t tracer_overhead_ns, dropped_records;
	uint64_t dropped_at_detach;            /* of dropped_records, CUPTI's at most one per detach of the
	                                        * tracer (cuptiFinalize: bursts, the warm-up): no kernel's
	                                        * (bench/tracer/README.md run 34) */
	uint64_t graph_uncaptured;             /* graph kernels without a capture record (lp_process) */
	uint64_t units_measured;               /* sampling units auto recorded exactly while it measured the
	                                        * launch rate (STAGE flag 3), warm-up's included ... */
	uint64_t units_measured_left_out;      /* ... and those of them in iterations left out as warm-up */
	double units_measured_rate;            /* kernels recorded inside them per second of their host
	                                        * time (0: none), a CUDA graph's kernels each counted */
	uint32_t push_attached, push_attached_of; /* measured prefill iterations whose push attached CUPTI
	                                        * (a burst had detached it: the attach's pause is in their
	                                        * latency, run 39), of all measured prefill iterations */
	struct lp_stage_inst {                 /* stage ranges the tracer sampled on their own (bursts: a
	                                        * serving loop's prefill, mixed; sampling.h), by name */
		const char *name;              /* points into the profile */
		uint32_t recorded, of;         /* instances recorded, of all (warm-up left out) */
	} stage_inst[4];
	size_t n_stage_inst;
	size_t n_processes;
	double traced_s, untraced_s;
	struct lp_phase_status *phases;
	size_t n_phases;
	json_t *env;                           /* new reference or NULL */
	struct lp_advice *advice;
	size_t n_advice;
	struct lp_sampling sampling;           /* the tracer's SAMPLING record: the one that says most, its
	                                        * counts summed over the processes of its mode and why (a
	                                        * job's ranks; mode 0 none) */
	uint32_t sampling_processes;           /* the processes summed into it */
	uint32_t sampling_others;              /* traced processes of another mode or why (not a
	                                        * launcher that decided nothing) */
	double rerun_sd_pct;                   /* the input's, used for the rows' rerun_ms */
	struct lp_tsample_table sampled;        /* sampled trace: kernels scaled to every unit, 95% intervals (keys in arena) */
	struct lp_hook_row hooks[LP_HOOK_ROWS_MAX];  /* stages.hooks, in config order */
	size_t n_hooks, n_hook_warnings;
	size_t n_hook_accounts;                /* process accounts that listed hooks */
	int baseline_asked;                    /* run.baseline=reference: the reports show the section */
	struct lp_baseline baseline;           /* the program against the reference (baseline.h) */
	struct lp_arena arena;
	json_t *ncu_sampling;                  /* the input's, by reference; NULL none */
};

int lp_analyze(const struct lp_analysis_input *in, struct lp_analysis *out, struct lp_err *err);
void lp_analysis_release(struct lp_analysis *a);

/* Appends value x scale with `decimals` decimals and `suffix`, or "n/a (reason)". */
int lp_num_format(const struct lp_num *n, int decimals, double scale, const char *suffix, struct lp_buf *out);
/* Sets a number / a reason (printf-style). */
void lp_num_set(struct lp_num *n, double value);
void lp_num_na(struct lp_num *n, const char *fmt, ...) LP_PRINTF(2, 3);

/* CUPTI's dropped records of process `pr` that its detaches explain: on CUDA 13 (driver 580) every
 * cuptiFinalize of the tracer counts one record dropped that is no kernel's (bench/tracer/README.md
 * run 34: every kernel launched outside a graph capture kept its record), so up to one a detach is
 * not a loss. Detaches: bursts (attach and detach in turn) and the warm-up's (trace.warmup detach
 * or graphs). */
uint64_t lp_dropped_at_detach(const struct lp_process *pr);

#endif
