/* main.c: `llmprof-llm`, the reference LLM inference program that llmprof profiles by default.
 * Parses the options, loads the model shape, builds the engine (CPU or CUDA), runs warm-up and
 * measured iterations and prints one JSON line per measured iteration, then a summary line.
 * Everything on stdout is JSON lines; messages go to stderr. docs/workload.md is its manual. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/buf.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/str.h"
#include "llm.h"
#include "llmprof/nvtx.h"

#define LP_LLM_FIRST_TOKENS_MAX 16

static const char lp_llm_usage[] =
	"llmprof-llm [--model NAME|PATH] [--device cpu|cuda] [--batch B] [--prompt-len P]\n"
	"                   [--new-tokens N] [--warmup W] [--iters K] [--seed S] [--nvtx-ops on|off]\n"
	"                   [--cuda-graph on|off] [--gemv fused|cublas|own] [--pdl on|off]";

static const char lp_llm_desc[] =
	"Runs a decoder-only transformer (weights generated from --seed) for K measured iterations\n"
	"of prefill + N decode steps after W warm-ups, and prints one JSON line per iteration and\n"
	"a summary line. NVTX ranges in domain LLM: prefill, decode_all > decode_step, op ranges\n"
	"inside with --nvtx-ops on; warm-ups inside a `warmup` range. See docs/workload.md.";

/* conf/: $LLMPROF_CONF_DIR, next to the binary (build/bin/../../conf), the source tree. */
static void find_conf_dir(struct lp_buf *out)
{
	const char *env = getenv("LLMPROF_CONF_DIR");
	const char *rel[] = { "/../../conf", "/../share/llmprof/conf", "/../conf" };
	struct lp_buf exe = LP_BUF_INIT, cand = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	size_t i;
	lp_buf_reset(out);
	if (env && *env) {
		lp_buf_adds(out, env);
		return;
	}
	if (lp_fs_exe_dir(&exe, &err) == 0)
		for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			lp_buf_reset(&cand);
			lp_buf_addf(&cand, "%s%s/model/llm", exe.data, rel[i]);
			if (lp_fs_is_dir(cand.data)) {
				lp_buf_addf(out, "%s%s", exe.data, rel[i]);
				lp_buf_release(&cand);
				lp_buf_release(&exe);
				return;
			}
		}
	lp_buf_release(&cand);
	lp_buf_release(&exe);
	lp_buf_addf(out, "%s/conf", LP_SOURCE_DIR);
}

static int parse_onoff(const char *opt, const char *v, int *out, struct lp_err *err)
{
	if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "true")) {
		*out = 1;
		return 0;
	}
	if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false")) {
		*out = 0;
		return 0;
	}
	return lp_err_set(err, LP_EUSAGE, "option '--%s' expects on or off, got '%s'", opt, v);
}

static int check_range(const char *opt, int v, int lo, int hi, struct lp_err *err)
{
	if (v < lo || v > hi)
		return lp_err_set(err, LP_EUSAGE, "option '--%s' must be in %d..%d, got %d", opt, lo, hi, v);
	return 0;
}

struct lp_llm_cli {
	const char *model, *device, *seed, *nvtx_ops, *cuda_graph, *gemv, *pdl;
	int batch, prompt_len, new_tokens, warmup, iters;
};

