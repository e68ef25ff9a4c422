/* sample_spec.c: LLMPROF_TRACE_SAMPLE's grammar (docs/tracer.md "Environment"; the CLI checks the
 * same grammar for trace.sample in src/config/schema.c before a run starts): the tracer's schedule
 * and mode from a spec such as "auto", "off", "every=8,first=2" or "auto,rate=5000,unit=decode_step".
 * sample.c copies the result into its state once, at start-up. */

#include "inject.h"

#include <string.h>

static int parse_uint(const char *s, size_t n, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;
	if (n == 0 || n > 9)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;
	if (n == 0 || n > 19)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int lp_inj_sample_spec_parse(const char *spec, struct lp_inj_sample_spec *out)
{
	const char *p = spec;
	int have_auto = 0, have_every = 0, have_burst = 0, have_lead = 0;
	memset(out, 0, sizeof(*out));
	out->every = 8;
	out->first = 2;
	out->auto_rate = 5000;
	out->gen_launches = AUTO_GEN_LAUNCHES;
	out->inst_every = INST_EVERY;
	out->pick = LP_TRACE_SAMPLE_PICK_RANDOM;
	memcpy(out->unit, "decode_step", sizeof("decode_step"));
	while (*p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		size_t k = eq ? (size_t)(eq - p) : n;
		const char *v = eq ? eq + 1 : NULL;
		size_t vn = eq ? n - k - 1 : 0;
		if (!eq && n == 3 && !memcmp(p, "off", 3)) {
			out->mode = LP_TRACE_SAMPLE_EXACT;
			out->why = LP_TRACE_SAMPLE_WHY_OFF;
			return 0;
		} else if (!eq && n == 4 && !memcmp(p, "auto", 4)) {
			have_auto = 1;
		} else if (eq && k == 5 && !memcmp(p, "every", 5)) {
			if (parse_uint(v, vn, 1, 1000000, &out->every) < 0)
				return -1;
			have_every = 1;
		} else if (eq && k == 5 && !memcmp(p, "burst", 5)) {
			if (parse_uint(v, vn, 0, 1000000, &out->burst) < 0)
				return -1;
			have_burst = 1;
		} else if (eq && k == 4 && !memcmp(p, "lead", 4)) {
			if (parse_uint(v, vn, 0, 64, &out->lead) < 0)
				return -1;
			have_lead = 1;
		} else if (eq && k == 5 && !memcmp(p, "first", 5)) {
			if (parse_uint(v, vn, 0, 1000000, &out->first) < 0)
				return -1;
		} else if (eq && k == 4 && !memcmp(p, "rate", 4)) {
			if (parse_uint(v, vn, 0, 1000000000, &out->auto_rate) < 0)
				return -1;
		} else if (eq && k == 5 && !memcmp(p, "stage", 5)) {
			if (parse_uint(v, vn, 0, 1000000, &out->inst_every) < 0)
				return -1;
		} else if (eq && k == 3 && !memcmp(p, "gen", 3)) {
			if (parse_uint(v, vn, 0, 1000000, &out->gen_launches) < 0)
				return -1;
		} else if (eq && k == 4 && !memcmp(p, "seed", 4)) {
			if (parse_u64(v, vn, &out->seed) < 0)
				return -1;
		} else if (eq && k == 4 && !memcmp(p, "pick", 4)) {
			if (vn == 5 && !memcmp(v, "first", 5))
				out->pick = LP_TRACE_SAMPLE_PICK_FIRST;
			else if (vn == 6 && !memcmp(v, "random", 6))
				out->pick = LP_TRACE_SAMPLE_PICK_RANDOM;
			else
				return -1;
		} else if (eq && k == 4 && !memcmp(p, "unit", 4)) {
			if (vn == 0 || vn >= sizeof(out->unit))
				return -1;
			memcpy(out->unit, v, vn);
			out->unit[vn] = '\0';
		} else {
			return -1;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	/* auto without every= or burst= (the default): bursts of 4 in blocks of 128, lead 2 (runs 23,
	 * 24 and 27, docs/tracer.md "Bursts"); burst=B > 0: bursts (blocks of 128 without every=);
	 * every=N without burst=, or burst=0: one unit per block with CUPTI attached */
	if (!have_every && !have_burst)
		out->burst = 4;
	if (!have_every && out->burst)
		out->every = 128;
	if (out->burst && out->every % out->burst)
		return -1; /* the clusters cut the block */
	if (out->burst && !have_lead)
		out->lead = 2;
	if ((have_every || have_burst) && !have_auto) {
		out->mode = LP_TRACE_SAMPLE_SAMPLED;
		out->why = LP_TRACE_SAMPLE_WHY_FORCED;
	} else {
		out->mode = LP_INJ_SAMPLE_AUTO;
		out->why = LP_TRACE_SAMPLE_WHY_AUTO_NONE;
	}
	return 0;
}

