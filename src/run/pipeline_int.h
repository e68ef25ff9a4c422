/* pipeline_int.h: what the files of the run pipeline share (pipeline.c, workload.c, phases.c,
 * phase_ncu.c, plan.c); not for use outside src/run/. See pipeline.h for the phases.
 *
 * struct lp_pl_state is one run of the phases: their statuses (written to phases.json by
 * lp_pl_save_phases as soon as they change), the capture's profile and the top-N selection.
 * Artifact writes go through lp_pl_wrote: a write or manifest record that failed is remembered
 * for its phase and turns it "failed" (the reason names the file) when the statuses are saved. */
#ifndef LP_RUN_PIPELINE_INT_H
#define LP_RUN_PIPELINE_INT_H

#include <stdint.h>

#include "analyze/topn.h"
#include "core/buf.h"
#include "profile/profile.h"
#include "report/reports.h"
#include "run/pipeline.h"

enum { PH_PROVENANCE, PH_CAPTURE, PH_NSYS, PH_SELECT, PH_NCU, PH_BASELINE, PH_ANALYSIS, PH_REPORTS, PH_COUNT };
extern const char *const lp_pl_phase_names[PH_COUNT];

struct lp_pl_state {
	struct lp_pipeline *pl;
	struct lp_run *run;
	const struct lp_run_sink *sink;
	struct lp_phase_status ph[PH_COUNT];
	struct lp_buf write_failed[PH_COUNT];  /* artifacts a phase could not write or record, "; "-separated */
	double traced_s, untraced_s;
	struct lp_profile prof;
	int have_prof;
	struct lp_topn topn;
	int have_topn;
};

/* The configuration, read from the run's (NULL / dflt when unset or of another type). */
const char *lp_pl_cfg_str(const struct lp_run *run, const char *key);
int64_t lp_pl_cfg_int(const struct lp_run *run, const char *key, int64_t dflt);
double lp_pl_cfg_num(const struct lp_run *run, const char *key, double dflt);
int lp_pl_cfg_bool(const struct lp_run *run, const char *key);

/* Sets a phase's status and reason (fmt NULL: none) and tells the sink. */
void lp_pl_set_phase(struct lp_pl_state *st, int ph, const char *status, const char *fmt, ...) LP_PRINTF(4, 5);
/* Writes phases.json (and records it); artifact failures fail their phase first. */
void lp_pl_save_phases(struct lp_pl_state *st);
/* A phase starts working on `what`. */
void lp_pl_progress(struct lp_pl_state *st, int ph, const char *what);
/* rc of an artifact write or record of phase `ph` (err says why when rc < 0): a failure is
 * remembered (see the top of this file). Returns rc. */
int lp_pl_wrote(struct lp_pl_state *st, int ph, int rc, const char *rel, const struct lp_err *err);
/* Records every file under run/<sub> that the manifest does not list yet, under phase `ph`. */
void lp_pl_record_tree(struct lp_pl_state *st, const char *sub, int ph);
/* `path` made absolute into `out` (which may hold `path` itself); kept as given when it cannot be. */
int lp_pl_abs_path(const char *path, struct lp_buf *out);

/* The once-a-second ticker of a running child (core/proc.h's tick callback): the phase, its
 * elapsed time and, for ncu, how many kernels it has profiled so far (its log's
 * "==PROF== Profiling" lines). Only when the sink asks for ticks. */
struct lp_pl_ticker {
	const struct lp_run_sink *sink;
	const char *phase;
	const char *log_path;   /* NULL: no count */
	long read_bytes;        /* how much of the log was counted already (complete lines) */
	size_t profiled;
};
void lp_pl_tick(void *ctx, double elapsed_s);
/* After a child whose ticks were shown: TICK_END (the sink ends the ticker's line). */
void lp_pl_tick_end(const struct lp_run_sink *sink, double wall_s);

/* The environments of the children (workload.c): the capture's (tracer injected) and the
 * tools' (tracer removed). `env` has room for LP_PL_ENV_MAX. Both keep NVLink multicast off in
 * NCCL, torch's symmetric memory and NVSHMEM (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
 * NVSHMEM_DISABLE_NVLS=1) unless llmprof's own environment sets them: multicast objects a killed
 * job leaves behind can wedge a shared machine's NVSwitch (docs/ranks.md). */
#define LP_PL_ENV_MAX 16
size_t lp_pl_capture_env(const struct lp_pipeline *pl, const char *trace_dir, struct lp_proc_env *env);
size_t lp_pl_tool_env(const struct lp_pipeline *pl, struct lp_proc_env *env);

/* The phases (phases.c, phase_ncu.c), in order. */
void lp_pl_probe_bandwidth(struct lp_pl_state *st);
void lp_pl_phase_capture(struct lp_pl_state *st);
void lp_pl_phase_nsys(struct lp_pl_state *st);
void lp_pl_phase_select(struct lp_pl_state *st);
void lp_pl_phase_ncu(struct lp_pl_state *st);
/* run.baseline=reference: the reference workload on the program's shape, in <run>/baseline/ (baseline.c). */
void lp_pl_phase_baseline(struct lp_pl_state *st);

#endif
