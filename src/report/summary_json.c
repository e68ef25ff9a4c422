/* summary_json.c: summary.json, everything the Markdown reports show in machine-readable form
 * (docs/summary-schema.md). Unknown numbers are null with a sibling "<key>_why" string. Key
 * order is fixed (jansson keeps insertion order), reals print with 12 significant digits, so
 * identical analyses give identical bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "report/baseline_report.h"
#include "report/ncu_coverage.h"
#include "report/ranks_report.h"
#include "report/reports.h"
#include "report/tracing_mode.h"

static json_t *real(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

static void put(json_t *o, const char *k, json_t *v)
{
	json_object_set_new(o, k, v ? v : json_null());
}

static void put_num(json_t *o, const char *k, const struct lp_num *n)
{
	put(o, k, n->valid ? real(n->value) : json_null());
	if (!n->valid) {
		char key[96];
		snprintf(key, sizeof(key), "%s_why", k);
		put(o, key, lp_json_string(n->why));
	}
}

static json_t *stat(const struct lp_stat *s)
{
	json_t *o = json_object();
	put(o, "n", json_integer((json_int_t)s->n));
	put(o, "mean", real(s->mean));
	put(o, "std", s->n > 1 ? real(s->std) : json_null());   /* one value has no spread */
	put(o, "min", real(s->min));
	put(o, "max", real(s->max));
	return o;
}

static const char *kind_name(enum lp_stage_kind k)
{
	return k == LP_STAGE_PREFILL ? "prefill" : k == LP_STAGE_DECODE ? "decode" : k == LP_STAGE_MIXED ? "mixed"
		: k == LP_STAGE_STEPS ? "decode_steps" : "other";
}

static json_t *stages(const struct lp_analysis *a)
{
	json_t *arr = json_array();
	size_t i, j;
	for (i = 0; i < a->stages.n_stages; i++) {
		const struct lp_stage *s = &a->stages.stages[i];
		json_t *o = json_object(), *it = json_array(), *notes = json_array();
		put(o, "name", lp_json_string(s->name));
		put(o, "domain", lp_json_string(s->domain));
		put(o, "kind", lp_json_string(kind_name(s->kind)));
		put(o, "iterations", json_integer((json_int_t)s->n_iters));
		put(o, "excluded_warmup", json_integer((json_int_t)s->excluded_warmup));
		put(o, "unclosed", json_integer((json_int_t)s->unclosed));
		put(o, "skipped_first", json_integer((json_int_t)s->skipped_first));
		put(o, "outliers", json_integer((json_int_t)s->n_outliers));
		put(o, "latency_ms", stat(&s->lat_ms));
		put(o, "host_ms", stat(&s->host_ms));
		put(o, "bound", lp_json_string(s->bound ? s->bound : "n/a"));
		put(o, "gpu_idle_frac", real(s->idle_frac));
		put(o, "overlap", a->stages.have_gpu && s->overlap > 0 ? real(s->overlap) : json_null());
		put(o, "tokens_total", isnan(s->tokens_per_s) ? json_null() : json_integer((json_int_t)s->tokens_total));
		put(o, "tokens_per_s", real(s->tokens_per_s));
		if (s->n_step_lat) {
			json_t *so = stat(&s->step_ms);
			put(so, "p50", real(s->step_p50));
			put(so, "p90", real(s->step_p90));
			put(so, "p99", real(s->step_p99));
			put(o, "step_latency_ms", so);
		} else {
			put(o, "step_latency_ms", json_null());
		}
		if (a->stages.have_gpu) {
			put(o, "gpu_busy_ms", stat(&s->gpu_ms));
			put(o, "gpu_span_ms", stat(&s->gpu_span_ms));
			put(o, "kernel_ms", stat(&s->kernel_ms));
			put(o, "kernels", stat(&s->kernels));
		} else {
			put(o, "gpu_busy_ms", json_null());
			put(o, "gpu_busy_ms_why", lp_json_string("CPU run: no GPU kernels recorded"));
			put(o, "gpu_span_ms", json_null());
			put(o, "kernel_ms", json_null());
			put(o, "kernels", json_null());
		}
		put(o, "steps", stat(&s->steps));
		for (j = 0; j < s->n_iters; j++) {
			const struct lp_stage_iter *x = &s->iters[j];
			json_t *io = json_object();
			put(io, "latency_ms", real((double)x->latency_ns / 1e6));
			put(io, "queue_wait_ms", real((double)x->wait_ns / 1e6));
			put(io, "host_ms", real((double)x->host_ns / 1e6));
			put(io, "gpu_busy_ms", a->stages.have_gpu ? real((double)x->gpu_busy_ns / 1e6) : json_null());
			put(io, "gpu_span_ms", a->stages.have_gpu ? real((double)x->gpu_span_ns / 1e6) : json_null());
			put(io, "kernel_ms", a->stages.have_gpu ? real((double)x->kernel_ns / 1e6) : json_null());
			put(io, "kernels", json_integer((json_int_t)x->kernels));
			put(io, "steps", json_integer((json_int_t)x->steps));
			put(io, "payload", x->has_payload ? json_integer((json_int_t)x->payload) : json_null());
			put(io, "outlier", json_boolean(x->outlier));
			json_array_append_new(it, io);
		}
		put(o, "per_iteration", it);
		for (j = 0; j < s->n_notes; j++) {
			const struct lp_stage_note *n = &s->notes[j];
			json_t *no = json_object();
			put(no, "name", lp_json_string(n->name));
			put(no, "calls", json_integer((json_int_t)n->calls));
			put(no, "host_ms_total", real((double)n->host_ns / 1e6));
			put(no, "kernel_ms_total", real((double)n->kernel_ns / 1e6));
			put(no, "kernels", json_integer((json_int_t)n->kernels));
			json_array_append_new(notes, no);
		}
		put(o, "nested_notes", notes);
		json_array_append_new(arr, o);
	}
	return arr;
}

