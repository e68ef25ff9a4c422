/* trace_format.h: the on-disk format of the built-in tracer (docs/trace-format.md), shared by the
 * writer (inject/, the library injected into traced processes) and the reader
 * (src/parse/trace_read.c). Declarations only: layouts, record types and limits.
 *
 * A file is a 16-byte preamble followed by records. Every record is an 8-byte header (type, flags,
 * payload size) followed by `size` payload bytes, so a reader skips types it does not know and
 * stops cleanly at a truncated tail. All integers are little-endian and every field has a fixed
 * size; the payload structs below are naturally aligned with explicit padding, so their in-memory
 * layout on a little-endian machine is the on-disk layout (checked by static asserts).
 * Compatibility: the major version changes when a layout changes; new record types and fields
 * appended at the end of a payload bump the minor version (readers read the prefix they know and
 * ignore trailing bytes; writers never shrink a payload).
 *
 * Strings are interned per file: a STRING record gives an id (> 0) its bytes; other records refer
 * to ids (0 = none). Push/pop ranges carry a per-process range instance id; a launch records the
 * innermost push/pop instance open on the launching thread, which identifies the whole range stack
 * (its ancestors are in the file). Thread-safety: not applicable (plain data).
 */
#ifndef LLMPROF_TRACE_FORMAT_H
#define LLMPROF_TRACE_FORMAT_H

#include <stdint.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the llmprof trace format is little-endian; this writer/reader assumes a little-endian host"
#endif

#define LP_TRACE_MAGIC "LLMPTRC\n"          /* 8 bytes, no NUL */
#define LP_TRACE_VERSION_MAJOR 1
#define LP_TRACE_VERSION_MINOR 5         /* 1.1: RANK, SAMPLING and STAGE records; 1.2: SAMPLING pick, seed;
                                          * 1.3: SAMPLING warmup; 1.4: STAGE flags; 1.5: SAMPLING flags */
#define LP_TRACE_FILE_SUFFIX ".lptrace"

/* Limits a reader enforces (a writer never exceeds them). */
#define LP_TRACE_MAX_RECORD_BYTES (1u << 20)  /* one record's payload */
#define LP_TRACE_MAX_STRING_BYTES 4096u       /* writers truncate longer NVTX messages */
#define LP_TRACE_MAX_STRINGS (1u << 24)       /* string ids per file */
#define LP_TRACE_MAX_DEPTH 256u               /* push/pop nesting recorded per thread */

struct lp_trace_preamble {
	char magic[8];                  /* LP_TRACE_MAGIC */
	uint16_t version_major;
	uint16_t version_minor;
	uint32_t flags;                 /* 0 */
};

struct lp_trace_rec_header {
	uint16_t type;                  /* enum lp_trace_rec_type */
	uint16_t flags;                 /* 0 */
	uint32_t size;                  /* payload bytes after this header */
};

enum lp_trace_rec_type {
	LP_TREC_PROCESS = 1,
	LP_TREC_STRING = 2,
	LP_TREC_CUPTI_STATUS = 3,
	LP_TREC_DOMAIN = 4,
	LP_TREC_THREAD_NAME = 5,
	LP_TREC_NVTX = 6,
	LP_TREC_LAUNCH = 7,
	LP_TREC_GRAPH_NODE = 8,
	LP_TREC_KERNEL = 9,
	LP_TREC_COPY = 10,
	LP_TREC_OVERHEAD = 11,
	LP_TREC_DROPPED = 12,
	LP_TREC_DEVICE = 13,
	LP_TREC_CLOCK_SYNC = 14,
	LP_TREC_END = 15,
	LP_TREC_RANK = 16,              /* since 1.1 */
	LP_TREC_SAMPLING = 17,          /* since 1.1 */
	LP_TREC_STAGE = 18,             /* since 1.1 */
};

/* Clocks a file's timestamps may be on (lp_trace_process.clock). */
enum lp_trace_clock {
	LP_TRACE_CLOCK_REALTIME = 1,    /* clock_gettime(CLOCK_REALTIME) in ns since the epoch */
};

struct lp_trace_process {           /* first record of a file */
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_ns;              /* trace clock at library start */
	uint32_t host_sid;
	uint32_t exe_sid;               /* /proc/self/exe */
	uint32_t cmdline_sid;           /* argv joined by spaces (truncated) */
	uint32_t clock;                 /* enum lp_trace_clock */
	uint32_t forked;                /* 1: this process is a fork child of parent_pid's traced process */
	uint32_t reserved;
};

