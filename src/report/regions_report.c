/* regions_report.c: ncu/regions/ of a run folder (see regions_report.h). Last stage of the
 * region flow: config (analyze/regions_args.c) + ncu raw page (parse/ncu_raw.c) -> region model
 * (analyze/regions.c) -> report.json, report.md, one folder per region. The flow itself is
 * strung together by run/regions_run.c; this file renders and writes. */
#include "report/regions_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/regions.h"
#include "analyze/regions_args.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/utf8.h"
#include "parse/csv.h"
#include "report/md.h"

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

static const char *scope_name(int kind)
{
	return kind == LP_REGION_SCOPE_PROCESS ? "process" : kind == LP_REGION_SCOPE_DEVICE ? "device" : "aggregate";
}

/* ---- JSON ---- */

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* Strings from the raw page (range and kernel names) may not be UTF-8: lp_json_string keeps the
 * key with U+FFFD where json_string would return NULL and drop it. */
static json_t *jstr_or_null(const char *s)
{
	return lp_json_string(s);
}

static json_t *jlist(const struct lp_regions_list *l)
{
	json_t *a = json_array();
	size_t i;
	for (i = 0; a && i < l->n; i++)
		json_array_append_new(a, json_string(l->v[i]));
	return a;
}

static json_t *region_json(const struct lp_regions_doc *c, const struct lp_region_scope *s, int32_t n)
{
	const struct lp_region *rg = &c->r->nodes[n];
	const struct lp_region_stats *st = &s->stats[n];
	const struct lp_regions_spec *spec = &c->cfg->spec;
	json_t *o = json_object(), *ks = json_array(), *files;
	size_t i, m;
	if (!o || !ks)
		goto fail;
	json_object_set_new(o, "name", lp_json_string(rg->name));
	json_object_set_new(o, "expression", jstr_or_null(rg->expression));
	json_object_set_new(o, "kind", json_string(rg->kind == LP_REGION_PUSHPOP ? "push/pop" : "start/end"));
	json_object_set_new(o, "domain", lp_json_string(rg->domain));
	json_object_set_new(o, "range", lp_json_string(rg->range));
	json_object_set_new(o, "parent", rg->parent >= 0 ? lp_json_string(c->r->nodes[rg->parent].name) : json_null());
	json_object_set_new(o, "depth", json_integer(rg->depth));
	json_object_set_new(o, "process", st->pid >= 0 ? json_integer(st->pid) : json_null());
	json_object_set_new(o, "device", st->device >= 0 ? json_integer(st->device) : json_null());
	json_object_set_new(o, "total_ms_inclusive", jnum(st->incl_ms));
	json_object_set_new(o, "total_ms_exclusive", jnum(st->excl_ms));
	json_object_set_new(o, "kernel_count", json_integer((json_int_t)st->kernel_count));
	json_object_set_new(o, "kernel_count_exclusive", json_integer((json_int_t)st->kernel_count_excl));
	json_object_set_new(o, "range_instances", json_integer((json_int_t)st->range_instances));
	json_object_set_new(o, "reconciled", json_boolean(st->reconciled));
	for (i = 0; i < st->n_kernels; i++) {
		const struct lp_region_kernel *k = &st->kernels[i];
		json_t *ko = json_object(), *mo = json_object();
		if (!ko || !mo) {
			json_decref(ko);
			json_decref(mo);
			goto fail;
		}
		json_object_set_new(ko, "kernel_name", lp_json_string(k->rec.kernel_name));
		json_object_set_new(ko, "short_name", lp_json_string(k->rec.short_name));
		json_object_set_new(ko, "device", json_integer(k->rec.device));
		json_object_set_new(ko, "calls", json_integer((json_int_t)k->rec.calls));
		json_object_set_new(ko, "total_ms", jnum(k->rec.total_ms));
		json_object_set_new(ko, "mean_ms", jnum(k->rec.mean_ms));
		json_object_set_new(ko, "min_ms", jnum(k->rec.min_ms));
		json_object_set_new(ko, "max_ms", jnum(k->rec.max_ms));
		json_object_set_new(ko, "exclusive_calls", json_integer((json_int_t)k->excl_calls));
		json_object_set_new(ko, "exclusive_ms", jnum(k->excl_ms));
		for (m = 0; m < k->rec.n_metrics && m < spec->n_metrics; m++)
			json_object_set_new(mo, spec->metrics[m],
				k->rec.metrics[m].valid ? jnum(k->rec.metrics[m].value) : json_null());
		json_object_set_new(ko, "metrics", mo);
		json_array_append_new(ks, ko);
	}
	json_object_set_new(o, "kernels", ks);
	files = json_object();
	if (!files)
		goto fail;
	if (s->kind == LP_REGION_SCOPE_AGGREGATE) {
		struct lp_buf b = LP_BUF_INIT;
		lp_buf_addf(&b, "ncu/regions/%s/raw.csv", rg->dir);
		json_object_set_new(files, "csv", lp_json_string(b.data));
		lp_buf_reset(&b);
		lp_buf_addf(&b, "ncu/regions/%s/region.md", rg->dir);
		json_object_set_new(files, "md", lp_json_string(b.data));
		lp_buf_release(&b);
	}
	json_object_set_new(o, "dir", lp_json_string(rg->dir));
	json_object_set_new(o, "files", files);
	return o;
fail:
	json_decref(o);
	json_decref(ks);
	return NULL;
}

