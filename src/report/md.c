/* md.c: Markdown escaping and tables (see md.h). Every report writer in src/report/ renders its
 * tables through here, so the escaping rules live in one place. */
#include "report/md.h"

#include <string.h>

size_t lp_md_strlen_utf8(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

static int add_escaped(struct lp_buf *b, const char *s, size_t len)
{
	size_t i;
	for (i = 0; i < len; i++) {
		char c = s[i];
		int rc;
		switch (c) {
		case '\\': case '|': case '*': case '_': case '`': case '[': case ']':
			rc = lp_buf_addc(b, '\\') < 0 ? -1 : lp_buf_addc(b, c);
			break;
		case '<':
			rc = lp_buf_adds(b, "&lt;");
			break;
		case '>':
			rc = lp_buf_adds(b, "&gt;");
			break;
		case '&':
			rc = lp_buf_adds(b, "&amp;");
			break;
		case '\n': case '\r': case '\t':
			rc = lp_buf_addc(b, ' ');
			break;
		default:
			rc = lp_buf_addc(b, c);
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

int lp_md_text(struct lp_buf *b, const char *s)
{
	return s ? add_escaped(b, s, strlen(s)) : 0;
}

int lp_md_cell(struct lp_buf *b, const char *s, size_t max_chars)
{
	size_t len, cps = 0, i;
	if (!s)
		return 0;
	len = strlen(s);
	if (!max_chars || lp_md_strlen_utf8(s) <= max_chars)
		return add_escaped(b, s, len);
	/* keep max_chars - 1 code points, then the ellipsis */
	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (cps == max_chars - 1)
				break;
			cps++;
		}
	}
	if (add_escaped(b, s, i) < 0)
		return -1;
	return lp_buf_adds(b, "\xE2\x80\xA6");
}

int lp_md_header(struct lp_buf *b, size_t n, const char *const *cols, const char *align)
{
	size_t i;
	for (i = 0; i < n; i++) {
		if (lp_buf_adds(b, "| ") < 0 || lp_buf_adds(b, cols[i]) < 0 || lp_buf_addc(b, ' ') < 0)
			return -1;
	}
	if (lp_buf_adds(b, "|\n") < 0)
		return -1;
	for (i = 0; i < n; i++) {
		char a = align && i < strlen(align) ? align[i] : 'l';
		const char *sep = a == 'r' ? "| ---: " : a == 'c' ? "| :---: " : "| --- ";
		if (lp_buf_adds(b, sep) < 0)
			return -1;
	}
	return lp_buf_adds(b, "|\n");
}

int lp_md_row(struct lp_buf *b, size_t n, const char *const *cells, size_t max_chars)
{
	size_t i;
	for (i = 0; i < n; i++) {
		if (lp_buf_adds(b, "| ") < 0 || lp_md_cell(b, cells[i], max_chars) < 0 || lp_buf_addc(b, ' ') < 0)
			return -1;
	}
	return lp_buf_adds(b, "|\n");
}
