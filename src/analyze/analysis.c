/* analysis.c: lp_analyze, the step between the loaded artifacts and the reports (see analysis.h).
 * It runs stages.c, operators.c and kernels.c on the profile, resolves tokens, device and peaks,
 * divides the model's FLOPs and minimum bytes (flops.c) by the measured GPU time for MFU/MBU,
 * cross-checks with the FLOPs Nsight Compute counted, and derives the advice (advice.c). */
#include "analyze/analysis.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/advice.h"
#include "config/llm_model.h"
#include "llmprof/trace_format.h"

void lp_num_set(struct lp_num *n, double value)
{
	n->valid = 1;
	n->value = value;
	n->why[0] = '\0';
}

void lp_num_na(struct lp_num *n, const char *fmt, ...)
{
	va_list ap;
	n->valid = 0;
	n->value = 0;
	va_start(ap, fmt);
	vsnprintf(n->why, sizeof(n->why), fmt, ap);
	va_end(ap);
}

int lp_num_format(const struct lp_num *n, int decimals, double scale, const char *suffix, struct lp_buf *out)
{
	if (!n->valid)
		return lp_buf_addf(out, "n/a (%s)", n->why);
	return lp_buf_addf(out, "%.*f%s", decimals, n->value * scale, suffix ? suffix : "");
}

void lp_analysis_release(struct lp_analysis *a)
{
	lp_stage_set_release(&a->stages);
	lp_op_table_release(&a->ops);
	lp_kernel_set_release(&a->kernels);
	lp_tsample_table_release(&a->sampled);
	lp_timeline_release(&a->timeline);
	lp_rank_view_release(&a->ranks);
	free(a->phases);
	free(a->advice);
	if (a->env)
		json_decref(a->env);
	json_decref(a->ncu_sampling);
	lp_arena_release(&a->arena);
	memset(a, 0, sizeof(*a));
}

static const char *dup(struct lp_analysis *a, const char *s)
{
	const char *d = lp_arena_strdup(&a->arena, s ? s : "");
	return d ? d : "";
}

/* ---- the config's stage rules, the program's own account (analysis.h) ---- */

int lp_stage_rules_from_config(const json_t *cfg, struct lp_stage_rules_buf *out, struct lp_err *err)
{
	const json_t *st = json_object_get(cfg, "stages");
	const json_t *skip = json_object_get(json_object_get(cfg, "run"), "skip_first");
	int role, custom = 0;
	memset(out, 0, sizeof(*out));
	out->rules.skip_first = json_is_integer(skip) && json_integer_value(skip) >= 0 ? (int64_t)json_integer_value(skip)
										     : LP_SKIP_FIRST_AUTO;
	for (role = LP_ROLE_PREFILL; role < LP_ROLE_COUNT; role++) {
		const json_t *v = json_object_get(st, lp_stage_role_name(role)), *x;
		size_t i, n = 0;
		if (!v || json_is_null(v))
			continue;
		if (json_is_string(v)) {
			out->names[role][n++] = json_string_value(v);
		} else if (json_is_array(v)) {
			json_array_foreach(v, i, x) {
				if (!json_is_string(x))
					return lp_err_set(err, LP_EUSAGE, "'stages.%s' must be a list of strings", lp_stage_role_name(role));
				if (n >= LP_STAGE_NAMES_MAX)
					return lp_err_set(err, LP_EUSAGE, "'stages.%s' lists more than %d names", lp_stage_role_name(role),
						LP_STAGE_NAMES_MAX);
				out->names[role][n++] = json_string_value(x);
			}
		} else {
			return lp_err_set(err, LP_EUSAGE, "'stages.%s' must be a list of strings", lp_stage_role_name(role));
		}
		out->names[role][n] = NULL;
		out->rules.names[role] = out->names[role];
		custom = 1;
	}
	out->rules.source = custom ? "stages.* in the config" : "built-in defaults";
	return 0;
}

static int64_t hf_int(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	if (json_is_integer(v))
		return (int64_t)json_integer_value(v);
	if (json_is_real(v) && json_real_value(v) >= 0 && json_real_value(v) < 9e15)
		return (int64_t)json_real_value(v);
	return 0;
}

