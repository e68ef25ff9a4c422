/* override.c: the command-line override grammar (docs/config.md) and its application to the
 * composed tree. config.c parses every override first, applies group selections while composing,
 * then hands the key overrides here in order; schema.c checks the result. */
#include "config/config_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yaml.h"
#include "core/str.h"

static int key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '-';
}

/* Keys are segments of [A-Za-z0-9_-] joined by '.' (a key path) or by '/' (a group). */
static int check_key(const char *text, const char *key, struct lp_err *err)
{
	const char *p;
	int dot = 0, slash = 0;
	if (!*key)
		return lp_err_set(err, LP_EUSAGE, "invalid override '%s': missing key before '='", text);
	for (p = key; *p; p++) {
		if (*p == '.' || *p == '/') {
			dot |= *p == '.';
			slash |= *p == '/';
			if (p == key || !p[1] || p[1] == '.' || p[1] == '/')
				return lp_err_set(err, LP_EUSAGE, "invalid override '%s': empty key segment in '%s'",
					text, key);
		} else if (!key_char(*p)) {
			if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
				return lp_err_set(err, LP_EUSAGE,
					"invalid override '%s': invalid character 0x%02x in key", text,
					(unsigned char)*p);
			return lp_err_set(err, LP_EUSAGE, "invalid override '%s': invalid character '%c' in key '%s'",
				text, *p, key);
		}
	}
	if (dot && slash)
		return lp_err_set(err, LP_EUSAGE,
			"invalid override '%s': '%s' mixes '.' (a key) and '/' (a group)", text, key);
	return 0;
}

static int parse_value(struct lp_cfg_override *o, struct lp_err *err)
{
	const char *r = o->raw;
	size_t n = strlen(r);
	char name[160];
	if (n == 0) {
		o->value = json_string("");
	} else if (r[0] == '[' || r[0] == '{' || r[0] == '\'' || r[0] == '"') {
		snprintf(name, sizeof(name), "override '%.100s%s'", o->text, strlen(o->text) > 100 ? "..." : "");
		if (lp_yaml_load_string(r, n, name, &o->value, err) < 0)
			return -1;
		if ((r[0] == '[' && !json_is_array(o->value)) || (r[0] == '{' && !json_is_object(o->value)) ||
		    ((r[0] == '\'' || r[0] == '"') && !json_is_string(o->value)))
			return lp_err_set(err, LP_EUSAGE,
				"invalid override '%s': the value is not one %s", o->text,
				r[0] == '[' ? "list" : r[0] == '{' ? "mapping" : "quoted string");
	} else {
		/* a plain scalar by the YAML core schema; taken whole, so '#', '@' and ': ' stay text */
		o->value = lp_yaml_scalar(r, n, 0);
	}
	if (!o->value)
		return lp_oom(err);
	return 0;
}

/* Offset of the first byte that is not part of well-formed UTF-8 (RFC 3629: no overlong forms,
 * no surrogates, nothing above U+10FFFF), or -1 when the whole string is. */
static long utf8_bad_at(const unsigned char *s)
{
	const unsigned char *p = s;
	while (*p) {
		unsigned c = *p;
		size_t n, k;
		unsigned min, cp;
		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF) {
			n = 1;
			min = 0x80;
			cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 2;
			min = 0x800;
			cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 3;
			min = 0x10000;
			cp = c & 0x07;
		} else {
			return (long)(p - s);
		}
		for (k = 1; k <= n; k++) {
			if ((p[k] & 0xC0) != 0x80)
				return (long)(p - s);
			cp = (cp << 6) | (p[k] & 0x3F);
		}
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return (long)(p - s);
		p += n + 1;
	}
	return -1;
}

