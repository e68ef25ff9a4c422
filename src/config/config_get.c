/* config_get.c: typed reads of the resolved configuration for the later stages (collect drivers,
 * analysis, reports). Every failure names the key path. */
#include "config/config_impl.h"

#include <stdlib.h>

json_t *lp_config_get(const struct lp_config *cfg, const char *key)
{
	return cfg && cfg->root ? lp_cfg_lookup(cfg->root, key) : NULL;
}

static json_t *need(const struct lp_config *cfg, const char *key, struct lp_err *err)
{
	json_t *v = lp_config_get(cfg, key);
	if (!v)
		lp_err_set(err, LP_EUSAGE, "missing config key '%s'", key);
	return v;
}

static int wrong(const char *key, const json_t *v, const char *expected, struct lp_err *err)
{
	char shown[160];
	lp_cfg_value_text(v, shown, sizeof(shown));
	return lp_err_set(err, LP_EUSAGE, "config key '%s' is '%s', expected %s", key, shown, expected);
}

int lp_config_get_int(const struct lp_config *cfg, const char *key, int64_t *out, struct lp_err *err)
{
	json_t *v = need(cfg, key, err);
	if (!v)
		return -1;
	if (!json_is_integer(v))
		return wrong(key, v, "an integer", err);
	*out = (int64_t)json_integer_value(v);
	return 0;
}

int lp_config_get_double(const struct lp_config *cfg, const char *key, double *out,
	struct lp_err *err)
{
	json_t *v = need(cfg, key, err);
	if (!v)
		return -1;
	if (!json_is_number(v))
		return wrong(key, v, "a number", err);
	*out = json_number_value(v);
	return 0;
}

int lp_config_get_bool(const struct lp_config *cfg, const char *key, int *out, struct lp_err *err)
{
	json_t *v = need(cfg, key, err);
	if (!v)
		return -1;
	if (!json_is_boolean(v))
		return wrong(key, v, "a boolean", err);
	*out = json_is_true(v);
	return 0;
}

int lp_config_get_string(const struct lp_config *cfg, const char *key, const char **out,
	struct lp_err *err)
{
	json_t *v = need(cfg, key, err);
	if (!v)
		return -1;
	if (json_is_null(v)) {
		*out = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return wrong(key, v, "a string", err);
	*out = json_string_value(v);
	return 0;
}

int lp_config_get_string_list(const struct lp_config *cfg, const char *key, const char ***out,
	size_t *n_out, struct lp_err *err)
{
	json_t *v = need(cfg, key, err), *item;
	const char **list;
	size_t i;
	*out = NULL;
	*n_out = 0;
	if (!v)
		return -1;
	if (!json_is_null(v) && !json_is_array(v))
		return wrong(key, v, "a list of strings", err);
	json_array_foreach(v, i, item)
		if (!json_is_string(item))
			return wrong(key, v, "a list of strings", err);
	list = calloc(json_array_size(v) + 1, sizeof(*list));
	if (!list)
		return lp_oom(err);
	json_array_foreach(v, i, item)
		list[i] = json_string_value(item);
	*out = list;
	*n_out = json_array_size(v);
	return 0;
}
