/* llmprof/nvtx.h: NVTX ranges in the `LLM` domain for your own C/C++ inference code, so that
 * llmprof (and Nsight Compute's `--nvtx-include "LLM@decode_all/"`) sees the same stage structure
 * as in its reference workload. docs/nvtx.md lists the range names llmprof understands.
 *
 *   #include <llmprof/nvtx.h>
 *   lp_nvtx_push_payload("prefill", (uint64_t)batch * prompt_len);
 *   ... launch the prefill kernels ...
 *   lp_nvtx_pop();
 *   lp_nvtx_push_payload("decode_all", n);   (payload optional: the decode steps planned)
 *   for (s = 0; s < n; s++) { lp_nvtx_push_payload("decode_step", s); ...; lp_nvtx_pop(); }
 *   lp_nvtx_pop();
 *
 * Ranges are push/pop ranges of the calling thread: push them around the kernel LAUNCHES (tools
 * attribute a kernel to the ranges open on the launching thread when it was launched).
 *
 * Header-only on purpose (like NVTX v3 itself): it needs only the NVTX v3 headers that ship with
 * the CUDA toolkit (<nvtx3/nvToolsExt.h>, no library to link but libdl). When they are not on the
 * include path, or LP_NVTX_DISABLE is defined, every call compiles to nothing. NVTX does nothing
 * until a tool (llmprof's tracer, nsys, ncu) sets NVTX_INJECTION64_PATH; it needs no GPU and no
 * libcuda, so CPU-only programs get their ranges recorded too.
 *
 * Thread-safety: the domain handle is created on first use; NVTX returns the same domain for the
 * same name, so a race between threads at that first use is harmless.
 */
#ifndef LLMPROF_NVTX_H
#define LLMPROF_NVTX_H

#include <stdint.h>

#if !defined(LP_NVTX_DISABLE) && defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#define LP_NVTX_ENABLED 1
#endif
#endif

#ifdef LP_NVTX_ENABLED
#include <nvtx3/nvToolsExt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The `LLM` domain, created once per program. The handle is a weak (COMDAT) definition, so every
 * translation unit that includes this header shares one handle: a domain created once per file
 * would give tools (ncu) separate stacks per handle and misnest ranges pushed from different files. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((weak)) nvtxDomainHandle_t lp_nvtx_llm_domain_handle;
#define LP_NVTX_DOMAIN_HANDLE lp_nvtx_llm_domain_handle
#else
static nvtxDomainHandle_t lp_nvtx_llm_domain_handle_tu;
#define LP_NVTX_DOMAIN_HANDLE lp_nvtx_llm_domain_handle_tu
#endif

static inline nvtxDomainHandle_t lp_nvtx_domain(void)
{
	if (!LP_NVTX_DOMAIN_HANDLE)
		LP_NVTX_DOMAIN_HANDLE = nvtxDomainCreateA("LLM");
	return LP_NVTX_DOMAIN_HANDLE;
}

static inline void lp_nvtx_push_(const char *name, int has_payload, uint64_t payload)
{
	nvtxEventAttributes_t a;
	unsigned char *p = (unsigned char *)&a;
	unsigned i;
	for (i = 0; i < sizeof(a); i++)
		p[i] = 0;
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	if (has_payload) {
		a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
		a.payload.ullValue = payload;
	}
	nvtxDomainRangePushEx(lp_nvtx_domain(), &a);
}

/* Opens range `name` in the LLM domain on this thread. */
static inline void lp_nvtx_push(const char *name)
{
	lp_nvtx_push_(name, 0, 0);
}

/* Same with a 64-bit unsigned payload (token count, step or layer index). */
static inline void lp_nvtx_push_payload(const char *name, uint64_t payload)
{
	lp_nvtx_push_(name, 1, payload);
}

/* Closes this thread's innermost LLM range. */
static inline void lp_nvtx_pop(void)
{
	nvtxDomainRangePop(lp_nvtx_domain());
}

#ifdef __cplusplus
}
#endif

#else /* no NVTX: nothing at all */

#define lp_nvtx_push(name) ((void)(name))
#define lp_nvtx_push_payload(name, payload) ((void)(name), (void)(payload))
#define lp_nvtx_pop() ((void)0)

#endif

/* 1 when this translation unit emits NVTX ranges. */
#ifdef LP_NVTX_ENABLED
#define LP_NVTX_AVAILABLE 1
#else
#define LP_NVTX_AVAILABLE 0
#endif

#endif
