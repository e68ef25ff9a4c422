/* sample_coverage.c: lp-sample-coverage, the empirical coverage of sampled tracing's intervals
 * (src/analyze/sampling_check.c, bench/sampling/README.md). Reads an EXACT trace (a folder of
 * .lptrace files), replays a sampling schedule on it many times and prints, per kernel inside the
 * sampling units, how often the 95% interval held the exact total, with the bias, the error and
 * the interval's width (relative to the total). --burst B replays the burst schedule (one cluster
 * of B consecutive units per block, B dividing N; the interval from the clusters' means).
 *
 *   lp-sample-coverage [--every N] [--first K] [--burst B] [--pick random|first]
 *                      [--var balanced|successive|srs] [--trials T] [--seed S] [--min-share F] [--json] TRACE_DIR
 *   lp-sample-coverage --compare SAMPLED_DIR [--min-share F] EXACT_DIR
 *   lp-sample-coverage --dump FILE [--every N] [--first K] [--min-share F] EXACT_DIR
 *
 * --dump: the per-unit values the coverage is computed from (lp_tsample_values), for the kernels
 * above --min-share, as text: a test fixture (tests/fixtures/sampling/). Lines: "units U EXACT NS",
 * "key K EXACT_PART_NS TOTAL_NS NAME" per kernel, "unit CHAIN INDEX ORDINAL V_0 ... V_K-1" per unit
 * of the sampled stratum (ns).
 *
 * --compare: two processes, a sampled trace and an exact one of the same program. Per kernel of the
 * decode stage (the analysis's tables, the sampled one scaled): the sampled estimate and its
 * interval against the exact process's total, and the exact process's own spread between its
 * decode iterations (the first against the last), which no interval of the sampled run covers.
 *
 * Exit status: 0, 2 usage, 1 the trace could not be read or analyzed. A developer's tool: it
 * prints, so it lives beside the tests, not in src/. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/sampling.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"

static int usage(void)
{
	fprintf(stderr, "usage: lp-sample-coverage [--every N] [--first K] [--burst B] [--pick random|first] "
			"[--var balanced|successive|srs] [--trials T] [--seed S] [--min-share F] [--json] TRACE_DIR\n"
			"       lp-sample-coverage --compare SAMPLED_DIR [--min-share F] EXACT_DIR\n");
	return 2;
}

static int load(const char *dir, struct lp_profile *p, struct lp_analysis *a)
{
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	lp_profile_init(p, dir);
	memset(&in, 0, sizeof(in));
	in.profile = p;
	if (lp_trace_load(dir, p, &err) < 0 || lp_analyze(&in, a, &err) < 0) {
		fprintf(stderr, "lp-sample-coverage: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* The decode-stage time of kernel `name` in the first and the last decode iteration of `a`. */
static void iter_split(const struct lp_profile *p, const struct lp_analysis *a, const char *name, double *first_ms,
	double *last_ms)
{
	const struct lp_stage *st = lp_stages_find(&a->stages, LP_STAGE_DECODE);
	int32_t s = st ? (int32_t)(st - a->stages.stages) : -1;
	size_t i;
	*first_ms = *last_ms = 0;
	if (!st || st->n_iters < 2)
		return;
	for (i = 0; i < p->n_kernels && i < a->stages.n_kernels; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		int32_t r;
		int guard = 0;
		if (a->stages.kernel_stage[i] != s || !k->name || strcmp(k->name, name))
			continue;
		for (r = k->range; r >= 0 && guard++ < 512; r = p->ranges[r].parent) {
			if (r == st->iters[0].range)
				*first_ms += (double)(k->end_ns - k->start_ns) / 1e6;
			if (r == st->iters[st->n_iters - 1].range)
				*last_ms += (double)(k->end_ns - k->start_ns) / 1e6;
		}
	}
}

static int dump_values(const char *path, const char *dir, const struct lp_tsample_plan *plan, double min_share)
{
	struct lp_profile p;
	struct lp_analysis *a = calloc(1, sizeof(*a));
	struct lp_tsample_values v;
	struct lp_err err = LP_ERR_INIT;
	size_t i, k, *pick = NULL, n = 0;
	FILE *f;
	struct lp_tsample_plan got;
	if (!a || load(dir, &p, a) < 0)
		return 1;
	if (lp_tsample_plan_of(&p, &got)) {
		fprintf(stderr, "lp-sample-coverage: %s is a sampled trace: --dump needs an exact one\n", dir);
		lp_analysis_release(a);
		free(a);
		lp_profile_release(&p);
		return 1;
	}
	if (lp_tsample_values_of(&p, &a->stages, plan, &v, &err) < 0 || !(pick = calloc(v.n_keys + 1, sizeof(*pick)))) {
		fprintf(stderr, "lp-sample-coverage: %s\n", err.msg[0] ? err.msg : "out of memory");
		return 1;
	}
	if (!(f = fopen(path, "w"))) {
		perror(path);
		return 1;
	}
	for (k = 0; k < v.n_keys; k++)
		if (v.total[k] >= min_share * v.units_ns)
			pick[n++] = k;
	fprintf(f, "units %u %u %.0f\n", v.units, v.units_exact, v.units_ns);
	for (i = 0; i < n; i++)
		fprintf(f, "key %zu %.0f %.0f %s\n", i, v.exact_part[pick[i]], v.total[pick[i]], v.keys[pick[i]]);
	for (i = 0; i < v.n_units; i++) {
		fprintf(f, "unit %u %u %u", v.refs[i].chain, v.refs[i].index, v.ordinal[i]);
		for (k = 0; k < n; k++)
			fprintf(f, " %.0f", v.val[i * v.n_keys + pick[k]]);
		fputc('\n', f);
	}
	if (fclose(f) != 0) {
		perror(path);
		return 1;
	}
	free(pick);
	lp_tsample_values_release(&v);
	lp_analysis_release(a);
	free(a);
	lp_profile_release(&p);
	return 0;
}

