/* nvtx.c: the NVTX half of the injected tracer. NVTX v3 (header-only, compiled into the host)
 * loads NVTX_INJECTION64_PATH at the first NVTX call and calls InitializeInjectionNvtx2, which
 * fills that NVTX instance's core and core2 (domain) callback tables with the functions below.
 * Every NVTX instance in the process (the program's, PyTorch's, a library's) calls it once.
 *
 * Push/pop ranges keep a per-thread stack of range instance ids (in the thread's struct
 * lp_inj_thread); the CUPTI half asks for the innermost one at each launch
 * (lp_inj_current_range), which is how kernels get attributed to the exact stack they were
 * launched from. Needs no CUDA at all. Hot path (push/pop): no lock, no allocation, one clock
 * read; messages are interned through the thread's string cache.
 */

#include "inject.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>


/* ---- messages and attributes ---- */

/* wchar_t (UTF-32 on Linux) to UTF-8, truncated at a character boundary; returns the length. */
static size_t wide_to_utf8(const wchar_t *w, char *out, size_t cap)
{
	size_t n = 0;
	for (; *w; w++) {
		uint32_t c = (uint32_t)*w;
		unsigned char b[4];
		size_t k;
		if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
			c = 0xFFFD;
		if (c < 0x80) {
			b[0] = (unsigned char)c;
			k = 1;
		} else if (c < 0x800) {
			b[0] = (unsigned char)(0xC0 | (c >> 6));
			b[1] = (unsigned char)(0x80 | (c & 0x3F));
			k = 2;
		} else if (c < 0x10000) {
			b[0] = (unsigned char)(0xE0 | (c >> 12));
			b[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
			b[2] = (unsigned char)(0x80 | (c & 0x3F));
			k = 3;
		} else {
			b[0] = (unsigned char)(0xF0 | (c >> 18));
			b[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
			b[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
			b[3] = (unsigned char)(0x80 | (c & 0x3F));
			k = 4;
		}
		if (n + k > cap)
			break;
		memcpy(out + n, b, k);
		n += k;
	}
	return n;
}

static uint32_t intern_wide(const wchar_t *w)
{
	char out[LP_TRACE_MAX_STRING_BYTES];
	return w ? lp_inj_intern_cached(out, wide_to_utf8(w, out, sizeof(out))) : 0;
}

static uint32_t intern_ascii(const char *s)
{
	return s ? lp_inj_intern_cached(s, strnlen(s, LP_TRACE_MAX_STRING_BYTES)) : 0;
}

static void from_attributes(const nvtxEventAttributes_t *a, struct lp_trace_nvtx *r)
{
	if (!a || a->version < 1 || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof(a->message))
		return;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		r->name_sid = intern_ascii(a->message.ascii);
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		r->name_sid = intern_wide(a->message.unicode);
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		/* our registered-string handles are string ids */
		r->name_sid = (uint32_t)(uintptr_t)a->message.registered;
		break;
	default:
		break;
	}
	switch (a->payloadType) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
		r->payload = a->payload.ullValue;
		break;
	case NVTX_PAYLOAD_TYPE_INT64:
		memcpy(&r->payload, &a->payload.llValue, 8);
		break;
	case NVTX_PAYLOAD_TYPE_DOUBLE:
		memcpy(&r->payload, &a->payload.dValue, 8);
		break;
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
		r->payload = a->payload.uiValue;
		break;
	case NVTX_PAYLOAD_TYPE_INT32: {
		int64_t v = a->payload.iValue;
		memcpy(&r->payload, &v, 8);
		break;
	}
	case NVTX_PAYLOAD_TYPE_FLOAT: {
		double v = a->payload.fValue;
		memcpy(&r->payload, &v, 8);
		break;
	}
	default:
		r->payload_type = 0;
		goto no_payload;
	}
	r->payload_type = (uint8_t)a->payloadType;
no_payload:
	r->category = a->category;
	if (a->colorType == NVTX_COLOR_ARGB)
		r->color = a->color;
}

static void emit(struct lp_trace_nvtx *r)
{
	r->ts_ns = lp_inj_now_ns();
	lp_inj_append(LP_TREC_NVTX, r, sizeof(*r), NULL, 0);
}

static void base_record(struct lp_trace_nvtx *r, uint8_t event, uint32_t domain)
{
	memset(r, 0, sizeof(*r));
	r->event = event;
	r->tid = lp_inj_tid();
	r->domain_id = domain;
}

/* ---- push/pop ---- */

/* An integer payload >= 0 of a pushed range (NVTX's 32- and 64-bit integer types), else 0. */
static uint64_t payload_count(const struct lp_trace_nvtx *r)
{
	int64_t v;
	switch (r->payload_type) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
		return r->payload;
	case NVTX_PAYLOAD_TYPE_INT64:
	case NVTX_PAYLOAD_TYPE_INT32:
		memcpy(&v, &r->payload, 8);
		return v > 0 ? (uint64_t)v : 0;
	default:
		return 0;
	}
}

