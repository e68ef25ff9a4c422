/* pipeline.h: the phases of `llmprof run`, in order, on a prepared run (run/prepare.h):
 *
 *   1 provenance  env.json (with the tools found), config.yaml, inputs.yaml (model.json: the
 *                 shape given to the reference model when model.* overrides change it)
 *   2 capture     the workload under our tracer (CUDA_INJECTION64_PATH + NVTX_INJECTION64_PATH)
 *                 -> trace/<host>.<pid>.lptrace, trace/workload.stdout, trace/cmd.txt
 *   3 nsys        when profiling.nsys.enable and nsys is usable -> nsys/
 *   4 select      the top run.top_n_kernels kernels of run.stage from the capture -> ncu/selection.json
 *   5 ncu         deep mode on a GPU run: the profiling.ncu preset, gated by NVTX, filtered to the
 *                 selection (or the regions' filters when profiling.ncu.regions.include is set)
 *                 -> ncu/<name>.ncu-rep, _raw.csv, _details.csv, ncu/regions/
 *   6 analysis    }  lp_report_rebuild (run/rebuild.h): the same code as `llmprof report RUN_DIR`
 *   7 reports     }  -> the files of report/reports.h (lp_report_files)
 *
 * Each phase ends ok, skipped (reason) or failed (reason); statuses go to phases.json as soon as
 * they are known, so a failure never loses what earlier phases wrote (every file they wrote is in
 * manifest.json). An artifact that cannot be written or recorded in manifest.json fails the phase
 * that wrote it (its reason names the file), so an incomplete manifest never goes unnoticed. The run's exit status: 0 when every requested phase ran, 3 when one failed (or
 * the analysis read damaged artifacts), 4 when the environment could not run what was asked (a
 * tool or GPU missing; `llmprof check`). Interrupted (lp_proc_interrupted): the running phase is
 * stopped, later ones are not started, the run's status is "interrupted" (the CLI exits 128 +
 * the signal). A workload that left no trace file because it failed or was stopped before
 * loading the tracer gets an empty one (the trace preamble), so the folder stays readable.
 *
 * The workload: without `--`, the reference model build/bin/llmprof-llm (model = the `model`
 * choice or model.hf_config; device from run.device, auto = cuda when a GPU is usable and the
 * CUDA path was built; tokens from inputs.*, recorded back into the config). With `--`, the
 * given argv; its model and tokens come from the config (model.*, inputs.*) or NVTX payloads.
 *
 * Files: pipeline.c (the phase statuses, the order of the phases, analysis + reports),
 * workload.c (resolving the workload, the children's environments), phases.c (provenance, capture,
 * nsys, select), phase_ncu.c (ncu and the NVTX region report), plan.c (--dry-run).
 *
 * Ownership: struct lp_pipeline owns its workload argv and tools. Not thread-safe. Never prints:
 * progress, phase statuses and warnings go to the sink of the options (run/events.h); the plan
 * of --dry-run is returned as text.
 */
#ifndef LP_RUN_PIPELINE_H
#define LP_RUN_PIPELINE_H

#include "collect/tools.h"
#include "core/buf.h"
#include "core/err.h"
#include "core/proc.h"
#include "run/events.h"
#include "run/prepare.h"

#define LP_PIPELINE_HOOKS_CAP 33024   /* stages.hooks: 64 entries of 512 characters, one a line */

struct lp_pipeline_opts {
	const char *exe_dir;       /* folder of the llmprof binary: llmprof-llm and ../lib are found from it */
	int dry_run;               /* resolve everything for lp_pipeline_plan, run nothing */
	const struct lp_run_sink *sink; /* progress, phase statuses, warnings (run/events.h); NULL: none */
};

/* State of one run of the pipeline; lp_pipeline_release frees it. */
struct lp_pipeline {
	struct lp_pipeline_opts opts;
	struct lp_argv workload;   /* the argv of the workload (the reference model's, or a copy of `--`'s) */
	int reference;             /* the workload is llmprof-llm */
	int gpu_run;               /* the workload is expected to use the GPU */
	char device[8];            /* reference model: "cpu" or "cuda" */
	char inject[1024];         /* absolute path of libllmprof_inject.so ("" missing) */
	char auto_pythonpath[4096]; /* run.auto_stages: PYTHONPATH with python/llmprof_auto/site first ("" off) */
	char auto_dir[1024];       /* where the shim writes its account: <run>/auto (LLMPROF_AUTO_DIR) */
	int auto_ops;              /* run.auto_ops */
	char auto_warmup[24];      /* run.auto_warmup (LLMPROF_AUTO_WARMUP): first generate() calls as warm-up */
	char auto_hooks[LP_PIPELINE_HOOKS_CAP]; /* stages.hooks, one a line (LLMPROF_AUTO_HOOKS); "" none */
	char trace_sample[128];    /* trace.sample for the capture (LLMPROF_TRACE_SAMPLE); default auto */
	char trace_warmup[16];     /* trace.warmup (LLMPROF_TRACE_WARMUP): graphs (default), detach or record */
	struct lp_tools *tools;
	struct lp_run_outlook outlook; /* what this run will do here (CPU or GPU run, the expected exit) */
	int fail_kind;             /* enum lp_err_kind the run ends with: LP_OK, LP_EPARTIAL (a phase
				    * failed) or LP_EENV; cmd/ maps it to the exit status */
};

/* Resolves the workload (writing inputs.* into the config for the reference model) and finds the
 * tools; call after lp_run_prepare and before provenance. Errors here are usage (2) or
 * environment (4) errors and nothing has run. */
int lp_pipeline_init(struct lp_pipeline *pl, struct lp_run *run, const struct lp_pipeline_opts *o,
	struct lp_err *err);
/* The plan (phases and exact command lines) as text, appended to `out`; runs nothing. The
 * expected exit status (outlook.fail_kind) is the command's to print: only cmd/ maps kinds. */
int lp_pipeline_plan(struct lp_pipeline *pl, struct lp_run *run, struct lp_buf *out, struct lp_err *err);
/* Runs the phases; phase failures are results (pl->fail_kind); -1 only when the run folder
 * cannot be written at all. */
int lp_pipeline_run(struct lp_pipeline *pl, struct lp_run *run, struct lp_err *err);
void lp_pipeline_release(struct lp_pipeline *pl);

#endif
