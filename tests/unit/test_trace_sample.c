/* test_trace_sample.c: the injected tracer's stage ranges on a CPU (inject/sample.c): runs
 * build/tests/lp_trace_nvtx_demo steps (2 generations of prefill + decode_all with 10 decode_step
 * ranges, each holding a `layer` range) under libllmprof_inject.so with several
 * LLMPROF_TRACE_SAMPLE values and checks the SAMPLING record (mode, why, counts) and one STAGE
 * record per stage instance with the schedule's index and recorded flag. Without CUDA no CUPTI is
 * switched and no GPU time is measured (gpu = NONE): the schedule alone is what is checked here. */
#include "testutil.h"

#include <dirent.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

#include "core/fs.h"
#include "llmprof/trace_format.h"

static char g_demo[4096], g_lib[4096];

extern char **environ;

static int setup(void **state)
{
	struct lp_buf dir = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	assert_int_equal(lp_fs_exe_dir(&dir, &err), 0);
	snprintf(g_demo, sizeof(g_demo), "%s/lp_trace_nvtx_demo", dir.data);
	snprintf(g_lib, sizeof(g_lib), "%s/../lib/libllmprof_inject.so", dir.data);
	lp_buf_release(&dir);
	return 0;
}

struct stage_rec {
	struct lp_trace_stage r;
	char name[64];
};

struct result {
	struct lp_trace_sampling sampling;
	int n_sampling;
	struct stage_rec st[256];
	size_t n;
};

/* Runs the demo in `dir` with LLMPROF_TRACE_SAMPLE=spec (NULL: unset) and extra "K=V" (or NULL),
 * then reads the SAMPLING and STAGE records of its one file (strings resolved for names). */
