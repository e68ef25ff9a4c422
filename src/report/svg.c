/* svg.c: escaping, number formatting and SVG primitives for the figures and the HTML report
 * (see svg.h). Everything that reaches HTML or SVG text goes through lp_xml_text. */
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/utf8.h"

static int add_escaped(struct lp_buf *b, const char *s, size_t len)
{
	size_t i = 0;
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t n;
		int rc;
		if (c >= 0x80) {
			n = lp_utf8_seq_len(s + i);
			if (n == 0 || i + n > len) {
				rc = lp_buf_adds(b, "\xEF\xBF\xBD");
				n = 1;
			} else {
				rc = lp_buf_add(b, s + i, n);
			}
			if (rc < 0)
				return -1;
			i += n;
			continue;
		}
		switch (c) {
		case '&': rc = lp_buf_adds(b, "&amp;"); break;
		case '<': rc = lp_buf_adds(b, "&lt;"); break;
		case '>': rc = lp_buf_adds(b, "&gt;"); break;
		case '"': rc = lp_buf_adds(b, "&quot;"); break;
		case '\'': rc = lp_buf_adds(b, "&#39;"); break;
		default: rc = lp_buf_addc(b, c < 0x20 || c == 0x7F ? ' ' : (char)c);
		}
		if (rc < 0)
			return -1;
		i++;
	}
	return 0;
}

int lp_xml_text(struct lp_buf *b, const char *s)
{
	return s ? add_escaped(b, s, strlen(s)) : 0;
}

int lp_xml_text_short(struct lp_buf *b, const char *s, size_t max_chars)
{
	size_t len, i, cps = 0;
	if (!s)
		return 0;
	len = strlen(s);
	if (!max_chars)
		return add_escaped(b, s, len);
	for (i = 0; i < len; i++) {
		if (((unsigned char)s[i] & 0xC0) != 0x80) {
			if (cps == max_chars - 1)
				break;
			cps++;
		}
	}
	if (i == len)
		return add_escaped(b, s, len);
	/* the rest must be more than the one code point the ellipsis replaces */
	{
		size_t j = i + 1, rest = 1;
		while (j < len && rest < 2) {
			if (((unsigned char)s[j] & 0xC0) != 0x80)
				rest++;
			j++;
		}
		if (rest < 2)
			return add_escaped(b, s, len);
	}
	if (add_escaped(b, s, i) < 0)
		return -1;
	return lp_buf_adds(b, "\xE2\x80\xA6");
}

int lp_svg_num(struct lp_buf *b, double v)
{
	char t[64];
	if (!isfinite(v))
		v = 0;
	snprintf(t, sizeof(t), "%.1f", v);
	if (!strcmp(t, "-0.0"))
		return lp_buf_adds(b, "0.0");
	return lp_buf_adds(b, t);
}

