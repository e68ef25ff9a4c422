/* test_tools.c: finding nsys/ncu (config, the /opt/nvidia layouts incl. the nsys inside ncu),
 * parsing --version texts, probing a fake tool, and the mode requirements. */
#include "testutil.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collect/tools.h"
#include "core/fs.h"

static void fake_tool(const char *path, const char *version_text)
{
	char text[1024];
	struct lp_err err = LP_ERR_INIT;
	struct lp_buf dir = LP_BUF_INIT;
	const char *slash = strrchr(path, '/');
	lp_buf_add(&dir, path, (size_t)(slash - path));
	assert_int_equal(lp_fs_mkdir_p(dir.data, &err), 0);
	snprintf(text, sizeof(text), "#!/bin/sh\nprintf '%%s\\n' '%s'\n", version_text);
	lp_test_write(path, text);
	assert_int_equal(chmod(path, 0755), 0);
	lp_buf_release(&dir);
}

static void test_parse_version(void **state)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "NVIDIA Nsight Systems version 2025.3.1.90-253135822438v0\n", "2025.3.1.90" },
		{ "NVIDIA (R) Nsight Compute Command Line Profiler\nCopyright (c) 2018-2025 NVIDIA Corporation\n"
		  "Version 2025.3.1.0 (build 36398880) (public-release)\n", "2025.3.1.0" },
		{ "nsys version: 2023.4.1\n", "2023.4.1" },
	};
	char out[64];
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(lp_tools_parse_version(cases[i].text, out, sizeof(out)), 0);
		assert_string_equal(out, cases[i].want);
	}
	assert_int_equal(lp_tools_parse_version("no number here", out, sizeof(out)), -1);
}

static void test_find_in_opt(void **state)
{
	const char *root = lp_test_tmpdir("tools_opt");
	char ncu[4096], nsys_old[4096], nsys_new[4096], bad[4096];
	struct lp_tools_opts o;
	struct lp_tool t;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	snprintf(ncu, sizeof(ncu), "%s/nsight-compute/2025.3.1/ncu", root);
	snprintf(nsys_old, sizeof(nsys_old), "%s/nsight-compute/2024.1.0/host/target-linux-x64/nsys", root);
	snprintf(nsys_new, sizeof(nsys_new), "%s/nsight-compute/2025.3.1/host/target-linux-x64/nsys", root);
	fake_tool(ncu, "Version 2025.3.1.0 (build 1)");
	fake_tool(nsys_old, "NVIDIA Nsight Systems version 2024.1.0.1-1");
	fake_tool(nsys_new, "NVIDIA Nsight Systems version 2025.3.1.90-2");
	memset(&o, 0, sizeof(o));
	o.opt_root = root;
	o.cuda_root = root;  /* no bin/ there */
	{
		struct lp_buf w = LP_BUF_INIT;
		int on_path = lp_fs_which("ncu", &w) == 0 || lp_fs_which("nsys", &w) == 0;
		lp_buf_release(&w);
		if (on_path)
			skip();  /* a real tool on PATH would win */
	}
	assert_int_equal(lp_tools_find("ncu", &o, &t), 0);
	assert_string_equal(t.path, ncu);
	assert_string_equal(t.found_via, "/opt/nvidia");
	assert_int_equal(lp_tools_probe_version(&t, 10, &err), 0);
	assert_string_equal(t.version, "2025.3.1.0");
	assert_int_equal(lp_tools_find("nsys", &o, &t), 0);
	assert_string_equal(t.path, nsys_new);  /* the newest bundle */
	assert_string_equal(t.found_via, "ncu bundle");
	assert_int_equal(lp_tools_probe_version(&t, 10, &err), 0);
	assert_string_equal(t.version, "2025.3.1.90");

	snprintf(bad, sizeof(bad), "%s/not-executable", root);
	lp_test_write(bad, "x");
	o.ncu_path = bad;
	assert_int_equal(lp_tools_find("ncu", &o, &t), -1);
	assert_non_null(strstr(t.problem, "configured tools.ncu"));
	o.ncu_path = ncu;
	assert_int_equal(lp_tools_find("ncu", &o, &t), 0);
	assert_string_equal(t.found_via, "config");
}

