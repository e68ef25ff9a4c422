/* perfetto.c: report stage, profile -> Chrome trace-event JSON (gzip) for ui.perfetto.dev.
 * Events are written in one pass per kind (processes, ranges, GPU work) through a 64 KiB
 * buffer that is compressed and emptied as it fills. See perfetto.h for the layout. */
#include "report/perfetto.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/vec.h"

#define LP_PERFETTO_CHUNK (64u << 10)
#define LP_GPU_PID_BASE 0x40000000u

struct jw {
	gzFile gz;
	struct lp_buf b;
	int failed;
	int n_events;
	uint64_t t0;
};

static void jw_flush(struct jw *w)
{
	if (w->failed || !w->b.len)
		return;
	if (gzwrite(w->gz, w->b.data, (unsigned)w->b.len) != (int)w->b.len)
		w->failed = 1;
	lp_buf_reset(&w->b);
}

static void jw_maybe_flush(struct jw *w)
{
	if (w->b.len >= LP_PERFETTO_CHUNK)
		jw_flush(w);
	if (w->b.oom)
		w->failed = 1;
}

int lp_perfetto_json_string(struct lp_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	lp_buf_addc(b, '"');
	while (*p) {
		unsigned char c = *p;
		size_t n = 0, k;
		uint32_t cp;
		if (c < 0x80) {
			switch (c) {
			case '"': lp_buf_adds(b, "\\\""); break;
			case '\\': lp_buf_adds(b, "\\\\"); break;
			case '\n': lp_buf_adds(b, "\\n"); break;
			case '\r': lp_buf_adds(b, "\\r"); break;
			case '\t': lp_buf_adds(b, "\\t"); break;
			default:
				if (c < 0x20)
					lp_buf_addf(b, "\\u%04x", c);
				else
					lp_buf_addc(b, (char)c);
			}
			p++;
			continue;
		}
		/* a multi-byte UTF-8 sequence: copied when well formed, else U+FFFD */
		if ((c & 0xE0) == 0xC0) {
			n = 2;
			cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			n = 3;
			cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			n = 4;
			cp = c & 0x07;
		} else {
			cp = 0;
		}
		for (k = 1; k < n; k++) {
			if ((p[k] & 0xC0) != 0x80)
				break;
			cp = (cp << 6) | (p[k] & 0x3F);
		}
		if (n == 0 || k < n || (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
		    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
			lp_buf_adds(b, "\\ufffd");
			p += k ? k : 1;
			continue;
		}
		lp_buf_add(b, p, n);
		p += n;
	}
	return lp_buf_addc(b, '"');
}

/* Microseconds since t0 with exact nanosecond decimals. */
static void add_us(struct lp_buf *b, uint64_t ns, uint64_t t0)
{
	uint64_t d = ns > t0 ? ns - t0 : 0;
	lp_buf_addf(b, "%" PRIu64 ".%03" PRIu64, d / 1000, d % 1000);
}

static void add_dur(struct lp_buf *b, uint64_t start, uint64_t end)
{
	uint64_t d = end > start ? end - start : 0;
	lp_buf_addf(b, "%" PRIu64 ".%03" PRIu64, d / 1000, d % 1000);
}

/* Starts an event object: `,\n{` and the common fields. */
static void ev_begin(struct jw *w, const char *ph, uint32_t pid, uint32_t tid)
{
	lp_buf_adds(&w->b, w->n_events++ ? ",\n{" : "\n{");
	lp_buf_addf(&w->b, "\"ph\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32, ph, pid, tid);
}

static void ev_name(struct jw *w, const char *key, const char *value)
{
	lp_buf_addf(&w->b, ",\"%s\":", key);
	lp_perfetto_json_string(&w->b, value);
}

static void meta(struct jw *w, const char *what, uint32_t pid, uint32_t tid, const char *key, const char *value)
{
	ev_begin(w, "M", pid, tid);
	ev_name(w, "name", what);
	lp_buf_addf(&w->b, ",\"args\":{\"%s\":", key);
	lp_perfetto_json_string(&w->b, value);
	lp_buf_adds(&w->b, "}}");
}

static void meta_int(struct jw *w, const char *what, uint32_t pid, uint32_t tid, long long v)
{
	ev_begin(w, "M", pid, tid);
	ev_name(w, "name", what);
	lp_buf_addf(&w->b, ",\"args\":{\"sort_index\":%lld}}", v);
}

static size_t process_index(const struct lp_profile *p, uint32_t pid)
{
	size_t i;
	for (i = 0; i < p->n_processes; i++)
		if (p->processes[i].pid == pid)
			return i;
	return 0;
}

static uint32_t gpu_pid(size_t proc, int32_t device)
{
	return LP_GPU_PID_BASE + (uint32_t)(proc << 8) + ((uint32_t)device & 0xFFu);
}

/* Several ranks (lp_process.rank): every rank's CPU track, then its GPUs, in rank order, named
 * "rank R"; other processes (launchers) after them. */
static int ranked(const struct lp_profile *p)
{
	size_t i;
	for (i = 0; i < p->n_processes; i++)
		if (p->processes[i].rank >= 0)
			return 1;
	return 0;
}

static long long sort_index(const struct lp_profile *p, size_t proc, int gpu, int32_t device)
{
	const struct lp_process *pr = proc < p->n_processes ? &p->processes[proc] : NULL;
	long long base;
	if (!ranked(p))
		return gpu ? 1000 + (long long)proc * 64 + device : (long long)proc;
	base = pr && pr->rank >= 0 ? (long long)pr->rank * 256 : (1LL << 30) + (long long)proc * 256;
	return gpu ? base + 1 + (device & 0xFF) : base;
}

struct track {
	uint32_t pid, stream;
};

static void write_header(struct jw *w, const struct lp_profile *p)
{
	size_t i;
	lp_buf_adds(&w->b, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"llmprof\",\"source\":");
	lp_perfetto_json_string(&w->b, p->source);
	lp_buf_addf(&w->b, ",\"t0_ns\":%" PRIu64 ",\"warnings\":%" PRIu64 ",\"devices\":[", w->t0, p->warnings);
	for (i = 0; i < p->n_devices; i++) {
		const struct lp_device *d = &p->devices[i];
		lp_buf_addf(&w->b, "%s{\"id\":%d,\"name\":", i ? "," : "", (int)d->id);
		lp_perfetto_json_string(&w->b, d->name);
		lp_buf_adds(&w->b, ",\"uuid\":");
		lp_perfetto_json_string(&w->b, d->uuid);
		lp_buf_addf(&w->b, ",\"sm_count\":%d,\"cc\":\"%d.%d\",\"sm_clock_mhz\":%u,\"mem_clock_mhz\":%u,"
			"\"mem_bus_width_bits\":%u,\"mem_bytes\":%" PRIu64 ",\"l2_bytes\":%u}",
			(int)d->sm_count, (int)d->cc_major, (int)d->cc_minor, d->sm_clock_mhz, d->mem_clock_mhz,
			d->mem_bus_width_bits, d->mem_bytes, d->l2_bytes);
	}
	lp_buf_adds(&w->b, "],\"processes\":[");
	for (i = 0; i < p->n_processes; i++) {
		const struct lp_process *pr = &p->processes[i];
		lp_buf_addf(&w->b, "%s{\"pid\":%" PRIu32 ",\"host\":", i ? "," : "", pr->pid);
		lp_perfetto_json_string(&w->b, pr->host);
		lp_buf_adds(&w->b, ",\"name\":");
		lp_perfetto_json_string(&w->b, pr->name);
		lp_buf_adds(&w->b, ",\"cupti_status\":");
		lp_perfetto_json_string(&w->b, pr->cupti_status);
		lp_buf_addf(&w->b, ",\"dropped_records\":%" PRIu64 ",\"overhead_ns\":%" PRIu64 ",\"ppid\":%" PRIu32,
			pr->dropped_records, pr->overhead_ns, pr->ppid);
		if (pr->rank >= 0) {
			lp_buf_addf(&w->b, ",\"rank\":%d,\"local_rank\":%d,\"world_size\":%d,\"rank_source\":",
				(int)pr->rank, (int)pr->local_rank, (int)pr->world_size);
			lp_perfetto_json_string(&w->b, pr->rank_source);
		}
		lp_buf_adds(&w->b, "}");
	}
	lp_buf_adds(&w->b, "]},\"traceEvents\":[");
}

static void write_processes(struct jw *w, const struct lp_profile *p)
{
	size_t i;
	for (i = 0; i < p->n_processes; i++) {
		const struct lp_process *pr = &p->processes[i];
		struct lp_buf name = LP_BUF_INIT;
		if (pr->rank >= 0)
			lp_buf_addf(&name, "rank %d: ", (int)pr->rank);
		lp_buf_addf(&name, "%s (pid %" PRIu32 ")", *pr->name ? pr->name : "process", pr->pid);
		meta(w, "process_name", pr->pid, 0, "name", name.data);
		meta_int(w, "process_sort_index", pr->pid, 0, sort_index(p, i, 0, 0));
		lp_buf_reset(&name);
		if (pr->rank >= 0) {
			lp_buf_addf(&name, "rank %d", (int)pr->rank);
			if (pr->world_size >= 0)
				lp_buf_addf(&name, " of %d", (int)pr->world_size);
			if (pr->local_rank >= 0)
				lp_buf_addf(&name, ", local rank %d", (int)pr->local_rank);
			lp_buf_addf(&name, " (%s); ", pr->rank_source);
		}
		if (pr->ppid)
			lp_buf_addf(&name, "parent pid %" PRIu32 "; ", pr->ppid);
		lp_buf_addf(&name, "cupti: %s; dropped records: %" PRIu64, pr->cupti_status, pr->dropped_records);
		meta(w, "process_labels", pr->pid, 0, "labels", name.data);
		lp_buf_release(&name);
		jw_maybe_flush(w);
	}
}

static void range_args(struct jw *w, const struct lp_range *r, int unclosed)
{
	lp_buf_adds(&w->b, ",\"args\":{\"domain\":");
	lp_perfetto_json_string(&w->b, r->domain);
	lp_buf_addf(&w->b, ",\"depth\":%u", (unsigned)r->depth);
	if (r->payload_type == LP_PAYLOAD_U64)
		lp_buf_addf(&w->b, ",\"payload\":%" PRIu64, r->payload.u64);
	else if (r->payload_type == LP_PAYLOAD_I64)
		lp_buf_addf(&w->b, ",\"payload\":%" PRId64, r->payload.i64);
	else if (r->payload_type == LP_PAYLOAD_F64)
		lp_buf_addf(&w->b, ",\"payload\":%.17g", r->payload.f64 == r->payload.f64 ? r->payload.f64 : 0.0);
	if (unclosed)
		lp_buf_adds(&w->b, ",\"unclosed\":true");
	if (r->sample == 2)   /* a sampled trace's unrecorded step: no kernels on the GPU tracks, not idle */
		lp_buf_adds(&w->b, ",\"kernels_recorded\":false");
	lp_buf_adds(&w->b, "}");
}

static void write_ranges(struct jw *w, const struct lp_profile *p, uint64_t t_end)
{
	size_t i;
	for (i = 0; i < p->n_ranges; i++) {
		const struct lp_range *r = &p->ranges[i];
		const char *cat = *r->domain ? r->domain : "nvtx";
		int unclosed = r->end_ns == 0;
		uint64_t end = unclosed ? t_end : r->end_ns;
		if (r->synthetic)
			continue; /* GPU-side copy of a capture-time range: kernels carry it in their nvtx path */
		if (r->kind == LP_RANGE_MARK) {
			ev_begin(w, "i", r->pid, r->tid);
			lp_buf_adds(&w->b, ",\"s\":\"t\"");
		} else if (r->kind == LP_RANGE_STARTEND) {
			ev_begin(w, "b", r->pid, r->tid);
			lp_buf_addf(&w->b, ",\"id\":\"0x%zx\"", i + 1);
		} else {
			ev_begin(w, "X", r->pid, r->tid);
			lp_buf_adds(&w->b, ",\"dur\":");
			add_dur(&w->b, r->start_ns, end);
		}
		ev_name(w, "name", r->name);
		ev_name(w, "cat", cat);
		lp_buf_adds(&w->b, ",\"ts\":");
		add_us(&w->b, r->start_ns, w->t0);
		range_args(w, r, unclosed);
		lp_buf_adds(&w->b, "}");
		if (r->kind == LP_RANGE_STARTEND) {
			ev_begin(w, "e", r->pid, r->tid);
			lp_buf_addf(&w->b, ",\"id\":\"0x%zx\"", i + 1);
			ev_name(w, "name", r->name);
			ev_name(w, "cat", cat);
			lp_buf_adds(&w->b, ",\"ts\":");
			add_us(&w->b, end, w->t0);
			lp_buf_adds(&w->b, "}");
		}
		jw_maybe_flush(w);
	}
}

/* Names a GPU stream track (and its GPU process) the first time it is used. */
static int track_seen(const struct lp_profile *p, struct jw *w, struct track **tracks, size_t *n, size_t *cap,
	size_t proc, int32_t device, uint32_t stream)
{
	uint32_t gpid = gpu_pid(proc, device);
	size_t i;
	int gpu_known = 0;
	struct track *nt;
	for (i = *n; i > 0; i--) {
		if ((*tracks)[i - 1].pid == gpid) {
			gpu_known = 1;
			if ((*tracks)[i - 1].stream == stream)
				return 0;
		}
	}
	if (!(nt = LP_ARRAY_PUSH(*tracks, *n, *cap, NULL)))
		return -1;
	nt->pid = gpid;
	nt->stream = stream;
	if (!gpu_known) {
		const struct lp_device *d = lp_profile_device(p, device);
		struct lp_buf s = LP_BUF_INIT;
		uint32_t cpid = proc < p->n_processes ? p->processes[proc].pid : 0;
		if (proc < p->n_processes && p->processes[proc].rank >= 0)
			lp_buf_addf(&s, "rank %d ", (int)p->processes[proc].rank);
		lp_buf_addf(&s, "GPU %d: %s (pid %" PRIu32 ")", (int)device, d && *d->name ? d->name : "unknown", cpid);
		meta(w, "process_name", gpid, 0, "name", s.data);
		meta_int(w, "process_sort_index", gpid, 0, sort_index(p, proc, 1, device));
		if (d) {
			lp_buf_reset(&s);
			lp_buf_addf(&s, "%d SMs, CC %d.%d, %u MHz, %.1f GiB, %u-bit bus, %u MiB L2", (int)d->sm_count,
				(int)d->cc_major, (int)d->cc_minor, d->sm_clock_mhz, (double)d->mem_bytes / (1 << 30),
				d->mem_bus_width_bits, d->l2_bytes >> 20);
			meta(w, "process_labels", gpid, 0, "labels", s.data);
		}
		lp_buf_release(&s);
	}
	{
		struct lp_buf s = LP_BUF_INIT;
		lp_buf_addf(&s, "stream %" PRIu32, stream);
		meta(w, "thread_name", gpid, stream, "name", s.data);
		lp_buf_release(&s);
	}
	return 0;
}

/* The launch side of an arrow: a tiny slice on the launching thread that the flow start binds to. */
static void flow_start(struct jw *w, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t id, const char *what)
{
	ev_begin(w, "X", pid, tid);
	ev_name(w, "name", what);
	lp_buf_adds(&w->b, ",\"cat\":\"launch\",\"dur\":0.001,\"ts\":");
	add_us(&w->b, ts, w->t0);
	lp_buf_adds(&w->b, "}");
	ev_begin(w, "s", pid, tid);
	lp_buf_addf(&w->b, ",\"name\":\"launch\",\"cat\":\"launch\",\"id\":%" PRIu64 ",\"ts\":", id);
	add_us(&w->b, ts, w->t0);
	lp_buf_adds(&w->b, "}");
}

static void flow_end(struct jw *w, uint32_t pid, uint32_t tid, uint64_t ts, uint64_t id)
{
	ev_begin(w, "f", pid, tid);
	lp_buf_addf(&w->b, ",\"bp\":\"e\",\"name\":\"launch\",\"cat\":\"launch\",\"id\":%" PRIu64 ",\"ts\":", id);
	add_us(&w->b, ts, w->t0);
	lp_buf_adds(&w->b, "}");
}

static const char *copy_name(uint8_t kind)
{
	static const char *names[] = { "memcpy", "memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memcpy HtoH",
		"memcpy PtoP", "memset" };
	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "memcpy";
}

static int write_gpu(struct jw *w, const struct lp_profile *p, const struct lp_perfetto_opts *o)
{
	struct track *tracks = NULL;
	size_t n_tracks = 0, cap_tracks = 0, i;
	struct lp_buf path = LP_BUF_INIT;
	uint64_t flow_id = 1;
	for (i = 0; i < p->n_kernels && !w->failed; i++) {
		const struct lp_kernel *k = &p->kernels[i];
		size_t proc = process_index(p, k->pid);
		uint32_t gpid = gpu_pid(proc, k->device);
		if (track_seen(p, w, &tracks, &n_tracks, &cap_tracks, proc, k->device, k->stream) < 0)
			goto oom;
		ev_begin(w, "X", gpid, k->stream);
		ev_name(w, "name", k->name);
		lp_buf_adds(&w->b, ",\"cat\":\"kernel\",\"ts\":");
		add_us(&w->b, k->start_ns, w->t0);
		lp_buf_adds(&w->b, ",\"dur\":");
		add_dur(&w->b, k->start_ns, k->end_ns);
		lp_buf_adds(&w->b, ",\"args\":{\"short_name\":");
		lp_perfetto_json_string(&w->b, k->short_name);
		lp_buf_addf(&w->b, ",\"grid\":\"%u,%u,%u\",\"block\":\"%u,%u,%u\",\"registers\":%u,"
			"\"shared_bytes\":%u,\"correlation\":%u,\"device\":%d,\"stream\":%u",
			k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
			k->registers_per_thread, k->shared_bytes, k->correlation_id, (int)k->device, k->stream);
		if (k->graph_node_id)
			lp_buf_addf(&w->b, ",\"graph_node\":%" PRIu64, k->graph_node_id);
		if (k->range >= 0 && lp_profile_range_path(p, k->range, &path) == 0) {
			lp_buf_adds(&w->b, ",\"nvtx\":");
			lp_perfetto_json_string(&w->b, path.data);
		}
		lp_buf_adds(&w->b, "}}");
		if (o->flows && k->launch_ns && k->launch_tid) {
			flow_start(w, k->pid, k->launch_tid, k->launch_ns, flow_id, "launch");
			flow_end(w, gpid, k->stream, k->start_ns, flow_id);
			flow_id++;
		}
		jw_maybe_flush(w);
	}
	for (i = 0; i < p->n_copies && !w->failed; i++) {
		const struct lp_copy *c = &p->copies[i];
		size_t proc = process_index(p, c->pid);
		uint32_t gpid = gpu_pid(proc, c->device);
		if (track_seen(p, w, &tracks, &n_tracks, &cap_tracks, proc, c->device, c->stream) < 0)
			goto oom;
		ev_begin(w, "X", gpid, c->stream);
		ev_name(w, "name", copy_name(c->kind));
		lp_buf_adds(&w->b, ",\"cat\":\"copy\",\"ts\":");
		add_us(&w->b, c->start_ns, w->t0);
		lp_buf_adds(&w->b, ",\"dur\":");
		add_dur(&w->b, c->start_ns, c->end_ns);
		lp_buf_addf(&w->b, ",\"args\":{\"bytes\":%" PRIu64 ",\"correlation\":%u", c->bytes, c->correlation_id);
		if (c->range >= 0 && lp_profile_range_path(p, c->range, &path) == 0) {
			lp_buf_adds(&w->b, ",\"nvtx\":");
			lp_perfetto_json_string(&w->b, path.data);
		}
		lp_buf_adds(&w->b, "}}");
		if (o->flows && c->launch_ns && c->launch_tid) {
			flow_start(w, c->pid, c->launch_tid, c->launch_ns, flow_id, copy_name(c->kind));
			flow_end(w, gpid, c->stream, c->start_ns, flow_id);
			flow_id++;
		}
		jw_maybe_flush(w);
	}
	free(tracks);
	lp_buf_release(&path);
	return 0;
oom:
	free(tracks);
	lp_buf_release(&path);
	w->failed = 1;
	return -1;
}

static void time_bounds(const struct lp_profile *p, uint64_t *t0, uint64_t *t1)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i;
#define LP_SEE(v) do { uint64_t v_ = (v); if (v_) { if (v_ < lo) lo = v_; if (v_ > hi) hi = v_; } } while (0)
	for (i = 0; i < p->n_ranges; i++) {
		LP_SEE(p->ranges[i].start_ns);
		LP_SEE(p->ranges[i].end_ns);
	}
	for (i = 0; i < p->n_kernels; i++) {
		LP_SEE(p->kernels[i].start_ns);
		LP_SEE(p->kernels[i].end_ns);
		LP_SEE(p->kernels[i].launch_ns);
	}
	for (i = 0; i < p->n_copies; i++) {
		LP_SEE(p->copies[i].start_ns);
		LP_SEE(p->copies[i].end_ns);
		LP_SEE(p->copies[i].launch_ns);
	}
#undef LP_SEE
	*t0 = lo == UINT64_MAX ? 0 : lo;
	*t1 = hi;
}

int lp_perfetto_write(const struct lp_profile *p, const char *path, const struct lp_perfetto_opts *opts,
	struct lp_err *err)
{
	struct lp_perfetto_opts def = { 1, 6 };
	struct jw w;
	struct lp_buf tmp = LP_BUF_INIT;
	char mode[8];
	uint64_t t_end;
	int fd, rc = 0, zerr;

	if (!opts)
		opts = &def;
	memset(&w, 0, sizeof(w));
	lp_buf_init(&w.b, 0);
	time_bounds(p, &w.t0, &t_end);
	lp_buf_addf(&tmp, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp.data);
	if (fd < 0) {
		rc = lp_err_set(err, LP_EOTHER, "cannot create '%s': %s", tmp.data, strerror(errno));
		lp_buf_release(&tmp);
		return rc;
	}
	fchmod(fd, 0644);
	snprintf(mode, sizeof(mode), "wb%d", opts->compress_level >= 1 && opts->compress_level <= 9 ? opts->compress_level : 6);
	w.gz = gzdopen(fd, mode);
	if (!w.gz) {
		close(fd);
		unlink(tmp.data);
		rc = lp_err_set(err, LP_EOTHER, "cannot start gzip output for '%s'", path);
		lp_buf_release(&tmp);
		return rc;
	}
	write_header(&w, p);
	write_processes(&w, p);
	write_ranges(&w, p, t_end);
	write_gpu(&w, p, opts);
	lp_buf_adds(&w.b, "\n]}\n");
	jw_flush(&w);
	if (w.b.oom)
		w.failed = 1;
	zerr = gzclose(w.gz);
	if (w.failed || zerr != Z_OK) {
		unlink(tmp.data);
		rc = lp_err_set(err, LP_EOTHER, "cannot write '%s' (disk full or out of memory)", path);
	} else if (rename(tmp.data, path) < 0) {
		rc = lp_err_set(err, LP_EOTHER, "cannot rename '%s' to '%s': %s", tmp.data, path, strerror(errno));
		unlink(tmp.data);
	}
	lp_buf_release(&w.b);
	lp_buf_release(&tmp);
	return rc;
}
