/* inject.h: internals of libllmprof_inject.so, the tracer injected into other people's processes
 * (docs/tracer.md). Three parts share this header:
 *   writer.c  record buffers, string table, the background flush thread, the per-process file,
 *             exit / signal / fork handling (docs/trace-format.md is what it writes);
 *   nvtx.c    InitializeInjectionNvtx2: NVTX callbacks -> NVTX records, per-thread range stacks;
 *   cupti.c   InitializeInjection: CUPTI activity + launch callbacks -> GPU records (built only
 *             when CMake found CUPTI; cupti_none.c stands in otherwise).
 *
 * Rules for everything here: C only, no lpcore, never print to the host's stdout/stderr (only the
 * opt-in LLMPROF_TRACE_LOG file), never exit or abort, every entry point safe to call from any
 * thread at any time, including before initialization and after shutdown (then it does nothing).
 * All functions are thread-safe unless noted.
 */
#ifndef LP_INJECT_INJECT_H
#define LP_INJECT_INJECT_H

#include <stddef.h>
#include <stdint.h>

#include "llmprof/trace_format.h"

#define LP_INJ_EXPORT __attribute__((visibility("default")))

/* ---- per-thread state (writer.c owns it; nvtx.c and cupti.c use their parts) ---- */

struct lp_inj_frame {               /* an open push/pop range */
	uint64_t id;
	uint32_t domain;
	uint32_t stage;                 /* sample.c: lp_inj_stage_push's mark, 0: not a stage */
};

struct lp_inj_strcache {            /* a string this thread interned recently */
	const char *s;                  /* the writer's stable copy (never freed) */
	uint32_t len, hash, sid, reserved;
};

#define LP_INJ_STRCACHE 256         /* entries, a power of two */

struct lp_inj_slot;
struct inj_buf;

/* Everything a thread needs on the hot paths, in one block: allocated at the thread's first
 * lp_inj_self (64-byte aligned), reached through one thread-local pointer, freed at thread exit.
 * Reset (except the string cache, whose ids stay valid) when the process has forked since. The
 * first cache line holds what every record needs (the fork check, the write position, ids). */
struct lp_inj_thread {
	uint32_t gen;                   /* fork generation the fields below belong to */
	uint32_t tid;
	uint32_t busy;                  /* inside lp_inj_append: a nested call (signal handler) is dropped */
	uint32_t depth, overflow;       /* nvtx.c: frames in `stack`; pushes beyond the limit */
	uint32_t keyed;                 /* writer.c: registered with the thread-exit destructor */
	struct inj_buf *buf;            /* writer.c: the slot's buffer as its owner sees it (NULL: none) ... */
	size_t wlen, wcap;              /* ... bytes written in it and its capacity (0, 0: none) */
	uint64_t next_id, end_id;       /* block of range ids handed out by lp_inj_next_id */
	uint32_t rt_correlation;        /* cupti.c: runtime launch traced on this thread right now */
	uint32_t unit_index;            /* sample.c: the index the next unit under unit_parent gets */
	uint64_t launches;              /* cupti.c: kernel and graph launches traced on this thread */
	uint64_t unit_parent;           /* sample.c: parent range of the last sampling unit pushed */
	uint32_t unit_parents;          /* sample.c: times unit_parent changed (the parent ordinal) */
	uint32_t unit_prev;             /* sample.c: units under the previous parent (0: none yet) */
	uint32_t reattach_units;        /* sample.c: the foreseen-end attach this many units ahead (set with unit_prev) */
	uint64_t plan_id;               /* sample.c: the last stage range pushed that is no unit ... */
	uint32_t plan_units;            /* ... and its payload (decode_all: the decode steps planned; 0: none) */
	uint64_t unit_first_ns, unit_last_ns; /* sample.c: pushes of the parent's first and last unit */
	uint32_t unit_skipping;         /* sample.c: inside an unrecorded unit (1) */
	uint64_t unit_t0, unit_l0;      /* sample.c: clock and launches at the open unit's push */
	uint64_t rate_ns, rate_max;     /* sample.c: time inside measured units, fastest launch rate (auto) */
	uint64_t api_launches;          /* cupti.c: launch calls traced on this thread (kernels, graphs, copies; each once) */
	uint64_t unit_a0;               /* sample.c: api_launches at the open measured unit's push */
	uint64_t par_api;               /* sample.c: launch calls of the current parent's measured units ... */
	uint32_t par_api_units;         /* ... and how many (those with any; auto's gen=) */
	uint32_t unit_api;              /* sample.c: launch calls per measured unit of the last parent that had any */
	uint32_t inst_n;                /* sample.c: stage instances sampled on their own so far (prefill,
	                                 * mixed: the next one's ordinal) ... */
	uint32_t inst_units, inst_gap;  /* ... units pushed since the last one, and between the last two */
	uint8_t inst_seen;              /* ... stage names seen (bits by configured stage) ... */
	uint8_t inst_rec[8];            /* ... and instances recorded per name (at most 255) */
	struct lp_inj_slot *slot;       /* writer.c: this thread's record buffer, as the flush thread lists it */
	struct lp_inj_frame stack[LP_TRACE_MAX_DEPTH];
	struct lp_inj_strcache strings[LP_INJ_STRCACHE];
};

