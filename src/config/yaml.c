/* yaml.c: YAML documents to jansson values and back (see yaml.h). Config loading, model files,
 * Hugging Face configs (JSON is YAML) and config.yaml artifacts all go through here. */
#include "config/yaml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/fs.h"
#include "core/str.h"

static int is_null(const char *s)
{
	return !strcmp(s, "") || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static int is_true(const char *s)
{
	return !strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE");
}

static int is_false(const char *s)
{
	return !strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE");
}

static int looks_int(const char *s)
{
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		p += 2;
		if (!*p)
			return 0;
		for (; *p; p++)
			if (!strchr("0123456789abcdefABCDEF", *p))
				return 0;
		return 1;
	}
	if (!*p)
		return 0;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

static int looks_float(const char *s)
{
	const char *p = s;
	int digits = 0;
	if (*p == '-' || *p == '+')
		p++;
	if (*p == '.' && (!strcmp(p, ".inf") || !strcmp(p, ".Inf") || !strcmp(p, ".INF") ||
			  !strcmp(p, ".nan") || !strcmp(p, ".NaN") || !strcmp(p, ".NAN")))
		return 1;
	while (*p >= '0' && *p <= '9') {
		p++;
		digits++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
			digits++;
		}
	}
	if (!digits)
		return 0;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		if (*p < '0' || *p > '9')
			return 0;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

json_t *lp_yaml_scalar(const char *value, size_t len, int quoted)
{
	char small[128];
	char *s = len < sizeof(small) ? small : malloc(len + 1);
	json_t *v = NULL;
	if (!s)
		return NULL;
	memcpy(s, value, len);
	s[len] = '\0';
	if (quoted || strlen(s) != len) {
		v = json_stringn(value, len);
	} else if (is_null(s)) {
		v = json_null();
	} else if (is_true(s)) {
		v = json_true();
	} else if (is_false(s)) {
		v = json_false();
	} else if (looks_int(s)) {
		int64_t i;
		if (lp_str_to_i64(s, &i) == 0)
			v = json_integer((json_int_t)i);
		else
			v = json_stringn(value, len);
	} else if (looks_float(s)) {
		const char *p = s + (*s == '-' || *s == '+');
		double d;
		if (*p == '.' && (p[1] == 'i' || p[1] == 'I'))
			d = *s == '-' ? -INFINITY : INFINITY;
		else if (*p == '.' && (p[1] == 'n' || p[1] == 'N'))
			d = NAN;
		else if (lp_str_to_double(s, &d) < 0)
			d = NAN;
		/* jansson cannot hold inf/nan: keep those as strings, callers treat them as numbers */
		v = isfinite(d) ? json_real(d) : json_stringn(value, len);
	} else {
		v = json_stringn(value, len);
	}
	if (s != small)
		free(s);
	return v;
}

struct frame {
	json_t *node;
	char *pending_key;       /* mapping: key waiting for its value */
	size_t key_line, key_col;
};

static int add_child(struct frame *f, json_t *child, const char *name, yaml_mark_t m, struct lp_err *err)
{
	if (json_is_array(f->node))
		return json_array_append_new(f->node, child) == 0 ? 0 :
			lp_oom(err);
	if (!f->pending_key) {
		/* a key: must be a scalar string */
		if (!json_is_string(child) && !json_is_integer(child) && !json_is_real(child) &&
		    !json_is_boolean(child)) {
			json_decref(child);
			return lp_err_set(err, LP_EUSAGE, "%s:%zu:%zu: mapping keys must be scalars", name,
				m.line + 1, m.column + 1);
		}
		if (json_is_string(child)) {
			f->pending_key = strdup(json_string_value(child));
		} else {
			char *dump = json_dumps(child, JSON_ENCODE_ANY);
			f->pending_key = dump ? strdup(dump) : NULL;
			free(dump);
		}
		json_decref(child);
		if (!f->pending_key)
			return lp_oom(err);
		if (json_object_get(f->node, f->pending_key)) {
			lp_err_set(err, LP_EUSAGE, "%s:%zu:%zu: duplicate key '%s'", name, m.line + 1,
				m.column + 1, f->pending_key);
			free(f->pending_key);
			f->pending_key = NULL;
			return -1;
		}
		return 0;
	}
	if (json_object_set_new(f->node, f->pending_key, child) != 0) {
		free(f->pending_key);
		f->pending_key = NULL;
		return lp_oom(err);
	}
	free(f->pending_key);
	f->pending_key = NULL;
	return 0;
}

int lp_yaml_load_string(const char *text, size_t len, const char *name, json_t **out,
	struct lp_err *err)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	struct frame stack[LP_YAML_MAX_DEPTH + 1];
	int depth = 0, done = 0, rc = -1, docs = 0;
	json_t *root = NULL;
	*out = NULL;
	if (len > LP_YAML_MAX_BYTES)
		return lp_err_set(err, LP_EUSAGE, "%s: larger than the %u-byte limit", name, LP_YAML_MAX_BYTES);
	if (!yaml_parser_initialize(&parser))
		return lp_err_set(err, LP_EOTHER, "cannot initialize the YAML parser");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!done) {
		json_t *node = NULL;
		if (!yaml_parser_parse(&parser, &ev)) {
			lp_err_set(err, LP_EUSAGE, "%s:%zu:%zu: %s%s%s", name, parser.problem_mark.line + 1,
				parser.problem_mark.column + 1, parser.problem ? parser.problem : "syntax error",
				parser.context ? " " : "", parser.context ? parser.context : "");
			goto out;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++docs > 1) {
				lp_err_set(err, LP_EUSAGE, "%s:%zu:%zu: only one YAML document is allowed", name,
					ev.start_mark.line + 1, ev.start_mark.column + 1);
				yaml_event_delete(&ev);
				goto out;
			}
			break;
		case YAML_ALIAS_EVENT:
			lp_err_set(err, LP_EUSAGE, "%s:%zu:%zu: YAML aliases are not supported", name,
				ev.start_mark.line + 1, ev.start_mark.column + 1);
			yaml_event_delete(&ev);
			goto out;
		case YAML_SCALAR_EVENT:
			node = lp_yaml_scalar((const char *)ev.data.scalar.value, ev.data.scalar.length,
				ev.data.scalar.style != YAML_PLAIN_SCALAR_STYLE);
			if (!node) {
				lp_oom(err);
				yaml_event_delete(&ev);
				goto out;
			}
			if (depth == 0) {
				root = node;
			} else if (add_child(&stack[depth - 1], node, name, ev.start_mark, err) < 0) {
				yaml_event_delete(&ev);
				goto out;
			}
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			if (depth >= LP_YAML_MAX_DEPTH) {
				lp_err_set(err, LP_EUSAGE, "%s:%zu:%zu: nested deeper than %d levels", name,
					ev.start_mark.line + 1, ev.start_mark.column + 1, LP_YAML_MAX_DEPTH);
				yaml_event_delete(&ev);
				goto out;
			}
			node = ev.type == YAML_SEQUENCE_START_EVENT ? json_array() : json_object();
			if (!node) {
				lp_oom(err);
				yaml_event_delete(&ev);
				goto out;
			}
			if (depth == 0) {
				root = node;
			} else if (add_child(&stack[depth - 1], json_incref(node), name, ev.start_mark, err) < 0) {
				json_decref(node);
				yaml_event_delete(&ev);
				goto out;
			}
			stack[depth].node = node;
			stack[depth].pending_key = NULL;
			depth++;
			if (depth > 1)
				json_decref(node);  /* the parent holds it */
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			depth--;
			free(stack[depth].pending_key);
			stack[depth].pending_key = NULL;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	*out = root ? root : json_null();
	root = NULL;
	rc = 0;
out:
	while (depth > 0) {
		depth--;
		free(stack[depth].pending_key);
	}
	json_decref(root);
	yaml_parser_delete(&parser);
	return rc;
}