int lp_cfg_override_parse(const char *text, struct lp_cfg_override *o, struct lp_err *err)
{
	const char *p = text, *eq;
	char *raw;
	long bad;
	memset(o, 0, sizeof(*o));
	o->text = text;
	if (strlen(text) > LP_CONFIG_MAX_OVERRIDE_LEN)
		return lp_err_set(err, LP_EUSAGE, "invalid override '%.60s...': longer than %d bytes", text,
			LP_CONFIG_MAX_OVERRIDE_LEN);
	if ((bad = utf8_bad_at((const unsigned char *)text)) >= 0)
		/* the text itself is not printed: its bytes would garble the terminal */
		return lp_err_set(err, LP_EUSAGE, "invalid override '%.*s...': byte %ld (0x%02x) is not valid UTF-8",
			(int)(bad > 40 ? 40 : bad), text, bad + 1, (unsigned)(unsigned char)text[bad]);
	if (p[0] == '+' && p[1] == '+') {
		o->op = LP_CFG_FORCE;
		p += 2;
	} else if (p[0] == '+') {
		o->op = LP_CFG_ADD;
		p++;
	} else if (p[0] == '~') {
		o->op = LP_CFG_DELETE;
		p++;
	}
	eq = strchr(p, '=');
	if (!eq && o->op != LP_CFG_DELETE) {
		lp_err_set(err, LP_EUSAGE, "invalid override '%s': expected KEY=VALUE", text);
		return lp_err_hint(err, "overrides are key=value, +key=value, ++key=value, ~key or group=option");
	}
	o->key = eq ? strndup(p, (size_t)(eq - p)) : strdup(p);
	raw = strdup(eq ? eq + 1 : "");
	if (!o->key || !raw) {
		free(raw);
		lp_cfg_override_release(o);
		return lp_oom(err);
	}
	o->raw = lp_str_trim(raw);
	if (check_key(text, o->key, err) < 0 || (eq && parse_value(o, err) < 0)) {
		lp_cfg_override_release(o);
		return -1;
	}
	return 0;
}

void lp_cfg_override_release(struct lp_cfg_override *o)
{
	free(o->key);
	free(o->raw);
	json_decref(o->value);
	memset(o, 0, sizeof(*o));
}

/* ---- applying ---- */

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "a mapping";
	case JSON_ARRAY: return "a list";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean (true or false)";
	default: return "null";
	}
}

static int is_scalar(const json_t *v)
{
	return !json_is_object(v) && !json_is_array(v);
}

static int type_error(const char *key, const char *shown, const json_t *old, struct lp_err *err)
{
	lp_err_set(err, LP_EUSAGE, "invalid value '%s' for '%s': expected %s", shown, key,
		json_is_number(old) && lp_cfg_schema_is_float(key) ? "a number" : type_name(old));
	if (json_is_array(old) && !strchr(shown, '['))
		lp_err_hint(err, "write a list: %s=[%s]", key, shown);
	return -1;
}

/* Fits `val` to the type of the value it replaces (`old`), the way Hydra's struct mode does:
 * int into float ok, scalars into strings become their text, null keys take anything, null is
 * allowed anywhere (the schema rejects it where a value is required). Returns a new reference. */
static json_t *fit(const char *key, const json_t *old, json_t *val, const char *raw, struct lp_err *err)
{
	char shown[160];
	if (raw)
		snprintf(shown, sizeof(shown), "%s", raw);
	else
		lp_cfg_value_text(val, shown, sizeof(shown));
	if (json_is_null(old) || json_is_null(val))
		return json_incref(val);
	switch (json_typeof(old)) {
	case JSON_INTEGER:
		if (json_is_integer(val))
			return json_incref(val);
		if (json_is_real(val) && lp_cfg_schema_is_float(key))
			return json_incref(val);  /* a number key whose preset happens to be whole */
		break;
	case JSON_REAL:
		if (json_is_real(val))
			return json_incref(val);
		if (json_is_integer(val))
			return json_real((double)json_integer_value(val));
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		if (json_is_boolean(val))
			return json_incref(val);
		break;
	case JSON_STRING:
		if (json_is_string(val))
			return json_incref(val);
		if (is_scalar(val))
			return json_string(shown);
		break;
	case JSON_ARRAY:
		if (json_is_array(val))
			return json_incref(val);
		break;
	case JSON_OBJECT:
		if (json_is_object(val)) {
			/* a mapping merges key by key into the existing one; every key must exist */
			json_t *out = json_deep_copy(old), *v;
			const char *k;
			json_object_foreach(val, k, v) {
				char sub[512];
				json_t *cur = json_object_get(out, k), *fitted;
				snprintf(sub, sizeof(sub), "%s.%s", key, k);
				if (!cur) {
					lp_err_set(err, LP_EUSAGE, "unknown key '%s'", sub);
					lp_cfg_suggest(old, k, err);
					json_decref(out);
					return NULL;
				}
				fitted = fit(sub, cur, v, NULL, err);
				if (!fitted || json_object_set_new(out, k, fitted) < 0) {
					json_decref(out);
					return NULL;
				}
			}
			return out;
		}
		break;
	default:
		break;
	}
	type_error(key, shown, old, err);
	return NULL;
}

