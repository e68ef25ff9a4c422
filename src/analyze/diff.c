/* diff.c: two runs' summary.json -> the rows of `llmprof diff` (see diff.h). Stage numbers come with
 * their per-iteration spread (a stat object: n, mean, std), kernels with the spread of their
 * launches; Welch's test (welch.c) decides between a change and noise. */
#include "analyze/diff.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/welch.h"
#include "core/str.h"
#include "core/vec.h"

static int str_cmp0(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

const char *lp_diff_verdict_name(enum lp_diff_verdict v)
{
	static const char *const names[] = { "within noise", "slower", "faster", "higher", "lower", "n/a", "added",
					     "removed" };
	return names[v];
}

void lp_diff_release(struct lp_diff *d)
{
	size_t i;
	for (i = 0; i < d->n_rows; i++) {
		free(d->rows[i].key);
		free(d->rows[i].label);
	}
	for (i = 0; i < d->n_env; i++)
		free(d->env[i]);
	free(d->rows);
	free(d->env);
	lp_buf_release(&d->narrative);
	memset(d, 0, sizeof(*d));
}

static char *dupf(const char *fmt, ...) LP_PRINTF(1, 2);
static char *dupf(const char *fmt, ...)
{
	struct lp_buf b = LP_BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	lp_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (b.oom) {
		lp_buf_release(&b);
		return NULL;
	}
	return lp_buf_detach(&b, NULL);
}

/* A number with its spread: mean, sample std and count (n = 0: no spread known). */
struct val {
	double v, std, n;
};

static struct val stat_of(const json_t *st)
{
	struct val x = { NAN, 0, 0 };
	if (json_is_number(json_object_get(st, "mean")) && json_integer_value(json_object_get(st, "n")) > 0) {
		x.v = json_number_value(json_object_get(st, "mean"));
		x.std = json_is_number(json_object_get(st, "std")) ? json_number_value(json_object_get(st, "std")) : 0;
		x.n = (double)json_integer_value(json_object_get(st, "n"));
	}
	return x;
}

static struct val plain(const json_t *v)
{
	struct val x = { json_is_number(v) ? json_number_value(v) : NAN, 0, 0 };
	return x;
}

/* min_effect < 0: no spread expected (information only). better: +1 lower is better, -1 higher is
 * better, 0 neither. */
static int add_row(struct lp_diff *d, enum lp_diff_section sec, char *key, char *label, const char *unit,
	struct val a, struct val b, int better, double min_effect)
{
	struct lp_diff_row *r;
	if (!key || !label) {
		free(key);
		free(label);
		return -1;
	}
	if (LP_ARRAY_RESERVE(d->rows, d->cap_rows, d->n_rows + 1, NULL) < 0) {
		free(key);
		free(label);
		return -1;
	}
	r = &d->rows[d->n_rows++];
	memset(r, 0, sizeof(*r));
	r->section = sec;
	r->key = key;
	r->label = label;
	r->unit = unit;
	r->a = a.v;
	r->b = b.v;
	r->delta = b.v - a.v;
	r->rel = isfinite(a.v) && a.v != 0 ? (b.v - a.v) / fabs(a.v) : NAN;
	r->p = -1;
	if (isnan(a.v) || isnan(b.v)) {
		r->verdict = isnan(a.v) && isnan(b.v) ? LP_DIFF_NA : isnan(a.v) ? LP_DIFF_ADDED : LP_DIFF_REMOVED;
		r->why = isnan(a.v) && isnan(b.v) ? "unknown in both runs" : NULL;
		if (isnan(a.v) != isnan(b.v))
			d->added += isnan(a.v), d->removed += isnan(b.v);
		return 0;
	}
	if (min_effect < 0) {
		r->verdict = LP_DIFF_NA;
		r->why = "no spread";
		return 0;
	}
	r->p = lp_welch_p(a.v, a.std, a.n, b.v, b.std, b.n);
	if (r->p < 0) {
		r->verdict = LP_DIFF_NA;
		r->why = "one iteration: no spread to judge by";
	} else if (r->p < LP_DIFF_ALPHA && isfinite(r->rel) && fabs(r->rel) >= min_effect) {
		if (better > 0)
			r->verdict = r->delta > 0 ? LP_DIFF_WORSE : LP_DIFF_BETTER;
		else if (better < 0)
			r->verdict = r->delta < 0 ? LP_DIFF_WORSE : LP_DIFF_BETTER;
		else
			r->verdict = r->delta > 0 ? LP_DIFF_HIGHER : LP_DIFF_LOWER;
	} else {
		r->verdict = LP_DIFF_NOISE;
	}
	return 0;
}

static const char *kind_key(const json_t *st)
{
	const char *k = json_string_value(json_object_get(st, "kind"));
	return k && !strcmp(k, "prefill") ? "prefill" : k && !strcmp(k, "decode") ? "decode" : NULL;
}

static const json_t *stage_named(const json_t *sum, const char *name)
{
	size_t i;
	const json_t *st;
	json_array_foreach(json_object_get(sum, "stages"), i, st)
		if (!strcmp(json_string_value(json_object_get(st, "name")) ? json_string_value(json_object_get(st, "name")) : "", name))
			return st;
	return NULL;
}

static const json_t *stage_kind(const json_t *sum, const char *kind)
{
	size_t i;
	const json_t *st;
	json_array_foreach(json_object_get(sum, "stages"), i, st) {
		const char *k = kind_key(st);
		if (k && !strcmp(k, kind))
			return st;
	}
	return NULL;
}

static int stages(struct lp_diff *d, const json_t *a, const json_t *b)
{
	static const struct { const char *field, *key, *label; int better; } m[] = {
		{ "latency_ms", "latency", "latency per iteration", 1 },
		{ "host_ms", "host", "host (launch/CPU) time per iteration", 1 },
		{ "gpu_busy_ms", "gpu_busy", "GPU busy per iteration", 1 },
		{ "kernels", "kernels", "kernels per iteration", 0 },
		{ "step_latency_ms", "step", "latency per decode step", 1 },
	};
	size_t i, j;
	const json_t *sa;
	json_array_foreach(json_object_get(a, "stages"), i, sa) {
		const char *name = json_string_value(json_object_get(sa, "name"));
		const json_t *sb = name ? stage_named(b, name) : NULL;
		const char *k = kind_key(sa);
		if (!name)
			continue;
		for (j = 0; j < sizeof(m) / sizeof(m[0]); j++) {
			const json_t *xa = json_object_get(sa, m[j].field), *xb = sb ? json_object_get(sb, m[j].field) : NULL;
			if (!json_is_object(xa) && !json_is_object(xb))
				continue;
			if (add_row(d, LP_DIFF_STAGE, dupf("%s.%s", k ? k : name, m[j].key), dupf("%s: %s", name, m[j].label),
				    j == 3 ? "" : "ms", stat_of(xa), stat_of(xb), m[j].better, LP_DIFF_MIN_STAGE) < 0)
				return -1;
		}
	}
	return 0;
}

/* TTFT, decode tokens/s and ms/step, with the spread of the latency they come from (delta method:
 * a ratio's relative std is its latency's). */
static int tokens(struct lp_diff *d, const json_t *a, const json_t *b)
{
	const json_t *ta = json_object_get(a, "tokens"), *tb = json_object_get(b, "tokens");
	const json_t *pa = json_object_get(stage_kind(a, "prefill"), "latency_ms");
	const json_t *pb = json_object_get(stage_kind(b, "prefill"), "latency_ms");
	const json_t *da = json_object_get(stage_kind(a, "decode"), "latency_ms");
	const json_t *db = json_object_get(stage_kind(b, "decode"), "latency_ms");
	struct val la = stat_of(da), lb = stat_of(db), x, y;
	if (add_row(d, LP_DIFF_TOKENS, dupf("ttft"), dupf("time to first token"), "ms", stat_of(pa), stat_of(pb), 1,
		    LP_DIFF_MIN_STAGE) < 0)
		return -1;
	x = plain(json_object_get(ta, "decode_tokens_per_s"));
	y = plain(json_object_get(tb, "decode_tokens_per_s"));
	x.std = la.v > 0 ? x.v * la.std / la.v : 0, x.n = la.n;
	y.std = lb.v > 0 ? y.v * lb.std / lb.v : 0, y.n = lb.n;
	if (add_row(d, LP_DIFF_TOKENS, dupf("decode.tokens_per_s"), dupf("decode tokens/s"), "tokens/s", x, y, -1,
		    LP_DIFF_MIN_STAGE) < 0)
		return -1;
	x = plain(json_object_get(ta, "decode_step_ms"));
	y = plain(json_object_get(tb, "decode_step_ms"));
	x.std = la.v > 0 ? x.v * la.std / la.v : 0, x.n = la.n;
	y.std = lb.v > 0 ? y.v * lb.std / lb.v : 0, y.n = lb.n;
	return add_row(d, LP_DIFF_TOKENS, dupf("decode.ms_per_step"), dupf("decode ms per step"), "ms", x, y, 1,
		LP_DIFF_MIN_STAGE);
}

static int perf(struct lp_diff *d, const json_t *a, const json_t *b)
{
	size_t i, j;
	const json_t *pa, *pb;
	static const char *const f[] = { "mfu", "mbu", "mfu_latency", "mbu_latency" };
	json_array_foreach(json_object_get(a, "perf"), i, pa) {
		const char *st = json_string_value(json_object_get(pa, "stage"));
		pb = json_array_get(json_object_get(b, "perf"), i);
		if (!st || !pb)
			continue;
		for (j = 0; j < 4; j++) {
			struct val x = plain(json_object_get(pa, f[j])), y = plain(json_object_get(pb, f[j]));
			if (isnan(x.v) && isnan(y.v))
				continue;
			x.v *= 100, y.v *= 100;
			if (add_row(d, LP_DIFF_PERF, dupf("%s.%s", st, f[j]), dupf("%s %s", st, f[j]), "%", x, y, 0, -1) < 0)
				return -1;
		}
	}
	return 0;
}

static double iterations(const json_t *sum)
{
	size_t i;
	const json_t *st;
	double n = 0;
	json_array_foreach(json_object_get(sum, "stages"), i, st)
		if (json_integer_value(json_object_get(st, "iterations")) > n)
			n = (double)json_integer_value(json_object_get(st, "iterations"));
	return n > 0 ? n : 1;
}

static const json_t *kernel_named(const json_t *sum, const char *name)
{
	size_t i;
	const json_t *r;
	json_array_foreach(json_object_get(json_object_get(sum, "kernels"), "rows"), i, r) {
		const char *n = json_string_value(json_object_get(r, "kernel_name"));
		if (n && !strcmp(n, name))
			return r;
	}
	return NULL;
}

/* Decode ms per step of a kernel row (0 without decode steps). */
static double per_step(const json_t *sum, const json_t *row)
{
	double steps = json_number_value(json_object_get(json_object_get(sum, "tokens"), "decode_steps"));
	double ms = json_number_value(json_object_get(json_object_get(row, "stage_ms"), "decode_ms"));
	return row && steps > 0 ? ms / iterations(sum) / steps : 0;
}

static int kernel_row(struct lp_diff *d, const json_t *a, const json_t *ra, const json_t *b, const json_t *rb)
{
	const json_t *r = ra ? ra : rb;
	const char *name = json_string_value(json_object_get(r, "kernel_name"));
	const char *label = json_string_value(json_object_get(r, "label"));
	double ia = iterations(a), ib = iterations(b);
	struct val x = { NAN, 0, 0 }, y = { NAN, 0, 0 };
	double calls_a = ra ? json_number_value(json_object_get(ra, "calls")) / ia : 0;
	double calls_b = rb ? json_number_value(json_object_get(rb, "calls")) / ib : 0;
	int same_calls = ra && rb && fabs(calls_a - calls_b) < 1e-9;
	struct lp_diff_row *row;
	/* per-launch durations when the launches per iteration are unchanged; else the time per iteration */
	if (ra) {
		x.v = same_calls ? json_number_value(json_object_get(ra, "mean_ms")) : json_number_value(json_object_get(ra, "total_ms")) / ia;
		x.std = same_calls ? json_number_value(json_object_get(ra, "std_ms")) : 0;
		x.n = same_calls ? json_number_value(json_object_get(ra, "calls")) : 0;
	}
	if (rb) {
		y.v = same_calls ? json_number_value(json_object_get(rb, "mean_ms")) : json_number_value(json_object_get(rb, "total_ms")) / ib;
		y.std = same_calls ? json_number_value(json_object_get(rb, "std_ms")) : 0;
		y.n = same_calls ? json_number_value(json_object_get(rb, "calls")) : 0;
	}
	if (add_row(d, LP_DIFF_KERNEL, dupf("kernel:%s", name ? name : "?"),
		    dupf("%s", label && *label ? label : name ? name : "?"), "ms", x, y, 1, same_calls ? LP_DIFF_MIN_KERNEL : -1) < 0)
		return -1;
	row = &d->rows[d->n_rows - 1];
	row->basis = same_calls ? "per launch" : "per iteration";
	if (ra && rb && !same_calls) {
		/* launches per iteration changed: a change in time is a change, not noise */
		row->why = "launches per iteration changed";
		if (isfinite(row->rel) && fabs(row->rel) >= LP_DIFF_MIN_KERNEL)
			row->verdict = row->delta > 0 ? LP_DIFF_WORSE : LP_DIFF_BETTER;
	}
	row->per_step_delta = per_step(b, rb) - per_step(a, ra);
	return 0;
}

static int kernels(struct lp_diff *d, const json_t *a, const json_t *b)
{
	size_t i;
	const json_t *r;
	json_array_foreach(json_object_get(json_object_get(a, "kernels"), "rows"), i, r) {
		const char *n = json_string_value(json_object_get(r, "kernel_name"));
		if (n && kernel_row(d, a, r, b, kernel_named(b, n)) < 0)
			return -1;
	}
	json_array_foreach(json_object_get(json_object_get(b, "kernels"), "rows"), i, r) {
		const char *n = json_string_value(json_object_get(r, "kernel_name"));
		if (n && !kernel_named(a, n) && kernel_row(d, a, NULL, b, r) < 0)
			return -1;
	}
	return 0;
}

static int operators(struct lp_diff *d, const json_t *a, const json_t *b)
{
	size_t i, j;
	const json_t *ra, *rb;
	double ia = iterations(a), ib = iterations(b);
	json_array_foreach(json_object_get(a, "operators"), i, ra) {
		const char *st = json_string_value(json_object_get(ra, "stage")), *nm = json_string_value(json_object_get(ra, "name"));
		struct val x = plain(json_object_get(ra, "gpu_incl_ms")), y = { NAN, 0, 0 };
		if (!st || !nm)
			continue;
		json_array_foreach(json_object_get(b, "operators"), j, rb)
			if (!str_cmp0(json_string_value(json_object_get(rb, "stage")), st) &&
			    !str_cmp0(json_string_value(json_object_get(rb, "name")), nm))
				y = plain(json_object_get(rb, "gpu_incl_ms"));
		x.v /= ia;
		y.v /= ib;
		if ((isnan(x.v) || x.v == 0) && (isnan(y.v) || y.v == 0))
			continue;   /* no GPU time on either side (ops outside stages, CPU runs) */
		if (add_row(d, LP_DIFF_OPERATOR, dupf("op:%s/%s", st, nm), dupf("%s / %s (GPU per iteration)", st, nm), "ms",
			    x, y, 1, -1) < 0)
			return -1;
	}
	return 0;
}

static int env_line(struct lp_diff *d, const char *what, const char *a, const char *b)
{
	char *s;
	if (!str_cmp0(a, b))
		return 0;
	if (LP_ARRAY_RESERVE(d->env, d->cap_env, d->n_env + 1, NULL) < 0)
		return -1;
	if (!(s = dupf("%s: %s -> %s", what, a ? a : "(none)", b ? b : "(none)")))
		return -1;
	d->env[d->n_env++] = s;
	return 0;
}

/* Leaf values of a JSON object as "a.b.c" -> text, into an object (for config.yaml). */
static void flatten(const json_t *v, const char *prefix, json_t *out)
{
	const char *k;
	json_t *x;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)(uintptr_t)v, k, x) {
			char *p = dupf("%s%s%s", prefix, *prefix ? "." : "", k);
			if (p)
				flatten(x, p, out);
			free(p);
		}
		return;
	}
	{
		char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
		if (s)
			json_object_set_new(out, prefix, json_string(s));
		free(s);
	}
}

