/* lp_test_tool.c: `lp-test-tool`, the runner of the data-driven tests (the .test files of
 * tests/data/), as jq runs the .test files of its tests/ folder: each case is input lines and the exact output lines the library must give
 * for them, so a new case is two or three lines of text, not C.
 *
 *   lp-test-tool --run FILE...     runs every case of every file; prints each failure with its
 *                                  file:line, the expected and the actual output; exit 1 when a
 *                                  case failed or a file has no case (a file that tests nothing)
 *   lp-test-tool MODE INPUT...     prints what MODE gives for the INPUT lines (to write new cases)
 *   lp-test-tool --modes           lists the modes
 *
 * The file format and the modes are described in tests/data/README.md. The modes call the library
 * (lpcore) the way llmprof does; what they print is a canonical text form of the result, errors as
 * `error[KIND]: message` (KIND from lp_err_kind_name) and `hint: ...`. It is a test program: it
 * prints, and it exits with 0 / 1 / 2 (usage). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/regions.h"
#include "analyze/stages.h"
#include "config/config.h"
#include "config/config_impl.h"
#include "core/arena.h"
#include "core/buf.h"
#include "core/err.h"
#include "core/fs.h"
#include "parse/kname.h"
#include "profile/profile.h"

#define LINE_MAX_BYTES 65536
#define INPUTS_MAX 4

struct mode {
	const char *name;
	int n_inputs;   /* input lines of one case */
	void (*fn)(const char *const *in, struct lp_buf *out);
	const char *help;
};

static void put_err(struct lp_buf *out, const struct lp_err *err)
{
	lp_buf_addf(out, "error[%s]: %s\n", lp_err_kind_name(err->kind), err->msg);
	if (err->hint[0])
		lp_buf_addf(out, "hint: %s\n", err->hint);
}

/* ---- override: one override on top of conf/config.yaml, as `llmprof run KEY=VALUE` takes it ---- */

static const char *op_name(enum lp_cfg_op op)
{
	switch (op) {
	case LP_CFG_SET: return "set";
	case LP_CFG_ADD: return "add";
	case LP_CFG_FORCE: return "force";
	case LP_CFG_DELETE: return "delete";
	}
	return "?";
}

/* A group is a folder of conf/ (model, profiling/ncu); `model=tiny` selects an option of it. */
static int is_group(const char *key)
{
	struct lp_buf p = LP_BUF_INIT;
	int yes;
	lp_buf_addf(&p, "%s/%s", LP_CONF_DIR, key);
	yes = !strstr(key, "..") && lp_fs_is_dir(p.data);
	lp_buf_release(&p);
	return yes;
}

static void mode_override(const char *const *in, struct lp_buf *out)
{
	struct lp_config cfg = LP_CONFIG_INIT;
	struct lp_cfg_override o;
	struct lp_err err = LP_ERR_INIT;
	const char *ovr[1] = { in[0] };
	if (lp_config_load(&cfg, LP_CONF_DIR, ovr, 1, &err) < 0) {
		put_err(out, &err);
		if (cfg.root)   /* a refused override leaves nothing behind (config.h) */
			lp_buf_adds(out, "BUG: the configuration is not empty after the error\n");
		return;
	}
	/* what it did: the parsed override, then the key's value in the composed config */
	if (lp_cfg_override_parse(in[0], &o, &err) < 0) {
		put_err(out, &err);
	} else if (is_group(o.key)) {
		lp_buf_addf(out, "group %s = %s\n", o.key, o.raw);
	} else {
		const json_t *v = lp_config_get(&cfg, o.key);
		char *s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		lp_buf_addf(out, "%s %s = %s\n", op_name(o.op), o.key, v ? (s ? s : "?") : "(missing)");
		free(s);
	}
	lp_cfg_override_release(&o);
	lp_config_release(&cfg);
}

/* ---- region: an NVTX region expression of profiling.ncu.regions (analyze/regions.h) ---- */

static void mode_region(const char *const *in, struct lp_buf *out)
{
	struct lp_arena a = LP_ARENA_INIT;
	struct lp_region_pattern p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf ncu = LP_BUF_INIT;
	size_t i;
	if (lp_region_pattern_parse(in[0], &a, &p, &err) < 0) {
		put_err(out, &err);
		lp_arena_release(&a);
		return;
	}
	lp_buf_addf(out, "%s name=\"%s\" domain=\"%s\" parts=[", p.kind == LP_REGION_STARTEND ? "startend" : "pushpop",
		p.name, p.domain);
	for (i = 0; i < p.n_parts; i++)
		lp_buf_addf(out, "%s%s\"%s\"", i ? "," : "", p.gap_before[i] ? "*," : "", p.parts[i]);
	lp_buf_adds(out, "]");
	if (p.anchor_bottom || p.anchor_top)
		lp_buf_addf(out, " anchor=%s", p.anchor_bottom && p.anchor_top ? "bottom,top" : p.anchor_bottom ? "bottom" : "top");
	if (lp_region_pattern_ncu(in[0], &ncu) == 0)
		lp_buf_addf(out, " ncu=\"%s\"", ncu.data);
	lp_buf_addc(out, '\n');
	lp_buf_release(&ncu);
	lp_arena_release(&a);
}

