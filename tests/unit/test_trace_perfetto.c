/* test_trace_perfetto.c: the Chrome trace-event writer (report/perfetto.h). Writes a small
 * profile with awkward names, gunzips it, parses it with jansson and checks the events, the
 * escaping, the GPU tracks, the flows and the metadata; plus the JSON string escaper alone. */
#include "testutil.h"

#include <jansson.h>
#include <string.h>
#include <zlib.h>

#include "report/perfetto.h"

static const char nasty[] = "q\"uote\\back\x01\x1f\ttab\nnl \xc3\xa9 end";

static json_t *read_gz_json(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	struct lp_buf b = LP_BUF_INIT;
	char chunk[4096];
	int n;
	json_t *j;
	json_error_t je;
	assert_non_null(gz);
	while ((n = gzread(gz, chunk, sizeof(chunk))) > 0)
		lp_buf_add(&b, chunk, (size_t)n);
	assert_int_equal(gzclose(gz), Z_OK);
	j = json_loadb(b.data, b.len, 0, &je);
	if (!j)
		fail_msg("invalid JSON at line %d col %d: %s", je.line, je.column, je.text);
	lp_buf_release(&b);
	return j;
}

static void build(struct lp_profile *p)
{
	struct lp_range *r;
	struct lp_kernel *k;
	struct lp_copy *c;
	struct lp_process *pr;
	struct lp_device *d;
	lp_profile_init(p, "synthetic");
	pr = lp_profile_add_process(p);
	pr->pid = 42;
	pr->host = lp_profile_intern(p, "h");
	pr->name = lp_profile_intern(p, "python gen.py");
	pr->cupti_status = lp_profile_intern(p, "ok");
	d = lp_profile_add_device(p);
	d->id = 0;
	d->name = lp_profile_intern(p, "NVIDIA H100 80GB HBM3");
	d->uuid = lp_profile_intern(p, "");
	d->sm_count = 132;
	r = lp_profile_add_range(p);           /* 0 */
	r->domain = lp_profile_intern(p, "LLM");
	r->name = lp_profile_intern(p, "decode_all");
	r->pid = 42;
	r->tid = 42;
	r->start_ns = 1000000;
	r->end_ns = 9000000;
	r = lp_profile_add_range(p);           /* 1 */
	r->domain = lp_profile_intern(p, "LLM");
	r->name = lp_profile_intern(p, "decode_step");
	r->pid = 42;
	r->tid = 42;
	r->start_ns = 1000500;
	r->end_ns = 8000000;
	r->parent = 0;
	r->depth = 1;
	r->payload_type = LP_PAYLOAD_U64;
	r->payload.u64 = 3;
	r = lp_profile_add_range(p);           /* 2 */
	r->domain = lp_profile_intern(p, "");
	r->name = lp_profile_intern(p, nasty);
	r->pid = 42;
	r->tid = 43;
	r->start_ns = 2000000;
	r->end_ns = 0;                         /* never closed */
	r = lp_profile_add_range(p);           /* 3 */
	r->domain = lp_profile_intern(p, "");
	r->name = lp_profile_intern(p, "bad \xff utf8 \xe2\x82");
	r->pid = 42;
	r->tid = 42;
	r->kind = LP_RANGE_STARTEND;
	r->start_ns = 3000000;
	r->end_ns = 4000000;
	r = lp_profile_add_range(p);           /* 4 */
	r->domain = lp_profile_intern(p, "");
	r->name = lp_profile_intern(p, "a mark");
	r->pid = 42;
	r->tid = 42;
	r->kind = LP_RANGE_MARK;
	r->start_ns = r->end_ns = 3500000;
	k = lp_profile_add_kernel(p);
	k->name = lp_profile_intern(p, "void scale_kernel<4>(float*, float, int)");
	k->short_name = lp_profile_intern(p, "scale_kernel");
	k->pid = 42;
	k->stream = 13;
	k->start_ns = 5000123;
	k->end_ns = 5001123;
	k->correlation_id = 77;
	k->launch_tid = 42;
	k->launch_ns = 1500000;
	k->range = 1;
	/* a synthetic range (a graph-launch copy of a capture-time range): GPU-only, not a CPU slice */
	r = lp_profile_add_range(p);           /* 5 */
	r->domain = lp_profile_intern(p, "");
	r->name = lp_profile_intern(p, "captured_op");
	r->pid = 42;
	r->tid = 42;
	r->start_ns = 5000200;
	r->end_ns = 5000300;
	r->parent = 1;
	r->depth = 2;
	r->synthetic = 1;
	k = lp_profile_add_kernel(p);
	k->name = lp_profile_intern(p, "graph_kernel");
	k->short_name = k->name;
	k->pid = 42;
	k->stream = 13;
	k->start_ns = 5000200;
	k->end_ns = 5000300;
	k->graph_node_id = 9;
	k->range = 5;
	c = lp_profile_add_copy(p);
	c->kind = LP_COPY_HTOD;
	c->bytes = 4096;
	c->pid = 42;
	c->stream = 7;
	c->start_ns = 6000000;
	c->end_ns = 6001000;
	c->range = 0;
}

