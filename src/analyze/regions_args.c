/* regions_args.c: `profiling.ncu.regions` -> a resolved region config, ncu flags and the preset
 * the ncu phase runs with (see regions_args.h). Sits between the config (config/yaml.c loads it)
 * and the ncu phase (collect/ncu.c builds the command line); the region report reads the same
 * resolved config, so both sides agree on the expressions. */
#include "analyze/regions_args.h"

#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"
#include "core/vec.h"

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

void lp_regions_list_release(struct lp_regions_list *l)
{
	size_t i;
	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
	l->cap = 0;
}

static int list_add(struct lp_regions_list *l, const char *s)
{
	size_t n = strlen(s);
	if (LP_ARRAY_RESERVE(l->v, l->cap, l->n + 2, NULL) < 0)   /* the entry and the NULL after it */
		return -1;
	if (!(l->v[l->n] = malloc(n + 1)))
		return -1;
	memcpy(l->v[l->n], s, n + 1);
	l->n++;
	l->v[l->n] = NULL;
	return 0;
}

/* A list of non-empty strings at `key` of `o` (absent or null: empty). */
static int get_list(const json_t *o, const char *key, const char *path, struct lp_regions_list *out,
	struct lp_err *err)
{
	json_t *v = o ? json_object_get(o, key) : NULL, *x;
	size_t i;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return lp_err_set(err, LP_EUSAGE, "'%s' must be a list", path);
	json_array_foreach(v, i, x) {
		if (!json_is_string(x) || !*json_string_value(x))
			return lp_err_set(err, LP_EUSAGE, "'%s[%zu]' must be a non-empty string", path, i);
		if (list_add(out, json_string_value(x)) < 0)
			return oom(err);
	}
	return 0;
}

static int get_word(const json_t *o, const char *key, const char *const *allowed, char *out, size_t cap,
	struct lp_err *err)
{
	json_t *v = json_object_get(o, key);
	size_t i;
	out[0] = '\0';
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return lp_err_set(err, LP_EUSAGE, "'profiling.ncu.%s' must be a string", key);
	for (i = 0; allowed[i]; i++)
		if (!strcmp(json_string_value(v), allowed[i])) {
			snprintf(out, cap, "%s", allowed[i]);
			return 0;
		}
	lp_err_set(err, LP_EUSAGE, "'profiling.ncu.%s' is '%s'", key, json_string_value(v));
	{
		struct lp_buf b = LP_BUF_INIT;
		for (i = 0; allowed[i]; i++)
			lp_buf_addf(&b, "%s%s", i ? ", " : "", allowed[i]);
		lp_err_hint(err, "use one of: %s", b.data);
		lp_buf_release(&b);
	}
	return -1;
}

void lp_regions_cfg_release(struct lp_regions_cfg *c)
{
	lp_regions_list_release(&c->include);
	lp_regions_list_release(&c->exclude);
	lp_regions_list_release(&c->kernels_include);
	lp_regions_list_release(&c->kernels_exclude);
	lp_regions_list_release(&c->sections);
	lp_regions_list_release(&c->metrics);
	if (c->resolved)
		json_decref(c->resolved);
	memset(c, 0, sizeof(*c));
}

int lp_regions_cfg_active(const struct lp_regions_cfg *c)
{
	return c->include.n > 0;
}

static int check_keys(const json_t *o, const char *const *known, const char *path, struct lp_err *err)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)(uintptr_t)o, key, v) {
		size_t i;
		int ok = 0;
		(void)v;
		for (i = 0; known[i]; i++)
			ok |= !strcmp(key, known[i]);
		if (!ok)
			return lp_err_set(err, LP_EUSAGE, "unknown key '%s.%s'", path, key);
	}
	return 0;
}

