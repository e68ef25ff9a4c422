/* test_ncu_cache.c: the ncu result cache (collect/ncu_cache.h): the key's documented bytes and
 * what changes it, the preset fingerprint, the folder rule, store and reuse, misses on damaged or
 * foreign files; the raw-page tables: select a kernel's rows, merge with renumbered IDs, and the
 * merged page read back by the raw parser. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "collect/ncu_cache.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "parse/ncu_raw.h"

static json_t *preset(const char *metrics_json)
{
	json_error_t je;
	char text[512];
	snprintf(text, sizeof(text), "{\"name\": \"ncu_light\", \"set\": null, \"sections\": [], \"metrics\": %s, "
		"\"replay_mode\": \"kernel\", \"clock_control\": \"none\", \"cache_control\": \"all\", "
		"\"nvtx\": {\"include\": [\"LLM@decode_all/\"]}, \"kernel_name\": null}", metrics_json);
	return json_loads(text, 0, &je);
}

static void init(struct lp_ncu_cache *c, const char *dir, const char *gpu, const char *driver, const char *ncu,
	const json_t *pr)
{
	struct lp_ncu_cache_ident id = { gpu, driver, ncu };
	struct lp_err err = LP_ERR_INIT;
	assert_int_equal(lp_ncu_cache_init(c, dir, &id, pr, &err), 0);
}

static void test_key(void **state)
{
	json_t *p1 = preset("[\"gpu__time_duration.sum\"]"), *p2 = preset("[\"gpu__time_duration.sum\", \"dram__bytes.sum\"]");
	json_t *p3 = json_deep_copy(p1);
	struct lp_ncu_cache c, d;
	struct lp_sha256 s;
	uint32_t grid[3] = { 1024, 1, 1 }, block[3] = { 256, 1, 1 };
	unsigned char dig[32];
	char key[65], other[65], expect[65], fp[65];
	const char *parts[] = { LP_NCU_CACHE_FORMAT, "NVIDIA H100 80GB HBM3", "580.65.06", "2025.3.1", NULL, "k_gemv(int)",
				"1024,1,1/256,1,1/0" };
	size_t i;
	(void)state;
	init(&c, "/tmp/x", "NVIDIA H100 80GB HBM3", "580.65.06", "2025.3.1", p1);
	lp_ncu_cache_key(&c, "k_gemv(int)", grid, block, 0, key);
	/* the documented bytes: the fields, each followed by a NUL */
	parts[4] = c.preset_fp;
	lp_sha256_init(&s);
	for (i = 0; i < 7; i++)
		lp_sha256_update(&s, parts[i], strlen(parts[i]) + 1);
	lp_sha256_final(&s, dig);
	for (i = 0; i < 32; i++)
		snprintf(expect + 2 * i, 3, "%02x", dig[i]);
	assert_string_equal(key, expect);

	/* what does not change the numbers does not change the fingerprint */
	json_object_set_new(p3, "name", json_string("other"));
	json_object_set_new(p3, "kernel_name", json_string("regex:x"));
	json_object_set_new(p3, "nvtx", json_object());
	lp_ncu_cache_preset_fp(p3, fp);
	assert_string_equal(fp, c.preset_fp);
	lp_ncu_cache_preset_fp(p2, fp);
	assert_string_not_equal(fp, c.preset_fp);

	/* every field of the key matters */
	lp_ncu_cache_key(&c, "k_gemv(int)", grid, block, 16, other);
	assert_string_not_equal(key, other);
	grid[0] = 512;
	lp_ncu_cache_key(&c, "k_gemv(int)", grid, block, 0, other);
	assert_string_not_equal(key, other);
	grid[0] = 1024;
	lp_ncu_cache_key(&c, "k_gemv(long)", grid, block, 0, other);
	assert_string_not_equal(key, other);
	init(&d, "/tmp/x", "NVIDIA H200", "580.65.06", "2025.3.1", p1);
	lp_ncu_cache_key(&d, "k_gemv(int)", grid, block, 0, other);
	assert_string_not_equal(key, other);
	init(&d, "/tmp/x", "NVIDIA H100 80GB HBM3", "580.95.05", "2025.3.1", p1);
	lp_ncu_cache_key(&d, "k_gemv(int)", grid, block, 0, other);
	assert_string_not_equal(key, other);
	init(&d, "/tmp/x", "NVIDIA H100 80GB HBM3", "580.65.06", "2025.4.0", p1);
	lp_ncu_cache_key(&d, "k_gemv(int)", grid, block, 0, other);
	assert_string_not_equal(key, other);
	init(&d, "/tmp/x", "NVIDIA H100 80GB HBM3", "580.65.06", "2025.3.1", p2);
	lp_ncu_cache_key(&d, "k_gemv(int)", grid, block, 0, other);
	assert_string_not_equal(key, other);
	init(&d, "/elsewhere", "NVIDIA H100 80GB HBM3", "580.65.06", "2025.3.1", p3);   /* folder: not in the key */
	lp_ncu_cache_key(&d, "k_gemv(int)", grid, block, 0, other);
	assert_string_equal(key, other);
	json_decref(p1);
	json_decref(p2);
	json_decref(p3);
}