int lp_svg_begin(struct lp_buf *b, double w, double h, const char *title)
{
	lp_buf_adds(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ");
	lp_svg_num(b, w);
	lp_buf_addc(b, ' ');
	lp_svg_num(b, h);
	lp_buf_adds(b, "\" width=\"");
	lp_svg_num(b, w);
	lp_buf_adds(b, "\" height=\"");
	lp_svg_num(b, h);
	lp_buf_adds(b, "\" style=\"max-width:100%;height:auto\" role=\"img\" font-family=\"DejaVu Sans, Helvetica, "
		       "Arial, sans-serif\" font-size=\"12\">\n<title>");
	lp_xml_text(b, title);
	lp_buf_adds(b, "</title>\n<rect x=\"0\" y=\"0\" width=\"");
	lp_svg_num(b, w);
	lp_buf_adds(b, "\" height=\"");
	lp_svg_num(b, h);
	return lp_buf_adds(b, "\" fill=\"#ffffff\"/>\n");
}

int lp_svg_end(struct lp_buf *b)
{
	return lp_buf_adds(b, "</svg>\n");
}

/* Closes the open tag of `elem` after its last attribute: "/>" or, with a hover text, a <title>. */
static int end_with_tip(struct lp_buf *b, const char *elem, const char *tip)
{
	if (!tip)
		return lp_buf_adds(b, "\"/>\n");
	lp_buf_adds(b, "\"><title>");
	lp_xml_text(b, tip);
	return lp_buf_addf(b, "</title></%s>\n", elem);
}

int lp_svg_rect(struct lp_buf *b, double x, double y, double w, double h, const char *fill, const char *tip)
{
	lp_buf_adds(b, "<rect x=\"");
	lp_svg_num(b, x);
	lp_buf_adds(b, "\" y=\"");
	lp_svg_num(b, y);
	lp_buf_adds(b, "\" width=\"");
	lp_svg_num(b, w > 0 ? w : 0);
	lp_buf_adds(b, "\" height=\"");
	lp_svg_num(b, h > 0 ? h : 0);
	lp_buf_adds(b, "\" fill=\"");
	lp_buf_adds(b, fill);
	return end_with_tip(b, "rect", tip);
}

int lp_svg_line(struct lp_buf *b, double x1, double y1, double x2, double y2, const char *stroke, double width,
	const char *dash)
{
	lp_buf_adds(b, "<line x1=\"");
	lp_svg_num(b, x1);
	lp_buf_adds(b, "\" y1=\"");
	lp_svg_num(b, y1);
	lp_buf_adds(b, "\" x2=\"");
	lp_svg_num(b, x2);
	lp_buf_adds(b, "\" y2=\"");
	lp_svg_num(b, y2);
	lp_buf_adds(b, "\" stroke=\"");
	lp_buf_adds(b, stroke);
	lp_buf_adds(b, "\" stroke-width=\"");
	lp_svg_num(b, width);
	if (dash) {
		lp_buf_adds(b, "\" stroke-dasharray=\"");
		lp_buf_adds(b, dash);
	}
	return lp_buf_adds(b, "\"/>\n");
}

int lp_svg_circle(struct lp_buf *b, double cx, double cy, double r, const char *fill, const char *tip)
{
	lp_buf_adds(b, "<circle cx=\"");
	lp_svg_num(b, cx);
	lp_buf_adds(b, "\" cy=\"");
	lp_svg_num(b, cy);
	lp_buf_adds(b, "\" r=\"");
	lp_svg_num(b, r);
	lp_buf_adds(b, "\" fill=\"");
	lp_buf_adds(b, fill);
	return end_with_tip(b, "circle", tip);
}

static void text_open(struct lp_buf *b, double x, double y, const char *anchor, double size, const char *fill)
{
	lp_buf_adds(b, "<text x=\"");
	lp_svg_num(b, x);
	lp_buf_adds(b, "\" y=\"");
	lp_svg_num(b, y);
	if (anchor && strcmp(anchor, "start")) {
		lp_buf_adds(b, "\" text-anchor=\"");
		lp_buf_adds(b, anchor);
	}
	if (size != 12) {
		lp_buf_adds(b, "\" font-size=\"");
		lp_svg_num(b, size);
	}
	lp_buf_adds(b, "\" fill=\"");
	lp_buf_adds(b, fill);
	lp_buf_adds(b, "\">");
}

int lp_svg_text(struct lp_buf *b, double x, double y, const char *anchor, double size, const char *fill,
	const char *text)
{
	text_open(b, x, y, anchor, size, fill);
	lp_xml_text(b, text);
	return lp_buf_adds(b, "</text>\n");
}

int lp_svg_text_short(struct lp_buf *b, double x, double y, const char *anchor, double size, const char *fill,
	const char *text, size_t max_chars)
{
	text_open(b, x, y, anchor, size, fill);
	lp_buf_adds(b, "<title>");
	lp_xml_text(b, text);
	lp_buf_adds(b, "</title>");
	lp_xml_text_short(b, text, max_chars);
	return lp_buf_adds(b, "</text>\n");
}

double lp_svg_nice_step(double max, int n)
{
	double raw, mag, f;
	if (!(max > 0) || !isfinite(max) || n < 1)
		return 1;
	raw = max / n;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

int lp_svg_tick_label(char *out, size_t cap, double v)
{
	size_t len;
	if (fabs(v - nearbyint(v)) < 1e-9 * (fabs(v) > 1 ? fabs(v) : 1))
		return snprintf(out, cap, "%.0f", v == 0 ? 0.0 : v);
	snprintf(out, cap, "%.3f", v);
	/* trim trailing zeros: 0.250 -> 0.25 */
	len = strlen(out);
	while (len > 1 && out[len - 1] == '0')
		out[--len] = '\0';
	if (len && out[len - 1] == '.')
		out[--len] = '\0';
	return (int)len;
}
