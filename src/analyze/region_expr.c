/* region_expr.c: the NVTX expressions that name regions (see regions.h): parsing ncu's syntax
 * (`A/`, `LLM@decode_all/`, `[A/`, `A`, a `*` level), matching one against a result's NVTX stack, and
 * the form ncu's --nvtx-include takes. The region model (regions.c) compiles its config through
 * these. */
#include "analyze/regions.h"

#include <string.h>

/* Copies [s, e) into the arena with `\x` escapes resolved. */
static char *unescape(struct lp_arena *a, const char *s, const char *e)
{
	char *out = lp_arena_alloc(a, (size_t)(e - s) + 1), *o = out;
	if (!out)
		return NULL;
	while (s < e) {
		if (*s == '\\' && s + 1 < e)
			s++;
		*o++ = *s++;
	}
	*o = '\0';
	return out;
}

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

int lp_region_pattern_parse(const char *text, struct lp_arena *a, struct lp_region_pattern *out,
	struct lp_err *err)
{
	const char *s = text, *e = text + strlen(text), *p, *at = NULL, *part;
	struct lp_buf name = LP_BUF_INIT;
	size_t i;
	int gap = 0;
	memset(out, 0, sizeof(*out));
	out->text = text;
	out->domain = "";
	out->kind = LP_REGION_STARTEND;
	if (!strncmp(text, "regex:", 6))
		return lp_err_set(err, LP_EUSAGE, "'%s': regex: NVTX expressions are not supported by the region report", text);
	if (e > s && e[-1] == '/' && (e - 1 == s || e[-2] != '\\')) {
		out->kind = LP_REGION_PUSHPOP;
		e--;
	}
	if (s < e && *s == '[') {
		out->anchor_bottom = 1;
		s++;
	}
	if (e > s && e[-1] == ']' && (e - 1 == s || e[-2] != '\\')) {
		out->anchor_top = 1;
		e--;
	}
	for (p = s; p < e; p++) {
		if (*p == '\\') {
			p++;
			continue;
		}
		if (*p == '@') {
			at = p;
			break;
		}
	}
	if (at) {
		out->domain = unescape(a, s, at);
		if (!out->domain)
			return oom(err);
		s = at + 1;
	}
	part = s;
	for (p = s;; p++) {
		int end = p >= e, sep = 0;
		if (!end && *p == '\\') {
			p++;
			continue;
		}
		if (!end && *p == '/')
			sep = 1;
		else if (!end && *p == ':' && p + 1 < e && p[1] == ':')
			sep = 2;
		if (!end && !sep)
			continue;
		if (p == part)
			return lp_err_set(err, LP_EUSAGE, "'%s': empty range name in the expression", text);
		if (p - part == 1 && *part == '*') {
			if (gap || out->n_parts == 0)
				return lp_err_set(err, LP_EUSAGE, "'%s': '*' must stand between two range names", text);
			gap = 1;
		} else {
			if (out->n_parts == LP_REGIONS_MAX_PARTS)
				return lp_err_set(err, LP_EUSAGE, "'%s': more than %d levels", text, LP_REGIONS_MAX_PARTS);
			out->gap_before[out->n_parts] = (uint8_t)gap;
			out->parts[out->n_parts] = unescape(a, part, p);
			if (!out->parts[out->n_parts])
				return oom(err);
			out->n_parts++;
			gap = 0;
		}
		if (end)
			break;
		p += sep - 1;
		part = p + 1;
	}
	if (gap)
		return lp_err_set(err, LP_EUSAGE, "'%s': '*' must stand between two range names", text);
	if (out->n_parts == 0)
		return lp_err_set(err, LP_EUSAGE, "'%s': no range name in the expression", text);
	if (out->kind == LP_REGION_STARTEND && (out->n_parts > 1 || out->anchor_bottom || out->anchor_top))
		return lp_err_set(err, LP_EUSAGE, "'%s': start/end ranges do not nest (push/pop ranges end with '/')", text);
	if (out->domain[0])
		lp_buf_addf(&name, "%s@", out->domain);
	for (i = 0; i < out->n_parts; i++) {
		const char *c;
		if (i)
			lp_buf_adds(&name, out->gap_before[i] ? "::*::" : "::");
		for (c = out->parts[i]; *c; c++) {
			if (*c == '@' && !out->domain[0] && i == 0)
				lp_buf_addc(&name, '\\');
			lp_buf_addc(&name, *c);
		}
	}
	out->name = name.oom ? NULL : lp_arena_strdup(a, name.data);
	lp_buf_release(&name);
	return out->name ? 0 : oom(err);
}

static int level_is(const struct lp_ncu_nvtx_level *l, const char *domain, const char *name)
{
	return !strcmp(l->name, name) && !strcmp(l->domain, domain);
}

/* Matches parts[j..] with part j-1 at level `prev`. */
static int match_from(const struct lp_region_pattern *p, const struct lp_ncu_nvtx_stack *st, size_t j,
	size_t prev, size_t *hi)
{
	size_t k;
	if (j == p->n_parts) {
		if (p->anchor_top && prev + 1 != st->n)
			return 0;
		*hi = prev;
		return 1;
	}
	for (k = prev + 1; k < st->n; k++) {
		if (level_is(&st->levels[k], p->domain, p->parts[j]) && match_from(p, st, j + 1, k, hi))
			return 1;
		if (!p->gap_before[j])
			break;
	}
	return 0;
}

int lp_region_pattern_match(const struct lp_region_pattern *p, const struct lp_ncu_nvtx_stack *st,
	size_t *lo, size_t *hi)
{
	size_t i;
	if (p->kind == LP_REGION_STARTEND) {
		for (i = 0; i < st->n; i++)
			if (level_is(&st->levels[i], p->domain, p->parts[0])) {
				*lo = *hi = i;
				return 1;
			}
		return 0;
	}
	for (i = 0; i < st->n; i++) {
		if (p->anchor_bottom && i > 0)
			break;
		if (level_is(&st->levels[i], p->domain, p->parts[0]) && match_from(p, st, 1, i, hi)) {
			*lo = i;
			return 1;
		}
	}
	return 0;
}

int lp_region_pattern_ncu(const char *text, struct lp_buf *out)
{
	const char *p;
	for (p = text; *p; p++) {
		if (*p == '\\' && p[1]) {
			lp_buf_addc(out, *p++);
			lp_buf_addc(out, *p);
		} else if (*p == ':' && p[1] == ':') {
			lp_buf_addc(out, '/');
			p++;
		} else {
			lp_buf_addc(out, *p);
		}
	}
	return out->oom ? -1 : 0;
}