static json_t *scope_json(const struct lp_regions_doc *c, const struct lp_region_scope *s)
{
	json_t *o = json_object(), *regs = json_array(), *tot = json_object();
	size_t i;
	if (!o || !regs || !tot) {
		json_decref(o);
		json_decref(regs);
		json_decref(tot);
		return NULL;
	}
	json_object_set_new(o, "scope", json_string(scope_name(s->kind)));
	json_object_set_new(o, "process", s->kind == LP_REGION_SCOPE_PROCESS ? json_integer(s->pid) : json_null());
	json_object_set_new(o, "device", s->kind == LP_REGION_SCOPE_DEVICE ? json_integer(s->device) : json_null());
	json_object_set_new(tot, "total_ms", jnum(s->total_ms));
	json_object_set_new(tot, "kernel_count", json_integer((json_int_t)s->kernel_count));
	json_object_set_new(tot, "range_instances", json_integer((json_int_t)s->range_instances));
	json_object_set_new(tot, "regions", json_integer((json_int_t)s->n_present));
	json_object_set_new(o, "totals", tot);
	for (i = 0; i < c->r->n_nodes; i++) {
		int32_t n = c->r->order[i];
		json_t *ro;
		if (!s->stats[n].present)
			continue;
		if (!(ro = region_json(c, s, n)) || json_array_append_new(regs, ro) < 0) {
			json_decref(o);
			json_decref(regs);
			return NULL;
		}
	}
	json_object_set_new(o, "regions", regs);
	return o;
}

/* A seen range as an expression that can be pasted back into profiling.ncu.regions.include:
 * the analysis escapes '@' (default domain), '/' and backslash; the expression grammar
 * (analyze/regions.c lp_region_pattern_parse) also splits levels at "::" and reads a leading
 * '[' / trailing ']' as anchors and a lone '*' as a gap, so those are escaped too:
 * `aten::to, op_id = 21/` -> `aten\:\:to, op_id = 21/`. The parser's unescape is the inverse. */
int lp_regions_pasteable(const char *seen, struct lp_buf *out)
{
	const char *p, *name = seen, *end = seen + strlen(seen);
	lp_buf_reset(out);
	for (p = seen; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			continue;
		}
		if (*p == '@') {
			name = p + 1;
			break;
		}
	}
	if (end > name && end[-1] == '/' && (end - 1 == name || end[-2] != '\\'))
		end--;
	lp_buf_add(out, seen, (size_t)(name - seen));
	if (end - name == 1 && *name == '*')
		lp_buf_addc(out, '\\');
	for (p = name; p < end; p++) {
		int colons = *p == ':' && ((p + 1 < end && p[1] == ':') || (p > name && p[-1] == ':'));
		if (*p == '\\' && p + 1 < end) {
			lp_buf_add(out, p, 2);
			p++;
			continue;
		}
		if (colons || (p == name && *p == '[') || (p + 1 == end && *p == ']'))
			lp_buf_addc(out, '\\');
		lp_buf_addc(out, *p);
	}
	lp_buf_adds(out, end);
	return out->oom ? -1 : 0;
}

