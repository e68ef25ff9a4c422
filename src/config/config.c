/* config.c: Hydra-style composition. Reads conf/config.yaml's defaults list, applies the group
 * selections given as overrides, merges each option file under its package in list order, then
 * hands the key overrides to override.c and the result to schema.c. The resolved tree feeds
 * every later stage (collect, analyze, report) and is saved as config.yaml in the run folder. */
#include "config/config_impl.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "core/fs.h"
#include "core/str.h"

/* One entry of the defaults list: a group and its option (NULL: deleted), or _self_. */
struct entry {
	char *group;   /* NULL for _self_ */
	char *option;
};

struct plan {
	struct entry e[LP_CONFIG_MAX_GROUPS + 1];
	size_t n;
};

static void plan_release(struct plan *p)
{
	size_t i;
	for (i = 0; i < p->n; i++) {
		free(p->e[i].group);
		free(p->e[i].option);
	}
	p->n = 0;
}

static struct entry *plan_find(struct plan *p, const char *group)
{
	size_t i;
	for (i = 0; i < p->n; i++)
		if (p->e[i].group && !strcmp(p->e[i].group, group))
			return &p->e[i];
	return NULL;
}

static int plan_add(struct plan *p, const char *group, const char *option, const char *where,
	struct lp_err *err)
{
	if (p->n >= LP_CONFIG_MAX_GROUPS)
		return lp_err_set(err, LP_EUSAGE, "%s: more than %d defaults entries", where,
			LP_CONFIG_MAX_GROUPS);
	if (group && plan_find(p, group))
		return lp_err_set(err, LP_EUSAGE, "%s: group '%s' is listed twice in the defaults list", where,
			group);
	p->e[p->n].group = group ? strdup(group) : NULL;
	p->e[p->n].option = option ? strdup(option) : NULL;
	if ((group && !p->e[p->n].group) || (option && !p->e[p->n].option))
		return lp_oom(err);
	p->n++;
	return 0;
}

static int valid_name(const char *s, int slash_ok)
{
	const char *p;
	if (!*s || *s == '.' || strstr(s, ".."))
		return 0;
	for (p = s; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    *p == '_' || *p == '-' || *p == '.')
			continue;
		if (*p == '/' && slash_ok && p != s && p[1] && p[1] != '/' && p[-1] != '/')
			continue;
		return 0;
	}
	return 1;
}

static int read_defaults(const json_t *doc, const char *name, struct plan *p, struct lp_err *err)
{
	json_t *list = json_object_get(doc, "defaults"), *item;
	size_t i;
	int self = 0;
	if (list && !json_is_array(list))
		return lp_err_set(err, LP_EUSAGE, "%s: 'defaults' must be a list", name);
	json_array_foreach(list, i, item) {
		const char *group;
		json_t *opt;
		if (json_is_string(item) && !strcmp(json_string_value(item), "_self_")) {
			if (self++)
				return lp_err_set(err, LP_EUSAGE, "%s: '_self_' is listed twice", name);
			if (plan_add(p, NULL, NULL, name, err) < 0)
				return -1;
			continue;
		}
		if (!json_is_object(item) || json_object_size(item) != 1) {
			lp_err_set(err, LP_EUSAGE, "%s: defaults entry %zu is not 'group: option' or '_self_'",
				name, i + 1);
			return lp_err_hint(err, "e.g. '- profiling/ncu: ncu.default'");
		}
		json_object_foreach(item, group, opt) {
			if (!valid_name(group, 1))
				return lp_err_set(err, LP_EUSAGE, "%s: invalid group name '%s' in defaults", name,
					group);
			if (!json_is_null(opt) && (!json_is_string(opt) || !valid_name(json_string_value(opt), 0)))
				return lp_err_set(err, LP_EUSAGE, "%s: invalid option for group '%s' in defaults",
					name, group);
			if (plan_add(p, group, json_string_value(opt), name, err) < 0)
				return -1;
		}
	}
	if (!self)
		return plan_add(p, NULL, NULL, name, err);
	return 0;
}

