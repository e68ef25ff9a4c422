/* ncu_raw.c: the raw page of an Nsight Compute report (see ncu_raw.h). Sits between the ncu
 * collection phase (collect/ncu.c writes ncu/<name>_raw.csv) and everything that reads kernel
 * metrics: `llmprof kernels`, the top-N check, the roofline. Units are normalized here. */
#include "parse/ncu_raw.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/arena.h"
#include "parse/csv.h"
#include "parse/kname.h"

/* ---- units ---- */

static double time_ns(const char *u)
{
	if (!strcmp(u, "nsecond") || !strcmp(u, "ns"))
		return 1;
	if (!strcmp(u, "usecond") || !strcmp(u, "us"))
		return 1e3;
	if (!strcmp(u, "msecond") || !strcmp(u, "ms"))
		return 1e6;
	if (!strcmp(u, "second") || !strcmp(u, "s"))
		return 1e9;
	return 0;
}

static double si_prefix(char c)
{
	switch (c) {
	case 'K': case 'k': return 1e3;
	case 'M': return 1e6;
	case 'G': case 'g': return 1e9;
	case 'T': case 't': return 1e12;
	case 'P': return 1e15;
	default: return 0;
	}
}

/* Numerator units we scale: time, bytes, hertz; *scale = factor, base gets the unit. */
static int numerator(const char *u, size_t n, double *scale, const char **base)
{
	char tmp[32];
	double p;
	if (n >= sizeof(tmp))
		return 0;
	memcpy(tmp, u, n);
	tmp[n] = '\0';
	if ((p = time_ns(tmp)) > 0) {
		*scale = p;
		*base = "nsecond";
		return 1;
	}
	if (!strcmp(tmp, "byte")) {
		*scale = 1;
		*base = "byte";
		return 1;
	}
	if (n == 5 && !strcmp(tmp + 1, "byte") && (p = si_prefix(tmp[0])) > 0) {
		*scale = p;
		*base = "byte";
		return 1;
	}
	if (!strcasecmp(tmp, "hz")) {
		*scale = 1;
		*base = "hz";
		return 1;
	}
	if (n == 3 && !strcasecmp(tmp + 1, "hz") && (p = si_prefix(tmp[0])) > 0) {
		*scale = p;
		*base = "hz";
		return 1;
	}
	return 0;
}

void lp_ncu_unit_to_base(const char *unit, double *scale, char *base, size_t cap)
{
	const char *slash = strchr(unit, '/');
	const char *nb = NULL;
	double ns;
	*scale = 1;
	snprintf(base, cap, "%s", unit);
	if (!slash) {
		numerator(unit, strlen(unit), scale, &nb);
		if (nb)
			snprintf(base, cap, "%s", nb);
		return;
	}
	/* rate: <x>/<time> -> <base x>/second */
	if ((ns = time_ns(slash + 1)) <= 0) {
		/* another ratio: scale each side that has a prefix (ncu's own units without
		 * --print-units base: Kbyte/block, Kbyte/cycle, %/Kbyte) */
		double num = 1, den = 1;
		const char *db = NULL;
		int has_num = numerator(unit, (size_t)(slash - unit), &num, &nb);
		int has_den = numerator(slash + 1, strlen(slash + 1), &den, &db);
		if (!has_num && !has_den)
			return;
		*scale = num / den;
		snprintf(base, cap, "%.*s/%s", has_num ? (int)strlen(nb) : (int)(slash - unit), has_num ? nb : unit,
			has_den ? db : slash + 1);
		return;
	}
	if (numerator(unit, (size_t)(slash - unit), scale, &nb) && strcmp(nb, "nsecond") != 0) {
		*scale = *scale * 1e9 / ns;
		snprintf(base, cap, "%s/second", nb);
	} else {
		*scale = 1e9 / ns;
		snprintf(base, cap, "%.*s/second", (int)(slash - unit), unit);
	}
}

int lp_ncu_parse_dim3(const char *s, uint32_t v[3])
{
	int i;
	char *end;
	while (*s == ' ')
		s++;
	if (*s++ != '(')
		return -1;
	for (i = 0; i < 3; i++) {
		unsigned long x;
		while (*s == ' ')
			s++;
		if (!isdigit((unsigned char)*s))
			return -1;
		x = strtoul(s, &end, 10);
		if (x > UINT32_MAX)
			return -1;
		v[i] = (uint32_t)x;
		s = end;
		while (*s == ' ')
			s++;
		if (*s != (i == 2 ? ')' : ','))
			return -1;
		s++;
	}
	return 0;
}