static json_t *seen_json(const char *seen)
{
	struct lp_buf e = LP_BUF_INIT;
	json_t *j;
	lp_regions_pasteable(seen, &e);
	j = lp_json_string(e.data);
	lp_buf_release(&e);
	return j;
}

static int build_json(const struct lp_regions_doc *c, struct lp_buf *out, struct lp_err *err)
{
	json_t *root = json_object(), *src, *cfg, *kern, *un, *seen, *scopes, *warn, *miss;
	const struct lp_regions_cfg *g = c->cfg;
	const char *line;
	char *text;
	size_t i;
	if (!root)
		return oom(err);
	json_object_set_new(root, "schema_version", json_integer(1));
	json_object_set_new(root, "generated_at", c->generated_at && c->generated_at[0] ? json_string(c->generated_at) : json_null());
	src = json_object();
	json_object_set_new(src, "raw_csv", jstr_or_null(c->raw_rel));
	json_object_set_new(src, "results", json_integer((json_int_t)c->r->results_read));
	json_object_set_new(src, "in_regions", json_integer((json_int_t)c->r->n_rows));
	json_object_set_new(src, "outside_regions", json_integer((json_int_t)c->r->outside_regions));
	json_object_set_new(src, "dropped_by_nvtx_exclude", json_integer((json_int_t)c->r->dropped_nvtx_exclude));
	json_object_set_new(src, "dropped_by_kernel_filter", json_integer((json_int_t)c->r->dropped_kernel_filter));
	json_object_set_new(root, "source", src);
	cfg = json_object();
	json_object_set_new(cfg, "fingerprint", json_string(g->fingerprint));
	json_object_set_new(cfg, "replay_mode", json_string(g->replay_mode));
	json_object_set_new(cfg, "replay_mode_used",
		json_string(c->replay_mode_used ? c->replay_mode_used : g->replay_mode));
	json_object_set_new(cfg, "replay_note", jstr_or_null(c->replay_note));
	json_object_set_new(cfg, "sampled", jstr_or_null(c->sample_note));
	json_object_set_new(cfg, "include", jlist(&g->include));
	json_object_set_new(cfg, "include_defaulted", json_boolean(g->include_defaulted));
	json_object_set_new(cfg, "exclude", jlist(&g->exclude));
	kern = json_object();
	json_object_set_new(kern, "include", jlist(&g->kernels_include));
	json_object_set_new(kern, "exclude", jlist(&g->kernels_exclude));
	json_object_set_new(cfg, "kernels", kern);
	json_object_set_new(cfg, "sections", jlist(&g->sections));
	json_object_set_new(cfg, "metrics", jlist(&g->metrics));
	json_object_set_new(cfg, "metrics_from_preset", json_boolean(g->metrics_from_preset));
	json_object_set_new(root, "config", cfg);
	miss = json_array();
	for (i = 0; i < g->metrics.n; i++)
		if (c->have_raw && !c->r->metric_present[i])
			json_array_append_new(miss, json_string(g->metrics.v[i]));
	json_object_set_new(root, "metrics_missing", miss);
	un = json_array();
	for (i = 0; i < c->r->n_inc; i++)
		if (!c->r->inc_hits[i])
			json_array_append_new(un, lp_json_string(c->r->inc[i].text));
	json_object_set_new(root, "unmatched", un);
	seen = json_object();
	json_object_set_new(seen, "source", json_string(c->seen_source));
	{
		json_t *a = json_array();
		for (i = 0; i < c->n_seen && i < LP_REGIONS_SEEN_MAX; i++)
			json_array_append_new(a, seen_json(c->seen[i]));
		json_object_set_new(seen, "ranges", a);
		json_object_set_new(seen, "more", json_integer((json_int_t)(c->n_seen > LP_REGIONS_SEEN_MAX ?
			c->n_seen - LP_REGIONS_SEEN_MAX : 0)));
	}
	json_object_set_new(root, "ranges_seen", seen);
	scopes = json_array();
	for (i = 0; i < c->n_scopes; i++) {
		json_t *s = scope_json(c, &c->scopes[i]);
		if (!s) {
			json_decref(root);
			json_decref(scopes);
			return oom(err);
		}
		json_array_append_new(scopes, s);
	}
	json_object_set_new(root, "scopes", scopes);
	warn = json_array();
	for (line = c->warnings; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		json_array_append_new(warn, json_stringn(line, len));
		line += len + (nl ? 1 : 0);
	}
	json_object_set_new(root, "warnings", warn);
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(root);
	if (!text)
		return oom(err);
	lp_buf_adds(out, text);
	lp_buf_addc(out, '\n');
	free(text);
	return out->oom ? oom(err) : 0;
}