static int environment(struct lp_diff *d, const json_t *a, const json_t *cfg_a, const json_t *b, const json_t *cfg_b)
{
	static const char *const dev[] = { "name", "sm_count", "sm_clock_mhz", "mem_clock_mhz", NULL };
	static const char *const tok[] = { "batch", "prompt_len", "decode_steps", NULL };
	char sa[64], sb[64];
	size_t i;
	const char *k;
	json_t *fa, *fb, *x;
	for (i = 0; dev[i]; i++) {
		const json_t *va = json_object_get(json_object_get(a, "device"), dev[i]);
		const json_t *vb = json_object_get(json_object_get(b, "device"), dev[i]);
		char *ta = va ? json_dumps(va, JSON_ENCODE_ANY) : NULL, *tb = vb ? json_dumps(vb, JSON_ENCODE_ANY) : NULL;
		char *what = dupf("device %s", dev[i]);
		int rc = what ? env_line(d, what, ta, tb) : -1;
		free(ta);
		free(tb);
		free(what);
		if (rc < 0)
			return -1;
	}
	for (i = 0; tok[i]; i++) {
		const json_t *va = json_object_get(json_object_get(a, "tokens"), tok[i]);
		const json_t *vb = json_object_get(json_object_get(b, "tokens"), tok[i]);
		snprintf(sa, sizeof(sa), "%lld", (long long)json_integer_value(va));
		snprintf(sb, sizeof(sb), "%lld", (long long)json_integer_value(vb));
		if (env_line(d, tok[i], json_is_integer(va) ? sa : "n/a", json_is_integer(vb) ? sb : "n/a") < 0)
			return -1;
	}
	fa = json_object();
	fb = json_object();
	flatten(json_object_get(a, "model"), "model", fa);
	flatten(json_object_get(b, "model"), "model", fb);
	if (cfg_a)
		flatten(cfg_a, "config", fa);
	if (cfg_b)
		flatten(cfg_b, "config", fb);
	json_object_del(fa, "config.run.id");
	json_object_del(fb, "config.run.id");
	json_object_foreach(fa, k, x)
		if (env_line(d, k, json_string_value(x), json_string_value(json_object_get(fb, k))) < 0)
			goto oom;
	json_object_foreach(fb, k, x)
		if (!json_object_get(fa, k) && env_line(d, k, NULL, json_string_value(x)) < 0)
			goto oom;
	json_decref(fa);
	json_decref(fb);
	return 0;
oom:
	json_decref(fa);
	json_decref(fb);
	return -1;
}