static int compare(const char *sampled, const char *exact, double min_share)
{
	struct lp_profile ps, pe;
	struct lp_analysis *as = calloc(1, sizeof(*as)), *ae = calloc(1, sizeof(*ae));
	double total = 0;
	size_t i, j, big = 0, inside = 0;
	if (!as || !ae || load(sampled, &ps, as) < 0 || load(exact, &pe, ae) < 0)
		return 1;
	for (i = 0; i < ae->kernels.n_rows; i++)
		total += ae->kernels.rows[i].stage_ms[1];
	printf("decode-stage kernels: sampled %s (%u of %u units recorded) against exact %s (%.3f ms)\n", sampled,
		as->kernels.sample_n, as->kernels.sample_N, exact, total);
	printf("%10s %9s %10s %8s %7s %10s  %s\n", "exact_ms", "sampled", "+-95%", "diff", "inside", "iter_diff",
		"kernel");
	for (i = 0; i < ae->kernels.n_rows; i++) {
		const struct lp_kernel_row *e = &ae->kernels.rows[i], *s = NULL;
		double d, f, l;
		if (e->stage_ms[1] < min_share * total)
			continue;
		for (j = 0; j < as->kernels.n_rows && !s; j++)
			if (!strcmp(as->kernels.rows[j].name, e->name) && as->kernels.rows[j].device == e->device)
				s = &as->kernels.rows[j];
		big++;
		iter_split(&pe, ae, e->name, &f, &l);
		if (!s) {
			printf("%10.3f %9s %10s %8s %7s %10s  %.60s\n", e->stage_ms[1], "-", "-", "-", "no", "-", e->name);
			continue;
		}
		d = s->stage_ms[1] - e->stage_ms[1];
		inside += s->ci_ms >= 0 && fabs(d) <= s->ci_ms;
		printf("%10.3f %9.3f %9.3f%% %+7.3f%% %7s %+9.3f%%  %.60s\n", e->stage_ms[1], s->stage_ms[1],
			s->ci_ms >= 0 ? 100 * s->ci_ms / e->stage_ms[1] : -1, 100 * d / e->stage_ms[1],
			s->ci_ms >= 0 && fabs(d) <= s->ci_ms ? "yes" : "no", f + l > 0 ? 100 * (l - f) / ((f + l) / 2) : 0,
			e->name);
	}
	printf("%zu kernels above %.1f%% of the exact decode kernel time: %zu inside the sampled run's interval\n", big,
		100 * min_share, inside);
	lp_analysis_release(as);
	lp_analysis_release(ae);
	free(as);
	free(ae);
	lp_profile_release(&ps);
	lp_profile_release(&pe);
	return 0;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

int main(int argc, char **argv)
{
	struct lp_tsample_plan plan = { 1, 8, 2, "decode_step", LP_TRACE_SAMPLE_PICK_RANDOM, 0, 0, 0 };
	enum lp_tsample_var var = LP_TSAMPLE_VAR_BALANCED;
	unsigned long trials = 1000;
	unsigned long long seed = 1;
	double min_share = 0.01;
	int json = 0, i;
	const char *dir = NULL, *vname = "balanced", *cmp = NULL, *dump = NULL;
	struct lp_profile p;
	struct lp_analysis_input in;
	struct lp_analysis *a;
	struct lp_tsample_coverage c;
	struct lp_err err = LP_ERR_INIT;
	size_t k, big = 0;
	unsigned long inside = 0, all = 0;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(o, "--json")) {
			json = 1;
			continue;
		}
		if (o[0] != '-') {
			dir = o;
			continue;
		}
		if (!v)
			return usage();
		i++;
		if (!strcmp(o, "--every"))
			plan.every = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(o, "--first"))
			plan.first = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(o, "--burst"))
			plan.burst = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(o, "--trials"))
			trials = strtoul(v, NULL, 10);
		else if (!strcmp(o, "--seed"))
			seed = strtoull(v, NULL, 10);
		else if (!strcmp(o, "--min-share"))
			min_share = strtod(v, NULL);
		else if (!strcmp(o, "--compare"))
			cmp = v;
		else if (!strcmp(o, "--dump"))
			dump = v;
		else if (!strcmp(o, "--unit"))
			plan.unit = v;
		else if (!strcmp(o, "--pick") && (!strcmp(v, "random") || !strcmp(v, "first")))
			plan.pick = !strcmp(v, "random") ? LP_TRACE_SAMPLE_PICK_RANDOM : LP_TRACE_SAMPLE_PICK_FIRST;
		else if (!strcmp(o, "--var") && !strcmp(v, "balanced"))
			var = LP_TSAMPLE_VAR_BALANCED, vname = v;
		else if (!strcmp(o, "--var") && !strcmp(v, "successive"))
			var = LP_TSAMPLE_VAR_SUCCESSIVE, vname = v;
		else if (!strcmp(o, "--var") && !strcmp(v, "srs"))
			var = LP_TSAMPLE_VAR_SRS, vname = v;
		else
			return usage();
	}
	if (!dir || plan.every < 1 || trials < 1 || (plan.burst && plan.every % plan.burst))
		return usage();
	if (cmp)
		return compare(cmp, dir, min_share);
	if (dump)
		return dump_values(dump, dir, &plan, min_share);
	lp_profile_init(&p, dir);
	if (lp_trace_load(dir, &p, &err) < 0) {
		fprintf(stderr, "lp-sample-coverage: %s\n", err.msg);
		return 1;
	}
	{
		struct lp_tsample_plan got;
		if (lp_tsample_plan_of(&p, &got)) {
			fprintf(stderr, "lp-sample-coverage: %s is a sampled trace: the check needs an exact one "
					"(LLMPROF_TRACE_SAMPLE=off)\n", dir);
			lp_profile_release(&p);
			return 1;
		}
	}
	a = calloc(1, sizeof(*a));
	memset(&in, 0, sizeof(in));
	in.profile = &p;
	if (!a || lp_analyze(&in, a, &err) < 0 ||
	    lp_tsample_coverage(&p, &a->stages, &plan, var, (uint32_t)trials, seed, 0.95, &c, &err) < 0) {
		fprintf(stderr, "lp-sample-coverage: %s\n", err.msg);
		return 1;
	}
	if (json) {
		printf("{\"trace\": ");
		json_str(dir);
		printf(", \"every\": %u, \"first\": %u, \"burst\": %u, \"pick\": \"%s\", \"var\": \"%s\", \"trials\": %u, "
		       "\"units\": %u, \"units_exact\": %u, \"units_ms\": %.6f, \"rows\": [",
			plan.every, plan.first, plan.burst, plan.pick ? "random" : "first", vname, c.trials, c.units, c.units_exact,
			c.units_ns / 1e6);
		for (k = 0; k < c.n_rows; k++) {
			const struct lp_tsample_cov_row *r = &c.rows[k];
			printf("%s\n  {\"kernel\": ", k ? "," : "");
			json_str(r->key);
			printf(", \"exact_ms\": %.6f, \"share\": %.6f, \"covered\": %u, \"unknown\": %u, \"bias\": %.6g, "
			       "\"rmse\": %.6g, \"half_rel\": %.6g}",
				r->exact_ns / 1e6, r->share, r->covered, r->unknown, r->bias, r->rmse, r->half_rel);
		}
		printf("]}\n");
	} else {
		printf("%s: every=%u first=%u burst=%u pick=%s var=%s, %u trials; %u measured units (%u exact), %.3f ms of "
		       "kernels in them\n", dir, plan.every, plan.first, plan.burst, plan.pick ? "random" : "first", vname,
			c.trials, c.units, c.units_exact, c.units_ns / 1e6);
		printf("%9s %7s %9s %9s %9s %9s  %s\n", "exact_ms", "share", "coverage", "bias", "rmse", "+-rel", "kernel");
	}
	for (k = 0; k < c.n_rows; k++) {
		const struct lp_tsample_cov_row *r = &c.rows[k];
		if (r->share < min_share)
			continue;
		big++;
		inside += r->covered;
		all += c.trials;
		if (!json)
			printf("%9.3f %6.2f%% %8.1f%% %+8.3f%% %8.3f%% %8.3f%%  %.70s\n", r->exact_ns / 1e6, 100 * r->share,
				100.0 * r->covered / c.trials, 100 * r->bias, 100 * r->rmse, 100 * r->half_rel, r->key);
	}
	if (!json)
		printf("%zu kernels above %.1f%% of the units' kernel time: their intervals held the exact total in "
		       "%.1f%% of %lu (kernel, trial) pairs\n", big, 100 * min_share, all ? 100.0 * inside / all : 0, all);
	lp_tsample_coverage_release(&c);
	lp_analysis_release(a);
	free(a);
	lp_profile_release(&p);
	return 0;
}