/* ---- Markdown ---- */

static void ms3(char *b, size_t cap, double v)
{
	snprintf(b, cap, "%.3f", v);
}

static void md_metric(char *b, size_t cap, const struct lp_metric *m)
{
	if (!m->valid)
		snprintf(b, cap, "n/a");
	else
		snprintf(b, cap, "%.4g", m->value);
}

static void md_tree(const struct lp_regions_doc *c, const struct lp_region_scope *s, struct lp_buf *b)
{
	size_t i, d;
	for (i = 0; i < c->r->n_nodes; i++) {
		int32_t n = c->r->order[i];
		const struct lp_region_stats *st = &s->stats[n];
		if (!st->present)
			continue;
		for (d = 0; d < c->r->nodes[n].depth; d++)
			lp_buf_adds(b, "  ");
		lp_buf_adds(b, "- **");
		lp_md_text(b, c->r->nodes[n].name);
		lp_buf_addf(b, "**: %.3f ms inclusive, %.3f ms exclusive, %llu kernels (%llu exclusive)",
			st->incl_ms, st->excl_ms, (unsigned long long)st->kernel_count,
			(unsigned long long)st->kernel_count_excl);
		if (st->range_instances)
			lp_buf_addf(b, ", %llu range results", (unsigned long long)st->range_instances);
		lp_buf_addc(b, '\n');
	}
}

static void md_table(const struct lp_regions_doc *c, const struct lp_region_scope *s, struct lp_buf *b)
{
	static const char *const cols[] = { "region", "parent", "depth", "inclusive_ms", "exclusive_ms",
		"kernels", "kernels_exclusive", "range_results" };
	size_t i;
	lp_md_header(b, 8, cols, "llrrrrrr");
	for (i = 0; i < c->r->n_nodes; i++) {
		int32_t n = c->r->order[i];
		const struct lp_region *rg = &c->r->nodes[n];
		const struct lp_region_stats *st = &s->stats[n];
		char depth[16], incl[32], excl[32], kc[32], kx[32], ri[32];
		const char *cells[8];
		if (!st->present)
			continue;
		snprintf(depth, sizeof(depth), "%u", (unsigned)rg->depth);
		ms3(incl, sizeof(incl), st->incl_ms);
		ms3(excl, sizeof(excl), st->excl_ms);
		snprintf(kc, sizeof(kc), "%llu", (unsigned long long)st->kernel_count);
		snprintf(kx, sizeof(kx), "%llu", (unsigned long long)st->kernel_count_excl);
		snprintf(ri, sizeof(ri), "%llu", (unsigned long long)st->range_instances);
		cells[0] = rg->name;
		cells[1] = rg->parent >= 0 ? c->r->nodes[rg->parent].name : "";
		cells[2] = depth;
		cells[3] = incl;
		cells[4] = excl;
		cells[5] = kc;
		cells[6] = kx;
		cells[7] = ri;
		lp_md_row(b, 8, cells, LP_MD_NAME_MAX);
	}
}

/* One region's section: links, figures, kernel table with the selected metrics. `prefix` is
 * the path from the Markdown file to ncu/regions/. */