/* ---- region-dir: the folder name of a region (lp_regions_sanitize) ---- */

static void mode_region_dir(const char *const *in, struct lp_buf *out)
{
	struct lp_buf b = LP_BUF_INIT;
	if (lp_regions_sanitize(in[0], &b) < 0)
		lp_buf_adds(out, "error: out of memory\n");
	else
		lp_buf_addf(out, "%s\n", b.data);
	lp_buf_release(&b);
}

/* ---- stage-map: which range names are which stage role (analyze/stages.h) ----
 * in[0]: the rules, `-` for the defaults, else `ROLE=ENTRY` words (ROLE: prefill, decode_all,
 * decode_step, warmup, mixed; an entry is a name or regex:...; a role named twice gets both).
 * in[1]: range names, `DOMAIN@NAME` or NAME, each a top-level range of its own, in this order.
 * Prints per range `NAME: ROLE`, `none` for no role, and `(ignored)` when the domain rule drops it
 * (ranges of the role exist in the LLM domain). */

#define WORDS_MAX 64

static size_t split_words(char *s, char **w, size_t cap)
{
	size_t n = 0;
	char *save = NULL, *t;
	for (t = strtok_r(s, " \t", &save); t && n < cap; t = strtok_r(NULL, " \t", &save))
		w[n++] = t;
	return n;
}

static void mode_stage_map(const char *const *in, struct lp_buf *out)
{
	char rules_text[LINE_MAX_BYTES], names_text[LINE_MAX_BYTES];
	char *rw[WORDS_MAX], *nw[WORDS_MAX];
	const char *lists[LP_ROLE_COUNT][WORDS_MAX + 1];
	size_t n_list[LP_ROLE_COUNT] = { 0 };
	struct lp_stage_rules rules;
	struct lp_stage_set st;
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	size_t n_rules, n_names, i, k;
	int r;
	snprintf(rules_text, sizeof(rules_text), "%s", in[0]);
	snprintf(names_text, sizeof(names_text), "%s", in[1]);
	memset(&rules, 0, sizeof(rules));
	rules.skip_first = 0;
	n_rules = strcmp(rules_text, "-") ? split_words(rules_text, rw, WORDS_MAX) : 0;
	for (i = 0; i < n_rules; i++) {
		char *eq = strchr(rw[i], '=');
		for (r = 1; eq && r < LP_ROLE_COUNT; r++)
			if (strlen(lp_stage_role_name((enum lp_stage_role)r)) == (size_t)(eq - rw[i]) &&
			    !strncmp(rw[i], lp_stage_role_name((enum lp_stage_role)r), (size_t)(eq - rw[i])))
				break;
		if (!eq || r == LP_ROLE_COUNT) {
			lp_buf_addf(out, "bad rule '%s' (ROLE=ENTRY)\n", rw[i]);
			return;
		}
		lists[r][n_list[r]++] = eq + 1;
		lists[r][n_list[r]] = NULL;
		rules.names[r] = lists[r];
	}
	lp_profile_init(&p, "stage-map");
	n_names = split_words(names_text, nw, WORDS_MAX);
	for (i = 0; i < n_names; i++) {
		struct lp_range *rg = lp_profile_add_range(&p);
		char *at = strchr(nw[i], '@');
		if (!rg) {
			lp_buf_adds(out, "error: out of memory\n");
			lp_profile_release(&p);
			return;
		}
		if (at)
			*at = '\0';
		rg->domain = lp_profile_intern(&p, at ? nw[i] : "");
		rg->name = lp_profile_intern(&p, at ? at + 1 : nw[i]);
		rg->pid = rg->tid = 1;
		rg->parent = -1;
		rg->start_ns = 1000000 * (uint64_t)(2 * i + 1);
		rg->end_ns = rg->start_ns + 1000000;
		if (at)
			*at = '@';
	}
	if (lp_stages_compute_ex(&p, &rules, &st, &err) < 0) {
		put_err(out, &err);
		lp_profile_release(&p);
		return;
	}
	for (i = 0; i < n_names; i++) {
		const struct lp_range *rg = &p.ranges[i];
		enum lp_stage_role role = lp_stage_range_role(&st, (int32_t)i);
		int ignored = 0;
		for (k = 0; k < st.n_map; k++)
			if (st.map[k].role == role && !strcmp(st.map[k].name, rg->name) &&
			    !strcmp(st.map[k].domain, rg->domain))
				ignored = st.map[k].ignored == st.map[k].ranges && st.map[k].ignored > 0;
		lp_buf_addf(out, "%s: %s%s\n", nw[i], role == LP_ROLE_NONE ? "none" : lp_stage_role_name(role),
			ignored ? " (ignored)" : "");
	}
	lp_stage_set_release(&st);
	lp_profile_release(&p);
}