static int level_matches(const struct lp_ncu_nvtx_level *l, const char *expr)
{
	const char *at = strchr(expr, '@');
	size_t dl;
	if (!at)
		return strcmp(l->name, expr) == 0;
	if (strcmp(l->name, at + 1) != 0)
		return 0;
	dl = (size_t)(at - expr);
	return strlen(l->domain) == dl && strncmp(l->domain, expr, dl) == 0;
}

int lp_ncu_stack_matches(const struct lp_ncu_nvtx_stack *st, const char *expr)
{
	size_t i;
	for (i = 0; i < st->n; i++)
		if (level_matches(&st->levels[i], expr))
			return 1;
	return 0;
}

int lp_ncu_note_range(struct lp_buf *set, const char *domain, const char *name)
{
	struct lp_buf e = LP_BUF_INIT;
	const char *p;
	size_t n;
	int rc = 0;
	if (domain && *domain)
		lp_buf_addf(&e, "%s@", domain);
	lp_buf_adds(&e, name);
	lp_buf_addc(&e, '\n');
	n = e.len;
	for (p = set->data; (p = strstr(p, e.data)) != NULL; p++)
		if (p == set->data || p[-1] == '\n')
			goto out;
	rc = lp_buf_add(set, e.data, n);
out:
	lp_buf_release(&e);
	return rc;
}

int lp_ncu_select_stack(const struct lp_ncu_select *sel, struct lp_ncu_seen *seen, const struct lp_ncu_nvtx_stack *st)
{
	size_t i;
	int hit = 0;
	for (i = 0; i < st->n; i++) {
		if (level_matches(&st->levels[i], sel->stage))
			hit = 1;
		if (seen && seen->ranges)
			lp_ncu_note_range(seen->ranges, st->levels[i].domain, st->levels[i].name);
	}
	if (hit && seen)
		seen->stage_seen = 1;
	return hit;
}

/* A fast path for plain decimals ("123", "45.25"); everything else goes to lp_csv_number. */
static const double pow10_neg[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15 };