/* The calling thread's state; NULL only when it could not be allocated (out of memory): the
 * caller then records nothing. */
struct lp_inj_thread *lp_inj_self(void);

/* ---- writer.c ---- */

/* Initializes the writer once (pthread_once): reads the environment, creates the trace file,
 * starts the flush thread, installs atexit/signal/fork handlers. Returns 1 when tracing is on. */
int lp_inj_init(void);
/* 1 while records are accepted (initialized, not disabled, not shut down). */
int lp_inj_active(void);
/* The trace clock: CLOCK_REALTIME in ns (also registered with CUPTI as its timestamp source). */
uint64_t lp_inj_now_ns(void);
/* Kernel thread id of the caller (cached per thread, refreshed after fork). */
uint32_t lp_inj_tid(void);
/* A process-wide unique id (> 0) for range instances and start/end ranges (taken from a
 * per-thread block of the global counter: no shared cache line per call). */
uint64_t lp_inj_next_id(void);
/* Increments when the process forks (the child's per-thread state compares against it). */
uint32_t lp_inj_fork_gen(void);

/* Interns n bytes (truncated at LP_TRACE_MAX_STRING_BYTES) and returns its string id, writing a
 * STRING record the first time; 0 when the table is full or tracing is off. Takes the writer's
 * lock: hot paths look in the thread's string cache first (lp_inj_intern_cached). */
uint32_t lp_inj_intern(const char *s, size_t n);
/* The same through the calling thread's cache: no lock when this thread interned the same bytes
 * recently. */
uint32_t lp_inj_intern_cached(const char *s, size_t n);
/* The id of a domain named `name` (same name, same id); 0 on failure. */
uint32_t lp_inj_domain(const char *name, size_t n);
/* Appends one record (payload followed by `extra` bytes, which may be NULL) to the calling
 * thread's own buffer: no lock, no system call, no allocation (except when the thread needs a new
 * buffer from the pool). Records of one thread reach the file in order; records of different
 * threads only in per-buffer batches. Returns 0, or -1 when the record was dropped (counted) or
 * tracing is off. */
int lp_inj_append(uint16_t type, const void *payload, size_t size, const void *extra, size_t extra_len);
/* Records the CUPTI state in the file (a CUPTI_STATUS record) and in the log. */
void lp_inj_set_cupti_status(uint32_t code, const char *message);
/* Adds to the count of records CUPTI says it dropped. */
void lp_inj_add_cupti_dropped(uint64_t n);
/* Asks the flush thread to write everything now (CUPTI forced flush included). wait_ms > 0 waits
 * for it with async-signal-safe calls only (used from the signal handler); 0 returns at once. */
void lp_inj_request_flush(int wait_ms);
/* Wakes the flush thread (a full CUPTI buffer is waiting). Async-signal-safe. */
void lp_inj_wake(void);
/* The flush period in ms chosen from the environment. */
unsigned lp_inj_flush_ms(void);
/* An environment switch set to "1" or "on" (the diagnostics' switches, read by more than one part). */
int lp_inj_env_on(const char *name);
/* An environment switch set to "0" or "off" (a default-on setting turned off). */
int lp_inj_env_off(const char *name);

/* printf-style line into the LLMPROF_TRACE_LOG file when set; nothing otherwise. */
void lp_inj_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- nvtx.c ---- */

/* Innermost push/pop range instance open on thread state `t` (0: none, or `t` NULL). */
static inline uint64_t lp_inj_current_range(const struct lp_inj_thread *t)
{
	return t && t->depth ? t->stack[t->depth - 1].id : 0;
}