static int parse_args(int argc, const char **argv, struct lp_llm_cli *cli, struct lp_llm_run_opts *o,
	int *help, struct lp_err *err)
{
	const struct lp_opt opts[] = {
		LP_OPT_STRING(0, "model", &cli->model, "NAME|PATH", "conf/model/llm/NAME.yaml, a model YAML or a HF config.json (default tiny)"),
		LP_OPT_STRING(0, "device", &cli->device, "cpu|cuda", "where to run (default cpu)"),
		LP_OPT_INT(0, "batch", &cli->batch, "B", "sequences per batch (default 1)"),
		LP_OPT_INT(0, "prompt-len", &cli->prompt_len, "P", "prompt tokens per sequence (default 64)"),
		LP_OPT_INT(0, "new-tokens", &cli->new_tokens, "N", "decode steps per iteration (default 32)"),
		LP_OPT_INT(0, "warmup", &cli->warmup, "W", "warm-up iterations, not reported (default 1)"),
		LP_OPT_INT(0, "iters", &cli->iters, "K", "measured iterations (default 3)"),
		LP_OPT_STRING(0, "seed", &cli->seed, "S", "seed of weights and prompt (default 1234)"),
		LP_OPT_STRING(0, "nvtx-ops", &cli->nvtx_ops, "on|off", "op ranges inside the stage ranges (default on)"),
		LP_OPT_STRING(0, "cuda-graph", &cli->cuda_graph, "on|off", "replay the decode step as a CUDA graph (default on)"),
		LP_OPT_STRING(0, "gemv", &cli->gemv, "fused|cublas|own", "decode through the fused kernels (default), cuBLAS or the own GEMV kernel"),
		LP_OPT_STRING(0, "pdl", &cli->pdl, "on|off", "programmatic dependent launch between the fused decode kernels (default on)"),
		LP_OPT_END,
	};
	struct lp_args args;
	uint64_t seed = 0;
	if (lp_opt_parse(argc, argv, opts, &args, err) < 0)
		return -1;
	*help = args.help;
	if (args.help) {
		lp_opt_usage(stdout, lp_llm_usage, lp_llm_desc, opts);
		lp_args_release(&args);
		return 0;
	}
	if (args.n_rest > 0 || args.tail) {
		lp_err_set(err, LP_EUSAGE, "unexpected argument '%s'", args.n_rest ? args.rest[0] : "--");
		lp_args_release(&args);
		return -1;
	}
	lp_args_release(&args);
	if (!strcmp(cli->device, "cpu"))
		o->device = LP_LLM_CPU;
	else if (!strcmp(cli->device, "cuda") || !strcmp(cli->device, "gpu"))
		o->device = LP_LLM_CUDA;
	else
		return lp_err_set(err, LP_EUSAGE, "option '--device' expects cpu or cuda, got '%s'", cli->device);
	if (!strcmp(cli->gemv, "fused"))
		o->gemv = LP_LLM_GEMV_FUSED;
	else if (!strcmp(cli->gemv, "cublas"))
		o->gemv = LP_LLM_GEMV_CUBLAS;
	else if (!strcmp(cli->gemv, "own"))
		o->gemv = LP_LLM_GEMV_OWN;
	else
		return lp_err_set(err, LP_EUSAGE, "option '--gemv' expects fused, cublas or own, got '%s'", cli->gemv);
	if (lp_str_to_u64(cli->seed, &seed) < 0)
		return lp_err_set(err, LP_EUSAGE, "option '--seed' expects a non-negative integer, got '%s'", cli->seed);
	if (check_range("batch", cli->batch, 1, 4096, err) < 0 ||
	    check_range("prompt-len", cli->prompt_len, 1, 1 << 20, err) < 0 ||
	    check_range("new-tokens", cli->new_tokens, 0, 1 << 20, err) < 0 ||
	    check_range("warmup", cli->warmup, 0, 1000, err) < 0 ||
	    check_range("iters", cli->iters, 1, 100000, err) < 0 ||
	    parse_onoff("nvtx-ops", cli->nvtx_ops, &o->nvtx_ops, err) < 0 ||
	    parse_onoff("cuda-graph", cli->cuda_graph, &o->cuda_graph, err) < 0 ||
	    parse_onoff("pdl", cli->pdl, &o->pdl, err) < 0)
		return -1;
	if ((long)cli->batch * cli->prompt_len > (1L << 22))
		return lp_err_set(err, LP_EUSAGE, "batch x prompt length (%ld tokens) is over 4194304",
			(long)cli->batch * cli->prompt_len);
	o->batch = cli->batch;
	o->prompt_len = cli->prompt_len;
	o->new_tokens = cli->new_tokens;
	o->seed = seed;
	return 0;
}

static void print_json(json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(7));
	if (s) {
		fputs(s, stdout);
		fputc('\n', stdout);
		fflush(stdout);
		free(s);
	}
	json_decref(v);
}

/* Bytes one decode step moves on average: weights read (bf16 on the GPU, fp32 on the CPU), plus
 * the KV cache read (context grows by one per step) and the new K/V written. */
static double decode_bytes_per_step(const struct lp_llm_config *c, const struct lp_llm_run_opts *o)
{
	double wbytes = o->device == LP_LLM_CUDA ? 2.0 : 4.0;
	int touched = c->num_experts_per_tok * o->batch;
	double kv_per_pos, ctx_avg;
	if (touched > c->n_routed_experts)
		touched = c->n_routed_experts;
	kv_per_pos = 2.0 * c->num_hidden_layers * c->num_key_value_heads * c->head_dim * wbytes * o->batch;
	ctx_avg = o->prompt_len + (o->new_tokens + 1) / 2.0;
	return (double)lp_llm_decode_params_read(c, touched) * wbytes + kv_per_pos * (ctx_avg + 1.0);
}

