/* topn.c: picking the kernels ncu profiles (see topn.h). Sits between the capture phase
 * (trace or nsys) and the ncu phase (collect/ncu.c), and checks the result afterwards. */
#include "analyze/topn.h"

#include <stdlib.h>
#include <string.h>

#include "parse/kname.h"
#include "parse/ncu_raw.h"

int lp_topn_regex_escape(const char *s, struct lp_buf *out)
{
	for (; *s; s++) {
		if (strchr("\\^$.|?*+()[]{}", *s))
			lp_buf_addc(out, '\\');
		lp_buf_addc(out, *s);
	}
	return out->oom ? -1 : 0;
}

static int match_name(const char *name, int function_base, struct lp_buf *out)
{
	lp_buf_reset(out);
	if (function_base)
		return lp_kname_ncu_function(name, out);
	return lp_buf_adds(out, lp_kname_qualified_start(name));
}

void lp_topn_release(struct lp_topn *t)
{
	size_t i;
	for (i = 0; i < t->n_picks; i++) {
		free(t->picks[i].kernel_name);
		free(t->picks[i].match_name);
	}
	free(t->picks);
	free(t->regex);
	memset(t, 0, sizeof(*t));
}

int lp_topn_from_table(const struct lp_kernel_table *tab, const struct lp_topn_opts *o, struct lp_topn *out,
	struct lp_err *err)
{
	size_t n = o && o->n ? o->n : 5, i, j;
	const char *base = o && o->name_base ? o->name_base : "demangled";
	int function_base;
	struct lp_buf m = LP_BUF_INIT, re = LP_BUF_INIT;
	memset(out, 0, sizeof(*out));
	if (strcmp(base, "demangled") && strcmp(base, "function"))
		return lp_err_set(err, LP_EUSAGE, "top-N selection cannot match kernel_name_base '%s'", base);
	function_base = !strcmp(base, "function");
	out->launch_count = o && o->launch_count > 0 ? o->launch_count : 1;
	out->n_candidates = tab->n_rows;
	out->stage_total_ms = tab->total_ms;
	out->picks = calloc(n, sizeof(*out->picks));
	if (!out->picks)
		goto oom;
	for (i = 0; i < tab->n_rows && out->n_picks < n; i++) {
		const struct lp_kernel_record *r = &tab->rows[i];
		int dup = 0;
		if (lp_kname_is_comm(r->kernel_name)) {
			out->n_comm_skipped++;   /* never replay a collective (topn.h) */
			continue;
		}
		if (match_name(r->kernel_name, function_base, &m) < 0)
			goto oom;
		for (j = 0; j < out->n_picks; j++)  /* the same kernel on two devices, or two templates with one function name */
			if (!strcmp(out->picks[j].match_name, m.data)) {
				out->picks[j].total_ms += r->total_ms;
				out->picks[j].calls += r->calls;
				dup = 1;
			}
		if (dup)
			continue;
		out->picks[out->n_picks].kernel_name = strdup(r->kernel_name);
		out->picks[out->n_picks].match_name = strdup(m.data);
		if (!out->picks[out->n_picks].kernel_name || !out->picks[out->n_picks].match_name)
			goto oom;
		out->picks[out->n_picks].total_ms = r->total_ms;
		out->picks[out->n_picks].calls = r->calls;
		out->n_picks++;
	}
	for (i = 0; i < out->n_picks; i++)
		out->picks[i].share = tab->total_ms > 0 ? out->picks[i].total_ms / tab->total_ms : 0;
	out->launch_count_total = (long)out->n_picks * out->launch_count;
	if (out->n_picks) {
		/* demangled: ncu may or may not print the return type before the qualified name */
		lp_buf_adds(&re, function_base ? "regex:^(" : "regex:(^| )(");
		for (i = 0; i < out->n_picks; i++) {
			if (i)
				lp_buf_addc(&re, '|');
			lp_topn_regex_escape(out->picks[i].match_name, &re);
		}
		lp_buf_adds(&re, ")$");
		if (re.oom)
			goto oom;
		out->regex = lp_buf_detach(&re, NULL);
	}
	lp_buf_release(&m);
	lp_buf_release(&re);
	return 0;
oom:
	lp_buf_release(&m);
	lp_buf_release(&re);
	lp_topn_release(out);
	return lp_oom(err);
}

int lp_topn_from_profile(const struct lp_profile *p, const struct lp_topn_opts *o, struct lp_topn *out,
	struct lp_err *err)
{
	struct lp_kernel_filter f;
	struct lp_kernel_table t;
	int rc;
	memset(&f, 0, sizeof(f));
	f.stage = o && o->stage ? (*o->stage ? o->stage : NULL) : "decode_all";
	f.device = -1;
	f.exclude_warmup = o ? o->exclude_warmup : 1;
	if (lp_kernel_table_build(p, &f, &t, err) < 0)
		return -1;
	if (t.n_rows == 0 && f.stage) {
		lp_kernel_table_release(&t);
		memset(out, 0, sizeof(*out));
		return lp_err_set(err, LP_EPARTIAL, "no kernels ran under the stage '%s'", f.stage);
	}
	rc = lp_topn_from_table(&t, o, out, err);
	lp_kernel_table_release(&t);
	return rc;
}

size_t lp_topn_check(const struct lp_topn *t, const struct lp_kernel_table *ncu, const char *name_base,
	uint64_t *profiled)
{
	struct lp_buf m = LP_BUF_INIT, fa = LP_BUF_INIT, fb = LP_BUF_INIT;
	int function_base = name_base && !strcmp(name_base, "function");
	size_t i, j, hit = 0;
	for (i = 0; i < t->n_picks; i++) {
		profiled[i] = 0;
		for (j = 0; j < ncu->n_rows; j++) {
			const char *row = ncu->rows[j].kernel_name;
			match_name(row, function_base, &m);
			if (!strcmp(m.data, t->picks[i].match_name)) {
				profiled[i] += ncu->rows[j].calls;
				continue;
			}
			/* ncu's export may print another base than the one matched: compare function names */
			lp_kname_ncu_function(row, &fa);
			lp_kname_ncu_function(t->picks[i].kernel_name, &fb);
			if (!function_base && !strchr(row, '(') && !strcmp(fa.data, fb.data))
				profiled[i] += ncu->rows[j].calls;
		}
		if (profiled[i])
			hit++;
	}
	lp_buf_release(&m);
	lp_buf_release(&fa);
	lp_buf_release(&fb);
	return hit;
}