json_t *lp_model_json_from_hf(const json_t *hf, const char *dtype, char *why, size_t why_cap)
{
	struct lp_llm_config mc;
	struct lp_err e = LP_ERR_INIT;
	const json_t *dec = hf;
	const char *mt;
	json_t *o;
	int64_t moe, shared_sz;
	why[0] = '\0';
	if (!json_is_object(hf)) {
		snprintf(why, why_cap, "the program's account has no HF config");
		return NULL;
	}
	if (lp_llm_config_from_json(hf, "the program's HF config", &mc, &e) == 0) {
		o = lp_llm_config_to_json(&mc);
		if (o && dtype && *dtype)
			json_object_set_new(o, "dtype", json_string(dtype));
		return o;
	}
	/* field by field: the decoder of a multimodal config, Mixtral / Qwen2-MoE expert fields */
	if (json_is_object(json_object_get(hf, "text_config")))
		dec = json_object_get(hf, "text_config");
	else if (json_is_object(json_object_get(hf, "language_config")))
		dec = json_object_get(hf, "language_config");
	if (!hf_int(dec, "hidden_size") || !hf_int(dec, "num_hidden_layers") || !hf_int(dec, "num_attention_heads") ||
	    !hf_int(dec, "vocab_size")) {
		snprintf(why, why_cap, "the program's HF config lacks hidden_size, num_hidden_layers, num_attention_heads "
			 "or vocab_size (%.100s)", e.msg);
		return NULL;
	}
	o = json_object();
	if (!o)
		return NULL;
	mt = json_string_value(json_object_get(dec, "model_type"));
	if (!mt)
		mt = json_string_value(json_object_get(hf, "model_type"));
	json_object_set_new(o, "name", json_string(mt ? mt : "hf-model"));
	json_object_set_new(o, "family", json_string(mt ? mt : "unknown"));
	json_object_set_new(o, "dtype", json_string(dtype && *dtype ? dtype : "bf16"));
	json_object_set_new(o, "vocab_size", json_integer(hf_int(dec, "vocab_size")));
	json_object_set_new(o, "hidden_size", json_integer(hf_int(dec, "hidden_size")));
	json_object_set_new(o, "num_hidden_layers", json_integer(hf_int(dec, "num_hidden_layers")));
	json_object_set_new(o, "num_attention_heads", json_integer(hf_int(dec, "num_attention_heads")));
	json_object_set_new(o, "num_key_value_heads", json_integer(hf_int(dec, "num_key_value_heads")));
	json_object_set_new(o, "head_dim", json_integer(hf_int(dec, "head_dim")));
	json_object_set_new(o, "tie_word_embeddings", json_boolean(json_is_true(json_object_get(dec, "tie_word_embeddings")) ||
		json_is_true(json_object_get(hf, "tie_word_embeddings"))));
	moe = hf_int(dec, "n_routed_experts");
	if (!moe)
		moe = hf_int(dec, "num_experts");         /* Qwen2-MoE, Qwen3-MoE */
	if (!moe)
		moe = hf_int(dec, "num_local_experts");   /* Mixtral: every MLP is MoE, intermediate_size per expert */
	json_object_set_new(o, "intermediate_size", json_integer(hf_int(dec, "intermediate_size")));
	if (moe > 0) {
		int64_t inter = hf_int(dec, "moe_intermediate_size");
		if (!inter)
			inter = hf_int(dec, "intermediate_size");
		shared_sz = hf_int(dec, "shared_expert_intermediate_size");
		json_object_set_new(o, "n_routed_experts", json_integer(moe));
		json_object_set_new(o, "num_experts_per_tok", json_integer(hf_int(dec, "num_experts_per_tok")));
		json_object_set_new(o, "moe_intermediate_size", json_integer(inter));
		json_object_set_new(o, "n_shared_experts", json_integer(hf_int(dec, "n_shared_experts") ? hf_int(dec, "n_shared_experts")
			: shared_sz > 0 && inter > 0 ? (shared_sz + inter / 2) / inter : 0));
		json_object_set_new(o, "first_k_dense_replace", json_integer(hf_int(dec, "first_k_dense_replace")));
	}
	return o;
}

/* The model shape: the config's, else the program's account. */
static void resolve_model(const struct lp_analysis_input *in, struct lp_analysis *out)
{
	const json_t *am = json_object_get(in->auto_info, "model");
	json_t *built = NULL;
	const json_t *m = in->model && !json_is_null(in->model) ? in->model : NULL;
	out->model_source[0] = '\0';
	if (m) {
		snprintf(out->model_source, sizeof(out->model_source), "the config (model=..., model.*)");
	} else if (json_is_object(am)) {
		char why[200];
		built = lp_model_json_from_hf(json_object_get(am, "hf_config"), json_string_value(json_object_get(am, "dtype")),
			why, sizeof(why));
		if (built) {
			const json_t *cls = json_object_get(am, "class");
			if (json_is_string(cls) && *json_string_value(cls))
				json_object_set_new(built, "name", json_string(json_string_value(cls)));
			m = built;
			out->auto_used = 1;
			snprintf(out->model_source, sizeof(out->model_source), "the program (llmprof_auto: %.100s)",
				in->auto_info_path ? in->auto_info_path : "its HF config");
		} else {
			snprintf(out->model_why, sizeof(out->model_why), "%.190s", why);
		}
		if (json_is_number(json_object_get(am, "parameters")))
			out->auto_params = json_number_value(json_object_get(am, "parameters"));
	}
	if (m) {
		struct lp_err merr = LP_ERR_INIT;
		if (lp_model_shape_from_json(m, &out->model, &merr) == 0) {
			out->have_model = 1;
			lp_model_params(&out->model, &out->params);
		} else {
			snprintf(out->model_why, sizeof(out->model_why), "%.190s", merr.msg);
			out->model_source[0] = '\0';
		}
	} else if (!out->model_why[0]) {
		snprintf(out->model_why, sizeof(out->model_why), "no model shape: set model=<name>, model.hf_config or model.* keys");
	}
	if (built)
		json_decref(built);
}

/* Batch, prompt length and decode steps from inputs.*, the program's account and payloads (see
 * analysis.h). */