/* Walks to the parent of the last segment of `key` (*parent NULL when a mapping on the way is
 * missing). With `create`, missing mappings are made. */
static int parent_of(json_t *root, const char *key, int create, json_t **parent, const char **last,
	const char *text, struct lp_err *err)
{
	char seg[256];
	const char *p = key, *dot;
	json_t *node = root;
	*parent = NULL;
	while ((dot = strchr(p, '.')) != NULL) {
		json_t *next;
		size_t n = (size_t)(dot - p);
		if (n >= sizeof(seg))
			return lp_err_set(err, LP_EUSAGE, "invalid override '%s': key segment too long", text);
		memcpy(seg, p, n);
		seg[n] = '\0';
		next = json_object_get(node, seg);
		if (!next && create) {
			next = json_object();
			if (!next || json_object_set_new(node, seg, next) < 0)
				return lp_oom(err);
		}
		if (!next)
			return 0;
		if (!json_is_object(next))
			return lp_err_set(err, LP_EUSAGE, "cannot apply '%s': '%.*s' is not a mapping", text,
				(int)(dot - key), key);
		node = next;
		p = dot + 1;
	}
	*last = p;
	*parent = node;
	return 0;
}

/* The hint: the closest keys; else, when the first segment is no section, the sections; else how
 * to add the key (or, for `~key`, that only existing keys can be deleted). */
static int unknown_key(const json_t *root, const char *key, int deleting, struct lp_err *err)
{
	const char *dot = strchr(key, '.');
	lp_err_set(err, LP_EUSAGE, "unknown key '%s'", key);
	lp_cfg_suggest(root, key, err);
	if (!err || err->hint[0])
		return -1;
	if (dot && !json_object_getn(root, key, (size_t)(dot - key))) {
		char sections[256] = "";
		const char *k;
		size_t n = 0;
		json_t *v;
		json_object_foreach((json_t *)(uintptr_t)root, k, v)
			if (json_is_object(v) && n + strlen(k) + 3 < sizeof(sections))
				n += (size_t)snprintf(sections + n, sizeof(sections) - n, "%s%s", n ? ", " : "", k);
		lp_err_hint(err, "the configuration has no section '%.*s' (its sections: %s)", (int)(dot - key), key,
			sections);
	} else if (deleting) {
		lp_err_hint(err, "'~KEY' deletes a key that exists; 'llmprof run --cfg' shows the keys");
	} else {
		lp_err_hint(err, "add a new key with '+%s=VALUE'; 'llmprof run --cfg' shows the keys", key);
	}
	return -1;
}

static int apply_delete(json_t *root, const struct lp_cfg_override *o, struct lp_err *err)
{
	const char *last = NULL;
	json_t *parent, *cur;
	if (parent_of(root, o->key, 0, &parent, &last, o->text, err) < 0)
		return -1;
	cur = parent ? json_object_get(parent, last) : NULL;
	if (!cur)
		return unknown_key(root, o->key, 1, err);
	if (o->value && o->raw[0]) {
		json_t *want = fit(o->key, cur, o->value, o->raw, NULL);
		int same = want && json_equal(want, cur);
		char shown[160];
		json_decref(want);
		if (!same) {
			lp_cfg_value_text(cur, shown, sizeof(shown));
			return lp_err_set(err, LP_EUSAGE, "cannot delete '%s': its value is '%s', not '%s'",
				o->key, shown, o->raw);
		}
	}
	json_object_del(parent, last);
	return 0;
}

int lp_cfg_override_apply(json_t *root, const struct lp_cfg_override *o, struct lp_err *err)
{
	const char *last = NULL;
	json_t *parent, *cur, *val;
	if (o->op == LP_CFG_DELETE)
		return apply_delete(root, o, err);
	if (parent_of(root, o->key, o->op != LP_CFG_SET, &parent, &last, o->text, err) < 0)
		return -1;
	cur = parent ? json_object_get(parent, last) : NULL;
	switch (o->op) {
	case LP_CFG_SET:
		if (!cur)
			return unknown_key(root, o->key, 0, err);
		val = fit(o->key, cur, o->value, o->raw, err);
		break;
	case LP_CFG_ADD:
		if (cur) {
			lp_err_set(err, LP_EUSAGE, "cannot add '%s': the key exists", o->key);
			return lp_err_hint(err, "set it with '%s=%s' (or '++%s=%s')", o->key, o->raw, o->key,
				o->raw);
		}
		val = json_incref(o->value);
		break;
	default:
		val = json_incref(o->value);
		break;
	}
	if (!val)
		return -1;
	if (json_object_set_new(parent, last, val) < 0)
		return lp_oom(err);
	return 0;
}