static int cmp_step_delta(const void *x, const void *y)
{
	const struct lp_diff_row *a = *(const struct lp_diff_row *const *)x, *b = *(const struct lp_diff_row *const *)y;
	double da = fabs(a->per_step_delta), db = fabs(b->per_step_delta);
	return (da < db) - (da > db);
}

/* "decode +8.1% (slower, p = 0.002): k_attn_decode +0.210 ms/step, ..., 3 new kernels" */
static int narrative(struct lp_diff *d)
{
	static const char *const keys[] = { "decode.latency", "prefill.latency" };
	const struct lp_diff_row **k;
	size_t i, n = 0, j;
	int s;
	k = malloc((d->n_rows + 1) * sizeof(*k));
	if (!k)
		return -1;
	for (i = 0; i < d->n_rows; i++)
		if (d->rows[i].section == LP_DIFF_KERNEL && d->rows[i].per_step_delta != 0)
			k[n++] = &d->rows[i];
	qsort(k, n, sizeof(*k), cmp_step_delta);
	for (s = 0; s < 2; s++) {
		const struct lp_diff_row *r = lp_diff_find(d, keys[s]);
		if (!r || isnan(r->rel))
			continue;
		lp_buf_addf(&d->narrative, "%s%s %+.1f%% (%s", d->narrative.len ? " " : "", s ? "Prefill" : "Decode",
			100 * r->rel, lp_diff_verdict_name(r->verdict));
		if (r->p >= 0)
			lp_buf_addf(&d->narrative, ", p = %.3g", r->p);
		lp_buf_adds(&d->narrative, ")");
		if (s == 0 && n) {
			lp_buf_adds(&d->narrative, ": ");
			for (j = 0; j < n && j < 3; j++)
				lp_buf_addf(&d->narrative, "%s%s %+.4f ms/step%s", j ? ", " : "", k[j]->label, k[j]->per_step_delta,
					k[j]->verdict == LP_DIFF_ADDED ? " (new)" : k[j]->verdict == LP_DIFF_REMOVED ? " (gone)" : "");
		}
		lp_buf_adds(&d->narrative, ".");
	}
	if (d->added || d->removed)
		lp_buf_addf(&d->narrative, "%s%zu kernel%s added, %zu removed.", d->narrative.len ? " " : "", d->added,
			d->added == 1 ? "" : "s", d->removed);
	if (!d->narrative.len)
		lp_buf_adds(&d->narrative, "No stage is in both runs; see the tables.");
	free(k);
	return d->narrative.oom ? -1 : 0;
}