static void resolve_tokens(const struct lp_analysis_input *in, struct lp_analysis *a)
{
	const struct lp_stage *pf = lp_stages_find(&a->stages, LP_STAGE_PREFILL);
	const struct lp_stage *dec = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	const json_t *tk = json_object_get(in->auto_info, "tokens");
	static const char *const prog = "the program (llmprof_auto)";
	uint64_t payload = 0;
	int have_payload = 0;
	a->batch = in->batch > 0 ? in->batch : 0;
	a->prompt_len = in->prompt_len > 0 ? in->prompt_len : 0;
	a->batch_source = a->batch ? "inputs.batch" : "";
	a->prompt_source = a->prompt_len ? "inputs.prompt_len" : "";
	a->steps_source = "";
	if (!a->batch && hf_int(tk, "batch") > 0) {
		a->batch = hf_int(tk, "batch");
		a->batch_source = prog;
		a->auto_used = 1;
	}
	if (!a->prompt_len && hf_int(tk, "prompt_len") > 0) {
		a->prompt_len = hf_int(tk, "prompt_len");
		a->prompt_source = prog;
		a->auto_used = 1;
	}
	if (pf && pf->n_iters && pf->iters[0].has_payload && pf->iters[0].payload > 0) {
		have_payload = 1;
		payload = pf->iters[0].payload;
	}
	if (have_payload) {
		if (!a->batch && a->prompt_len && payload % (uint64_t)a->prompt_len == 0) {
			a->batch = (int64_t)(payload / (uint64_t)a->prompt_len);
			a->batch_source = "prefill payload / prompt length";
		}
		if (a->batch && !a->prompt_len && payload % (uint64_t)a->batch == 0) {
			a->prompt_len = (int64_t)(payload / (uint64_t)a->batch);
			a->prompt_source = "prefill payload / batch";
		}
	}
	if (dec && dec->steps.n && dec->steps.mean > 0) {
		a->steps = (int64_t)llround(dec->steps.mean);
		a->steps_source = "decode step ranges";
	} else if (in->new_tokens > 0) {
		a->steps = in->new_tokens;
		a->steps_source = "inputs.new_tokens";
	} else if (hf_int(tk, "decode_steps") > 0) {
		a->steps = hf_int(tk, "decode_steps");
		a->steps_source = prog;
		a->auto_used = 1;
	}
	a->tokens_why[0] = '\0';
	if (!a->batch && !a->prompt_len)
		snprintf(a->tokens_why, sizeof(a->tokens_why), "batch and prompt length unknown: set inputs.batch and inputs.prompt_len");
	else if (!a->batch)
		snprintf(a->tokens_why, sizeof(a->tokens_why), "batch unknown: set inputs.batch");
	else if (!a->prompt_len)
		snprintf(a->tokens_why, sizeof(a->tokens_why), "prompt length unknown: set inputs.prompt_len");

	if (have_payload)
		lp_num_set(&a->prefill_tokens, (double)payload);
	else if (a->batch && a->prompt_len)
		lp_num_set(&a->prefill_tokens, (double)(a->batch * a->prompt_len));
	else
		lp_num_na(&a->prefill_tokens, "%s", a->tokens_why[0] ? a->tokens_why : "no prefill payload");
	if (!dec || !dec->n_iters) {
		lp_num_na(&a->decode_tokens, "no measured decode_all range");
		lp_num_na(&a->decode_tokens_per_s, "no measured decode_all range");
		lp_num_na(&a->decode_step_ms, "no measured decode_all range");
	} else if (!a->steps) {
		lp_num_na(&a->decode_tokens, "no decode_step ranges and inputs.new_tokens unset");
		lp_num_na(&a->decode_tokens_per_s, "%s", a->decode_tokens.why);
		lp_num_na(&a->decode_step_ms, "%s", a->decode_tokens.why);
	} else {
		lp_num_set(&a->decode_step_ms, dec->lat_ms.mean / (double)a->steps);
		if (!a->batch) {
			lp_num_na(&a->decode_tokens, "batch unknown: set inputs.batch");
			lp_num_na(&a->decode_tokens_per_s, "batch unknown: set inputs.batch");
		} else {
			lp_num_set(&a->decode_tokens, (double)(a->batch * a->steps));
			if (dec->lat_ms.mean > 0)
				lp_num_set(&a->decode_tokens_per_s, a->decode_tokens.value / (dec->lat_ms.mean / 1e3));
			else
				lp_num_na(&a->decode_tokens_per_s, "decode latency is 0");
		}
	}
	{
		/* a server decoding continuously: decode steps without a decode range (stages.h) */
		const struct lp_stage *fs = lp_stages_find(&a->stages, LP_STAGE_STEPS);
		if ((!dec || !dec->n_iters) && fs && fs->n_iters) {
			lp_num_set(&a->decode_step_ms, fs->lat_ms.mean);
			if (!isnan(fs->tokens_per_s))
				lp_num_set(&a->decode_tokens_per_s, fs->tokens_per_s);
			else
				lp_num_na(&a->decode_tokens_per_s, "decode_step ranges without a payload (tokens in the step)");
			a->steps_source = "decode_step ranges outside decode_all";
		}
	}
	if (pf && pf->n_iters)
		lp_num_set(&a->ttft_ms, pf->lat_ms.mean);
	else
		lp_num_na(&a->ttft_ms, "no measured prefill range");
}

static void check(struct lp_analysis *a, const char *what, int stage, const struct lp_num *ours, double theirs)
{
	struct lp_self_check *c;
	if (!ours->valid || theirs <= 0 || a->n_checks >= sizeof(a->checks) / sizeof(a->checks[0]))
		return;
	c = &a->checks[a->n_checks++];
	c->what = what;
	c->stage = stage;
	c->ours = ours->value;
	c->theirs = theirs;
	c->diff = (ours->value - theirs) / theirs;
	if (fabs(c->diff) > LP_SELF_CHECK_TOL)
		a->check_failed = 1;
}

/* The workload's own numbers are one rank's (its summary line's "rank") in a job of several: they
 * are checked against that rank's stages, not the means over all ranks. 1 when done that way. */
