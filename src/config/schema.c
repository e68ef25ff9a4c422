/* schema.c: types, ranges and enums of the keys the rest of llmprof reads, checked on the
 * resolved tree after composition and overrides (config.c calls lp_config_validate). Keys not
 * listed here are only checked against the type of their default (override.c). The table is the
 * reference for docs/config.md's key list. */
#include "config/config_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/run_id.h"
#include "config/stage_hooks.h"

enum schema_type { T_INT, T_FLOAT, T_BOOL, T_STRING, T_STRLIST, T_RUN_ID, T_HOOKLIST, T_TRACE_SAMPLE };

enum {
	F_NULLABLE = 1,   /* null allowed */
	F_REQUIRED = 2,   /* must be present */
	F_MIN = 4,        /* value >= min */
	F_MIN_EXCL = 8,   /* value > min */
	F_NONEMPTY = 16,  /* strings: not "" */
};

struct schema_entry {
	const char *key;
	enum schema_type type;
	unsigned flags;
	double min;
	const char *choices;  /* "deep|light": an enum of strings */
};

static const struct schema_entry schema[] = {
	{ "run.mode", T_STRING, F_REQUIRED, 0, "deep|light" },
	{ "run.top_n_kernels", T_INT, F_REQUIRED | F_MIN, 1, NULL },
	{ "run.stage", T_STRING, F_REQUIRED | F_NONEMPTY, 0, NULL },
	{ "run.repeats", T_INT, F_REQUIRED | F_MIN, 1, NULL },
	{ "run.warmup", T_INT, F_REQUIRED | F_MIN, 0, NULL },
	{ "run.id", T_RUN_ID, F_NULLABLE, 0, NULL },
	{ "run.device", T_STRING, F_REQUIRED, 0, "auto|cpu|cuda" },
	{ "run.timeout_s", T_FLOAT, F_REQUIRED | F_MIN_EXCL, 0, NULL },
	{ "run.measure_overhead", T_BOOL, 0, 0, NULL },
	{ "run.probe_bandwidth", T_BOOL, 0, 0, NULL },
	{ "run.baseline", T_STRING, 0, 0, "none|reference" },
	{ "run.skip_first", T_INT, F_NULLABLE | F_MIN, 0, NULL },
	{ "run.auto_stages", T_BOOL, 0, 0, NULL },
	{ "run.auto_ops", T_BOOL, 0, 0, NULL },
	{ "run.auto_warmup", T_INT, F_MIN, 0, NULL },
	{ "trace.sample", T_TRACE_SAMPLE, 0, 0, NULL },
	{ "trace.rerun_sd", T_FLOAT, F_MIN, 0, NULL },
	{ "trace.warmup", T_STRING, F_NULLABLE, 0, "graphs|detach|record" },
	{ "stages.prefill", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "stages.decode_all", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "stages.decode_step", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "stages.warmup", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "stages.mixed", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "stages.hooks", T_HOOKLIST, F_NULLABLE, 0, NULL },
	{ "artifacts.stage2_dir", T_STRING, F_REQUIRED | F_NONEMPTY, 0, NULL },
	{ "artifacts.keep_last", T_INT, F_NULLABLE | F_MIN, 1, NULL },
	{ "tools.nsys", T_STRING, F_NULLABLE, 0, NULL },
	{ "tools.ncu", T_STRING, F_NULLABLE, 0, NULL },
	{ "tools.nsys_lib_dir", T_STRING, F_NULLABLE | F_NONEMPTY, 0, NULL },
	{ "device.peak_tflops", T_FLOAT, F_NULLABLE | F_MIN_EXCL, 0, NULL },
	{ "device.peak_bw_gbs", T_FLOAT, F_NULLABLE | F_MIN_EXCL, 0, NULL },
	{ "inputs.batch", T_INT, F_NULLABLE | F_MIN, 1, NULL },
	{ "inputs.prompt_len", T_INT, F_NULLABLE | F_MIN, 1, NULL },
	{ "inputs.new_tokens", T_INT, F_NULLABLE | F_MIN, 0, NULL },
	{ "profiling.ncu.target_processes", T_STRING, 0, 0, "all|application-only" },
	{ "profiling.ncu.replay_mode", T_STRING, 0, 0, "kernel|application|range|app-range" },
	{ "profiling.ncu.nvtx.include", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "profiling.ncu.nvtx.exclude", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "profiling.ncu.set", T_STRING, F_NULLABLE | F_NONEMPTY, 0, NULL },
	{ "profiling.ncu.sections", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "profiling.ncu.metrics", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "profiling.ncu.kernel_name", T_STRING, F_NULLABLE | F_NONEMPTY, 0, NULL },
	{ "profiling.ncu.kernel_name_base", T_STRING, 0, 0, "function|demangled|mangled" },
	{ "profiling.ncu.launch_skip", T_INT, F_MIN, 0, NULL },
	{ "profiling.ncu.launch_count", T_INT, F_MIN, 1, NULL },
	{ "profiling.ncu.clock_control", T_STRING, 0, 0, "base|none" },
	{ "profiling.ncu.cache_control", T_STRING, 0, 0, "all|none" },
	{ "profiling.ncu.force_overwrite", T_BOOL, 0, 0, NULL },
	{ "profiling.ncu.sample_per_group", T_INT, F_MIN, 0, NULL },
	{ "profiling.ncu.coverage", T_FLOAT, F_MIN_EXCL, 0, NULL },
	{ "profiling.ncu.budget_s", T_FLOAT, F_MIN, 0, NULL },
	{ "profiling.ncu.cache", T_BOOL, 0, 0, NULL },
	{ "profiling.ncu.cache_dir", T_STRING, F_NULLABLE | F_NONEMPTY, 0, NULL },
	{ "profiling.ncu.rank", T_INT, F_MIN, 0, NULL },
	{ "profiling.ncu.stop_early", T_BOOL, 0, 0, NULL },
	{ "profiling.ncu.warmup_picks", T_BOOL, 0, 0, NULL },
	{ "profiling.ncu.stall_s", T_FLOAT, F_MIN, 0, NULL },
	{ "profiling.ncu.nccl_p2p_off", T_BOOL, 0, 0, NULL },
	{ "profiling.ncu.regions.include", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "profiling.ncu.regions.exclude", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "profiling.ncu.regions.kernels.include", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "profiling.ncu.regions.kernels.exclude", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "profiling.ncu.regions.sections", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "profiling.ncu.regions.metrics", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "profiling.nsys.enable", T_BOOL, 0, 0, NULL },
	{ "profiling.nsys.trace", T_STRLIST, 0, 0, NULL },
	{ "profiling.nsys.sample", T_STRING, 0, 0, "none|process-tree|system-wide" },
	{ "profiling.nsys.capture_range", T_STRING, 0, 0, "none|cudaProfilerApi|nvtx|hotkey" },
	{ "profiling.nsys.capture_range_end", T_STRING, F_NULLABLE | F_NONEMPTY, 0, NULL },
	{ "profiling.nsys.nvtx_capture", T_STRING, F_NULLABLE | F_NONEMPTY, 0, NULL },
	{ "profiling.nsys.stats_reports", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "profiling.nsys.export_sqlite", T_BOOL, 0, 0, NULL },
	{ "profiling.nsys.extra_args", T_STRLIST, F_NULLABLE, 0, NULL },
	{ "model.name", T_STRING, F_NONEMPTY, 0, NULL },
	{ "model.hf_config", T_STRING, F_NULLABLE | F_NONEMPTY, 0, NULL },
	{ "model.vocab_size", T_INT, F_NULLABLE | F_MIN, 1, NULL },
	{ "model.hidden_size", T_INT, F_NULLABLE | F_MIN, 1, NULL },
	{ "model.intermediate_size", T_INT, F_NULLABLE | F_MIN, 1, NULL },
	{ "model.num_hidden_layers", T_INT, F_NULLABLE | F_MIN, 1, NULL },
	{ "model.num_attention_heads", T_INT, F_NULLABLE | F_MIN, 1, NULL },
	{ "model.num_key_value_heads", T_INT, F_NULLABLE | F_MIN, 1, NULL },
	{ "model.head_dim", T_INT, F_NULLABLE | F_MIN, 1, NULL },
	{ "model.max_position_embeddings", T_INT, F_NULLABLE | F_MIN, 1, NULL },
	{ "model.rope_theta", T_FLOAT, F_NULLABLE | F_MIN_EXCL, 0, NULL },
	{ "model.rms_norm_eps", T_FLOAT, F_NULLABLE | F_MIN_EXCL, 0, NULL },
	{ "model.tie_word_embeddings", T_BOOL, F_NULLABLE, 0, NULL },
	{ "model.n_routed_experts", T_INT, F_NULLABLE | F_MIN, 0, NULL },
	{ "model.n_shared_experts", T_INT, F_NULLABLE | F_MIN, 0, NULL },
	{ "model.num_experts_per_tok", T_INT, F_NULLABLE | F_MIN, 0, NULL },
	{ "model.moe_intermediate_size", T_INT, F_NULLABLE | F_MIN, 0, NULL },
	{ "model.first_k_dense_replace", T_INT, F_NULLABLE | F_MIN, 0, NULL },
};

