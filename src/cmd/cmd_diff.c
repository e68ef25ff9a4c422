/* cmd_diff.c: `llmprof diff A B`: what changed between two runs (analyze/diff.h), printed as
 * Markdown or JSON, with `--fail-if EXPR` conditions for CI (docs/diff.md).
 * A and B are run folders (their summary.json and config.yaml) or, both, `llmprof kernels`
 * sources (a trace folder, an nsys SQLite export or stats CSV, an ncu CSV).
 * Exit codes: 0 (no condition holds), 1 (a --fail-if condition holds and is not within noise),
 * 2 (bad option or expression), 3 (a run or source cannot be read, or the schemas differ). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/diff.h"
#include "cmd/cmd.h"
#include "config/yaml.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/opt.h"
#include "parse/source.h"
#include "report/diff_report.h"

static const char usage_line[] = "llmprof diff [--format md|json] [--top N] [--fail-if EXPR]... A B";
static const char description[] =
	"Compare two runs (run folders), or two kernel tables (anything `llmprof kernels` reads): stages,\n"
	"TTFT, tokens/s, kernels (added, removed, changed), operators, MFU/MBU and the environment, each\n"
	"change with a verdict from the runs' own spread (faster / slower / within noise).\n"
	"--fail-if 'METRIC OP VALUE' (repeatable): exit 1 when the change holds and is not within noise,\n"
	"e.g. 'decode.latency > +3%', 'ttft > +5%', 'decode.tokens_per_s < -2%', 'prefill.latency > 0.5ms'.\n"
	"METRIC: ttft, decode.tokens_per_s, decode.ms_per_step, <stage>.latency|host|gpu_busy|step|kernels\n"
	"(prefill., decode. or a stage name), kernel:<full name>. docs/diff.md.";

static const char *opt_format = "md";
static int opt_top = 20;
static struct lp_opt_list opt_fail_if;
static const struct lp_opt opts[] = {
	LP_OPT_STRING(0, "format", &opt_format, "FMT", "md (default) or json"),
	LP_OPT_INT(0, "top", &opt_top, "N", "kernel and operator rows shown in Markdown (default 20; 0: all)"),
	LP_OPT_LIST(0, "fail-if", &opt_fail_if, "EXPR", "exit 1 when this change holds and is not within noise (repeatable)"),
	LP_OPT_END,
};

struct cond {
	const char *text;
	char metric[256];
	char op[3];
	double value;
	int relative;            /* value is a fraction of A */
};

/* "decode.latency > +3%" -> metric, op, value. 0 ok, -1 (err set) when it does not parse. */
static int parse_cond(const char *s, struct cond *c, struct lp_err *err)
{
	const char *p = s, *m0, *m1, *end;
	char *num_end;
	memset(c, 0, sizeof(*c));
	c->text = s;
	while (*p == ' ')
		p++;
	m0 = p;
	while (*p && *p != ' ' && *p != '<' && *p != '>')
		p++;
	m1 = p;
	while (*p == ' ')
		p++;
	if (m1 == m0 || (size_t)(m1 - m0) >= sizeof(c->metric))
		goto bad;
	memcpy(c->metric, m0, (size_t)(m1 - m0));
	if (*p != '<' && *p != '>')
		goto bad;
	c->op[0] = *p++;
	if (*p == '=')
		c->op[1] = *p++;
	while (*p == ' ')
		p++;
	if (!*p)
		goto bad;
	c->value = strtod(p, &num_end);
	if (num_end == p || !isfinite(c->value))
		goto bad;
	end = num_end;
	if (*end == '%') {
		c->relative = 1;
		c->value /= 100;
		end++;
	} else if (!strncmp(end, "ms", 2)) {
		end += 2;
	}
	while (*end == ' ')
		end++;
	if (*end)
		goto bad;
	return 0;
bad:
	lp_err_set(err, LP_EUSAGE, "--fail-if '%s': not 'METRIC OP VALUE'", s);
	return lp_err_hint(err, "e.g. --fail-if 'decode.latency > +3%%' (OP: > < >= <=; VALUE: a change in %% or in the "
		"metric's unit)");
}