static void run(const char *dir, const char *spec, const char *extra, struct result *res)
{
	char e_lib[4200], e_dir[4200], e_spec[256];
	const char *envp[64];
	const char *argv[] = { g_demo, "steps", NULL };
	size_t k = 0, i;
	pid_t pid;
	int status = 0;
	struct lp_buf path = LP_BUF_INIT, data = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	static char strings[64][64];
	DIR *d;
	struct dirent *de;
	size_t off;

	memset(res, 0, sizeof(*res));
	memset(strings, 0, sizeof(strings));
	snprintf(e_lib, sizeof(e_lib), "NVTX_INJECTION64_PATH=%s", g_lib);
	snprintf(e_dir, sizeof(e_dir), "LLMPROF_TRACE_DIR=%s", dir);
	envp[k++] = e_lib;
	envp[k++] = e_dir;
	if (spec) {
		snprintf(e_spec, sizeof(e_spec), "LLMPROF_TRACE_SAMPLE=%s", spec);
		envp[k++] = e_spec;
	}
	if (extra)
		envp[k++] = extra;
	for (i = 0; environ[i] && k < 62; i++)
		if (strncmp(environ[i], "LLMPROF_TRACE", 13) && strncmp(environ[i], "NVTX_INJECTION", 14) &&
		    strncmp(environ[i], "CUDA_INJECTION", 14) && strncmp(environ[i], "LD_PRELOAD", 10))
			envp[k++] = environ[i];
	envp[k] = NULL;
	lp_fs_remove_tree(dir, &err);
	lp_err_clear(&err);
	assert_int_equal(posix_spawn(&pid, g_demo, NULL, NULL, (char *const *)(uintptr_t)argv,
		(char *const *)(uintptr_t)envp), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (strstr(de->d_name, LP_TRACE_FILE_SUFFIX))
			lp_buf_addf(&path, "%s/%s", dir, de->d_name);
	closedir(d);
	assert_true(path.len > 0);
	assert_int_equal(lp_fs_read_file(path.data, &data, 1 << 26, &err), 0);
	for (off = sizeof(struct lp_trace_preamble); off + sizeof(struct lp_trace_rec_header) <= data.len;) {
		struct lp_trace_rec_header h;
		const char *p;
		memcpy(&h, data.data + off, sizeof(h));
		p = data.data + off + sizeof(h);
		assert_true(off + sizeof(h) + h.size <= data.len);
		if (h.type == LP_TREC_STRING) {
			struct lp_trace_string s;
			memcpy(&s, p, sizeof(s));
			if (s.sid < 64 && s.len < 64)
				memcpy(strings[s.sid], p + sizeof(s), s.len);
		} else if (h.type == LP_TREC_SAMPLING) {
			assert_int_equal(h.size, sizeof(res->sampling));
			memcpy(&res->sampling, p, sizeof(res->sampling));
			res->n_sampling++;
		} else if (h.type == LP_TREC_STAGE) {
			assert_int_equal(h.size, sizeof(struct lp_trace_stage));
			assert_true(res->n < 256);
			memcpy(&res->st[res->n++].r, p, sizeof(struct lp_trace_stage));
		}
		off += sizeof(h) + h.size;
	}
	for (i = 0; i < res->n; i++) {
		assert_true(res->st[i].r.name_sid > 0 && res->st[i].r.name_sid < 64);
		snprintf(res->st[i].name, sizeof(res->st[i].name), "%s", strings[res->st[i].r.name_sid]);
		assert_int_equal(res->st[i].r.gpu, LP_TRACE_STAGE_GPU_NONE); /* no CUDA here */
		assert_true(res->st[i].r.range_id > 0);
	}
	lp_buf_release(&path);
	lp_buf_release(&data);
}

/* The STAGE records named `name`, in range id order (the order of their pushes on one thread). */
static size_t select_stages(const struct result *res, const char *name, const struct lp_trace_stage **out)
{
	size_t i, j, n = 0;
	for (i = 0; i < res->n; i++)
		if (!strcmp(res->st[i].name, name))
			out[n++] = &res->st[i].r;
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && out[j - 1]->range_id > out[j]->range_id; j--) {
			const struct lp_trace_stage *t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

static void test_every(void **state)
{
	struct result *res = calloc(1, sizeof(*res));
	const struct lp_trace_stage *u[64];
	size_t n, i, recorded = 0;
	(void)state;
	run(LP_TEST_TMP "/sample_every", "every=3,first=2,pick=first", NULL, res);
	assert_int_equal(res->sampling.mode, LP_TRACE_SAMPLE_SAMPLED);
	assert_int_equal(res->sampling.pick, LP_TRACE_SAMPLE_PICK_FIRST);
	assert_true(res->sampling.seed == 0);   /* the default: every process of a job alike */
	assert_int_equal(res->sampling.why, LP_TRACE_SAMPLE_WHY_FORCED);
	assert_int_equal(res->sampling.every, 3);
	assert_int_equal(res->sampling.burst, 0); /* every= alone: one unit per block, CUPTI attached */
	assert_int_equal(res->sampling.first, 2);
	n = select_stages(res, "decode_step", u);
	assert_int_equal(n, 20);
	for (i = 0; i < n; i++) {
		uint32_t idx = (uint32_t)(i % 10);
		/* indices restart under each decode_all; the first two, then 2, 5, 8 */
		int want = idx < 2 || (idx - 2) % 3 == 0;
		assert_int_equal(u[i]->index, idx);
		assert_int_equal(u[i]->sample, want ? LP_TRACE_STAGE_RECORDED : LP_TRACE_STAGE_SKIPPED);
		recorded += (size_t)want;
	}
	assert_int_equal(res->sampling.units, 20);
	assert_int_equal(res->sampling.units_recorded, recorded);
	assert_int_equal(recorded, 10);
	/* the other stages: one record per instance, not units */
	assert_int_equal(select_stages(res, "prefill", u), 2);
	assert_int_equal(u[0]->sample, LP_TRACE_STAGE_NOT_UNIT);
	assert_int_equal(select_stages(res, "decode_all", u), 2);
	assert_int_equal(select_stages(res, "layer", u), 0);
	assert_int_equal(res->sampling.toggles, 0); /* no CUPTI to switch on a CPU */
	free(res);
}

/* splitmix64's finalizer, written from the formula of trace_format.h (lp_trace_sample_pick) */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The default pick: one unit at a seeded random position in each block of `every` (stratified),
 * the position the formula of trace_format.h gives; another seed moves them. */
static void test_random_pick(void **state)
{
	struct result *res = calloc(1, sizeof(*res));
	const struct lp_trace_stage *u[64];
	size_t n, i, differ = 0, recorded = 0;
	uint8_t flags[2][20];
	int round;
	(void)state;
	for (round = 0; round < 2; round++) {
		uint64_t seed = round ? 99 : 7;
		run(LP_TEST_TMP "/sample_random", round ? "every=3,first=2,seed=99" : "every=3,first=2,seed=7", NULL, res);
		assert_int_equal(res->sampling.mode, LP_TRACE_SAMPLE_SAMPLED);
		assert_int_equal(res->sampling.pick, LP_TRACE_SAMPLE_PICK_RANDOM);
		assert_true(res->sampling.seed == seed);
		n = select_stages(res, "decode_step", u);
		assert_int_equal(n, 20);
		recorded = 0;
		for (i = 0; i < n; i++) {
			uint32_t idx = (uint32_t)(i % 10), ordinal = (uint32_t)(i / 10) + 1; /* parents 1, 2 */
			int want = 1;
			if (idx >= 2) {
				uint32_t b = (idx - 2) / 3, pos = (idx - 2) % 3;
				uint32_t pick = (uint32_t)(mix(mix(mix(seed) ^ ordinal) ^ b) % 3);
				want = pos == pick;
			}
			flags[round][i] = u[i]->sample;
			assert_int_equal(u[i]->index, idx);
			assert_int_equal(u[i]->sample, want ? LP_TRACE_STAGE_RECORDED : LP_TRACE_STAGE_SKIPPED);
			recorded += (size_t)want;
		}
		assert_int_equal(res->sampling.units_recorded, recorded);
		/* 2 full blocks of 3 per parent: one each; the partial block (8, 9) holds one when the
		 * pick falls on it */
		assert_true(recorded >= 2 * (2 + 2) && recorded <= 2 * (2 + 3));
		for (i = 0; i < 2; i++) {
			size_t k, in_block = 0;
			for (k = 2 + 3 * i; k < 5 + 3 * i; k++)
				in_block += u[k]->sample == LP_TRACE_STAGE_RECORDED;
			assert_int_equal(in_block, 1);
		}
	}
	/* the seed matters: 7 and 99 put some blocks' unit elsewhere (a fixed pair: deterministic) */
	for (i = 0; i < 20; i++)
		differ += flags[0][i] != flags[1][i];
	assert_true(differ > 0);
	free(res);
}

static void test_off_auto_and_bad(void **state)
{
	struct result *res = calloc(1, sizeof(*res));
	const struct lp_trace_stage *u[64];
	size_t n, i;
	(void)state;
	run(LP_TEST_TMP "/sample_off", "off", NULL, res);
	assert_int_equal(res->sampling.mode, LP_TRACE_SAMPLE_EXACT);
	assert_int_equal(res->sampling.why, LP_TRACE_SAMPLE_WHY_OFF);
	n = select_stages(res, "decode_step", u);
	assert_int_equal(n, 20);
	for (i = 0; i < n; i++)
		assert_int_equal(u[i]->sample, LP_TRACE_STAGE_RECORDED);
	assert_int_equal(res->sampling.units_recorded, 20);

	/* unset: auto (no launches here, so exact, and the record says why) */
	run(LP_TEST_TMP "/sample_unset", NULL, NULL, res);
	assert_int_equal(res->sampling.mode, LP_TRACE_SAMPLE_EXACT);
	assert_int_equal(res->sampling.why, LP_TRACE_SAMPLE_WHY_AUTO_LOW);

	/* auto: no launches at all, so exact, and the record says why */
	run(LP_TEST_TMP "/sample_auto", "auto", NULL, res);
	assert_int_equal(res->sampling.mode, LP_TRACE_SAMPLE_EXACT);
	assert_int_equal(res->sampling.why, LP_TRACE_SAMPLE_WHY_AUTO_LOW);
	assert_int_equal(res->sampling.every, 128); /* auto alone: bursts of 4 in blocks of 128 (run 27) */
	assert_int_equal(res->sampling.burst, 4);
	assert_int_equal(res->sampling.first, 2);
	assert_int_equal(res->sampling.auto_rate, 5000);
	assert_int_equal(res->sampling.launch_rate, 0);
	assert_true(res->n_sampling >= 2); /* at start and at the end */
	/* every unit recorded: the first 2 of each parent as always, the others while auto kept
	 * measuring (MEASURED: the exact stratum) */
	n = select_stages(res, "decode_step", u);
	assert_true(n > 2);
	for (i = 0; i < n; i++)
		assert_int_equal(u[i]->sample, u[i]->index < 2 ? LP_TRACE_STAGE_RECORDED : LP_TRACE_STAGE_MEASURED);

	/* auto with a threshold of 0 launches/s: any rate is above it... but 0 is not */
	run(LP_TEST_TMP "/sample_auto0", "auto,rate=0,every=4", NULL, res);
	assert_int_equal(res->sampling.mode, LP_TRACE_SAMPLE_EXACT);
	assert_int_equal(res->sampling.every, 4);
	assert_int_equal(res->sampling.burst, 0); /* every= without burst=: one unit per block */

	/* auto,burst=0: auto's decision with one unit per block of the default 8 */
	run(LP_TEST_TMP "/sample_auto_b0", "auto,burst=0", NULL, res);
	assert_int_equal(res->sampling.every, 8);
	assert_int_equal(res->sampling.burst, 0);

	/* a value the tracer cannot read: exact, as with off */
	run(LP_TEST_TMP "/sample_bad", "every=0", NULL, res);
	assert_int_equal(res->sampling.mode, LP_TRACE_SAMPLE_EXACT);
	assert_int_equal(res->sampling.why, LP_TRACE_SAMPLE_WHY_OFF);
	run(LP_TEST_TMP "/sample_bad2", "sometimes", NULL, res);
	assert_int_equal(res->sampling.why, LP_TRACE_SAMPLE_WHY_OFF);
	/* gen= reads as the other keys: a number, or the spec is refused */
	run(LP_TEST_TMP "/sample_bad_gen", "auto,gen=x", NULL, res);
	assert_int_equal(res->sampling.why, LP_TRACE_SAMPLE_WHY_OFF);
	run(LP_TEST_TMP "/sample_auto_gen0", "auto,gen=0", NULL, res);
	assert_int_equal(res->sampling.why, LP_TRACE_SAMPLE_WHY_AUTO_LOW); /* no launches: exact below the rate */
	free(res);
}

static void test_unit_and_stages(void **state)
{
	struct result *res = calloc(1, sizeof(*res));
	const struct lp_trace_stage *u[64];
	size_t n, i;
	(void)state;
	/* unit=layer: each layer's parent is a different decode_step, so every layer is index 0 and,
	 * with first=0 and the block's first unit picked, recorded; the decode_step ranges are
	 * stages, not units */
	run(LP_TEST_TMP "/sample_unit", "every=2,first=0,unit=layer,pick=first", "LLMPROF_TRACE_STAGES=decode_step", res);
	n = select_stages(res, "layer", u);
	assert_int_equal(n, 20);
	for (i = 0; i < n; i++) {
		assert_int_equal(u[i]->index, 0);
		assert_int_equal(u[i]->sample, LP_TRACE_STAGE_RECORDED);
	}
	n = select_stages(res, "decode_step", u);
	assert_int_equal(n, 20);
	assert_int_equal(u[3]->sample, LP_TRACE_STAGE_NOT_UNIT);
	assert_int_equal(select_stages(res, "prefill", u), 0); /* not in LLMPROF_TRACE_STAGES */
	free(res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_pick),
		cmocka_unit_test(test_every),
		cmocka_unit_test(test_off_auto_and_bad),
		cmocka_unit_test(test_unit_and_stages),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
