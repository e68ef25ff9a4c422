/* workload_timings.c: trace/workload.stdout -> struct lp_own_timings (see workload_timings.h).
 * Read by the report rebuild; the analysis sets llmprof's numbers beside these for the self-check. */
#include "parse/workload_timings.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/fs.h"
#include "core/vec.h"

#define MAX_BYTES ((size_t)64 << 20)

enum { PF, DEC, STEP, TPS, MIX, N_KEYS };
static const char *const keys[N_KEYS] = { "prefill_ms", "decode_ms", "decode_ms_per_step", "tokens_per_s", "mixed_ms" };

static double value(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	double x;
	if (!json_is_number(v))
		return -1;
	x = json_number_value(v);
	return isfinite(x) && x >= 0 ? x : -1;
}

/* The lines of `text` one by one: the JSON objects among them (the caller decrefs). */
static json_t *next_object(const char *text, size_t len, size_t *pos)
{
	while (*pos < len) {
		const char *line = text + *pos, *nl = memchr(line, '\n', len - *pos);
		size_t n_line = nl ? (size_t)(nl - line) : len - *pos;
		json_t *o;
		*pos += n_line + 1;
		while (n_line && (line[0] == ' ' || line[0] == '\t')) {
			line++;
			n_line--;
		}
		if (!n_line || line[0] != '{')
			continue;
		o = json_loadb(line, n_line, JSON_DECODE_ANY, NULL);
		if (json_is_object(o))
			return o;
		json_decref(o);
	}
	return NULL;
}

/* An iteration line's step_ms onto *v (nv of cap); 0, 1 for a value that is no finite number >= 0
 * (the list is then unknown), -1 out of memory. */
static int add_steps(const json_t *s, double **v, size_t *nv, size_t *cap)
{
	size_t i;
	json_t *x;
	json_array_foreach(s, i, x) {
		double d = json_is_number(x) ? json_number_value(x) : -1;
		if (!isfinite(d) || d < 0)
			return 1;
		if (LP_ARRAY_RESERVE(*v, *cap, *nv + 1, NULL) < 0)
			return -1;
		(*v)[(*nv)++] = d;
	}
	return 0;
}

/* One pass over the lines: the timings, and with `steps` the iteration lines' step_ms
 * (workload_timings.h). 0, or -1 out of memory (no steps then). */
static int parse(const char *text, size_t len, struct lp_own_timings *out, double **steps, size_t *n_steps)
{
	double sum[N_KEYS] = { 0 }, summary[N_KEYS], *v = NULL;
	size_t n[N_KEYS] = { 0 }, pos = 0, k, nv = 0, cap = 0;
	int have_summary = 0, bad = 0;
	int64_t iters = 0, summary_iters = 0, rank = -1;
	json_t *o;
	memset(out, 0, sizeof(*out));
	while ((o = next_object(text, len, &pos)) != NULL) {
		if (json_is_true(json_object_get(o, "summary"))) {
			have_summary = 1;
			for (k = 0; k < N_KEYS; k++)
				summary[k] = value(o, keys[k]);
			summary_iters = json_is_integer(json_object_get(o, "iters")) ? json_integer_value(json_object_get(o, "iters")) : 0;
			rank = json_is_integer(json_object_get(o, "rank")) ? json_integer_value(json_object_get(o, "rank")) : -1;
		} else if (json_is_integer(json_object_get(o, "iter"))) {
			iters++;
			for (k = 0; k < N_KEYS; k++) {
				double x = value(o, keys[k]);
				if (x >= 0) {
					sum[k] += x;
					n[k]++;
				}
			}
			if (steps && !bad && json_is_array(json_object_get(o, "step_ms")))
				bad = add_steps(json_object_get(o, "step_ms"), &v, &nv, &cap);
		}
		json_decref(o);
	}
	for (k = 0; k < N_KEYS; k++) {
		double x = have_summary ? summary[k] : n[k] ? sum[k] / (double)n[k] : -1;
		if (!isfinite(x))
			x = -1;   /* per-iteration values whose sum overflows: unknown, as the header says */
		if (x >= 0)
			out->valid = 1;
		if (k == PF)
			out->prefill_ms = x;
		else if (k == DEC)
			out->decode_ms = x;
		else if (k == STEP)
			out->decode_ms_per_step = x;
		else if (k == MIX)
			out->mixed_ms = x;
		else
			out->tokens_per_s = x;
	}
	out->iters = have_summary && summary_iters > 0 ? summary_iters : iters;
	out->rank = rank >= 0 && rank <= INT32_MAX ? (int32_t)rank : -1;
	if (!steps)
		return 0;
	if (bad || !nv) {
		free(v);
		v = NULL;
		nv = 0;
	}
	*steps = v;
	*n_steps = nv;
	return bad < 0 ? -1 : 0;
}

void lp_workload_timings_parse(const char *text, size_t len, struct lp_own_timings *out)
{
	parse(text, len, out, NULL, NULL);
}

int lp_workload_steps_parse(const char *text, size_t len, double **out, size_t *n)
{
	struct lp_own_timings own;
	return parse(text, len, &own, out, n);
}

int lp_workload_timings_read(const char *path, struct lp_own_timings *out, double **steps, size_t *n_steps,
	struct lp_err *err)
{
	struct lp_buf b = LP_BUF_INIT;
	memset(out, 0, sizeof(*out));
	out->prefill_ms = out->decode_ms = out->decode_ms_per_step = out->tokens_per_s = out->mixed_ms = -1;
	out->rank = -1;
	if (steps) {
		*steps = NULL;
		*n_steps = 0;
	}
	if (!lp_fs_is_file(path))
		return 0;
	if (lp_fs_read_file(path, &b, MAX_BYTES, err) < 0) {
		lp_buf_release(&b);
		return -1;
	}
	parse(b.data, b.len, out, steps, n_steps);   /* out of memory for the steps: none, the timings kept */
	lp_buf_release(&b);
	return 0;
}