static int number(const char *s, size_t len, double *out)
{
	uint64_t m = 0;
	size_t i = 0, digits = 0, frac = 0;
	int neg = 0, dot = 0;
	if (len && s[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (i == len)
		return lp_csv_number(s, out);
	for (; i < len; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9') {
			m = m * 10 + (uint64_t)(c - '0');
			digits++;
			if (dot)
				frac++;
		} else if (c == '.' && !dot) {
			dot = 1;
		} else {
			return lp_csv_number(s, out);
		}
	}
	if (!digits || digits > 15)
		return lp_csv_number(s, out);
	*out = (double)m / pow10_neg[frac];
	if (neg)
		*out = -*out;
	return 1;
}

/* ---- the stream ---- */

enum col_kind {
	COL_METRIC = 0, COL_ID, COL_PID, COL_PROCESS, COL_HOST, COL_PUSHPOP, COL_STARTEND, COL_KERNEL,
	COL_CONTEXT, COL_STREAM, COL_BLOCK, COL_GRID, COL_DEVICE, COL_CC,
};

static const struct { const char *name; int kind; } identity[] = {
	{ "ID", COL_ID }, { "Process ID", COL_PID }, { "Process Name", COL_PROCESS },
	{ "Host Name", COL_HOST }, { LP_NCU_COL_PUSHPOP, COL_PUSHPOP },
	{ LP_NCU_COL_STARTEND, COL_STARTEND }, { "Kernel Name", COL_KERNEL },
	{ "Context", COL_CONTEXT }, { "Stream", COL_STREAM }, { "Block Size", COL_BLOCK },
	{ "Grid Size", COL_GRID }, { "Device", COL_DEVICE }, { "CC", COL_CC },
};

struct column {
	int kind;
	int metric;          /* index into metrics for COL_METRIC */
	double scale;
};

static int classify(const char *h)
{
	size_t i;
	for (i = 0; i < sizeof(identity) / sizeof(identity[0]); i++)
		if (!strcmp(h, identity[i].name))
			return identity[i].kind;
	/* other ncu versions word the NVTX headers differently; match on their core */
	if (strstr(h, "Push/Pop_Range"))
		return COL_PUSHPOP;
	if (strstr(h, "Start/Stop_Range") || strstr(h, "Start/End_Range"))
		return COL_STARTEND;
	return COL_METRIC;
}

static int parse_u32(const char *s, uint32_t *out)
{
	double v;
	if (number(s, strlen(s), &v) != 1 || v < 0 || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int lp_ncu_raw_stream(const char *path, lp_ncu_result_fn fn, void *ctx, struct lp_err *err)
{
	return lp_ncu_raw_stream_ex(path, 0, fn, ctx, err);
}

int lp_ncu_raw_stream_ex(const char *path, int flags, lp_ncu_result_fn fn, void *ctx, struct lp_err *err)
{
	struct lp_csv c;
	struct lp_arena names = LP_ARENA_INIT;
	struct column *cols = NULL;
	struct lp_metric *metrics = NULL;
	struct lp_ncu_nvtx_stack *pp = NULL, *se = NULL;
	struct lp_buf fname = LP_BUF_INIT;
	size_t ncols, n_metrics = 0, i;
	int rc, have_kernel = 0, have_id = 0, units_checked = 0, ret = -1;
	int dur_idx = -1, reg_idx = -1;

	if (lp_csv_open(&c, path, NULL, err) < 0)
		return -1;
	rc = lp_csv_next(&c, err);
	if (rc <= 0) {
		if (rc == 0)
			lp_err_set(err, LP_EPARSE, "'%s' is empty (expected an ncu raw page)", path);
		goto out;
	}
	ncols = c.n_fields;
	cols = calloc(ncols, sizeof(*cols));
	metrics = calloc(ncols, sizeof(*metrics));
	pp = calloc(1, sizeof(*pp));
	se = calloc(1, sizeof(*se));
	if (!cols || !metrics || !pp || !se) {
		lp_oom(err);
		goto out;
	}
	for (i = 0; i < ncols; i++) {
		cols[i].kind = classify(c.fields[i]);
		cols[i].scale = 1;
		if (cols[i].kind == COL_KERNEL)
			have_kernel = 1;
		if (cols[i].kind == COL_ID)
			have_id = 1;
		if (cols[i].kind == COL_METRIC) {
			const char *name = lp_arena_strdup(&names, c.fields[i]);
			if (!name) {
				lp_oom(err);
				goto out;
			}
			cols[i].metric = (int)n_metrics;
			metrics[n_metrics].name = name;
			metrics[n_metrics].unit = "";
			if (!strcmp(name, LP_NCU_DURATION_METRIC))
				dur_idx = (int)n_metrics;
			if (!strcmp(name, "launch__registers_per_thread"))
				reg_idx = (int)n_metrics;
			n_metrics++;
		}
	}
	if (!have_kernel || !have_id) {
		lp_err_set(err, LP_EPARSE, "%s:1: column '%s' missing (not an ncu raw page?)", path,
			have_id ? "Kernel Name" : "ID");
		goto out;
	}
	if ((flags & LP_NCU_RAW_NEED_DURATION) && dur_idx < 0) {
		/* without it every kernel would read 0 ms */
		lp_err_set(err, LP_EPARSE, "%s:1: column '%s' missing: a kernel table needs each launch's duration", path,
			LP_NCU_DURATION_METRIC);
		lp_err_hint(err, "collect it (the SpeedOfLight section, or --metrics %s)", LP_NCU_DURATION_METRIC);
		goto out;
	}
	while ((rc = lp_csv_next(&c, err)) > 0) {
		struct lp_ncu_result r;
		int have_block = 0, have_grid = 0;
		if (c.n_fields == 1 && c.lens[0] == 0)
			continue;  /* blank line */
		if (c.n_fields != ncols) {
			lp_err_set(err, LP_EPARSE, "%s:%llu: row has %zu cells, the header has %zu (truncated file?)",
				path, (unsigned long long)c.line, c.n_fields, ncols);
			goto out;
		}
		for (i = 0; i < ncols; i++)
			if (cols[i].kind == COL_ID)
				break;
		if (!strcmp(c.fields[i], "ID")) {
			/* the header again: read as units it would scale every time 1000x wrong */
			lp_err_set(err, LP_EPARSE, "%s:%llu: second header line (two exports concatenated, or the header written twice?)",
				path, (unsigned long long)c.line);
			goto out;
		}
		if (!units_checked) {
			units_checked = 1;
			if (*c.fields[i]) {
				/* ncu writes the units row under the header, always: without it every value would be
				 * read in base units whatever its real unit (usecond as ns: 1000x too small) */
				lp_err_set(err, LP_EPARSE, "%s:%llu: no units row under the header (row %llu is a result: ID '%.20s')",
					path, (unsigned long long)c.line, (unsigned long long)c.line, c.fields[i]);
				lp_err_hint(err, "export the raw page whole: ncu -i REPORT --csv --page raw --print-units base");
				goto out;
			}
			{  /* the units row: the ID column has no unit */
				for (i = 0; i < ncols; i++) {
					char base[64];
					struct lp_metric *m;
					double v;
					if (cols[i].kind == COL_KERNEL && *c.fields[i]) {
						lp_err_set(err, LP_EPARSE, "%s:%llu:%zu: units row does not look like units: kernel name '%.40s'",
							path, (unsigned long long)c.line, i + 1, c.fields[i]);
						goto out;
					}
					if (cols[i].kind != COL_METRIC)
						continue;
					if (lp_csv_number(c.fields[i], &v) == 1) {
						lp_err_set(err, LP_EPARSE, "%s:%llu:%zu: units row does not look like units: '%.40s' in column '%s'",
							path, (unsigned long long)c.line, i + 1, c.fields[i], metrics[cols[i].metric].name);
						goto out;
					}
					m = &metrics[cols[i].metric];
					lp_ncu_unit_to_base(c.fields[i], &cols[i].scale, base, sizeof(base));
					if ((int)cols[i].metric == dur_idx && *c.fields[i] && strcmp(base, "nsecond")) {
						/* a duration in bytes or percent: the header cells were moved */
						lp_err_set(err, LP_EPARSE, "%s:%llu:%zu: units row says '%.30s' for '%s', not a time "
							"(header and units do not match)", path, (unsigned long long)c.line, i + 1,
							c.fields[i], m->name);
						goto out;
					}
					m->unit = lp_arena_strdup(&names, base);
					if (!m->unit) {
						lp_oom(err);
						goto out;
					}
				}
				continue;
			}
		}
		memset(&r, 0, sizeof(r));
		r.line = c.line;
		r.device = -1;
		r.duration_ns = -1;
		r.process = r.host = r.context = r.stream = r.cc = "";
		r.kernel_name = "";
		pp->n = se->n = 0;
		r.pushpop = pp;
		r.startend = se;
		for (i = 0; i < ncols; i++) {
			const char *f = c.fields[i];
			double v;
			switch (cols[i].kind) {
			case COL_METRIC: {
				struct lp_metric *m = &metrics[cols[i].metric];
				int k = number(f, c.lens[i], &v);
				if (k < 0 && lp_csv_numberish(f)) {
					lp_csv_cell_number(path, c.line, i, m->name, f, &v, err);
					goto out;
				}
				m->valid = k == 1;
				m->value = k == 1 ? v * cols[i].scale : 0;
				break;
			}
			case COL_ID:
				if (lp_csv_cell_count(path, c.line, i, "ID", f, UINT64_MAX, &r.id, err) < 0)
					goto out;
				break;
			case COL_PID:
				parse_u32(f, &r.pid);
				break;
			case COL_PROCESS: r.process = f; break;
			case COL_HOST: r.host = f; break;
			case COL_KERNEL: r.kernel_name = f; break;
			case COL_CONTEXT: r.context = f; break;
			case COL_STREAM: r.stream = f; break;
			case COL_CC: {
				/* "9.0": a compute capability; anything else means moved header cells */
				const char *q = f;
				while (*q >= '0' && *q <= '9')
					q++;
				if (*f && strcmp(f, "n/a") && (q == f || *q != '.' || !(q[1] >= '0' && q[1] <= '9'))) {
					lp_err_set(err, LP_EPARSE, "%s:%llu:%zu: 'CC' value '%.40s' is not a compute capability like 9.0",
						path, (unsigned long long)c.line, i + 1, f);
					goto out;
				}
				r.cc = f;
				break;
			}
			case COL_DEVICE: {
				uint64_t dev;
				int k = lp_csv_cell_count(path, c.line, i, "Device", f, INT32_MAX, &dev, err);
				if (k < 0)
					goto out;
				if (k == 1)
					r.device = (int32_t)dev;
				break;
			}
			case COL_BLOCK:
			case COL_GRID:
				/* "(128, 1, 1)", or no value (app-range results); anything else means the header
				 * cells do not match the values (a kernel name read as a launch size) */
				if (lp_ncu_parse_dim3(f, cols[i].kind == COL_BLOCK ? r.block : r.grid) == 0) {
					*(cols[i].kind == COL_BLOCK ? &have_block : &have_grid) = 1;
				} else if (*f && strcmp(f, "n/a")) {
					lp_err_set(err, LP_EPARSE, "%s:%llu:%zu: '%s' value '%.40s' is not a launch size like (128, 1, 1)",
						path, (unsigned long long)c.line, i + 1, cols[i].kind == COL_BLOCK ? "Block Size" : "Grid Size", f);
					goto out;
				}
				break;
			case COL_PUSHPOP:
			case COL_STARTEND:
				if (flags & LP_NCU_RAW_SKIP_NVTX)
					break;
				if (lp_ncu_nvtx_parse(f, cols[i].kind == COL_STARTEND,
						cols[i].kind == COL_STARTEND ? se : pp, err) < 0) {
					lp_err_prefix(err, "%s:%llu", path, (unsigned long long)c.line);
					goto out;
				}
				break;
			}
		}
		r.has_launch = have_block && have_grid;
		r.is_range = !r.has_launch && !strcmp(r.kernel_name, "range");
		if (dur_idx >= 0 && metrics[dur_idx].valid)
			r.duration_ns = metrics[dur_idx].value;
		if (reg_idx >= 0 && metrics[reg_idx].valid && metrics[reg_idx].value >= 0 &&
				metrics[reg_idx].value <= UINT32_MAX)
			r.registers_per_thread = (uint32_t)metrics[reg_idx].value;
		if (lp_kname_ncu_function(r.kernel_name, &fname) < 0) {
			lp_oom(err);
			goto out;
		}
		r.short_name = fname.data;
		r.metrics = metrics;
		r.n_metrics = n_metrics;
		if (fn(&r, ctx, err) < 0)
			goto out;
	}
	if (rc == 0)
		ret = 0;
out:
	lp_csv_close(&c);
	if (pp)
		lp_ncu_nvtx_stack_release(pp);
	if (se)
		lp_ncu_nvtx_stack_release(se);
	free(pp);
	free(se);
	free(cols);
	free(metrics);
	lp_buf_release(&fname);
	lp_arena_release(&names);
	return ret;
}

/* ---- aggregation into KernelRecord rows (profile/kagg.h) ---- */

int lp_ncu_result_add(struct lp_kagg *agg, const struct lp_ncu_result *r, struct lp_err *err)
{
	struct lp_kagg_item it;
	memset(&it, 0, sizeof(it));
	it.name = r->kernel_name;
	it.short_name = r->short_name;
	it.device = r->device;
	it.duration_ns = r->duration_ns;
	it.grid = r->grid;
	it.block = r->block;
	it.registers_per_thread = r->registers_per_thread;
	it.metrics = r->metrics;
	it.n_metrics = r->n_metrics;
	return lp_kagg_add(agg, &it, 1, -1, -1, err);
}

struct table_ctx {
	struct lp_kagg *agg;
	const struct lp_ncu_select *sel;
	struct lp_ncu_seen *seen;
};

static int table_cb(const struct lp_ncu_result *r, void *vctx, struct lp_err *err)
{
	struct table_ctx *t = vctx;
	if (r->is_range && !(t->sel && t->sel->include_ranges))
		return 0;
	if (t->sel && t->sel->stage) {
		/* both: a push/pop level, or a start/end range open at the launch */
		int pp = lp_ncu_select_stack(t->sel, t->seen, r->pushpop), se = lp_ncu_select_stack(t->sel, t->seen, r->startend);
		if (!pp && !se)
			return 0;
	}
	return lp_ncu_result_add(t->agg, r, err);
}

static int kernel_table(const char *path, const struct lp_ncu_select *sel, struct lp_ncu_seen *seen,
	int seen_needs_duration, struct lp_kernel_table *out, struct lp_err *err);

int lp_ncu_raw_kernel_table(const char *path, const struct lp_ncu_select *sel,
	struct lp_kernel_table *out, struct lp_err *err)
{
	return kernel_table(path, sel, NULL, 0, out, err);
}

int lp_ncu_raw_kernel_table_seen(const char *path, const struct lp_ncu_select *sel, struct lp_ncu_seen *seen,
	struct lp_kernel_table *out, struct lp_err *err)
{
	return kernel_table(path, sel, seen, 1, out, err);
}

static int kernel_table(const char *path, const struct lp_ncu_select *sel, struct lp_ncu_seen *seen,
	int seen_needs_duration, struct lp_kernel_table *out, struct lp_err *err)
{
	struct table_ctx t;
	memset(out, 0, sizeof(*out));
	t.agg = lp_kagg_new(0);
	t.sel = sel;
	t.seen = seen;
	if (!t.agg)
		return lp_oom(err);
	if (lp_ncu_raw_stream_ex(path, (sel && sel->stage ? 0 : LP_NCU_RAW_SKIP_NVTX) | (seen_needs_duration ? LP_NCU_RAW_NEED_DURATION : 0),
		table_cb, &t, err) < 0) {
		lp_kagg_free(t.agg);
		return -1;
	}
	return lp_kagg_finish(t.agg, out, err);
}