static int md_region(const struct lp_regions_doc *c, int32_t n, const char *heading, const char *prefix, struct lp_buf *b)
{
	const struct lp_region *rg = &c->r->nodes[n];
	const struct lp_region_stats *st = &c->scopes[0].stats[n];
	const struct lp_regions_spec *spec = &c->cfg->spec;
	size_t nc = 6 + spec->n_metrics, i, m;
	const char **cols = calloc(nc, sizeof(*cols));
	const char **cells = calloc(nc, sizeof(*cells));
	char *align = calloc(nc + 1, 1);
	char (*num)[48] = calloc(nc, sizeof(*num));
	struct lp_buf *hdr = calloc(spec->n_metrics + 1, sizeof(*hdr));
	if (!cols || !cells || !align || !num || !hdr) {
		free(cols);
		free(cells);
		free(align);
		free(num);
		free(hdr);
		return -1;
	}
	lp_buf_addf(b, "%s ", heading);
	lp_md_text(b, rg->name);
	lp_buf_adds(b, "\n\n");
	if (rg->expression) {
		lp_buf_adds(b, "Configured as `");
		lp_buf_adds(b, rg->expression);
		lp_buf_adds(b, "`");
	} else {
		lp_buf_adds(b, "Nested range (from the NVTX stacks)");
	}
	lp_buf_adds(b, "; parent: ");
	if (rg->parent >= 0)
		lp_md_text(b, c->r->nodes[rg->parent].name);
	else
		lp_buf_adds(b, "none");
	lp_buf_addf(b, "; %s range.\n\n", rg->kind == LP_REGION_PUSHPOP ? "push/pop" : "start/end");
	lp_buf_addf(b, "- inclusive: %.3f ms, exclusive: %.3f ms\n", st->incl_ms, st->excl_ms);
	lp_buf_addf(b, "- kernels: %llu (%llu exclusive)", (unsigned long long)st->kernel_count,
		(unsigned long long)st->kernel_count_excl);
	if (st->range_instances)
		lp_buf_addf(b, "; range results: %llu", (unsigned long long)st->range_instances);
	lp_buf_addc(b, '\n');
	lp_buf_addf(b, "- files: [raw.csv](%s%s/raw.csv), [region.md](%s%s/region.md)\n\n", prefix, rg->dir,
		prefix, rg->dir);
	cols[0] = "kernel_name";
	cols[1] = "device";
	cols[2] = "calls";
	cols[3] = "total_ms";
	cols[4] = "mean_ms";
	cols[5] = "exclusive_ms";
	memcpy(align, "lrrrrr", 6);
	for (m = 0; m < spec->n_metrics; m++) {
		lp_buf_adds(&hdr[m], spec->metrics[m]);
		if (c->r->metric_unit[m][0])
			lp_buf_addf(&hdr[m], " (%s)", c->r->metric_unit[m]);
		cols[6 + m] = hdr[m].data;
		align[6 + m] = 'r';
	}
	lp_md_header(b, nc, cols, align);
	for (i = 0; i < st->n_kernels; i++) {
		const struct lp_region_kernel *k = &st->kernels[i];
		snprintf(num[1], sizeof(num[1]), "%d", k->rec.device);
		snprintf(num[2], sizeof(num[2]), "%llu", (unsigned long long)k->rec.calls);
		ms3(num[3], sizeof(num[3]), k->rec.total_ms);
		ms3(num[4], sizeof(num[4]), k->rec.mean_ms);
		ms3(num[5], sizeof(num[5]), k->excl_ms);
		cells[0] = k->rec.kernel_name;
		for (m = 1; m < 6; m++)
			cells[m] = num[m];
		for (m = 0; m < spec->n_metrics; m++) {
			if (m < k->rec.n_metrics)
				md_metric(num[6 + m], sizeof(num[6 + m]), &k->rec.metrics[m]);
			else
				snprintf(num[6 + m], sizeof(num[6 + m]), "n/a");
			cells[6 + m] = num[6 + m];
		}
		lp_md_row(b, nc, cells, LP_MD_NAME_MAX);
	}
	lp_buf_addc(b, '\n');
	for (m = 0; m < spec->n_metrics; m++)
		lp_buf_release(&hdr[m]);
	free(hdr);
	free(cols);
	free(cells);
	free(align);
	free(num);
	return b->oom ? -1 : 0;
}

