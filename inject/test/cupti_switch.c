/* cupti_switch.c: the sampled tracer's CUPTI switch against a stand-in libcupti
 * (cupti_lib_fake.c, loaded through LLMPROF_CUPTI_LIB): the tracer's real cupti.c, sample.c and NVTX
 * half, driven by NVTX calls as a program would make them (nvtx_host.h). With
 * LLMPROF_TRACE_SAMPLE=every=4,first=1,pick=first the decode_step units under one decode_all are
 * recorded, recorded, skipped x3, recorded, skipped. The program checks, inside each unit and
 * between them, what the tracer left in "CUPTI":
 *   cupti_switch FAKE_LIB TRACE_DIR keep     (the default) skipped units: still subscribed, every
 *                                            activity kind and cuProfilerStop off, the launch
 *                                            callbacks of APIs called so far off (none here: they
 *                                            stay on)
 *   cupti_switch FAKE_LIB TRACE_DIR detach   (LLMPROF_TRACE_SKIP_DETACH=1) skipped units: no
 *                                            subscriber, no callback, no kind, CUPTI finalized once
 *                                            per skipped unit
 * and, in both, recorded units and the gaps between units with a subscription, every callback of
 * start-up and every kind on (the work between units is recorded);
 *   cupti_switch FAKE_LIB TRACE_DIR burst    (every=4,burst=2,first=1,pick=first,lead=0: recorded x3,
 *                                            skipped x2, recorded x2, skipped) CUPTI detached from
 *                                            the pop of a burst's last unit to the pop of the unit
 *                                            before the next burst, and attached again at the push
 *                                            of a stage that is no unit (prefill)
 *   cupti_switch FAKE_LIB TRACE_DIR lead     (the same with lead=1) the flush thread subscribes one
 *                                            unit ahead of a burst, the kinds stay off until the
 *                                            pop before it (or the push of a prefill);
 *   cupti_switch FAKE_LIB TRACE_DIR parent   (burst's schedule, LLMPROF_TRACE_BURST_REATTACH unset:
 *                                            the default) attached again at decode_all's pop, so the
 *                                            prefill after it finds CUPTI attached; in a second
 *                                            generation of as many units, 4 units before its end
 *                                            (the flush thread, the kinds off until the prefill),
 *                                            and in a third, longer one only in that window.
 *   cupti_switch FAKE_LIB TRACE_DIR delay    (parent's schedule with LLMPROF_TRACE_CUPTI_DELAY=2) no
 *                                            subscriber, callback or kind through the first
 *                                            generation, whatever its schedule says; started at its
 *                                            decode_all's pop, then the second generation as
 *                                            parent's second.
 *   cupti_switch FAKE_LIB TRACE_DIR delay1   (LLMPROF_TRACE_CUPTI_DELAY=1) nothing until the first
 *                                            prefill's push, then the first generation as parent's
 *                                            first.
 *   cupti_switch FAKE_LIB TRACE_DIR delaywu  (LLMPROF_TRACE_CUPTI_DELAY=warmup) nothing through a
 *                                            warmup range holding a whole generation (two nested
 *                                            warmup ranges: the outer one's pop counts), started at
 *                                            its pop, then the next generation as parent's second.
 *   cupti_switch FAKE_LIB TRACE_DIR delaywu0 (=warmup, no warmup range) as delay1.
 *   cupti_switch FAKE_LIB TRACE_DIR warmup   (parent's schedule, LLMPROF_TRACE_WARMUP=detach)
 *                                            attached at start-up, detached
 *                                            (finalized once) at the push of the outer of two
 *                                            nested warmup ranges holding a prefill and a whole
 *                                            generation, nothing attached inside them whatever the
 *                                            schedule says, attached again at the outer pop; then
 *                                            the next generation as parent's second.
 *   cupti_switch FAKE_LIB TRACE_DIR warmupg  (LLMPROF_TRACE_WARMUP unset: the default, graphs) as warmup,
 *                                            but subscribed inside the warm-up with its four
 *                                            resource callbacks alone (no launch callback, no
 *                                            kind), the same subscription kept at the outer pop.
 *   cupti_switch FAKE_LIB TRACE_DIR warmupx  (off, the default warm-up) as warmupg through the
 *                                            warm-up, then every unit recorded, no switch.
 *   cupti_switch FAKE_LIB TRACE_DIR warmupxr (off, LLMPROF_TRACE_WARMUP=record) attached and
 *                                            recording throughout, the warm-up too.
 *   cupti_switch FAKE_LIB TRACE_DIR serve    (burst's schedule, the default reattach) a serving
 *                                            loop: units of 10 ms under no parent, a prefill
 *                                            before units 0, 4 and 8 and a mixed range after
 *                                            unit 8: the second prefill finds CUPTI detached and
 *                                            stays so (not recorded), the flush thread attaches
 *                                            ahead of the third (wanted: the first 2 of a name)
 *                                            at unit 6's pop, which it finds attached; the mixed
 *                                            range finds CUPTI attached for the burst at unit 9
 *                                            and is recorded. The STAGE records say RSR.
 *   cupti_switch FAKE_LIB TRACE_DIR parentlead (every=64,burst=2,first=1,pick=first,lead=0 and
 *                                            LLMPROF_TRACE_REATTACH_LEAD_MS=20) two generations of
 *                                            40 units of 2 ms: the second's foreseen-end attach
 *                                            comes 10 units ahead (20 ms of 2 ms units, at most a
 *                                            quarter of 40), at the pop of unit 29, not 4 ahead;
 *   cupti_switch FAKE_LIB TRACE_DIR planned  (parent's schedule) the first generation's decode_all
 *                                            says 8 units (its payload): it attaches ahead 4 units
 *                                            before that end, as parent's second generation;
 *   cupti_switch FAKE_LIB TRACE_DIR graphw   (trace.sample=auto) a graph of 100 kernel nodes and
 *                                            20 memset nodes made and instantiated, then launched
 *                                            once in each of 4 decode steps of 2 ms: auto counts
 *                                            each launch as 100 (50k/s, above 5k/s) and samples
 *                                            from the third step (decided at the second one's pop);
 *   cupti_switch FAKE_LIB TRACE_DIR graphw0  the same launches of a graph made before CUPTI saw it
 *                                            (no node callback): 1 each (500/s), stays exact;
 *   cupti_switch FAKE_LIB TRACE_DIR graphws  graphw's launches under a decode_all that plans 4 steps
 *                                            (its payload): a generation foreseen to launch 4 times,
 *                                            under auto's gen= (2,000), stays exact, every launch seen;
 *   cupti_switch FAKE_LIB TRACE_DIR graphwg  the same with trace.sample=auto,gen=5: still exact (a
 *                                            graph launch counts once there, not as its 100 kernels);
 *   cupti_switch FAKE_LIB TRACE_DIR graphwg4 the same with gen=4: sampled (4 launches foreseen).
 * (burst and lead run with LLMPROF_TRACE_BURST_REATTACH=push: attached again at the prefill's push.)
 * Exit 0 when every check holds, 1 otherwise (each failure on stderr). */