/* ---- finding option files ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Option names of a group: <group>/NAME.yaml and <group>/<sub>/NAME.yaml, sorted, ", "-joined. */
static void list_options(const char *group_dir, struct lp_buf *out)
{
	char *names[256];
	size_t n = 0, i;
	DIR *d = opendir(group_dir);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL && n < 256) {
		struct lp_buf sub = LP_BUF_INIT;
		if (de->d_name[0] == '.')
			continue;
		lp_fs_join(&sub, group_dir, de->d_name);
		if (lp_str_ends_with(de->d_name, ".yaml") && lp_fs_is_file(sub.data)) {
			names[n] = strndup(de->d_name, strlen(de->d_name) - 5);
			n += names[n] != NULL;
		} else if (lp_fs_is_dir(sub.data)) {
			DIR *d2 = opendir(sub.data);
			struct dirent *de2;
			while (d2 && (de2 = readdir(d2)) != NULL && n < 256)
				if (de2->d_name[0] != '.' && lp_str_ends_with(de2->d_name, ".yaml")) {
					names[n] = strndup(de2->d_name, strlen(de2->d_name) - 5);
					n += names[n] != NULL;
				}
			if (d2)
				closedir(d2);
		}
		lp_buf_release(&sub);
	}
	if (d)
		closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (i = 0; i < n; i++) {
		if (out->len < 300)
			lp_buf_addf(out, "%s%s", out->len ? ", " : "", names[i]);
		else if (i + 1 == n)
			lp_buf_adds(out, ", ...");
		free(names[i]);
	}
}

static int find_option(const char *conf_dir, const char *group, const char *option,
	struct lp_buf *path, struct lp_err *err)
{
	struct lp_buf dir = LP_BUF_INIT, cand = LP_BUF_INIT;
	DIR *d;
	struct dirent *de;
	int found = 0, rc = -1;
	lp_buf_reset(path);
	lp_fs_join(&dir, conf_dir, group);
	if (!valid_name(option, 0)) {
		lp_err_set(err, LP_EUSAGE, "invalid option '%s' for group '%s'", option, group);
		lp_err_hint(err, "option names use letters, digits, '.', '_' and '-'");
		goto out;
	}
	if (!lp_fs_is_dir(dir.data)) {
		lp_err_set(err, LP_EUSAGE, "unknown group '%s': no folder '%s'", group, dir.data);
		goto out;
	}
	lp_buf_addf(&cand, "%s/%s.yaml", dir.data, option);
	if (lp_fs_is_file(cand.data)) {
		lp_buf_adds(path, cand.data);
		rc = 0;
		goto out;
	}
	d = opendir(dir.data);
	while (d && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		lp_buf_reset(&cand);
		lp_buf_addf(&cand, "%s/%s/%s.yaml", dir.data, de->d_name, option);
		if (!lp_fs_is_file(cand.data))
			continue;
		if (found++) {
			lp_err_set(err, LP_EUSAGE, "option '%s' of group '%s' is ambiguous: '%s' and '%s'",
				option, group, path->data, cand.data);
			closedir(d);
			goto out;
		}
		lp_buf_adds(path, cand.data);
	}
	if (d)
		closedir(d);
	if (found) {
		rc = 0;
		goto out;
	}
	lp_err_set(err, LP_EUSAGE, "unknown option '%s' for group '%s'", option, group);
	lp_buf_reset(&cand);
	list_options(dir.data, &cand);
	lp_err_hint(err, "available: %s", cand.len ? cand.data : "none");
out:
	lp_buf_release(&dir);
	lp_buf_release(&cand);
	return rc;
}

/* The package from the header comment: `# @package _global_` (root) or `# @package a.b`. */
static void read_package(const char *text, const char *group, struct lp_buf *pkg)
{
	const char *p = text;
	lp_buf_reset(pkg);
	while (*p == '#' || *p == '\n' || *p == ' ' || *p == '\r') {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		const char *at = memmem(p, n, "@package", 8);
		if (*p == '#' && at) {
			const char *s = at + 8, *e = p + n;
			while (s < e && (*s == ' ' || *s == '\t'))
				s++;
			while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
				e--;
			if ((size_t)(e - s) == 8 && !strncmp(s, "_global_", 8))
				return;
			if (e > s && !((size_t)(e - s) == 7 && !strncmp(s, "_group_", 7))) {
				lp_buf_add(pkg, s, (size_t)(e - s));
				return;
			}
			break;
		}
		if (!eol)
			break;
		p = eol + 1;
	}
	for (p = group; *p; p++)
		lp_buf_addc(pkg, *p == '/' ? '.' : *p);
}

