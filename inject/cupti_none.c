/* cupti_none.c: stands in for cupti.c when the library is built without CUPTI (no CUDA toolkit
 * found): NVTX ranges are still recorded; a CUDA program that loads this file through
 * CUDA_INJECTION64_PATH gets a trace saying CUPTI was not built in. */
#include "inject.h"

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