#include "inject.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>
#include <nvtx3/nvToolsExt.h>

#include "nvtx_host.h"

LP_INJ_EXPORT int InitializeInjection(void);

typedef nvtxDomainHandle_t (*domain_create_fn)(const char *);
typedef int (*domain_push_fn)(nvtxDomainHandle_t, const nvtxEventAttributes_t *);
typedef int (*domain_pop_fn)(nvtxDomainHandle_t);
typedef void (*state_fn)(int *, int *, int *, int *, int *);  /* lp_fake_cupti_state */

/* start-up enables the fake's three launch APIs (cuLaunchKernel, cuMemcpyHtoD_v2, cuGraphLaunch),
 * cuProfilerStop and four resource callbacks; kernel, memcpy, memset and overhead activity */
enum { ALL_CB = 8, ALL_KINDS = 4 };

static long unit_sleep_ns;   /* each unit's time inside (generation()) */
static double unit_push_ms[64]; /* generation(): when each unit was pushed (the last generation's) */
static domain_push_fn dpush;
static domain_pop_fn dpop;
static nvtxDomainHandle_t llm;
static state_fn fake_state;
static int failures;

/* a range of domain LLM; `payload` > 0: with that unsigned 64-bit payload */
static void push_payload(const char *name, uint64_t payload)
{
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = name;
	if (payload) {
		a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
		a.payload.ullValue = payload;
	}
	dpush(llm, &a);
}

static void push(const char *name)
{
	push_payload(name, 0);
}

/* what "CUPTI" holds now against what `where` expects: subscribers, callbacks, activity kinds,
 * detaches so far */
static void expect(const char *where, int subscribers, int n_callbacks, int kinds, int finalized)
{
	int s, c, k, n, f;
	fake_state(&s, &c, &k, &n, &f);
	printf("%-20s subscribers %d callbacks %d kinds %d finalized %d (subscriptions so far %d)\n", where, s, c, k,
		f, n);
	if (s != subscribers || c != n_callbacks || k != kinds || f != finalized) {
		fprintf(stderr, "cupti_switch: %s: subscribers %d callbacks %d kinds %d finalized %d, expected %d %d %d %d\n",
			where, s, c, k, f, subscribers, n_callbacks, kinds, finalized);
		failures++;
	}
}

