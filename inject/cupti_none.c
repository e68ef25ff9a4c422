/* cupti_none.c: stands in for cupti.c when the library is built without CUPTI (no CUDA toolkit
 * found): NVTX ranges are still recorded; a CUDA program that loads this file through
 * CUDA_INJECTION64_PATH gets a trace saying CUPTI was not built in. Stands in for stage_gpu.c too
 * (no stage GPU times without CUDA headers). */
#include "inject.h"

#include <string.h>

LP_INJ_EXPORT int InitializeInjection(void);

int InitializeInjection(void)
{
	lp_inj_cupti_start();
	return 1;
}

void lp_inj_cupti_start(void)
{
	if (lp_inj_init())
		lp_inj_set_cupti_status(LP_TRACE_CUPTI_NOT_BUILT, "this libllmprof_inject.so was built without CUPTI");
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
	return 0;
}

void lp_inj_cupti_record(int on)
{
	(void)on;
}

int lp_inj_cupti_graphs(void)
{
	return 0;
}

void lp_inj_cupti_record_cost(uint64_t *n, uint64_t *total_ns, uint64_t *max_ns)
{
	*n = *total_ns = *max_ns = 0;
}

int lp_inj_gpu_mark(void **ev)
{
	*ev = NULL;
	return LP_TRACE_STAGE_GPU_NONE;
}

int lp_inj_gpu_times(void *start, void *end, int wait, uint64_t *start_ns, uint64_t *end_ns,
	uint64_t *elapsed_ns)
{
	(void)start;
	(void)end;
	(void)wait;
	*start_ns = *end_ns = *elapsed_ns = 0;
	return -1;
}

void lp_inj_gpu_release(void *ev)
{
	(void)ev;
}

void lp_inj_gpu_wait(void *ev)
{
	(void)ev;
}

void lp_inj_gpu_remark(void *ev)
{
	(void)ev;
}

void lp_inj_cupti_detach(void)
{
}

void lp_inj_cupti_attach(void)
{
}

void lp_inj_cupti_attach_ahead(int record)
{
	(void)record;
}

void lp_inj_cupti_service(void)
{
}

int lp_inj_cupti_settle(void)
{
	return 0;
}

void lp_inj_cupti_hold(int on)
{
	(void)on;
}

int lp_inj_cupti_attached(void)
{
	return 0;
}

int lp_inj_cupti_ready(void)
{
	return 0;
}

void lp_inj_cupti_cycle_cost(uint64_t out[6])
{
	memset(out, 0, 6 * sizeof(out[0]));
}
