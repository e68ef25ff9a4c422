/* yaml.h: YAML <-> JSON values (jansson's json_t), through libyaml.
 *
 * The configuration tree, model files and Hugging Face configs are all held as json_t: the
 * loader turns a YAML document into objects, arrays and typed scalars (YAML 1.2 core schema for
 * plain scalars: null/~, true/false, integers, floats incl. .inf/.nan; quoted scalars are strings).
 * Errors name file:line:col. Limits: nesting depth 64, input size 16 MiB. Anchors and aliases are
 * refused with a clear error. Duplicate keys are an error.
 *
 * Ownership: *out is a new reference the caller json_decref()s. Thread-safe (no shared state).
 *
 *   json_t *cfg; if (lp_yaml_load_file("conf/config.yaml", &cfg, err) < 0) return -1;
 */
#ifndef LP_CONFIG_YAML_H
#define LP_CONFIG_YAML_H

#include <jansson.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"

#define LP_YAML_MAX_BYTES (16u << 20)
#define LP_YAML_MAX_DEPTH 64

int lp_yaml_load_file(const char *path, json_t **out, struct lp_err *err);
/* `name` is used in error messages in place of a file name (e.g. "override 'run.mode=x'"). */
int lp_yaml_load_string(const char *text, size_t len, const char *name, json_t **out,
	struct lp_err *err);
/* Resolves one plain (unquoted) scalar by the core schema; quoted ones are always strings. */
json_t *lp_yaml_scalar(const char *value, size_t len, int quoted);
/* Emits v as block-style YAML (strings quoted where they would read back as another type). */
int lp_yaml_dump(const json_t *v, struct lp_buf *out, struct lp_err *err);

#endif
