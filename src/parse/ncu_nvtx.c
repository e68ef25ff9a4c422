/* ncu_nvtx.c: the NVTX cells of ncu's raw page (see ncu_nvtx.h). Used by the raw-page parser
 * (ncu_raw.c) to give every profiled kernel the range stack it ran under. */
#include "parse/ncu_nvtx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "profile/profile.h"

#define MAX_COLONS 1024

void lp_ncu_nvtx_stack_release(struct lp_ncu_nvtx_stack *st)
{
	lp_buf_release(&st->text);
	st->n = 0;
	st->tid = 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static void set_payload(struct lp_ncu_nvtx_level *l, const char *type, const char *value)
{
	char *end;
	l->payload_type = LP_PAYLOAD_NONE;
	if (!strcasecmp(type, "none") || !*value)
		return;
	errno = 0;
	if (!strncasecmp(type, "uint", 4) || !strncasecmp(type, "unsigned", 8)) {
		unsigned long long v = strtoull(value, &end, 10);
		if (!errno && !*end) {
			l->payload_type = LP_PAYLOAD_U64;
			l->payload.u64 = v;
		}
	} else if (!strncasecmp(type, "int", 3) || !strncasecmp(type, "long", 4)) {
		long long v = strtoll(value, &end, 10);
		if (!errno && !*end) {
			l->payload_type = LP_PAYLOAD_I64;
			l->payload.i64 = v;
		}
	} else if (!strncasecmp(type, "double", 6) || !strncasecmp(type, "float", 5)) {
		double v = strtod(value, &end);
		if (!*end) {
			l->payload_type = LP_PAYLOAD_F64;
			l->payload.f64 = v;
		}
	}
}

/* Splits one quoted level `s` (modified in place) into its fields. */
static int parse_level(char *s, int startend, struct lp_ncu_nvtx_level *l, struct lp_err *err)
{
	size_t colons[MAX_COLONS], nc = 0, i, len, pick;
	char *rest, *c;
	memset(l, 0, sizeof(*l));
	if (startend) {
		c = strchr(s, ':');
		if (!c)
			return lp_err_set(err, LP_EPARSE, "nvtx start/end range '%.60s' has no id", s);
		*c = '\0';
		if (parse_u64(s, &l->id) < 0)
			return lp_err_set(err, LP_EPARSE, "nvtx start/end range id '%.30s' is not a number", s);
		s = c + 1;
	}
	c = strchr(s, ':');
	if (!c)
		return lp_err_set(err, LP_EPARSE, "nvtx range '%.60s' has no domain field", s);
	*c = '\0';
	l->domain = !strcmp(s, "<default domain>") ? "" : s;
	rest = c + 1;
	len = strlen(rest);
	for (i = 0; i < len; i++) {
		if (rest[i] != ':')
			continue;
		if (nc == MAX_COLONS)
			return lp_err_set(err, LP_EPARSE, "nvtx range has more than %d ':'", MAX_COLONS);
		colons[nc++] = i;
	}
	if (nc < 6)
		return lp_err_set(err, LP_EPARSE, "nvtx range '%.60s' has %zu fields after the domain, expected 8",
			rest, nc + 1);
	/* Candidate k: the name ends at colons[k], the five fields follow, the message is the tail. */
	pick = nc - 6;
	for (i = 0; i + 6 <= nc; i++) {
		size_t name_len = colons[i], msg_off = colons[i + 5] + 1;
		if (len - msg_off == name_len && memcmp(rest, rest + msg_off, name_len) == 0) {
			pick = i;
			break;
		}
	}
	{
		char *f[6];
		size_t k;
		for (k = 0; k < 6; k++)
			rest[colons[pick + k]] = '\0';
		for (k = 0; k < 6; k++)
			f[k] = rest + colons[pick + k] + 1;
		l->name = rest;
		set_payload(l, f[0], f[1]);
		l->message = f[5];
	}
	return 0;
}

/* An operator range of PyTorch's emit_nvtx (or another framework's op annotation): default
 * domain, a C++-qualified name ("aten::mm") or emit_nvtx's ", seq = N" / ", op_id = N" suffix. */
static int is_op_range(const struct lp_ncu_nvtx_level *l)
{
	return !l->domain[0] && (strstr(l->name, "::") || strstr(l->name, ", seq = ") || strstr(l->name, ", op_id = "));
}

/* ncu lists a push/pop stack per domain, the default domain first, whatever the real nesting
 * (tests/fixtures/regions/h100_cross_domain_raw.csv: `aten::copy_` pushed inside LLM@decode_step
 * prints as `aten::copy_, LLM@decode_all, LLM@decode_step`). The interleaving is lost, so: the
 * default domain's own ranges stay outermost (ncu's order), then the named domains in ncu's order,
 * then the default domain's operator ranges innermost: frameworks push those around each
 * operator call, inside the application's stage ranges. Each domain keeps its own order. */
static void order_domains(struct lp_ncu_nvtx_stack *st)
{
	struct lp_ncu_nvtx_level tmp[LP_NCU_NVTX_MAX_DEPTH];
	size_t i, n = 0, named = 0;
	int pass;
	for (i = 0; i < st->n; i++)
		named += st->levels[i].domain[0] != '\0';
	if (named == 0 || named == st->n)
		return;
	for (pass = 0; pass < 3; pass++)
		for (i = 0; i < st->n; i++) {
			const struct lp_ncu_nvtx_level *l = &st->levels[i];
			int group = l->domain[0] ? 1 : is_op_range(l) ? 2 : 0;
			if (group == pass)
				tmp[n++] = *l;
		}
	memcpy(st->levels, tmp, n * sizeof(tmp[0]));
}

int lp_ncu_nvtx_parse(const char *cell, int startend, struct lp_ncu_nvtx_stack *out, struct lp_err *err)
{
	char *p;
	out->n = 0;
	out->tid = 0;
	lp_buf_reset(&out->text);
	if (lp_buf_adds(&out->text, cell) < 0)
		return lp_oom(err);
	p = out->text.data;
	while (*p == ' ')
		p++;
	if (!startend && *p >= '0' && *p <= '9') {
		char *end;
		out->tid = strtoull(p, &end, 10);
		p = end;
	}
	for (;;) {
		char *q, *close = NULL;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (*p != '"')
			return lp_err_set(err, LP_EPARSE, "nvtx cell: expected '\"' at '%.40s'", p);
		/* The closing quote is the first one followed by white space or the end of the cell. */
		for (q = p + 1; *q; q++) {
			if (*q == '"' && (q[1] == '\0' || q[1] == ' ' || q[1] == '\t')) {
				close = q;
				break;
			}
		}
		if (!close)
			return lp_err_set(err, LP_EPARSE, "nvtx cell: unterminated range '%.40s'", p);
		if (out->n == LP_NCU_NVTX_MAX_DEPTH)
			return lp_err_set(err, LP_EPARSE, "nvtx cell: more than %d ranges", LP_NCU_NVTX_MAX_DEPTH);
		*close = '\0';
		if (parse_level(p + 1, startend, &out->levels[out->n], err) < 0)
			return -1;
		out->n++;
		p = close + 1;
	}
	if (!startend)
		order_domains(out);
	return 0;
}

int lp_ncu_nvtx_stack_path(const struct lp_ncu_nvtx_stack *st, struct lp_buf *out)
{
	size_t i;
	lp_buf_reset(out);
	for (i = 0; i < st->n; i++) {
		const struct lp_ncu_nvtx_level *l = &st->levels[i];
		if (i)
			lp_buf_addc(out, '/');
		if (*l->domain)
			lp_buf_addf(out, "%s@", l->domain);
		lp_buf_adds(out, l->name);
	}
	return out->oom ? -1 : 0;
}