/* ---- paths and suggestions ---- */

json_t *lp_cfg_lookup(const json_t *root, const char *key)
{
	char seg[256];
	const char *p = key;
	json_t *node = (json_t *)(uintptr_t)root;
	for (;;) {
		const char *dot = strchr(p, '.');
		size_t n = dot ? (size_t)(dot - p) : strlen(p);
		if (!json_is_object(node) || n == 0 || n >= sizeof(seg))
			return NULL;
		memcpy(seg, p, n);
		seg[n] = '\0';
		node = json_object_get(node, seg);
		if (!node || !dot)
			return node;
		p = dot + 1;
	}
}

struct suggest {
	const char *key;
	const char *key_last;
	char best[3][256];
	int best_score[3];
	int n;
};

static const char *last_segment(const char *path)
{
	const char *dot = strrchr(path, '.');
	return dot ? dot + 1 : path;
}

static void consider(struct suggest *s, const char *path)
{
	int d = lp_str_edit_distance(s->key, path, 64);
	/* the last segment alone only for names long enough to say something ('d' is close to 'id') */
	int d2 = strlen(s->key_last) >= 3 ? lp_str_edit_distance(s->key_last, last_segment(path), 64) + 1 : 1000;
	int score = d < d2 ? d : d2, i, j;
	int limit = (int)strlen(s->key_last) / 3;
	if (limit < 2)
		limit = 2;
	if (score > limit || !strcmp(s->key, path))
		return;
	for (i = 0; i < s->n && s->best_score[i] <= score; i++)
		;
	if (i >= 3)
		return;
	for (j = (s->n < 3 ? s->n : 2); j > i; j--) {
		memcpy(s->best[j], s->best[j - 1], sizeof(s->best[j]));
		s->best_score[j] = s->best_score[j - 1];
	}
	snprintf(s->best[i], sizeof(s->best[i]), "%s", path);
	s->best_score[i] = score;
	if (s->n < 3)
		s->n++;
}

static void walk(struct suggest *s, const json_t *node, char *path, size_t len, size_t cap, int depth)
{
	const char *k;
	json_t *v;
	if (!json_is_object(node) || depth > 16)
		return;
	json_object_foreach((json_t *)(uintptr_t)node, k, v) {
		size_t kl = strlen(k);
		if (len + kl + 2 >= cap)
			continue;
		if (len)
			path[len] = '.';
		memcpy(path + len + (len ? 1 : 0), k, kl + 1);
		consider(s, path);
		walk(s, v, path, len + kl + (len ? 1 : 0), cap, depth + 1);
		path[len] = '\0';
	}
}

void lp_cfg_suggest(const json_t *root, const char *key, struct lp_err *err)
{
	struct suggest s;
	char path[256] = "";
	memset(&s, 0, sizeof(s));
	s.key = key;
	s.key_last = last_segment(key);
	walk(&s, root, path, 0, sizeof(path), 0);
	if (s.n == 0)
		return;
	/* only the closest ones: ties with the best score */
	if (s.n >= 2 && s.best_score[1] > s.best_score[0])
		s.n = 1;
	if (s.n == 3 && s.best_score[2] > s.best_score[1])
		s.n = 2;
	if (s.n == 1)
		lp_err_hint(err, "did you mean '%s'", s.best[0]);
	else if (s.n == 2)
		lp_err_hint(err, "did you mean '%s' or '%s'", s.best[0], s.best[1]);
	else
		lp_err_hint(err, "did you mean '%s', '%s' or '%s'", s.best[0], s.best[1], s.best[2]);
}

void lp_cfg_value_text(const json_t *v, char *out, size_t cap)
{
	char *dump;
	if (json_is_string(v)) {
		snprintf(out, cap, "%s", json_string_value(v));
		return;
	}
	/* 15 digits: -0.2 as the user wrote it, not jansson's default -0.20000000000000001 */
	dump = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
	snprintf(out, cap, "%s", dump ? dump : "?");
	free(dump);
}
