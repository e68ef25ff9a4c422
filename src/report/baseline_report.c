/* baseline_report.c: report stage, the program against the reference workload (baseline_report.h).
 * The table is built once as cells and written as Markdown or HTML. */
#include "report/baseline_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/utf8.h"
#include "report/md.h"
#include "report/svg.h"

#define N_COLS 6
static const char *const cols[N_COLS] = { "number", "program", "reference", "program / reference",
	"reference MBU", "reference MFU" };

static void pct(char *b, size_t n, double v)
{
	if (isfinite(v))
		snprintf(b, n, "%.1f%%", 100.0 * v);
	else
		snprintf(b, n, "n/a");
}

/* The cells of row `r`: text into cells[i] (each cell of b[i]). */
static void cells_of(const struct lp_baseline_row *r, char b[N_COLS][96], const char *cells[N_COLS])
{
	int dec = r->lower_is_better ? 3 : 1;
	size_t i;
	snprintf(b[0], sizeof(b[0]), "%s", r->what);
	if (isfinite(r->program))
		snprintf(b[1], sizeof(b[1]), "%.*f", dec, r->program);
	else
		snprintf(b[1], sizeof(b[1]), "n/a");
	if (isfinite(r->reference) && r->reference > 0)
		snprintf(b[2], sizeof(b[2]), "%.*f", dec, r->reference);
	else
		snprintf(b[2], sizeof(b[2]), "n/a");
	if (r->valid)
		snprintf(b[3], sizeof(b[3]), "%.2fx %s", r->ratio, r->ratio >= 1.0 ? "slower" : "faster");
	else
		snprintf(b[3], sizeof(b[3]), "n/a (%.80s)", r->why);
	pct(b[4], sizeof(b[4]), r->ref_mbu);
	pct(b[5], sizeof(b[5]), r->ref_mfu);
	for (i = 0; i < N_COLS; i++)
		cells[i] = b[i];
}

/* The sentence before the table (plain text; the callers escape it). */
static void intro(const struct lp_analysis *a, struct lp_buf *out)
{
	const struct lp_baseline *bl = &a->baseline;
	const struct lp_baseline_row *st = &bl->rows[LP_BASELINE_STEP];
	lp_buf_addf(out, "The reference workload (llmprof-llm, bf16, random weights) ran %s%s%s on this GPU with "
		"batch %lld, prompt %lld and %lld decode steps (baseline/, its own run folder). ",
		bl->ref_model[0] ? "the same shape, " : "the same shape", bl->ref_model, bl->ref_model[0] ? "," : "",
		bl->batch, bl->prompt_len, bl->steps);
	if (st->valid)
		lp_buf_addf(out, "The program's decode step takes %.2fx the reference's (%.3f vs %.3f ms): %s.",
			st->ratio, st->program, st->reference,
			st->ratio >= 1.25 ? "the shape can run that much faster on this GPU" :
			st->ratio >= 0.9 ? "the program is close to what this GPU does on this shape" :
					   "the program is faster than the reference on this shape");
	else
		lp_buf_adds(out, "No decode step to compare.");
	lp_buf_adds(out, " Ratios are program time / reference time (tokens/s: reference / program).");
}

static void not_there(const struct lp_analysis *a, struct lp_buf *out)
{
	lp_buf_addf(out, "No comparison: %s.", a->baseline.why[0] ? a->baseline.why : "no reference run");
}

int lp_baseline_md(const struct lp_analysis *a, struct lp_buf *out)
{
	size_t i;
	if (!a->baseline_asked)
		return 0;
	lp_buf_adds(out, "\n## Against the reference workload (run.baseline=reference)\n\n");
	if (!a->baseline.valid) {
		struct lp_buf t = LP_BUF_INIT;
		not_there(a, &t);
		lp_md_text(out, t.data ? t.data : "");
		lp_buf_adds(out, "\n");
		lp_buf_release(&t);
		return out->oom ? -1 : 0;
	}
	{
		struct lp_buf t = LP_BUF_INIT;
		intro(a, &t);
		lp_md_text(out, t.data ? t.data : "");
		lp_buf_release(&t);
	}
	lp_buf_adds(out, "\n\n");
	lp_md_header(out, N_COLS, cols, "lrrrrr");
	for (i = 0; i < LP_BASELINE_ROWS; i++) {
		char b[N_COLS][96];
		const char *cells[N_COLS];
		cells_of(&a->baseline.rows[i], b, cells);
		lp_md_row(out, N_COLS, cells, 0);
	}
	return out->oom ? -1 : 0;
}

