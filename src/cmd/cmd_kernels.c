/* cmd_kernels.c: `llmprof kernels`: the kernel table (the seed's KernelRecord rows) of any
 * SOURCE: ncu raw/details CSV, nsys stats CSV, nsys SQLite export, trace folder, run folder.
 * Parsing lives in src/parse/ (source.h picks the parser); this file only formats. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/buf.h"
#include "core/err.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/utf8.h"
#include "parse/source.h"

#define MD_NAME_MAX 96

static const char usage_line[] = "llmprof kernels [--format md|json|csv] [--top N] [--stage NAME] [--exclude-warmup] SOURCE...";
static const char description[] =
	"Prints the kernel table of SOURCE: an ncu raw or details CSV, an nsys stats\n"
	"cuda_gpu_kern_sum CSV, an nsys SQLite export, a trace folder or a run folder.\n"
	"Sorted by total time; JSON and CSV carry numbers at full precision.\n"
	"Exit status 3 when a SOURCE cannot be read, is damaged (a truncated trace:\n"
	"what could be read is printed), or has no NVTX range matching --stage.";

static const char *opt_format = "md", *opt_stage;
static int opt_top, opt_exclude_warmup;
static const struct lp_opt opts[] = {
	LP_OPT_STRING(0, "format", &opt_format, "FMT", "md (default), json or csv"),
	LP_OPT_INT(0, "top", &opt_top, "N", "only the N kernels with the largest total time (0: all, the default)"),
	LP_OPT_STRING(0, "stage", &opt_stage, "NAME", "only kernels under this NVTX range (name or domain@name)"),
	LP_OPT_FLAG(0, "exclude-warmup", &opt_exclude_warmup, "skip kernels under a range named warmup"),
	LP_OPT_END,
};

/* Markdown cell: shortened (the full name is in JSON), then | < > ` escaped; bytes that are not
 * UTF-8 become U+FFFD (never cut inside a character). < and > become entities only when the table
 * goes to a file or a pipe: a terminal shows `scale_kernel<4>` as it is. */
static int md_entities = 1;

static void md_name(struct lp_buf *b, const char *raw)
{
	struct lp_buf clean = LP_BUF_INIT;
	const char *name;
	size_t n, i, lim;
	lp_utf8_sanitize(&clean, raw);
	name = clean.data;
	n = strlen(name);
	lim = n > MD_NAME_MAX ? MD_NAME_MAX - 3 : n;
	while (lim < n && ((unsigned char)name[lim] & 0xC0) == 0x80)
		lim--;
	for (i = 0; i < lim; i++) {
		char c = name[i];
		if (c == '|')
			lp_buf_adds(b, "\\|");
		else if (c == '<' && md_entities)
			lp_buf_adds(b, "&lt;");
		else if (c == '>' && md_entities)
			lp_buf_adds(b, "&gt;");
		else if (c == '`')
			lp_buf_adds(b, "\\`");
		else if (c == '\n' || c == '\r')
			lp_buf_addc(b, ' ');
		else
			lp_buf_addc(b, c);
	}
	if (lim < n)
		lp_buf_adds(b, "...");
	lp_buf_release(&clean);
}

static void csv_cell(struct lp_buf *b, const char *raw)
{
	struct lp_buf clean = LP_BUF_INIT;
	const char *s;
	lp_utf8_sanitize(&clean, raw);
	s = clean.data;
	if (!strpbrk(s, ",\"\r\n")) {
		lp_buf_adds(b, s);
		lp_buf_release(&clean);
		return;
	}
	lp_buf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			lp_buf_addc(b, '"');
		lp_buf_addc(b, *s);
	}
	lp_buf_addc(b, '"');
	lp_buf_release(&clean);
}

static size_t shown(const struct lp_kernel_table *t, int top)
{
	return top > 0 && (size_t)top < t->n_rows ? (size_t)top : t->n_rows;
}

