/* regions.c: the region model (see regions.h). Sits after the ncu raw-page parser
 * (parse/ncu_raw.c streams results with their NVTX stacks) and before the region report
 * (report/regions_report.c): expressions -> regions, results -> members, members -> totals. */
#include "analyze/regions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int oom(struct lp_err *err)
{
	return lp_oom(err);
}

/* ---- a string -> index map (open addressing; keys owned by the caller's arena) ---- */

struct strmap {
	const char **keys;
	int32_t *vals;
	size_t cap, n;
};

static uint64_t hash_s(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

static int32_t strmap_get(const struct strmap *m, const char *key)
{
	size_t j;
	if (!m->cap)
		return -1;
	for (j = hash_s(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
		if (!strcmp(m->keys[j], key))
			return m->vals[j];
	return -1;
}

static int strmap_put(struct strmap *m, const char *key, int32_t val)
{
	size_t j;
	if ((m->n + 1) * 2 > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 64, i;
		const char **nk = calloc(nc, sizeof(*nk));
		int32_t *nv = calloc(nc, sizeof(*nv));
		if (!nk || !nv) {
			free(nk);
			free(nv);
			return -1;
		}
		for (i = 0; i < m->cap; i++) {
			if (!m->keys[i])
				continue;
			for (j = hash_s(m->keys[i]) & (nc - 1); nk[j]; j = (j + 1) & (nc - 1))
				;
			nk[j] = m->keys[i];
			nv[j] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = nk;
		m->vals = nv;
		m->cap = nc;
	}
	for (j = hash_s(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
		;
	m->keys[j] = key;
	m->vals[j] = val;
	m->n++;
	return 0;
}

static void strmap_release(struct strmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- the model ---- */

struct regions_priv {
	struct strmap nodes;        /* "P:" or "S:" + name -> node index */
	struct strmap names;        /* interned kernel names */
	struct strmap seen;         /* seen range expressions */
	int32_t *chain_parent;      /* per node: the node below it on a stack, -1 */
	int32_t *pattern_index;     /* per node: first include expression naming it, -1 nested */
	const struct lp_metric *mcache;
	size_t mcache_n;
	int *mcol;                  /* spec metric -> index into the result's metrics, -1 */
	struct lp_buf key;          /* scratch */
	int32_t *row_members;       /* scratch: members of the current row */
	size_t n_row_members;
};

static struct regions_priv *P(const struct lp_regions *r)
{
	return r->priv;
}

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
	struct regions_priv *pv;
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
		return oom(err);
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
		return oom(err);
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
	struct regions_priv *pv = P(r);
	for (i = 0; i < r->n_kinc; i++)
		if (r->kinc[i].is_regex == 2)
			regfree(&r->kinc[i].re);
	for (i = 0; i < r->n_kexc; i++)
		if (r->kexc[i].is_regex == 2)
			regfree(&r->kexc[i].re);
	if (pv) {
		strmap_release(&pv->nodes);
		strmap_release(&pv->names);
		strmap_release(&pv->seen);
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
	struct regions_priv *pv = P(r);
	size_t i;
	for (i = 0; i < st->n; i++) {
		char *k;
		if (level_expr(&st->levels[i], startend, &pv->key) < 0)
			return -1;
		if (strmap_get(&pv->seen, pv->key.data) >= 0)
			continue;
		if (r->n_seen == r->cap_seen) {
			size_t nc = r->cap_seen ? r->cap_seen * 2 : 32;
			const char **ns = realloc(r->seen, nc * sizeof(*ns));
			if (!ns)
				return -1;
			r->seen = ns;
			r->cap_seen = nc;
		}
		k = lp_arena_strdup(&r->arena, pv->key.data);
		if (!k || strmap_put(&pv->seen, k, 0) < 0)
			return -1;
		r->seen[r->n_seen++] = k;
	}
	return 0;
}

/* The node named `name` of `kind`, created when new; -1 out of memory or too many. */
static int32_t node_for(struct lp_regions *r, int kind, const char *name, const char *domain,
	const char *range, struct lp_err *err)
{
	struct regions_priv *pv = P(r);
	struct lp_region *n;
	int32_t idx;
	char *key;
	lp_buf_reset(&pv->key);
	lp_buf_addf(&pv->key, "%c:%s", kind == LP_REGION_PUSHPOP ? 'P' : 'S', name);
	if (pv->key.oom)
		return oom(err);
	if ((idx = strmap_get(&pv->nodes, pv->key.data)) >= 0)
		return idx;
	if (r->n_nodes == LP_REGIONS_MAX_NODES)
		return lp_err_set(err, LP_EPARTIAL, "more than %d distinct regions (nested ranges included)",
			LP_REGIONS_MAX_NODES);
	if (r->n_nodes == r->cap_nodes) {
		size_t nc = r->cap_nodes ? r->cap_nodes * 2 : 32;
		struct lp_region *nn = realloc(r->nodes, nc * sizeof(*nn));
		int32_t *cp, *pi;
		if (!nn)
			return oom(err);
		r->nodes = nn;
		cp = realloc(pv->chain_parent, nc * sizeof(*cp));
		if (!cp)
			return oom(err);
		pv->chain_parent = cp;
		pi = realloc(pv->pattern_index, nc * sizeof(*pi));
		if (!pi)
			return oom(err);
		pv->pattern_index = pi;
		r->cap_nodes = nc;
	}
	key = lp_arena_strdup(&r->arena, pv->key.data);
	idx = (int32_t)r->n_nodes;
	if (!key || strmap_put(&pv->nodes, key, idx) < 0)
		return oom(err);
	n = &r->nodes[r->n_nodes++];
	memset(n, 0, sizeof(*n));
	n->name = key + 2;
	n->domain = lp_arena_strdup(&r->arena, domain);
	n->range = lp_arena_strdup(&r->arena, range);
	if (!n->domain || !n->range)
		return oom(err);
	n->kind = kind;
	n->parent = -1;
	n->order = -1;
	n->first_range_id = UINT64_MAX;
	pv->chain_parent[idx] = -1;
	pv->pattern_index[idx] = -1;
	return idx;
}

static void add_member(struct regions_priv *pv, int32_t node)
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
	struct regions_priv *pv = P(r);
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
			return oom(err);
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
	struct regions_priv *pv = P(r);
	size_t j;
	char *k;
	if (pv->names.cap)
		for (j = hash_s(s) & (pv->names.cap - 1); pv->names.keys[j]; j = (j + 1) & (pv->names.cap - 1))
			if (!strcmp(pv->names.keys[j], s))
				return pv->names.keys[j];
	k = lp_arena_strdup(&r->arena, s);
	if (!k || strmap_put(&pv->names, k, 0) < 0)
		return NULL;
	return k;
}

static void map_metrics(struct lp_regions *r, const struct lp_ncu_result *res)
{
	struct regions_priv *pv = P(r);
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
	struct regions_priv *pv = P(r);
	struct lp_region_row *row;
	size_t i, lo, hi;
	if (r->finished)
		return lp_err_set(err, LP_EOTHER, "regions: result added after finish");
	r->results_read++;
	map_metrics(r, res);
	if (note_seen(r, res->pushpop, 0) < 0 || note_seen(r, res->startend, 1) < 0)
		return oom(err);
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
	if (r->n_rows == r->cap_rows) {
		size_t nc = r->cap_rows ? r->cap_rows * 2 : 256;
		struct lp_region_row *nr = realloc(r->rows, nc * sizeof(*nr));
		if (!nr)
			return oom(err);
		r->rows = nr;
		r->cap_rows = nc;
	}
	if (r->n_members + pv->n_row_members > r->cap_members) {
		size_t nc = r->cap_members ? r->cap_members * 2 : 1024;
		struct lp_region_member *nm;
		while (nc < r->n_members + pv->n_row_members)
			nc *= 2;
		nm = realloc(r->members, nc * sizeof(*nm));
		if (!nm)
			return oom(err);
		r->members = nm;
		r->cap_members = nc;
	}
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
		return oom(err);
	if (r->spec->n_metrics) {
		row->metric_values = lp_arena_alloc(&r->arena, r->spec->n_metrics * sizeof(double));
		row->metric_valid = lp_arena_alloc(&r->arena, r->spec->n_metrics);
		if (!row->metric_values || !row->metric_valid)
			return oom(err);
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

/* ---- structure: parents, depths, exclusive members, order ---- */

/* Parent by name: strip `::` levels until a region of that name exists. */
static int32_t parent_by_name(struct lp_regions *r, int32_t idx)
{
	struct regions_priv *pv = P(r);
	const char *name = r->nodes[idx].name;
	size_t len = strlen(name);
	while (len > 2) {
		size_t k = len;
		int32_t p;
		while (k >= 2 && !(name[k - 2] == ':' && name[k - 1] == ':'))
			k--;
		if (k < 2)
			break;
		len = k - 2;
		lp_buf_reset(&pv->key);
		lp_buf_addf(&pv->key, "P:%.*s", (int)len, name);
		if ((p = strmap_get(&pv->nodes, pv->key.data)) >= 0 && p != idx)
			return p;
	}
	return -1;
}

/* Start/end: X's parent is the region whose results contain all of X's (smallest, then the one
 * started later by range id, then by name); equal sets nest by (first id, name). */
static int se_before(const struct lp_region *a, const struct lp_region *b)
{
	if (a->first_range_id != b->first_range_id)
		return a->first_range_id < b->first_range_id;
	return strcmp(a->name, b->name) < 0;
}

static int startend_parents(struct lp_regions *r, struct lp_err *err)
{
	size_t n_se = 0, i, j, k, a, b;
	int32_t *se;
	uint64_t *cnt;
	for (i = 0; i < r->n_nodes; i++)
		n_se += r->nodes[i].kind == LP_REGION_STARTEND;
	if (n_se < 2)
		return 0;
	if (n_se > 1024) {
		lp_buf_addf(&r->warnings, "%zu start/end regions: too many to nest, all kept as roots\n", n_se);
		return 0;
	}
	se = calloc(r->n_nodes, sizeof(*se));
	cnt = calloc(n_se * n_se, sizeof(*cnt));
	if (!se || !cnt) {
		free(se);
		free(cnt);
		return oom(err);
	}
	for (i = 0, k = 0; i < r->n_nodes; i++)
		se[i] = r->nodes[i].kind == LP_REGION_STARTEND ? (int32_t)k++ : -1;
	for (i = 0; i < r->n_rows; i++) {
		const struct lp_region_row *row = &r->rows[i];
		for (a = 0; a < row->n_members; a++) {
			int32_t x = se[r->members[row->first_member + a].node];
			if (x < 0)
				continue;
			for (b = 0; b < row->n_members; b++) {
				int32_t y = se[r->members[row->first_member + b].node];
				if (y >= 0)
					cnt[(size_t)x * n_se + (size_t)y]++;
			}
		}
	}
	for (i = 0; i < r->n_nodes; i++) {
		struct lp_region *x = &r->nodes[i];
		int32_t best = -1;
		if (se[i] < 0 || !x->n_rows)
			continue;
		for (j = 0; j < r->n_nodes; j++) {
			struct lp_region *y = &r->nodes[j];
			if (j == i || se[j] < 0 || cnt[(size_t)se[i] * n_se + (size_t)se[j]] != x->n_rows)
				continue;
			if (y->n_rows == x->n_rows && !se_before(y, x))
				continue;  /* equal sets: only an earlier one contains */
			if (best < 0) {
				best = (int32_t)j;
				continue;
			}
			{
				struct lp_region *bb = &r->nodes[best];
				if (y->n_rows < bb->n_rows || (y->n_rows == bb->n_rows && se_before(bb, y)))
					best = (int32_t)j;
			}
		}
		x->parent = best;
	}
	free(se);
	free(cnt);
	return 0;
}

static struct lp_regions *sort_ctx;

static int cmp_nodes(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
	const struct regions_priv *pv = P(sort_ctx);
	const struct lp_region *x = &sort_ctx->nodes[a], *y = &sort_ctx->nodes[b];
	int32_t ia = pv->pattern_index[a], ib = pv->pattern_index[b];
	/* configured regions first, in config order; then by first sight */
	if ((ia >= 0) != (ib >= 0))
		return ia >= 0 ? -1 : 1;
	if (ia != ib)
		return ia < ib ? -1 : 1;
	if (x->kind == LP_REGION_STARTEND && y->kind == LP_REGION_STARTEND && x->first_range_id != y->first_range_id)
		return x->first_range_id < y->first_range_id ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int build_order(struct lp_regions *r, struct lp_err *err)
{
	int32_t *sorted = malloc((r->n_nodes + 1) * sizeof(*sorted));
	int32_t *stack = malloc((r->n_nodes + 1) * sizeof(*stack));
	size_t i, n_out = 0, sp = 0;
	r->order = malloc((r->n_nodes + 1) * sizeof(*r->order));
	if (!sorted || !stack || !r->order) {
		free(sorted);
		free(stack);
		return oom(err);
	}
	for (i = 0; i < r->n_nodes; i++)
		sorted[i] = (int32_t)i;
	sort_ctx = r;
	qsort(sorted, r->n_nodes, sizeof(*sorted), cmp_nodes);
	sort_ctx = NULL;
	/* pre-order: push roots in reverse so the first comes out first */
	for (i = r->n_nodes; i-- > 0;)
		if (r->nodes[sorted[i]].parent < 0)
			stack[sp++] = sorted[i];
	while (sp) {
		int32_t n = stack[--sp];
		r->nodes[n].order = (int32_t)n_out;
		r->order[n_out++] = n;
		for (i = r->n_nodes; i-- > 0;)
			if (r->nodes[sorted[i]].parent == n)
				stack[sp++] = sorted[i];
	}
	free(sorted);
	free(stack);
	if (n_out != r->n_nodes)
		return lp_err_set(err, LP_EOTHER, "regions: the nesting has a cycle (a bug)");
	return 0;
}

int lp_regions_finish(struct lp_regions *r, struct lp_err *err)
{
	struct regions_priv *pv = P(r);
	size_t i, j, k;
	if (r->finished)
		return 0;
	r->finished = 1;
	for (i = 0; i < r->n_nodes; i++)
		if (r->nodes[i].kind == LP_REGION_PUSHPOP)
			r->nodes[i].parent = pv->chain_parent[i] >= 0 ? pv->chain_parent[i] : parent_by_name(r, (int32_t)i);
	if (startend_parents(r, err) < 0)
		return -1;
	for (i = 0; i < r->n_nodes; i++) {
		int32_t p = r->nodes[i].parent;
		size_t d = 0;
		while (p >= 0 && d <= r->n_nodes) {
			d++;
			p = r->nodes[p].parent;
		}
		if (d > r->n_nodes)
			return lp_err_set(err, LP_EOTHER, "regions: the nesting has a cycle (a bug)");
		r->nodes[i].depth = (uint16_t)(d > UINT16_MAX ? UINT16_MAX : d);
	}
	if (build_order(r, err) < 0)
		return -1;
	/* per row and tree: the deepest member is the exclusive one (ties: earlier in report order) */
	for (i = 0; i < r->n_rows; i++) {
		struct lp_region_member *m = &r->members[r->rows[i].first_member];
		size_t n = r->rows[i].n_members;
		for (j = 0; j < n; j++) {
			int32_t root = m[j].node, best = -1;
			while (r->nodes[root].parent >= 0)
				root = r->nodes[root].parent;
			for (k = 0; k < n; k++) {
				int32_t rk = m[k].node;
				while (r->nodes[rk].parent >= 0)
					rk = r->nodes[rk].parent;
				if (rk != root)
					continue;
				if (best < 0 || r->nodes[m[k].node].depth > r->nodes[m[best].node].depth ||
						(r->nodes[m[k].node].depth == r->nodes[m[best].node].depth &&
						 r->nodes[m[k].node].order < r->nodes[m[best].node].order))
					best = (int32_t)k;
			}
			m[j].exclusive = (size_t)best == j;
		}
	}
	/* seen ranges, sorted */
	for (i = 1; i < r->n_seen; i++) {
		const char *x = r->seen[i];
		for (j = i; j > 0 && strcmp(r->seen[j - 1], x) > 0; j--)
			r->seen[j] = r->seen[j - 1];
		r->seen[j] = x;
	}
	return 0;
}

/* ---- folder names ---- */

int lp_regions_sanitize(const char *name, struct lp_buf *out)
{
	const unsigned char *c;
	size_t start;
	lp_buf_reset(out);
	for (c = (const unsigned char *)name; *c; c++) {
		int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			*c == '.' || *c == '-' || *c == '_';
		if (ok)
			lp_buf_addc(out, (char)*c);
		else if (out->len && out->data[out->len - 1] != '_')
			lp_buf_addc(out, '_');
	}
	while (out->len && (out->data[out->len - 1] == '_' || out->data[out->len - 1] == '.'))
		lp_buf_setlen(out, out->len - 1);
	for (start = 0; start < out->len && (out->data[start] == '_' || out->data[start] == '.'); start++)
		;
	if (start) {
		memmove(out->data, out->data + start, out->len - start);
		lp_buf_setlen(out, out->len - start);
	}
	if (out->len > 96)
		lp_buf_setlen(out, 96);
	while (out->len && (out->data[out->len - 1] == '_' || out->data[out->len - 1] == '.'))
		lp_buf_setlen(out, out->len - 1);
	if (!out->len)
		lp_buf_adds(out, "region");
	return out->oom ? -1 : 0;
}

int lp_regions_assign_dirs(struct lp_regions *r, struct lp_err *err)
{
	struct strmap used = { 0 };
	struct lp_buf b = LP_BUF_INIT, c = LP_BUF_INIT;
	size_t i;
	int ret = -1;
	if (strmap_put(&used, "report.json", 0) < 0 || strmap_put(&used, "report.md", 0) < 0)
		goto out;
	for (i = 0; i < r->n_nodes; i++) {
		struct lp_region *n = &r->nodes[r->order[i]];
		int k = 1;
		char *d;
		if (lp_regions_sanitize(n->name, &b) < 0)
			goto out;
		lp_buf_reset(&c);
		lp_buf_adds(&c, b.data);
		while (strmap_get(&used, c.data) >= 0) {
			lp_buf_reset(&c);
			lp_buf_addf(&c, "%s-%d", b.data, ++k);
		}
		if (c.oom || !(d = lp_arena_strdup(&r->arena, c.data)) || strmap_put(&used, d, 0) < 0)
			goto out;
		n->dir = d;
	}
	ret = 0;
out:
	strmap_release(&used);
	lp_buf_release(&b);
	lp_buf_release(&c);
	return ret < 0 ? oom(err) : 0;
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
		return oom(err);
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
			return oom(err);
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