static int self_check_rank(struct lp_analysis *a)
{
	const struct lp_rank *rk = NULL;
	const struct lp_stage *pf = lp_stages_find(&a->stages, LP_STAGE_PREFILL);
	const struct lp_stage *dec = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	struct lp_num pf_ms, dec_ms, step_ms;
	size_t i;
	if (a->own.rank < 0 || a->ranks.n_ranks < 2)
		return 0;
	for (i = 0; i < a->ranks.n_ranks; i++)
		if (a->ranks.ranks[i].rank == a->own.rank)
			rk = &a->ranks.ranks[i];
	if (!rk)
		return 0;
	lp_num_na(&pf_ms, "no prefill stage on the rank");
	lp_num_na(&dec_ms, "no decode stage on the rank");
	lp_num_na(&step_ms, "no decode steps on the rank");
	for (i = 0; i < rk->n_rstages; i++) {
		const struct lp_rank_stage *rs = &rk->rstages[i];
		if (!rs->n_iters)
			continue;
		if (pf && !rs->step_of && !strcmp(rs->name, pf->name))
			lp_num_set(&pf_ms, rs->lat_ms);
		else if (dec && !rs->step_of && !strcmp(rs->name, dec->name))
			lp_num_set(&dec_ms, rs->lat_ms);
		else if (dec && rs->step_of && !strcmp(rs->step_of, dec->name))
			lp_num_set(&step_ms, rs->lat_ms);
	}
	snprintf(a->check_rank_label, sizeof(a->check_rank_label), "rank %d", (int)a->own.rank);
	check(a, "time to first token (ms)", LP_STAGE_PREFILL, &pf_ms, a->own.prefill_ms);
	check(a, "decode latency per iteration (ms)", LP_STAGE_DECODE, &dec_ms, a->own.decode_ms);
	check(a, "decode ms per step", -1, &step_ms, a->own.decode_ms_per_step);
	return 1;
}

/* llmprof's headline numbers against the workload's own (analysis.h). */
static void self_check(struct lp_analysis *a)
{
	const struct lp_stage *dec = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	struct lp_num dec_ms;
	if (!a->own.valid || self_check_rank(a))
		return;
	if (dec && dec->n_iters)
		lp_num_set(&dec_ms, dec->lat_ms.mean);
	else
		lp_num_na(&dec_ms, "no decode stage");
	check(a, "time to first token (ms)", LP_STAGE_PREFILL, &a->ttft_ms, a->own.prefill_ms);
	check(a, "decode latency per iteration (ms)", LP_STAGE_DECODE, &dec_ms, a->own.decode_ms);
	check(a, "decode ms per step", -1, &a->decode_step_ms, a->own.decode_ms_per_step);
	check(a, "decode tokens/s", -1, &a->decode_tokens_per_s, a->own.tokens_per_s);
	{
		const struct lp_stage *mx = lp_stages_find(&a->stages, LP_STAGE_MIXED);
		struct lp_num mx_ms;
		if (mx && mx->n_iters)
			lp_num_set(&mx_ms, mx->lat_ms.mean);
		else
			lp_num_na(&mx_ms, "no mixed stage");
		check(a, "mixed forward latency (ms)", LP_STAGE_MIXED, &mx_ms, a->own.mixed_ms);
	}
}

/* Every measured decode step (the decode stage's step latencies, or a serving loop's free steps)
 * beside the workload's step_ms, in order (analysis.h). */
static void step_check(const struct lp_analysis_input *in, struct lp_analysis *a)
{
	struct lp_step_check *c = &a->step_check;
	const struct lp_stage *dec = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	const struct lp_stage *st = dec && dec->n_step_lat ? dec : lp_stages_find(&a->stages, LP_STAGE_STEPS);
	double *d;
	size_t i;
	memset(c, 0, sizeof(*c));
	if (!in->own_steps || !in->n_own_steps)
		return;
	c->stage = st ? (int)st->kind : -1;
	c->theirs = in->n_own_steps;
	c->ours = st ? st->n_step_lat : 0;
	if (a->check_rank_label[0]) {
		c->why_not = "the workload's steps are one rank's";
		return;
	}
	if (c->ours != c->theirs) {
		c->why_not = c->ours ? "the two count different numbers of measured decode steps"
				     : "no measured decode steps in the trace";
		return;
	}
	if (!(d = malloc(c->ours * sizeof(*d)))) {
		c->why_not = "out of memory";
		return;
	}
	for (i = 0; i < c->ours; i++) {   /* |difference| in % */
		double theirs = in->own_steps[i];
		d[i] = theirs > 0 ? fabs(st->step_lat_ms[i] - theirs) / theirs * 100 : (st->step_lat_ms[i] > 0 ? INFINITY : 0);
		if (d[i] <= LP_STEP_CHECK_PCT)
			c->within++;
		if (i == 0 || d[i] > c->max_abs_pct) {
			c->max_abs_pct = d[i];
			c->max_at = i;
		}
	}
	qsort(d, c->ours, sizeof(*d), lp_cmp_double);
	c->median_abs_pct = lp_percentile_sorted(d, c->ours, 50);
	for (i = 0; i < c->ours; i++) /* the signed gap, for the CPU-bound note (lp_fmt_step_check) */
		d[i] = in->own_steps[i] - st->step_lat_ms[i];
	qsort(d, c->ours, sizeof(*d), lp_cmp_double);
	c->median_gap_ms = lp_percentile_sorted(d, c->ours, 50);
	c->gap_p10_ms = lp_percentile_sorted(d, c->ours, 10);
	c->gap_p90_ms = lp_percentile_sorted(d, c->ours, 90);
	free(d);
	c->done = 1;
}