static void md_code_list(struct lp_buf *b, const struct lp_regions_list *l)
{
	size_t i;
	if (!l->n) {
		lp_buf_adds(b, "none");
		return;
	}
	for (i = 0; i < l->n; i++)
		lp_buf_addf(b, "%s`%s`", i ? ", " : "", l->v[i]);
}

static int build_md(const struct lp_regions_doc *c, struct lp_buf *b)
{
	const struct lp_regions_cfg *g = c->cfg;
	size_t i, n_un = 0;
	lp_buf_adds(b, "# Nsight Compute regions\n\n");
	lp_buf_adds(b, "- source: ");
	if (c->raw_rel)
		lp_buf_addf(b, "`%s`", c->raw_rel);
	else
		lp_buf_adds(b, "no ncu raw page (ncu profiled nothing)");
	lp_buf_addf(b, "; %llu results, %llu in regions, %llu outside every region",
		(unsigned long long)c->r->results_read, (unsigned long long)c->r->n_rows,
		(unsigned long long)c->r->outside_regions);
	if (c->r->dropped_nvtx_exclude || c->r->dropped_kernel_filter)
		lp_buf_addf(b, ", %llu dropped by the NVTX exclude, %llu by the kernel filters",
			(unsigned long long)c->r->dropped_nvtx_exclude, (unsigned long long)c->r->dropped_kernel_filter);
	lp_buf_adds(b, "\n- replay mode: ");
	lp_buf_adds(b, c->replay_mode_used ? c->replay_mode_used : g->replay_mode);
	if (c->replay_note) {
		lp_buf_adds(b, " (");
		lp_md_text(b, c->replay_note);
		lp_buf_adds(b, ")");
	}
	if (c->sample_note) {
		lp_buf_adds(b, "\n- sampled: ");
		lp_md_text(b, c->sample_note);
	}
	lp_buf_adds(b, "\n- include: ");
	md_code_list(b, &g->include);
	if (g->include_defaulted)
		lp_buf_adds(b, " (default for the reference workload)");
	lp_buf_adds(b, "; exclude: ");
	md_code_list(b, &g->exclude);
	lp_buf_adds(b, "\n- kernels: include ");
	if (g->kernels_include.n)
		md_code_list(b, &g->kernels_include);
	else
		lp_buf_adds(b, "all");
	lp_buf_adds(b, ", exclude ");
	md_code_list(b, &g->kernels_exclude);
	lp_buf_adds(b, "\n- sections: ");
	md_code_list(b, &g->sections);
	lp_buf_adds(b, "; metrics shown: ");
	md_code_list(b, &g->metrics);
	lp_buf_addf(b, "\n- config fingerprint: `%s`\n", g->fingerprint);
	if (c->generated_at && c->generated_at[0])
		lp_buf_addf(b, "- generated at: %s\n", c->generated_at);
	lp_buf_addc(b, '\n');

	lp_buf_adds(b, "## Region tree\n\n");
	if (!c->scopes[0].n_present) {
		lp_buf_adds(b, "No result fell in any region.\n\n");
	} else {
		lp_buf_addf(b, "Total in regions: %.3f ms over %llu kernels", c->scopes[0].total_ms,
			(unsigned long long)c->scopes[0].kernel_count);
		if (c->scopes[0].range_instances)
			lp_buf_addf(b, " and %llu range results", (unsigned long long)c->scopes[0].range_instances);
		lp_buf_adds(b, " (each result counted once).\n\n");
		md_tree(c, &c->scopes[0], b);
		lp_buf_addc(b, '\n');
		md_table(c, &c->scopes[0], b);
		lp_buf_addc(b, '\n');
	}
	for (i = 1; i < c->n_scopes; i++) {
		const struct lp_region_scope *s = &c->scopes[i];
		if (s->kind == LP_REGION_SCOPE_PROCESS)
			lp_buf_addf(b, "## Process %u\n\n", s->pid);
		else
			lp_buf_addf(b, "## Device %d\n\n", s->device);
		md_table(c, s, b);
		lp_buf_addc(b, '\n');
	}
	if (c->scopes[0].n_present) {
		lp_buf_adds(b, "## Regions\n\n");
		for (i = 0; i < c->r->n_nodes; i++) {
			int32_t n = c->r->order[i];
			if (c->scopes[0].stats[n].present && md_region(c, n, "###", "", b) < 0)
				return -1;
		}
	}
	for (i = 0; i < c->r->n_inc; i++)
		n_un += !c->r->inc_hits[i];
	if (n_un) {
		lp_buf_adds(b, "## Expressions that matched nothing\n\n");
		for (i = 0; i < c->r->n_inc; i++)
			if (!c->r->inc_hits[i])
				lp_buf_addf(b, "- `%s`\n", c->r->inc[i].text);
		lp_buf_addf(b, "\nRanges seen (%s): ", !strcmp(c->seen_source, "capture") ?
			"in the capture phase" : "on the ncu results");
		if (!c->n_seen)
			lp_buf_adds(b, "none");
		for (i = 0; i < c->n_seen && i < LP_REGIONS_SEEN_MAX; i++) {
			struct lp_buf e = LP_BUF_INIT;
			lp_regions_pasteable(c->seen[i], &e);
			lp_buf_addf(b, "%s`%s`", i ? ", " : "", e.data);
			lp_buf_release(&e);
		}
		if (c->n_seen > LP_REGIONS_SEEN_MAX)
			lp_buf_addf(b, " and %zu more", c->n_seen - LP_REGIONS_SEEN_MAX);
		lp_buf_adds(b, ".\n\n");
	}
	if (c->warnings[0]) {
		const char *line;
		lp_buf_adds(b, "## Warnings\n\n");
		for (line = c->warnings; *line;) {
			const char *nl = strchr(line, '\n');
			size_t len = nl ? (size_t)(nl - line) : strlen(line);
			struct lp_buf t = LP_BUF_INIT;
			lp_buf_add(&t, line, len);
			lp_buf_adds(b, "- ");
			lp_md_text(b, t.data);
			lp_buf_addc(b, '\n');
			lp_buf_release(&t);
			line += len + (nl ? 1 : 0);
		}
		lp_buf_addc(b, '\n');
	}
	return b->oom ? -1 : 0;
}

