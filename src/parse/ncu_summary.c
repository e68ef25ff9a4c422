/* ncu_summary.c: Nsight Compute's --print-summary per-kernel / per-nvtx CSVs (see ncu_summary.h).
 * Sits beside the raw and details parsers: the collection phase may export the summaries next
 * to the raw page, and `llmprof kernels` reads them through parse/source.c. Cells are queued and
 * records cut by shape, which also repairs ncu's misplaced line breaks (the header comment). */
#include "parse/ncu_summary.h"

#include <stdlib.h>
#include <string.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/map.h"
#include "core/vec.h"
#include "parse/csv.h"
#include "parse/kname.h"
#include "profile/kagg.h"

enum {
	C_PID, C_PROCESS, C_HOST, C_DOMAIN, C_RANGE, C_KERNEL, C_BLOCK, C_GRID, C_DEVICE, C_CC,
	C_INVOC, C_SECTION, C_METRIC, C_UNIT, C_MIN, C_MAX, C_AVG, C_N
};

static const char *const col_names[C_N] = {
	"Process ID", "Process Name", "Host Name", "Domain", LP_NCU_SUMMARY_COL_RANGE, "Kernel Name",
	"Block Size", "Grid Size", "Device", "CC", "Invocations", "Section Name", "Metric Name",
	"Metric Unit", "Minimum", "Maximum", "Average",
};

#define METRIC_CELLS 5             /* Metric Name, Metric Unit, Minimum, Maximum, Average */
#define MAX_QUEUED_LINES 4096      /* a misaligned run longer than this is refused */

struct reader {
	const char *path;
	int kind;
	int col[C_N];
	size_t width;                  /* header cells */
	size_t ident;                  /* cells up to and including Section Name */
	/* queued cells: NUL-terminated, back to back in `cells`; off[i] = start of cell i */
	struct lp_buf cells;
	size_t *off;
	uint64_t *line;                /* physical line of each cell */
	size_t n, cap_off, cap_line, head;
	size_t lines_queued;           /* lines read since the last record was cut */
	int eof;                       /* the input ended: no more cells will come */
	/* the current group */
	struct lp_buf ident_prev, tmp, short_name, nvtx_cell, kernel, process;   /* the group's own copies */
	struct lp_ncu_nvtx_stack st;
	struct lp_ncu_summary_row row;
	int have_group;
	lp_ncu_summary_fn fn;
	void *ctx;
};

int lp_ncu_summary_kind_of(char *const *cols, size_t n)
{
	int have[C_N] = { 0 };
	size_t i;
	int k;
	for (i = 0; i < n; i++)
		for (k = 0; k < C_N; k++)
			if (!strcmp(cols[i], col_names[k]))
				have[k] = 1;
	if (!have[C_KERNEL] || !have[C_SECTION] || !have[C_METRIC] || !have[C_AVG] || !have[C_INVOC])
		return 0;
	if (have[C_DOMAIN] && have[C_RANGE])
		return LP_NCU_SUMMARY_PER_NVTX;
	return LP_NCU_SUMMARY_PER_KERNEL;
}