const struct lp_diff_row *lp_diff_find(const struct lp_diff *d, const char *key)
{
	size_t i;
	for (i = 0; i < d->n_rows; i++)
		if (!strcmp(d->rows[i].key, key))
			return &d->rows[i];
	return NULL;
}

int lp_diff_runs(const json_t *a, const json_t *cfg_a, const json_t *b, const json_t *cfg_b, struct lp_diff *out,
	struct lp_err *err)
{
	json_int_t va = json_integer_value(json_object_get(a, "schema_version"));
	json_int_t vb = json_integer_value(json_object_get(b, "schema_version"));
	memset(out, 0, sizeof(*out));
	lp_buf_init(&out->narrative, 0);
	if (!json_is_integer(json_object_get(a, "schema_version")) || !json_is_integer(json_object_get(b, "schema_version")))
		return lp_err_set(err, LP_EUSAGE, "a summary.json has no schema_version");
	if (va != vb)
		return lp_err_set(err, LP_EUSAGE, "summary.json schema %lld vs %lld: the runs cannot be compared; "
			"rerun `llmprof report` on the older run", (long long)va, (long long)vb);
	if (stages(out, a, b) < 0 || tokens(out, a, b) < 0 || perf(out, a, b) < 0 || kernels(out, a, b) < 0 ||
	    operators(out, a, b) < 0 || environment(out, a, cfg_a, b, cfg_b) < 0 || narrative(out) < 0) {
		lp_diff_release(out);
		return lp_oom(err);
	}
	return 0;
}

