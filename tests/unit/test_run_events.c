/* test_run_events.c: the run layer's reporting (run/events.h) and its artifact bookkeeping
 * (run/pipeline_int.h): phase statuses reach the sink, and an artifact that could not be written
 * or recorded fails its phase -- before or after the phase has its status -- and phases.json says
 * so, instead of the failure being dropped. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/rundir.h"
#include "core/fs.h"
#include "report/reports.h"
#include "run/events.h"
#include "run/pipeline_int.h"

struct seen {
	int n[LP_RUN_EV_TICK_END + 1];
	char last_phase[32], last_status[16], last_text[512];
};

static void on_event(void *ctx, const struct lp_run_event *ev)
{
	struct seen *s = ctx;
	assert_non_null(ev->text);
	s->n[ev->kind]++;
	snprintf(s->last_text, sizeof(s->last_text), "%s", ev->text);
	if (ev->kind == LP_RUN_EV_PHASE) {
		snprintf(s->last_phase, sizeof(s->last_phase), "%s", ev->phase);
		snprintf(s->last_status, sizeof(s->last_status), "%s", ev->status);
	}
}

struct fixture {
	struct lp_pipeline pl;
	struct lp_run run;
	struct lp_pl_state st;
	struct lp_run_sink sink;
	struct seen seen;
};

static void setup(struct fixture *f, const char *name)
{
	struct lp_err err = LP_ERR_INIT;
	int i;
	memset(f, 0, sizeof(*f));
	assert_int_equal(lp_rundir_create(&f->run.dir, lp_test_tmpdir(name), "r1", &err), 0);
	f->sink.fn = on_event;
	f->sink.ctx = &f->seen;
	f->st.pl = &f->pl;
	f->st.run = &f->run;
	f->st.sink = &f->sink;
	for (i = 0; i < PH_COUNT; i++) {
		snprintf(f->st.ph[i].name, sizeof(f->st.ph[i].name), "%s", lp_pl_phase_names[i]);
		lp_buf_init(&f->st.write_failed[i], 0);
	}
}

static void teardown(struct fixture *f)
{
	int i;
	for (i = 0; i < PH_COUNT; i++)
		lp_buf_release(&f->st.write_failed[i]);
	lp_rundir_release(&f->run.dir);
}

/* A phase status goes to the sink; ok stays ok when every artifact was written. */
static void test_phase_events(void **state)
{
	struct fixture f;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	setup(&f, "run_events_phase");
	lp_pl_progress(&f.st, PH_CAPTURE, "the workload");
	assert_int_equal(f.seen.n[LP_RUN_EV_PROGRESS], 1);
	assert_string_equal(f.seen.last_text, "the workload");
	/* a rel path with ".." is refused by the run folder: a write error with a message */
	assert_int_equal(lp_pl_wrote(&f.st, PH_CAPTURE, lp_rundir_write(&f.run.dir, "trace/cmd.txt", "x", 1, "capture",
		&err), "trace/cmd.txt", &err), 0);
	lp_pl_set_phase(&f.st, PH_CAPTURE, "ok", NULL);
	assert_int_equal(f.seen.n[LP_RUN_EV_PHASE], 1);
	assert_string_equal(f.seen.last_phase, "capture");
	assert_string_equal(f.seen.last_status, "ok");
	assert_int_equal(f.seen.n[LP_RUN_EV_WARN], 0);
	teardown(&f);
}

/* A record that fails before the phase has its status: the status set later is "failed" and its
 * reason names the file and the error. */
static void test_failure_before_status(void **state)
{
	struct fixture f;
	struct lp_err err = LP_ERR_INIT;
	(void)state;
	setup(&f, "run_events_before");
	/* recording a file that is not there fails (size and sha256 cannot be read) */
	assert_int_equal(lp_pl_wrote(&f.st, PH_NCU, lp_rundir_record(&f.run.dir, "ncu/gone.csv", "ncu", &err),
		"ncu/gone.csv", &err), -1);
	assert_int_equal(f.seen.n[LP_RUN_EV_WARN], 1);
	assert_non_null(strstr(f.seen.last_text, "'ncu/gone.csv'"));
	assert_int_equal(f.seen.n[LP_RUN_EV_PHASE], 0);   /* no status yet */
	lp_pl_set_phase(&f.st, PH_NCU, "ok", "metrics n/a on this GPU: x");
	assert_string_equal(f.st.ph[PH_NCU].status, "failed");
	assert_non_null(strstr(f.st.ph[PH_NCU].reason, "metrics n/a on this GPU: x; artifacts not written: 'ncu/gone.csv' ("));
	assert_string_equal(f.seen.last_status, "failed");
	teardown(&f);
}