struct lp_trace_string {            /* followed by `len` bytes, no NUL */
	uint32_t sid;
	uint32_t len;
};

enum lp_trace_cupti_code {
	LP_TRACE_CUPTI_NONE = 0,        /* no CUDA seen (CUDA_INJECTION64_PATH not used) */
	LP_TRACE_CUPTI_OK = 1,
	LP_TRACE_CUPTI_HELD = 2,        /* another subscriber holds the CUPTI slot */
	LP_TRACE_CUPTI_ERROR = 3,
	LP_TRACE_CUPTI_DISABLED = 4,    /* LLMPROF_TRACE_CUPTI=0 */
	LP_TRACE_CUPTI_NOT_BUILT = 5,   /* library built without CUPTI */
	LP_TRACE_CUPTI_FORK = 6,        /* fork child of a CUDA process: CUPTI left alone */
};

struct lp_trace_cupti_status {      /* the last one in a file wins */
	uint32_t code;                  /* enum lp_trace_cupti_code */
	uint32_t message_sid;           /* "held by 'nsys'", error text ... */
};

struct lp_trace_domain {
	uint32_t domain_id;             /* > 0; 0 is the default domain */
	uint32_t name_sid;
};

struct lp_trace_thread_name {
	uint32_t tid;
	uint32_t name_sid;
};

enum lp_trace_nvtx_event {
	LP_TRACE_NVTX_PUSH = 1,
	LP_TRACE_NVTX_POP = 2,
	LP_TRACE_NVTX_START = 3,
	LP_TRACE_NVTX_END = 4,
	LP_TRACE_NVTX_MARK = 5,
};

/* Payload types: NVTX's own codes (nvtxPayloadType_t). The value is widened into `payload`:
 * u32 zero-extended, i32 sign-extended (two's complement), float stored as a double. */
enum lp_trace_payload {
	LP_TRACE_PAYLOAD_NONE = 0,
	LP_TRACE_PAYLOAD_U64 = 1,
	LP_TRACE_PAYLOAD_I64 = 2,
	LP_TRACE_PAYLOAD_F64 = 3,
	LP_TRACE_PAYLOAD_U32 = 4,
	LP_TRACE_PAYLOAD_I32 = 5,
	LP_TRACE_PAYLOAD_F32 = 6,
};

struct lp_trace_nvtx {
	uint8_t event;                  /* enum lp_trace_nvtx_event */
	uint8_t payload_type;           /* enum lp_trace_payload */
	uint16_t reserved;
	uint32_t tid;
	uint32_t domain_id;
	uint32_t name_sid;              /* 0 for POP and END */
	uint64_t id;                    /* PUSH/POP: range instance; START/END: the range id; MARK: 0 */
	uint64_t ts_ns;
	uint64_t payload;               /* raw bits, see enum lp_trace_payload */
	uint32_t category;
	uint32_t color;                 /* ARGB, 0 none */
};

enum lp_trace_launch_kind {
	LP_TRACE_LAUNCH_KERNEL = 1,
	LP_TRACE_LAUNCH_GRAPH = 2,
	LP_TRACE_LAUNCH_MEMCPY = 3,
	LP_TRACE_LAUNCH_MEMSET = 4,
};

struct lp_trace_launch {            /* one per traced CUDA API call (runtime or driver) */
	uint32_t correlation_id;
	uint32_t tid;
	uint64_t range_id;              /* innermost push/pop instance open on tid; 0 none */
	uint64_t ts_ns;
	uint32_t cbid;                  /* CUPTI callback id in `api` */
	uint8_t api;                    /* 1 runtime, 2 driver */
	uint8_t kind;                   /* enum lp_trace_launch_kind */
	uint16_t reserved;
};

struct lp_trace_graph_node {        /* a CUDA graph node made (or cloned) under NVTX ranges */
	uint64_t node_id;
	uint64_t range_id;              /* CREATED: innermost range open at capture/creation; 0 none */
	uint64_t original_node_id;      /* CLONED: the node it copies (its range applies); else 0 */
	uint32_t graph_id;
	uint32_t tid;
};

struct lp_trace_kernel {
	uint64_t start_ns, end_ns;
	uint64_t graph_node_id;         /* 0: not from a graph */
	uint32_t name_sid;              /* as CUPTI reports it (mangled for C++) */
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t correlation_id;
	uint32_t graph_id;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t registers_per_thread;
	uint32_t static_shared_bytes;
	uint32_t dynamic_shared_bytes;
	uint32_t reserved;
};

