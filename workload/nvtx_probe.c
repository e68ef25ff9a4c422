/* nvtx_probe.c: a minimal NVTX injection library for tests (liblp_nvtx_probe.so). Loaded through
 * NVTX_INJECTION64_PATH, it writes one line per domain push/pop to $LP_NVTX_PROBE_OUT:
 *   push <domain> <name> [<payload>]      pop <domain>
 * so tests/e2e/workload_nvtx.sh can check the range structure the reference workload and the
 * Python helper emit, on any machine (NVTX needs no GPU). Not llmprof's tracer: no timing, no
 * CUDA, single-threaded use only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#define LP_PROBE_DOMAINS 16

struct lp_probe_domain {
	char name[64];
};

static struct lp_probe_domain lp_probe_domains[LP_PROBE_DOMAINS];
static int lp_probe_n_domains;
static FILE *lp_probe_out;

static const char *domain_name(nvtxDomainHandle_t d)
{
	struct lp_probe_domain *p = (struct lp_probe_domain *)(void *)d;
	return p ? p->name : "<default>";
}

static nvtxDomainHandle_t NVTX_API probe_domain_create(const char *name)
{
	int i;
	for (i = 0; i < lp_probe_n_domains; i++)
		if (!strcmp(lp_probe_domains[i].name, name))
			return (nvtxDomainHandle_t)(void *)&lp_probe_domains[i];
	if (lp_probe_n_domains == LP_PROBE_DOMAINS)
		return NULL;
	snprintf(lp_probe_domains[lp_probe_n_domains].name, sizeof(lp_probe_domains[0].name), "%s", name);
	return (nvtxDomainHandle_t)(void *)&lp_probe_domains[lp_probe_n_domains++];
}

static int NVTX_API probe_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	const char *msg = a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "?";
	if (!lp_probe_out)
		return 0;
	if (a && a->payloadType == NVTX_PAYLOAD_TYPE_UNSIGNED_INT64)
		fprintf(lp_probe_out, "push %s %s %llu\n", domain_name(d), msg,
			(unsigned long long)a->payload.ullValue);
	else
		fprintf(lp_probe_out, "push %s %s\n", domain_name(d), msg);
	return 0;
}

static int NVTX_API probe_pop(nvtxDomainHandle_t d)
{
	if (lp_probe_out)
		fprintf(lp_probe_out, "pop %s\n", domain_name(d));
	return 0;
}

static void probe_close(void)
{
	if (lp_probe_out)
		fclose(lp_probe_out);
	lp_probe_out = NULL;
}

int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);

int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
	const NvtxExportTableCallbacks *cb =
		(const NvtxExportTableCallbacks *)get_table(NVTX_ETID_CALLBACKS);
	NvtxFunctionTable table = NULL;
	unsigned int size = 0;
	const char *path = getenv("LP_NVTX_PROBE_OUT");
	if (!cb || !path || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size))
		return 0;
	if (size <= NVTX_CBID_CORE2_DomainCreateA)
		return 0;
	lp_probe_out = fopen(path, "w");
	if (!lp_probe_out)
		return 0;
	atexit(probe_close);
	*table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)probe_domain_create;
	*table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)probe_push;
	*table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)probe_pop;
	return 1;
}