/* ---- rank.c ---- */

struct lp_inj_rank {
	int32_t rank, local_rank, world_size, local_world_size;  /* -1 unknown */
	const char *source;             /* the rank's variable name; NULL none */
	const char *visible_devices;    /* CUDA_VISIBLE_DEVICES (the environment's storage); NULL unset */
};
/* Reads the launcher's variables (RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID ...; the
 * first set wins). Returns 1 when a rank or CUDA_VISIBLE_DEVICES was found. Not async-signal-safe. */
int lp_inj_rank_read(struct lp_inj_rank *out);
/* writer.c: writes a RANK record when the variables differ from the last one written (CUDA
 * context creation calls it: a program may set RANK after the tracer started). */
void lp_inj_rank_update(void);

/* ---- sample_spec.c ---- */

#define AUTO_GEN_LAUNCHES 2000          /* auto: generations foreseen to launch fewer stay exact (sample.c
                                         * short_generation) */
#define INST_EVERY 8                    /* bursts: stage instances recorded, one in each block of this many
                                         * (`stage=N`; 0: every one, attaching CUPTI at its push; sample.c) */
#define LP_INJ_SAMPLE_AUTO 3            /* lp_inj_sample_spec.mode: auto, not decided yet */

struct lp_inj_sample_spec {             /* LLMPROF_TRACE_SAMPLE, parsed */
	int mode;                       /* LP_TRACE_SAMPLE_EXACT, LP_TRACE_SAMPLE_SAMPLED or LP_INJ_SAMPLE_AUTO */
	uint32_t why;                   /* enum lp_trace_sample_why */
	uint32_t every, first, auto_rate, gen_launches, inst_every, burst, lead, pick;
	uint64_t seed;
	char unit[64];                  /* the sampling unit's range name */
};

/* Fills *out with the defaults (auto: bursts of 4 in blocks of 128, first=2, rate=5000, gen and
 * stage as above, unit decode_step), then with what `spec` says. Returns 0, or -1 when `spec` is
 * outside the grammar (*out then holds what was read before the fault: the caller traces exactly). */
int lp_inj_sample_spec_parse(const char *spec, struct lp_inj_sample_spec *out);

/* ---- sample.c ---- */

/* Reads LLMPROF_TRACE_SAMPLE, LLMPROF_TRACE_STAGES ... once (lp_inj_init calls it after opening the
 * file) and writes the first SAMPLING record. */
void lp_inj_sample_init(void);
/* At the push of range instance `id` named `name_sid` on thread `t`, parent `parent` (0: none),
 * with an integer `payload` (0: none): when the name is a stage, starts its GPU timestamp, and
 * when it is the sampling unit, decides whether this instance is recorded (switching CUPTI off if
 * not); a stage that is no unit keeps its payload as the units planned under it (decode_all's
 * contract, docs/nvtx.md). Returns the mark the frame
 * keeps for lp_inj_stage_pop, 0 when the range is no stage. */
uint32_t lp_inj_stage_push(struct lp_inj_thread *t, uint32_t name_sid, uint64_t id, uint64_t parent,
	uint64_t payload);
/* At the pop of a frame whose push returned `mark` (non-zero). */
void lp_inj_stage_pop(struct lp_inj_thread *t, uint32_t mark, uint64_t id);
/* Flush thread: writes the STAGE records whose GPU times are known (`final`: waits for the GPU). */
void lp_inj_stage_drain(int final);
/* End of the process: the last SAMPLING record (counts, the cost of switching). */
void lp_inj_sample_finish(void);
/* Fork child (atfork handler): forgets the parent's pending stages and switch state. */
void lp_inj_sample_forked(void);
/* 1 once the process samples (every=N, or auto decided so). */
int lp_inj_sample_on(void);

/* ---- stage_gpu.c (or cupti_none.c) ---- */

/* Records a timing event on the legacy default stream of the calling thread's CUDA context.
 * Returns LP_TRACE_STAGE_GPU_EVENTS with *ev set, or the reason there is none (*ev NULL). */
int lp_inj_gpu_mark(void **ev);
/* Trace-clock times of two marks and the time between them. Returns 0 when done, 1 when the GPU
 * has not reached `end` yet (wait = 0), -1 on failure. Flush thread only. */