static int push(uint32_t domain, struct lp_trace_nvtx *r)
{
	struct lp_inj_thread *t = lp_inj_self();
	int level;
	uint64_t parent;
	if (!t)
		return -1; /* no thread state (out of memory) */
	level = (int)(t->depth + t->overflow);
	parent = lp_inj_current_range(t);
	if (t->depth >= LP_TRACE_MAX_DEPTH) {
		t->overflow++;
		return level;
	}
	r->id = lp_inj_next_id();
	t->stack[t->depth].id = r->id;
	t->stack[t->depth].domain = domain;
	t->stack[t->depth].stage = 0;
	t->depth++;
	emit(r);
	/* after the record: a stage's GPU mark and CUPTI switch are not inside its push time */
	t->stack[t->depth - 1].stage = lp_inj_stage_push(t, r->name_sid, r->id, parent, payload_count(r));
	return level;
}

static int pop(uint32_t domain)
{
	struct lp_inj_thread *t = lp_inj_self();
	struct lp_trace_nvtx r;
	uint32_t i, stage;
	if (!t)
		return -1;
	if (t->overflow) {
		t->overflow--;
		return (int)(t->depth + t->overflow);
	}
	/* the innermost open range of this domain (ranges of several domains may interleave) */
	for (i = t->depth; i > 0; i--)
		if (t->stack[i - 1].domain == domain)
			break;
	if (i == 0)
		return -1;
	base_record(&r, LP_TRACE_NVTX_POP, domain);
	r.id = t->stack[i - 1].id;
	stage = t->stack[i - 1].stage;
	memmove(&t->stack[i - 1], &t->stack[i], (t->depth - i) * sizeof(t->stack[0]));
	t->depth--;
	if (stage)
		lp_inj_stage_pop(t, stage, r.id);
	emit(&r);
	return (int)t->depth;
}

static int NVTX_API cb_push_ex(const nvtxEventAttributes_t *a)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_PUSH, 0);
	from_attributes(a, &r);
	return push(0, &r);
}

static int NVTX_API cb_push_a(const char *msg)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_PUSH, 0);
	r.name_sid = intern_ascii(msg);
	return push(0, &r);
}

static int NVTX_API cb_push_w(const wchar_t *msg)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_PUSH, 0);
	r.name_sid = intern_wide(msg);
	return push(0, &r);
}

static int NVTX_API cb_pop(void)
{
	return pop(0);
}

static int NVTX_API cb_domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct lp_trace_nvtx r;
	uint32_t dom = (uint32_t)(uintptr_t)d;
	base_record(&r, LP_TRACE_NVTX_PUSH, dom);
	from_attributes(a, &r);
	return push(dom, &r);
}

static int NVTX_API cb_domain_pop(nvtxDomainHandle_t d)
{
	return pop((uint32_t)(uintptr_t)d);
}

/* ---- start/end and marks ---- */

static nvtxRangeId_t start(struct lp_trace_nvtx *r)
{
	r->id = lp_inj_next_id();
	emit(r);
	return r->id;
}

