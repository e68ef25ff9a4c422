/* workload_timings.h: the timings a workload measured itself, read from the JSON lines it printed
 * on stdout (trace/workload.stdout), for the self-check beside llmprof's own numbers.
 *
 * The convention (docs/metrics.md "Self-check"): any stdout line that is a JSON object with
 * `"summary": true` carries the means over the program's measured iterations, in milliseconds and
 * tokens per second: `prefill_ms` (time to first token), `decode_ms` (all decode steps of one
 * iteration), `decode_ms_per_step`, `tokens_per_s` (decode), `mixed_ms` (one forward carrying prefill and decode
 * tokens together: chunked prefill), optionally `iters`. Lines with an
 * integer `"iter"` key are per-iteration values with the same keys; without a summary line their
 * mean is used. Every other line is ignored, so programs may print anything else. The last summary
 * line wins. llmprof-llm and examples/hf_generate.py follow it. In a job of several ranks the
 * summary line may carry an integer `rank`: the values are that rank's own, and the self-check
 * compares them with that rank's stages (examples/tp_decode.py prints rank 0's).
 *
 * A key that is missing, not a number, not finite or negative leaves the value unknown (< 0).
 * Ownership: plain values, nothing to release. Not thread-safe (only for the struct filled).
 *
 * Per step: an iteration line may carry `step_ms`, an array of its decode steps' latencies in
 * order (examples/hf_generate.py --step-times); lp_workload_steps_* concatenate them over the
 * iteration lines in the order printed, for the self-check of every step (analysis.h). An
 * iteration line whose `step_ms` holds anything but finite numbers >= 0 makes the list unknown.
 *
 *   struct lp_own_timings own;
 *   if (lp_workload_timings_read("run/trace/workload.stdout", &own, NULL, NULL, err) < 0) ...   // I/O error
 *   if (own.valid) printf("%.3f ms\n", own.prefill_ms);
 */
#ifndef LP_PARSE_WORKLOAD_TIMINGS_H
#define LP_PARSE_WORKLOAD_TIMINGS_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

struct lp_own_timings {
	int valid;                   /* at least one value is known */
	double prefill_ms, decode_ms, decode_ms_per_step, tokens_per_s;   /* < 0 unknown */
	double mixed_ms;             /* mean mixed-stage forward; < 0 unknown */
	int64_t iters;               /* iterations the values cover; 0 unknown */
	int32_t rank;                /* the summary's "rank": whose values these are; -1 not said */
};

/* Reads the lines of `text` (len bytes, need not be NUL-terminated). Never fails. */
void lp_workload_timings_parse(const char *text, size_t len, struct lp_own_timings *out);
/* Reads a file (at most 64 MiB) once, and with `steps` (NULL: not wanted) also its iteration lines'
 * step_ms as lp_workload_steps_parse gives them (none when out of memory); a missing file gives
 * valid 0 and no steps and returns 0; -1 on a read error. */
int lp_workload_timings_read(const char *path, struct lp_own_timings *out, double **steps, size_t *n_steps,
	struct lp_err *err);

/* The iteration lines' `step_ms`, concatenated: *out (malloc'ed, the caller frees; NULL when
 * none) and *n. Returns 0, or -1 out of memory (nothing allocated). */
int lp_workload_steps_parse(const char *text, size_t len, double **out, size_t *n);

#endif
