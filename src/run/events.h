/* events.h: how the run layer tells its caller what happens, without printing.
 *
 * The run layer (src/run/) never writes to stdout or stderr: progress, phase statuses, warnings
 * and the once-a-second ticker of a running child are handed to one callback the caller gives
 * (src/cmd/ prints them through core/log.h). Results that are data (the dry-run plan, the
 * outcome of a rebuild) are returned, not reported here. A NULL sink (or a NULL fn) drops every
 * event, which is what the tests and library callers that only want the files do.
 *
 * Events are delivered synchronously on the caller's thread; the strings they carry are valid
 * only during the call (copy what you keep).
 *
 *   static void on_event(void *ctx, const struct lp_run_event *ev) { ... switch (ev->kind) ... }
 *   struct lp_run_sink sink = { on_event, NULL, lp_log_progress_enabled() };
 *   lp_pipeline_run(&pl, &run, &sink, err);
 */
#ifndef LP_RUN_EVENTS_H
#define LP_RUN_EVENTS_H

#include <stddef.h>

#include "core/err.h"

enum lp_run_event_kind {
	LP_RUN_EV_PROGRESS,   /* a phase starts: index/count, phase, text = what it works on */
	LP_RUN_EV_PHASE,      /* a phase status is known: phase, status ("ok", "skipped", "failed"), text = reason ("" none) */
	LP_RUN_EV_INFO,       /* progress-level information, not a problem: text */
	LP_RUN_EV_WARN,       /* something went wrong but the run goes on: text */
	LP_RUN_EV_TICK,       /* once a second while a child runs (sink->ticks only): phase, elapsed_s, profiled (-1 unknown) */
	LP_RUN_EV_TICK_END,   /* the child whose ticks were reported has ended: elapsed_s = its wall time */
};

struct lp_run_event {
	enum lp_run_event_kind kind;
	const char *phase;    /* "capture", "nsys", ...; NULL when not about a phase */
	int index, count;     /* PROGRESS: 0-based phase index and the number of phases */
	const char *status;   /* PHASE */
	const char *text;     /* never NULL ("" when there is nothing to say) */
	double elapsed_s;     /* TICK, TICK_END */
	long profiled;        /* TICK: kernels ncu profiled so far; -1 when not counted */
};

typedef void (*lp_run_event_fn)(void *ctx, const struct lp_run_event *ev);

struct lp_run_sink {
	lp_run_event_fn fn;   /* NULL: events are dropped */
	void *ctx;
	int ticks;            /* 1: deliver TICK / TICK_END (a terminal is watching); 0: none, and no
	                       * work is spent on them (the ncu log is not read) */
};

/* Helpers for the run layer: deliver one event (no-op without a sink). */
void lp_run_emit(const struct lp_run_sink *sink, const struct lp_run_event *ev);
void lp_run_warnf(const struct lp_run_sink *sink, const char *fmt, ...) LP_PRINTF(2, 3);
void lp_run_infof(const struct lp_run_sink *sink, const char *fmt, ...) LP_PRINTF(2, 3);

#endif