/* stages.hooks against the processes' accounts (analysis.h). */
static void hook_rows(const struct lp_analysis_input *in, struct lp_analysis *a)
{
	size_t i, j, k;
	const json_t *h, *acc, *x;
	a->n_hook_accounts = json_array_size(in->hook_accounts);
	json_array_foreach(in->hooks_config, i, h) {
		struct lp_hook_row *r;
		const char *err0 = NULL;
		if (!json_is_string(h) || a->n_hooks >= LP_HOOK_ROWS_MAX)
			continue;
		r = &a->hooks[a->n_hooks++];
		memset(r, 0, sizeof(*r));
		r->hook = dup(a, json_string_value(h));
		json_array_foreach(in->hook_accounts, j, acc) {
			json_array_foreach(acc, k, x) {
				const char *t = json_string_value(json_object_get(x, "hook"));
				if (!t || strcmp(t, r->hook))
					continue;
				r->processes++;
				r->imported += json_is_true(json_object_get(x, "module_imported"));
				r->found += json_is_true(json_object_get(x, "found"));
				r->calls += (uint64_t)hf_int(x, "calls");
				r->payload_misses += (uint64_t)hf_int(x, "payload_misses");
				if (!err0 && json_is_string(json_object_get(x, "error")))
					err0 = json_string_value(json_object_get(x, "error"));
			}
		}
		if (r->calls)
			continue;
		a->n_hook_warnings++;
		if (!a->n_hook_accounts)
			r->warning = "no Python process reported hooks (not a Python program, or run.auto_stages=false)";
		else if (!r->processes)
			r->warning = "no process knew it (it was not in LLMPROF_AUTO_HOOKS)";
		else if (!r->imported)
			r->warning = "its module was never imported";
		else if (!r->found)
			r->warning = dup(a, err0 ? err0 : "its target was not found");
		else
			r->warning = "the function was never called";
	}
}

static void perf_na_all(struct lp_perf *p, const char *why)
{
	lp_num_na(&p->flops, "%s", why);
	lp_num_na(&p->bytes, "%s", why);
	lp_num_na(&p->tflops_per_s, "%s", why);
	lp_num_na(&p->gbs, "%s", why);
	lp_num_na(&p->mfu, "%s", why);
	lp_num_na(&p->mbu, "%s", why);
	lp_num_na(&p->mfu_lat, "%s", why);
	lp_num_na(&p->mbu_lat, "%s", why);
}

/* Fills the ratios of a perf row whose flops/bytes/gpu_s/host_s are set or n/a. */
static void perf_ratios(struct lp_analysis *a, struct lp_perf *p)
{
	if (!p->flops.valid || !p->gpu_s.valid) {
		lp_num_na(&p->tflops_per_s, "%s", !p->flops.valid ? p->flops.why : p->gpu_s.why);
		lp_num_na(&p->mfu, "%s", p->tflops_per_s.why);
	} else {
		lp_num_set(&p->tflops_per_s, p->flops.value / p->gpu_s.value / 1e12);
		if (a->peak.flops_valid)
			lp_num_set(&p->mfu, p->flops.value / p->gpu_s.value / a->peak.flops_per_s);
		else
			lp_num_na(&p->mfu, "%s", a->peak.flops_source);
	}
	if (!p->bytes.valid || !p->gpu_s.valid) {
		lp_num_na(&p->gbs, "%s", !p->bytes.valid ? p->bytes.why : p->gpu_s.why);
		lp_num_na(&p->mbu, "%s", p->gbs.why);
	} else {
		lp_num_set(&p->gbs, p->bytes.value / p->gpu_s.value / 1e9);
		if (a->peak.bw_valid)
			lp_num_set(&p->mbu, p->bytes.value / p->gpu_s.value / a->peak.bytes_per_s);
		else
			lp_num_na(&p->mbu, "%s", a->peak.bw_source);
	}
	if (p->flops.valid && p->lat_s.valid && p->lat_s.value > 0 && a->peak.flops_valid)
		lp_num_set(&p->mfu_lat, p->flops.value / p->lat_s.value / a->peak.flops_per_s);
	else
		lp_num_na(&p->mfu_lat, "%s", !p->flops.valid ? p->flops.why : !a->peak.flops_valid ? a->peak.flops_source
			: p->lat_s.valid ? "latency is 0" : p->lat_s.why);
	if (p->bytes.valid && p->lat_s.valid && p->lat_s.value > 0 && a->peak.bw_valid)
		lp_num_set(&p->mbu_lat, p->bytes.value / p->lat_s.value / a->peak.bytes_per_s);
	else
		lp_num_na(&p->mbu_lat, "%s", !p->bytes.valid ? p->bytes.why : !a->peak.bw_valid ? a->peak.bw_source
			: p->lat_s.valid ? "latency is 0" : p->lat_s.why);
}

/* FLOPs ncu counted for one stage kind, per iteration, and the kernel time they cover. */
static void ncu_crosscheck(struct lp_analysis *a, int kind, size_t n_iters, struct lp_perf *p)
{
	double flops = 0, covered = 0, all = 0;
	size_t i;
	int any = 0;
	for (i = 0; i < a->kernels.n_rows; i++) {
		const struct lp_kernel_row *r = &a->kernels.rows[i];
		double ms = kind < 0 ? r->stage_ms[0] + r->stage_ms[1] : r->stage_ms[kind];
		uint64_t calls = kind < 0 ? r->stage_calls[0] + r->stage_calls[1] : r->stage_calls[kind];
		all += ms;
		if (r->ncu.joined && !isnan(r->ncu.flops) && calls > 0) {
			flops += r->ncu.flops * (double)calls;
			covered += ms;
			any = 1;
		}
	}
	if (!a->kernels.n_ncu_records) {
		lp_num_na(&p->ncu_flops, "no Nsight Compute data (light mode or ncu skipped)");
		lp_num_na(&p->ncu_coverage, "%s", p->ncu_flops.why);
	} else if (!any || !n_iters) {
		lp_num_na(&p->ncu_flops, "no ncu FLOP counters joined to this stage's kernels");
		lp_num_na(&p->ncu_coverage, "%s", p->ncu_flops.why);
	} else {
		lp_num_set(&p->ncu_flops, flops / (double)n_iters);
		lp_num_set(&p->ncu_coverage, all > 0 ? covered / all : 0);
	}
}

/* out = x + y when both are known, else n/a with the first missing one's reason. */
static void sum_num(struct lp_num *out, const struct lp_num *x, const struct lp_num *y)
{
	if (x->valid && y->valid)
		lp_num_set(out, x->value + y->value);
	else
		lp_num_na(out, "%s", !x->valid ? (x->why[0] ? x->why : "the prefill stage lacks it")
			: (y->why[0] ? y->why : "the decode stage lacks it"));
}