static nvtxRangeId_t NVTX_API cb_start_ex(const nvtxEventAttributes_t *a)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_START, 0);
	from_attributes(a, &r);
	return start(&r);
}

static nvtxRangeId_t NVTX_API cb_start_a(const char *msg)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_START, 0);
	r.name_sid = intern_ascii(msg);
	return start(&r);
}

static nvtxRangeId_t NVTX_API cb_start_w(const wchar_t *msg)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_START, 0);
	r.name_sid = intern_wide(msg);
	return start(&r);
}

static nvtxRangeId_t NVTX_API cb_domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_START, (uint32_t)(uintptr_t)d);
	from_attributes(a, &r);
	return start(&r);
}

static void end_range(uint32_t domain, nvtxRangeId_t id)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_END, domain);
	r.id = id;
	emit(&r);
}

static void NVTX_API cb_end(nvtxRangeId_t id)
{
	end_range(0, id);
}

static void NVTX_API cb_domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	end_range((uint32_t)(uintptr_t)d, id);
}

static void NVTX_API cb_mark_ex(const nvtxEventAttributes_t *a)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_MARK, 0);
	from_attributes(a, &r);
	emit(&r);
}

static void NVTX_API cb_mark_a(const char *msg)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_MARK, 0);
	r.name_sid = intern_ascii(msg);
	emit(&r);
}

static void NVTX_API cb_mark_w(const wchar_t *msg)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_MARK, 0);
	r.name_sid = intern_wide(msg);
	emit(&r);
}

static void NVTX_API cb_domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	struct lp_trace_nvtx r;
	base_record(&r, LP_TRACE_NVTX_MARK, (uint32_t)(uintptr_t)d);
	from_attributes(a, &r);
	emit(&r);
}

/* ---- domains, registered strings, thread names ---- */

static nvtxDomainHandle_t NVTX_API cb_domain_create_a(const char *name)
{
	uint32_t id = name ? lp_inj_domain(name, strnlen(name, LP_TRACE_MAX_STRING_BYTES)) : 0;
	return (nvtxDomainHandle_t)(uintptr_t)id;
}

static nvtxDomainHandle_t NVTX_API cb_domain_create_w(const wchar_t *name)
{
	char buf[LP_TRACE_MAX_STRING_BYTES];
	uint32_t id = name ? lp_inj_domain(buf, wide_to_utf8(name, buf, sizeof(buf))) : 0;
	return (nvtxDomainHandle_t)(uintptr_t)id;
}

static void NVTX_API cb_domain_destroy(nvtxDomainHandle_t d)
{
	(void)d; /* ids stay valid: records already written refer to them */
}

static nvtxStringHandle_t NVTX_API cb_register_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return (nvtxStringHandle_t)(uintptr_t)intern_ascii(s);
}

static nvtxStringHandle_t NVTX_API cb_register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	(void)d;
	return (nvtxStringHandle_t)(uintptr_t)intern_wide(s);
}

static void name_thread(uint32_t tid, uint32_t sid)
{
	struct lp_trace_thread_name t = { tid, sid };
	if (sid)
		lp_inj_append(LP_TREC_THREAD_NAME, &t, sizeof(t), NULL, 0);
}

static void NVTX_API cb_name_thread_a(uint32_t tid, const char *name)
{
	name_thread(tid, intern_ascii(name));
}

static void NVTX_API cb_name_thread_w(uint32_t tid, const wchar_t *name)
{
	name_thread(tid, intern_wide(name));
}

static void NVTX_API cb_initialize(const void *reserved)
{
	(void)reserved;
}

/* ---- the entry point ---- */

static void set_slot(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn)
{
	if (table && id < size && table[id])
		*table[id] = fn;
}

#define FP(f) ((NvtxFunctionPointer)(uintptr_t)(f))

LP_INJ_EXPORT int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);