int lp_regions_cfg_load(const json_t *ncu, int reference_workload, struct lp_regions_cfg *out,
	struct lp_err *err)
{
	static const char *const replay[] = { "kernel", "application", "range", "app-range", NULL };
	static const char *const bases[] = { "function", "demangled", "mangled", NULL };
	static const char *const rkeys[] = { "include", "exclude", "kernels", "sections", "metrics", NULL };
	static const char *const kkeys[] = { "include", "exclude", NULL };
	static const char *const defaults[] = LP_REGIONS_DEFAULT_INCLUDE;
	const json_t *reg, *kern = NULL;
	json_t *rr, *arr;
	char *dump;
	size_t i;
	memset(out, 0, sizeof(*out));
	if (!json_is_object(ncu))
		return lp_err_set(err, LP_EUSAGE, "'profiling.ncu' must be a mapping");
	if (get_word(ncu, "replay_mode", replay, out->replay_mode, sizeof(out->replay_mode), err) < 0 ||
			get_word(ncu, "kernel_name_base", bases, out->kernel_name_base, sizeof(out->kernel_name_base), err) < 0)
		goto fail;
	if (!out->replay_mode[0])
		snprintf(out->replay_mode, sizeof(out->replay_mode), "kernel");
	reg = json_object_get(ncu, "regions");
	if (reg && !json_is_null(reg) && !json_is_object(reg)) {
		lp_err_set(err, LP_EUSAGE, "'profiling.ncu.regions' must be a mapping");
		goto fail;
	}
	if (reg && json_is_object(reg)) {
		if (check_keys(reg, rkeys, "profiling.ncu.regions", err) < 0)
			goto fail;
		kern = json_object_get(reg, "kernels");
		if (kern && !json_is_null(kern) && !json_is_object(kern)) {
			lp_err_set(err, LP_EUSAGE, "'profiling.ncu.regions.kernels' must be a mapping with include/exclude");
			goto fail;
		}
		if (kern && json_is_object(kern) && check_keys(kern, kkeys, "profiling.ncu.regions.kernels", err) < 0)
			goto fail;
		if (get_list(reg, "include", "profiling.ncu.regions.include", &out->include, err) < 0 ||
				get_list(reg, "exclude", "profiling.ncu.regions.exclude", &out->exclude, err) < 0 ||
				get_list(json_is_object(kern) ? kern : NULL, "include", "profiling.ncu.regions.kernels.include",
					&out->kernels_include, err) < 0 ||
				get_list(json_is_object(kern) ? kern : NULL, "exclude", "profiling.ncu.regions.kernels.exclude",
					&out->kernels_exclude, err) < 0 ||
				get_list(reg, "sections", "profiling.ncu.regions.sections", &out->sections, err) < 0 ||
				get_list(reg, "metrics", "profiling.ncu.regions.metrics", &out->metrics, err) < 0)
			goto fail;
	}
	if (!out->include.n && reference_workload) {
		for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
			if (list_add(&out->include, defaults[i]) < 0) {
				oom(err);
				goto fail;
			}
		out->include_defaulted = 1;
	}
	if (!out->metrics.n) {
		if (get_list(ncu, "metrics", "profiling.ncu.metrics", &out->metrics, err) < 0)
			goto fail;
		out->metrics_from_preset = 1;
	}
	/* validate the expressions and kernel patterns now, naming the key */
	{
		struct lp_regions r;
		int rc;
		out->spec.include = (const char *const *)out->include.v;
		out->spec.n_include = out->include.n;
		out->spec.exclude = (const char *const *)out->exclude.v;
		out->spec.n_exclude = out->exclude.n;
		out->spec.kernels_include = (const char *const *)out->kernels_include.v;
		out->spec.n_kernels_include = out->kernels_include.n;
		out->spec.kernels_exclude = (const char *const *)out->kernels_exclude.v;
		out->spec.n_kernels_exclude = out->kernels_exclude.n;
		out->spec.metrics = (const char *const *)out->metrics.v;
		out->spec.n_metrics = out->metrics.n;
		rc = lp_regions_init(&r, &out->spec, err);
		lp_regions_release(&r);
		if (rc < 0)
			goto fail;
	}
	/* the resolved preset and its fingerprint */
	out->resolved = json_deep_copy(ncu);
	if (!out->resolved) {
		oom(err);
		goto fail;
	}
	rr = json_object_get(out->resolved, "regions");
	if (!json_is_object(rr)) {
		rr = json_object();
		if (!rr || json_object_set_new(out->resolved, "regions", rr) < 0) {
			oom(err);
			goto fail;
		}
	}
	arr = json_array();
	for (i = 0; arr && i < out->include.n; i++)
		json_array_append_new(arr, json_string(out->include.v[i]));
	if (!arr || json_object_set_new(rr, "include", arr) < 0) {
		oom(err);
		goto fail;
	}
	dump = json_dumps(out->resolved, JSON_SORT_KEYS | JSON_COMPACT);
	if (!dump) {
		oom(err);
		goto fail;
	}
	lp_sha256_hex(dump, strlen(dump), out->fingerprint);
	free(dump);
	return 0;
fail:
	lp_regions_cfg_release(out);
	return -1;
}

/* ---- flags ---- */

static int add_escaped_regex(struct lp_buf *b, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\^$.|?*+()[]{}", *s))
			lp_buf_addc(b, '\\');
		lp_buf_addc(b, *s);
	}
	return b->oom ? -1 : 0;
}

int lp_regions_kernel_filter(const struct lp_regions_cfg *c, struct lp_buf *out)
{
	size_t i;
	lp_buf_reset(out);
	if (!c->kernels_include.n)
		return 0;
	if (c->kernels_include.n == 1 && strncmp(c->kernels_include.v[0], "regex:", 6) != 0)
		return lp_buf_adds(out, c->kernels_include.v[0]);
	lp_buf_adds(out, "regex:");
	for (i = 0; i < c->kernels_include.n; i++) {
		const char *k = c->kernels_include.v[i];
		if (i)
			lp_buf_addc(out, '|');
		if (!strncmp(k, "regex:", 6)) {
			lp_buf_addf(out, "(%s)", k + 6);
		} else {
			lp_buf_addc(out, '^');
			add_escaped_regex(out, k);
			lp_buf_addc(out, '$');
		}
	}
	return out->oom ? -1 : 0;
}

