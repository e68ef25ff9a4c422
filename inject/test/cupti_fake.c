/* cupti_fake.c: a stand-in for cupti.c and stage_gpu.c in test programs built from the tracer's
 * sources (fixture_writer.c): "CUPTI" is active, its switch only flips a flag the program asks
 * (lp_fake_recording: the program writes its synthetic kernel records only while it is on, as
 * CUPTI would), and GPU marks read a simulated GPU clock the program advances. A detach pauses
 * the launching thread (a real one: a flush and cuptiFinalize, 3-4 ms), which the GPU sees as idle
 * time before the next work: it advances the clock by DETACH_PAUSE_NS. An attach asked ahead stays
 * pending until an attach or lp_inj_cupti_settle, which waits SETTLE_PAUSE_NS for it (the rest of
 * CUPTI's 11-17 ms init on the flush thread). */
#include "inject.h"

#include <stdlib.h>

#define DETACH_PAUSE_NS 3000000ull
#define SETTLE_PAUSE_NS 5000000ull

static int recording = 1;
static uint64_t gpu_now = 1000000000ull, toggles;

static int graphs; /* lp_fake_graphs: the program "launched a CUDA graph" */

int lp_fake_recording(void);
void lp_fake_graphs(void);
void lp_fake_gpu_advance(uint64_t ns);
uint64_t lp_fake_gpu_now(void);

void lp_fake_graphs(void)
{
	graphs = 1;
}

int lp_inj_cupti_graphs(void)
{
	return graphs;
}

int lp_fake_recording(void)
{
	return recording;
}

void lp_fake_gpu_advance(uint64_t ns)
{
	gpu_now += ns;
}

uint64_t lp_fake_gpu_now(void)
{
	return gpu_now;
}

LP_INJ_EXPORT int InitializeInjection(void);

int InitializeInjection(void)
{
	lp_inj_cupti_start();
	return 1;
}

void lp_inj_cupti_start(void)
{
	if (lp_inj_init())
		lp_inj_set_cupti_status(LP_TRACE_CUPTI_OK, "fake CUPTI (test program)");
}

void lp_inj_cupti_drain(void)
{
}

void lp_inj_cupti_flush(int forced)
{
	(void)forced;
}

void lp_inj_cupti_finalize(void)
{
}

int lp_inj_cupti_forked(void)
{
	return 0;
}

uint32_t lp_inj_cupti_delay(void)
{
	return 0;
}

int lp_inj_cupti_active(void)
{
	return 1;
}

void lp_inj_cupti_record(int on)
{
	recording = on;
	toggles++;
}

void lp_inj_cupti_record_cost(uint64_t *n, uint64_t *total_ns, uint64_t *max_ns)
{
	*n = toggles;
	*total_ns = toggles * 1000;
	*max_ns = toggles ? 1000 : 0;
}

int lp_inj_gpu_mark(void **ev)
{
	uint64_t *t = malloc(sizeof(*t));
	*ev = t;
	if (!t)
		return LP_TRACE_STAGE_GPU_ERROR;
	*t = gpu_now;
	return LP_TRACE_STAGE_GPU_EVENTS;
}

int lp_inj_gpu_times(void *start, void *end, int wait, uint64_t *start_ns, uint64_t *end_ns,
	uint64_t *elapsed_ns)
{
	(void)wait;
	*start_ns = *(uint64_t *)start;
	*end_ns = *(uint64_t *)end;
	*elapsed_ns = *end_ns - *start_ns;
	return 0;
}

void lp_inj_gpu_release(void *ev)
{
	free(ev);
}

/* bursts: detached is "not recording", as CUPTI records nothing while detached */
static uint64_t detaches, attaches;

void lp_inj_gpu_wait(void *ev)
{
	(void)ev;
}

void lp_inj_gpu_remark(void *ev)
{
	if (ev)
		*(uint64_t *)ev = gpu_now;
}

void lp_inj_cupti_detach(void)
{
	if (recording) {
		detaches++;
		gpu_now += DETACH_PAUSE_NS;
	}
	recording = 0;
}

static int held; /* the warm-up (lp_inj_cupti_hold): attaches are no-ops */
static int ahead; /* an attach asked ahead, not done yet */

void lp_inj_cupti_attach(void)
{
	if (held)
		return;
	ahead = 0;
	if (!recording)
		attaches++;
	recording = 1;
}

void lp_inj_cupti_hold(int on)
{
	if (on) {
		held = 1;
		lp_inj_cupti_detach();
	} else if (held) {
		held = 0;
		lp_inj_cupti_attach();
	}
}

void lp_inj_cupti_attach_ahead(int record)
{
	(void)record;
	if (!recording && !held)
		ahead = 1;
}

void lp_inj_cupti_service(void)
{
}

int lp_inj_cupti_settle(void)
{
	if (!ahead)
		return 0;
	ahead = 0;
	gpu_now += SETTLE_PAUSE_NS;
	return 1;
}

int lp_inj_cupti_attached(void)
{
	return recording;
}

int lp_inj_cupti_ready(void)
{
	return held ? 0 : recording ? 2 : ahead;
}

void lp_inj_cupti_cycle_cost(uint64_t out[6])
{
	out[0] = detaches;
	out[1] = detaches * 1000;
	out[2] = detaches ? 1000 : 0;
	out[3] = attaches;
	out[4] = attaches * 1000;
	out[5] = attaches ? 1000 : 0;
}