enum lp_trace_copy_kind {           /* same codes as enum lp_copy_kind in src/profile/profile.h */
	LP_TRACE_COPY_UNKNOWN = 0,
	LP_TRACE_COPY_HTOD = 1,
	LP_TRACE_COPY_DTOH = 2,
	LP_TRACE_COPY_DTOD = 3,
	LP_TRACE_COPY_HTOH = 4,
	LP_TRACE_COPY_PTOP = 5,
	LP_TRACE_COPY_MEMSET = 6,
};

struct lp_trace_copy {              /* memcpy and memset */
	uint64_t start_ns, end_ns;
	uint64_t bytes;
	uint64_t graph_node_id;
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint32_t correlation_id;
	uint8_t kind;                   /* enum lp_trace_copy_kind */
	uint8_t cupti_kind;             /* CUpti_ActivityMemcpyKind (memcpy) or 0 */
	uint16_t reserved;
	uint32_t memset_value;
};

struct lp_trace_overhead {          /* CUPTI OVERHEAD records: the tracer's own cost */
	uint64_t start_ns, end_ns;
	uint32_t overhead_kind;         /* CUpti_ActivityOverheadKind */
	uint32_t object_kind;           /* CUpti_ActivityObjectKind */
	uint32_t object_id;             /* thread or device id */
	uint32_t reserved;
};

struct lp_trace_dropped {           /* cumulative totals; the last one in a file wins */
	uint64_t cupti_records;         /* cuptiActivityGetNumDroppedRecords, summed */
	uint64_t own_records;           /* records the tracer dropped (buffers full, write errors) */
};

struct lp_trace_device {
	uint32_t id;                    /* CUDA ordinal in the traced process */
	int32_t sm_count;
	int32_t cc_major, cc_minor;
	uint32_t sm_clock_khz;          /* maximum SM clock */
	uint32_t mem_clock_khz;
	uint32_t mem_bus_width_bits;
	uint32_t l2_bytes;
	uint64_t mem_bytes;
	uint32_t name_sid;
	uint32_t uuid_sid;              /* "GPU-xxxxxxxx-..." or 0 */
};

struct lp_trace_clock_sync {        /* written when CUPTI timestamps are not on the trace clock */
	uint64_t trace_ns;              /* trace clock ... */
	uint64_t cupti_ns;              /* ... and cuptiGetTimestamp() read back to back */
};

enum lp_trace_end_reason {
	LP_TRACE_END_EXIT = 1,          /* atexit / library destructor */
};

struct lp_trace_end {               /* last record of a cleanly finished file */
	uint64_t end_ns;
	uint32_t reason;
	uint32_t reserved;
};

/* Where this process stands in a multi-process job, from its launcher's variables (torchrun's
 * RANK / LOCAL_RANK / WORLD_SIZE, Open MPI's OMPI_COMM_WORLD_*, PMI_*, Slurm's SLURM_PROCID ...).
 * Written after PROCESS when a rank variable or CUDA_VISIBLE_DEVICES is set, and again when CUDA
 * starts in the process if the values changed by then (a program that sets RANK itself before
 * init_process_group): the last one wins. */
struct lp_trace_rank {
	int32_t rank;                   /* -1 unknown */
	int32_t local_rank;             /* -1 unknown */
	int32_t world_size;             /* -1 unknown */
	int32_t local_world_size;       /* -1 unknown */
	uint32_t source_sid;            /* the variable the rank came from ("RANK"); 0 none */
	uint32_t visible_devices_sid;   /* CUDA_VISIBLE_DEVICES; 0 unset */
};

/* Sampled tracing (docs/tracer.md "Sampled tracing"): kernel activity and launch attribution are
 * recorded only inside sampled instances of the sampling unit (a range name, `decode_step`), all
 * of them outside it. */
enum lp_trace_sample_mode {
	LP_TRACE_SAMPLE_EXACT = 1,      /* every launch recorded */
	LP_TRACE_SAMPLE_SAMPLED = 2,    /* the schedule below */
};

enum lp_trace_sample_why {
	LP_TRACE_SAMPLE_WHY_OFF = 1,        /* LLMPROF_TRACE_SAMPLE=off (trace.sample=off) */
	LP_TRACE_SAMPLE_WHY_FORCED = 2,     /* a schedule was given (every=N) */
	LP_TRACE_SAMPLE_WHY_AUTO_HIGH = 3,  /* auto: launch rate above the threshold */
	LP_TRACE_SAMPLE_WHY_AUTO_LOW = 4,   /* auto: launch rate at or below the threshold */
	LP_TRACE_SAMPLE_WHY_AUTO_NONE = 5,  /* auto: no sampling-unit range past the first ones */
	LP_TRACE_SAMPLE_WHY_AUTO_SHORT = 6, /* auto: above the threshold, generations foreseen to launch
	                                     * fewer than its gen= (2,000 launch calls): exact
	                                     * (bench/tracer/README.md runs 37, 38) */
};

