/* stage_roles.c: which NVTX range names play which stage role (see stages.h): the built-in
 * names, the user's `stages.*` lists (literal names or `regex:`), and the role of every range of
 * a profile. The first step of lp_stages_compute (stages.c); lp_stat_compute, the summary used by
 * every per-iteration number, lives here too. */
#include "analyze/stages.h"

#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

void lp_stat_compute(const double *x, size_t n, struct lp_stat *out)
{
	size_t i;
	double sum = 0, ss = 0;
	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	out->min = out->max = x[0];
	for (i = 0; i < n; i++) {
		sum += x[i];
		if (x[i] < out->min)
			out->min = x[i];
		if (x[i] > out->max)
			out->max = x[i];
	}
	out->mean = sum / (double)n;
	if (n < 2)
		return;
	for (i = 0; i < n; i++)
		ss += (x[i] - out->mean) * (x[i] - out->mean);
	out->std = sqrt(ss / (double)(n - 1));
}

int lp_stage_is_structural(const char *name)
{
	static const char *const names[] = { "prefill", "decode_all", "decode_step", "warmup", "iteration",
					     "iter", "generate", NULL };
	size_t i;
	for (i = 0; names[i]; i++)
		if (!strcmp(name, names[i]))
			return 1;
	return 0;
}

static const char *const def_prefill[] = { "prefill", NULL };
static const char *const def_decode[] = { "decode_all", "decode", NULL };
static const char *const def_step[] = { "decode_step", "step", NULL };
static const char *const def_warmup[] = { "warmup", NULL };
static const char *const def_mixed[] = { "mixed", NULL };

const char *const *lp_stage_default_names(enum lp_stage_role role)
{
	switch (role) {
	case LP_ROLE_PREFILL: return def_prefill;
	case LP_ROLE_DECODE: return def_decode;
	case LP_ROLE_STEP: return def_step;
	case LP_ROLE_WARMUP: return def_warmup;
	case LP_ROLE_MIXED: return def_mixed;
	default: return NULL;
	}
}

const char *lp_stage_role_name(enum lp_stage_role role)
{
	static const char *const names[LP_ROLE_COUNT] = { "", "prefill", "decode_all", "decode_step", "warmup", "mixed" };
	return role > LP_ROLE_NONE && role < LP_ROLE_COUNT ? names[role] : "";
}

enum lp_stage_role lp_stage_range_role(const struct lp_stage_set *s, int32_t r)
{
	if (!s->range_flags || r < 0 || (size_t)r >= s->n_ranges)
		return LP_ROLE_NONE;
	return (enum lp_stage_role)(s->range_flags[r] & LP_STAGE_RANGE_ROLE_MASK);
}

int lp_stage_range_excluded(const struct lp_stage_set *s, int32_t r)
{
	if (!s->range_flags || r < 0 || (size_t)r >= s->n_ranges)
		return 0;
	return (s->range_flags[r] & LP_STAGE_RANGE_EXCLUDED) != 0;
}

/* ---- the mapping: range names -> roles ---- */

struct pattern {
	enum lp_stage_role role;
	const char *literal;         /* NULL: regex */
	regex_t re;
};

struct matcher {
	struct pattern pats[(LP_ROLE_COUNT - 1) * LP_STAGE_NAMES_MAX];
	size_t n;
	/* distinct interned names already classified (profile names are interned: pointer identity) */
	const char *seen[256];
	uint8_t seen_role[256];
	size_t n_seen;
};

static void matcher_release(struct matcher *m)
{
	size_t i;
	for (i = 0; i < m->n; i++)
		if (!m->pats[i].literal)
			regfree(&m->pats[i].re);
	m->n = 0;
}

static int matcher_init(struct matcher *m, const struct lp_stage_rules *rules, int *all_default, struct lp_err *err)
{
	int role;
	memset(m, 0, sizeof(*m));
	*all_default = 1;
	for (role = LP_ROLE_PREFILL; role < LP_ROLE_COUNT; role++) {
		const char *const *list = rules && rules->names[role] ? rules->names[role] : lp_stage_default_names(role);
		size_t k;
		if (rules && rules->names[role])
			*all_default = 0;
		for (k = 0; list[k]; k++) {
			struct pattern *pt = &m->pats[m->n];
			if (k >= LP_STAGE_NAMES_MAX) {
				matcher_release(m);
				return lp_err_set(err, LP_EUSAGE, "'stages.%s' lists more than %d names", lp_stage_role_name(role),
					LP_STAGE_NAMES_MAX);
			}
			pt->role = (enum lp_stage_role)role;
			if (!strncmp(list[k], "regex:", 6)) {
				int rc = regcomp(&pt->re, list[k] + 6, REG_EXTENDED);
				if (rc != 0) {
					char msg[128];
					regerror(rc, &pt->re, msg, sizeof(msg));
					matcher_release(m);
					return lp_err_set(err, LP_EUSAGE, "invalid regex '%s' in 'stages.%s': %s", list[k] + 6,
						lp_stage_role_name(role), msg);
				}
				pt->literal = NULL;
			} else {
				pt->literal = list[k];
			}
			m->n++;
		}
	}
	return 0;
}

static int whole_match(const regex_t *re, const char *name)
{
	regmatch_t mt;
	return regexec(re, name, 1, &mt, 0) == 0 && mt.rm_so == 0 && (size_t)mt.rm_eo == strlen(name);
}

static enum lp_stage_role classify(struct matcher *m, const char *name)
{
	size_t i;
	enum lp_stage_role role = LP_ROLE_NONE;
	for (i = 0; i < m->n_seen; i++)
		if (m->seen[i] == name)
			return (enum lp_stage_role)m->seen_role[i];
	for (i = 0; i < m->n && role == LP_ROLE_NONE; i++)
		if (m->pats[i].literal ? !strcmp(name, m->pats[i].literal) : whole_match(&m->pats[i].re, name))
			role = m->pats[i].role;
	if (m->n_seen < sizeof(m->seen) / sizeof(m->seen[0])) {
		m->seen[m->n_seen] = name;
		m->seen_role[m->n_seen++] = (uint8_t)role;
	}
	return role;
}

int lp_stage_classify_ranges(const struct lp_profile *p, const struct lp_stage_rules *rules, struct lp_stage_set *s,
	struct lp_err *err)
{
	struct matcher *m = malloc(sizeof(*m));
	size_t i;
	if (!m)
		return lp_oom(err);
	if (matcher_init(m, rules, &s->names_default, err) < 0) {
		free(m);
		return -1;
	}
	for (i = 0; i < p->n_ranges; i++)
		s->range_flags[i] = (uint8_t)classify(m, p->ranges[i].name ? p->ranges[i].name : "");
	matcher_release(m);
	free(m);
	return 0;
}