static void print_md(const char *source, const char *kind, const struct lp_kernel_table *t, int top, int heading)
{
	struct lp_buf b = LP_BUF_INIT;
	size_t i, n = shown(t, top);
	if (heading)
		lp_buf_addf(&b, "## %s (%s)\n\n", source, kind);
	lp_buf_adds(&b, "| kernel_name | device | total_ms | calls | mean_ms | share |\n");
	lp_buf_adds(&b, "|---|---:|---:|---:|---:|---:|\n");
	for (i = 0; i < n; i++) {
		const struct lp_kernel_record *r = &t->rows[i];
		lp_buf_adds(&b, "| ");
		md_name(&b, r->kernel_name);
		if (r->device >= 0)
			lp_buf_addf(&b, " | %d", r->device);
		else
			lp_buf_adds(&b, " | all");
		lp_buf_addf(&b, " | %.3f | %llu | %.4f | %.1f%% |\n", r->total_ms, (unsigned long long)r->calls,
			r->mean_ms, t->total_ms > 0 ? 100.0 * r->total_ms / t->total_ms : 0.0);
	}
	lp_buf_addf(&b, "\n%zu %s shown of %zu, %.3f ms in all (%s)\n", n, t->n_rows == 1 ? "kernel" : "kernels",
		t->n_rows, t->total_ms, kind);
	fputs(b.data, stdout);
	lp_buf_release(&b);
}

static void print_csv(const struct lp_kernel_table *t, int top)
{
	struct lp_buf b = LP_BUF_INIT;
	size_t i, n = shown(t, top);
	lp_buf_adds(&b, "kernel_name,short_name,device,calls,total_ms,mean_ms,min_ms,max_ms,share\n");
	for (i = 0; i < n; i++) {
		const struct lp_kernel_record *r = &t->rows[i];
		csv_cell(&b, r->kernel_name);
		lp_buf_addc(&b, ',');
		csv_cell(&b, r->short_name);
		if (r->device >= 0)
			lp_buf_addf(&b, ",%d", r->device);
		else
			lp_buf_adds(&b, ",");
		lp_buf_addf(&b, ",%llu,%.17g,%.17g,%.17g,%.17g,%.17g\n", (unsigned long long)r->calls, r->total_ms,
			r->mean_ms, r->min_ms, r->max_ms, t->total_ms > 0 ? r->total_ms / t->total_ms : 0.0);
	}
	fputs(b.data, stdout);
	lp_buf_release(&b);
}

static json_t *dim3(const uint32_t v[3])
{
	return json_pack("[III]", (json_int_t)v[0], (json_int_t)v[1], (json_int_t)v[2]);
}

static json_t *to_json(const char *source, const char *kind, const struct lp_kernel_table *t, int top)
{
	json_t *o = json_object(), *arr = json_array();
	size_t i, m, n = shown(t, top);
	/* names come from foreign files: lp_json_string keeps a key whose text is not UTF-8 */
	json_object_set_new(o, "source", lp_json_string(source));
	json_object_set_new(o, "source_kind", json_string(kind));
	json_object_set_new(o, "total_ms", lp_json_real(t->total_ms));
	json_object_set_new(o, "n_kernels", json_integer((json_int_t)t->n_rows));
	for (i = 0; i < n; i++) {
		const struct lp_kernel_record *r = &t->rows[i];
		json_t *k = json_object();
		json_object_set_new(k, "kernel_name", lp_json_string(r->kernel_name));
		json_object_set_new(k, "short_name", lp_json_string(r->short_name));
		json_object_set_new(k, "device", r->device >= 0 ? json_integer(r->device) : json_null());
		json_object_set_new(k, "calls", json_integer((json_int_t)r->calls));
		json_object_set_new(k, "total_ms", lp_json_real(r->total_ms));
		json_object_set_new(k, "mean_ms", lp_json_real(r->mean_ms));
		json_object_set_new(k, "min_ms", lp_json_real(r->min_ms));
		json_object_set_new(k, "max_ms", lp_json_real(r->max_ms));
		json_object_set_new(k, "share", lp_json_real(t->total_ms > 0 ? r->total_ms / t->total_ms : 0.0));
		if (r->grid[0]) {
			json_object_set_new(k, "grid", dim3(r->grid));
			json_object_set_new(k, "block", dim3(r->block));
		}
		if (r->registers_per_thread)
			json_object_set_new(k, "registers_per_thread", json_integer(r->registers_per_thread));
		if (r->n_metrics) {
			json_t *ms = json_object();
			for (m = 0; m < r->n_metrics; m++) {
				const struct lp_metric *x = &r->metrics[m];
				struct lp_buf key = LP_BUF_INIT;
				json_t *v = json_null();
				if (x->valid && isfinite(x->value)) {
					v = json_object();
					json_object_set_new(v, "value", json_real(x->value));
					json_object_set_new(v, "unit", lp_json_string(x->unit ? x->unit : ""));
				}
				lp_utf8_sanitize(&key, x->name);
				json_object_set_new(ms, key.data, v);
				lp_buf_release(&key);
			}
			json_object_set_new(k, "metrics", ms);
		}
		json_array_append_new(arr, k);
	}
	json_object_set_new(o, "kernels", arr);
	return o;
}