/* ---- raw CSV slices ---- */

static void csv_record(struct lp_buf *b, const struct lp_csv *c)
{
	size_t i;
	for (i = 0; i < c->n_fields; i++) {
		const char *f = c->fields[i];
		if (i)
			lp_buf_addc(b, ',');
		lp_buf_addc(b, '"');
		for (; *f; f++) {
			if (*f == '"')
				lp_buf_addc(b, '"');
			lp_buf_addc(b, *f);
		}
		lp_buf_addc(b, '"');
	}
	lp_buf_addc(b, '\n');
}

static int write_slices(const struct lp_regions_doc *c, const char *dir, struct lp_err *err)
{
	struct lp_buf *out = calloc(c->r->n_nodes + 1, sizeof(*out));
	struct lp_buf path = LP_BUF_INIT;
	struct lp_csv csv;
	size_t i, k = 0, j;
	int rc, ret = -1, id_col = -1, first = 1;
	if (!out)
		return oom(err);
	if (c->have_raw) {
		if (lp_csv_open(&csv, c->raw_csv, NULL, err) < 0) {
			free(out);
			return -1;
		}
		while ((rc = lp_csv_next(&csv, err)) > 0) {
			if (csv.n_fields == 1 && csv.lens[0] == 0)
				continue;
			if (id_col < 0 && first) {  /* header */
				id_col = lp_csv_column(&csv, "ID");
				for (i = 0; i < c->r->n_nodes; i++)
					csv_record(&out[i], &csv);
				continue;
			}
			if (first && id_col >= 0 && (size_t)id_col < csv.n_fields && !*csv.fields[id_col]) {
				first = 0;  /* the units row */
				for (i = 0; i < c->r->n_nodes; i++)
					csv_record(&out[i], &csv);
				continue;
			}
			first = 0;
			while (k < c->r->n_rows && c->r->rows[k].line < csv.line)
				k++;
			if (k < c->r->n_rows && c->r->rows[k].line == csv.line) {
				const struct lp_region_row *row = &c->r->rows[k];
				for (j = 0; j < row->n_members; j++) {
					const struct lp_region_member *m = &c->r->members[row->first_member + j];
					if (row->is_range && !m->exclusive)
						continue;
					csv_record(&out[m->node], &csv);
				}
			}
		}
		lp_csv_close(&csv);
		if (rc < 0)
			goto out;
	}
	for (i = 0; i < c->r->n_nodes; i++) {
		const struct lp_region *rg = &c->r->nodes[i];
		struct lp_buf md = LP_BUF_INIT;
		if (!c->scopes[0].stats[i].present)
			continue;
		lp_buf_reset(&path);
		lp_buf_addf(&path, "%s/%s", dir, rg->dir);
		if (lp_fs_mkdir_p(path.data, err) < 0)
			goto out;
		lp_buf_adds(&path, "/raw.csv");
		if (out[i].oom || path.oom) {
			oom(err);
			goto out;
		}
		if (lp_fs_write_atomic(path.data, out[i].data, out[i].len, err) < 0)
			goto out;
		if (md_region(c, (int32_t)i, "#", "../", &md) < 0) {
			lp_buf_release(&md);
			oom(err);
			goto out;
		}
		lp_buf_reset(&path);
		lp_buf_addf(&path, "%s/%s/region.md", dir, rg->dir);
		rc = lp_fs_write_atomic(path.data, md.data, md.len, err);
		lp_buf_release(&md);
		if (rc < 0)
			goto out;
	}
	ret = 0;
out:
	for (i = 0; i < c->r->n_nodes; i++)
		lp_buf_release(&out[i]);
	free(out);
	lp_buf_release(&path);
	return ret;
}