int lp_yaml_load_file(const char *path, json_t **out, struct lp_err *err)
{
	struct lp_buf b = LP_BUF_INIT;
	int rc;
	*out = NULL;
	if (lp_fs_read_file(path, &b, LP_YAML_MAX_BYTES, err) < 0)
		return -1;
	rc = lp_yaml_load_string(b.data, b.len, path, out, err);
	lp_buf_release(&b);
	return rc;
}

/* ---- emitting ---- */

static int emit(yaml_emitter_t *em, yaml_event_t *ev, struct lp_err *err)
{
	if (!yaml_emitter_emit(em, ev))
		return lp_err_set(err, LP_EOTHER, "cannot emit YAML: %s", em->problem ? em->problem : "error");
	return 0;
}

static int emit_scalar(yaml_emitter_t *em, const char *s, int force_quote, struct lp_err *err)
{
	yaml_event_t ev;
	yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
	if (force_quote)
		style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)(uintptr_t)s, (int)strlen(s),
		!force_quote, 1, style);
	return emit(em, &ev, err);
}

static int emit_value(yaml_emitter_t *em, const json_t *v, struct lp_err *err)
{
	yaml_event_t ev;
	char num[64];
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *val;
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
			json_object_size(v) ? YAML_BLOCK_MAPPING_STYLE : YAML_FLOW_MAPPING_STYLE);
		if (emit(em, &ev, err) < 0)
			return -1;
		json_object_foreach((json_t *)(uintptr_t)v, key, val) {
			json_t *probe = lp_yaml_scalar(key, strlen(key), 0);
			int q = !json_is_string(probe) || strchr(key, ':') || strchr(key, '#');
			json_decref(probe);
			if (emit_scalar(em, key, q, err) < 0 || emit_value(em, val, err) < 0)
				return -1;
		}
		yaml_mapping_end_event_initialize(&ev);
		return emit(em, &ev, err);
	}
	case JSON_ARRAY: {
		size_t i;
		int flow = 1;
		for (i = 0; i < json_array_size(v); i++)
			if (json_is_object(json_array_get(v, i)) || json_is_array(json_array_get(v, i)))
				flow = 0;
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
			flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
		if (emit(em, &ev, err) < 0)
			return -1;
		for (i = 0; i < json_array_size(v); i++)
			if (emit_value(em, json_array_get(v, i), err) < 0)
				return -1;
		yaml_sequence_end_event_initialize(&ev);
		return emit(em, &ev, err);
	}
	case JSON_STRING: {
		const char *s = json_string_value(v);
		json_t *probe = lp_yaml_scalar(s, strlen(s), 0);
		int q = !json_is_string(probe) || s[0] == '\0';
		json_decref(probe);
		return emit_scalar(em, s, q, err);
	}
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return emit_scalar(em, num, 0, err);
	case JSON_REAL: {
		/* the shortest form that reads back the same double, always with a '.' or exponent */
		double d = json_real_value(v), back = 0;
		int prec;
		for (prec = 1; prec <= 17; prec++) {
			snprintf(num, sizeof(num) - 3, "%.*g", prec, d);
			if (lp_str_to_double(num, &back) == 0 && back == d)
				break;
		}
		if (!strpbrk(num, ".eEn"))
			memcpy(num + strlen(num), ".0", 3);
		return emit_scalar(em, num, 0, err);
	}
	case JSON_TRUE:
		return emit_scalar(em, "true", 0, err);
	case JSON_FALSE:
		return emit_scalar(em, "false", 0, err);
	case JSON_NULL:
	default:
		return emit_scalar(em, "null", 0, err);
	}
}

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	return lp_buf_add(data, buffer, size) == 0;
}

int lp_yaml_dump(const json_t *v, struct lp_buf *out, struct lp_err *err)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	int rc = -1;
	if (!yaml_emitter_initialize(&em))
		return lp_err_set(err, LP_EOTHER, "cannot initialize the YAML emitter");
	yaml_emitter_set_output(&em, write_handler, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, 4096);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	if (emit(&em, &ev, err) < 0)
		goto out;
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	if (emit(&em, &ev, err) < 0)
		goto out;
	if (emit_value(&em, v, err) < 0)
		goto out;
	yaml_document_end_event_initialize(&ev, 1);
	if (emit(&em, &ev, err) < 0)
		goto out;
	yaml_stream_end_event_initialize(&ev);
	if (emit(&em, &ev, err) < 0)
		goto out;
	if (!yaml_emitter_flush(&em)) {
		lp_err_set(err, LP_EOTHER, "cannot emit YAML");
		goto out;
	}
	rc = out->oom ? lp_oom(err) : 0;
out:
	yaml_emitter_delete(&em);
	return rc;
}
