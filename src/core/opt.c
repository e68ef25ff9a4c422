/* opt.c: subcommand option parsing from a table (see opt.h). */
#include "core/opt.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"

static const struct lp_opt *find_long(const struct lp_opt *opts, const char *name, size_t n)
{
	for (; opts->type != LP_OPT_END_; opts++)
		if (opts->long_name && strlen(opts->long_name) == n && !strncmp(opts->long_name, name, n))
			return opts;
	return NULL;
}

static const struct lp_opt *find_short(const struct lp_opt *opts, char c)
{
	for (; opts->type != LP_OPT_END_; opts++)
		if (opts->short_name && opts->short_name == c)
			return opts;
	return NULL;
}

static int set_value(const struct lp_opt *o, const char *display, const char *val, struct lp_err *err)
{
	char *end;
	long v;
	switch (o->type) {
	case LP_OPT_FLAG_:
		*(int *)o->value = 1;
		return 0;
	case LP_OPT_STRING_:
		*(const char **)o->value = val;
		return 0;
	case LP_OPT_INT_:
		errno = 0;
		v = strtol(val, &end, 10);
		if (errno || end == val || *end || v < INT_MIN || v > INT_MAX) {
			lp_err_set(err, LP_EUSAGE, "option '%s' expects an integer, got '%s'", display, val);
			return -1;
		}
		*(int *)o->value = (int)v;
		return 0;
	case LP_OPT_LIST_: {
		struct lp_opt_list *l = o->value;
		const char **nv = lp_reallocarray(l->v, (size_t)l->n + 1, sizeof(*nv));   /* n <= argc */
		if (!nv)
			return lp_oom(err);
		l->v = nv;
		l->v[l->n++] = val;
		return 0;
	}
	default:
		return lp_err_set(err, LP_EOTHER, "bad option table");
	}
}

int lp_opt_parse(int argc, const char **argv, const struct lp_opt *opts, struct lp_args *args,
	struct lp_err *err)
{
	int i;
	memset(args, 0, sizeof(*args));
	args->rest = calloc((size_t)argc + 1, sizeof(*args->rest));
	if (!args->rest)
		return lp_oom(err);
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct lp_opt *o = NULL;
		const char *val = NULL;
		char display[128];
		if (strcmp(a, "--") == 0) {
			args->tail = argv + i + 1;
			args->n_tail = argc - i - 1;
			break;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			args->help = 1;
			continue;
		}
		if (a[0] == '-' && a[1] == '-' && a[2]) {
			const char *eq = strchr(a + 2, '=');
			size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			o = find_long(opts, a + 2, n);
			snprintf(display, sizeof(display), "--%.*s", (int)n, a + 2);
			if (!o) {
				lp_err_set(err, LP_EUSAGE, "unknown option '%s'", display);
				lp_err_hint(err, "run 'llmprof %s -h' for the options", argv[0]);
				goto fail;
			}
			if (eq) {
				if (o->type == LP_OPT_FLAG_) {
					lp_err_set(err, LP_EUSAGE, "option '%s' takes no value", display);
					goto fail;
				}
				val = eq + 1;
			}
		} else if (a[0] == '-' && a[1] && a[1] != '-' && !a[2]) {
			o = find_short(opts, a[1]);
			snprintf(display, sizeof(display), "-%c", a[1]);
			if (!o) {
				lp_err_set(err, LP_EUSAGE, "unknown option '%s'", display);
				lp_err_hint(err, "run 'llmprof %s -h' for the options", argv[0]);
				goto fail;
			}
		} else {
			args->rest[args->n_rest++] = a;
			continue;
		}
		if (o->type != LP_OPT_FLAG_ && !val) {
			if (i + 1 >= argc) {
				lp_err_set(err, LP_EUSAGE, "option '%s' needs a value", display);
				goto fail;
			}
			val = argv[++i];
		}
		if (set_value(o, display, val, err) < 0)
			goto fail;
	}
	return 0;
fail:
	lp_args_release(args);
	lp_opt_release(opts);
	return -1;
}

void lp_args_release(struct lp_args *args)
{
	free(args->rest);
	memset(args, 0, sizeof(*args));
}

void lp_opt_release(const struct lp_opt *opts)
{
	for (; opts->type != LP_OPT_END_; opts++) {
		if (opts->type == LP_OPT_LIST_) {
			struct lp_opt_list *l = opts->value;
			free(l->v);
			l->v = NULL;
			l->n = 0;
		}
	}
}

void lp_opt_usage(FILE *out, const char *usage, const char *description, const struct lp_opt *opts)
{
	fprintf(out, "usage: %s\n", usage);
	if (description && *description)
		fprintf(out, "\n%s\n", description);
	fprintf(out, "\noptions:\n");
	for (; opts->type != LP_OPT_END_; opts++) {
		char left[96];
		int n = 0;
		if (opts->short_name)
			n = snprintf(left, sizeof(left), "-%c, ", opts->short_name);
		else
			n = snprintf(left, sizeof(left), "    ");
		if (opts->arg_name)
			snprintf(left + n, sizeof(left) - (size_t)n, "--%s %s", opts->long_name, opts->arg_name);
		else
			snprintf(left + n, sizeof(left) - (size_t)n, "--%s", opts->long_name);
		fprintf(out, "  %-28s %s\n", left, opts->help);
	}
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help");
}