static json_t *find_event(json_t *events, const char *ph, const char *name)
{
	size_t i;
	json_t *e;
	json_array_foreach(events, i, e) {
		if (!strcmp(json_string_value(json_object_get(e, "ph")), ph) &&
		    (!name || (json_object_get(e, "name") && !strcmp(json_string_value(json_object_get(e, "name")), name))))
			return e;
	}
	fail_msg("no '%s' event named '%s'", ph, name ? name : "(any)");
	return NULL;
}

static void test_write(void **state)
{
	const char *dir = lp_test_tmpdir("trace_perfetto");
	char path[4200];
	struct lp_profile p;
	struct lp_err err = LP_ERR_INIT;
	struct lp_perfetto_opts o = { 1, 6 };
	json_t *j, *events, *e, *s, *f;
	size_t i;
	json_int_t gpu_pid;
	int saw_stream = 0;
	(void)state;
	build(&p);
	snprintf(path, sizeof(path), "%s/trace.json.gz", dir);
	assert_int_equal(lp_perfetto_write(&p, path, &o, &err), 0);
	j = read_gz_json(path);
	assert_string_equal(json_string_value(json_object_get(j, "displayTimeUnit")), "ns");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "otherData"), "t0_ns")), 1000000);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(
		json_object_get(j, "otherData"), "devices"), 0), "name")), "NVIDIA H100 80GB HBM3");
	events = json_object_get(j, "traceEvents");
	assert_true(json_is_array(events));

	e = find_event(events, "X", "decode_step");
	assert_string_equal(json_string_value(json_object_get(e, "cat")), "LLM");
	assert_true(json_real_value(json_object_get(e, "ts")) == 0.5);
	assert_true(json_real_value(json_object_get(e, "dur")) == 6999.5);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "args"), "payload")), 3);

	e = find_event(events, "X", nasty); /* escaped on the way out, exact on the way back */
	assert_int_equal(json_integer_value(json_object_get(e, "tid")), 43);
	assert_true(json_is_true(json_object_get(json_object_get(e, "args"), "unclosed")));
	assert_true(json_real_value(json_object_get(e, "dur")) == 7000.0); /* to the last event */

	e = find_event(events, "b", "bad \xef\xbf\xbd utf8 \xef\xbf\xbd");
	s = find_event(events, "e", "bad \xef\xbf\xbd utf8 \xef\xbf\xbd");
	assert_string_equal(json_string_value(json_object_get(e, "id")), json_string_value(json_object_get(s, "id")));
	find_event(events, "i", "a mark");

	e = find_event(events, "X", "void scale_kernel<4>(float*, float, int)");
	gpu_pid = json_integer_value(json_object_get(e, "pid"));
	assert_true(gpu_pid != 42);
	assert_int_equal(json_integer_value(json_object_get(e, "tid")), 13);
	assert_true(json_real_value(json_object_get(e, "ts")) == 4000.123);
	assert_true(json_real_value(json_object_get(e, "dur")) == 1.0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "nvtx")), "decode_all/decode_step");
	assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "short_name")), "scale_kernel");
	e = find_event(events, "X", "graph_kernel");
	assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "nvtx")),
		"decode_all/decode_step/captured_op");
	json_array_foreach(events, i, s)
		if (json_object_get(s, "name") && !strcmp(json_string_value(json_object_get(s, "name")), "captured_op"))
			fail_msg("the synthetic range was written as an event");
	e = find_event(events, "X", "memcpy HtoD");
	assert_int_equal(json_integer_value(json_object_get(e, "pid")), gpu_pid);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(e, "args"), "bytes")), 4096);

	/* the arrow: starts on the launching thread, ends at the kernel */
	s = find_event(events, "s", "launch");
	f = find_event(events, "f", "launch");
	assert_int_equal(json_integer_value(json_object_get(s, "id")), json_integer_value(json_object_get(f, "id")));
	assert_int_equal(json_integer_value(json_object_get(s, "tid")), 42);
	assert_int_equal(json_integer_value(json_object_get(s, "pid")), 42);
	assert_true(json_real_value(json_object_get(s, "ts")) == 500.0);
	assert_int_equal(json_integer_value(json_object_get(f, "pid")), gpu_pid);
	assert_string_equal(json_string_value(json_object_get(f, "bp")), "e");

	json_array_foreach(events, i, e) {
		const char *nm = json_string_value(json_object_get(e, "name"));
		if (!strcmp(json_string_value(json_object_get(e, "ph")), "M") && !strcmp(nm, "thread_name") &&
		    json_integer_value(json_object_get(e, "pid")) == gpu_pid &&
		    json_integer_value(json_object_get(e, "tid")) == 13) {
			assert_string_equal(json_string_value(json_object_get(json_object_get(e, "args"), "name")), "stream 13");
			saw_stream = 1;
		}
		if (!strcmp(nm, "process_name") && json_integer_value(json_object_get(e, "pid")) == gpu_pid)
			assert_non_null(strstr(json_string_value(json_object_get(json_object_get(e, "args"), "name")),
				"GPU 0: NVIDIA H100 80GB HBM3"));
	}
	assert_true(saw_stream);
	json_decref(j);

	/* without flows: no s/f events */
	o.flows = 0;
	assert_int_equal(lp_perfetto_write(&p, path, &o, &err), 0);
	j = read_gz_json(path);
	json_array_foreach(json_object_get(j, "traceEvents"), i, e)
		assert_string_not_equal(json_string_value(json_object_get(e, "ph")), "s");
	json_decref(j);

	snprintf(path, sizeof(path), "%s/no/such/folder/x.json.gz", dir);
	assert_int_equal(lp_perfetto_write(&p, path, &o, &err), -1);
	assert_non_null(strstr(err.msg, "cannot create"));
	lp_profile_release(&p);
}

static void test_json_string(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "plain", "\"plain\"" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
		{ "\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\"" },
		{ "\n\r\t", "\"\\n\\r\\t\"" },
		{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"" },
		{ "\xff", "\"\\ufffd\"" },
		{ "\xe2\x82", "\"\\ufffd\"" },
		{ "\xc0\xaf", "\"\\ufffd\"" },           /* overlong */
		{ "\xed\xa0\x80", "\"\\ufffd\"" },       /* a surrogate */
		{ "x\xe2\x82y", "\"x\\ufffdy\"" },
		{ "", "\"\"" },
	};
	size_t i;
	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lp_buf b = LP_BUF_INIT;
		lp_perfetto_json_string(&b, cases[i].in);
		assert_string_equal(b.data, cases[i].out);
		lp_buf_release(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_json_string),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
