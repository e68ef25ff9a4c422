/* regions.c: the region model (see regions.h). Sits after the ncu raw-page parser
 * (parse/ncu_raw.c streams results with their NVTX stacks) and before the region report
 * (report/regions_report.c): expressions -> regions, results -> members. regions_tree.c nests
 * and orders them once all results are in, regions_scope.c sums members into totals. */
#include "analyze/regions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/regions_impl.h"
#include "core/map.h"
#include "core/vec.h"

static int compile_kernel(struct lp_regions *r, const char *text, const char *key, size_t i,
	struct lp_region_kernel_pattern *out, struct lp_err *err)
{
	out->text = text;
	out->is_regex = !strncmp(text, "regex:", 6);
	if (out->is_regex) {
		int rc = regcomp(&out->re, text + 6, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[128];
			regerror(rc, &out->re, msg, sizeof(msg));
			out->is_regex = 0;
			return lp_err_set(err, LP_EUSAGE, "'profiling.ncu.regions.%s[%zu]': bad regular expression '%s': %s",
				key, i, text + 6, msg);
		}
		out->is_regex = 2;  /* compiled: free it */
	}
	(void)r;
	return 0;
}

int lp_regions_init(struct lp_regions *r, const struct lp_regions_spec *spec, struct lp_err *err)
{
	size_t i;
	struct lp_regions_priv *pv;
	memset(r, 0, sizeof(*r));
	lp_buf_init(&r->warnings, 0);
	r->spec = spec;
	if (spec->n_include + spec->n_exclude > LP_REGIONS_MAX_EXPRS)
		return lp_err_set(err, LP_EUSAGE, "too many region expressions (%zu, at most %d)",
			spec->n_include + spec->n_exclude, LP_REGIONS_MAX_EXPRS);
	if (spec->n_kernels_include + spec->n_kernels_exclude > LP_REGIONS_MAX_KERNEL_PATTERNS)
		return lp_err_set(err, LP_EUSAGE, "too many kernel patterns (at most %d)", LP_REGIONS_MAX_KERNEL_PATTERNS);
	pv = calloc(1, sizeof(*pv));
	if (!pv)
		return lp_oom(err);
	r->priv = pv;
	lp_buf_init(&pv->key, 0);
	r->inc = lp_arena_alloc(&r->arena, (spec->n_include + 1) * sizeof(*r->inc));
	r->exc = lp_arena_alloc(&r->arena, (spec->n_exclude + 1) * sizeof(*r->exc));
	r->kinc = lp_arena_alloc(&r->arena, (spec->n_kernels_include + 1) * sizeof(*r->kinc));
	r->kexc = lp_arena_alloc(&r->arena, (spec->n_kernels_exclude + 1) * sizeof(*r->kexc));
	r->inc_hits = lp_arena_alloc(&r->arena, (spec->n_include + 1) * sizeof(*r->inc_hits));
	r->metric_present = lp_arena_alloc(&r->arena, spec->n_metrics + 1);
	r->metric_unit = lp_arena_alloc(&r->arena, (spec->n_metrics + 1) * sizeof(*r->metric_unit));
	pv->mcol = lp_arena_alloc(&r->arena, (spec->n_metrics + 1) * sizeof(int));
	pv->row_members = lp_arena_alloc(&r->arena, (spec->n_include * (LP_NCU_NVTX_MAX_DEPTH + 1) + 1) * sizeof(int32_t));
	if (!r->inc || !r->exc || !r->kinc || !r->kexc || !r->inc_hits || !r->metric_present || !r->metric_unit || !pv->mcol ||
			!pv->row_members)
		return lp_oom(err);
	for (i = 0; i < spec->n_metrics; i++)
		r->metric_unit[i] = "";
	for (i = 0; i < spec->n_include; i++, r->n_inc++)
		if (lp_region_pattern_parse(spec->include[i], &r->arena, &r->inc[i], err) < 0)
			return lp_err_prefix(err, "'profiling.ncu.regions.include[%zu]'", i);
	for (i = 0; i < spec->n_exclude; i++, r->n_exc++)
		if (lp_region_pattern_parse(spec->exclude[i], &r->arena, &r->exc[i], err) < 0)
			return lp_err_prefix(err, "'profiling.ncu.regions.exclude[%zu]'", i);
	for (i = 0; i < spec->n_kernels_include; i++) {
		if (compile_kernel(r, spec->kernels_include[i], "kernels.include", i, &r->kinc[i], err) < 0)
			return -1;
		r->n_kinc++;
	}
	for (i = 0; i < spec->n_kernels_exclude; i++) {
		if (compile_kernel(r, spec->kernels_exclude[i], "kernels.exclude", i, &r->kexc[i], err) < 0)
			return -1;
		r->n_kexc++;
	}
	return 0;
}

