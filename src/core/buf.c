/* buf.c: the growable buffer (see buf.h). Used everywhere text is built: reports, JSON, argv. */
#include "core/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char lp_buf_empty[1];

void lp_buf_init(struct lp_buf *b, size_t max)
{
	b->data = lp_buf_empty;
	b->len = 0;
	b->cap = 0;
	b->max = max;
	b->oom = 0;
}

void lp_buf_release(struct lp_buf *b)
{
	if (b->cap)
		free(b->data);
	lp_buf_init(b, b->max);
}

char *lp_buf_detach(struct lp_buf *b, size_t *len)
{
	char *out;
	if (len)
		*len = b->len;
	if (b->cap) {
		out = b->data;
	} else {
		out = malloc(1);
		if (out)
			out[0] = '\0';
	}
	lp_buf_init(b, b->max);
	return out;
}

void lp_buf_reset(struct lp_buf *b)
{
	b->len = 0;
	if (b->cap)
		b->data[0] = '\0';
}

int lp_buf_grow(struct lp_buf *b, size_t extra)
{
	size_t need, ncap;
	char *nd;
	if (b->oom)
		return -1;  /* sticky: the content stops at the first failed append */
	if (extra > ((size_t)-1) / 2 - b->len - 1)
		goto fail;
	need = b->len + extra + 1;
	if (b->max && need > b->max + 1)
		goto fail;
	if (need <= b->cap)
		return 0;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need)
		ncap *= 2;
	if (b->max && ncap > b->max + 1)
		ncap = b->max + 1;
	nd = b->cap ? realloc(b->data, ncap) : malloc(ncap);
	if (!nd)
		goto fail;
	if (!b->cap)
		nd[0] = '\0';
	b->data = nd;
	b->cap = ncap;
	return 0;
fail:
	b->oom = 1;
	return -1;
}

int lp_buf_add(struct lp_buf *b, const void *data, size_t len)
{
	if (lp_buf_grow(b, len) < 0)
		return -1;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int lp_buf_adds(struct lp_buf *b, const char *s)
{
	return lp_buf_add(b, s, strlen(s));
}

int lp_buf_addc(struct lp_buf *b, char c)
{
	return lp_buf_add(b, &c, 1);
}

int lp_buf_vaddf(struct lp_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;
	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0) {
		b->oom = 1;
		return -1;
	}
	if (lp_buf_grow(b, (size_t)n) < 0)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int lp_buf_addf(struct lp_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;
	va_start(ap, fmt);
	rc = lp_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

void lp_buf_setlen(struct lp_buf *b, size_t len)
{
	if (len > b->len || !b->cap)
		return;
	b->len = len;
	b->data[len] = '\0';
}

int lp_buf_add_shell_quoted(struct lp_buf *b, const char *s)
{
	const char *p;
	int plain = *s != '\0';
	for (p = s; *p; p++) {
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@%+=:,./_-", *p)) {
			plain = 0;
			break;
		}
	}
	if (plain)
		return lp_buf_adds(b, s);
	if (lp_buf_addc(b, '\'') < 0)
		return -1;
	for (p = s; *p; p++) {
		if (*p == '\'') {
			if (lp_buf_adds(b, "'\\''") < 0)
				return -1;
		} else if (lp_buf_addc(b, *p) < 0) {
			return -1;
		}
	}
	return lp_buf_addc(b, '\'');
}
