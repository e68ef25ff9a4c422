/* test_rundir.c: run ids, the run folder, atomic artifact writes recorded in manifest.json,
 * listing and keep_last pruning (src/collect/rundir.c, rundir_list.c). */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/rundir.h"
#include "core/fs.h"
#include "core/sha256.h"

static void test_run_id_validation(void **state)
{
	static const char *const good[] = { "a", "run-1", "my_run.v2", "20250101-120000-abcd", "A.b-C_d" };
	static const char *const bad[] = { "", "..", "../x", "a/b", "/abs", "a..b", ".hidden", ".",
					   "a b", "a\nb", "x$y", "a\\b" };
	char longest[LP_RUNDIR_ID_MAX + 2];
	struct lp_err err = LP_ERR_INIT;
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (lp_rundir_validate_id(good[i], &err) < 0)
			fail_msg("'%s' refused: %s", good[i], err.msg);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (lp_rundir_validate_id(bad[i], &err) == 0)
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(err.kind, LP_EUSAGE);
		assert_true(strncmp(err.msg, "invalid run id '", 16) == 0);
	}
	memset(longest, 'x', sizeof(longest));
	longest[LP_RUNDIR_ID_MAX] = '\0';
	assert_int_equal(lp_rundir_validate_id(longest, &err), 0);
	longest[LP_RUNDIR_ID_MAX] = 'x';
	longest[LP_RUNDIR_ID_MAX + 1] = '\0';
	assert_int_equal(lp_rundir_validate_id(longest, &err), -1);
	assert_true(lp_rundir_is_generated_id("20250101-120000-0a9f"));
	assert_false(lp_rundir_is_generated_id("20250101-120000-0A9F"));
	assert_false(lp_rundir_is_generated_id("2025010-1120000-0a9f"));
	assert_false(lp_rundir_is_generated_id("my-run"));
}

static void test_create_makes_subfolders_and_unique_ids(void **state)
{
	const char *root = lp_test_tmpdir("rundir_create");
	char ids[40][LP_RUNDIR_ID_MAX + 1];
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf p = LP_BUF_INIT;
	size_t i, j;
	(void)state;
	/* 40 runs within (about) one second: every one gets its own folder */
	for (i = 0; i < 40; i++) {
		struct lp_rundir rd;
		if (lp_rundir_create(&rd, root, NULL, &err) < 0)
			fail_msg("%s", err.msg);
		assert_true(lp_rundir_is_generated_id(rd.run_id));
		memcpy(ids[i], rd.run_id, sizeof(ids[i]));
		if (i == 0) {
			static const char *const subs[] = { "nsys", "ncu", "trace", "logs" };
			for (j = 0; j < 4; j++) {
				lp_rundir_path(&rd, subs[j], &p);
				assert_true(lp_fs_is_dir(p.data));
			}
			lp_rundir_path(&rd, LP_RUNDIR_MANIFEST, &p);
			assert_true(lp_fs_is_file(p.data));
			assert_string_equal(json_string_value(json_object_get(rd.manifest, "status")), "running");
		}
		lp_rundir_release(&rd);
	}
	for (i = 0; i < 40; i++)
		for (j = i + 1; j < 40; j++)
			assert_string_not_equal(ids[i], ids[j]);
	lp_buf_release(&p);
}

static void test_named_run_and_existing_name(void **state)
{
	const char *root = lp_test_tmpdir("rundir_named");
	struct lp_rundir rd;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_int_equal(lp_rundir_create(&rd, root, "baseline", &err), 0);
	assert_string_equal(rd.run_id, "baseline");
	lp_rundir_release(&rd);
	assert_int_equal(lp_rundir_create(&rd, root, "baseline", &err), -1);
	assert_int_equal(err.kind, LP_EUSAGE);
	assert_non_null(strstr(err.msg, "already exists"));
	assert_int_equal(lp_rundir_create(&rd, root, "../escape", &err), -1);
	assert_false(lp_fs_exists(LP_TEST_TMP "/escape"));
}

static int count_temporaries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d)) != NULL)
		n += strstr(de->d_name, ".tmp.") != NULL;
	if (d)
		closedir(d);
	return n;
}

