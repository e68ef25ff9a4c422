/* test_containers.c: the core containers: lp_vec / LP_ARRAY growth, lp_map, and lp_buf's sticky
 * errors, including the overflow and out-of-memory paths.
 *
 * This program is linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (tests/CMakeLists.txt):
 * the wrappers below pass every call through until `fail_after` reaches 0, then fail the
 * allocations, so each out-of-memory branch runs for real. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/map.h"
#include "core/vec.h"

static long fail_after = -1;  /* -1: never fail; n: let n allocations succeed, then fail */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static int should_fail(void)
{
	if (fail_after < 0)
		return 0;
	if (fail_after == 0)
		return 1;
	fail_after--;
	return 0;
}

void *__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return should_fail() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __real_realloc(p, n);
}

struct pair {
	uint64_t a;
	uint32_t b;
};

static void test_array_push_and_reserve(void **state)
{
	struct pair *rows = NULL, *r;
	size_t n = 0, cap = 0, i;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	for (i = 0; i < 1000; i++) {
		r = LP_ARRAY_PUSH(rows, n, cap, &err);
		assert_non_null(r);
		assert_int_equal(r->a, 0);  /* zeroed */
		assert_int_equal(r->b, 0);
		r->a = i;
		r->b = (uint32_t)(i * 3);
	}
	assert_int_equal(n, 1000);
	assert_true(cap >= 1000);
	for (i = 0; i < n; i++) {
		assert_int_equal(rows[i].a, i);
		assert_int_equal(rows[i].b, i * 3);
	}
	assert_int_equal(LP_ARRAY_RESERVE(rows, cap, 5000, &err), 0);
	assert_true(cap >= 5000);
	assert_int_equal(rows[999].a, 999);
	free(rows);
}

static void test_array_overflow(void **state)
{
	struct pair *rows = NULL, *r;
	size_t n = 0, cap = 0;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	r = LP_ARRAY_PUSH(rows, n, cap, &err);
	assert_non_null(r);
	r->a = 7;
	/* need * sizeof(struct pair) would wrap: fails, array untouched */
	assert_int_equal(LP_ARRAY_RESERVE(rows, cap, SIZE_MAX / sizeof(*rows) + 1, &err), -1);
	assert_int_equal(err.kind, LP_ENOMEM);
	assert_string_equal(err.msg, "out of memory");
	assert_int_equal(LP_ARRAY_RESERVE(rows, cap, SIZE_MAX, NULL), -1);
	assert_int_equal(n, 1);
	assert_int_equal(cap, 16);
	assert_int_equal(rows[0].a, 7);
	/* a count at SIZE_MAX cannot take one more */
	{
		size_t full = SIZE_MAX;
		assert_null(LP_ARRAY_PUSH(rows, full, cap, NULL));
		assert_int_equal(full, SIZE_MAX);
	}
	assert_null(lp_reallocarray(NULL, SIZE_MAX / 2, 4));
	free(rows);
}

static void test_array_oom_keeps_array(void **state)
{
	uint32_t *v = NULL;
	size_t n = 0, cap = 0, i;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	for (i = 0; i < 16; i++)
		*(uint32_t *)LP_ARRAY_PUSH(v, n, cap, &err) = (uint32_t)i;
	assert_int_equal(cap, 16);
	fail_after = 0;
	assert_null(LP_ARRAY_PUSH(v, n, cap, &err));
	fail_after = -1;
	assert_string_equal(err.msg, "out of memory");
	assert_int_equal(n, 16);
	assert_int_equal(cap, 16);
	for (i = 0; i < 16; i++)
		assert_int_equal(v[i], i);
	free(v);
}