static int holds(const struct cond *c, const struct lp_diff_row *r)
{
	double x = c->relative ? r->rel : r->delta;
	if (isnan(x))
		return 0;
	if (r->verdict == LP_DIFF_NOISE || r->verdict == LP_DIFF_NA)
		return 0;   /* within noise, or no spread to judge by: never fails a gate */
	if (!strcmp(c->op, ">"))
		return x > c->value;
	if (!strcmp(c->op, ">="))
		return x >= c->value;
	if (!strcmp(c->op, "<"))
		return x < c->value;
	return x <= c->value;
}

static int load_run(const char *dir, json_t **sum, json_t **cfg, struct lp_err *err)
{
	struct lp_buf p = LP_BUF_INIT;
	json_error_t je;
	int rc = 0;
	*sum = *cfg = NULL;
	lp_fs_join(&p, dir, "summary.json");
	if (!(*sum = json_load_file(p.data, 0, &je))) {
		rc = lp_err_set(err, LP_EPARSE, "cannot read '%s': %s", p.data, je.text);
	} else {
		struct lp_err cerr = LP_ERR_INIT;
		json_t *inputs = NULL;
		lp_fs_join(&p, dir, "config.yaml");
		if (lp_fs_is_file(p.data) && lp_yaml_load_file(p.data, cfg, &cerr) < 0)
			*cfg = NULL;   /* a config that cannot be read only leaves its keys out of the diff */
		/* the workload's command line (inputs.yaml) belongs to what differs: `--gemv cublas` */
		lp_fs_join(&p, dir, "inputs.yaml");
		if (json_is_object(*cfg) && lp_fs_is_file(p.data) && lp_yaml_load_file(p.data, &inputs, &cerr) == 0) {
			const json_t *argv = json_object_get(json_object_get(inputs, "workload"), "argv"), *a;
			struct lp_buf line = LP_BUF_INIT;
			size_t i;
			json_array_foreach(argv, i, a)
				lp_buf_addf(&line, "%s%s", i ? " " : "", json_is_string(a) ? json_string_value(a) : "?");
			if (json_array_size(argv))
				json_object_set_new(*cfg, "workload_argv", json_string(line.data));
			lp_buf_release(&line);
		}
		json_decref(inputs);
	}
	lp_buf_release(&p);
	return rc;
}

/* Markdown for a terminal: the entities the table cells carry (&lt; &gt; &amp;) as the characters a
 * person reads; files and pipes keep them. */
static void print_md(const struct lp_buf *md)
{
	const char *p = md->data, *end = md->data + md->len;
	if (!isatty(STDOUT_FILENO)) {
		fwrite(md->data, 1, md->len, stdout);
		return;
	}
	while (p < end) {
		if (!strncmp(p, "&lt;", 4))
			putchar('<'), p += 4;
		else if (!strncmp(p, "&gt;", 4))
			putchar('>'), p += 4;
		else if (!strncmp(p, "&amp;", 5))
			putchar('&'), p += 5;
		else
			putchar(*p++);
	}
}

static int is_run(const char *path)
{
	struct lp_buf p = LP_BUF_INIT;
	int ok;
	lp_fs_join(&p, path, "summary.json");
	ok = lp_fs_is_dir(path) && lp_fs_is_file(p.data);
	lp_buf_release(&p);
	return ok;
}