uint64_t lp_dropped_at_detach(const struct lp_process *pr)
{
	const struct lp_sampling *s = &pr->sampling;
	uint64_t detaches = 0;
	if (s->burst || s->warmup == LP_TRACE_WARMUP_DETACHED)
		detaches = (s->toggles + 1) / 2;
	return pr->dropped_cupti < detaches ? pr->dropped_cupti : detaches;
}

static void compute_perf(struct lp_analysis *a)
{
	const struct lp_stage *pf = lp_stages_find(&a->stages, LP_STAGE_PREFILL);
	const struct lp_stage *dec = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	const struct lp_stage *st[2] = { pf, dec };
	static const char *const labels[3] = { "prefill", "decode", "model" };
	int k;
	size_t i;
	for (k = 0; k < 3; k++) {
		memset(&a->perf[k], 0, sizeof(a->perf[k]));
		a->perf[k].label = labels[k];
	}
	for (k = 0; k < 2; k++) {
		struct lp_perf *p = &a->perf[k];
		const struct lp_stage *s = st[k];
		if (!s || !s->n_iters) {
			perf_na_all(p, k == 0 ? "no measured prefill range" : "no measured decode_all range");
			lp_num_na(&p->gpu_s, "%s", p->flops.why);
			lp_num_na(&p->host_s, "%s", p->flops.why);
			lp_num_na(&p->lat_s, "%s", p->flops.why);
			lp_num_na(&p->ncu_flops, "%s", p->flops.why);
			lp_num_na(&p->ncu_coverage, "%s", p->flops.why);
			continue;
		}
		lp_num_set(&p->host_s, s->host_ms.mean / 1e3);
		lp_num_set(&p->lat_s, s->lat_ms.mean / 1e3);
		if (!a->stages.have_gpu)
			lp_num_na(&p->gpu_s, "CPU run: no GPU kernels recorded");
		else if (s->gpu_ms.mean <= 0)
			lp_num_na(&p->gpu_s, "no kernels attributed to the stage");
		else
			lp_num_set(&p->gpu_s, s->gpu_ms.mean / 1e3);
		if (!a->have_model) {
			lp_num_na(&p->flops, "%s", a->model_why);
			lp_num_na(&p->bytes, "%s", a->model_why);
		} else if (k == 0 && (!a->batch || !a->prompt_len)) {
			lp_num_na(&p->flops, "%s", a->tokens_why);
			lp_num_na(&p->bytes, "%s", a->tokens_why);
		} else if (k == 1 && (!a->batch || !a->prompt_len || !a->steps)) {
			lp_num_na(&p->flops, "%s", a->tokens_why[0] ? a->tokens_why : "decode steps unknown");
			lp_num_na(&p->bytes, "%s", p->flops.why);
		} else if (k == 0) {
			lp_num_set(&p->flops, lp_flops_prefill(&a->model, a->batch, a->prompt_len));
			lp_num_set(&p->bytes, lp_bytes_prefill(&a->model, a->batch, a->prompt_len));
		} else {
			/* per iteration with its own step count, then the mean */
			double f = 0, b = 0;
			for (i = 0; i < s->n_iters; i++) {
				int64_t n = s->iters[i].steps ? (int64_t)s->iters[i].steps : a->steps;
				f += lp_flops_decode(&a->model, a->batch, a->prompt_len, n);
				b += lp_bytes_decode(&a->model, a->batch, a->prompt_len, n);
			}
			lp_num_set(&p->flops, f / (double)s->n_iters);
			lp_num_set(&p->bytes, b / (double)s->n_iters);
		}
		if (p->bytes.valid && !lp_dtype_bytes(a->model.dtype))
			lp_num_na(&p->bytes, "unknown dtype '%s' (model.dtype)", a->model.dtype);
		perf_ratios(a, p);
		ncu_crosscheck(a, k, s->n_iters, p);
	}
	{
		/* the whole model: each quantity is the sum of the stage rows' when both have it, and
		 * n/a with the missing stage's reason only where one lacks it (a CPU run has FLOPs,
		 * bytes and latency but no GPU time: its model row says so for the GPU column alone) */
		struct lp_perf *m = &a->perf[2];
		sum_num(&m->flops, &a->perf[0].flops, &a->perf[1].flops);
		sum_num(&m->bytes, &a->perf[0].bytes, &a->perf[1].bytes);
		sum_num(&m->gpu_s, &a->perf[0].gpu_s, &a->perf[1].gpu_s);
		sum_num(&m->host_s, &a->perf[0].host_s, &a->perf[1].host_s);
		sum_num(&m->lat_s, &a->perf[0].lat_s, &a->perf[1].lat_s);
		perf_ratios(a, m);
		ncu_crosscheck(a, -1, pf && pf->n_iters ? pf->n_iters : dec ? dec->n_iters : 0, m);
	}
}

/* Each sampled row's interval for a separate exact run (lp_tsample_rerun_ms). */
static void rerun_intervals(struct lp_analysis *a)
{
	size_t i;
	for (i = 0; i < a->kernels.n_rows; i++) {
		struct lp_kernel_row *r = &a->kernels.rows[i];
		r->rerun_ms = r->sampled ? lp_tsample_rerun_ms(r->ci_ms, r->total_ms, a->rerun_sd_pct) : 0;
	}
	for (i = 0; i < a->ops.n_rows; i++) {
		struct lp_op_row *r = &a->ops.rows[i];
		r->rerun_ms = r->sampled ? lp_tsample_rerun_ms(r->ci_ms, r->gpu_incl_ms, a->rerun_sd_pct) : 0;
	}
}

