/* perfetto.h: writes a profile (profile/profile.h) as Chrome trace-event JSON, gzip-compressed,
 * that opens in ui.perfetto.dev (and chrome://tracing): NVTX push/pop ranges as slices on their
 * CPU thread's track, start/end ranges as async slices, marks as instants; kernels and copies on
 * one track per (process, GPU, stream); an arrow from each launch to its kernel; process, GPU and
 * stream names; device properties as process labels and in "otherData". Several ranks of one job
 * (lp_process.rank, docs/ranks.md) share the file: each rank is one process track named "rank R: ..."
 * with its GPU tracks right after it, in rank order; other processes (launchers) come last.
 *
 * The JSON is streamed through zlib in 64 KiB pieces (never built whole in memory) into a
 * temporary file renamed over `path` at the end, so a failure leaves no half file. Names are
 * escaped for JSON; invalid UTF-8 becomes U+FFFD. Timestamps are microseconds (exact, printed
 * with three decimals) since the earliest event; the absolute origin is otherData.t0_ns. In a sampled
 * trace (docs/tracer.md) an unrecorded decode step's slice has args.kernels_recorded = false: its
 * kernels are missing from the GPU tracks, which are not idle there.
 * Reads the profile only; not thread-safe with writers of the same profile.
 *
 *   struct lp_perfetto_opts o = { .flows = 1 };
 *   if (lp_perfetto_write(&profile, "trace.json.gz", &o, err) < 0) return -1;
 */
#ifndef LP_REPORT_PERFETTO_H
#define LP_REPORT_PERFETTO_H

#include "core/buf.h"
#include "core/err.h"
#include "profile/profile.h"

struct lp_perfetto_opts {
	int flows;          /* draw launch -> kernel arrows (adds three events per kernel) */
	int compress_level; /* zlib level 1-9; 0 means 6 */
};

int lp_perfetto_write(const struct lp_profile *p, const char *path, const struct lp_perfetto_opts *opts,
	struct lp_err *err);

/* Appends `s` as a JSON string (quotes included) to `b`: escapes quotes, backslashes and control
 * characters, replaces invalid UTF-8 with U+FFFD. */
int lp_perfetto_json_string(struct lp_buf *b, const char *s);

#endif