static void test_vec_typed(void **state)
{
	LP_VEC(uint64_t) ids = LP_VEC_INIT;
	LP_VEC(const char *) names = LP_VEC_INIT;
	const char **slot;
	size_t i;
	(void)state;
	for (i = 0; i < 100; i++)
		assert_int_equal(LP_VEC_APPEND(&ids, (uint64_t)i * i, NULL), 0);
	assert_int_equal(ids.n, 100);
	assert_int_equal(ids.v[99], 99 * 99);
	slot = lp_vec_push(&names, NULL);
	assert_non_null(slot);
	assert_null(*slot);
	*slot = "decode";
	assert_string_equal(names.v[0], "decode");
	fail_after = 0;
	assert_int_equal(lp_vec_reserve(&ids, 1000, NULL), -1);
	fail_after = -1;
	assert_int_equal(ids.n, 100);
	assert_int_equal(ids.v[50], 2500);
	lp_vec_free(&ids);
	lp_vec_free(&names);
	assert_null(ids.v);
	assert_int_equal(ids.n + ids.cap, 0);
}

static void test_map_u64_and_strings(void **state)
{
	struct lp_map m = LP_MAP_INIT;
	struct lp_err err = LP_ERR_INIT;
	uint64_t k, v = 0;
	size_t i, seen = 0;
	struct lp_map_entry *e;
	char name[64];
	(void)state;
	/* sequential ids, many growths */
	for (k = 0; k < 20000; k++)
		assert_int_equal(lp_map_put(&m, LP_MAP_U64(&k), k * 2 + 1, &err), 0);
	assert_int_equal(m.n, 20000);
	assert_true(m.cap >= 40000);
	for (k = 0; k < 20000; k++) {
		assert_int_equal(lp_map_get(&m, LP_MAP_U64(&k), &v), 1);
		assert_int_equal(v, k * 2 + 1);
	}
	k = 20000;
	assert_int_equal(lp_map_get(&m, LP_MAP_U64(&k), &v), 0);
	/* replace keeps one entry */
	k = 5;
	assert_int_equal(lp_map_put(&m, LP_MAP_U64(&k), 99, &err), 0);
	assert_int_equal(m.n, 20000);
	assert_int_equal(lp_map_get(&m, LP_MAP_U64(&k), &v), 1);
	assert_int_equal(v, 99);
	lp_map_release(&m);
	assert_int_equal(m.n, 0);
	assert_null(lp_map_find(&m, LP_MAP_U64(&k)));

	/* string keys, short (inline) and long (arena copy, NUL-terminated); the empty key */
	for (i = 0; i < 500; i++) {
		int added = 0;
		snprintf(name, sizeof(name), i % 2 ? "k%zu" : "a_rather_long_kernel_name_%zu", i);
		e = lp_map_upsert(&m, name, strlen(name), &added, &err);
		assert_non_null(e);
		assert_int_equal(added, 1);
		assert_int_equal(e->val, 0);
		e->val = i;
		assert_memory_equal(lp_map_key(e), name, strlen(name));
	}
	assert_non_null(lp_map_upsert(&m, "", 0, NULL, &err));
	snprintf(name, sizeof(name), "a_rather_long_kernel_name_%d", 42);
	e = lp_map_find(&m, name, strlen(name));
	assert_non_null(e);
	assert_int_equal(e->val, 42);
	assert_string_equal((const char *)lp_map_key(e), name);
	/* a prefix is another key */
	assert_null(lp_map_find(&m, name, 10));
	assert_non_null(lp_map_find(&m, "", 0));
	/* iteration visits every entry once */
	for (i = 0; (e = lp_map_next(&m, &i));)
		seen++;
	assert_int_equal(seen, 501);
	lp_map_release(&m);
}

static void test_map_packed_keys(void **state)
{
	struct key {
		int64_t name_id;
		int32_t device;
	} a, b;
	struct lp_map m = LP_MAP_INIT;
	uint64_t v;
	(void)state;
	memset(&a, 0, sizeof(a));  /* padding compares equal */
	memset(&b, 0, sizeof(b));
	a.name_id = 7;
	a.device = 0;
	b.name_id = 7;
	b.device = 1;
	assert_int_equal(lp_map_put(&m, &a, sizeof(a), 1, NULL), 0);
	assert_int_equal(lp_map_put(&m, &b, sizeof(b), 2, NULL), 0);
	assert_int_equal(lp_map_get(&m, &a, sizeof(a), &v), 1);
	assert_int_equal(v, 1);
	assert_int_equal(lp_map_get(&m, &b, sizeof(b), &v), 1);
	assert_int_equal(v, 2);
	lp_map_release(&m);
}

