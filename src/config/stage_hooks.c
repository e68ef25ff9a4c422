/* stage_hooks.c: `stages.hooks` entries checked against their grammar (stage_hooks.h) when the
 * config is validated (schema.c), so a typo is a usage error naming the key before anything runs,
 * not a hook the shim silently skips. */
#include "config/stage_hooks.h"

#include <stdio.h>
#include <string.h>

static int is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Length of an identifier at s ([A-Za-z_][A-Za-z0-9_]*, `_` first only when under_ok); 0 none. */
static size_t ident(const char *s, const char *end, int under_ok)
{
	size_t n = 0;
	if (s >= end || !(is_alpha(*s) || (under_ok && *s == '_')))
		return 0;
	while (s + n < end && (is_alpha(s[n]) || is_digit(s[n]) || s[n] == '_'))
		n++;
	return n;
}

/* Dotted identifiers filling [s, end) exactly, at most max_parts; 0 ok. */
static int dotted(const char *s, const char *end, int max_parts)
{
	int parts = 0;
	for (;;) {
		size_t n = ident(s, end, 1);
		if (!n || ++parts > max_parts)
			return -1;
		s += n;
		if (s == end)
			return 0;
		if (*s++ != '.')
			return -1;
	}
}

static const char *trim(const char *s, const char **end)
{
	while (s < *end && (*s == ' ' || *s == '\t'))
		s++;
	while (*end > s && ((*end)[-1] == ' ' || (*end)[-1] == '\t'))
		(*end)--;
	return s;
}

static int payload(const char *s, const char *end, char *why, size_t cap)
{
	const char *p;
	int acc = 0;
	s = trim(s, &end);
	if (end - s > 5 && !strncmp(s, "len(", 4) && end[-1] == ')') {
		s += 4;
		end--;
		s = trim(s, &end);
	}
	p = s;
	if (end - p > 3 && !strncmp(p, "arg", 3) && is_digit(p[3])) {
		p += 3;
		while (p < end && is_digit(*p) && p - s < 5)
			p++;
	} else if (end - p > 3 && !strncmp(p, "kw.", 3) && ident(p + 3, end, 0)) {
		p += 3 + ident(p + 3, end, 0);
	} else {
		snprintf(why, cap, "payload '%.*s' must start with argN or kw.NAME", (int)(end - s), s);
		return -1;
	}
	while (p < end) {
		size_t n;
		if (*p == '.' && (n = ident(p + 1, end, 0)) > 0) {
			p += 1 + n;
		} else if (*p == '[') {
			const char *q = p + 1;
			if (q < end && *q == '-')
				q++;
			if (q >= end || !is_digit(*q))
				break;
			while (q < end && is_digit(*q) && q - p < 8)
				q++;
			if (q >= end || *q != ']')
				break;
			p = q + 1;
		} else {
			break;
		}
		if (++acc > 8) {
			snprintf(why, cap, "payload '%.*s' has more than 8 accessors", (int)(end - s), s);
			return -1;
		}
	}
	if (p < end) {
		snprintf(why, cap, "payload '%.*s': unexpected '%.*s' (only .name, [N] and len(...))", (int)(end - s), s,
			(int)(end - p), p);
		return -1;
	}
	return 0;
}

int lp_stage_hook_check(const char *entry, char *why, size_t why_cap)
{
	static const char *const stages[] = { "prefill", "decode_step", "decode_all", "mixed", "warmup", NULL };
	const char *colon, *eq, *at, *end = entry + strlen(entry), *s, *e;
	size_t i;
	if (strlen(entry) > LP_STAGE_HOOK_MAX_LEN) {
		snprintf(why, why_cap, "longer than %d characters", LP_STAGE_HOOK_MAX_LEN);
		return -1;
	}
	colon = strchr(entry, ':');
	eq = strchr(entry, '=');
	if (!colon || !eq || eq < colon) {
		snprintf(why, why_cap, "expected MODULE:QUALNAME=STAGE[@PAYLOAD]");
		return -1;
	}
	e = colon;
	s = trim(entry, &e);
	if (dotted(s, e, 64) < 0) {
		snprintf(why, why_cap, "'%.*s' is not a module name", (int)(e - s), s);
		return -1;
	}
	e = eq;
	s = trim(colon + 1, &e);
	if (dotted(s, e, 8) < 0) {
		snprintf(why, why_cap, "'%.*s' is not a function or Class.method name", (int)(e - s), s);
		return -1;
	}
	at = strchr(eq, '@');
	e = at ? at : end;
	s = trim(eq + 1, &e);
	for (i = 0; stages[i]; i++)
		if ((size_t)(e - s) == strlen(stages[i]) && !strncmp(s, stages[i], (size_t)(e - s)))
			break;
	if (!stages[i]) {
		snprintf(why, why_cap, "unknown stage '%.*s' (expected prefill, decode_step, decode_all, mixed or warmup)",
			(int)(e - s), s);
		return -1;
	}
	if (at) {
		const char *pe = end;
		const char *ps = trim(at + 1, &pe);
		if (ps == pe) {
			snprintf(why, why_cap, "empty payload after '@'");
			return -1;
		}
		return payload(ps, pe, why, why_cap);
	}
	return 0;
}