static void test_modes(void **state)
{
	struct lp_tools t;
	struct lp_buf why = LP_BUF_INIT;
	(void)state;
	memset(&t, 0, sizeof(t));
	t.n_gpus = 1;
	snprintf(t.cupti_path, sizeof(t.cupti_path), "/cuda/libcupti.so");
	snprintf(t.inject_path, sizeof(t.inject_path), "/build/lib/libllmprof_inject.so");
	t.nsys_importer_ok = 1;
	assert_true(lp_tools_mode_ok(&t, "light", 0, &why));
	assert_false(lp_tools_mode_ok(&t, "deep", 0, &why));  /* no ncu */
	t.ncu.found = 1;
	lp_buf_reset(&why);
	assert_true(lp_tools_mode_ok(&t, "deep", 0, &why));
	snprintf(t.counters_problem, sizeof(t.counters_problem), "%s", LP_NVGPUCTRPERM_FIX);
	assert_false(lp_tools_mode_ok(&t, "deep", 0, &why));
	assert_non_null(strstr(why.data, "NVreg_RestrictProfilingToAdminUsers=0"));
	assert_true(lp_tools_mode_ok(&t, "light", 0, NULL));
	assert_false(lp_tools_mode_ok(&t, "light", 1, NULL));  /* nsys asked for, not found */
	t.n_gpus = 0;
	assert_false(lp_tools_mode_ok(&t, "light", 0, NULL));
	lp_buf_release(&why);
}

/* tools.nsys_lib_dir: the importer's libraries are looked for where `run` points nsys
 * (LD_LIBRARY_PATH = the folder, then ours), so `check` and `run` agree. The "libraries" here are
 * copies of libdl: loadable, which is all the probe asks. */
static void test_importer_lib_dir(void **state)
{
	const char *dir = lp_test_tmpdir("tools_libdir");
	static const char *const libs[] = { "libdw.so.1", "libelf.so.1" };
	struct lp_buf src = LP_BUF_INIT, dst = LP_BUF_INIT, ld = LP_BUF_INIT;
	struct lp_tools *t = calloc(1, sizeof(*t));
	size_t i;
	(void)state;
	assert_non_null(t);
	{
		/* libdl.so.2 beside the libc we run on (a function no sanitizer intercepts finds it): a
		 * small library with no state of its own, loadable anywhere glibc is */
		Dl_info info;
		struct lp_err err = LP_ERR_INIT;
		const char *slash;
		assert_true(dladdr((void *)(uintptr_t)gnu_get_libc_version, &info) && info.dli_fname);
		slash = strrchr(info.dli_fname, '/');
		assert_non_null(slash);
		lp_buf_reset(&ld);
		lp_buf_addf(&ld, "%.*s/libdl.so.2", (int)(slash - info.dli_fname), info.dli_fname);
		lp_test_read(ld.data, &src);
		assert_true(src.len > 0);
		for (i = 0; i < 2; i++) {
			lp_buf_reset(&dst);
			lp_buf_addf(&dst, "%s/%s", dir, libs[i]);
			assert_int_equal(lp_fs_write_atomic(dst.data, src.data, src.len, &err), 0);
		}
	}
	lp_tools_check_importer(t, dir);   /* what lp_tools_detect does with opts.nsys_lib_dir */
	assert_true(t->nsys_importer_ok);
	assert_string_equal(t->importer_where, dir);

	/* the LD_LIBRARY_PATH nsys gets: the folder first, then ours */
	setenv("LD_LIBRARY_PATH", "/a:/b", 1);
	assert_int_equal(lp_tools_nsys_ld_path("/x", &ld), 0);
	assert_string_equal(ld.data, "/x:/a:/b");
	unsetenv("LD_LIBRARY_PATH");
	assert_int_equal(lp_tools_nsys_ld_path("/x", &ld), 0);
	assert_string_equal(ld.data, "/x");
	free(t);
	lp_buf_release(&src);
	lp_buf_release(&dst);
	lp_buf_release(&ld);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_version),
		cmocka_unit_test(test_find_in_opt),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_importer_lib_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