int main(int argc, char **argv_in)
{
	const char **argv = (const char **)(void *)argv_in;
	struct lp_llm_cli cli = { "tiny", "cpu", "1234", "on", "on", "fused", "on", 1, 64, 32, 1, 3 };
	struct lp_llm_run_opts o = LP_LLM_RUN_OPTS_INIT;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf conf = LP_BUF_INIT;
	struct lp_llm_config cfg;
	struct lp_llm_engine *eng = NULL;
	struct lp_llm_iter it;
	double sum_prefill = 0, sum_decode = 0, prefill_flops;
	int32_t first[LP_LLM_FIRST_TOKENS_MAX];
	int help = 0, i, n_first = 0;
	json_t *s, *toks;

	lp_log_setup(0, 0);
	if (parse_args(argc, argv, &cli, &o, &help, &err) < 0)
		return lp_cmd_fail(&err);
	if (help)
		return 0;
	find_conf_dir(&conf);
	if (lp_llm_config_load(cli.model, conf.data, &cfg, &err) < 0) {
		lp_buf_release(&conf);
		return lp_cmd_fail(&err);
	}
	lp_buf_release(&conf);
	if (lp_llm_engine_create(&cfg, &o, &eng, &err) < 0)
		return lp_cmd_fail(&err);

	if (cli.warmup > 0) {
		lp_nvtx_push_payload("warmup", (uint64_t)cli.warmup);
		for (i = 0; i < cli.warmup; i++)
			if (lp_llm_engine_iterate(eng, &it, &err) < 0)
				break;
		lp_nvtx_pop();
		if (err.kind) {
			lp_llm_engine_free(eng);
			return lp_cmd_fail(&err);
		}
	}
	prefill_flops = lp_llm_forward_flops(&cfg, o.batch, 0, o.prompt_len);
	for (i = 0; i < cli.iters; i++) {
		double dtok = (double)o.batch * o.new_tokens, ptok = (double)o.batch * o.prompt_len;
		if (lp_llm_engine_iterate(eng, &it, &err) < 0) {
			lp_llm_engine_free(eng);
			return lp_cmd_fail(&err);
		}
		sum_prefill += it.prefill_ms;
		sum_decode += it.decode_ms;
		if (i == 0) {
			n_first = it.n_tokens < LP_LLM_FIRST_TOKENS_MAX ? it.n_tokens : LP_LLM_FIRST_TOKENS_MAX;
			memcpy(first, it.tokens, sizeof(int32_t) * (size_t)n_first);
		}
		print_json(json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:f}",
			"iter", i,
			"prefill_ms", it.prefill_ms,
			"decode_ms", it.decode_ms,
			"tokens", dtok,
			"tokens_per_s", it.decode_ms > 0 ? dtok / it.decode_ms * 1e3 : 0.0,
			"prefill_tokens_per_s", it.prefill_ms > 0 ? ptok / it.prefill_ms * 1e3 : 0.0,
			"decode_ms_per_step", o.new_tokens ? it.decode_ms / o.new_tokens : 0.0));
	}
	toks = json_array();
	for (i = 0; i < n_first; i++)
		json_array_append_new(toks, json_integer(first[i]));
	{
		double pm = sum_prefill / cli.iters, dm = sum_decode / cli.iters;
		double step_ms = o.new_tokens ? dm / o.new_tokens : 0.0;
		s = json_pack("{s:b, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:I, s:b, s:b, s:b}",
			"summary", 1, "model", cfg.name, "family", lp_llm_family_name(cfg.family),
			"device", o.device == LP_LLM_CUDA ? "cuda" : "cpu",
			"device_name", lp_llm_engine_device_name(eng),
			"batch", o.batch, "prompt_len", o.prompt_len, "new_tokens", o.new_tokens,
			"warmup", cli.warmup, "iters", cli.iters, "seed", (json_int_t)o.seed,
			"nvtx", LP_NVTX_AVAILABLE, "nvtx_ops", o.nvtx_ops,
			"cuda_graph", o.device == LP_LLM_CUDA && o.cuda_graph);
		json_object_set_new(s, "gemv", json_string(o.device != LP_LLM_CUDA ? "cpu" : lp_llm_gemv_name(o.gemv)));
		json_object_set_new(s, "pdl", json_boolean(o.device == LP_LLM_CUDA && o.gemv == LP_LLM_GEMV_FUSED && o.pdl));
		json_object_set_new(s, "params", json_integer((json_int_t)lp_llm_param_count(&cfg)));
		json_object_set_new(s, "prefill_ms", json_real(pm));
		json_object_set_new(s, "decode_ms", json_real(dm));
		json_object_set_new(s, "decode_ms_per_step", json_real(step_ms));
		json_object_set_new(s, "tokens_per_s",
			json_real(dm > 0 ? (double)o.batch * o.new_tokens / dm * 1e3 : 0.0));
		json_object_set_new(s, "prefill_tokens_per_s",
			json_real(pm > 0 ? (double)o.batch * o.prompt_len / pm * 1e3 : 0.0));
		json_object_set_new(s, "prefill_flops", json_real(prefill_flops));
		json_object_set_new(s, "prefill_tflops", json_real(pm > 0 ? prefill_flops / pm / 1e9 : 0.0));
		json_object_set_new(s, "decode_bytes_per_step", json_real(decode_bytes_per_step(&cfg, &o)));
		json_object_set_new(s, "decode_gb_per_s",
			json_real(step_ms > 0 ? decode_bytes_per_step(&cfg, &o) / step_ms / 1e6 : 0.0));
		json_object_set_new(s, "graph_kernel_nodes", json_integer(lp_llm_engine_graph_kernels(eng)));
		json_object_set_new(s, "first_tokens", toks);
		print_json(s);
	}
	lp_llm_engine_free(eng);
	if (ferror(stdout)) {
		lp_log_error("cannot write to standard output");
		return LP_EOTHER;
	}
	return 0;
}
