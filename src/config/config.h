/* config.h: the resolved configuration, composed Hydra-style from conf/ and command-line overrides.
 *
 * Composition: conf/config.yaml holds a `defaults:` list (`- group: option` entries and `_self_`,
 * merged in order; `_self_` is implied last when absent). An option is conf/<group>/<option>.yaml,
 * else conf/<group>/<sub>/<option>.yaml (so `model: tiny` finds conf/model/llm/tiny.yaml). Its keys
 * land under the group's package (`profiling/ncu` -> `profiling.ncu.*`) unless its header comment
 * says `# @package _global_` (root) or `# @package a.b`.
 *
 * Overrides (docs/config.md), applied in order after the group selections:
 *   group=option      select a preset: profiling/ncu=ncu.high, model=llama-3.2-1b
 *   a.b.c=value       set an existing key (the value must fit the key's type)
 *   +a.b=value        add a new key (error if it exists)
 *   ++a.b=value       add or set
 *   ~a.b  ~a.b=value  delete (the second only when the value is equal)
 * Values are YAML scalars or flow collections: 5, 2.5, true, null, 'quoted', [a, b], {x: 1};
 * an empty value is the empty string. After the overrides, the schema (types, ranges, enums) is
 * checked. Every error is LP_EUSAGE with one line and at most one hint.
 *
 * Ownership: struct lp_config owns its tree; lp_config_get() and the string getters return
 * pointers borrowed from it, valid until the next override or lp_config_release().
 * Thread-safety: none (load once, then read from any thread without overrides).
 *
 *   struct lp_config cfg;
 *   const char *ov[] = { "run.repeats=5", "profiling/ncu=ncu.high" };
 *   if (lp_config_load(&cfg, ctx->conf_dir, ov, 2, err) < 0) return -1;
 *   int64_t n; if (lp_config_get_int(&cfg, "run.repeats", &n, err) < 0) ...
 *   lp_config_release(&cfg);
 */
#ifndef LP_CONFIG_CONFIG_H
#define LP_CONFIG_CONFIG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"

#define LP_CONFIG_MAX_GROUPS 32
#define LP_CONFIG_MAX_OVERRIDES 512
#define LP_CONFIG_MAX_OVERRIDE_LEN 8192

struct lp_config {
	json_t *root;       /* the resolved tree (object) */
	json_t *choices;    /* {"runner": "stage2", "profiling/ncu": "ncu.high", ...} */
	json_t *overrides;  /* the override strings applied, in order (array of strings) */
	char *conf_dir;
};

#define LP_CONFIG_INIT { NULL, NULL, NULL, NULL }

/* Composes conf_dir/config.yaml with the overrides, then validates. On error cfg is left empty. */
int lp_config_load(struct lp_config *cfg, const char *conf_dir, const char *const *overrides,
	size_t n_overrides, struct lp_err *err);
/* The same with the root document given as text (`name` appears in errors); groups still come
 * from conf_dir. For tests and the config fuzzer. */
int lp_config_load_string(struct lp_config *cfg, const char *conf_dir, const char *text,
	size_t len, const char *name, const char *const *overrides, size_t n_overrides,
	struct lp_err *err);
void lp_config_release(struct lp_config *cfg);

/* Applies one key override (not a group selection) to a loaded config, then re-validates.
 * On error the config is unchanged. */
int lp_config_apply(struct lp_config *cfg, const char *override, struct lp_err *err);
/* Checks types, ranges and enums of the known keys (run by load and apply). */
int lp_config_validate(const struct lp_config *cfg, struct lp_err *err);

/* Typed getters: `key` is a dotted path ("run.top_n_kernels"). They fail (LP_EUSAGE) naming the
 * key when it is missing or of another type. */
json_t *lp_config_get(const struct lp_config *cfg, const char *key);   /* borrowed, NULL: missing */
int lp_config_get_int(const struct lp_config *cfg, const char *key, int64_t *out, struct lp_err *err);
int lp_config_get_double(const struct lp_config *cfg, const char *key, double *out,
	struct lp_err *err);  /* integers are accepted */
int lp_config_get_bool(const struct lp_config *cfg, const char *key, int *out, struct lp_err *err);
/* *out is NULL when the value is null. */
int lp_config_get_string(const struct lp_config *cfg, const char *key, const char **out,
	struct lp_err *err);
/* A list of strings (null reads as empty): *out is a NULL-terminated array the caller free()s;
 * the strings are borrowed. */
int lp_config_get_string_list(const struct lp_config *cfg, const char *key, const char ***out,
	size_t *n_out, struct lp_err *err);
/* The option chosen for a group ("ncu.high" for "profiling/ncu"), NULL when none. */
const char *lp_config_choice(const struct lp_config *cfg, const char *group);

/* The resolved tree as block YAML (what `run --cfg` prints and config.yaml holds). */
int lp_config_dump_yaml(const struct lp_config *cfg, struct lp_buf *out, struct lp_err *err);

#endif