struct lp_trace_sampling {          /* the mode and why; the last one in a file wins */
	uint32_t mode;                  /* enum lp_trace_sample_mode */
	uint32_t why;                   /* enum lp_trace_sample_why */
	uint32_t every;                 /* one unit instance in `every` is recorded ... */
	uint32_t first;                 /* ... after the first `first` under each parent range (all) */
	uint32_t unit_sid;              /* range name of the sampling unit */
	uint32_t auto_rate;             /* auto: threshold in kernel launches per second */
	uint64_t launch_rate;           /* auto: launches per second measured (0: not measured) */
	uint64_t toggles;               /* CUPTI switched off or on */
	uint64_t toggle_ns;             /* host time those switches took, in all ... */
	uint64_t toggle_max_ns;         /* ... and at most */
	uint64_t units;                 /* unit instances seen ... */
	uint64_t units_recorded;        /* ... and recorded */
	uint32_t pick;                  /* enum lp_trace_sample_pick (0 in records of older tracers) */
	uint32_t burst;                 /* > 0: `burst` consecutive units per block, CUPTI detached
	                                 * between bursts (docs/tracer.md "Bursts"); 0: one unit */
	uint64_t seed;                  /* LP_TRACE_SAMPLE_PICK_RANDOM: the seed of the positions */
	uint32_t warmup;                /* (1.3) enum lp_trace_warmup: CUPTI inside the program's warm-up
	                                 * range (0 in records of older tracers) */
	uint32_t flags;                 /* (1.5) LP_TRACE_SAMPLING_F_* (0 in records of older tracers) */
};

/* lp_trace_sampling.flags */
enum {
	/* CUDA graphs were launched while CUPTI's kinds were switched per unit (one unit per block,
	 * burst=0): their kernels' records come out with wrong end times once the kinds went off and
	 * on again (bench/tracer/README.md run 35), so every unit was recorded from the first graph
	 * launch on (the STAGE records say which) */
	LP_TRACE_SAMPLING_F_GRAPHS_ALL = 1u << 0,
};

/* Which unit of each block is recorded. Blocks: under each parent range, the units past the first
 * `first` are cut into blocks of `every` (block b = (index - first) / every, position p = (index -
 * first) % every). PICK_FIRST (older tracers): p == 0, a systematic sample. PICK_RANDOM: p ==
 * h(seed, parent ordinal, b) % every (below), one independent uniform position per
 * block (a stratified sample: unbiased under drift, docs/tracer.md "Sampled tracing"), where the
 * parent ordinal counts the times the unit's parent changed on the unit's thread (1 for the first
 * parent range, 0 while units have none) and the position is splitmix64's finalizer chained over
 * the three values: h = mix(seed); h = mix(h ^ ordinal); h = mix(h ^ b), with
 * mix(x) = x + 0x9e3779b97f4a7c15, then x ^= x >> 30, x *= 0xbf58476d1ce4e5b9, x ^= x >> 27,
 * x *= 0x94d049bb133111eb, x ^= x >> 31. A seed gives the same sample again (threads with the
 * same parent ordinals get the same positions). Bursts (lp_trace_sampling.burst = B > 0, B dividing
 * every): the block is cut into every / B clusters of B consecutive units and one cluster is
 * recorded, from position B x c: PICK_FIRST c = 0, PICK_RANDOM c = h % (every / B) with h as above
 * (B = 1 is the one-unit schedule). The STAGE records say which units were recorded;
 * the formula lets a reader replay the schedule (inject/sample.c and src/analyze/sampling.c). */
/* What the tracer did inside the program's warm-up range (`warmup`, docs/tracer.md "The warm-up"). */
enum lp_trace_warmup {
	LP_TRACE_WARMUP_NONE = 0,       /* no warm-up range seen (or an older tracer) */
	LP_TRACE_WARMUP_RECORDED = 1,   /* CUPTI stayed: its kernels are in the trace */
	LP_TRACE_WARMUP_DETACHED = 2,   /* CUPTI detached inside it: its kernels are not recorded */
};