static void test_map_oom_leaves_map_unchanged(void **state)
{
	struct lp_map m = LP_MAP_INIT;
	struct lp_err err = LP_ERR_INIT;
	uint64_t k, v;
	char longkey[40];
	(void)state;
	for (k = 0; k < 32; k++)
		assert_int_equal(lp_map_put(&m, LP_MAP_U64(&k), k, &err), 0);
	assert_int_equal(m.cap, 64);
	/* the 33rd key needs a larger table: the allocation fails */
	fail_after = 0;
	k = 32;
	assert_null(lp_map_upsert(&m, LP_MAP_U64(&k), NULL, &err));
	fail_after = -1;
	assert_string_equal(err.msg, "out of memory");
	assert_int_equal(m.n, 32);
	assert_int_equal(m.cap, 64);
	assert_int_equal(lp_map_get(&m, LP_MAP_U64(&k), &v), 0);
	for (k = 0; k < 32; k++) {
		assert_int_equal(lp_map_get(&m, LP_MAP_U64(&k), &v), 1);
		assert_int_equal(v, k);
	}
	lp_map_release(&m);

	/* a long key whose arena copy fails: no entry is left behind */
	memset(longkey, 'x', sizeof(longkey));
	k = 1;
	assert_int_equal(lp_map_put(&m, LP_MAP_U64(&k), 1, &err), 0);
	fail_after = 0;
	assert_null(lp_map_upsert(&m, longkey, sizeof(longkey), NULL, &err));
	fail_after = -1;
	assert_int_equal(m.n, 1);
	assert_null(lp_map_find(&m, longkey, sizeof(longkey)));
	lp_map_release(&m);
}

static void test_map_intern(void **state)
{
	struct lp_arena arena = LP_ARENA_INIT;
	struct lp_map m;
	const char *a, *b, *c, *l1, *l2;
	const char *longname = "void gemm_kernel<float, 128, 64>(float const*, float*, int)";
	char tmp[16];
	int i;
	(void)state;
	lp_map_init(&m);
	a = lp_map_intern(&m, &arena, "decode", 6, NULL);
	memcpy(tmp, "decode", 7);
	b = lp_map_intern(&m, &arena, tmp, 6, NULL);
	assert_ptr_equal(a, b);
	assert_string_equal(a, "decode");
	c = lp_map_intern(&m, &arena, "decode_all", 6, NULL);  /* by length: the same bytes */
	assert_ptr_equal(a, c);
	l1 = lp_map_intern(&m, &arena, longname, strlen(longname), NULL);
	/* interned pointers survive many insertions (rehashes) */
	for (i = 0; i < 5000; i++) {
		char n[32];
		snprintf(n, sizeof(n), "n%d", i);
		assert_non_null(lp_map_intern(&m, &arena, n, strlen(n), NULL));
	}
	l2 = lp_map_intern(&m, &arena, longname, strlen(longname), NULL);
	assert_ptr_equal(l1, l2);
	assert_string_equal(l2, longname);
	assert_ptr_equal(lp_map_intern(&m, &arena, "decode", 6, NULL), a);
	assert_string_equal(a, "decode");
	assert_true(arena.used_bytes > 0);  /* the copies went to the caller's arena */
	lp_map_release(&m);
	lp_arena_release(&arena);
	/* out of memory on a short key's copy (the table's allocation passes): nothing added */
	lp_map_init(&m);
	fail_after = 1;
	assert_null(lp_map_intern(&m, &arena, "fresh", 5, NULL));
	fail_after = -1;
	assert_int_equal(m.n, 0);
	assert_null(lp_map_find(&m, "fresh", 5));
	assert_ptr_equal(lp_map_intern(&m, &arena, "fresh", 5, NULL), lp_map_intern(&m, &arena, "fresh", 5, NULL));
	lp_map_release(&m);
	lp_arena_release(&arena);
}