/* Deep merge: mappings merge key by key, everything else replaces. */
static int merge(json_t *dst, json_t *src)
{
	const char *k;
	json_t *v;
	json_object_foreach(src, k, v) {
		json_t *cur = json_object_get(dst, k);
		if (json_is_object(cur) && json_is_object(v)) {
			if (merge(cur, v) < 0)
				return -1;
		} else if (json_object_set(dst, k, v) < 0) {
			return -1;
		}
	}
	return 0;
}

static int merge_at(json_t *root, const char *pkg, json_t *doc, const char *name, struct lp_err *err)
{
	char seg[256];
	const char *p = pkg;
	json_t *node = root;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		json_t *next;
		if (n == 0 || n >= sizeof(seg))
			return lp_err_set(err, LP_EUSAGE, "%s: invalid package '%s'", name, pkg);
		memcpy(seg, p, n);
		seg[n] = '\0';
		next = json_object_get(node, seg);
		if (!next) {
			next = json_object();
			if (!next || json_object_set_new(node, seg, next) < 0)
				return lp_oom(err);
		} else if (!json_is_object(next)) {
			return lp_err_set(err, LP_EUSAGE, "%s: package '%s' lands on a value that is not a mapping",
				name, pkg);
		}
		node = next;
		p = dot ? dot + 1 : p + n;
	}
	if (merge(node, doc) < 0)
		return lp_oom(err);
	return 0;
}

static int merge_option(json_t *root, const char *conf_dir, const struct entry *e, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT, text = LP_BUF_INIT, pkg = LP_BUF_INIT;
	json_t *doc = NULL;
	int rc = -1;
	if (find_option(conf_dir, e->group, e->option, &path, err) < 0 ||
	    lp_fs_read_file(path.data, &text, LP_YAML_MAX_BYTES, err) < 0 ||
	    lp_yaml_load_string(text.data, text.len, path.data, &doc, err) < 0)
		goto out;
	if (json_is_null(doc)) {
		rc = 0;
		goto out;
	}
	if (!json_is_object(doc)) {
		lp_err_set(err, LP_EUSAGE, "%s: expected a mapping at the top", path.data);
		goto out;
	}
	if (json_object_get(doc, "defaults")) {
		lp_err_set(err, LP_EUSAGE, "%s: defaults lists in option files are not supported", path.data);
		goto out;
	}
	read_package(text.data, e->group, &pkg);
	rc = merge_at(root, pkg.data, doc, path.data, err);
out:
	json_decref(doc);
	lp_buf_release(&path);
	lp_buf_release(&text);
	lp_buf_release(&pkg);
	return rc;
}

/* ---- loading ---- */

/* A word names a group when the defaults list has it, or (for `+group=option`) when
 * conf/<group>/ exists. */
static int is_group(const struct plan *p, const char *conf_dir, const struct lp_cfg_override *o)
{
	struct lp_buf dir = LP_BUF_INIT;
	const char *key = o->key;
	size_t i;
	int yes = 0;
	for (i = 0; i < p->n; i++)
		if (p->e[i].group && !strcmp(p->e[i].group, key))
			return 1;
	if (o->op == LP_CFG_ADD && !strchr(key, '.')) {
		lp_fs_join(&dir, conf_dir, key);
		yes = lp_fs_is_dir(dir.data);
		lp_buf_release(&dir);
	}
	return yes;
}

/* A group override: `group=option` selects, `~group` drops, `+group=option` appends a group
 * the defaults list does not have. */
