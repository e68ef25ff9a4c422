/* svg.h: the pieces every figure and the HTML report are written with: XML/HTML escaping,
 * shortened names, fixed number formatting, and a few SVG primitives.
 *
 * Escaping (lp_xml_text): `&` `<` `>` `"` `'` become &amp; &lt; &gt; &quot; &#39;, so the text is
 * safe in element content and in attribute values of both HTML and SVG; control characters
 * (below U+0020, and DEL) become spaces (XML 1.0 forbids most of them); bytes that start no valid
 * UTF-8 sequence become U+FFFD, so a standalone .svg stays well-formed XML whatever a kernel was
 * called. Shortening counts code points and never cuts inside one.
 *
 * Numbers: coordinates with one decimal ("%.1f", "-0.0" written "0.0"), so identical input gives
 * identical bytes on every machine (no locale: the C locale is the program's).
 *
 * Ownership: everything appends to a caller-owned lp_buf (its oom flag says when an append
 * failed). Thread-safe (no shared state).
 *
 *   lp_svg_begin(b, 640, 200, "Kernel time by family");
 *   lp_svg_rect(b, 10, 10, 100, 12, "#4e79a7", "gemv_kernel<float>: 1.250 ms");
 *   lp_svg_text(b, 10, 40, "start", 12, "#333", "decode");
 *   lp_svg_end(b);
 */
#ifndef LP_REPORT_SVG_H
#define LP_REPORT_SVG_H

#include <stddef.h>

#include "core/buf.h"

/* Appends s escaped (above); NULL appends nothing. 0 ok, -1 out of memory. */
int lp_xml_text(struct lp_buf *b, const char *s);
/* The same for s shortened to max_chars code points with "…" (0: no limit). */
int lp_xml_text_short(struct lp_buf *b, const char *s, size_t max_chars);
/* A coordinate or length: "%.1f", never "-0.0"; non-finite values as 0. */
int lp_svg_num(struct lp_buf *b, double v);

/* <svg ...> with a viewBox of w x h, width 100% up to w, a <title> (escaped), and the default font. */
int lp_svg_begin(struct lp_buf *b, double w, double h, const char *title);
int lp_svg_end(struct lp_buf *b);
/* A rectangle; `tip` (may be NULL) becomes its <title>: the hover text, escaped. */
int lp_svg_rect(struct lp_buf *b, double x, double y, double w, double h, const char *fill, const char *tip);
int lp_svg_line(struct lp_buf *b, double x1, double y1, double x2, double y2, const char *stroke, double width,
	const char *dash);
int lp_svg_circle(struct lp_buf *b, double cx, double cy, double r, const char *fill, const char *tip);
/* Text (escaped); anchor "start", "middle" or "end". */
int lp_svg_text(struct lp_buf *b, double x, double y, const char *anchor, double size, const char *fill,
	const char *text);
/* Text shortened to max_chars with the full text as its <title>. */
int lp_svg_text_short(struct lp_buf *b, double x, double y, const char *anchor, double size, const char *fill,
	const char *text, size_t max_chars);

/* "Nice" axis steps: 1, 2 or 5 x 10^k, about n of them over [0, max]. */
double lp_svg_nice_step(double max, int n);
/* A tick label: integers plainly, else up to 3 significant decimals ("0.25", "1.5", "12"). */
int lp_svg_tick_label(char *out, size_t cap, double v);

#endif