/* ---- the whole report ---- */

void lp_regions_report_warnings(const struct lp_regions_doc *c, struct lp_buf *out)
{
	size_t i, s;
	lp_buf_adds(out, c->r->warnings.data);
	for (i = 0; i < c->cfg->metrics.n; i++)
		if (c->have_raw && c->r->results_read && !c->r->metric_present[i])
			lp_buf_addf(out, "metric '%s' is not a column of the raw page (not collected)\n",
				c->cfg->metrics.v[i]);
	for (s = 0; s < c->n_scopes; s++)
		for (i = 0; i < c->r->n_nodes; i++) {
			int32_t n = c->r->order[i];
			const struct lp_region_stats *st = &c->scopes[s].stats[n];
			if (!st->present || st->reconciled)
				continue;
			lp_buf_addf(out, "region '%s' (%s", c->r->nodes[n].name, scope_name(c->scopes[s].kind));
			if (c->scopes[s].kind == LP_REGION_SCOPE_PROCESS)
				lp_buf_addf(out, " %u", c->scopes[s].pid);
			else if (c->scopes[s].kind == LP_REGION_SCOPE_DEVICE)
				lp_buf_addf(out, " %d", c->scopes[s].device);
			lp_buf_addf(out, "): inclusive %.6f ms is off by %.6f ms from exclusive + children "
				"(more than 1%%: overlapping ranges, or a range result shorter than its nested ones)\n",
				st->incl_ms, st->reconcile_error_ms);
		}
}

int lp_regions_report_write(const struct lp_regions_doc *c, const char *dir, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT, json = LP_BUF_INIT, md = LP_BUF_INIT;
	int ret = -1;
	if (build_json(c, &json, err) < 0)
		goto out;
	if (build_md(c, &md) < 0) {
		oom(err);
		goto out;
	}
	lp_buf_addf(&path, "%s/report.json", dir);
	if (lp_fs_write_atomic(path.data, json.data, json.len, err) < 0)
		goto out;
	lp_buf_reset(&path);
	lp_buf_addf(&path, "%s/report.md", dir);
	if (lp_fs_write_atomic(path.data, md.data, md.len, err) < 0)
		goto out;
	if (write_slices(c, dir, err) < 0)
		goto out;
	ret = 0;
out:
	lp_buf_release(&path);
	lp_buf_release(&json);
	lp_buf_release(&md);
	return ret;
}