static int cmd_diff(const struct lp_args *args, struct lp_ctx *ctx)
{
	const char *format = opt_format;
	int top = opt_top, i, rc = 0;
	struct lp_err err = LP_ERR_INIT;
	struct cond *conds = NULL;
	size_t n_conds = 0, k;
	struct lp_diff d;
	struct lp_buf out = LP_BUF_INIT;
	json_t *sa = NULL, *sb = NULL, *ca = NULL, *cb = NULL;
	(void)ctx;
	conds = calloc((size_t)opt_fail_if.n + 1, sizeof(*conds));
	if (!conds) {
		lp_log_error("out of memory");
		return LP_EXIT_OTHER;
	}
	for (i = 0; i < opt_fail_if.n; i++) {
		if (parse_cond(opt_fail_if.v[i], &conds[n_conds], &err) < 0) {
			rc = lp_cmd_fail(&err);
			goto done;
		}
		n_conds++;
	}
	if (args->n_rest != 2 || (strcmp(format, "md") && strcmp(format, "json")) || top < 0) {
		if (args->n_rest != 2)
			lp_err_set(&err, LP_EUSAGE, "diff takes two runs (or two kernel sources), got %d", args->n_rest);
		else if (top < 0)
			lp_err_set(&err, LP_EUSAGE, "--top must be 0 or more, got %d", top);
		else
			lp_err_set(&err, LP_EUSAGE, "--format must be md or json, got '%s'", format);
		lp_err_hint(&err, "llmprof diff -h");
		rc = lp_cmd_fail(&err);
		goto done;
	}
	if (is_run(args->rest[0]) && is_run(args->rest[1])) {
		if (load_run(args->rest[0], &sa, &ca, &err) < 0 || load_run(args->rest[1], &sb, &cb, &err) < 0 ||
		    lp_diff_runs(sa, ca, sb, cb, &d, &err) < 0) {
			if (err.kind == LP_EUSAGE)
				err.kind = LP_EPARSE;   /* mismatched schemas: the input, not the command line */
			rc = lp_cmd_fail(&err);
			goto done;
		}
	} else {
		struct lp_kernel_table ta, tb;
		enum lp_source_kind kind;
		struct lp_buf res = LP_BUF_INIT;
		struct lp_source_opts so;
		memset(&so, 0, sizeof(so));
		so.exclude_warmup = 1;
		if (lp_source_kernel_table(args->rest[0], &so, &ta, &kind, &res, &err) < 0) {
			lp_buf_release(&res);
			rc = lp_cmd_fail(&err);
			goto done;
		}
		if (lp_source_kernel_table(args->rest[1], &so, &tb, &kind, &res, &err) < 0) {
			lp_kernel_table_release(&ta);
			lp_buf_release(&res);
			rc = lp_cmd_fail(&err);
			goto done;
		}
		lp_buf_release(&res);
		rc = lp_diff_tables(&ta, &tb, &d, &err);
		lp_kernel_table_release(&ta);
		lp_kernel_table_release(&tb);
		if (rc < 0) {
			rc = lp_cmd_fail(&err);
			goto done;
		}
	}
	if (!strcmp(format, "json") ? lp_diff_json(&d, args->rest[0], args->rest[1], &out, &err) < 0
				    : lp_diff_md(&d, args->rest[0], args->rest[1], (size_t)top, &out) < 0) {
		if (!err.kind)
			lp_oom(&err);
		rc = lp_cmd_fail(&err);
	} else if (!strcmp(format, "json")) {
		fwrite(out.data, 1, out.len, stdout);
	} else {
		print_md(&out);
	}
	for (k = 0; k < n_conds && !rc; k++) {
		const struct lp_diff_row *r = lp_diff_find(&d, conds[k].metric);
		if (!r) {
			lp_log_error("--fail-if '%s': no metric '%s' in this diff", conds[k].text, conds[k].metric);
			lp_log_hint("metrics: ttft, decode.tokens_per_s, decode.ms_per_step, prefill.latency, decode.latency, "
				    "decode.step, <stage>.host|gpu_busy|kernels, kernel:<full name> (--format json lists every key)");
			rc = LP_EXIT_USAGE;
			break;
		}
		if (holds(&conds[k], r)) {
			lp_log_error("--fail-if '%s' holds: %s %s %+.2f%% (%s)", conds[k].text, r->label,
				isnan(r->rel) ? "" : "changed", isnan(r->rel) ? 0.0 : 100 * r->rel, lp_diff_verdict_name(r->verdict));
			rc = 1;
		}
	}
	lp_diff_release(&d);
done:
	json_decref(sa);
	json_decref(sb);
	json_decref(ca);
	json_decref(cb);
	lp_buf_release(&out);
	free(conds);
	return rc;
}

const struct lp_cmd lp_cmd_diff = {
	"diff", cmd_diff, "what changed between two runs, with verdicts from their spread", usage_line, description,
	opts,
};