/* ---- kname: the forms of one kernel name (parse/kname.h) ----
 * in[0]: a kernel name as a source prints it (mangled by CUPTI, demangled by nsys/ncu). Prints
 * `demangled:` when demangling changed it, then the forms of the (demangled) name: `short:` (the
 * reports and the ncu join), `ncu:` (ncu's function name base) and `family:`. The interned short
 * name must equal lp_kname_short's, and lp_kname_is_comm must agree with the family. */

static void mode_kname(const char *const *in, struct lp_buf *out)
{
	struct lp_profile p;
	struct lp_buf b = LP_BUF_INIT;
	const char *d, *si;
	lp_profile_init(&p, "kname");
	d = lp_kname_demangle_intern(&p, in[0]);
	if (!d) {
		lp_buf_adds(out, "error: out of memory\n");
		lp_profile_release(&p);
		return;
	}
	if (strcmp(d, in[0]))
		lp_buf_addf(out, "demangled: %s\n", d);
	if (lp_kname_short(d, &b) < 0 || !(si = lp_kname_short_intern(&p, d)))
		lp_buf_adds(out, "error: out of memory\n");
	else if (strcmp(si, b.data))
		lp_buf_addf(out, "BUG: lp_kname_short gives '%s', lp_kname_short_intern '%s'\n", b.data, si);
	else
		lp_buf_addf(out, "short: %s\n", b.data);
	if (lp_kname_ncu_function(d, &b) < 0)
		lp_buf_adds(out, "error: out of memory\n");
	else
		lp_buf_addf(out, "ncu: %s\n", b.data);
	lp_buf_addf(out, "family: %s\n", lp_kname_family_name(lp_kname_family(d)));
	/* the family and the per-rank view's communication test are one rule */
	if (lp_kname_is_comm(d) != (lp_kname_family(d) == LP_FAM_COMM))
		lp_buf_adds(out, "BUG: lp_kname_is_comm disagrees with the family\n");
	lp_buf_release(&b);
	lp_profile_release(&p);
}

/* ---- kname-same: are two printed names one kernel (lp_kname_same) ---- */

static void mode_kname_same(const char *const *in, struct lp_buf *out)
{
	lp_buf_adds(out, lp_kname_same(in[0], in[1]) ? "same\n" : "different\n");
}

static const struct mode modes[] = {
	{ "override", 1, mode_override, "OVERRIDE: what one override does to conf/config.yaml, or its error" },
	{ "region", 1, mode_region, "EXPR: a profiling.ncu.regions expression parsed, and as ncu takes it" },
	{ "region-dir", 1, mode_region_dir, "NAME: the folder name of a region" },
	{ "stage-map", 2, mode_stage_map, "RULES NAMES: the stage role of each range name" },
	{ "kname", 1, mode_kname, "NAME: a kernel name's demangled, short and ncu forms and its family" },
	{ "kname-same", 2, mode_kname_same, "NAME NAME: whether two printed names are one kernel" },
	{ NULL, 0, NULL, NULL },
};

static const struct mode *find_mode(const char *name)
{
	const struct mode *m;
	for (m = modes; m->name; m++)
		if (!strcmp(m->name, name))
			return m;
	return NULL;
}

/* Input lines may spell any byte: \xNN, \t, \n, \\ (invalid UTF-8 in an override). */
static void unescape(const char *s, struct lp_buf *out)
{
	lp_buf_reset(out);
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] == 'x' && s[2] && s[3] && strchr("0123456789abcdefABCDEF", s[2]) &&
		    strchr("0123456789abcdefABCDEF", s[3])) {
			char hex[3] = { s[2], s[3], 0 };
			lp_buf_addc(out, (char)strtol(hex, NULL, 16));
			s += 3;
		} else if (s[0] == '\\' && (s[1] == 't' || s[1] == 'n' || s[1] == '\\')) {
			lp_buf_addc(out, s[1] == 't' ? '\t' : s[1] == 'n' ? '\n' : '\\');
			s++;
		} else {
			lp_buf_addc(out, *s);
		}
	}
}

static void run_mode(const struct mode *m, const char *const *raw, struct lp_buf *out)
{
	struct lp_buf in[INPUTS_MAX];
	const char *inp[INPUTS_MAX];
	int i;
	for (i = 0; i < m->n_inputs; i++) {
		lp_buf_init(&in[i], 0);
		unescape(raw[i], &in[i]);
		inp[i] = in[i].data;
	}
	lp_buf_reset(out);
	m->fn(inp, out);
	for (i = 0; i < m->n_inputs; i++)
		lp_buf_release(&in[i]);
}

