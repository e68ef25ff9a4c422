/* test_ncu_rank.c: which rank ncu profiles in a multi-rank job (run/ncu_rank.h): a job is
 * multi-rank with two launcher ranks or more; the chosen rank's processes; a rank the capture
 * did not see and a missing gate library are errors that say so. */
#include "testutil.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "run/ncu_rank.h"

static void add_proc(struct lp_profile *p, uint32_t pid, int32_t rank)
{
	struct lp_process *pr = lp_profile_add_process(p);
	assert_non_null(pr);
	pr->pid = pid;
	pr->rank = rank;
}

static void test_resolve(void **state)
{
	struct lp_profile p;
	struct lp_ncu_rank nr;
	struct lp_err err = LP_ERR_INIT;
	const char *lib = lp_test_tmpdir("ncu_rank_lib");
	char gate[4096];
	(void)state;
	lp_profile_init(&p, "x");
	add_proc(&p, 100, -1);      /* torchrun's agent */
	add_proc(&p, 101, 0);
	add_proc(&p, 102, 1);
	add_proc(&p, 103, 0);       /* a fork child of rank 0 */
	/* no gate next to the tracer: an environment error naming the path */
	assert_int_equal(lp_ncu_rank_resolve(&p, 0, lib, &nr, &err), -1);
	assert_int_equal(err.kind, LP_EENV);
	assert_non_null(strstr(err.msg, "libllmprof_ncu_gate.so is not next to the tracer library"));
	assert_non_null(strstr(err.msg, "2-rank job"));
	snprintf(gate, sizeof(gate), "%s/libllmprof_ncu_gate.so", lib);
	lp_test_write(gate, "");
	lp_err_clear(&err);
	assert_int_equal(lp_ncu_rank_resolve(&p, 0, lib, &nr, &err), 0);
	assert_true(nr.multi);
	assert_int_equal(nr.n_ranks, 2);
	assert_int_equal(nr.rank, 0);
	assert_int_equal(nr.n_pids, 2);
	assert_int_equal(nr.pids[0], 101);
	assert_int_equal(nr.pids[1], 103);
	assert_string_equal(nr.gate, gate);
	assert_int_equal(lp_ncu_rank_resolve(&p, 1, lib, &nr, &err), 0);
	assert_int_equal(nr.n_pids, 1);
	assert_int_equal(nr.pids[0], 102);
	/* a rank the capture did not see */
	assert_int_equal(lp_ncu_rank_resolve(&p, 3, lib, &nr, &err), -1);
	assert_int_equal(err.kind, LP_EUSAGE);
	assert_string_equal(err.msg, "profiling.ncu.rank=3: the capture saw ranks 0, 1");
	lp_profile_release(&p);

	/* one rank, or none (multiprocessing workers): ncu runs over the whole job, any rank asked */
	lp_profile_init(&p, "x");
	add_proc(&p, 200, -1);
	add_proc(&p, 201, -1);
	assert_int_equal(lp_ncu_rank_resolve(&p, 5, lib, &nr, &err), 0);
	assert_false(nr.multi);
	assert_int_equal(nr.n_ranks, 0);
	add_proc(&p, 202, 0);
	assert_int_equal(lp_ncu_rank_resolve(&p, 0, lib, &nr, &err), 0);
	assert_false(nr.multi);
	assert_int_equal(nr.n_pids, 0);
	lp_profile_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
