/* testutil.c: helpers for the unit tests (see testutil.h). */
#include "testutil.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

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

int32_t lp_test_range(struct lp_profile *p, int32_t parent, const char *domain, const char *name, uint64_t start_ns,
	uint64_t end_ns)
{
	struct lp_range *r = lp_profile_add_range(p);
	assert_non_null(r);
	r->domain = lp_profile_intern(p, domain);
	r->name = lp_profile_intern(p, name);
	r->pid = 1;
	r->tid = 1;
	r->start_ns = start_ns;
	r->end_ns = end_ns;
	r->parent = parent;
	r->depth = parent >= 0 ? (uint16_t)(p->ranges[parent].depth + 1) : 0;
	return (int32_t)(p->n_ranges - 1);
}

struct lp_kernel *lp_test_kernel(struct lp_profile *p, int32_t range, const char *name, uint64_t start_ns,
	uint64_t end_ns)
{
	struct lp_kernel *k = lp_profile_add_kernel(p);
	assert_non_null(k);
	k->name = lp_profile_intern(p, name);
	k->short_name = k->name;
	k->pid = 1;
	k->start_ns = start_ns;
	k->end_ns = end_ns;
	k->range = range;
	return k;
}

extern char **environ;

void lp_test_trace_fixture(const char *dir, const char *spec, const char *out)
{
	char exe[4096], e_spec[256];
	const char *argv[] = { exe, dir, NULL };
	const char *envp[64];
	struct lp_buf bin = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	posix_spawn_file_actions_t fa;
	size_t k = 0, i;
	pid_t pid;
	int status = 0;
	assert_int_equal(lp_fs_exe_dir(&bin, &err), 0);
	snprintf(exe, sizeof(exe), "%s/lp_trace_fixture", bin.data);
	lp_buf_release(&bin);
	snprintf(e_spec, sizeof(e_spec), "LLMPROF_TRACE_SAMPLE=%s", spec);
	envp[k++] = e_spec;
	for (i = 0; environ[i] && k < 62; i++)
		if (strncmp(environ[i], "LLMPROF_TRACE", 13))
			envp[k++] = environ[i];
	envp[k] = NULL;
	lp_fs_remove_tree(dir, &err);
	lp_err_clear(&err);
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	assert_int_equal(posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null",
		out ? O_WRONLY | O_CREAT | O_TRUNC : O_WRONLY, 0644), 0);
	assert_int_equal(posix_spawn(&pid, exe, &fa, NULL, (char *const *)(uintptr_t)argv, (char *const *)(uintptr_t)envp), 0);
	posix_spawn_file_actions_destroy(&fa);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
