/* testutil.c: helpers for the unit tests (see testutil.h). */
#include "testutil.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "core/fs.h"

const char *lp_test_tmpdir(const char *name)
{
	static char path[4096];
	struct lp_err err = LP_ERR_INIT;
	snprintf(path, sizeof(path), "%s/%s", LP_TEST_TMP, name);
	lp_fs_remove_tree(path, &err);
	assert_int_equal(lp_fs_mkdir_p(path, &err), 0);
	return path;
}

const char *lp_test_fixture(const char *rel)
{
	static char path[4096];
	snprintf(path, sizeof(path), "%s/%s", LP_FIXTURES, rel);
	return path;
}

void lp_test_write(const char *path, const char *text)
{
	struct lp_err err = LP_ERR_INIT;
	assert_int_equal(lp_fs_write_atomic(path, text, strlen(text), &err), 0);
}

void lp_test_read(const char *path, struct lp_buf *out)
{
	struct lp_err err = LP_ERR_INIT;
	lp_buf_reset(out);
	if (lp_fs_read_file(path, out, 0, &err) < 0)
		fail_msg("%s", err.msg);
}

int lp_test_have_gpu(void)
{
	typedef int (*init_fn)(unsigned);
	typedef int (*count_fn)(int *);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	init_fn cu_init;
	count_fn cu_count;
	int n = 0;
	if (!h)
		return 0;
	cu_init = (init_fn)(uintptr_t)dlsym(h, "cuInit");
	cu_count = (count_fn)(uintptr_t)dlsym(h, "cuDeviceGetCount");
	if (!cu_init || !cu_count || cu_init(0) != 0 || cu_count(&n) != 0)
		n = 0;
	return n > 0;
}