static int add2(struct lp_regions_list *l, const char *a, const char *b)
{
	return list_add(l, a) < 0 || (b && list_add(l, b) < 0) ? -1 : 0;
}

/* The metrics list for --metrics: the duration first, then regions.metrics, no duplicates. */
static int metrics_csv(const struct lp_regions_cfg *c, struct lp_buf *b)
{
	size_t i;
	lp_buf_reset(b);
	lp_buf_adds(b, LP_NCU_DURATION_METRIC);
	for (i = 0; i < c->metrics.n; i++)
		if (strcmp(c->metrics.v[i], LP_NCU_DURATION_METRIC) != 0)
			lp_buf_addf(b, ",%s", c->metrics.v[i]);
	return b->oom ? -1 : 0;
}

int lp_regions_ncu_flags(const struct lp_regions_cfg *c, struct lp_regions_list *out, struct lp_err *err)
{
	struct lp_buf b = LP_BUF_INIT;
	size_t i;
	int rc = 0;
	memset(out, 0, sizeof(*out));
	rc |= list_add(out, "--nvtx");
	for (i = 0; !rc && i < c->include.n; i++) {
		lp_buf_reset(&b);
		rc |= lp_region_pattern_ncu(c->include.v[i], &b) | add2(out, "--nvtx-include", b.data);
	}
	for (i = 0; !rc && i < c->exclude.n; i++) {
		lp_buf_reset(&b);
		rc |= lp_region_pattern_ncu(c->exclude.v[i], &b) | add2(out, "--nvtx-exclude", b.data);
	}
	if (!rc && c->kernels_include.n) {
		rc |= lp_regions_kernel_filter(c, &b) | add2(out, "--kernel-name", b.data);
		if (!rc && c->kernel_name_base[0])
			rc |= add2(out, "--kernel-name-base", c->kernel_name_base);
	}
	for (i = 0; !rc && i < c->sections.n; i++)
		rc |= add2(out, "--section", c->sections.v[i]);
	if (!rc && !c->metrics_from_preset && c->metrics.n)
		rc |= metrics_csv(c, &b) | add2(out, "--metrics", b.data);
	lp_buf_release(&b);
	if (rc) {
		lp_regions_list_release(out);
		return oom(err);
	}
	return 0;
}

static json_t *string_array(const struct lp_regions_list *l, int ncu_form)
{
	json_t *a = json_array();
	struct lp_buf b = LP_BUF_INIT;
	size_t i;
	for (i = 0; a && i < l->n; i++) {
		lp_buf_reset(&b);
		if (ncu_form)
			lp_region_pattern_ncu(l->v[i], &b);
		else
			lp_buf_adds(&b, l->v[i]);
		if (b.oom || json_array_append_new(a, json_string(b.data)) < 0) {
			json_decref(a);
			a = NULL;
		}
	}
	lp_buf_release(&b);
	return a;
}

int lp_regions_apply_preset(const json_t *ncu, const struct lp_regions_cfg *c, json_t **out, struct lp_err *err)
{
	json_t *p = json_deep_copy(ncu), *nvtx;
	struct lp_buf b = LP_BUF_INIT;
	int bad = 0;
	*out = NULL;
	if (!p)
		return oom(err);
	nvtx = json_object();
	bad |= !nvtx || json_object_set_new(nvtx, "include", string_array(&c->include, 1)) < 0 ||
		json_object_set_new(nvtx, "exclude", string_array(&c->exclude, 1)) < 0 ||
		json_object_set_new(p, "nvtx", nvtx) < 0;
	if (!bad && c->kernels_include.n) {
		bad |= lp_regions_kernel_filter(c, &b) < 0 ||
			json_object_set_new(p, "kernel_name", json_string(b.data)) < 0;
	}
	if (!bad && c->sections.n)
		bad |= json_object_set_new(p, "sections", string_array(&c->sections, 0)) < 0 ||
			json_object_set_new(p, "set", json_null()) < 0;
	if (!bad && c->metrics.n && !c->metrics_from_preset) {
		json_t *m = json_array();
		size_t i;
		bad |= !m || json_array_append_new(m, json_string(LP_NCU_DURATION_METRIC)) < 0;
		for (i = 0; !bad && i < c->metrics.n; i++)
			if (strcmp(c->metrics.v[i], LP_NCU_DURATION_METRIC) != 0)
				bad |= json_array_append_new(m, json_string(c->metrics.v[i])) < 0;
		bad |= json_object_set_new(p, "metrics", m) < 0;
	}
	if (!bad)
		bad |= json_object_set_new(p, "launch_count", json_integer(0)) < 0;
	lp_buf_release(&b);
	if (bad) {
		json_decref(p);
		return oom(err);
	}
	*out = p;
	return 0;
}

const char *lp_regions_replay_fallback(const char *replay_mode, const char *ncu_log)
{
	if (replay_mode && !strcmp(replay_mode, "range") && ncu_log &&
			strstr(ncu_log, "Unsupported API during capture"))
		return "app-range";
	return NULL;
}
