/* timeline.h: the events of one measured iteration, kept for the timeline figure of the reports
 * (report/figures.h): the stage ranges (prefill, then the decode stage that follows it), the
 * decode steps, the ranges nested under them by level (layers, then their ops, ...), and the
 * kernels and copies attributed to them on one GPU lane per device.
 *
 * Which iteration: the first measured prefill occurrence and the first measured decode occurrence
 * that starts after it (iteration 1 of the statistics); with only one of them, or with top-level
 * stages, the first measured occurrence of the first stage. Without any stage: the first
 * LP_TIMELINE_MAX_SOURCE events of the whole run. Times are relative to the first event shown.
 * Membership follows attribution, not time overlap: a range or kernel belongs when the stage
 * occurrence is one of its ancestors (kernels: through their launch-time range, profile.h).
 *
 * Lanes: "stage" (each occurrence's range, then, when GPU work launched inside ends after its pop,
 * a LP_TL_EV_LATENCY event up to that end: the rest of the stage latency, stages.h), "decode
 * steps" (when there are steps), "ranges L1" ... "ranges L<n>" with
 * n <= LP_TIMELINE_RANGE_LEVELS (L1: ranges directly under a stage or a step; deeper levels are
 * counted in levels_dropped, not shown), then one "GPU <device>" lane per device (kernels, copies
 * and memsets; at most LP_TIMELINE_MAX_LANES lanes in all).
 *
 * Sampled traces (docs/tracer.md "Sampled tracing"): a decode step whose kernels were not recorded
 * (lp_range.sample 2) gets a LP_TL_EV_UNRECORDED event on the first GPU lane over its GPU window
 * (its STAGE times; its host range without them), so that the figure shows it as not recorded,
 * never as idle GPU time; n_unrecorded counts them (of n_unit_steps decode steps shown).
 *
 * Downsampling: beyond LP_TIMELINE_MAX_EVENTS events, events narrower than merge_ns that start
 * within merge_ns of a group's first event in the same lane become one mark (merged = how many);
 * merge_ns starts at span / LP_TIMELINE_COLUMNS (one column of a 1600-column drawing) and doubles
 * until the marks fit. Wider events stay as they are. n_source says how many events there were.
 * Deterministic: events are ordered by lane, start, end, label.
 *
 * Ownership: the timeline owns its events and labels (copied: it never points into the profile);
 * lp_timeline_release frees them. Not thread-safe.
 *
 *   struct lp_timeline tl;
 *   if (lp_timeline_compute(profile, &stages, &tl, err) < 0) return -1;
 *   for (i = 0; i < tl.n_events; i++) draw(tl.lanes[tl.events[i].lane].name, tl.events[i].start_ns, ...);
 *   lp_timeline_release(&tl);
 */
#ifndef LP_ANALYZE_TIMELINE_H
#define LP_ANALYZE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/stages.h"
#include "core/arena.h"
#include "core/err.h"
#include "profile/profile.h"

#define LP_TIMELINE_MAX_EVENTS 4000      /* marks kept after downsampling */
#define LP_TIMELINE_MAX_SOURCE 2000000   /* events looked at (a bound on memory) */
#define LP_TIMELINE_COLUMNS 1600
#define LP_TIMELINE_RANGE_LEVELS 4
#define LP_TIMELINE_MAX_LANES 12
#define LP_TIMELINE_ZOOM_STEPS 3
#define LP_TIMELINE_ZOOM_MIN_STEPS 16

enum lp_tl_lane_kind {
	LP_TL_LANE_STAGE = 0,
	LP_TL_LANE_STEP = 1,
	LP_TL_LANE_RANGE = 2,
	LP_TL_LANE_GPU = 3,
};

enum lp_tl_event_kind {
	LP_TL_EV_RANGE = 0,
	LP_TL_EV_KERNEL = 1,
	LP_TL_EV_COPY = 2,
	LP_TL_EV_LATENCY = 3,        /* stage lane: from the pop to the end of the GPU work launched inside */
	LP_TL_EV_UNRECORDED = 4,     /* GPU lane: a sampled trace's unrecorded step (its kernels not traced) */
};

struct lp_tl_lane {
	enum lp_tl_lane_kind kind;
	char name[32];               /* "stage", "decode steps", "ranges L1", "GPU 0" */
};

struct lp_tl_event {
	uint32_t lane;
	uint8_t kind;                /* enum lp_tl_event_kind (of the first event of a mark) */
	uint8_t synthetic;           /* a range copied under a CUDA graph launch (GPU span, profile.h) */
	uint32_t merged;             /* 1: one event; > 1: a mark standing for this many narrow events */
	uint64_t start_ns, end_ns;   /* relative to origin_ns */
	const char *label;           /* range or kernel name (of the first event of a mark) */
};

struct lp_timeline {
	int valid;                   /* 0: nothing to show, `why` says why */
	char why[160];
	char what[160];              /* "iteration 1: prefill + decode_all", "whole run (no stage ranges)" */
	uint64_t origin_ns, span_ns;
	struct lp_tl_lane lanes[LP_TIMELINE_MAX_LANES];
	size_t n_lanes;
	struct lp_tl_event *events;  /* lane, then start_ns, then end_ns, then label */
	size_t n_events;
	size_t n_source;             /* events in the iteration before downsampling */
	int source_truncated;        /* more than LP_TIMELINE_MAX_SOURCE events: the first ones kept */
	uint64_t merge_ns;           /* 0: nothing merged */
	size_t levels_dropped;       /* ranges deeper than LP_TIMELINE_RANGE_LEVELS, not shown */
	size_t n_unrecorded;         /* sampled trace: steps shown whose kernels were not recorded ... */
	size_t n_unit_steps;         /* ... of the sampling-unit steps shown (0: not a sampled trace) */
	/* the zoom: the first LP_TIMELINE_ZOOM_STEPS decode steps' worth of time from the start of the
	 * decode occurrence's latency (after GPU work queued before it: stages.h; latency / steps
	 * each), the events overlapping it, same lanes; only
	 * when the whole view was downsampled or has more than LP_TIMELINE_ZOOM_MIN_STEPS steps */
	int have_zoom;
	uint64_t zoom_from_ns, zoom_to_ns;       /* relative to origin_ns */
	struct lp_tl_event *zoom_events;
	size_t n_zoom_events;
	uint64_t zoom_merge_ns;      /* 0: nothing merged in the zoom */
	struct lp_arena arena;
};

int lp_timeline_compute(const struct lp_profile *p, const struct lp_stage_set *s, struct lp_timeline *out,
	struct lp_err *err);
void lp_timeline_release(struct lp_timeline *t);

#endif