void lp_regions_release(struct lp_regions *r)
{
	size_t i;
	struct lp_regions_priv *pv = r->priv;
	for (i = 0; i < r->n_kinc; i++)
		if (r->kinc[i].is_regex == 2)
			regfree(&r->kinc[i].re);
	for (i = 0; i < r->n_kexc; i++)
		if (r->kexc[i].is_regex == 2)
			regfree(&r->kexc[i].re);
	if (pv) {
		lp_map_release(&pv->nodes);
		lp_map_release(&pv->names);
		lp_map_release(&pv->seen);
		free(pv->chain_parent);
		free(pv->pattern_index);
		lp_buf_release(&pv->key);
		free(pv);
	}
	free(r->nodes);
	free(r->rows);
	free(r->members);
	free(r->seen);
	free(r->order);
	lp_buf_release(&r->warnings);
	lp_arena_release(&r->arena);
	memset(r, 0, sizeof(*r));
}

static int kernel_pattern_hits(const struct lp_region_kernel_pattern *k, const char *name, const char *short_name)
{
	if (k->is_regex)
		return regexec(&k->re, name, 0, NULL, 0) == 0 ||
			(short_name && regexec(&k->re, short_name, 0, NULL, 0) == 0);
	return !strcmp(k->text, name) || (short_name && !strcmp(k->text, short_name));
}

int lp_regions_kernel_wanted(const struct lp_regions *r, const char *kernel_name, const char *short_name)
{
	size_t i;
	for (i = 0; i < r->n_kexc; i++)
		if (kernel_pattern_hits(&r->kexc[i], kernel_name, short_name))
			return 0;
	if (!r->n_kinc)
		return 1;
	for (i = 0; i < r->n_kinc; i++)
		if (kernel_pattern_hits(&r->kinc[i], kernel_name, short_name))
			return 1;
	return 0;
}

/* The range expression of one stack level, as a user would write it. */
static int level_expr(const struct lp_ncu_nvtx_level *l, int startend, struct lp_buf *b)
{
	const char *c;
	lp_buf_reset(b);
	if (l->domain[0])
		lp_buf_addf(b, "%s@", l->domain);
	for (c = l->name; *c; c++) {
		if ((*c == '@' && !l->domain[0]) || *c == '/' || *c == '\\')
			lp_buf_addc(b, '\\');
		lp_buf_addc(b, *c);
	}
	if (!startend)
		lp_buf_addc(b, '/');
	return b->oom ? -1 : 0;
}

static int note_seen(struct lp_regions *r, const struct lp_ncu_nvtx_stack *st, int startend)
{
	struct lp_regions_priv *pv = r->priv;
	size_t i;
	for (i = 0; i < st->n; i++) {
		char *k;
		int added;
		if (level_expr(&st->levels[i], startend, &pv->key) < 0)
			return -1;
		if (lp_map_find(&pv->seen, pv->key.data, pv->key.len))
			continue;
		if (LP_ARRAY_RESERVE(r->seen, r->cap_seen, r->n_seen + 1, NULL) < 0 ||
		    !(k = lp_arena_strdup(&r->arena, pv->key.data)) ||
		    !lp_map_upsert(&pv->seen, pv->key.data, pv->key.len, &added, NULL))
			return -1;
		r->seen[r->n_seen++] = k;
	}
	return 0;
}

/* The node named `name` of `kind`, created when new; -1 out of memory or too many. */
static int32_t node_for(struct lp_regions *r, int kind, const char *name, const char *domain,
	const char *range, struct lp_err *err)
{
	struct lp_regions_priv *pv = r->priv;
	struct lp_region *n;
	int32_t idx;
	uint64_t v;
	char *key;
	lp_buf_reset(&pv->key);
	lp_buf_addf(&pv->key, "%c:%s", kind == LP_REGION_PUSHPOP ? 'P' : 'S', name);
	if (pv->key.oom)
		return lp_oom(err);
	if (lp_map_get(&pv->nodes, pv->key.data, pv->key.len, &v))
		return (int32_t)v;
	if (r->n_nodes == LP_REGIONS_MAX_NODES)
		return lp_err_set(err, LP_EPARTIAL, "more than %d distinct regions (nested ranges included)",
			LP_REGIONS_MAX_NODES);
	if (LP_ARRAY_RESERVE(r->nodes, r->cap_nodes, r->n_nodes + 1, err) < 0 ||
	    LP_ARRAY_RESERVE(pv->chain_parent, pv->cap_chain_parent, r->n_nodes + 1, err) < 0 ||
	    LP_ARRAY_RESERVE(pv->pattern_index, pv->cap_pattern_index, r->n_nodes + 1, err) < 0)
		return -1;
	key = lp_arena_strdup(&r->arena, pv->key.data);
	idx = (int32_t)r->n_nodes;
	if (!key || lp_map_put(&pv->nodes, pv->key.data, pv->key.len, (uint64_t)idx, NULL) < 0)
		return lp_oom(err);
	n = &r->nodes[r->n_nodes++];
	memset(n, 0, sizeof(*n));
	n->name = key + 2;
	n->domain = lp_arena_strdup(&r->arena, domain);
	n->range = lp_arena_strdup(&r->arena, range);
	if (!n->domain || !n->range)
		return lp_oom(err);
	n->kind = kind;
	n->parent = -1;
	n->order = -1;
	n->first_range_id = UINT64_MAX;
	pv->chain_parent[idx] = -1;
	pv->pattern_index[idx] = -1;
	return idx;
}