/* ---- the runner ---- */

struct reader {
	FILE *f;
	const char *path;
	int line;
	char buf[LINE_MAX_BYTES];
};

/* Next line without its newline; NULL at the end. */
static char *next_line(struct reader *r)
{
	size_t n;
	if (!fgets(r->buf, sizeof(r->buf), r->f))
		return NULL;
	r->line++;
	n = strlen(r->buf);
	if (n && r->buf[n - 1] == '\n')
		r->buf[--n] = '\0';
	return r->buf;
}

static int run_file(const char *path, int *n_cases, int *n_failed)
{
	struct reader r = { NULL, path, 0, "" };
	const struct mode *m = NULL;
	struct lp_buf want = LP_BUF_INIT, got = LP_BUF_INIT;
	char *inputs[INPUTS_MAX] = { NULL };
	char *l;
	int cases = 0, failed = 0, i, rc = 0;
	r.f = fopen(path, "r");
	if (!r.f) {
		fprintf(stderr, "%s: cannot open\n", path);
		return -1;
	}
	for (;;) {
		int case_line, eof = 0;
		/* skip blank lines and comments between cases; `%%mode NAME` switches the mode */
		while ((l = next_line(&r)) && (!*l || *l == '#' || !strncmp(l, "%%mode ", 7))) {
			if (!strncmp(l, "%%mode ", 7) && !(m = find_mode(l + 7))) {
				fprintf(stderr, "%s:%d: unknown mode '%s'\n", path, r.line, l + 7);
				rc = -1;
				goto out;
			}
		}
		if (!l)
			break;
		if (!m) {
			fprintf(stderr, "%s:%d: a case before any '%%%%mode NAME' line\n", path, r.line);
			rc = -1;
			goto out;
		}
		case_line = r.line;
		for (i = 0; i < m->n_inputs; i++) {
			if (i && !(l = next_line(&r))) {
				fprintf(stderr, "%s:%d: the case ends before its %d input lines\n", path, case_line,
					m->n_inputs);
				rc = -1;
				goto out;
			}
			free(inputs[i]);
			inputs[i] = strdup(l);
			if (!inputs[i]) {
				rc = -1;
				goto out;
			}
		}
		lp_buf_reset(&want);
		while (!(eof = !(l = next_line(&r))) && *l)
			lp_buf_addf(&want, "%s\n", l);
		if (!want.len) {
			fprintf(stderr, "%s:%d: the case has no expected output\n", path, case_line);
			rc = -1;
			goto out;
		}
		run_mode(m, (const char *const *)inputs, &got);
		cases++;
		if (strcmp(want.data, got.data)) {
			failed++;
			fprintf(stdout, "%s:%d: FAIL %s '%s'\n--- expected\n%s--- got\n%s\n", path, case_line, m->name,
				inputs[0], want.data, got.data);
		}
		if (eof)
			break;
	}
	if (cases == 0) {
		fprintf(stderr, "%s: no test cases\n", path);
		rc = -1;
	}
out:
	for (i = 0; i < INPUTS_MAX; i++)
		free(inputs[i]);
	lp_buf_release(&want);
	lp_buf_release(&got);
	fclose(r.f);
	*n_cases += cases;
	*n_failed += failed;
	return rc;
}

static int usage(FILE *out)
{
	const struct mode *m;
	fprintf(out, "usage: lp-test-tool --run FILE...\n"
		     "   or: lp-test-tool MODE INPUT...\n"
		     "   or: lp-test-tool --modes\n\nmodes:\n");
	for (m = modes; m->name; m++)
		fprintf(out, "  %-11s %s\n", m->name, m->help);
	return 2;
}

int main(int argc, char **argv)
{
	int i, n_cases = 0, n_failed = 0, bad = 0;
	if (argc >= 2 && !strcmp(argv[1], "--modes")) {
		usage(stdout);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "--run")) {
		for (i = 2; i < argc; i++)
			if (run_file(argv[i], &n_cases, &n_failed) < 0)
				bad++;
		printf("%d case(s) in %d file(s): %d failed%s\n", n_cases, argc - 2, n_failed,
			bad ? ", and a file could not be run (above)" : "");
		return n_failed || bad ? 1 : 0;
	}
	if (argc >= 2) {
		const struct mode *m = find_mode(argv[1]);
		struct lp_buf out = LP_BUF_INIT;
		if (!m || argc - 2 != m->n_inputs)
			return usage(stderr);
		run_mode(m, (const char *const *)(argv + 2), &out);
		fputs(out.data, stdout);
		lp_buf_release(&out);
		return 0;
	}
	return usage(stderr);
}