static const char *type_word(enum schema_type t)
{
	switch (t) {
	case T_INT: return "an integer";
	case T_FLOAT: return "a number";
	case T_BOOL: return "a boolean (true or false)";
	case T_STRLIST: return "a list of strings";
	case T_HOOKLIST: return "a list of MODULE:QUALNAME=STAGE[@PAYLOAD] strings";
	case T_TRACE_SAMPLE: return "off, auto[,rate=R] or every=N[,first=K][,burst=B] (B divides N; also unit=NAME, seed=S, pick=random|first, lead=L, gen=N, stage=N)";
	default: return "a string";
	}
}

static int bad(const struct schema_entry *e, const json_t *v, const char *expected, struct lp_err *err)
{
	char shown[160];
	lp_cfg_value_text(v, shown, sizeof(shown));
	return lp_err_set(err, LP_EUSAGE, "invalid value '%s' for '%s': expected %s", shown, e->key,
		expected);
}

static int check_choice(const struct schema_entry *e, const json_t *v, struct lp_err *err)
{
	const char *s = json_string_value(v), *p = e->choices;
	size_t n = strlen(s);
	char list[256];
	size_t i, j = 0;
	while (p) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, s, n))
			return 0;
		p = bar ? bar + 1 : NULL;
	}
	for (i = 0; e->choices[i] && j + 3 < sizeof(list); i++) {
		if (e->choices[i] == '|') {
			list[j++] = ',';
			list[j++] = ' ';
		} else {
			list[j++] = e->choices[i];
		}
	}
	list[j] = '\0';
	return lp_err_set(err, LP_EUSAGE, "invalid value '%s' for '%s': expected one of %s", s, e->key, list);
}

