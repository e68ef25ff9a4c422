/* utf8.c: UTF-8 validation and U+FFFD replacement for names from foreign files (see utf8.h).
 * Sits under every writer that prints or serializes such names (cmd/, report/). */
#include "core/utf8.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

size_t lp_utf8_seq_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp;
	size_t n, i;
	if (u[0] < 0x80)
		return u[0] ? 1 : 0;
	if (u[0] >= 0xC2 && u[0] <= 0xDF) {
		n = 2;
		cp = u[0] & 0x1F;
	} else if (u[0] >= 0xE0 && u[0] <= 0xEF) {
		n = 3;
		cp = u[0] & 0x0F;
	} else if (u[0] >= 0xF0 && u[0] <= 0xF4) {
		n = 4;
		cp = u[0] & 0x07;
	} else {
		return 0;   /* a continuation byte, an overlong lead (C0, C1) or past F4 */
	}
	for (i = 1; i < n; i++) {
		if ((u[i] & 0xC0) != 0x80)
			return 0;   /* also stops at the NUL */
		cp = cp << 6 | (u[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
			(cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

int lp_utf8_valid(const char *s)
{
	while (*s) {
		size_t n = lp_utf8_seq_len(s);
		if (!n)
			return 0;
		s += n;
	}
	return 1;
}

int lp_utf8_sanitize(struct lp_buf *out, const char *s)
{
	while (*s) {
		size_t n = lp_utf8_seq_len(s);
		if (n) {
			if (lp_buf_add(out, s, n) < 0)
				return -1;
			s += n;
		} else {
			if (lp_buf_adds(out, "\xEF\xBF\xBD") < 0)
				return -1;
			s++;
		}
	}
	return 0;
}

json_t *lp_json_string(const char *s)
{
	struct lp_buf b = LP_BUF_INIT;
	json_t *j;
	if (!s)
		return json_null();
	if (lp_utf8_valid(s))
		return json_string(s);
	if (lp_utf8_sanitize(&b, s) < 0) {
		lp_buf_release(&b);
		return NULL;
	}
	j = json_string(b.data);
	lp_buf_release(&b);
	return j;
}

json_t *lp_json_real(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}