enum lp_trace_sample_pick {
	LP_TRACE_SAMPLE_PICK_FIRST = 0,
	LP_TRACE_SAMPLE_PICK_RANDOM = 1,
};

enum lp_trace_stage_sample {
	LP_TRACE_STAGE_NOT_UNIT = 0,    /* not a sampling unit: recorded unless inside an unrecorded one */
	LP_TRACE_STAGE_RECORDED = 1,    /* a unit instance recorded */
	LP_TRACE_STAGE_SKIPPED = 2,     /* a unit instance not recorded (its kernels are missing) */
	LP_TRACE_STAGE_MEASURED = 3,    /* recorded while auto measured the launch rate, before it chose
	                                 * sampling: part of the exact stratum, like the first units */
};

enum lp_trace_stage_gpu {           /* where gpu_* come from */
	LP_TRACE_STAGE_GPU_NONE = 0,    /* not measured (no CUDA, LLMPROF_TRACE_STAGE_EVENTS=0) */
	LP_TRACE_STAGE_GPU_EVENTS = 1,  /* CUDA events on the legacy default stream at push and pop */
	LP_TRACE_STAGE_GPU_CAPTURE = 2, /* not measured: a stream capture was active */
	LP_TRACE_STAGE_GPU_NO_CONTEXT = 3, /* not measured: no CUDA context on the thread */
	LP_TRACE_STAGE_GPU_BUSY = 4,    /* not measured: too many instances waiting for the GPU */
	LP_TRACE_STAGE_GPU_ERROR = 5,   /* not measured: a CUDA call failed (the log says which) */
};

struct lp_trace_stage {             /* one per instance of a timed stage range (prefill, decode_all, decode_step ...) */
	uint64_t range_id;              /* its push/pop instance id */
	uint64_t gpu_start_ns;          /* trace clock when the GPU reached the push (0 unknown) */
	uint64_t gpu_end_ns;            /* ... and the pop */
	uint64_t gpu_elapsed_ns;        /* cuEventElapsedTime of the two (~0.5 us resolution), 0 unknown */
	uint32_t tid;
	uint32_t index;                 /* units: instance index under the same parent range, else 0 */
	uint8_t sample;                 /* enum lp_trace_stage_sample */
	uint8_t gpu;                    /* enum lp_trace_stage_gpu */
	uint16_t flags;                 /* (1.4) LP_TRACE_STAGE_F_* (0 in records of older tracers) */
	uint32_t name_sid;
};

/* lp_trace_stage.flags */
#define LP_TRACE_STAGE_F_PUSH_ATTACHED 1u /* the push attached CUPTI before its GPU mark: the mark is
                                           * late by that pause, which a program timing from before
                                           * its push has in its time (docs/tracer.md) */

/* The layouts above are the file layout: no implicit padding anywhere. */
_Static_assert(sizeof(struct lp_trace_preamble) == 16, "preamble layout");
_Static_assert(sizeof(struct lp_trace_rec_header) == 8, "record header layout");
_Static_assert(sizeof(struct lp_trace_process) == 40, "process layout");
_Static_assert(sizeof(struct lp_trace_string) == 8, "string layout");
_Static_assert(sizeof(struct lp_trace_cupti_status) == 8, "cupti status layout");
_Static_assert(sizeof(struct lp_trace_domain) == 8, "domain layout");
_Static_assert(sizeof(struct lp_trace_thread_name) == 8, "thread name layout");
_Static_assert(sizeof(struct lp_trace_nvtx) == 48, "nvtx layout");
_Static_assert(sizeof(struct lp_trace_launch) == 32, "launch layout");
_Static_assert(sizeof(struct lp_trace_graph_node) == 32, "graph node layout");
_Static_assert(sizeof(struct lp_trace_kernel) == 88, "kernel layout");
_Static_assert(sizeof(struct lp_trace_copy) == 56, "copy layout");
_Static_assert(sizeof(struct lp_trace_overhead) == 32, "overhead layout");
_Static_assert(sizeof(struct lp_trace_dropped) == 16, "dropped layout");
_Static_assert(sizeof(struct lp_trace_device) == 48, "device layout");
_Static_assert(sizeof(struct lp_trace_clock_sync) == 16, "clock sync layout");
_Static_assert(sizeof(struct lp_trace_end) == 16, "end layout");
_Static_assert(sizeof(struct lp_trace_rank) == 24, "rank layout");
_Static_assert(sizeof(struct lp_trace_sampling) == 96, "sampling layout");
_Static_assert(sizeof(struct lp_trace_stage) == 48, "stage layout");

#endif