static void test_write_records_size_sha256_phase(void **state)
{
	const char *root = lp_test_tmpdir("rundir_write");
	struct lp_rundir rd, back;
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf p = LP_BUF_INIT, text = LP_BUF_INIT;
	const char *body = "kernel,time\nk1,42\n";
	char sha[65];
	json_t *list, *e;
	(void)state;
	assert_int_equal(lp_rundir_create(&rd, root, "w", &err), 0);
	assert_int_equal(lp_rundir_write(&rd, "ncu/deep/table.csv", body, strlen(body), "ncu", &err), 0);
	lp_rundir_path(&rd, "ncu/deep/table.csv", &p);
	lp_test_read(p.data, &text);
	assert_string_equal(text.data, body);
	/* the manifest on disk, not only in memory */
	assert_int_equal(lp_rundir_open(&back, rd.path, &err), 0);
	list = json_object_get(back.manifest, "artifacts");
	assert_int_equal(json_array_size(list), 1);
	e = json_array_get(list, 0);
	lp_sha256_hex(body, strlen(body), sha);
	assert_string_equal(json_string_value(json_object_get(e, "path")), "ncu/deep/table.csv");
	assert_int_equal(json_integer_value(json_object_get(e, "size_bytes")), strlen(body));
	assert_string_equal(json_string_value(json_object_get(e, "sha256")), sha);
	assert_string_equal(json_string_value(json_object_get(e, "phase")), "ncu");
	lp_rundir_release(&back);
	/* rewriting a path replaces its entry */
	assert_int_equal(lp_rundir_write(&rd, "ncu/deep/table.csv", "x", 1, "report", &err), 0);
	list = json_object_get(rd.manifest, "artifacts");
	assert_int_equal(json_array_size(list), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0), "size_bytes")), 1);
	/* a file another program wrote, then recorded */
	lp_rundir_path(&rd, "logs/tool.log", &p);
	lp_test_write(p.data, "hello\n");
	assert_int_equal(lp_rundir_record(&rd, "logs/tool.log", "capture", &err), 0);
	assert_int_equal(json_array_size(json_object_get(rd.manifest, "artifacts")), 2);
	assert_int_equal(lp_rundir_record(&rd, "logs/none.log", "capture", &err), -1);
	/* no temporaries left behind, and paths cannot leave the run folder */
	assert_int_equal(count_temporaries(rd.path), 0);
	lp_rundir_path(&rd, "ncu/deep", &p);
	assert_int_equal(count_temporaries(p.data), 0);
	assert_int_equal(lp_rundir_write(&rd, "../out.txt", "x", 1, "x", &err), -1);
	assert_int_equal(lp_rundir_write(&rd, "/etc/x", "x", 1, "x", &err), -1);
	assert_int_equal(lp_rundir_write(&rd, "a//b", "x", 1, "x", &err), -1);
	assert_int_equal(lp_rundir_write(&rd, LP_RUNDIR_MANIFEST, "x", 1, "x", &err), -1);
	assert_int_equal(lp_rundir_set_status(&rd, LP_RUN_PARTIAL, &err), 0);
	assert_int_equal(lp_rundir_open(&back, rd.path, &err), 0);
	assert_string_equal(json_string_value(json_object_get(back.manifest, "status")), "partial");
	lp_rundir_release(&back);
	lp_rundir_release(&rd);
	lp_buf_release(&p);
	lp_buf_release(&text);
}

static void test_files_and_resolve(void **state)
{
	const char *root = lp_test_tmpdir("rundir_files");
	struct lp_rundir rd;
	struct lp_err err = LP_ERR_INIT;
	struct lp_rundir_file *files;
	struct lp_buf p = LP_BUF_INIT;
	size_t n;
	(void)state;
	assert_int_equal(lp_rundir_create(&rd, root, "f", &err), 0);
	assert_int_equal(lp_rundir_write(&rd, "b.txt", "bb", 2, "report", &err), 0);
	assert_int_equal(lp_rundir_write(&rd, "trace/a.bin", "a", 1, "capture", &err), 0);
	lp_rundir_path(&rd, "stray.txt", &p);
	lp_test_write(p.data, "s");
	assert_int_equal(lp_rundir_files(&rd, &files, &n, &err), 0);
	assert_int_equal(n, 4);
	assert_string_equal(files[0].rel, "b.txt");
	assert_string_equal(files[0].phase, "report");
	assert_int_equal(files[0].size_bytes, 2);
	assert_string_equal(files[1].rel, "manifest.json");
	assert_null(files[1].phase);
	assert_string_equal(files[2].rel, "stray.txt");
	assert_null(files[2].phase);
	assert_string_equal(files[3].rel, "trace/a.bin");
	assert_string_equal(files[3].phase, "capture");
	lp_rundir_files_free(files, n);
	assert_int_equal(lp_rundir_resolve(root, "f", &p, &err), 0);
	assert_string_equal(p.data, rd.path);
	assert_int_equal(lp_rundir_resolve(root, rd.path, &p, &err), 0);
	assert_int_equal(lp_rundir_resolve(root, "g", &p, &err), -1);
	assert_string_equal(err.hint, "'llmprof runs' lists the runs");
	assert_int_equal(lp_rundir_resolve(root, "no/such/dir", &p, &err), -1);
	assert_string_equal(err.msg, "no run folder 'no/such/dir'");
	lp_rundir_release(&rd);
	lp_buf_release(&p);
}

