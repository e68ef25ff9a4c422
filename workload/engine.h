/* engine.h: the contract between the device-neutral engine front (engine.c) and its two
 * back ends, cpu_model.c and cuda_model.cu. Internal to the workload library.
 *
 * A back end owns its weights, KV cache and buffers. `iterate` runs one prefill and
 * opts->new_tokens decode steps inside the NVTX stage ranges, times them itself (monotonic clock
 * or CUDA events) and writes sequence 0's tokens (new_tokens + 1) into `tokens`.
 */
#ifndef LP_WORKLOAD_ENGINE_H
#define LP_WORKLOAD_ENGINE_H

#include "llm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct lp_llm_backend {
	int (*iterate)(void *impl, double *prefill_ms, double *decode_ms, int32_t *tokens,
		struct lp_err *err);
	int (*prefill_only)(void *impl, struct lp_err *err);
	int (*logits)(void *impl, const float **out, struct lp_err *err);
	int (*graph_kernels)(void *impl);
	/* tokens: [batch][prompt_len], replaces the seed's prompt */
	int (*set_prompt)(void *impl, const int32_t *tokens, struct lp_err *err);
	void (*free)(void *impl);
};

int lp_llm_cpu_engine_create(const struct lp_llm_config *cfg, const struct lp_llm_run_opts *opts,
	void **impl, const struct lp_llm_backend **be, char *device_name, size_t name_len,
	struct lp_err *err);
int lp_llm_cuda_engine_create(const struct lp_llm_config *cfg, const struct lp_llm_run_opts *opts,
	void **impl, const struct lp_llm_backend **be, char *device_name, size_t name_len,
	struct lp_err *err);

#ifdef __cplusplus
}
#endif

#endif
