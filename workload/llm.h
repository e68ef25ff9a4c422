/* llm.h: the reference LLM workload (`llmprof-llm`) as a library: model shapes, weights from a
 * seed, and an inference engine on the CPU (portable C, fp32) or on the GPU (CUDA C, bf16).
 *
 * Data flow: a model name or file -> struct lp_llm_config (config.c: llmprof model YAML or a
 * Hugging Face config.json) -> an engine (cpu_model.c or cuda_model.cu) that owns weights, KV
 * cache and buffers -> iterations (prefill, then one decode step per new token), each timed by the
 * engine itself and wrapped in NVTX ranges of the `LLM` domain (docs/nvtx.md has the contract).
 *
 * Ownership: the engine owns everything it allocates; lp_llm_engine_free releases it.
 * Thread-safety: an engine is used by one thread (NVTX push/pop ranges are per thread).
 *
 *   struct lp_llm_config cfg; struct lp_llm_engine *e;
 *   if (lp_llm_config_load("tiny", conf_dir, &cfg, err) < 0) return -1;
 *   struct lp_llm_run_opts o = LP_LLM_RUN_OPTS_INIT;
 *   if (lp_llm_engine_create(&cfg, &o, &e, err) < 0) return -1;
 *   struct lp_llm_iter it; lp_llm_engine_iterate(e, &it, err); ... lp_llm_engine_free(e);
 */
#ifndef LP_WORKLOAD_LLM_H
#define LP_WORKLOAD_LLM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "config/llm_model.h"
#include "core/err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- the engine --- */
enum lp_llm_device { LP_LLM_CPU = 0, LP_LLM_CUDA = 1 };

/* Decode projections: cuBLAS; the own GEMV kernel; or the fused decode kernels (own GEMVs with
 * RMSNorm, RoPE + KV append, SwiGLU, the residual add and greedy sampling fused in, and a
 * split-context attention kernel that merges its splits itself; docs/workload.md). */
enum lp_llm_gemv { LP_LLM_GEMV_CUBLAS = 0, LP_LLM_GEMV_OWN = 1, LP_LLM_GEMV_FUSED = 2 };
const char *lp_llm_gemv_name(enum lp_llm_gemv g);

struct lp_llm_run_opts {
	enum lp_llm_device device;
	int batch;
	int prompt_len;
	int new_tokens;   /* decode steps; the prefill samples the first step's input token */
	uint64_t seed;
	int nvtx_ops;     /* op ranges inside the stage ranges */
	int cuda_graph;   /* capture the decode step in a CUDA graph (CUDA only) */
	enum lp_llm_gemv gemv; /* how decode (<= 4 tokens per step) runs its projections (CUDA only) */
	int pdl;          /* fused decode: programmatic dependent launch between its kernels */
};

#define LP_LLM_RUN_OPTS_INIT { LP_LLM_CPU, 1, 64, 32, 1234, 1, 1, LP_LLM_GEMV_FUSED, 1 }

/* One measured iteration. tokens[] holds sequence 0's generated tokens: the prefill's sample,
 * then one per decode step (new_tokens + 1 values); the array is owned by the engine and valid
 * until the next iteration. */
struct lp_llm_iter {
	double prefill_ms;
	double decode_ms;
	const int32_t *tokens;
	int n_tokens;
};

struct lp_llm_engine;

int lp_llm_engine_create(const struct lp_llm_config *cfg, const struct lp_llm_run_opts *opts,
	struct lp_llm_engine **out, struct lp_err *err);
/* Prefill + decode loop, inside the `prefill` and `decode_all` ranges. */
int lp_llm_engine_iterate(struct lp_llm_engine *e, struct lp_llm_iter *it, struct lp_err *err);
/* Logits [batch][vocab] (fp32) of the last forward pass; valid until the next call. */
int lp_llm_engine_logits(struct lp_llm_engine *e, const float **logits, struct lp_err *err);
/* Runs only the prefill (no ranges, no timing) and leaves its logits readable: for tests. */
int lp_llm_engine_prefill_only(struct lp_llm_engine *e, struct lp_err *err);
/* Replaces the seed's prompt by tokens[batch][prompt_len] (each < vocab_size): for tests. */
int lp_llm_engine_set_prompt(struct lp_llm_engine *e, const int32_t *tokens, struct lp_err *err);
/* A one-line description of where it runs ("cpu, 8 OpenMP threads", "NVIDIA H100 80GB HBM3"). */
const char *lp_llm_engine_device_name(const struct lp_llm_engine *e);
/* Kernel nodes in the captured decode graph (0 without a graph): what ncu should see per step. */
int lp_llm_engine_graph_kernels(const struct lp_llm_engine *e);
void lp_llm_engine_free(struct lp_llm_engine *e);

/* The prompt: token t of sequence b, a pure function of the seed. */
int32_t lp_llm_prompt_token(uint64_t seed, int vocab_size, int b, int t);

/* 1 when this build has the CUDA path. */
int lp_llm_have_cuda(void);

#ifdef __cplusplus
}
#endif

#endif