/* Makes a run with a chosen creation time, status and pid. */
static void fake_run(const char *root, const char *id, const char *created,
	enum lp_run_status status, long pid)
{
	struct lp_rundir rd;
	struct lp_err err = LP_ERR_INIT;
	assert_int_equal(lp_rundir_create(&rd, root, id, &err), 0);
	json_object_set_new(rd.manifest, "created_at", json_string(created));
	json_object_set_new(rd.manifest, "pid", json_integer(pid));
	assert_int_equal(lp_rundir_set_status(&rd, status, &err), 0);
	lp_rundir_release(&rd);
}

static long dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return (long)pid;
}

static void test_list_and_prune_keep_last(void **state)
{
	const char *root = lp_test_tmpdir("rundir_prune");
	struct lp_err err = LP_ERR_INIT;
	struct lp_run_info *runs;
	struct lp_buf p = LP_BUF_INIT;
	size_t n, removed;
	(void)state;
	fake_run(root, "r1", "2025-01-01T00:00:01.000Z", LP_RUN_OK, 1);
	fake_run(root, "r2", "2025-01-01T00:00:02.000Z", LP_RUN_FAILED, 1);
	fake_run(root, "r3", "2025-01-01T00:00:03.000Z", LP_RUN_RUNNING, (long)getpid());  /* alive */
	fake_run(root, "r4", "2025-01-01T00:00:04.000Z", LP_RUN_RUNNING, dead_pid());     /* gone */
	fake_run(root, "r5", "2025-01-01T00:00:05.000Z", LP_RUN_PARTIAL, 1);
	fake_run(root, "r6", "2025-01-01T00:00:06.000Z", LP_RUN_OK, 1);
	/* damaged: no manifest, a corrupt one (listed last as such, never pruned); a copied run whose
	 * manifest names another id */
	lp_fs_join(&p, root, "notes");
	assert_int_equal(lp_fs_mkdir_p(p.data, &err), 0);
	lp_fs_join(&p, root, "broken");
	assert_int_equal(lp_fs_mkdir_p(p.data, &err), 0);
	lp_fs_join(&p, root, "broken/manifest.json");
	lp_test_write(p.data, "{\"run_id\": \"broken\", \"status\": ");
	lp_fs_join(&p, root, "copy");
	assert_int_equal(lp_fs_mkdir_p(p.data, &err), 0);
	lp_fs_join(&p, root, "copy/manifest.json");
	lp_test_write(p.data, "{\"run_id\": \"r0\", \"status\": \"ok\", \"created_at\": \"2024-01-01T00:00:00.000Z\"}");

	assert_int_equal(lp_rundir_list(root, &runs, &n, &err), 0);
	assert_int_equal(n, 9);
	assert_string_equal(runs[0].id, "r6");
	assert_false(runs[0].damaged);
	assert_null(runs[0].problem);
	assert_string_equal(runs[2].id, "r4");
	assert_string_equal(runs[2].status, "interrupted");
	assert_string_equal(runs[3].id, "r3");
	assert_string_equal(runs[3].status, "running");
	assert_string_equal(runs[6].id, "copy");
	assert_string_equal(runs[7].id, "notes");
	assert_string_equal(runs[7].status, "damaged");
	assert_true(runs[7].damaged);
	assert_string_equal(runs[7].problem, "no manifest.json");
	assert_string_equal(runs[8].id, "broken");
	assert_string_equal(runs[8].status, "damaged");
	assert_non_null(strstr(runs[8].problem, "corrupt manifest.json: "));
	assert_non_null(strstr(runs[8].problem, "broken/manifest.json:1:"));
	lp_rundir_list_free(runs, n);

	/* keep 2 counting the current run r1 (the oldest): r6 stays, r5 and r4 and r2 go,
	 * r3 is alive, copy is not ours */
	assert_int_equal(lp_rundir_prune(root, 2, "r1", &removed, &err), 0);
	assert_int_equal(removed, 3);
	assert_int_equal(lp_rundir_list(root, &runs, &n, &err), 0);
	assert_int_equal(n, 6);
	assert_string_equal(runs[0].id, "r6");
	assert_string_equal(runs[1].id, "r3");
	assert_string_equal(runs[2].id, "r1");
	assert_string_equal(runs[3].id, "copy");
	assert_string_equal(runs[4].id, "notes");
	assert_string_equal(runs[5].id, "broken");
	lp_rundir_list_free(runs, n);
	lp_fs_join(&p, root, "notes");
	assert_true(lp_fs_is_dir(p.data));
	assert_int_equal(lp_rundir_prune(root, 0, NULL, &removed, &err), -1);
	/* a missing root is an empty list */
	assert_int_equal(lp_rundir_list("/nonexistent/stage2", &runs, &n, &err), 0);
	assert_int_equal(n, 0);
	lp_buf_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_run_id_validation),
		cmocka_unit_test(test_create_makes_subfolders_and_unique_ids),
		cmocka_unit_test(test_named_run_and_existing_name),
		cmocka_unit_test(test_write_records_size_sha256_phase),
		cmocka_unit_test(test_files_and_resolve),
		cmocka_unit_test(test_list_and_prune_keep_last),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