static void test_dir(void **state)
{
	struct lp_ncu_cache c;
	struct lp_ncu_cache_ident id = { "g", "d", "n" };
	struct lp_err err = LP_ERR_INIT;
	char *old_x = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
	char *old_h = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	json_t *p = preset("[]");
	(void)state;
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	setenv("HOME", "/home/u", 1);
	assert_int_equal(lp_ncu_cache_init(&c, NULL, &id, p, &err), 0);
	assert_string_equal(c.dir, "/xdg/llmprof/ncu");
	assert_int_equal(lp_ncu_cache_init(&c, "/given", &id, p, &err), 0);
	assert_string_equal(c.dir, "/given");
	setenv("XDG_CACHE_HOME", "relative", 1);   /* the XDG spec: relative paths are ignored */
	assert_int_equal(lp_ncu_cache_init(&c, NULL, &id, p, &err), 0);
	assert_string_equal(c.dir, "/home/u/.cache/llmprof/ncu");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	assert_int_equal(lp_ncu_cache_init(&c, NULL, &id, p, &err), -1);
	assert_int_equal(err.kind, LP_EENV);
	if (old_x)
		setenv("XDG_CACHE_HOME", old_x, 1);
	if (old_h)
		setenv("HOME", old_h, 1);
	free(old_x);
	free(old_h);
	json_decref(p);
}

static void test_put_get(void **state)
{
	struct lp_ncu_cache c, d;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf dir = LP_BUF_INIT, path = LP_BUF_INIT;
	uint32_t grid[3] = { 1024, 1, 1 }, block[3] = { 128, 1, 1 };
	json_t *p = preset("[\"gpu__time_duration.sum\"]"), *t = NULL, *sel, *hit = NULL, *empty;
	char key[65];
	(void)state;
	lp_buf_addf(&dir, "%s/ncu_cache", LP_TEST_TMP);
	lp_fs_remove_tree(dir.data, NULL);
	init(&c, dir.data, "NVIDIA H100 80GB HBM3", "580.65.06", "2025.3.1", p);
	assert_int_equal(lp_ncu_table_load(LP_FIXTURES "/ncu/synthetic_raw.csv", 1, &t, &err), 0);
	sel = lp_ncu_table_select(t, "gemv_kernel", grid, block);
	assert_int_equal(json_array_size(json_object_get(sel, "rows")), 2);
	lp_ncu_cache_key(&c, "void gemv_kernel<float, 4>(const float *, float *, int)", grid, block, 0, key);
	assert_int_equal(lp_ncu_cache_get(&c, key, &hit), 0);   /* not yet */
	assert_int_equal(lp_ncu_cache_put(&c, key, "void gemv_kernel<float, 4>(const float *, float *, int)", grid, block,
		0, "run-1", sel, &err), 0);
	lp_buf_addf(&path, "%s/%.2s/%s.json", dir.data, key, key);
	assert_true(lp_fs_is_file(path.data));
	assert_int_equal(lp_ncu_cache_get(&c, key, &hit), 1);
	assert_true(json_equal(json_object_get(hit, "table"), sel));
	assert_string_equal(json_string_value(json_object_get(hit, "run")), "run-1");
	json_decref(hit);

	/* another driver: another key, and the file under this key does not answer for it */
	init(&d, dir.data, "NVIDIA H100 80GB HBM3", "999", "2025.3.1", p);
	assert_int_equal(lp_ncu_cache_get(&d, key, &hit), 0);
	/* a damaged file is a miss, and the next store replaces it */
	assert_int_equal(lp_fs_write_atomic(path.data, "{\"format\": ", 11, &err), 0);
	assert_int_equal(lp_ncu_cache_get(&c, key, &hit), 0);
	assert_null(hit);
	/* an entry without rows answers nothing */
	empty = lp_ncu_table_select(t, "no_such_kernel", grid, block);
	assert_int_equal(lp_ncu_cache_put(&c, key, "k", grid, block, 0, NULL, empty, &err), 0);
	assert_int_equal(lp_ncu_cache_get(&c, key, &hit), 0);
	json_decref(empty);
	json_decref(sel);
	json_decref(t);
	json_decref(p);
	lp_buf_release(&dir);
	lp_buf_release(&path);
}