static void add_member(struct lp_regions_priv *pv, int32_t node)
{
	size_t i;
	for (i = 0; i < pv->n_row_members; i++)
		if (pv->row_members[i] == node)
			return;
	pv->row_members[pv->n_row_members++] = node;
}

/* The members one include expression gives this result. */
static int match_include(struct lp_regions *r, size_t pi, const struct lp_ncu_result *res, struct lp_err *err)
{
	struct lp_regions_priv *pv = r->priv;
	const struct lp_region_pattern *p = &r->inc[pi];
	const struct lp_ncu_nvtx_stack *st = p->kind == LP_REGION_PUSHPOP ? res->pushpop : res->startend;
	struct lp_buf name = LP_BUF_INIT;
	size_t lo, hi, k;
	int32_t node, prev;
	if (!lp_region_pattern_match(p, st, &lo, &hi))
		return 0;
	r->inc_hits[pi]++;
	node = node_for(r, p->kind, p->name, p->domain, p->parts[p->n_parts - 1], err);
	if (node < 0)
		return -1;
	if (pv->pattern_index[node] < 0 || pv->pattern_index[node] > (int32_t)pi)
		pv->pattern_index[node] = (int32_t)pi;
	if (!r->nodes[node].expression)
		r->nodes[node].expression = p->text;
	if (p->kind == LP_REGION_STARTEND && st->levels[lo].id < r->nodes[node].first_range_id)
		r->nodes[node].first_range_id = st->levels[lo].id;
	add_member(pv, node);
	if (p->kind == LP_REGION_STARTEND)
		return 0;
	/* push/pop ranges above the match are nested regions */
	prev = node;
	lp_buf_adds(&name, p->name);
	for (k = hi + 1; k < st->n; k++) {
		const struct lp_ncu_nvtx_level *l = &st->levels[k];
		lp_buf_adds(&name, "::");
		if (strcmp(l->domain, p->domain) != 0)
			lp_buf_addf(&name, "%s@", l->domain);
		lp_buf_adds(&name, l->name);
		if (name.oom) {
			lp_buf_release(&name);
			return lp_oom(err);
		}
		node = node_for(r, LP_REGION_PUSHPOP, name.data, l->domain, l->name, err);
		if (node < 0) {
			lp_buf_release(&name);
			return -1;
		}
		if (pv->chain_parent[node] < 0)
			pv->chain_parent[node] = prev;
		add_member(pv, node);
		prev = node;
	}
	lp_buf_release(&name);
	return 0;
}

static const char *intern(struct lp_regions *r, const char *s)
{
	struct lp_regions_priv *pv = r->priv;
	return lp_map_intern(&pv->names, &r->arena, s, strlen(s), NULL);
}

static void map_metrics(struct lp_regions *r, const struct lp_ncu_result *res)
{
	struct lp_regions_priv *pv = r->priv;
	size_t i, j;
	if (pv->mcache == res->metrics && pv->mcache_n == res->n_metrics)
		return;
	pv->mcache = res->metrics;
	pv->mcache_n = res->n_metrics;
	r->metrics_known = 1;
	for (i = 0; i < r->spec->n_metrics; i++) {
		pv->mcol[i] = -1;
		for (j = 0; j < res->n_metrics; j++)
			if (!strcmp(res->metrics[j].name, r->spec->metrics[i])) {
				pv->mcol[i] = (int)j;
				r->metric_present[i] = 1;
				if (res->metrics[j].unit && res->metrics[j].unit[0] && !r->metric_unit[i][0]) {
					const char *u = lp_arena_strdup(&r->arena, res->metrics[j].unit);
					r->metric_unit[i] = u ? u : "";
				}
				break;
			}
	}
}