/* trace.sample, the tracer's LLMPROF_TRACE_SAMPLE (docs/tracer.md "Sampled tracing"): `off`, or
 * comma-separated `auto`, `every=N` (1..1000000), `first=K` (0..1000000), `rate=R` (launches/s,
 * 0..1000000000), `unit=NAME` (1..63 characters), `burst=B` (B consecutive units per block, B
 * dividing every (128 without every=); CUPTI detached between bursts; 0: one unit per block with
 * CUPTI attached, as every=N alone), `lead=L` (0..64), `gen=N` (0..1000000: auto's fewest
 * launches of a generation to sample); `off` stands alone. The tracer parses the same
 * grammar (inject/sample.c) and falls back to exact tracing on anything else. */
static int trace_sample_ok(const char *s)
{
	int n_items = 0, have_off = 0;
	unsigned long long every = 0, burst = 0;
	while (*s) {
		const char *end = strchr(s, ',');
		size_t n = end ? (size_t)(end - s) : strlen(s), k;
		const char *eq = memchr(s, '=', n);
		unsigned long long v = 0, hi = 0;
		k = eq ? (size_t)(eq - s) : n;
		n_items++;
		if (!eq) {
			if (n == 3 && !memcmp(s, "off", 3))
				have_off = 1;
			else if (!(n == 4 && !memcmp(s, "auto", 4)))
				return 0;
		} else if (k == 4 && !memcmp(s, "unit", 4)) {
			if (n - 5 == 0 || n - 5 > 63)
				return 0;
		} else if (k == 4 && !memcmp(s, "pick", 4)) {
			if (!(n == 10 && !memcmp(s, "pick=first", 10)) && !(n == 11 && !memcmp(s, "pick=random", 11)))
				return 0;
		} else {
			size_t i, vn = n - k - 1;
			if (k == 5 && !memcmp(s, "every", 5))
				hi = 1000000;
			else if (k == 5 && !memcmp(s, "first", 5))
				hi = 1000000;
			else if (k == 4 && !memcmp(s, "rate", 4))
				hi = 1000000000;
			else if (k == 5 && !memcmp(s, "burst", 5))
				hi = 1000000;
			else if (k == 4 && !memcmp(s, "lead", 4))
				hi = 64;
			else if (k == 3 && !memcmp(s, "gen", 3))
				hi = 1000000;
			else if (k == 5 && !memcmp(s, "stage", 5))
				hi = 1000000;
			else if (k == 4 && !memcmp(s, "seed", 4))
				hi = 9999999999999999999ull;   /* the tracer reads up to 19 digits */
			else
				return 0;
			if (vn == 0 || vn > (hi > 10000000000ull ? 19u : 10u))
				return 0;
			for (i = 0; i < vn; i++) {
				if (eq[1 + i] < '0' || eq[1 + i] > '9')
					return 0;
				v = v * 10 + (unsigned)(eq[1 + i] - '0');
			}
			if (v > hi || (k == 5 && !memcmp(s, "every", 5) && v < 1))
				return 0;
			if (k == 5 && !memcmp(s, "every", 5))
				every = v;
			if (k == 5 && !memcmp(s, "burst", 5))
				burst = v;
		}
		s += n;
		if (*s == ',') {
			s++;
			if (!*s)
				return 0;
		}
	}
	/* bursts cut the block into clusters (every defaults to 128 with a burst) */
	if (burst && (every ? every : 128) % burst)
		return 0;
	return n_items > 0 && (!have_off || n_items == 1);
}

