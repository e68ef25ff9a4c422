/* html_kit.c: the pieces every section of report.html is built from (see html_kit.h): escaped
 * text, headings, table heads and cells, n/a cells with their reason on hover, inlined figures. */
#include "report/html_kit.h"

#include <math.h>
#include <string.h>

#include "report/figures.h"
#include "report/svg.h"

void lp_html_text(struct lp_buf *b, const char *s)
{
	lp_xml_text(b, s);
}

void lp_html_h2(struct lp_buf *b, const char *id, const char *title)
{
	lp_buf_addf(b, "<h2 id=\"%s\">", id);
	lp_html_text(b, title);
	lp_buf_adds(b, "</h2>\n");
}

void lp_html_th(struct lp_buf *b, const char *name, int numeric)
{
	lp_buf_adds(b, numeric ? "<th class=\"n\">" : "<th>");
	lp_html_text(b, name);
	lp_buf_adds(b, "</th>");
}

/* A table head: names, with 'n' in `num` for numeric columns. */
void lp_html_thead(struct lp_buf *b, int sortable, size_t n, const char *const *cols, const char *num)
{
	size_t i;
	lp_buf_adds(b, sortable ? "<div class=\"scroll\"><table class=\"sortable\"><thead><tr>" :
				  "<div class=\"scroll\"><table><thead><tr>");
	for (i = 0; i < n; i++)
		lp_html_th(b, cols[i], num && num[i] == 'n');
	lp_buf_adds(b, "</tr></thead><tbody>\n");
}

void lp_html_tend(struct lp_buf *b)
{
	lp_buf_adds(b, "</tbody></table></div>\n");
}

void lp_html_td(struct lp_buf *b, const char *s)
{
	lp_buf_adds(b, "<td>");
	lp_html_text(b, s);
	lp_buf_adds(b, "</td>");
}

/* A number cell: shown with `decimals` (and suffix), sorted by its value; n/a for NAN. */
void lp_html_tdn(struct lp_buf *b, double v, int decimals, const char *suffix)
{
	if (!isfinite(v)) {
		lp_buf_adds(b, "<td class=\"n na\">n/a</td>");
		return;
	}
	lp_buf_addf(b, "<td class=\"n\" data-v=\"%.9g\">%.*f%s</td>", v, decimals, v, suffix ? suffix : "");
}

void lp_html_tdu(struct lp_buf *b, unsigned long long v)
{
	lp_buf_addf(b, "<td class=\"n\" data-v=\"%llu\">%llu</td>", v, v);
}

/* A name cell: shortened, the full name on hover. */
void lp_html_tdname(struct lp_buf *b, const char *s, size_t max)
{
	lp_buf_adds(b, "<td class=\"k\" title=\"");
	lp_html_text(b, s);
	lp_buf_adds(b, "\">");
	lp_xml_text_short(b, s, max);
	lp_buf_adds(b, "</td>");
}

/* An lp_num cell: value x scale, or n/a with the reason on hover. */
void lp_html_tdnum(struct lp_buf *b, const struct lp_num *n, int decimals, double scale, const char *suffix)
{
	if (!n->valid) {
		lp_buf_adds(b, "<td class=\"n na\" title=\"");
		lp_html_text(b, n->why);
		lp_buf_adds(b, "\">n/a</td>");
		return;
	}
	lp_html_tdn(b, n->value * scale, decimals, suffix);
}

void lp_html_num_text(struct lp_buf *b, const struct lp_num *n, int decimals, double scale, const char *suffix)
{
	struct lp_buf t = LP_BUF_INIT;
	lp_num_format(n, decimals, scale, suffix, &t);
	lp_html_text(b, t.data);
	lp_buf_release(&t);
}

void lp_html_figure(const struct lp_analysis *a, enum lp_figure_id id, struct lp_buf *b)
{
	if (!lp_figure_applies(a, id))
		return;
	lp_buf_addf(b, "<figure id=\"fig-%.*s\">\n", (int)(strchr(lp_figures[id].file, '.') - lp_figures[id].file),
		lp_figures[id].file);
	lp_figure_render(a, id, b);
	lp_buf_adds(b, "<figcaption>");
	lp_html_text(b, lp_figures[id].title);
	lp_buf_addf(b, " (also figures/%s)</figcaption>\n</figure>\n", lp_figures[id].file);
}

void lp_html_li_num(struct lp_buf *b, const char *label, const struct lp_num *n, int decimals, double scale,
	const char *suffix)
{
	lp_buf_adds(b, "<li>");
	lp_html_text(b, label);
	lp_buf_adds(b, ": ");
	lp_html_num_text(b, n, decimals, scale, suffix);
	lp_buf_adds(b, "</li>\n");
}