static int map_header(struct reader *R, const struct lp_csv *c, struct lp_err *err)
{
	static const int need[] = { C_KERNEL, C_DEVICE, C_INVOC, C_SECTION, C_METRIC, C_UNIT, C_MIN, C_MAX, C_AVG };
	size_t i;
	int k;
	R->kind = lp_ncu_summary_kind_of(c->fields, c->n_fields);
	if (!R->kind)
		return lp_err_set(err, LP_EPARSE, "%s:%llu: not an ncu --print-summary CSV (no 'Invocations'/'Section Name'/'Average' columns)",
			R->path, (unsigned long long)c->line);
	for (k = 0; k < C_N; k++)
		R->col[k] = lp_csv_column(c, col_names[k]);
	for (i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		if (R->col[need[i]] < 0)
			return lp_err_set(err, LP_EPARSE, "%s:%llu: column '%s' missing", R->path,
				(unsigned long long)c->line, col_names[need[i]]);
	if (R->kind == LP_NCU_SUMMARY_PER_NVTX && R->col[C_RANGE] < 0)
		return lp_err_set(err, LP_EPARSE, "%s:%llu: column '%s' missing", R->path,
			(unsigned long long)c->line, LP_NCU_SUMMARY_COL_RANGE);
	R->width = c->n_fields;
	R->ident = (size_t)R->col[C_SECTION] + 1;
	/* the realignment cuts records as identity + the five metric cells: check that shape */
	if (R->ident + METRIC_CELLS != R->width || R->col[C_METRIC] != (int)R->ident ||
			R->col[C_UNIT] != (int)R->ident + 1 || R->col[C_MIN] != (int)R->ident + 2 ||
			R->col[C_MAX] != (int)R->ident + 3 || R->col[C_AVG] != (int)R->ident + 4)
		return lp_err_set(err, LP_EPARSE,
			"%s:%llu: unexpected column order (the metric columns must follow 'Section Name')",
			R->path, (unsigned long long)c->line);
	return 0;
}

static int push_cell(struct reader *R, const char *s, size_t len, uint64_t line)
{
	if (LP_ARRAY_RESERVE(R->off, R->cap_off, R->n + 1, NULL) < 0 ||
	    LP_ARRAY_RESERVE(R->line, R->cap_line, R->n + 1, NULL) < 0)
		return -1;
	R->off[R->n] = R->cells.len;
	R->line[R->n] = line;
	R->n++;
	if (lp_buf_add(&R->cells, s, len) < 0 || lp_buf_addc(&R->cells, '\0') < 0)
		return -1;
	return 0;
}

static const char *cell_at(const struct reader *R, size_t i)
{
	return R->cells.data + R->off[i];
}

static int is_dim3(const char *s)
{
	uint32_t v[3];
	return lp_ncu_parse_dim3(s, v) == 0;
}

/* Builds the NVTX stack of a per-nvtx group from its Domain and Range cells. */
static int parse_nvtx(struct reader *R, const char *domain, const char *ranges, uint64_t line, struct lp_err *err)
{
	const char *p = ranges, *q;
	lp_buf_reset(&R->nvtx_cell);
	lp_buf_adds(&R->nvtx_cell, "0");
	for (;;) {
		p = strchr(p, '"');
		if (!p)
			break;
		q = strchr(p + 1, '"');
		if (!q)
			return lp_err_set(err, LP_EPARSE, "%s:%llu: unterminated range in NVTX cell '%.60s'", R->path,
				(unsigned long long)line, ranges);
		lp_buf_addf(&R->nvtx_cell, "  \"%s:%.*s\"", *domain ? domain : "<default domain>", (int)(q - p - 1), p + 1);
		p = q + 1;
	}
	if (lp_ncu_nvtx_parse(R->nvtx_cell.data, 0, &R->st, err) < 0)
		return lp_err_prefix(err, "%s:%llu", R->path, (unsigned long long)line);
	return 0;
}

static int new_group(struct reader *R, const char *const *cells, uint64_t line, struct lp_err *err)
{
	struct lp_ncu_summary_row *w = &R->row;
	double v;
	int k;
	w->group = R->have_group ? w->group + 1 : 0;
	R->have_group = 1;
	w->kind = R->kind;
	w->pid = 0;
	w->process = "";
	w->device = -1;
	w->invocations = 0;
	w->has_launch = 0;
	memset(w->block, 0, sizeof(w->block));
	memset(w->grid, 0, sizeof(w->grid));
	R->st.n = 0;
	w->nvtx = &R->st;
	if ((k = R->col[C_PID]) >= 0 && lp_csv_number(cells[k], &v) == 1 && v >= 0 && v <= UINT32_MAX)
		w->pid = (uint32_t)v;
	/* the cells live in the queue, which the next lines move: keep copies */
	lp_buf_reset(&R->process);
	if ((k = R->col[C_PROCESS]) >= 0)
		lp_buf_adds(&R->process, cells[k]);
	w->process = R->process.data;
	lp_buf_reset(&R->kernel);
	lp_buf_adds(&R->kernel, cells[R->col[C_KERNEL]]);
	w->kernel_name = R->kernel.data;
	lp_kname_ncu_function(w->kernel_name, &R->short_name);
	w->short_name = R->short_name.data;
	if (R->col[C_BLOCK] >= 0 && R->col[C_GRID] >= 0 && lp_ncu_parse_dim3(cells[R->col[C_BLOCK]], w->block) == 0 &&
			lp_ncu_parse_dim3(cells[R->col[C_GRID]], w->grid) == 0)
		w->has_launch = 1;
	if (lp_csv_number(cells[R->col[C_DEVICE]], &v) == 1 && v >= 0 && v <= INT32_MAX)
		w->device = (int32_t)v;
	if (lp_csv_cell_count(R->path, line, (size_t)R->col[C_INVOC], "Invocations", cells[R->col[C_INVOC]], INT64_MAX,
			&w->invocations, err) < 0)
		return -1;
	if (R->kind == LP_NCU_SUMMARY_PER_NVTX &&
			parse_nvtx(R, cells[R->col[C_DOMAIN]], cells[R->col[C_RANGE]], line, err) < 0)
		return -1;
	return 0;
}

/* A Minimum/Maximum/Average cell: 1 a value, 0 n/a or a text value, -1 a damaged number
 * ("inf", "1e999", "12x": the rule for every number) with err naming file:line:col. */
static int value_cell(struct reader *R, const char *const *cells, int k, uint64_t line, double *out,
	struct lp_err *err)
{
	const char *s = cells[R->col[k]];
	int rc = lp_csv_number(s, out);
	if (rc >= 0 || !lp_csv_numberish(s))
		return rc < 0 ? 0 : rc;
	return lp_csv_cell_number(R->path, line, (size_t)R->col[k], col_names[k], s, out, err);
}

/* One complete record (`cells` has R->width entries). */
static int emit(struct reader *R, const char *const *cells, uint64_t line, struct lp_err *err)
{
	struct lp_ncu_summary_row *w = &R->row;
	char base[64];
	double scale, mn, mx, av;
	int kmin, kmax, kavg;
	size_t i;
	/* the group's identity: every cell before Section Name */
	lp_buf_reset(&R->tmp);
	for (i = 0; i + 1 < R->ident; i++) {
		lp_buf_adds(&R->tmp, cells[i]);
		lp_buf_addc(&R->tmp, '\x1f');
	}
	if (!R->have_group || strcmp(R->tmp.data, R->ident_prev.data) != 0) {
		lp_buf_reset(&R->ident_prev);
		lp_buf_add(&R->ident_prev, R->tmp.data, R->tmp.len);
		if (new_group(R, cells, line, err) < 0)
			return -1;
	}
	w->line = line;
	w->section = cells[R->col[C_SECTION]];
	w->metric = cells[R->col[C_METRIC]];
	lp_ncu_unit_to_base(cells[R->col[C_UNIT]], &scale, base, sizeof(base));
	w->unit = base;
	if ((kmin = value_cell(R, cells, C_MIN, line, &mn, err)) < 0 ||
			(kmax = value_cell(R, cells, C_MAX, line, &mx, err)) < 0 ||
			(kavg = value_cell(R, cells, C_AVG, line, &av, err)) < 0)
		return -1;
	w->valid = kmin == 1 && kmax == 1 && kavg == 1;
	w->min = w->valid ? mn * scale : 0;
	w->max = w->valid ? mx * scale : 0;
	w->avg = w->valid ? av * scale : 0;
	return R->fn(w, R->ctx, err);
}

/* Cuts complete records off the front of the queue. `eol`: the last queued cell ended a line. */
static int carve(struct reader *R, struct lp_err *err)
{
	const char *cells[64];
	size_t i, avail;
	int b = R->col[C_BLOCK];
	while ((avail = R->n - R->head) > 0) {
		const char *probe;
		/* ncu ends a misaligned run with a lone trailing comma: one empty cell at the end of a line */
		if (avail == 1 && !*cell_at(R, R->head)) {
			R->head++;
			break;
		}
		if (avail < R->width)
			break;
		if (b >= 0 && !is_dim3(cell_at(R, R->head + (size_t)b)))
			return lp_err_set(err, LP_EPARSE, "%s:%llu: row out of step: '%.40s' where the Block Size belongs",
				R->path, (unsigned long long)R->line[R->head], cell_at(R, R->head + (size_t)b));
		/* a metric's five cells, or the start of the next record (its Block Size at its place)?
		 * The probe may lie past the queued cells (a Block Size column after the fifth): wait
		 * for the next line then, and at the end of input there is no next record. */
		probe = NULL;
		if (b >= 0 && R->head + R->ident + (size_t)b < R->n)
			probe = cell_at(R, R->head + R->ident + (size_t)b);
		else if (b >= 0 && !R->eof)
			break;
		if (probe && is_dim3(probe)) {
			R->head += R->ident;    /* identity and section only: a metric without data */
			continue;
		}
		for (i = 0; i < R->width; i++)
			cells[i] = cell_at(R, R->head + i);
		if (emit(R, cells, R->line[R->head], err) < 0)
			return -1;
		R->head += R->width;
		R->lines_queued = 0;
	}
	if (R->head == R->n) {
		R->head = R->n = 0;
		lp_buf_reset(&R->cells);
	} else if (R->head > 0) {
		/* keep the unread cells only: move them to the front */
		size_t base = R->off[R->head];
		memmove(R->cells.data, R->cells.data + base, R->cells.len - base);
		R->cells.len -= base;
		R->cells.data[R->cells.len] = '\0';
		for (i = R->head; i < R->n; i++) {
			R->off[i - R->head] = R->off[i] - base;
			R->line[i - R->head] = R->line[i];
		}
		R->n -= R->head;
		R->head = 0;
	}
	return 0;
}

int lp_ncu_summary_stream(const char *path, int *kind, lp_ncu_summary_fn fn, void *ctx, struct lp_err *err)
{
	struct lp_csv c;
	struct reader R;
	int rc, ret = -1;
	size_t i;
	memset(&R, 0, sizeof(R));
	R.path = path;
	R.fn = fn;
	R.ctx = ctx;
	lp_buf_init(&R.cells, 0);
	lp_buf_init(&R.ident_prev, 0);
	lp_buf_init(&R.tmp, 0);
	lp_buf_init(&R.short_name, 0);
	lp_buf_init(&R.nvtx_cell, 0);
	lp_buf_init(&R.kernel, 0);
	lp_buf_init(&R.process, 0);
	R.st = (struct lp_ncu_nvtx_stack)LP_NCU_NVTX_STACK_INIT;
	if (lp_csv_open(&c, path, NULL, err) < 0)
		goto out_noclose;
	rc = lp_csv_next(&c, err);
	if (rc <= 0) {
		if (rc == 0)
			lp_err_set(err, LP_EPARSE, "'%s' is empty", path);
		goto out;
	}
	if (map_header(&R, &c, err) < 0)
		goto out;
	if (R.width > 64) {
		lp_err_set(err, LP_EPARSE, "%s: %zu columns: not an ncu summary", path, R.width);
		goto out;
	}
	if (kind)
		*kind = R.kind;
	while ((rc = lp_csv_next(&c, err)) > 0) {
		if (c.n_fields == 1 && !c.lens[0] && (R.n == R.head || R.n - R.head == R.width))
			continue;                     /* a blank line (maybe after a record waiting for its probe) */
		if (R.col[C_BLOCK] < 0 && c.n_fields != R.width) {
			lp_err_set(err, LP_EPARSE, "%s:%llu: %zu cells, the header has %zu", path,
				(unsigned long long)c.line, c.n_fields, R.width);
			goto out;
		}
		for (i = 0; i < c.n_fields; i++)
			if (push_cell(&R, c.fields[i], c.lens[i], c.line) < 0) {
				lp_oom(err);
				goto out;
			}
		if (++R.lines_queued > MAX_QUEUED_LINES) {
			lp_err_set(err, LP_EPARSE, "%s:%llu: rows out of step for more than %d lines", path,
				(unsigned long long)c.line, MAX_QUEUED_LINES);
			goto out;
		}
		if (carve(&R, err) < 0)
			goto out;
	}
	if (rc < 0)
		goto out;
	R.eof = 1;
	if (carve(&R, err) < 0)
		goto out;
	/* at the end, only a record without metric (identity and section) may be left */
	if (R.n - R.head != 0 && R.n - R.head != R.ident) {
		lp_err_set(err, LP_EPARSE, "%s:%llu: truncated row (%zu cells, the header has %zu)", path,
			(unsigned long long)R.line[R.head], R.n - R.head, R.width);
		goto out;
	}
	ret = 0;
out:
	lp_csv_close(&c);
out_noclose:
	lp_buf_release(&R.cells);
	lp_buf_release(&R.ident_prev);
	lp_buf_release(&R.tmp);
	lp_buf_release(&R.short_name);
	lp_buf_release(&R.nvtx_cell);
	lp_buf_release(&R.kernel);
	lp_buf_release(&R.process);
	lp_ncu_nvtx_stack_release(&R.st);
	free(R.off);
	free(R.line);
	return ret;
}

/* ---- the kernel table ---- */

#define DURATION_SECTION "GPU Speed Of Light Throughput"

struct table {
	const char *path;
	const struct lp_ncu_select *sel;
	struct lp_ncu_seen *seen;
	struct lp_kagg *agg;
	struct lp_arena names;         /* interned "<section>/<metric>" names */
	struct lp_map name_set;        /* interns into `names` */
	struct lp_buf key, kernel, short_name;
	/* the open group */
	int open, keep;
	uint64_t group, invocations;
	int32_t device;
	int has_launch;
	uint32_t block[3], grid[3];
	double dur_ns, dur_min_ns, dur_max_ns;
	int dur_rank;                  /* 2: gpu__time_duration.sum, 1: SOL Duration, 0: none */
	struct lp_metric *metrics;
	size_t n_metrics, cap_metrics;
};

static const char *intern(struct table *t, const char *s)
{
	return lp_map_intern(&t->name_set, &t->names, s, strlen(s), NULL);
}

static int flush(struct table *t, struct lp_err *err)
{
	struct lp_kagg_item it;
	if (!t->open)
		return 0;
	t->open = 0;
	if (!t->keep)
		return 0;
	memset(&it, 0, sizeof(it));
	it.name = t->kernel.data;
	it.short_name = t->short_name.data;
	it.device = t->device;
	it.block = t->block;
	it.grid = t->grid;
	it.duration_ns = t->dur_rank ? t->dur_ns : -1;
	it.metrics = t->metrics;
	it.n_metrics = t->n_metrics;
	return lp_kagg_add(t->agg, &it, t->invocations, t->dur_rank ? t->dur_min_ns : -1,
		t->dur_rank ? t->dur_max_ns : -1, err);
}

static int table_row(const struct lp_ncu_summary_row *w, void *ctx, struct lp_err *err)
{
	struct table *t = ctx;
	struct lp_metric *m;
	int rank = 0;
	if (!t->open || w->group != t->group) {
		if (flush(t, err) < 0)
			return -1;
		t->open = 1;
		t->group = w->group;
		t->keep = !(t->sel && t->sel->stage) || lp_ncu_select_stack(t->sel, t->seen, w->nvtx);
		lp_buf_reset(&t->kernel);
		lp_buf_adds(&t->kernel, w->kernel_name);
		lp_buf_reset(&t->short_name);
		lp_buf_adds(&t->short_name, w->short_name);
		t->device = w->device;
		t->invocations = w->invocations;
		t->has_launch = w->has_launch;
		memcpy(t->block, w->block, sizeof(t->block));
		memcpy(t->grid, w->grid, sizeof(t->grid));
		t->dur_rank = 0;
		t->n_metrics = 0;
	}
	if (!t->keep)
		return 0;
	if (!strcmp(w->metric, LP_NCU_DURATION_METRIC))
		rank = 2;
	else if (!strcmp(w->metric, "Duration") && !strcmp(w->section, DURATION_SECTION))
		rank = 1;
	if (rank && w->valid && strcmp(w->unit, "nsecond"))
		/* a duration that is no time: an emptied unit cell, or values under the wrong header */
		return lp_err_set(err, LP_EPARSE, "%s:%llu: '%s' has unit '%s', not a time (the unit cell and the value do "
			"not match)", t->path, (unsigned long long)w->line, w->metric, w->unit);
	if (rank > t->dur_rank && w->valid) {
		t->dur_rank = rank;
		t->dur_ns = w->avg;
		t->dur_min_ns = w->min;
		t->dur_max_ns = w->max;
	}
	if (LP_ARRAY_RESERVE(t->metrics, t->cap_metrics, t->n_metrics + 1, err) < 0)
		return -1;
	m = &t->metrics[t->n_metrics];
	lp_buf_reset(&t->key);
	lp_buf_addf(&t->key, "%s/%s", w->section, w->metric);
	m->name = intern(t, t->key.data);
	m->unit = intern(t, w->unit);
	if (!m->name || !m->unit)
		return lp_oom(err);
	m->valid = w->valid;
	m->value = w->avg;
	t->n_metrics++;
	return 0;
}

int lp_ncu_summary_kernel_table(const char *path, const struct lp_ncu_select *sel,
	struct lp_kernel_table *out, struct lp_err *err)
{
	return lp_ncu_summary_kernel_table_seen(path, sel, NULL, out, err);
}

int lp_ncu_summary_kernel_table_seen(const char *path, const struct lp_ncu_select *sel, struct lp_ncu_seen *seen,
	struct lp_kernel_table *out, struct lp_err *err)
{
	struct table t;
	struct lp_csv c;
	int kind = 0, rc;
	memset(out, 0, sizeof(*out));
	/* the kind decides what a stage means: look at the header first */
	if (lp_csv_open(&c, path, NULL, err) < 0)
		return -1;
	rc = lp_csv_next(&c, err);
	if (rc > 0)
		kind = lp_ncu_summary_kind_of(c.fields, c.n_fields);
	lp_csv_close(&c);
	if (rc < 0)
		return -1;
	if (kind == LP_NCU_SUMMARY_PER_KERNEL && sel && sel->stage)
		return lp_err_set(err, LP_EUSAGE, "'%s' is an ncu per-kernel summary: it cannot be cut by stage '%s'",
			path, sel->stage);
	if (kind == LP_NCU_SUMMARY_PER_NVTX && !(sel && sel->stage)) {
		lp_err_set(err, LP_EUSAGE, "'%s' is an ncu per-NVTX summary: give --stage (it lists a kernel once per NVTX domain)",
			path);
		return lp_err_hint(err, "the per-kernel summary (--print-summary per-kernel) has the whole-run totals");
	}
	memset(&t, 0, sizeof(t));
	t.path = path;
	t.sel = sel;
	t.seen = seen;
	t.agg = lp_kagg_new(0);
	if (!t.agg)
		return lp_oom(err);
	lp_buf_init(&t.key, 0);
	lp_buf_init(&t.kernel, 0);
	lp_buf_init(&t.short_name, 0);
	rc = lp_ncu_summary_stream(path, NULL, table_row, &t, err);
	if (rc == 0)
		rc = flush(&t, err);
	if (rc == 0) {
		rc = lp_kagg_finish(t.agg, out, err);
		t.agg = NULL;
	}
	lp_kagg_free(t.agg);
	lp_arena_release(&t.names);
	lp_map_release(&t.name_set);
	free(t.metrics);
	lp_buf_release(&t.key);
	lp_buf_release(&t.kernel);
	lp_buf_release(&t.short_name);
	return rc;
}