int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	const NvtxExportTableCallbacks *cbs;
	const NvtxExportTableVersionInfo *vi;
	NvtxFunctionTable core = NULL, core2 = NULL;
	unsigned core_n = 0, core2_n = 0;

	if (!get_export_table || !lp_inj_init())
		return 0; /* NVTX turns itself into no-ops: the cheapest way to be off */
	cbs = (const NvtxExportTableCallbacks *)get_export_table(NVTX_ETID_CALLBACKS);
	if (!cbs || cbs->struct_size < sizeof(*cbs) || !cbs->GetModuleFunctionTable)
		return 0;
	if (!cbs->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_n) || !core)
		return 0;
	if (!cbs->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_n))
		core2 = NULL;

	set_slot(core, core_n, NVTX_CBID_CORE_MarkEx, FP(cb_mark_ex));
	set_slot(core, core_n, NVTX_CBID_CORE_MarkA, FP(cb_mark_a));
	set_slot(core, core_n, NVTX_CBID_CORE_MarkW, FP(cb_mark_w));
	set_slot(core, core_n, NVTX_CBID_CORE_RangeStartEx, FP(cb_start_ex));
	set_slot(core, core_n, NVTX_CBID_CORE_RangeStartA, FP(cb_start_a));
	set_slot(core, core_n, NVTX_CBID_CORE_RangeStartW, FP(cb_start_w));
	set_slot(core, core_n, NVTX_CBID_CORE_RangeEnd, FP(cb_end));
	set_slot(core, core_n, NVTX_CBID_CORE_RangePushEx, FP(cb_push_ex));
	set_slot(core, core_n, NVTX_CBID_CORE_RangePushA, FP(cb_push_a));
	set_slot(core, core_n, NVTX_CBID_CORE_RangePushW, FP(cb_push_w));
	set_slot(core, core_n, NVTX_CBID_CORE_RangePop, FP(cb_pop));
	set_slot(core, core_n, NVTX_CBID_CORE_NameOsThreadA, FP(cb_name_thread_a));
	set_slot(core, core_n, NVTX_CBID_CORE_NameOsThreadW, FP(cb_name_thread_w));

	set_slot(core2, core2_n, NVTX_CBID_CORE2_DomainMarkEx, FP(cb_domain_mark_ex));
	set_slot(core2, core2_n, NVTX_CBID_CORE2_DomainRangeStartEx, FP(cb_domain_start_ex));
	set_slot(core2, core2_n, NVTX_CBID_CORE2_DomainRangeEnd, FP(cb_domain_end));
	set_slot(core2, core2_n, NVTX_CBID_CORE2_DomainRangePushEx, FP(cb_domain_push_ex));
	set_slot(core2, core2_n, NVTX_CBID_CORE2_DomainRangePop, FP(cb_domain_pop));
	set_slot(core2, core2_n, NVTX_CBID_CORE2_DomainRegisterStringA, FP(cb_register_a));
	set_slot(core2, core2_n, NVTX_CBID_CORE2_DomainRegisterStringW, FP(cb_register_w));
	set_slot(core2, core2_n, NVTX_CBID_CORE2_DomainCreateA, FP(cb_domain_create_a));
	set_slot(core2, core2_n, NVTX_CBID_CORE2_DomainCreateW, FP(cb_domain_create_w));
	set_slot(core2, core2_n, NVTX_CBID_CORE2_DomainDestroy, FP(cb_domain_destroy));
	set_slot(core2, core2_n, NVTX_CBID_CORE2_Initialize, FP(cb_initialize));

	vi = (const NvtxExportTableVersionInfo *)get_export_table(NVTX_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(NVTX_VERSION);
	lp_inj_log("nvtx attached (core %u, core2 %u callbacks)", core_n, core2_n);
	{
		/* diagnostic (bench/tracer/README.md run 22): CUPTI started from here, for a process run
		 * without CUDA_INJECTION64_PATH */
		const char *v = getenv("LLMPROF_TRACE_CUPTI_FROM_NVTX");
		if (v && !strcmp(v, "1"))
			lp_inj_cupti_start();
	}
	return 1;
}