int lp_regions_add_result(struct lp_regions *r, const struct lp_ncu_result *res, struct lp_err *err)
{
	struct lp_regions_priv *pv = r->priv;
	struct lp_region_row *row;
	size_t i, lo, hi;
	if (r->finished)
		return lp_err_set(err, LP_EOTHER, "regions: result added after finish");
	r->results_read++;
	map_metrics(r, res);
	if (note_seen(r, res->pushpop, 0) < 0 || note_seen(r, res->startend, 1) < 0)
		return lp_oom(err);
	for (i = 0; i < r->n_exc; i++) {
		const struct lp_region_pattern *p = &r->exc[i];
		if (lp_region_pattern_match(p, p->kind == LP_REGION_PUSHPOP ? res->pushpop : res->startend, &lo, &hi)) {
			r->dropped_nvtx_exclude++;
			return 0;
		}
	}
	if (!res->is_range && !lp_regions_kernel_wanted(r, res->kernel_name, res->short_name)) {
		r->dropped_kernel_filter++;
		return 0;
	}
	pv->n_row_members = 0;
	for (i = 0; i < r->n_inc; i++)
		if (match_include(r, i, res, err) < 0)
			return -1;
	if (!pv->n_row_members) {
		r->outside_regions++;
		return 0;
	}
	if (r->n_rows == LP_REGIONS_MAX_ROWS)
		return lp_err_set(err, LP_EPARTIAL, "more than %u results in regions", LP_REGIONS_MAX_ROWS);
	if (LP_ARRAY_RESERVE(r->rows, r->cap_rows, r->n_rows + 1, err) < 0 ||
	    LP_ARRAY_RESERVE(r->members, r->cap_members, r->n_members + pv->n_row_members, err) < 0)
		return -1;
	row = &r->rows[r->n_rows];
	memset(row, 0, sizeof(*row));
	row->line = res->line;
	row->id = res->id;
	row->pid = res->pid;
	row->device = res->device;
	row->is_range = res->is_range;
	row->duration_ns = res->duration_ns;
	row->weight = 1;
	row->kernel_name = intern(r, res->kernel_name);
	row->short_name = intern(r, res->short_name ? res->short_name : res->kernel_name);
	if (!row->kernel_name || !row->short_name)
		return lp_oom(err);
	if (r->spec->n_metrics) {
		row->metric_values = lp_arena_alloc(&r->arena, r->spec->n_metrics * sizeof(double));
		row->metric_valid = lp_arena_alloc(&r->arena, r->spec->n_metrics);
		if (!row->metric_values || !row->metric_valid)
			return lp_oom(err);
		for (i = 0; i < r->spec->n_metrics; i++) {
			int c = pv->mcol[i];
			if (c >= 0 && res->metrics[c].valid) {
				row->metric_values[i] = res->metrics[c].value;
				row->metric_valid[i] = 1;
			}
		}
	}
	row->first_member = r->n_members;
	row->n_members = pv->n_row_members;
	for (i = 0; i < pv->n_row_members; i++) {
		r->members[r->n_members].node = pv->row_members[i];
		r->members[r->n_members].exclusive = 0;
		r->n_members++;
		r->nodes[pv->row_members[i]].n_rows++;
	}
	r->n_rows++;
	return 0;
}

static int stream_cb(const struct lp_ncu_result *res, void *ctx, struct lp_err *err)
{
	return lp_regions_add_result(ctx, res, err);
}

int lp_regions_load_ncu_raw(struct lp_regions *r, const char *path, struct lp_err *err)
{
	return lp_ncu_raw_stream(path, stream_cb, r, err);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int lp_regions_profile_ranges(const struct lp_profile *p, struct lp_arena *a, const char ***out,
	size_t *n, struct lp_err *err)
{
	struct lp_buf b = LP_BUF_INIT;
	const char **v;
	size_t i, k = 0;
	*out = NULL;
	*n = 0;
	v = lp_arena_alloc(a, (p->n_ranges + 1) * sizeof(*v));
	if (!v)
		return lp_oom(err);
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *rg = &p->ranges[i];
		struct lp_ncu_nvtx_level l;
		if (rg->kind == LP_RANGE_MARK)
			continue;
		memset(&l, 0, sizeof(l));
		l.domain = rg->domain ? rg->domain : "";
		l.name = rg->name ? rg->name : "";
		if (level_expr(&l, rg->kind == LP_RANGE_STARTEND, &b) < 0 || !(v[k] = lp_arena_strdup(a, b.data))) {
			lp_buf_release(&b);
			return lp_oom(err);
		}
		k++;
	}
	lp_buf_release(&b);
	qsort(v, k, sizeof(*v), cmp_str);
	for (i = 0; i < k; i++)
		if (!*n || strcmp(v[*n - 1], v[i]) != 0)
			v[(*n)++] = v[i];
	*out = v;
	return 0;
}
