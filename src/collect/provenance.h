/* provenance.h: what a run ran on and with, written at the start of every run
 * (docs/run-directory.md):
 *   env.json     host, OS and kernel, CPU, memory, GPUs (NVML through dlopen, SM count from
 *                libcuda), CUDA driver and runtime versions, llmprof version and commit,
 *                relevant environment variables, and the tools section the caller computed
 *   config.yaml  the resolved configuration
 *   inputs.yaml  the workload argv and its declared inputs (argv words naming files: size, sha256)
 * Nothing here fails for a missing GPU or driver: absent parts are recorded with the reason.
 *
 * Ownership: the json_t results are new references the caller json_decref()s.
 * Thread-safety: none needed (called once per run, before any phase).
 *
 *   json_t *env; if (lp_prov_env(tools, &env, err) < 0) return -1;
 *   if (lp_prov_write(&rd, &cfg, argv, argc, tools, err) < 0) return -1;
 */
#ifndef LP_COLLECT_PROVENANCE_H
#define LP_COLLECT_PROVENANCE_H

#include <jansson.h>
#include <stddef.h>

#include "collect/rundir.h"
#include "config/config.h"
#include "core/err.h"

/* Files larger than this are listed in inputs.yaml without a sha256 (with the reason). */
#define LP_PROV_HASH_MAX_BYTES (1ull << 30)

/* Defined in the generated lp_version.c (part of lpcore). */
const char *lp_version_string(void);
const char *lp_version_commit(void);

/* The env.json object. `tools` (borrowed, may be NULL: `"tools": {}`) is filled by the Nsight
 * adapters (nsys/ncu path and version, or why not). */
int lp_prov_env(const json_t *tools, json_t **out, struct lp_err *err);
/* The host clock the tracer stamps every NVTX range and traced launch with (CLOCK_REALTIME,
 * inject/writer.c): {"source": the kernel's clock source or null, "realtime_read_ns": one read's
 * cost here, measured over up to 100,000 reads or 20 ms, "slow": above LP_SLOW_CLOCK_NS, a system
 * call a read, which the tracer's cost per event grows with}. env.json's "clock", and `llmprof
 * check`. */
#define LP_SLOW_CLOCK_NS 200.0 /* through the vDSO a read takes 20-60 ns, a system call several hundred */
json_t *lp_prov_clock(void);
/* Adds "gpus" (NVML: name, uuid, memory, SM count, clocks, compute capability), "gpus_reason"
 * when there are none, and "cuda" (driver and runtime versions) to env. Never fails for a
 * missing driver. Also for `llmprof check`. */
int lp_prov_gpus(json_t *env, struct lp_err *err);
/* The inputs.yaml object: {"workload": {"argv": [...], "cwd": ...}, "files": [...],
 * "overrides": [...]} for the given workload argv (may be empty). */
int lp_prov_inputs(const char *const *argv, size_t argc, const struct lp_config *cfg, json_t **out,
	struct lp_err *err);
/* Writes config.yaml, env.json and inputs.yaml into the run folder (phase "provenance"). */
int lp_prov_write(struct lp_rundir *rd, const struct lp_config *cfg, const char *const *argv,
	size_t argc, const json_t *tools, struct lp_err *err);

#endif
