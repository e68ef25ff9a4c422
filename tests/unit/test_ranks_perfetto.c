/* test_ranks_perfetto.c: `llmprof trace perfetto` with several ranks (report/perfetto.c): one
 * process track per rank named "rank R: ...", its GPU tracks named "rank R GPU d: ...", sorted in
 * rank order with each rank's GPUs right after it, launchers last; otherData carries the ranks. */
#include "testutil.h"

#include <jansson.h>
#include <string.h>
#include <zlib.h>

#include "report/perfetto.h"

static json_t *read_gz_json(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	struct lp_buf b = LP_BUF_INIT;
	char chunk[8192];
	int n;
	json_t *j;
	json_error_t je;
	assert_non_null(gz);
	while ((n = gzread(gz, chunk, sizeof(chunk))) > 0)
		lp_buf_add(&b, chunk, (size_t)n);
	assert_int_equal(gzclose(gz), Z_OK);
	j = json_loadb(b.data, b.len, 0, &je);
	lp_buf_release(&b);
	if (!j)
		fail_msg("bad JSON: %s", je.text);
	return j;
}

static void add_proc(struct lp_profile *p, uint32_t pid, int32_t rank, uint64_t t)
{
	struct lp_process *pr = lp_profile_add_process(p);
	struct lp_kernel *k;
	assert_non_null(pr);
	pr->pid = pid;
	pr->ppid = 10;
	pr->name = lp_profile_intern(p, rank >= 0 ? "python tp.py" : "torchrun");
	pr->cupti_status = lp_profile_intern(p, "ok");
	pr->host = lp_profile_intern(p, "h");
	if (rank < 0)
		return;
	pr->rank = rank;
	pr->local_rank = rank;
	pr->world_size = 2;
	pr->rank_source = lp_profile_intern(p, "RANK");
	k = lp_test_kernel(p, -1, "ncclDevKernel_AllReduce", t, t + 1000);
	k->pid = pid;
	k->device = rank;
	k->stream = 13;
}

/* The process_sort_index and process_name metadata events of a pid. */
static void meta_of(json_t *events, json_int_t pid, json_int_t *sort, const char **name)
{
	size_t i;
	json_t *e;
	*sort = -1;
	*name = NULL;
	json_array_foreach(events, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *n = json_string_value(json_object_get(e, "name"));
		if (!ph || strcmp(ph, "M") || json_integer_value(json_object_get(e, "pid")) != pid)
			continue;
		if (!strcmp(n, "process_sort_index"))
			*sort = json_integer_value(json_object_get(json_object_get(e, "args"), "sort_index"));
		if (!strcmp(n, "process_name"))
			*name = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
	}
}

/* The GPU process (pid) of the kernel of process `pid`. */
static json_int_t gpu_of(json_t *events, const char *want_name)
{
	size_t i;
	json_t *e;
	json_array_foreach(events, i, e) {
		const char *n = json_string_value(json_object_get(e, "name"));
		const char *v = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
		if (n && !strcmp(n, "process_name") && v && !strncmp(v, want_name, strlen(want_name)))
			return json_integer_value(json_object_get(e, "pid"));
	}
	return -1;
}

static void test_rank_tracks(void **state)
{
	const char *dir = lp_test_tmpdir("ranks_perfetto");
	char path[4200];
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_perfetto_opts o = { 0, 6 };
	json_t *j, *events, *procs;
	json_int_t s_launch, s_r0, s_r1, s_g0, s_g1, g0, g1;
	const char *n_launch, *n_r0, *n_r1, *n_g0, *n_g1;
	(void)state;
	lp_profile_init(&p, "ranks");
	add_proc(&p, 300, -1, 0);          /* the launcher first in the file */
	add_proc(&p, 302, 1, 5000);        /* rank 1 before rank 0 */
	add_proc(&p, 301, 0, 4000);
	snprintf(path, sizeof(path), "%s/trace.json.gz", dir);
	assert_int_equal(lp_perfetto_write(&p, path, &o, &err), 0);
	j = read_gz_json(path);
	events = json_object_get(j, "traceEvents");
	meta_of(events, 300, &s_launch, &n_launch);
	meta_of(events, 301, &s_r0, &n_r0);
	meta_of(events, 302, &s_r1, &n_r1);
	assert_string_equal(n_launch, "torchrun (pid 300)");
	assert_string_equal(n_r0, "rank 0: python tp.py (pid 301)");
	assert_string_equal(n_r1, "rank 1: python tp.py (pid 302)");
	g0 = gpu_of(events, "rank 0 GPU 0:");
	g1 = gpu_of(events, "rank 1 GPU 1:");
	assert_true(g0 >= 0 && g1 >= 0);
	meta_of(events, g0, &s_g0, &n_g0);
	meta_of(events, g1, &s_g1, &n_g1);
	/* rank 0, its GPU, rank 1, its GPU, then the launcher */
	assert_true(s_r0 < s_g0 && s_g0 < s_r1 && s_r1 < s_g1 && s_g1 < s_launch);
	procs = json_object_get(json_object_get(j, "otherData"), "processes");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(procs, 1), "rank")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(procs, 1), "world_size")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(procs, 1), "ppid")), 10);
	assert_null(json_object_get(json_array_get(procs, 0), "rank"));
	json_decref(j);
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rank_tracks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