/* How much a process's SAMPLING record says: sampled, then exact with a decision or a schedule,
 * then exact with nothing to decide on (torchrun's agent beside its ranks: no unit ever), then
 * none. */
static int sampling_rank(const struct lp_sampling *s)
{
	return s->mode == 2 ? 3 : s->mode == 1 && s->why != LP_TRACE_SAMPLE_WHY_AUTO_NONE ? 2 : s->mode ? 1 : 0;
}

/* The run's tracing mode: the record that says most (a multi-rank job's launcher decided nothing:
 * run 37's tensor-parallel job read "exact, no unit" from it while both ranks sampled), with the
 * counts of every process of the same mode and why summed (the kernel tables count their units
 * over the processes too), the largest switch and launch rate kept. */
static void run_sampling(const struct lp_profile *p, struct lp_analysis *out)
{
	const struct lp_sampling *best = NULL;
	size_t i;
	for (i = 0; i < p->n_processes; i++)
		if (!best || sampling_rank(&p->processes[i].sampling) > sampling_rank(best))
			best = &p->processes[i].sampling;
	if (!best || !best->mode)
		return;
	out->sampling = *best;
	out->sampling.unit = dup(out, best->unit);
	out->sampling.units = out->sampling.units_recorded = 0;
	out->sampling.toggles = out->sampling.toggle_ns = 0;
	for (i = 0; i < p->n_processes; i++) {
		const struct lp_sampling *s = &p->processes[i].sampling;
		if (s->mode != best->mode || s->why != best->why) {
			out->sampling_others += sampling_rank(s) >= 2;
			continue;
		}
		out->sampling_processes++;
		out->sampling.units += s->units;
		out->sampling.units_recorded += s->units_recorded;
		out->sampling.toggles += s->toggles;
		out->sampling.toggle_ns += s->toggle_ns;
		if (s->toggle_max_ns > out->sampling.toggle_max_ns)
			out->sampling.toggle_max_ns = s->toggle_max_ns;
		if (s->launch_rate > out->sampling.launch_rate)
			out->sampling.launch_rate = s->launch_rate;
	}
}

/* The stage ranges the tracer sampled on their own (sampling.h lp_tsample_units_find), counted by
 * name for the Tracing mode section; the warm-up's left out. */
static void stage_instances(const struct lp_profile *p, const struct lp_tsample_plan *plan, struct lp_analysis *out)
{
	struct lp_tsample_units u;
	struct lp_err e = LP_ERR_INIT;
	size_t i, k;
	if (lp_tsample_units_find(p, plan, 0, &u, &e) < 0) {
		lp_err_clear(&e);
		return;
	}
	for (i = 0; i < p->n_ranges; i++) {
		if (!u.stage_unit[i] || lp_tsample_range_warm(p, &out->stages, (int32_t)i))
			continue;
		for (k = 0; k < out->n_stage_inst && strcmp(out->stage_inst[k].name, p->ranges[i].name); k++) {
		}
		if (k == out->n_stage_inst) {
			if (k == sizeof(out->stage_inst) / sizeof(out->stage_inst[0]))
				continue;
			out->stage_inst[out->n_stage_inst++].name = p->ranges[i].name;
		}
		out->stage_inst[k].of++;
		out->stage_inst[k].recorded += u.stratum[i] == LP_TSAMPLE_RECORDED;
	}
	lp_tsample_units_release(&u);
}

/* The tracer's mode and, for a sampled trace, the kernel table scaled to every unit. */
static int sampling(const struct lp_profile *p, struct lp_analysis *out, struct lp_err *err)
{
	struct lp_tsample_plan plan;
	size_t i;
	run_sampling(p, out);
	/* auto's exact phase: on a host whose cold first generation runs under the threshold it can
	 * hold that whole generation (bench/tracer/README.md run 33), which the report says. Only the
	 * units with kernels count: those inside a warm-up that CUPTI was detached for are flagged
	 * too but hold none (nothing was traced or measured there; run 36 read "0 launches/s"). */
	{
		const char *unit = out->sampling.unit && *out->sampling.unit ? out->sampling.unit : "decode_step";
		uint64_t host_ns = 0, launches = 0;
		uint32_t *n_in = NULL; /* per range: its kernels, when some unit was measured */
		for (i = 0; i < p->n_ranges && p->ranges[i].sample != LP_TRACE_STAGE_MEASURED; i++) {
		}
		if (i < p->n_ranges && !(n_in = calloc(p->n_ranges, sizeof(*n_in))))
			return lp_oom(err);
		for (i = 0; n_in && i < p->n_kernels; i++) {
			int32_t u = lp_profile_range_find_ancestor(p, p->kernels[i].range, unit);
			if (u >= 0 && p->ranges[u].sample == LP_TRACE_STAGE_MEASURED)
				n_in[u]++;
		}
		for (i = 0; n_in && i < p->n_ranges; i++) {
			const struct lp_range *r = &p->ranges[i];
			if (r->sample != LP_TRACE_STAGE_MEASURED || !n_in[i])
				continue;
			out->units_measured++;
			out->units_measured_left_out += lp_stage_range_excluded(&out->stages, (int32_t)i) != 0;
			host_ns += r->end_ns > r->start_ns ? r->end_ns - r->start_ns : 0;
			launches += n_in[i];
		}
		free(n_in);
		out->units_measured_rate = host_ns ? (double)launches * 1e9 / (double)host_ns : 0;
	}
	/* prefills that found CUPTI detached (bursts in a loop whose units have no parent to foresee,
	 * a serving loop: run 39) attached it at their push, a pause of the program inside them */
	for (i = 0; i < out->stages.n_stages; i++) {
		const struct lp_stage *st = &out->stages.stages[i];
		size_t j;
		if (st->kind != LP_STAGE_PREFILL)
			continue;
		for (j = 0; j < st->n_iters; j++) {
			int32_t r = st->iters[j].range;
			out->push_attached_of++;
			out->push_attached += r >= 0 && (size_t)r < p->n_ranges && p->ranges[r].push_attached;
		}
	}
	if (!lp_tsample_plan_of(p, &plan))
		return 0;
	stage_instances(p, &plan, out);
	if (lp_tsample_kernel_table(p, &plan, 0.95, &out->sampled, err) < 0)
		return -1;
	for (i = 0; i < out->sampled.n_rows; i++)
		out->sampled.rows[i].key = dup(out, out->sampled.rows[i].key);
	{
		/* the kernel and operator tables, scaled to every unit (measured iterations only) */
		struct lp_tsample_weights w;
		int rc;
		if (lp_tsample_weights_build(p, &out->stages, &plan, &w, err) < 0)
			return -1;
		rc = lp_tsample_scale_kernels(p, &out->stages, &w, 0.95, &out->kernels, err) < 0 ||
			lp_tsample_scale_ops(p, &out->stages, &w, 0.95, &out->ops, err) < 0 ||
			lp_tsample_scale_stages(p, &w, &out->stages, err) < 0 ? -1 : 0;
		lp_tsample_weights_release(&w);
		if (rc < 0)
			return -1;
	}
	rerun_intervals(out);
	return 0;
}

