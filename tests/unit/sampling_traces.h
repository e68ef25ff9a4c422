/* sampling_traces.h: what test_sampling_traces.c and test_sampling_bursts.c share about the
 * fixture traces of build/tests/lp_trace_fixture (inject/test/fixture_writer.c): loading one, its
 * decode_step STAGE records, a kernel row and summary.json of its analysis, and its steps against
 * the fixture program's own. Static inline: each test includes what it uses. */
#ifndef LP_TESTS_SAMPLING_TRACES_H
#define LP_TESTS_SAMPLING_TRACES_H

#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "analyze/analysis.h"
#include "analyze/sampling.h"
#include "core/fs.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"
#include "report/reports.h"

/* a plan (pick: the block's first unit, as the first tracer did) */
#define PLAN(s_, e_, f_) { .sampled = (s_), .every = (e_), .first = (f_), .unit = "decode_step" }

static inline void load(const char *dir, struct lp_profile *p)
{
	struct lp_err err = LP_ERR_INIT;
	lp_profile_init(p, dir);
	if (lp_trace_load(dir, p, &err) < 0)
		fail_msg("%s", err.msg);
}

/* The analyses of a sampled trace (into a) and of an exact one of the same program (into b). */
static inline void analyze_both(const struct lp_profile *sa, const struct lp_profile *ex, struct lp_analysis *a,
	struct lp_analysis *b)
{
	struct lp_analysis_input in;
	struct lp_err err = LP_ERR_INIT;
	memset(&in, 0, sizeof(in));
	in.profile = sa;
	assert_int_equal(lp_analyze(&in, a, &err), 0);
	in.profile = ex;
	assert_int_equal(lp_analyze(&in, b, &err), 0);
	assert_true(a->kernels.sampled && !b->kernels.sampled);
}

/* The STAGE records of decode_step (the tracer's flags and GPU times), by range id. */
struct stage_list {
	struct lp_trace_stage r[256];
	size_t n;
	struct lp_trace_sampling sampling;
};

static inline void read_stages(const char *dir, struct stage_list *out)
{
	struct lp_buf path = LP_BUF_INIT, data = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	uint32_t unit_sid = 0;
	struct dirent *de;
	DIR *d = opendir(dir);
	size_t off, i, j;
	assert_non_null(d);
	while ((de = readdir(d)) != NULL)
		if (strstr(de->d_name, LP_TRACE_FILE_SUFFIX))
			lp_buf_addf(&path, "%s/%s", dir, de->d_name);
	closedir(d);
	assert_int_equal(lp_fs_read_file(path.data, &data, 1 << 26, &err), 0);
	memset(out, 0, sizeof(*out));
	for (off = sizeof(struct lp_trace_preamble); off + sizeof(struct lp_trace_rec_header) <= data.len;) {
		struct lp_trace_rec_header h;
		const char *p;
		memcpy(&h, data.data + off, sizeof(h));
		p = data.data + off + sizeof(h);
		if (h.type == LP_TREC_STRING) {
			struct lp_trace_string s;
			memcpy(&s, p, sizeof(s));
			if (s.len == 11 && !memcmp(p + sizeof(s), "decode_step", 11))
				unit_sid = s.sid;
		} else if (h.type == LP_TREC_SAMPLING) {
			memcpy(&out->sampling, p, sizeof(out->sampling));
		} else if (h.type == LP_TREC_STAGE) {
			assert_true(out->n < 256);
			memcpy(&out->r[out->n++], p, sizeof(struct lp_trace_stage));
		}
		off += sizeof(h) + h.size;
	}
	/* decode_step only, by range id */
	for (i = j = 0; i < out->n; i++)
		if (out->r[i].name_sid == unit_sid)
			out->r[j++] = out->r[i];
	out->n = j;
	for (i = 1; i < out->n; i++)
		for (j = i; j > 0 && out->r[j - 1].range_id > out->r[j].range_id; j--) {
			struct lp_trace_stage t = out->r[j];
			out->r[j] = out->r[j - 1];
			out->r[j - 1] = t;
		}
	lp_buf_release(&path);
	lp_buf_release(&data);
}

static inline const struct lp_kernel_row *krow(const struct lp_kernel_set *s, const char *name)
{
	size_t i;
	for (i = 0; i < s->n_rows; i++)
		if (!strcmp(s->rows[i].name, name))
			return &s->rows[i];
	fail_msg("no kernel row '%s'", name);
	return NULL;
}

static inline json_t *summary_of(const struct lp_analysis *a)
{
	struct lp_buf text = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	json_t *j;
	assert_int_equal(lp_report_summary_json(a, &text, &err), 0);
	j = json_loads(text.data, 0, NULL);
	assert_non_null(j);
	lp_buf_release(&text);
	return j;
}

/* Every decode step's GPU time in the trace (st) against the fixture program's own ("step G S NS"
 * lines in `path`: from after the step's push to after its pop, fixture_writer.c), which holds the
 * host pauses of the detaches at the pops (cupti_fake.c's 3 ms): equal for every step. Returns how
 * many steps held such a pause. */
static inline size_t steps_as_program(const char *path, const struct stage_list *st)
{
	struct lp_buf steps = LP_BUF_INIT;
	struct lp_err err = LP_ERR_INIT;
	const char *line;
	size_t i, held = 0;
	assert_int_equal(lp_fs_read_file(path, &steps, 1 << 20, &err), 0);
	line = steps.data;
	for (i = 0; i < st->n; i++) {
		int g, s;
		unsigned long long ns;
		assert_int_equal(sscanf(line, "step %d %d %llu", &g, &s, &ns), 3);
		assert_int_equal(st->r[i].index, (uint32_t)s);
		assert_int_equal(st->r[i].gpu, LP_TRACE_STAGE_GPU_EVENTS);
		if (st->r[i].gpu_elapsed_ns != ns)
			fail_msg("generation %d step %d: %llu ns in the trace, %llu the program's", g, s,
				(unsigned long long)st->r[i].gpu_elapsed_ns, ns);
		assert_true(st->r[i].gpu_end_ns - st->r[i].gpu_start_ns == ns);
		held += ns >= 3000000;
		line = strchr(line, '\n') + 1;
	}
	lp_buf_release(&steps);
	return held;
}

#endif