/* stages.hooks and what the processes said of each (docs/summary-schema.md). */
static json_t *stage_hooks(const struct lp_analysis *a)
{
	json_t *arr = json_array();
	size_t i;
	for (i = 0; i < a->n_hooks; i++) {
		const struct lp_hook_row *h = &a->hooks[i];
		json_t *o = json_object();
		put(o, "hook", lp_json_string(h->hook));
		put(o, "matched", json_boolean(!h->warning));
		put(o, "calls", json_integer((json_int_t)h->calls));
		put(o, "payload_misses", json_integer((json_int_t)h->payload_misses));
		put(o, "processes", json_integer((json_int_t)h->processes));
		put(o, "module_imported", json_integer((json_int_t)h->imported));
		put(o, "found", json_integer((json_int_t)h->found));
		put(o, "warning", h->warning ? lp_json_string(h->warning) : json_null());
		json_array_append_new(arr, o);
	}
	return arr;
}

/* Which ranges were taken as which stage, and the warm-up rule applied (docs/summary-schema.md). */
static json_t *stage_mapping(const struct lp_analysis *a)
{
	const struct lp_stage_set *s = &a->stages;
	json_t *o = json_object(), *taken = json_object(), *sk = json_object();
	int role;
	size_t i;
	put(o, "source", lp_json_string(s->names_source ? s->names_source : "built-in defaults"));
	for (role = LP_ROLE_PREFILL; role < LP_ROLE_COUNT; role++) {
		json_t *arr = json_array();
		for (i = 0; i < s->n_map; i++) {
			const struct lp_stage_map_entry *e = &s->map[i];
			json_t *x;
			if ((int)e->role != role)
				continue;
			x = json_object();
			put(x, "domain", lp_json_string(e->domain));
			put(x, "name", lp_json_string(e->name));
			put(x, "ranges", json_integer((json_int_t)e->ranges));
			put(x, "ignored", json_integer((json_int_t)e->ignored));
			json_array_append_new(arr, x);
		}
		put(taken, lp_stage_role_name(role), arr);
	}
	put(o, "ranges", taken);
	put(o, "truncated", json_boolean(s->map_truncated));
	put(sk, "iterations", json_integer((json_int_t)s->skip_first));
	put(sk, "rule", lp_json_string(s->skip_auto ? (s->have_warmup_range ? "auto: a warm-up range exists, nothing skipped"
								       : "auto: no warm-up range, first iteration skipped")
						 : "run.skip_first"));
	put(o, "skip_first", sk);
	put(o, "decode_ends_at_last_step", json_integer((json_int_t)s->decode_ends_moved));
	return o;
}