/* waits up to 5 s for the flush thread's attach ahead (a subscriber) */
static void wait_subscribed(void)
{
	struct timespec ts = { 0, 1000000 };
	int s, c, k, n, f, i;
	for (i = 0; i < 5000; i++) {
		fake_state(&s, &c, &k, &n, &f);
		if (s)
			return;
		nanosleep(&ts, NULL);
	}
}

/* expect() for a state letter: A attached and recording, I attached with the kinds off, D
 * detached, G detached but subscribed with the four resource callbacks (trace.warmup=graphs) */
static void expect_as(const char *where, char c, int detaches)
{
	if (c == '?') /* either (parentlead: a unit at the edge of the measured lead) */
		return;
	expect(where, c != 'D', c == 'G' ? 4 : c != 'D' ? ALL_CB : 0, c == 'A' ? ALL_KINDS : 0, detaches);
}

/* one generation (a decode_all of `n` decode_step units, `rec` the recorded ones) against what
 * "CUPTI" should hold inside each unit (`during`) and after its pop (`after`), letters as
 * expect_as's (I: the flush thread's attach ahead, waited for). A burst's last recorded unit
 * detaches at its pop. */
static void generation_planned(int gen, const int *rec, int n, uint64_t planned, const char *during,
	const char *after, int *detaches)
{
	int i;
	push_payload("decode_all", planned);
	for (i = 0; i < n; i++) {
		char where[64];
		char d = during[i], a = after[i];
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		if (i < 64)
			unit_push_ms[i] = (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
		push("decode_step");
		snprintf(where, sizeof(where), "gen %d unit %d", gen, i);
		expect_as(where, d, *detaches);
		if (unit_sleep_ns) {
			struct timespec ts = { 0, unit_sleep_ns };
			nanosleep(&ts, NULL);
		}
		dpop(llm);
		if (rec[i] && !(i + 1 < n && rec[i + 1]))
			(*detaches)++;
		snprintf(where, sizeof(where), "gen %d after unit %d", gen, i);
		if (a == 'I')
			wait_subscribed();
		expect_as(where, a, *detaches);
	}
	dpop(llm);
}

static void generation(int gen, const int *rec, int n, const char *during, const char *after, int *detaches)
{
	generation_planned(gen, rec, n, 0, during, after, detaches);
}

/* A prefill range, which finds CUPTI attached with everything on (bursts). */
static void prefill(const char *where, int detaches)
{
	push("prefill");
	expect(where, 1, ALL_CB, ALL_KINDS, detaches);
	dpop(llm);
}

/* A second generation of as many units as the first, `rec` recorded: the flush thread attaches 4
 * units before its foreseen end (the pops of units 3 and 6, whose next units are skipped), the
 * kinds stay off until the next burst or the prefill; attached with everything on after its
 * decode_all's pop. */
static void second_generation(const int *rec, int *detaches)
{
	generation(2, rec, 8, "AAADIAAI", "AADIAAII", detaches);
	expect("gen 2 after decode_all", 1, ALL_CB, ALL_KINDS, *detaches);
}

/* Two nested warmup ranges holding a prefill and a whole generation: nothing of CUPTI's inside them
 * whatever the schedule says (finalized `fin` times: 0, the delay, never started; 1, the warm-up's
 * detach at the outer push) but, with `graphs`, a subscription with the four resource callbacks;
 * attached at the outer pop; then a prefill. */
static void warmup_ranges(int fin, int graphs)
{
	static const int none[8];
	const char *held = graphs ? "GGGGGGGG" : "DDDDDDDD";   /* one letter a unit */
	int detaches = fin;
	push("warmup");
	expect_as("warmup's push", held[0], fin);
	push("prefill");
	expect_as("warm-up prefill", held[0], fin);
	dpop(llm);
	push("warmup");
	generation(1, none, 8, held, held, &detaches);
	dpop(llm);
	expect_as("inner warmup's pop", held[0], fin);
	dpop(llm);
	expect("after warmup", 1, ALL_CB, ALL_KINDS, fin);
	prefill("prefill", fin);
}

/* warmup_ranges, then the next generation as the parent test's second. */
static int warmup_then_second(const int *rec, int fin, int graphs)
{
	int detaches = fin;
	warmup_ranges(fin, graphs);
	second_generation(rec, &detaches);
	return failures ? 1 : 0;
}

/* warmupx, warmupxr: exact tracing (off) with the default warm-up, graphs (detached inside the
 * warmup ranges, the graph node callbacks kept, attached at the outer pop; run 39: kernels loaded
 * with CUPTI attached ran slower for the whole process), or with record (attached throughout);
 * then a generation with every unit and the work after it recorded, no switch. */
static int warmup_exact(int record)
{
	static const int none[8];
	int fin = !record, detaches = fin;
	expect("start-up", 1, ALL_CB, ALL_KINDS, 0);
	if (record) {
		push("warmup");
		generation(1, none, 8, "AAAAAAAA", "AAAAAAAA", &detaches);
		dpop(llm);
		expect("after warmup", 1, ALL_CB, ALL_KINDS, 0);
		prefill("prefill", 0);
	} else {
		warmup_ranges(fin, 1);
	}
	generation(2, none, 8, "AAAAAAAA", "AAAAAAAA", &detaches);
	expect("after decode_all", 1, ALL_CB, ALL_KINDS, fin);
	return failures ? 1 : 0;
}

/* The units of the attach ahead for a lead of `lead_ms` over units `period_ms` apart (sample.c
 * reattach_units: at least 4, at most a quarter of 40). */
static int lead_units(double lead_ms, double period_ms)
{
	int k = (int)(lead_ms / period_ms);
	k += k * period_ms < lead_ms;
	return k < 4 ? 4 : k > 10 ? 10 : k;
}

/* parentlead: two generations of 40 units of 2 ms (letters as expect_as's); the second attaches
 * ahead at unit 29's pop with the lead of 20 ms (10 units), else it would at unit 35's. On a busy
 * machine the units take longer than 2 ms: the tracer's period is the first generation's, so the
 * window follows the measured one (its edge, within 5%, may go either way). */
static int parent_lead(void)
{
	int rec[40] = { 1, 1, 1 }, detaches = 0, i, k_lo, k_hi;
	char during[41], after1[41], after2[41];
	double period;
	unit_sleep_ns = 2000000;
	for (i = 0; i < 40; i++) {
		during[i] = i < 3 ? 'A' : 'D';
		after1[i] = i < 2 ? 'A' : 'D';
	}
	during[40] = after1[40] = after2[40] = '\0';
	expect("start-up", 1, ALL_CB, ALL_KINDS, 0);
	generation(1, rec, 40, during, after1, &detaches);
	expect("gen 1 after decode_all", 1, ALL_CB, ALL_KINDS, detaches);
	period = (unit_push_ms[39] - unit_push_ms[0]) / 39;
	k_lo = lead_units(20, period * 1.05);
	k_hi = lead_units(20, period * 0.95);
	printf("parentlead: units %.3f ms apart, the attach %d-%d units ahead\n", period, k_lo, k_hi);
	if (period < 3.5 && k_lo < 6) { /* the lead, not the 4 units without it */
		fprintf(stderr, "cupti_switch: units %.3f ms apart gave %d units ahead\n", period, k_lo);
		failures++;
	}
	for (i = 0; i < 40; i++) {
		/* after unit i: attached ahead once i + 1 + k >= 40 */
		after2[i] = i < 2 ? 'A' : i + 1 + k_hi < 40 ? 'D' : i + 1 + k_lo < 40 ? '?' : 'I';
		during[i] = i < 3 ? 'A' : after2[i - 1] == 'A' ? 'D' : after2[i - 1];
	}
	prefill("prefill", detaches);
	generation(2, rec, 40, during, after2, &detaches);
	return failures ? 1 : 0;
}

typedef int (*fire_fn)(CUpti_CallbackDomain, CUpti_CallbackId, const void *);  /* lp_fake_cupti_fire */

/* graphw / graphw0 (`known`: the graph's nodes and instantiation seen by CUPTI's callbacks);
 * graphws / graphwg: decode_all's payload `planned`, and whether auto is to sample */
static int graph_weight(void *fake, int known, uint64_t planned, int sample)
{
	fire_fn fire = (fire_fn)(uintptr_t)dlsym(fake, "lp_fake_cupti_fire");
	CUpti_GraphData gd;
	CUpti_ResourceData rd;
	CUpti_CallbackData cb;
	struct { void *exec, *stream; } params = { (void *)(uintptr_t)0x5000, NULL };  /* cuGraphLaunch_params */
	struct timespec ts = { 0, 2000000 };
	int i, called = 0, launched = 0;
	if (!fire) {
		fprintf(stderr, "cupti_switch: the stand-in has no lp_fake_cupti_fire\n");
		return 1;
	}
	memset(&gd, 0, sizeof(gd));
	memset(&rd, 0, sizeof(rd));
	memset(&cb, 0, sizeof(cb));
	rd.resourceDescriptor = &gd;
	gd.graph = (CUgraph)(uintptr_t)7;
	for (i = 0; known && i < 120; i++) {
		gd.node = (CUgraphNode)(uintptr_t)(1000 + i);
		gd.nodeType = i < 100 ? CU_GRAPH_NODE_TYPE_KERNEL : CU_GRAPH_NODE_TYPE_MEMSET;
		called += fire(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED, &rd);
	}
	gd.graphExec = (CUgraphExec)params.exec;
	if (known)
		called += fire(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, &rd);
	if (called != (known ? 121 : 0)) {
		fprintf(stderr, "cupti_switch: %d resource callbacks reached the tracer, expected %d\n", called, known ? 121 : 0);
		failures++;
	}
	cb.callbackSite = CUPTI_API_ENTER;
	cb.functionParams = &params;
	push_payload("decode_all", planned);
	for (i = 0; i < 4; i++) {
		push("decode_step");
		cb.correlationId = (uint32_t)i + 1;
		launched += fire(CUPTI_CB_DOMAIN_DRIVER_API, 13, &cb);
		nanosleep(&ts, NULL);
		dpop(llm);
	}
	dpop(llm);
	/* sampled: decided at the pop of the second step (the next is past first=2), detached after it */
	if (launched != (sample ? 2 : 4)) {
		fprintf(stderr, "cupti_switch: the graph launch callback reached the tracer %d times, expected %d\n",
			launched, sample ? 2 : 4);
		failures++;
	}
	printf("graph launches: sampled %d (expected %d)\n", lp_inj_sample_on(), sample);
	if (lp_inj_sample_on() != sample) {
		fprintf(stderr, "cupti_switch: auto %s, expected %s\n", lp_inj_sample_on() ? "sampled" : "stayed exact",
			!known ? "exact (1 a launch)" : sample ? "sampled (100 kernels a launch)"
			: "exact (a generation foreseen to launch 4 times, under gen=)");
		failures++;
	}
	return failures ? 1 : 0;
}

/* The STAGE records of the prefill ranges in TRACE_DIR's trace (written out first): how many, and
 * how many say their push attached CUPTI before the GPU mark (LP_TRACE_STAGE_F_PUSH_ATTACHED). */
static int prefill_stages(const char *dir, int *attached, char *samples)
{
	static char data[1 << 22];
	char path[4096] = "", mine[64];
	struct dirent *de;
	DIR *d;
	FILE *f;
	size_t len, off;
	uint32_t prefill_sid = 0;
	int n = 0;
	*attached = 0;
	lp_inj_request_flush(2000);
	if (!(d = opendir(dir)))
		return -1;
	snprintf(mine, sizeof(mine), ".%d%s", (int)getpid(), LP_TRACE_FILE_SUFFIX); /* <host>.<pid>.lptrace */
	while ((de = readdir(d)) != NULL) {
		size_t nl = strlen(de->d_name), ml = strlen(mine);
		if (nl > ml && !strcmp(de->d_name + nl - ml, mine))
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
	}
	closedir(d);
	if (!*path || !(f = fopen(path, "rb")))
		return -1;
	len = fread(data, 1, sizeof(data), f);
	fclose(f);
	for (off = sizeof(struct lp_trace_preamble); off + sizeof(struct lp_trace_rec_header) <= len;) {
		struct lp_trace_rec_header h;
		const char *p;
		memcpy(&h, data + off, sizeof(h));
		p = data + off + sizeof(h);
		if (off + sizeof(h) + h.size > len)
			break;
		if (h.type == LP_TREC_STRING && h.size >= sizeof(struct lp_trace_string) + 7) {
			struct lp_trace_string str;
			memcpy(&str, p, sizeof(str));
			if (str.len == 7 && !memcmp(p + sizeof(str), "prefill", 7))
				prefill_sid = str.sid;
		} else if (h.type == LP_TREC_STAGE && h.size >= sizeof(struct lp_trace_stage)) {
			struct lp_trace_stage st;
			memcpy(&st, p, sizeof(st));
			if (prefill_sid && st.name_sid == prefill_sid) {
				if (samples && n < 15) {
					samples[n] = st.sample == LP_TRACE_STAGE_RECORDED ? 'R' : st.sample == LP_TRACE_STAGE_SKIPPED
						? 'S' : '-';
					samples[n + 1] = '\0';
				}
				n++;
				*attached += (st.flags & LP_TRACE_STAGE_F_PUSH_ATTACHED) != 0;
			}
		}
		off += sizeof(h) + h.size;
	}
	return n;
}

/* The traces earlier runs left in TRACE_DIR removed (a build tree keeps the folder). */
static void clear_traces(const char *dir)
{
	char path[4096];
	struct dirent *de;
	DIR *d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL)
		if (strstr(de->d_name, LP_TRACE_FILE_SUFFIX)) {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
	closedir(d);
}

/* what the trace says of the prefills' pushes: `n` prefills, `attached` of them attached CUPTI */
static void expect_prefills(const char *dir, int n, int attached)
{
	int a, got = prefill_stages(dir, &a, NULL);
	printf("prefills %d, %d of them attached CUPTI at their push\n", got, a);
	if (got != n || a != attached) {
		fprintf(stderr, "cupti_switch: %d prefill STAGE records, %d with push_attached; expected %d, %d\n", got,
			a, n, attached);
		failures++;
	}
}

/* serve: a serving loop's units under no parent with prefills between them (burst's schedule:
 * units 0-2, 5-6, 9-10 recorded; the default reattach, stage instances sampled on their own) */
static int serve_loop(const char *dir)
{
	static const int rec[] = { 1, 1, 1, 0, 0, 1, 1, 0, 0 };
	static const char during[] = "AAADDAAIA", after[] = "AADDAAIIA";
	int detaches = 0, i, a;
	char samples[16] = "";
	unit_sleep_ns = 10000000; /* the lead: 30 ms of 10 ms units, 3 (at least 2) */
	expect("start-up", 1, ALL_CB, ALL_KINDS, 0);
	for (i = 0; i < 9; i++) {
		char where[64];
		if (i % 4 == 0) {
			/* the prefills: recorded (attached from the start); detached after a burst, so not
			 * recorded and left detached; attached ahead for (its kinds go on at the push) */
			push("prefill");
			snprintf(where, sizeof(where), "prefill before unit %d", i);
			expect_as(where, i == 4 ? 'D' : 'A', detaches);
			dpop(llm);
		}
		push("decode_step");
		if (i == 8)
			detaches++; /* a skipped unit's push after the recorded prefill: detached after its mark */
		snprintf(where, sizeof(where), "unit %d", i);
		expect_as(where, i == 8 ? 'D' : during[i], detaches);
		{
			struct timespec ts = { 0, unit_sleep_ns };
			nanosleep(&ts, NULL);
		}
		dpop(llm);
		if (rec[i] && !rec[i + 1])
			detaches++;
		if (after[i] == 'I')
			wait_subscribed();
		snprintf(where, sizeof(where), "after unit %d", i);
		expect_as(where, after[i], detaches);
	}
	/* a mixed forward after unit 8 (whose pop attached for the burst at 9): recorded */
	push("mixed");
	expect_as("mixed after unit 8", 'A', detaches);
	dpop(llm);
	if (prefill_stages(dir, &a, samples) != 3 || strcmp(samples, "RSR") || a) {
		fprintf(stderr, "cupti_switch: prefills %s (%d paused at their push), expected RSR, none paused\n",
			samples, a);
		failures++;
	}
	printf("prefills %s\n", samples);
	return failures ? 1 : 0;
}

/* bursts: every=4,burst=2,first=1,pick=first (lead=1 with `lead`) */
static int bursts(int lead, int parent, const char *dir)
{
	/* unit 8 would be block 1's position 3, skipped; units 5 and 9 (block 2's position 0) start
	 * bursts, so with lead the flush thread subscribes at the pops of units 3 and 7 */
	static const int rec[] = { 1, 1, 1, 0, 0, 1, 1, 0 };
	/* a third generation, twice as long (recorded 0-2, 5-6, 9-10, 13-14) */
	static const int rec3[] = { 1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0 };
	static const int none[8];
	int detaches = 0;
	if (parent == 8 || parent == 9) {
		/* trace.warmup=detach: detached inside a warmup range (held), attached at its pop; 9:
		 * the default, graphs: the graph node callbacks kept inside it */
		expect("start-up", 1, ALL_CB, ALL_KINDS, 0);
		return warmup_then_second(rec, 1, parent == 9);
	}
	if (parent == 6) {
		/* LLMPROF_TRACE_CUPTI_DELAY=warmup: not started until the outer warmup range's pop */
		expect("start-up", 0, 0, 0, 0);
		return warmup_then_second(rec, 0, 0);
	}
	if (parent == 4) {
		/* LLMPROF_TRACE_CUPTI_DELAY=1 (and =warmup without a warmup range): started at the first
		 * stage range's push */
		expect("start-up", 0, 0, 0, 0);
		prefill("prefill", 0);
		generation(1, rec, 8, "AAADDAAD", "AADDAADD", &detaches);
		expect("after decode_all", 1, ALL_CB, ALL_KINDS, detaches);
		return failures ? 1 : 0;
	}
	if (parent == 2) {
		/* LLMPROF_TRACE_CUPTI_DELAY=2: nothing of CUPTI's in the first generation (its schedule's
		 * switches are no-ops), started at its decode_all's pop; the second generation then runs
		 * as the parent test's second (the attach 4 units before its foreseen end) */
		expect("start-up", 0, 0, 0, 0);
		generation(1, none, 8, "DDDDDDDD", "DDDDDDDD", &detaches);
		expect("after decode_all", 1, ALL_CB, ALL_KINDS, 0);
		prefill("prefill", 0);
		second_generation(rec, &detaches);
		return failures ? 1 : 0;
	}
	expect("start-up", 1, ALL_CB, ALL_KINDS, 0);
	if (parent == 10) {
		/* planned: the first generation's decode_all says 8 units (its payload), so it attaches
		 * ahead 4 units before that end as the parent test's second does, though no generation
		 * came before it */
		generation_planned(1, rec, 8, 8, "AAADIAAI", "AADIAAII", &detaches);
		expect("after decode_all", 1, ALL_CB, ALL_KINDS, detaches);
		prefill("prefill", detaches);
		return failures ? 1 : 0;
	}
	generation(1, rec, 8, lead ? "AAADIAAD" : "AAADDAAD", lead ? "AADIAADI" : "AADDAADD", &detaches);
	if (parent) /* attached again at decode_all's pop (LLMPROF_TRACE_BURST_REATTACH's default) */
		expect("after decode_all", 1, ALL_CB, ALL_KINDS, detaches);
	else
		expect("after decode_all", lead, lead ? ALL_CB : 0, 0, detaches);
	prefill("prefill", detaches);
	if (!parent) {
		/* attached at the prefill's push, before its GPU mark: the STAGE record says so */
		expect_prefills(dir, 1, 1);
		return failures ? 1 : 0;
	}
	second_generation(rec, &detaches);
	prefill("gen 2 prefill", detaches);
	/* twice as long: the attach ahead only inside the window before the foreseen end (the pops of
	 * units 3 and 6); past it (unit 10) a burst detaches as usual */
	generation(3, rec3, 16, "AAADIAAIIAADDAAD", "AADIAAIIAADDAADD", &detaches);
	expect("gen 3 after decode_all", 1, ALL_CB, ALL_KINDS, detaches);
	/* attached at decode_all's pop or ahead of it: no prefill's push attached */
	expect_prefills(dir, 2, 0);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const int recorded[] = { 1, 1, 0, 0, 0, 1, 0 };
	int detach, skipped = 0, i;
	void *h;
	int burst, graphw, plead, exact, serve;
	if (argc != 4 || (strcmp(argv[3], "keep") && strcmp(argv[3], "detach") && strcmp(argv[3], "burst") &&
			  strcmp(argv[3], "lead") && strcmp(argv[3], "parent") && strcmp(argv[3], "delay") &&
			  strcmp(argv[3], "delay1") && strcmp(argv[3], "delaywu") && strcmp(argv[3], "delaywu0") &&
			  strcmp(argv[3], "warmup") && strcmp(argv[3], "warmupg") && strcmp(argv[3], "graphw") &&
			  strcmp(argv[3], "graphw0") && strcmp(argv[3], "parentlead") && strcmp(argv[3], "planned") &&
			  strcmp(argv[3], "graphws") && strcmp(argv[3], "graphwg") && strcmp(argv[3], "graphwg4") &&
			  strcmp(argv[3], "warmupx") && strcmp(argv[3], "warmupxr") && strcmp(argv[3], "serve"))) {
		fprintf(stderr, "usage: cupti_switch FAKE_LIBCUPTI TRACE_DIR "
			"keep|detach|burst|lead|parent|delay|delay1|delaywu|delaywu0|warmup|warmupg|graphw|graphw0|parentlead|"
			"planned|graphws|graphwg|graphwg4|warmupx|warmupxr|serve\n");
		return 2;
	}
	exact = !strcmp(argv[3], "warmupx") ? 1 : !strcmp(argv[3], "warmupxr") ? 2 : 0;
	plead = !strcmp(argv[3], "parentlead");
	if (plead)
		setenv("LLMPROF_TRACE_REATTACH_LEAD_MS", "20", 1);
	else
		unsetenv("LLMPROF_TRACE_REATTACH_LEAD_MS");
	graphw = !strcmp(argv[3], "graphw") ? 1 : !strcmp(argv[3], "graphw0") ? 2 : !strcmp(argv[3], "graphws") ? 3
		: !strcmp(argv[3], "graphwg") ? 4 : !strcmp(argv[3], "graphwg4") ? 5 : 0;
	detach = !strcmp(argv[3], "detach");
	serve = !strcmp(argv[3], "serve");
	burst = !strcmp(argv[3], "burst") ? 1 : !strcmp(argv[3], "lead") ? 2 : !strcmp(argv[3], "parent") ? 3
		: !strcmp(argv[3], "delay") ? 4 : !strcmp(argv[3], "delay1") ? 5 : !strcmp(argv[3], "delaywu") ? 6
		: !strcmp(argv[3], "delaywu0") ? 7 : !strcmp(argv[3], "warmup") ? 8 : !strcmp(argv[3], "warmupg") ? 9
		: !strcmp(argv[3], "planned") ? 10 : 0;
	if (burst == 8)
		setenv("LLMPROF_TRACE_WARMUP", "detach", 1);
	else if (exact == 2)
		setenv("LLMPROF_TRACE_WARMUP", "record", 1);
	else
		unsetenv("LLMPROF_TRACE_WARMUP"); /* the default: graphs */
	if (burst >= 4 && burst <= 7)
		setenv("LLMPROF_TRACE_CUPTI_DELAY", burst == 4 ? "2" : burst == 5 ? "1" : "warmup", 1);
	else
		unsetenv("LLMPROF_TRACE_CUPTI_DELAY");
	if (burst >= 3 || plead || serve)
		unsetenv("LLMPROF_TRACE_BURST_REATTACH"); /* the default: at the parent's foreseen end and pop */
	else
		setenv("LLMPROF_TRACE_BURST_REATTACH", "push", 1);
	setenv("LLMPROF_CUPTI_LIB", argv[1], 1);
	clear_traces(argv[2]);
	setenv("LLMPROF_TRACE_DIR", argv[2], 1);
	setenv("LLMPROF_TRACE_SAMPLE", exact ? "off" : graphw == 4 ? "auto,gen=5" : graphw == 5 ? "auto,gen=4" : graphw ? "auto" : plead ? "every=64,burst=2,first=1,pick=first,lead=0" : burst == 2 ? "every=4,burst=2,first=1,pick=first,lead=1"
		: burst || serve ? "every=4,burst=2,first=1,pick=first,lead=0" : "every=4,first=1,pick=first", 1);
	if (detach)
		setenv("LLMPROF_TRACE_SKIP_DETACH", "1", 1);
	else
		unsetenv("LLMPROF_TRACE_SKIP_DETACH"); /* the default */
	if (!InitializeInjection() || !nvtx_host_init()) {
		fprintf(stderr, "cupti_switch: the tracer did not start\n");
		return 1;
	}
	/* delay: the tracer has not loaded the stand-in yet (it will get this handle) */
	h = dlopen(argv[1], RTLD_NOW | (burst >= 4 && burst <= 7 ? 0 : RTLD_NOLOAD));
	fake_state = h ? (state_fn)(uintptr_t)dlsym(h, "lp_fake_cupti_state") : NULL;
	if (!fake_state || lp_inj_cupti_active() == (burst >= 4 && burst <= 7)) { /* delay: not started yet */
		fprintf(stderr, "cupti_switch: the stand-in libcupti was not used (%s)\n", dlerror());
		return 1;
	}
	llm = ((domain_create_fn)(uintptr_t)core2[NVTX_CBID_CORE2_DomainCreateA])("LLM");
	dpush = (domain_push_fn)(uintptr_t)core2[NVTX_CBID_CORE2_DomainRangePushEx];
	dpop = (domain_pop_fn)(uintptr_t)core2[NVTX_CBID_CORE2_DomainRangePop];
	if (exact)
		return warmup_exact(exact == 2);
	if (graphw)
		return graph_weight(h, graphw != 2, graphw >= 3 ? 4 : 0, graphw == 1 || graphw == 5);
	if (plead)
		return parent_lead();
	if (serve)
		return serve_loop(argv[2]);
	if (burst)
		return bursts(burst == 2, burst >= 8 ? burst : burst == 6 ? 6 : burst == 5 || burst == 7 ? 4 : burst == 4 ? 2
			: burst == 3, argv[2]);
	expect("start-up", 1, ALL_CB, ALL_KINDS, 0);
	push("decode_all");
	for (i = 0; i < (int)(sizeof(recorded) / sizeof(recorded[0])); i++) {
		char where[64];
		push("decode_step");
		skipped += !recorded[i];
		snprintf(where, sizeof(where), "unit %d (%s)", i, recorded[i] ? "recorded" : "skipped");
		if (recorded[i])
			expect(where, 1, ALL_CB, ALL_KINDS, detach ? skipped : 0);
		else if (detach)
			expect(where, 0, 0, 0, skipped);
		else /* cuProfilerStop off; launch APIs never called (all, here) stay on */
			expect(where, 1, ALL_CB - 1, 0, 0);
		dpop(llm);
		snprintf(where, sizeof(where), "after unit %d", i);
		expect(where, 1, ALL_CB, ALL_KINDS, detach ? skipped : 0); /* the work between units is recorded */
	}
	dpop(llm);
	return failures ? 1 : 0;
}
