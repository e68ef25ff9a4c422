/* test_core.c: buffers, arena, strings, sha256, atomic writes, option parsing. */
#include "testutil.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/arena.h"
#include "core/buf.h"
#include "core/fs.h"
#include "core/opt.h"
#include "core/sha256.h"
#include "core/str.h"

static void test_buf_grows_and_caps(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	int i;
	(void)state;
	assert_string_equal(b.data, "");
	for (i = 0; i < 1000; i++)
		assert_int_equal(lp_buf_addf(&b, "%d,", i), 0);
	assert_true(b.len > 3000);
	assert_int_equal(b.data[b.len], '\0');
	assert_true(strncmp(b.data, "0,1,2,", 6) == 0);
	lp_buf_release(&b);

	lp_buf_init(&b, 8);
	assert_int_equal(lp_buf_adds(&b, "12345678"), 0);
	assert_int_equal(lp_buf_adds(&b, "9"), -1);
	assert_true(b.oom);
	assert_string_equal(b.data, "12345678");
	lp_buf_release(&b);
}

static void test_shell_quote(void **state)
{
	struct lp_buf b = LP_BUF_INIT;
	(void)state;
	lp_buf_add_shell_quoted(&b, "--nvtx-include=LLM@decode_all/");
	lp_buf_addc(&b, ' ');
	lp_buf_add_shell_quoted(&b, "it's a name");
	lp_buf_addc(&b, ' ');
	lp_buf_add_shell_quoted(&b, "");
	assert_string_equal(b.data, "--nvtx-include=LLM@decode_all/ 'it'\\''s a name' ''");
	lp_buf_release(&b);
}

static void test_arena(void **state)
{
	struct lp_arena a = LP_ARENA_INIT;
	char *s;
	int i;
	(void)state;
	for (i = 0; i < 10000; i++) {
		s = lp_arena_strdup(&a, "decode_step");
		assert_non_null(s);
		assert_string_equal(s, "decode_step");
		assert_int_equal((uintptr_t)s % 16, 0);
	}
	assert_non_null(lp_arena_alloc(&a, 1 << 20));
	lp_arena_release(&a);
	assert_null(a.head);
}

static void test_str(void **state)
{
	int64_t i;
	double d;
	(void)state;
	assert_int_equal(lp_str_to_i64("42", &i), 0);
	assert_int_equal(i, 42);
	assert_int_equal(lp_str_to_i64("4x", &i), -1);
	assert_int_equal(lp_str_to_i64("", &i), -1);
	assert_int_equal(lp_str_to_double("1.5e3", &d), 0);
	assert_true(d == 1500.0);
	assert_int_equal(lp_str_to_double("1.5 ", &d), -1);
	assert_int_equal(lp_str_edit_distance("run.top_n_kernel", "run.top_n_kernels", 10), 1);
	assert_int_equal(lp_str_edit_distance("kitten", "sitting", 10), 3);
	assert_int_equal(lp_str_edit_distance("abc", "xyzxyzxyz", 3), 3);
}

static void test_sha256_vectors(void **state)
{
	char hex[65];
	(void)state;
	lp_sha256_hex("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	lp_sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	lp_sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_atomic_write_replaces_whole(void **state)
{
	const char *dir = lp_test_tmpdir("atomic");
	char path[4200];
	struct lp_buf b = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	snprintf(path, sizeof(path), "%s/a/b/file.txt", dir);
	assert_int_equal(lp_fs_write_atomic(path, "x", 1, &err), -1);  /* folder missing */
	assert_non_null(strstr(err.msg, "file.txt"));
	snprintf(path, sizeof(path), "%s/a/b", dir);
	assert_int_equal(lp_fs_mkdir_p(path, &err), 0);
	snprintf(path, sizeof(path), "%s/a/b/file.txt", dir);
	assert_int_equal(lp_fs_write_atomic(path, "first", 5, &err), 0);
	assert_int_equal(lp_fs_write_atomic(path, "second version", 14, &err), 0);
	lp_test_read(path, &b);
	assert_string_equal(b.data, "second version");
	lp_buf_release(&b);
	/* no temporary files left behind */
	{
		char cmd[4300];
		snprintf(cmd, sizeof(cmd), "test $(ls -A %s/a/b | wc -l) -eq 1", dir);
		assert_int_equal(system(cmd), 0);
	}
	/* a read-only folder: the write fails and the old file is untouched */
	snprintf(path, sizeof(path), "%s/a/b", dir);
	if (geteuid() != 0) {
		chmod(path, 0555);
		snprintf(path, sizeof(path), "%s/a/b/file.txt", dir);
		assert_int_equal(lp_fs_write_atomic(path, "third", 5, &err), -1);
		lp_test_read(path, &b);
		assert_string_equal(b.data, "second version");
		lp_buf_release(&b);
		snprintf(path, sizeof(path), "%s/a/b", dir);
		chmod(path, 0755);
	}
}

static void test_opt_parse(void **state)
{
	int dry = 0, n = 0;
	const char *mode = NULL;
	struct lp_opt opts[] = {
		LP_OPT_FLAG(0, "dry-run", &dry, "dry"),
		LP_OPT_STRING('m', "mode", &mode, "MODE", "mode"),
		LP_OPT_INT('n', "top", &n, "N", "n"),
		LP_OPT_END,
	};
	const char *argv[] = { "run", "--dry-run", "run.repeats=3", "--mode=deep", "-n", "7", "--",
			       "python", "--mode", NULL };
	struct lp_args args;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_int_equal(lp_opt_parse(9, argv, opts, &args, &err), 0);
	assert_int_equal(dry, 1);
	assert_string_equal(mode, "deep");
	assert_int_equal(n, 7);
	assert_int_equal(args.n_rest, 1);
	assert_string_equal(args.rest[0], "run.repeats=3");
	assert_int_equal(args.n_tail, 2);
	assert_string_equal(args.tail[0], "python");
	lp_args_release(&args);

	{
		const char *bad[] = { "run", "--nope", NULL };
		assert_int_equal(lp_opt_parse(2, bad, opts, &args, &err), -1);
		assert_int_equal(err.kind, LP_EUSAGE);
		assert_string_equal(err.msg, "unknown option '--nope'");
	}
	{
		const char *bad[] = { "run", "-n", "x7", NULL };
		assert_int_equal(lp_opt_parse(3, bad, opts, &args, &err), -1);
		assert_string_equal(err.msg, "option '-n' expects an integer, got 'x7'");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buf_grows_and_caps),
		cmocka_unit_test(test_shell_quote),
		cmocka_unit_test(test_arena),
		cmocka_unit_test(test_str),
		cmocka_unit_test(test_sha256_vectors),
		cmocka_unit_test(test_atomic_write_replaces_whole),
		cmocka_unit_test(test_opt_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
