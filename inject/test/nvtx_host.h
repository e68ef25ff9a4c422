/* nvtx_host.h: the NVTX side of a test program that drives the tracer's NVTX injection directly
 * (fixture_writer.c, tsan_writer.c): the export table NVTX would hand the tool, and the function
 * tables the tool fills in. Include once per program, after inject.h and nvToolsExt.h.
 *
 *   if (!nvtx_host_init()) return 3;           // the tool installed its handlers
 *   ((push_fn)(uintptr_t)core[NVTX_CBID_CORE_RangePushA])("x");
 */
#ifndef LP_INJECT_TEST_NVTX_HOST_H
#define LP_INJECT_TEST_NVTX_HOST_H

LP_INJ_EXPORT int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

static NvtxFunctionPointer core[NVTX_CBID_CORE_SIZE], core2[NVTX_CBID_CORE2_SIZE];
static NvtxFunctionPointer *core_t[NVTX_CBID_CORE_SIZE], *core2_t[NVTX_CBID_CORE2_SIZE];

static int NVTX_API get_table(NvtxCallbackModule m, NvtxFunctionTable *out, unsigned int *size)
{
	if (m == NVTX_CB_MODULE_CORE) {
		*out = core_t;
		*size = NVTX_CBID_CORE_SIZE;
		return 1;
	}
	if (m == NVTX_CB_MODULE_CORE2) {
		*out = core2_t;
		*size = NVTX_CBID_CORE2_SIZE;
		return 1;
	}
	return 0;
}

static const NvtxExportTableCallbacks callbacks = { sizeof(NvtxExportTableCallbacks), get_table };

static const void *NVTX_API export_table(uint32_t id)
{
	return id == NVTX_ETID_CALLBACKS ? &callbacks : NULL;
}

/* Points the tables at core/core2 and lets the tool fill them; its result (0: refused). */
static int nvtx_host_init(void)
{
	unsigned i;
	for (i = 0; i < NVTX_CBID_CORE_SIZE; i++)
		core_t[i] = &core[i];
	for (i = 0; i < NVTX_CBID_CORE2_SIZE; i++)
		core2_t[i] = &core2[i];
	return InitializeInjectionNvtx2(export_table);
}

#endif