/* --stage named no range of the source: say so and list the ranges that exist (exit 3, an empty
 * table is not an answer; docs/kernels.md). */
static int unknown_stage(const char *stage, const char *source, const struct lp_buf *seen)
{
	struct lp_buf list = LP_BUF_INIT;
	const char *p = seen->data;
	size_t n = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (n < 40)
			lp_buf_addf(&list, "%s%.*s", n ? ", " : "", (int)len, p);
		n++;
		p += len + (nl ? 1 : 0);
	}
	if (n > 40)
		lp_buf_addf(&list, ", ... (%zu in all)", n);
	lp_log_warn("stage '%s' matches no NVTX range in '%s'", stage, source);
	if (n) {
		struct lp_buf clean = LP_BUF_INIT;
		lp_utf8_sanitize(&clean, list.data);
		lp_log_hint("ranges seen: %s", clean.data);
		lp_buf_release(&clean);
	} else {
		lp_log_hint("the source has no NVTX ranges (ncu needs --nvtx; nsys and the tracer record them when the program marks any)");
	}
	lp_buf_release(&list);
	return LP_EXIT_PARTIAL;
}

static int cmd_kernels(const struct lp_args *args, struct lp_ctx *ctx)
{
	const char *format = opt_format, *stage = opt_stage;
	int top = opt_top, exclude_warmup = opt_exclude_warmup, i, rc = 0;
	struct lp_err err = LP_ERR_INIT;
	json_t *all = NULL;
	(void)ctx;
	md_entities = !isatty(STDOUT_FILENO);
	if (strcmp(format, "md") && strcmp(format, "json") && strcmp(format, "csv")) {
		lp_log_error("unknown format '%s'", format);
		lp_log_hint("use md, json or csv");
		return LP_EXIT_USAGE;
	}
	if (args->n_rest == 0 || top < 0) {
		lp_log_error(top < 0 ? "--top must be 0 (all kernels) or more, got %d" : "no SOURCE given", top);
		lp_log_hint("usage: %s", usage_line);
		return LP_EXIT_USAGE;
	}
	if (!strcmp(format, "json") && args->n_rest > 1)
		all = json_array();
	for (i = 0; i < args->n_rest; i++) {
		struct lp_kernel_table t;
		struct lp_buf resolved = LP_BUF_INIT;
		enum lp_source_kind kind;
		struct lp_buf seen = LP_BUF_INIT, damage = LP_BUF_INIT;
		int stage_seen = 0;
		struct lp_source_opts so = { stage, exclude_warmup, &seen, &stage_seen, &damage };
		const char *kn;
		lp_err_clear(&err);
		if (lp_source_kernel_table(args->rest[i], &so, &t, &kind, &resolved, &err) < 0) {
			int st = lp_cmd_fail(&err);
			if (!rc || st == LP_EXIT_PARTIAL)
				rc = st;
			lp_buf_release(&resolved);
			lp_buf_release(&seen);
			lp_buf_release(&damage);
			continue;
		}
		if (damage.len) {
			/* print what could be read, but never as a clean result */
			const char *line = damage.data;
			while (*line) {
				const char *nl = strchr(line, '\n');
				size_t len = nl ? (size_t)(nl - line) : strlen(line);
				lp_log_warn("%.*s", (int)len, line);
				line += len + (nl ? 1 : 0);
			}
			rc = LP_EXIT_PARTIAL;
		}
		if (stage && !stage_seen)
			rc = unknown_stage(stage, resolved.data, &seen);
		lp_buf_release(&seen);
		lp_buf_release(&damage);
		kn = lp_source_kind_name(kind);
		if (!strcmp(format, "md")) {
			if (i)
				fputc('\n', stdout);
			print_md(resolved.data, kn, &t, top, args->n_rest > 1);
		} else if (!strcmp(format, "csv")) {
			print_csv(&t, top);
		} else {
			json_t *o = to_json(resolved.data, kn, &t, top);
			if (all) {
				json_array_append_new(all, o);
			} else {
				char *s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
				if (s)
					puts(s);
				free(s);
				json_decref(o);
			}
		}
		lp_kernel_table_release(&t);
		lp_buf_release(&resolved);
	}
	if (all) {
		char *s = json_dumps(all, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
		if (s)
			puts(s);
		free(s);
		json_decref(all);
	}
	return rc;
}

const struct lp_cmd lp_cmd_kernels = {
	"kernels", cmd_kernels, "print the kernel table of a trace, nsys or ncu output", usage_line, description,
	opts,
};