static int select_group(struct plan *p, const struct lp_cfg_override *o, struct lp_err *err)
{
	struct entry *e = plan_find(p, o->key);
	const char *opt = json_is_string(o->value) ? json_string_value(o->value) : NULL;
	if (o->op == LP_CFG_DELETE) {
		if (!e)
			return lp_err_set(err, LP_EUSAGE, "cannot delete group '%s': it is not in the defaults list",
				o->key);
		free(e->option);
		e->option = NULL;
		return 0;
	}
	if (!opt || !*opt) {
		lp_err_set(err, LP_EUSAGE, "invalid override '%s': expected an option name for group '%s'",
			o->text, o->key);
		return lp_err_hint(err, "e.g. '%s=NAME'; '~%s' removes the group", o->key, o->key);
	}
	if (o->op == LP_CFG_ADD && e) {
		lp_err_set(err, LP_EUSAGE, "cannot add group '%s': it is in the defaults list", o->key);
		return lp_err_hint(err, "select an option with '%s=%s'", o->key, opt);
	}
	if (!e) {
		if (o->op == LP_CFG_SET) {
			lp_err_set(err, LP_EUSAGE, "group '%s' is not in the defaults list", o->key);
			return lp_err_hint(err, "add it with '+%s=%s'", o->key, opt);
		}
		return plan_add(p, o->key, opt, "overrides", err);
	}
	free(e->option);
	e->option = strdup(opt);
	return e->option ? 0 : lp_oom(err);
}

static int compose(struct lp_config *cfg, json_t *doc, const char *name,
	struct lp_cfg_override *ovr, size_t n_ovr, struct lp_err *err)
{
	struct plan p = { .n = 0 };
	json_t *self;
	size_t i;
	int rc = -1;
	if (!json_is_object(doc)) {
		lp_err_set(err, LP_EUSAGE, "%s: expected a mapping at the top", name);
		return -1;
	}
	if (read_defaults(doc, name, &p, err) < 0)
		goto out;
	for (i = 0; i < n_ovr; i++) {
		if (!is_group(&p, cfg->conf_dir, &ovr[i])) {
			if (strchr(ovr[i].key, '/')) {
				lp_err_set(err, LP_EUSAGE, "unknown group '%s'", ovr[i].key);
				goto out;
			}
			continue;
		}
		if (ovr[i].op == LP_CFG_FORCE) {
			lp_err_set(err, LP_EUSAGE, "invalid override '%s': '++' is for keys, not groups",
				ovr[i].text);
			goto out;
		}
		if (select_group(&p, &ovr[i], err) < 0)
			goto out;
	}
	self = json_deep_copy(doc);
	if (!self) {
		lp_oom(err);
		goto out;
	}
	json_object_del(self, "defaults");
	for (i = 0; i < p.n; i++) {
		const struct entry *e = &p.e[i];
		if (!e->group) {
			if (merge(cfg->root, self) < 0) {
				json_decref(self);
				lp_oom(err);
				goto out;
			}
			continue;
		}
		if (json_object_set_new(cfg->choices, e->group, e->option ? json_string(e->option) : json_null()) < 0 ||
		    (e->option && merge_option(cfg->root, cfg->conf_dir, e, err) < 0)) {
			json_decref(self);
			goto out;
		}
	}
	json_decref(self);
	if (lp_cfg_fill_defaults(cfg->root, err) < 0)
		goto out;
	for (i = 0; i < n_ovr; i++) {
		if (is_group(&p, cfg->conf_dir, &ovr[i]))
			continue;
		if (lp_cfg_override_apply(cfg->root, &ovr[i], err) < 0)
			goto out;
	}
	rc = lp_config_validate(cfg, err);
out:
	plan_release(&p);
	return rc;
}

static int load(struct lp_config *cfg, const char *conf_dir, json_t *doc, const char *name,
	const char *const *overrides, size_t n, struct lp_err *err)
{
	struct lp_cfg_override *ovr;
	size_t i, parsed = 0;
	int rc = -1;
	if (n > LP_CONFIG_MAX_OVERRIDES)
		return lp_err_set(err, LP_EUSAGE, "more than %d overrides", LP_CONFIG_MAX_OVERRIDES);
	ovr = calloc(n ? n : 1, sizeof(*ovr));
	cfg->root = json_object();
	cfg->choices = json_object();
	cfg->overrides = json_array();
	cfg->conf_dir = strdup(conf_dir);
	if (!ovr || !cfg->root || !cfg->choices || !cfg->overrides || !cfg->conf_dir) {
		lp_oom(err);
		goto out;
	}
	for (parsed = 0; parsed < n; parsed++) {
		if (lp_cfg_override_parse(overrides[parsed], &ovr[parsed], err) < 0)
			goto out;
		if (json_array_append_new(cfg->overrides, json_string(overrides[parsed])) < 0) {
			lp_cfg_override_release(&ovr[parsed]);
			lp_oom(err);
			goto out;
		}
	}
	rc = compose(cfg, doc, name, ovr, n, err);
out:
	for (i = 0; i < parsed; i++)
		lp_cfg_override_release(&ovr[i]);
	free(ovr);
	if (rc < 0)
		lp_config_release(cfg);
	return rc;
}