/* A write that fails after the phase was saved ok: the status changes at once, the sink hears it,
 * and the next phases.json says failed; a skipped phase stays skipped but names the file. */
static void test_failure_after_status(void **state)
{
	struct fixture f;
	struct lp_err err = LP_ERR_INIT, ferr = LP_ERR_INIT;
	struct lp_phase_status *ph = NULL;
	double traced, untraced;
	size_t n = 0;
	(void)state;
	setup(&f, "run_events_after");
	lp_pl_set_phase(&f.st, PH_PROVENANCE, "ok", NULL);
	lp_pl_set_phase(&f.st, PH_CAPTURE, "skipped", "not asked");
	lp_pl_save_phases(&f.st);
	lp_err_set(&ferr, LP_EIO, "no space left on device");
	lp_pl_wrote(&f.st, PH_PROVENANCE, -1, "env.json", &ferr);
	assert_string_equal(f.st.ph[PH_PROVENANCE].status, "failed");
	assert_string_equal(f.st.ph[PH_PROVENANCE].reason, "artifacts not written: 'env.json' (no space left on device)");
	assert_string_equal(f.seen.last_phase, "provenance");
	assert_string_equal(f.seen.last_status, "failed");
	/* a rel path with ".." is refused by the run folder: a write error with a message */
	assert_int_equal(lp_pl_wrote(&f.st, PH_CAPTURE, lp_rundir_write(&f.run.dir, "../escape.txt", "x", 1, "capture",
		&err), "../escape.txt", &err), -1);
	assert_string_equal(f.st.ph[PH_CAPTURE].status, "skipped");
	assert_non_null(strstr(f.st.ph[PH_CAPTURE].reason, "not asked; artifacts not written: '../escape.txt'"));
	lp_pl_save_phases(&f.st);
	assert_int_equal(lp_phases_load(f.run.dir.path, &ph, &n, &traced, &untraced, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(ph[0].name, "provenance");
	assert_string_equal(ph[0].status, "failed");
	assert_non_null(strstr(ph[0].reason, "'env.json'"));
	free(ph);
	assert_true(lp_rundir_has(&f.run.dir, "phases.json"));
	teardown(&f);
}

/* Without a sink nothing is delivered and nothing breaks; ticks are not even computed. */
static void test_no_sink(void **state)
{
	struct lp_pl_ticker t = { NULL, "ncu", "/nonexistent/ncu.log", 0, 0 };
	struct lp_run_sink quiet = { on_event, NULL, 0 };
	(void)state;
	lp_run_warnf(NULL, "dropped %d", 1);
	lp_pl_tick(&t, 1.0);
	t.sink = &quiet;   /* ticks off: the callback is not called (its ctx would be NULL) */
	lp_pl_tick(&t, 2.0);
	lp_pl_tick_end(&quiet, 3.0);
	assert_int_equal(t.read_bytes, 0);
}

/* The ticker counts ncu's "==PROF== Profiling" lines, complete lines only. */
static void test_tick_counts(void **state)
{
	struct seen s;
	struct lp_run_sink sink = { on_event, &s, 1 };
	const char *dir = lp_test_tmpdir("run_events_tick");
	struct lp_buf log = LP_BUF_INIT;
	struct lp_pl_ticker t;
	FILE *f;
	(void)state;
	memset(&s, 0, sizeof(s));
	lp_fs_join(&log, dir, "ncu.log");
	t = (struct lp_pl_ticker){ &sink, "ncu", log.data, 0, 0 };
	lp_test_write(log.data, "==PROF== Profiling \"a\"\n==PROF== Profiling \"b\"\n==PROF== Profil");
	lp_pl_tick(&t, 1.0);
	assert_int_equal(s.n[LP_RUN_EV_TICK], 1);
	assert_int_equal(t.profiled, 2);
	f = fopen(log.data, "a");
	assert_non_null(f);
	fputs("ing \"c\"\n", f);
	fclose(f);
	lp_pl_tick(&t, 2.0);
	assert_int_equal(t.profiled, 3);
	lp_pl_tick_end(&sink, 2.5);
	assert_int_equal(s.n[LP_RUN_EV_TICK_END], 1);
	lp_buf_release(&log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_phase_events),
		cmocka_unit_test(test_failure_before_status),
		cmocka_unit_test(test_failure_after_status),
		cmocka_unit_test(test_no_sink),
		cmocka_unit_test(test_tick_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
