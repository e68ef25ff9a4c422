/* config_impl.h: internals shared by the files of src/config/ (composition in config.c, the
 * override grammar in override.c, the schema in schema.c, getters in config_get.c). Not for use
 * outside src/config/: the public contract is config.h. */
#ifndef LP_CONFIG_IMPL_H
#define LP_CONFIG_IMPL_H

#include <jansson.h>

#include "config/config.h"

enum lp_cfg_op {
	LP_CFG_SET,     /* a.b=v, or group=option */
	LP_CFG_ADD,     /* +a.b=v */
	LP_CFG_FORCE,   /* ++a.b=v */
	LP_CFG_DELETE,  /* ~a.b, ~a.b=v */
};

/* One parsed override. `value` is NULL only for a delete without '='. */
struct lp_cfg_override {
	enum lp_cfg_op op;
	char *key;         /* "run.repeats", or a group "profiling/ncu" */
	char *raw;         /* the value text after '=', trimmed ("" when none) */
	json_t *value;
	const char *text;  /* the whole override, borrowed */
};

int lp_cfg_override_parse(const char *text, struct lp_cfg_override *o, struct lp_err *err);
void lp_cfg_override_release(struct lp_cfg_override *o);
/* Applies a key override (SET/ADD/FORCE/DELETE) to the tree. */
int lp_cfg_override_apply(json_t *root, const struct lp_cfg_override *o, struct lp_err *err);

/* The node at a dotted path, NULL when missing (borrowed). */
json_t *lp_cfg_lookup(const json_t *root, const char *key);
/* Sets err's hint to the closest existing keys ("did you mean 'run.top_n_kernels'"). */
void lp_cfg_suggest(const json_t *root, const char *key, struct lp_err *err);
/* Short display form of a value for messages: strings bare, the rest as compact JSON. */
void lp_cfg_value_text(const json_t *v, char *out, size_t cap);

/* 1 when the schema (schema.c) types `key` as a number that may have a fraction (run.timeout_s):
 * an override may then give 1.5 although the preset wrote 1800. */
int lp_cfg_schema_is_float(const char *key);

/* Adds the keys later issues rely on when a preset lacks them (model.hf_config: null). */
int lp_cfg_fill_defaults(json_t *root, struct lp_err *err);

#endif