/* lp_buf: an error is sticky, as in curl's dynbuf: the content never silently skips a part */
static void test_buf_sticky_after_cap(void **state)
{
	struct lp_buf b;
	(void)state;
	lp_buf_init(&b, 16);
	assert_int_equal(lp_buf_adds(&b, "SELECT "), 0);
	assert_int_equal(lp_buf_adds(&b, "a_column_name_that_is_too_long"), -1);
	assert_true(b.oom);
	/* every later append fails: no "SELECT 1 FROM t" */
	assert_int_equal(lp_buf_adds(&b, "1"), -1);
	assert_int_equal(lp_buf_addc(&b, ' '), -1);
	assert_int_equal(lp_buf_addf(&b, "%s", "FROM t"), -1);
	assert_int_equal(lp_buf_add_shell_quoted(&b, "x"), -1);
	assert_int_equal(lp_buf_grow(&b, 1), -1);
	assert_string_equal(b.data, "SELECT ");
	/* reset keeps the error (a loop that reuses the buffer still sees it), release clears it */
	lp_buf_reset(&b);
	assert_true(b.oom);
	assert_int_equal(lp_buf_adds(&b, "x"), -1);
	assert_string_equal(b.data, "");
	lp_buf_release(&b);
	assert_false(b.oom);
	assert_int_equal(b.max, 16);
	assert_int_equal(lp_buf_adds(&b, "SELECT 1"), 0);
	assert_string_equal(b.data, "SELECT 1");
	lp_buf_release(&b);
}

static void test_buf_sticky_after_oom(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	char *d;
	size_t len;
	(void)state;
	assert_int_equal(lp_buf_adds(&b, "abc"), 0);
	fail_after = 0;
	assert_int_equal(lp_buf_grow(&b, 1000), -1);
	fail_after = -1;
	assert_true(b.oom);
	assert_int_equal(lp_buf_adds(&b, "def"), -1);
	assert_string_equal(b.data, "abc");
	assert_int_equal(b.len, 3);
	/* overflow of len + extra is an error too, and sticky */
	lp_buf_release(&b);
	assert_int_equal(lp_buf_grow(&b, SIZE_MAX), -1);
	assert_int_equal(lp_buf_adds(&b, "x"), -1);
	assert_string_equal(b.data, "");
	/* detach of a failed buffer gives what was there, and a fresh buffer */
	d = lp_buf_detach(&b, &len);
	assert_non_null(d);
	assert_int_equal(len, 0);
	free(d);
	assert_false(b.oom);
	assert_int_equal(lp_buf_adds(&b, "x"), 0);
	lp_buf_release(&b);
}

/* a failed assertion leaves no armed failure behind for the next test */
static int reset_alloc(void **state)
{
	(void)state;
	fail_after = -1;
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_array_push_and_reserve, reset_alloc),
		cmocka_unit_test_setup(test_array_overflow, reset_alloc),
		cmocka_unit_test_setup(test_array_oom_keeps_array, reset_alloc),
		cmocka_unit_test_setup(test_vec_typed, reset_alloc),
		cmocka_unit_test_setup(test_map_u64_and_strings, reset_alloc),
		cmocka_unit_test_setup(test_map_packed_keys, reset_alloc),
		cmocka_unit_test_setup(test_map_oom_leaves_map_unchanged, reset_alloc),
		cmocka_unit_test_setup(test_map_intern, reset_alloc),
		cmocka_unit_test_setup(test_buf_sticky_after_cap, reset_alloc),
		cmocka_unit_test_setup(test_buf_sticky_after_oom, reset_alloc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