int lp_baseline_html(const struct lp_analysis *a, struct lp_buf *out)
{
	struct lp_buf t = LP_BUF_INIT;
	size_t i, j;
	if (!a->baseline_asked)
		return 0;
	lp_buf_adds(out, "<h2 id=\"baseline\">Against the reference workload</h2>\n<p>");
	if (!a->baseline.valid)
		not_there(a, &t);
	else
		intro(a, &t);
	lp_xml_text(out, t.data ? t.data : "");
	lp_buf_release(&t);
	lp_buf_adds(out, "</p>\n");
	if (!a->baseline.valid)
		return out->oom ? -1 : 0;
	lp_buf_adds(out, "<table><thead><tr>");
	for (j = 0; j < N_COLS; j++) {
		lp_buf_adds(out, j ? "<th class=\"n\">" : "<th>");
		lp_xml_text(out, cols[j]);
		lp_buf_adds(out, "</th>");
	}
	lp_buf_adds(out, "</tr></thead><tbody>\n");
	for (i = 0; i < LP_BASELINE_ROWS; i++) {
		char b[N_COLS][96];
		const char *cells[N_COLS];
		cells_of(&a->baseline.rows[i], b, cells);
		lp_buf_adds(out, "<tr>");
		for (j = 0; j < N_COLS; j++) {
			lp_buf_adds(out, j ? "<td class=\"n\">" : "<td>");
			lp_xml_text(out, cells[j]);
			lp_buf_adds(out, "</td>");
		}
		lp_buf_adds(out, "</tr>\n");
	}
	lp_buf_adds(out, "</tbody></table>\n");
	return out->oom ? -1 : 0;
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *lp_baseline_json(const struct lp_analysis *a)
{
	const struct lp_baseline *bl = &a->baseline;
	json_t *o, *rows;
	size_t i;
	if (!a->baseline_asked)
		return json_null();
	o = json_object();
	rows = json_array();
	json_object_set_new(o, "valid", json_boolean(bl->valid));
	json_object_set_new(o, "why", bl->valid ? json_null() : lp_json_string(bl->why));
	json_object_set_new(o, "source", bl->present ? json_string("baseline/summary.json") : json_null());
	json_object_set_new(o, "reference_model", bl->ref_model[0] ? lp_json_string(bl->ref_model) : json_null());
	json_object_set_new(o, "batch", json_integer(bl->batch));
	json_object_set_new(o, "prompt_len", json_integer(bl->prompt_len));
	json_object_set_new(o, "decode_steps", json_integer(bl->steps));
	for (i = 0; i < LP_BASELINE_ROWS; i++) {
		const struct lp_baseline_row *r = &bl->rows[i];
		json_t *row = json_object();
		json_object_set_new(row, "what", json_string(r->what));
		json_object_set_new(row, "stage", json_string(r->perf_stage));
		json_object_set_new(row, "program", num_or_null(r->program));
		json_object_set_new(row, "reference", r->reference > 0 ? num_or_null(r->reference) : json_null());
		json_object_set_new(row, "ratio", r->valid ? json_real(r->ratio) : json_null());
		json_object_set_new(row, "why", r->valid ? json_null() : lp_json_string(r->why));
		json_object_set_new(row, "reference_mbu_latency", num_or_null(r->ref_mbu));
		json_object_set_new(row, "reference_mfu_latency", num_or_null(r->ref_mfu));
		json_array_append_new(rows, row);
	}
	json_object_set_new(o, "rows", rows);
	return o;
}