int lp_diff_tables(const struct lp_kernel_table *a, const struct lp_kernel_table *b, struct lp_diff *out,
	struct lp_err *err)
{
	size_t i, j;
	memset(out, 0, sizeof(*out));
	lp_buf_init(&out->narrative, 0);
	out->table_mode = 1;
	for (i = 0; i < a->n_rows + b->n_rows; i++) {
		const struct lp_kernel_record *r = i < a->n_rows ? &a->rows[i] : &b->rows[i - a->n_rows];
		const struct lp_kernel_record *o = NULL;
		struct val x = { NAN, 0, 0 }, y = { NAN, 0, 0 };
		if (!r->kernel_name)
			continue;
		if (i < a->n_rows) {
			for (j = 0; j < b->n_rows && !o; j++)
				if (b->rows[j].kernel_name && !strcmp(b->rows[j].kernel_name, r->kernel_name))
					o = &b->rows[j];
			x.v = r->total_ms;
			y.v = o ? o->total_ms : NAN;
		} else {
			for (j = 0; j < a->n_rows && !o; j++)
				if (a->rows[j].kernel_name && !strcmp(a->rows[j].kernel_name, r->kernel_name))
					o = &a->rows[j];
			if (o)
				continue;   /* done from A's side */
			y.v = r->total_ms;
		}
		if (add_row(out, LP_DIFF_KERNEL, dupf("kernel:%s", r->kernel_name),
			    dupf("%s", r->short_name && *r->short_name ? r->short_name : r->kernel_name), "ms", x, y, 1,
			    -1) < 0) {
			lp_diff_release(out);
			return lp_oom(err);
		}
		out->rows[out->n_rows - 1].basis = "total";
	}
	lp_buf_addf(&out->narrative, "Kernel tables: %zu kernels in A, %zu in B; %zu added, %zu removed; total %.3f -> %.3f ms "
		"(%+.1f%%). Kernel tables carry no per-iteration spread: no verdicts.", a->n_rows, b->n_rows, out->added,
		out->removed, a->total_ms, b->total_ms, a->total_ms > 0 ? 100 * (b->total_ms - a->total_ms) / a->total_ms : 0.0);
	return out->narrative.oom ? lp_oom(err) : 0;
}