int lp_analyze(const struct lp_analysis_input *in, struct lp_analysis *out, struct lp_err *err)
{
	static const struct lp_stage_rules no_rules = { { NULL }, 0, NULL, 0 };   /* lp_stages_compute's */
	const struct lp_profile *p = in->profile;
	const struct lp_device *dev = in->device;
	size_t i;
	memset(out, 0, sizeof(*out));
	if (!p)
		return lp_err_set(err, LP_EUSAGE, "no profile to analyze");
	out->schema_version = LP_ANALYSIS_SCHEMA_VERSION;
	out->run_id = dup(out, in->run_id);
	out->mode = dup(out, in->mode);
	out->source = dup(out, p->source);
	out->source_kind = dup(out, p->source_kind);

	/* model shape */
	resolve_model(in, out);
	{
		const char *who = json_string_value(json_object_get(in->auto_info, "stage_ranges"));
		out->auto_stages = who && !strcmp(who, "pushed by llmprof_auto") &&
			hf_int(json_object_get(in->auto_info, "tokens"), "prefills") > 0;
	}

	/* device and peaks */
	if (!dev && p->n_devices)
		dev = &p->devices[0];
	if (dev) {
		out->have_device = 1;
		out->device = *dev;
		out->device.name = dup(out, dev->name);
		out->device.uuid = dup(out, dev->uuid);
	}
	lp_peak_resolve(dev, out->have_model ? out->model.dtype : NULL, in->peak_tflops, in->peak_bw_gbs, &out->peak);
	if (!out->have_model && !out->peak.flops_valid && dev)
		snprintf(out->peak.flops_source, sizeof(out->peak.flops_source), "dtype unknown: %.170s", out->model_why);

	if ((in->stage_rules ? lp_stages_compute_ex(p, in->stage_rules, &out->stages, err)
			     : lp_stages_compute(p, &out->stages, err)) < 0 || lp_operators_compute(p, &out->stages, &out->ops, err) < 0 ||
	    lp_kernels_compute(p, &out->stages, in->ncu, in->n_ncu, &out->peak, &out->kernels, err) < 0 ||
	    lp_timeline_compute(p, &out->stages, &out->timeline, err) < 0 ||
	    (p->n_processes > 1 && lp_ranks_compute(p, in->stage_rules ? in->stage_rules : &no_rules, &out->ranks, err) < 0)) {
		lp_analysis_release(out);
		return -1;
	}
	out->rerun_sd_pct = in->rerun_sd_pct > 0 ? in->rerun_sd_pct : 0;
	if (sampling(p, out, err) < 0) {
		lp_analysis_release(out);
		return -1;
	}
	resolve_tokens(in, out);
	compute_perf(out);
	out->measured_bw_gbs = in->measured_bw_gbs > 0 ? in->measured_bw_gbs : 0;
	if (lp_waterfall_compute(p, out) < 0) {
		lp_analysis_release(out);
		return lp_oom(err);
	}

	for (i = 0; i < p->n_processes; i++) {
		out->tracer_overhead_ns += p->processes[i].overhead_ns;
		out->dropped_records += p->processes[i].dropped_records;
		out->dropped_at_detach += lp_dropped_at_detach(&p->processes[i]);
		out->graph_uncaptured += p->processes[i].graph_uncaptured;
	}
	out->n_processes = p->n_processes;
	out->own = in->own;
	self_check(out);
	step_check(in, out);
	hook_rows(in, out);
	out->baseline_asked = in->baseline || in->baseline_why;
	lp_baseline_compare(in->baseline, in->baseline_why, out, &out->baseline);
	out->traced_s = in->traced_s;
	out->untraced_s = in->untraced_s;
	if (in->n_phases) {
		out->phases = malloc(in->n_phases * sizeof(*out->phases));
		if (!out->phases) {
			lp_analysis_release(out);
			return lp_oom(err);
		}
		memcpy(out->phases, in->phases, in->n_phases * sizeof(*out->phases));
		out->n_phases = in->n_phases;
	}
	if (in->env)
		out->env = json_incref((json_t *)(uintptr_t)in->env);
	out->ncu_sampling = in->ncu_sampling ? json_incref((json_t *)(uintptr_t)in->ncu_sampling) : NULL;
	if (lp_advice_compute(out, err) < 0) {
		lp_analysis_release(out);
		return -1;
	}
	return 0;
}