int lp_inj_gpu_times(void *start, void *end, int wait, uint64_t *start_ns, uint64_t *end_ns,
	uint64_t *elapsed_ns);
/* Returns a mark's event to the pool. */
void lp_inj_gpu_release(void *ev);
/* Waits until the GPU reached mark `ev` (cuEventSynchronize); no-op for NULL. */
void lp_inj_gpu_wait(void *ev);
/* Records mark `ev` again, now (a pop that then paused the launching thread: sample.c); no-op for
 * NULL; the first recording stays when this one fails. */
void lp_inj_gpu_remark(void *ev);

/* ---- cupti.c (or cupti_none.c) ---- */

/* Starts the CUPTI half once; called from InitializeInjection. */
void lp_inj_cupti_start(void);
/* Flush thread only: converts completed CUPTI buffers into records. */
void lp_inj_cupti_drain(void);
/* cuptiActivityFlushAll (FORCED when `forced`: incomplete records too) when CUPTI is active;
 * never called from a CUPTI callback. */
void lp_inj_cupti_flush(int forced);
/* End of the process: detach from CUPTI (cuptiFinalize). Call after the last lp_inj_cupti_flush. */
void lp_inj_cupti_finalize(void);
/* Fork child (inside the atfork handler, writer locks held): leave CUPTI alone from now on.
 * Returns 1 when the parent had CUPTI active. */
int lp_inj_cupti_forked(void);
/* 1 when CUPTI records activity (started, not finalized). */
int lp_inj_cupti_active(void);
/* LLMPROF_TRACE_CUPTI_DELAY=N (a diagnostic): CUPTI starts before the N-th generation (sample.c),
 * not at cuInit (N = 1: at the first stage range's push); LP_INJ_CUPTI_DELAY_WARMUP for `warmup`
 * (at the pop of the program's `warmup` range, or at the first stage range outside one); 0 when
 * unset. */
#define LP_INJ_CUPTI_DELAY_WARMUP 0xffffffffu
uint32_t lp_inj_cupti_delay(void);
/* Sampling: kernel, copy and set activity and the launch callbacks on (1) or off (0), timed.
 * Callbacks of launch APIs not seen yet stay subscribed and return at once while off. */
void lp_inj_cupti_record(int on);
/* 1 once a CUDA graph launch was seen while recording (sample.c: per-unit switching then records
 * every unit, since CUPTI's graph kernel records come out wrong after the kinds go off and on). */
int lp_inj_cupti_graphs(void);
/* What lp_inj_cupti_record cost: switches, ns in all, ns at most. */
void lp_inj_cupti_record_cost(uint64_t *n, uint64_t *total_ns, uint64_t *max_ns);
/* Bursts (sample.c): CUPTI's kinds off, a forced flush and cuptiFinalize (the caller waited for
 * the GPU's recorded work); no-op when detached already. */
void lp_inj_cupti_detach(void);
/* Attached again with the kinds on (recording); what an attach ahead did not do yet, now. */
void lp_inj_cupti_attach(void);
/* Asks the flush thread to attach (subscription and callbacks; the kinds still off, or with
 * `record` on too) ahead of a burst or a stage; returns at once. */
void lp_inj_cupti_attach_ahead(int record);
/* An attach asked ahead and not finished: done on the calling thread if the flush thread has not
 * started it, else waited for; 1 when there was one (sample.c LLMPROF_TRACE_SETTLE_END). */
int lp_inj_cupti_settle(void);
/* The program's warm-up range (sample.c): on, CUPTI detached (2: subscribed again for the graph
 * node callbacks alone, trace.warmup=graphs) and every attach a no-op until off, which attaches
 * again with the kinds on. Serialized by the caller with the bursts' switch. */
void lp_inj_cupti_hold(int on);
/* Flush thread: an attach asked for ahead. */
void lp_inj_cupti_service(void);
/* 1 when CUPTI is attached and recording. */
int lp_inj_cupti_attached(void);
/* Whether a stage's push can record without attaching CUPTI itself (sample.c's stage instances):
 * 2 attached (recording or its kinds off; an attach in progress is waited for), 1 an attach asked
 * ahead that the flush thread has not started, 0 detached (or held, or never started). */
int lp_inj_cupti_ready(void);
/* Detaches, ns in all, ns at most; attaches, ns in all, ns at most. */
void lp_inj_cupti_cycle_cost(uint64_t out[6]);

#endif