struct count_ctx {
	int rows;
	uint64_t ids[16];
	double gemv_ns;
};

static int count_cb(const struct lp_ncu_result *r, void *vctx, struct lp_err *err)
{
	struct count_ctx *c = vctx;
	(void)err;
	if (c->rows < 16)
		c->ids[c->rows] = r->id;
	if (!strcmp(r->short_name, "gemv_kernel") && r->duration_ns > 0)
		c->gemv_ns += r->duration_ns;
	c->rows++;
	return 0;
}

static void test_tables(void **state)
{
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf out = LP_BUF_INIT;
	json_t *a = NULL, *b = NULL, *merged = json_object(), *partial;
	struct count_ctx one = { 0, { 0 }, 0 }, two = { 0, { 0 }, 0 };
	long off = -1;
	int i;
	(void)state;
	assert_int_equal(lp_ncu_table_load(LP_FIXTURES "/ncu/synthetic_raw.csv", 1, &a, &err), 0);
	assert_int_equal(json_array_size(json_object_get(a, "rows")), 4);
	assert_true(lp_ncu_table_column(a, "Kernel Name") >= 0);
	assert_int_equal(lp_ncu_table_column(a, "no such column"), -1);
	assert_int_equal(lp_ncu_table_load(LP_FIXTURES "/ncu/synthetic_raw.csv", 1, &b, &err), 0);

	/* a process's page, then a second one: IDs continue after the first's */
	assert_int_equal(lp_ncu_table_append(merged, a, &off, &err), 0);
	assert_int_equal(off, 0);
	off = -1;
	assert_int_equal(lp_ncu_table_append(merged, b, &off, &err), 0);
	assert_int_equal(off, 4);
	/* a cached kernel whose rows lack a column: remapped by name, the missing cell n/a */
	partial = json_deep_copy(b);
	json_array_remove(json_object_get(partial, "columns"), 2);   /* Process Name */
	json_array_remove(json_object_get(partial, "units"), 2);
	for (i = 0; i < 4; i++)
		json_array_remove(json_array_get(json_object_get(partial, "rows"), (size_t)i), 2);
	off = -1;
	assert_int_equal(lp_ncu_table_append(merged, partial, &off, &err), 0);
	assert_int_equal(off, 8);
	assert_int_equal(json_array_size(json_object_get(merged, "rows")), 12);
	assert_string_equal(json_string_value(json_array_get(json_array_get(json_object_get(merged, "rows"), 11), 2)), "n/a");

	lp_buf_addf(&out, "%s/merged_raw.csv", LP_TEST_TMP);
	assert_int_equal(lp_ncu_table_write(merged, out.data, &err), 0);
	assert_int_equal(lp_ncu_raw_stream(LP_FIXTURES "/ncu/synthetic_raw.csv", count_cb, &one, &err), 0);
	assert_int_equal(lp_ncu_raw_stream(out.data, count_cb, &two, &err), 0);
	assert_int_equal(two.rows, 3 * one.rows);
	for (i = 0; i < two.rows; i++)
		assert_int_equal(two.ids[i], (uint64_t)i);   /* the fixture's IDs are 0..3 */
	assert_true(one.gemv_ns > 0);
	assert_true(two.gemv_ns > 3 * one.gemv_ns - 1e-6 && two.gemv_ns < 3 * one.gemv_ns + 1e-6);
	json_decref(a);
	json_decref(b);
	json_decref(partial);
	json_decref(merged);
	lp_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test(test_dir),
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_tables),
	};
	lp_fs_mkdir_p(LP_TEST_TMP, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