int lp_config_load_string(struct lp_config *cfg, const char *conf_dir, const char *text,
	size_t len, const char *name, const char *const *overrides, size_t n_overrides,
	struct lp_err *err)
{
	json_t *doc = NULL;
	int rc;
	memset(cfg, 0, sizeof(*cfg));
	if (!conf_dir)
		return lp_err_set(err, LP_EUSAGE, "no conf/ folder given");
	if (lp_yaml_load_string(text, len, name, &doc, err) < 0)
		return -1;
	rc = load(cfg, conf_dir, doc, name, overrides, n_overrides, err);
	json_decref(doc);
	return rc;
}

int lp_config_load(struct lp_config *cfg, const char *conf_dir, const char *const *overrides,
	size_t n_overrides, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT, text = LP_BUF_INIT;
	int rc = -1;
	memset(cfg, 0, sizeof(*cfg));
	if (!conf_dir || !*conf_dir) {
		lp_err_set(err, LP_EUSAGE, "no conf/ folder found");
		return lp_err_hint(err, "pass it with --config-dir or LLMPROF_CONF_DIR");
	}
	lp_fs_join(&path, conf_dir, "config.yaml");
	if (!lp_fs_is_file(path.data)) {
		lp_err_set(err, LP_EUSAGE, "no configuration at '%s'", path.data);
		lp_err_hint(err, "pass the conf/ folder with --config-dir or LLMPROF_CONF_DIR");
	} else if (lp_fs_read_file(path.data, &text, LP_YAML_MAX_BYTES, err) == 0) {
		rc = lp_config_load_string(cfg, conf_dir, text.data, text.len, path.data, overrides,
			n_overrides, err);
	}
	lp_buf_release(&path);
	lp_buf_release(&text);
	return rc;
}

void lp_config_release(struct lp_config *cfg)
{
	json_decref(cfg->root);
	json_decref(cfg->choices);
	json_decref(cfg->overrides);
	free(cfg->conf_dir);
	memset(cfg, 0, sizeof(*cfg));
}

int lp_config_apply(struct lp_config *cfg, const char *override, struct lp_err *err)
{
	struct lp_cfg_override o;
	struct lp_config next = *cfg;
	int rc = -1;
	if (lp_cfg_override_parse(override, &o, err) < 0)
		return -1;
	if (json_object_get(cfg->choices, o.key) || strchr(o.key, '/')) {
		lp_err_set(err, LP_EUSAGE, "cannot select '%s' on a loaded configuration", override);
		lp_err_hint(err, "pass group selections to lp_config_load");
		goto out;
	}
	next.root = json_deep_copy(cfg->root);
	if (!next.root) {
		lp_oom(err);
		goto out;
	}
	if (lp_cfg_override_apply(next.root, &o, err) < 0 || lp_config_validate(&next, err) < 0 ||
	    json_array_append_new(cfg->overrides, json_string(override)) < 0) {
		json_decref(next.root);
		goto out;
	}
	json_decref(cfg->root);
	cfg->root = next.root;
	rc = 0;
out:
	lp_cfg_override_release(&o);
	return rc;
}

const char *lp_config_choice(const struct lp_config *cfg, const char *group)
{
	return json_string_value(json_object_get(cfg->choices, group));
}

int lp_config_dump_yaml(const struct lp_config *cfg, struct lp_buf *out, struct lp_err *err)
{
	return lp_yaml_dump(cfg->root, out, err);
}