static json_t *perf(const struct lp_perf *p)
{
	json_t *o = json_object();
	put(o, "stage", lp_json_string(p->label));
	put_num(o, "flops", &p->flops);
	put_num(o, "bytes", &p->bytes);
	put_num(o, "gpu_s", &p->gpu_s);
	put_num(o, "host_s", &p->host_s);
	put_num(o, "latency_s", &p->lat_s);
	put_num(o, "tflops_per_s", &p->tflops_per_s);
	put_num(o, "gb_per_s", &p->gbs);
	put_num(o, "mfu", &p->mfu);
	put_num(o, "mbu", &p->mbu);
	put_num(o, "mfu_latency", &p->mfu_lat);
	put_num(o, "mbu_latency", &p->mbu_lat);
	put_num(o, "ncu_flops", &p->ncu_flops);
	put_num(o, "ncu_coverage", &p->ncu_coverage);
	return o;
}

static json_t *kernels(const struct lp_analysis *a)
{
	json_t *arr = json_array();
	size_t i;
	for (i = 0; i < a->kernels.n_rows; i++) {
		const struct lp_kernel_row *r = &a->kernels.rows[i];
		json_t *o = json_object(), *st = json_object();
		put(o, "kernel_name", lp_json_string(r->name));
		put(o, "short_name", lp_json_string(r->short_name));
		put(o, "label", lp_json_string(r->label ? r->label : r->short_name));
		put(o, "device", json_integer(r->device));
		put(o, "total_ms", real(r->total_ms));
		put(o, "calls", json_integer((json_int_t)r->calls));
		put(o, "mean_ms", real(r->mean_ms));
		put(o, "min_ms", real(r->min_ms));
		put(o, "max_ms", real(r->max_ms));
		put(o, "std_ms", real(r->std_ms));
		put(o, "busy_ms", real(r->busy_ms));
		put(o, "share", real(r->share));
		put(o, "family", lp_json_string(lp_kname_family_name(r->family)));
		put(st, "prefill_ms", real(r->stage_ms[0]));
		put(st, "decode_ms", real(r->stage_ms[1]));
		put(st, "other_ms", real(r->stage_ms[2]));
		put(o, "stage_ms", st);
		if (a->kernels.sampled) {   /* only sampled traces: other summaries keep their bytes */
			put(o, "sampled", json_boolean(r->sampled));
			put(o, "ci_ms", r->sampled && r->ci_ms >= 0 ? real(r->ci_ms) : r->sampled ? json_null() : real(0));
			put(o, "rerun_ci_ms", r->sampled && r->rerun_ms >= 0 ? real(r->rerun_ms) : r->sampled ? json_null() : real(0));
		}
		if (r->ncu.joined) {
			json_t *n = json_object();
			put(n, "records", json_integer((json_int_t)r->ncu.records));
			put(n, "duration_ns", real(r->ncu.duration_ns));
			put(n, "sm_throughput_pct", real(r->ncu.sm_pct));
			put(n, "dram_throughput_pct", real(r->ncu.dram_pct));
			put(n, "achieved_occupancy_pct", real(r->ncu.occupancy_pct));
			put(n, "dram_bytes", real(r->ncu.dram_bytes));
			put(n, "tensor_flops", real(r->ncu.tensor_flops));
			put(n, "fp32_flops", real(r->ncu.fp32_flops));
			put(n, "flops", real(r->ncu.flops));
			put(n, "flop_per_byte", real(r->ncu.intensity));
			put(n, "achieved_flops_per_s", real(r->ncu.achieved_flops_per_s));
			put(n, "achieved_bytes_per_s", real(r->ncu.achieved_bytes_per_s));
			put(n, "roofline", lp_json_string(lp_roofline_name(r->ncu.roofline)));
			put(o, "ncu", n);
		} else {
			put(o, "ncu", json_null());
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *operators(const struct lp_analysis *a)
{
	json_t *arr = json_array();
	size_t i;
	for (i = 0; i < a->ops.n_rows; i++) {
		const struct lp_op_row *r = &a->ops.rows[i];
		json_t *o = json_object();
		put(o, "stage", lp_json_string(r->stage));
		put(o, "name", lp_json_string(r->name));
		put(o, "source", lp_json_string(r->pytorch ? "pytorch" : "workload"));
		put(o, "calls", json_integer((json_int_t)r->calls));
		put(o, "kernels", json_integer((json_int_t)r->kernels));
		put(o, "gpu_incl_ms", a->stages.have_gpu ? real(r->gpu_incl_ms) : json_null());
		put(o, "gpu_excl_ms", a->stages.have_gpu ? real(r->gpu_excl_ms) : json_null());
		put(o, "host_ms", real(r->host_ms));
		put(o, "share", r->share >= 0 ? real(r->share) : json_null());
		put(o, "zero_gpu_why", r->zero_gpu_why ? lp_json_string(r->zero_gpu_why) : json_null());
		if (a->ops.sampled) {
			put(o, "sampled", json_boolean(r->sampled));
			put(o, "ci_ms", r->sampled && r->ci_ms >= 0 ? real(r->ci_ms) : r->sampled ? json_null() : real(0));
			put(o, "rerun_ci_ms", r->sampled && r->rerun_ms >= 0 ? real(r->rerun_ms) : r->sampled ? json_null() : real(0));
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *model(const struct lp_analysis *a)
{
	json_t *o = json_object(), *p;
	const struct lp_model_shape *m = &a->model;
	if (!a->have_model) {
		put(o, "known", json_false());
		put(o, "why", lp_json_string(a->model_why));
		return o;
	}
	put(o, "known", json_true());
	put(o, "name", lp_json_string(m->name));
	put(o, "family", lp_json_string(m->family));
	put(o, "dtype", lp_json_string(m->dtype));
	put(o, "hidden_size", json_integer(m->hidden_size));
	put(o, "intermediate_size", json_integer(m->intermediate_size));
	put(o, "num_hidden_layers", json_integer(m->num_hidden_layers));
	put(o, "num_attention_heads", json_integer(m->num_attention_heads));
	put(o, "num_key_value_heads", json_integer(m->num_key_value_heads));
	put(o, "head_dim", json_integer(m->head_dim));
	put(o, "vocab_size", json_integer(m->vocab_size));
	put(o, "tie_word_embeddings", json_boolean(m->tie_word_embeddings));
	put(o, "n_routed_experts", json_integer(m->n_routed_experts));
	put(o, "n_shared_experts", json_integer(m->n_shared_experts));
	put(o, "num_experts_per_tok", json_integer(m->num_experts_per_tok));
	put(o, "moe_intermediate_size", json_integer(m->moe_intermediate_size));
	put(o, "first_k_dense_replace", json_integer(m->first_k_dense_replace));
	p = json_object();
	put(p, "total", real(a->params.total));
	put(p, "matmul_active_per_token", real(a->params.matmul_active));
	put(o, "params", p);
	return o;
}

/* env.json without the search paths (PATH, LD_LIBRARY_PATH: long, personal, and no help in
 * reading the numbers); env.json keeps them, home folders written as ~. */
static json_t *environment(const struct lp_analysis *a)
{
	json_t *e = a->env ? json_deep_copy(a->env) : json_null();
	json_t *vars = json_object_get(e, "environment");
	if (json_is_object(vars)) {
		json_object_del(vars, "PATH");
		json_object_del(vars, "LD_LIBRARY_PATH");
	}
	return e;
}

static json_t *device(const struct lp_analysis *a)
{
	json_t *o = json_object(), *pk = json_object();
	if (a->have_device) {
		put(o, "name", lp_json_string(a->device.name));
		put(o, "id", json_integer(a->device.id));
		put(o, "sm_count", json_integer(a->device.sm_count));
		put(o, "cc", json_sprintf("%d.%d", a->device.cc_major, a->device.cc_minor));
		put(o, "sm_clock_mhz", json_integer(a->device.sm_clock_mhz));
		put(o, "mem_clock_mhz", json_integer(a->device.mem_clock_mhz));
		put(o, "mem_bus_width_bits", json_integer(a->device.mem_bus_width_bits));
		put(o, "mem_bytes", json_integer((json_int_t)a->device.mem_bytes));
	} else {
		put(o, "name", json_null());
	}
	put(pk, "matched", a->peak.matched[0] ? lp_json_string(a->peak.matched) : json_null());
	put(pk, "tflops", a->peak.flops_valid ? real(a->peak.flops_per_s / 1e12) : json_null());
	put(pk, "tflops_source", lp_json_string(a->peak.flops_source));
	put(pk, "bw_gbs", a->peak.bw_valid ? real(a->peak.bytes_per_s / 1e9) : json_null());
	put(pk, "bw_source", lp_json_string(a->peak.bw_source));
	put(pk, "ridge_flop_per_byte", a->kernels.ridge_flop_per_byte > 0 ? real(a->kernels.ridge_flop_per_byte) : json_null());
	put(o, "peak", pk);
	return o;
}

int lp_report_summary_json(const struct lp_analysis *a, struct lp_buf *out, struct lp_err *err)
{
	json_t *root = json_object(), *o, *arr, *tk, *rc;
	size_t i;
	char *text;
	int k;
	put(root, "schema_version", json_integer(a->schema_version));
	put(root, "run_id", lp_json_string(a->run_id));
	put(root, "mode", lp_json_string(a->mode));
	o = json_object();
	put(o, "path", lp_json_string(a->source));
	put(o, "kind", lp_json_string(a->source_kind));
	put(root, "source", o);
	arr = json_array();
	for (i = 0; i < a->n_phases; i++) {
		json_t *p = json_object();
		put(p, "name", lp_json_string(a->phases[i].name));
		put(p, "status", lp_json_string(a->phases[i].status));
		put(p, "reason", lp_json_string(a->phases[i].reason));
		json_array_append_new(arr, p);
	}
	put(root, "phases", arr);
	put(root, "environment", environment(a));
	put(root, "device", device(a));
	put(root, "model", model(a));
	o = json_object();
	put(o, "batch", a->batch ? json_integer(a->batch) : json_null());
	put(o, "prompt_len", a->prompt_len ? json_integer(a->prompt_len) : json_null());
	put(o, "decode_steps", a->steps ? json_integer(a->steps) : json_null());
	put(o, "why", a->tokens_why[0] ? lp_json_string(a->tokens_why) : json_null());
	put_num(o, "prefill_tokens", &a->prefill_tokens);
	put_num(o, "decode_tokens", &a->decode_tokens);
	put_num(o, "decode_tokens_per_s", &a->decode_tokens_per_s);
	put_num(o, "decode_step_ms", &a->decode_step_ms);
	put_num(o, "ttft_ms", &a->ttft_ms);
	put(root, "tokens", o);
	o = json_object();
	put(o, "model", a->model_source[0] ? lp_json_string(a->model_source) : json_null());
	put(o, "batch", a->batch_source && *a->batch_source ? lp_json_string(a->batch_source) : json_null());
	put(o, "prompt_len", a->prompt_source && *a->prompt_source ? lp_json_string(a->prompt_source) : json_null());
	put(o, "decode_steps", a->steps_source && *a->steps_source ? lp_json_string(a->steps_source) : json_null());
	put(o, "program_parameters", a->auto_params > 0 ? real(a->auto_params) : json_null());
	put(root, "sources", o);
	o = json_object();
	put(o, "workload_reported", json_boolean(a->own.valid));
	put(o, "tolerance", real(LP_SELF_CHECK_TOL));
	put(o, "failed", json_boolean(a->check_failed));
	put(o, "rank", a->check_rank_label[0] ? json_integer(a->own.rank) : json_null());
	arr = json_array();
	for (i = 0; i < a->n_checks; i++) {
		json_t *c = json_object();
		put(c, "what", lp_json_string(a->checks[i].what));
		put(c, "llmprof", real(a->checks[i].ours));
		put(c, "workload", real(a->checks[i].theirs));
		put(c, "diff", real(a->checks[i].diff));
		json_array_append_new(arr, c);
	}
	put(o, "checks", arr);
	{
		const struct lp_step_check *c = &a->step_check;
		json_t *s = json_null();
		if (c->theirs) {
			s = json_object();
			put(s, "compared", json_boolean(c->done));
			put(s, "llmprof_steps", json_integer((json_int_t)c->ours));
			put(s, "workload_steps", json_integer((json_int_t)c->theirs));
			put(s, "why_not", c->done || !c->why_not ? json_null() : lp_json_string(c->why_not));
			put(s, "within_pct", real(LP_STEP_CHECK_PCT));
			put(s, "within", c->done ? json_integer((json_int_t)c->within) : json_null());
			put(s, "median_abs_diff_pct", c->done ? real(c->median_abs_pct) : json_null());
			put(s, "max_abs_diff_pct", c->done ? real(c->max_abs_pct) : json_null());
			put(s, "max_at_step", c->done ? json_integer((json_int_t)c->max_at) : json_null());
			put(s, "median_gap_ms", c->done ? real(c->median_gap_ms) : json_null());
			put(s, "gap_p10_ms", c->done ? real(c->gap_p10_ms) : json_null());
			put(s, "gap_p90_ms", c->done ? real(c->gap_p90_ms) : json_null());
		}
		put(o, "steps", s);
	}
	put(root, "self_check", o);
	if (a->baseline_asked)
		put(root, "baseline", lp_baseline_json(a));
	put(root, "std", lp_json_string("sample (n - 1)"));
	put(root, "have_gpu", json_boolean(a->stages.have_gpu));
	put(root, "top_level_fallback", json_boolean(a->stages.top_level_fallback));
	put(root, "stages", stages(a));
	put(root, "stage_mapping", stage_mapping(a));
	if (lp_ranks_report_wanted(&a->ranks))
		put(root, "ranks", lp_ranks_json(&a->ranks));
	put(root, "stage_hooks", stage_hooks(a));
	o = json_object();
	put(o, "span_ms", real((double)a->stages.run_span_ns / 1e6));
	put(o, "gpu_busy_ms", a->stages.have_gpu ? real((double)a->stages.run_busy_ns / 1e6) : json_null());
	put(o, "kernel_launches", json_integer((json_int_t)a->stages.n_kernels));
	put(root, "whole_run", o);
	arr = json_array();
	for (k = 0; k < 3; k++)
		json_array_append_new(arr, perf(&a->perf[k]));
	put(root, "perf", arr);
	arr = json_array();
	for (k = 0; k < 2; k++) {
		const struct lp_waterfall *w = &a->waterfall[k];
		json_t *wo = json_object(), *items = json_array(), *gaps = json_array(), *top = json_array();
		put(wo, "stage", lp_json_string(w->stage));
		put(wo, "unit", lp_json_string(w->unit));
		put(wo, "valid", json_boolean(w->valid));
		if (!w->valid) {
			put(wo, "why", lp_json_string(w->why));
			json_decref(items);
			json_decref(gaps);
			json_decref(top);
			json_array_append_new(arr, wo);
			continue;
		}
		put(wo, "units", real(w->units));
		put(wo, "latency_ms", real(w->latency_ms));
		put(wo, "floor_ms", real(w->floor_ms));
		put(wo, "floor_source", lp_json_string(w->floor_source));
		put(wo, "floor_measured_ms", w->floor_measured_ms > 0 ? real(w->floor_measured_ms) : json_null());
		put(wo, "measured_bw_gbs", a->measured_bw_gbs > 0 ? real(a->measured_bw_gbs) : json_null());
		put(wo, "busy_ms", real(w->busy_ms));
		put(wo, "kernel_ms", real(w->kernel_ms));
		put(wo, "overlap_ms", real(w->overlap_ms));
		put(wo, "used_ncu", json_boolean(w->used_ncu));
		for (i = 0; i < w->n_items; i++) {
			static const char *const kinds[] = { "floor", "kernel", "residual", "idle", "overlap" };
			json_t *it = json_object();
			put(it, "kind", lp_json_string(kinds[w->items[i].kind]));
			put(it, "label", lp_json_string(w->items[i].label));
			put(it, "ms", real(w->items[i].ms));
			if (w->items[i].kind == LP_WF_KERNEL) {
				put(it, "floor_ms", real(w->items[i].floor_ms));
				put(it, "floor_source", lp_json_string(w->items[i].floor_source));
			}
			put(it, "fix", lp_json_string(w->items[i].fix));
			json_array_append_new(items, it);
		}
		put(wo, "items", items);
		for (i = 0; i < 3; i++)
			if (w->top[i] >= 0)
				json_array_append_new(top, json_integer(w->top[i]));
		put(wo, "top_items", top);
		for (i = 0; i < w->n_gaps; i++) {
			json_t *g = json_object();
			put(g, "where", lp_json_string(w->gaps[i].label));
			put(g, "ms", real(w->gaps[i].ms));
			put(g, "count", real(w->gaps[i].count));
			json_array_append_new(gaps, g);
		}
		put(wo, "largest_gaps", gaps);
		if (w->gaps_sampled) {   /* only sampled traces: other summaries keep their bytes */
			put(wo, "sampled", json_true());
			put(wo, "gaps_recorded_steps", json_integer((json_int_t)w->gaps_steps));
		}
		json_array_append_new(arr, wo);
	}
	put(root, "waterfall", arr);
	o = json_object();
	put(o, "scope", lp_json_string("measured iterations, warm-up excluded"));
	put(o, "total_ms", real(a->kernels.total_ms));
	put(o, "busy_ms", real(a->kernels.busy_ms));
	put(o, "warmup_ms", real((double)a->stages.warmup_kernel_ns / 1e6));
	put(o, "ncu_records", json_integer((json_int_t)a->kernels.n_ncu_records));
	put(o, "ncu_joined_kernels", json_integer((json_int_t)a->kernels.n_joined_rows));
	if (a->kernels.sampled) {
		json_t *smp = json_object();
		put(smp, "units_recorded", json_integer(a->kernels.sample_n));
		put(smp, "units_sampled_stratum", json_integer(a->kernels.sample_N));
		put(smp, "units_exact_stratum", json_integer(a->kernels.sample_exact));
		if (a->kernels.sample_missing)   /* none of the sampled stratum: the first units stand for it */
			put(smp, "from_first_units", json_true());
		put(smp, "confidence", real(0.95));
		put(smp, "rerun_sd_pct", real(a->rerun_sd_pct));
		put(o, "sampled", smp);
	}
	put(o, "rows", kernels(a));
	put(root, "kernels", o);
	put(root, "tracing", lp_tracing_mode_json(a));
	if (a->ncu_sampling)   /* only sampled runs: the summaries of other runs keep their bytes */
		put(root, "ncu_sampling", lp_report_ncu_coverage_json(a->ncu_sampling));
	put(root, "operators", operators(a));
	o = json_object();
	put(o, "processes", json_integer((json_int_t)a->n_processes));
	put(o, "tracer_overhead_ms", real((double)a->tracer_overhead_ns / 1e6));
	put(o, "dropped_records", json_integer((json_int_t)a->dropped_records));
	put(o, "dropped_at_detach", json_integer((json_int_t)a->dropped_at_detach));
	put(o, "traced_s", a->traced_s > 0 ? real(a->traced_s) : json_null());
	put(o, "untraced_s", a->untraced_s > 0 ? real(a->untraced_s) : json_null());
	put(root, "overhead", o);
	tk = json_array();
	rc = json_array();
	for (i = 0; i < a->n_advice; i++) {
		json_t *x = json_object();
		put(x, "rule", lp_json_string(a->advice[i].rule));
		put(x, "text", lp_json_string(a->advice[i].text));
		json_array_append_new(a->advice[i].kind == LP_ADVICE_TAKEAWAY ? tk : rc, x);
	}
	o = json_object();
	put(o, "takeaways", tk);
	put(o, "recommendations", rc);
	put(root, "advice", o);
	text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(12) | JSON_ENSURE_ASCII);
	json_decref(root);
	if (!text)
		return lp_err_set(err, LP_EOTHER, "cannot encode summary.json (out of memory or invalid UTF-8 in a name)");
	lp_buf_adds(out, text);
	lp_buf_addc(out, '\n');
	free(text);
	return out->oom ? lp_oom(err) : 0;
}