static int check_range(const struct schema_entry *e, const json_t *v, struct lp_err *err)
{
	double d = json_number_value(v);
	char expected[160];
	if (!(e->flags & (F_MIN | F_MIN_EXCL)))
		return 0;
	if ((e->flags & F_MIN) ? d >= e->min : d > e->min)
		return 0;
	snprintf(expected, sizeof(expected), "%s %s %g", type_word(e->type),
		(e->flags & F_MIN) ? ">=" : ">", e->min);
	return bad(e, v, expected, err);
}

static int check_entry(const struct schema_entry *e, const json_t *v, struct lp_err *err)
{
	size_t i;
	if (json_is_null(v)) {
		if (e->flags & F_NULLABLE)
			return 0;
		return bad(e, v, type_word(e->type), err);
	}
	switch (e->type) {
	case T_INT:
		if (!json_is_integer(v))
			return bad(e, v, type_word(e->type), err);
		return check_range(e, v, err);
	case T_FLOAT:
		if (!json_is_number(v) || !isfinite(json_number_value(v)))
			return bad(e, v, type_word(e->type), err);
		return check_range(e, v, err);
	case T_BOOL:
		return json_is_boolean(v) ? 0 : bad(e, v, type_word(e->type), err);
	case T_STRLIST:
		if (!json_is_array(v))
			return bad(e, v, type_word(e->type), err);
		for (i = 0; i < json_array_size(v); i++)
			if (!json_is_string(json_array_get(v, i)))
				return bad(e, v, type_word(e->type), err);
		return 0;
	case T_HOOKLIST:
		if (!json_is_array(v))
			return bad(e, v, type_word(e->type), err);
		if (json_array_size(v) > LP_STAGE_HOOKS_MAX)
			return lp_err_set(err, LP_EUSAGE, "'%s' lists more than %d hooks", e->key, LP_STAGE_HOOKS_MAX);
		for (i = 0; i < json_array_size(v); i++) {
			const json_t *x = json_array_get(v, i);
			char why[200];
			if (!json_is_string(x))
				return bad(e, v, type_word(e->type), err);
			if (lp_stage_hook_check(json_string_value(x), why, sizeof(why)) < 0) {
				lp_err_set(err, LP_EUSAGE, "invalid entry '%.200s' in '%s': %s", json_string_value(x), e->key, why);
				return lp_err_hint(err, "docs/nvtx.md \"Stage hooks by name\" has the grammar, e.g. "
					"'pkg.mod:Engine.forward_decode=decode_step@len(arg1)'");
			}
		}
		return 0;
	case T_TRACE_SAMPLE:
		if (!json_is_string(v) || !trace_sample_ok(json_string_value(v)))
			return bad(e, v, type_word(e->type), err);
		return 0;
	case T_RUN_ID:
		if (!json_is_string(v))
			return bad(e, v, "a string", err);
		return lp_rundir_validate_id(json_string_value(v), err);
	case T_STRING:
	default:
		if (!json_is_string(v))
			return bad(e, v, type_word(e->type), err);
		if ((e->flags & F_NONEMPTY) && !json_string_value(v)[0])
			return bad(e, v, "a non-empty string", err);
		return e->choices ? check_choice(e, v, err) : 0;
	}
}

int lp_cfg_schema_is_float(const char *key)
{
	size_t i;
	for (i = 0; i < sizeof(schema) / sizeof(schema[0]); i++)
		if (!strcmp(schema[i].key, key))
			return schema[i].type == T_FLOAT;
	return 0;
}

int lp_config_validate(const struct lp_config *cfg, struct lp_err *err)
{
	size_t i;
	if (!json_is_object(cfg->root))
		return lp_err_set(err, LP_EUSAGE, "the configuration is not a mapping");
	for (i = 0; i < sizeof(schema) / sizeof(schema[0]); i++) {
		const json_t *v = lp_cfg_lookup(cfg->root, schema[i].key);
		if (!v) {
			if (schema[i].flags & F_REQUIRED) {
				lp_err_set(err, LP_EUSAGE, "missing key '%s'", schema[i].key);
				return lp_err_hint(err, "llmprof needs it; conf/runner/stage2.yaml has the defaults");
			}
			continue;
		}
		if (check_entry(&schema[i], v, err) < 0)
			return -1;
	}
	return 0;
}

int lp_cfg_fill_defaults(json_t *root, struct lp_err *err)
{
	json_t *model = json_object_get(root, "model");
	if (json_is_object(model) && !json_object_get(model, "hf_config") &&
	    json_object_set_new(model, "hf_config", json_null()) < 0)
		return lp_oom(err);
	return 0;
}
