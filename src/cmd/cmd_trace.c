/* cmd_trace.c: `llmprof trace dump|perfetto`, the CLI over the built-in tracer's files
 * (docs/tracer.md, docs/trace-format.md). `dump` prints every record of every file as one text
 * line, for debugging the tracer and its reader; `perfetto` loads the files into a profile
 * (parse/trace_read.h) and writes Chrome trace-event JSON (report/perfetto.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/buf.h"
#include "core/err.h"
#include "core/log.h"
#include "core/opt.h"
#include "llmprof/trace_format.h"
#include "parse/trace_read.h"
#include "report/perfetto.h"

static const char usage_line[] = "llmprof trace dump DIR|FILE\n"
				 "   or: llmprof trace perfetto DIR|FILE -o trace.json.gz [--no-flows]";
static const char description[] =
	"Reads the files of llmprof's injected tracer (one *.lptrace per traced process).\n"
	"  dump      print every record as a line of text\n"
	"  perfetto  write Chrome trace-event JSON (gzip) for ui.perfetto.dev";

static const char *opt_output;
static int opt_no_flows;
static const struct lp_opt opts[] = {
	LP_OPT_STRING('o', "output", &opt_output, "FILE", "perfetto: the .json.gz file to write"),
	LP_OPT_FLAG(0, "no-flows", &opt_no_flows, "perfetto: leave out the launch -> kernel arrows"),
	LP_OPT_END,
};

/* Prints string `sid` of f quoted, with C-style escapes for anything unprintable. */
static void print_str(const struct lp_trace_file *f, uint32_t sid)
{
	size_t len = 0, i;
	const char *s = sid ? lp_trace_file_string(f, sid, &len) : NULL;
	if (!s) {
		printf(sid ? "#%u?" : "-", sid);
		return;
	}
	putchar('"');
	for (i = 0; i < len && i < 200; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	if (len > 200)
		printf("...(%zu bytes)", len);
	putchar('"');
}

static const char *nvtx_event_name(uint8_t e)
{
	static const char *names[] = { "?", "PUSH", "POP", "START", "END", "MARK" };
	return e < sizeof(names) / sizeof(names[0]) ? names[e] : "?";
}

static void print_payload(uint8_t type, uint64_t raw)
{
	int64_t i;
	double d;
	memcpy(&i, &raw, 8);
	memcpy(&d, &raw, 8);
	switch (type) {
	case LP_TRACE_PAYLOAD_U64: printf(" payload=u64:%" PRIu64, raw); break;
	case LP_TRACE_PAYLOAD_U32: printf(" payload=u32:%" PRIu64, raw); break;
	case LP_TRACE_PAYLOAD_I64: printf(" payload=i64:%" PRId64, i); break;
	case LP_TRACE_PAYLOAD_I32: printf(" payload=i32:%" PRId64, i); break;
	case LP_TRACE_PAYLOAD_F64: printf(" payload=f64:%.17g", d); break;
	case LP_TRACE_PAYLOAD_F32: printf(" payload=f32:%.9g", d); break;
	default: break;
	}
}

static void dump_record(const struct lp_trace_file *f, const struct lp_trace_record *rec)
{
	const char *tname = lp_trace_record_type_name(rec->type);
	printf("@%zu %s", rec->offset, tname ? tname : "UNKNOWN");
	switch (rec->type) {
	case LP_TREC_PROCESS: {
		struct lp_trace_process r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" pid=%u ppid=%u forked=%u start_ns=%" PRIu64 " clock=%u host=", r.pid, r.ppid, r.forked,
			r.start_ns, r.clock);
		print_str(f, r.host_sid);
		printf(" exe=");
		print_str(f, r.exe_sid);
		printf(" cmdline=");
		print_str(f, r.cmdline_sid);
		break;
	}
	case LP_TREC_STRING: {
		struct lp_trace_string r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" #%u ", r.sid);
		print_str(f, r.sid);
		break;
	}
	case LP_TREC_CUPTI_STATUS: {
		struct lp_trace_cupti_status r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" code=%u ", r.code);
		print_str(f, r.message_sid);
		break;
	}
	case LP_TREC_DOMAIN: {
		struct lp_trace_domain r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" domain=%u name=", r.domain_id);
		print_str(f, r.name_sid);
		break;
	}
	case LP_TREC_THREAD_NAME: {
		struct lp_trace_thread_name r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" tid=%u name=", r.tid);
		print_str(f, r.name_sid);
		break;
	}
	case LP_TREC_NVTX: {
		struct lp_trace_nvtx r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" %s tid=%u domain=%u id=%" PRIu64 " ts_ns=%" PRIu64, nvtx_event_name(r.event), r.tid,
			r.domain_id, r.id, r.ts_ns);
		if (r.name_sid) {
			printf(" name=");
			print_str(f, r.name_sid);
		}
		print_payload(r.payload_type, r.payload);
		if (r.category)
			printf(" category=%u", r.category);
		if (r.color)
			printf(" color=0x%08x", r.color);
		break;
	}
	case LP_TREC_LAUNCH: {
		struct lp_trace_launch r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" correlation=%u tid=%u range=%" PRIu64 " ts_ns=%" PRIu64 " api=%s cbid=%u kind=%u",
			r.correlation_id, r.tid, r.range_id, r.ts_ns, r.api == 1 ? "runtime" : "driver", r.cbid, r.kind);
		break;
	}
	case LP_TREC_GRAPH_NODE: {
		struct lp_trace_graph_node r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" node=%" PRIu64 " range=%" PRIu64 " original=%" PRIu64 " graph=%u tid=%u", r.node_id,
			r.range_id, r.original_node_id, r.graph_id, r.tid);
		break;
	}
	case LP_TREC_KERNEL: {
		struct lp_trace_kernel r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" device=%u stream=%u correlation=%u start_ns=%" PRIu64 " dur_ns=%" PRIu64
			" grid=%u,%u,%u block=%u,%u,%u regs=%u smem=%u+%u graph_node=%" PRIu64 " name=",
			r.device, r.stream, r.correlation_id, r.start_ns, r.end_ns - r.start_ns, r.grid[0], r.grid[1],
			r.grid[2], r.block[0], r.block[1], r.block[2], r.registers_per_thread, r.static_shared_bytes,
			r.dynamic_shared_bytes, r.graph_node_id);
		print_str(f, r.name_sid);
		break;
	}
	case LP_TREC_COPY: {
		struct lp_trace_copy r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" kind=%u bytes=%" PRIu64 " device=%u stream=%u correlation=%u start_ns=%" PRIu64
			" dur_ns=%" PRIu64, r.kind, r.bytes, r.device, r.stream, r.correlation_id, r.start_ns,
			r.end_ns - r.start_ns);
		break;
	}
	case LP_TREC_OVERHEAD: {
		struct lp_trace_overhead r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" kind=%u object_kind=%u object=%u start_ns=%" PRIu64 " dur_ns=%" PRIu64, r.overhead_kind,
			r.object_kind, r.object_id, r.start_ns, r.end_ns - r.start_ns);
		break;
	}
	case LP_TREC_DROPPED: {
		struct lp_trace_dropped r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" cupti=%" PRIu64 " own=%" PRIu64, r.cupti_records, r.own_records);
		break;
	}
	case LP_TREC_DEVICE: {
		struct lp_trace_device r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" id=%u sms=%d cc=%d.%d sm_clock_khz=%u mem_clock_khz=%u bus_bits=%u l2_bytes=%u mem_bytes=%" PRIu64
			" name=", r.id, r.sm_count, r.cc_major, r.cc_minor, r.sm_clock_khz, r.mem_clock_khz,
			r.mem_bus_width_bits, r.l2_bytes, r.mem_bytes);
		print_str(f, r.name_sid);
		printf(" uuid=");
		print_str(f, r.uuid_sid);
		break;
	}
	case LP_TREC_CLOCK_SYNC: {
		struct lp_trace_clock_sync r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" trace_ns=%" PRIu64 " cupti_ns=%" PRIu64, r.trace_ns, r.cupti_ns);
		break;
	}
	case LP_TREC_RANK: {
		struct lp_trace_rank r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" rank=%d local_rank=%d world_size=%d local_world_size=%d source=", (int)r.rank, (int)r.local_rank,
			(int)r.world_size, (int)r.local_world_size);
		print_str(f, r.source_sid);
		printf(" cuda_visible_devices=");
		print_str(f, r.visible_devices_sid);
		break;
	}
	case LP_TREC_SAMPLING: {
		struct lp_trace_sampling r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" mode=%u why=%u every=%u first=%u burst=%u pick=%u seed=%" PRIu64 " auto_rate=%u launch_rate=%" PRIu64
			" toggles=%" PRIu64 " toggle_ns=%" PRIu64 " toggle_max_ns=%" PRIu64 " units=%" PRIu64
			" units_recorded=%" PRIu64 " warmup=%u%s unit=", r.mode, r.why, r.every, r.first, r.burst, r.pick,
			r.seed, r.auto_rate, r.launch_rate, r.toggles, r.toggle_ns, r.toggle_max_ns, r.units,
			r.units_recorded, r.warmup, r.flags & LP_TRACE_SAMPLING_F_GRAPHS_ALL ? " graphs_all" : "");
		print_str(f, r.unit_sid);
		break;
	}
	case LP_TREC_STAGE: {
		struct lp_trace_stage r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" range=%" PRIu64 " tid=%u index=%u sample=%u gpu=%u gpu_start_ns=%" PRIu64 " gpu_end_ns=%" PRIu64
			" gpu_elapsed_ns=%" PRIu64 "%s name=", r.range_id, r.tid, r.index, r.sample, r.gpu, r.gpu_start_ns,
			r.gpu_end_ns, r.gpu_elapsed_ns, r.flags & LP_TRACE_STAGE_F_PUSH_ATTACHED ? " push_attached" : "");
		print_str(f, r.name_sid);
		break;
	}
	case LP_TREC_END: {
		struct lp_trace_end r;
		lp_trace_record_get(rec, &r, sizeof(r));
		printf(" end_ns=%" PRIu64 " reason=%u", r.end_ns, r.reason);
		break;
	}
	default:
		printf(" type=%u size=%u (skipped)", rec->type, rec->size);
		break;
	}
	putchar('\n');
}

static int trace_dump(const char *path)
{
	struct lp_err err = LP_ERR_INIT;
	char **files;
	size_t n, i;
	int rc = 0;
	if (lp_trace_list_files(path, &files, &n, &err) < 0)
		return lp_cmd_fail(&err);
	for (i = 0; i < n; i++) {
		struct lp_trace_file f;
		struct lp_trace_record rec;
		if (lp_trace_file_open(&f, files[i], &err) < 0) {
			rc = lp_cmd_fail(&err);
			break;
		}
		printf("file %s (format %u.%u, %zu bytes)\n", f.path, f.version_major, f.version_minor, f.size);
		while (lp_trace_file_next(&f, &rec))
			dump_record(&f, &rec);
		if (f.truncated)
			lp_log_warn("'%s' ends inside a record at byte offset %zu (the process was killed?); "
				    "read up to there", f.path, f.truncated_at);
		lp_trace_file_close(&f);
	}
	lp_trace_list_free(files, n);
	return rc;
}

static int trace_perfetto(const char *path, const char *out, int no_flows)
{
	struct lp_err err = LP_ERR_INIT;
	struct lp_profile p;
	struct lp_perfetto_opts o = { !no_flows, 6 };
	int rc = 0;
	lp_profile_init(&p, path);
	if (lp_trace_load(path, &p, &err) < 0 || lp_perfetto_write(&p, out, &o, &err) < 0) {
		rc = lp_cmd_fail(&err);
	} else {
		if (p.warnings)
			lp_log_warn("%" PRIu64 " trace file(s) end inside a record (killed processes?); read up to there",
				p.warnings);
		lp_log_info("wrote '%s': %zu range%s, %zu kernel%s, %zu cop%s from %zu process%s; open it in "
			    "https://ui.perfetto.dev", out, p.n_ranges, p.n_ranges == 1 ? "" : "s", p.n_kernels,
			    p.n_kernels == 1 ? "" : "s", p.n_copies, p.n_copies == 1 ? "y" : "ies", p.n_processes,
			    p.n_processes == 1 ? "" : "es");
	}
	lp_profile_release(&p);
	return rc;
}

static int cmd_trace(const struct lp_args *args, struct lp_ctx *ctx)
{
	int rc;
	(void)ctx;

	if (args->n_rest != 2 || (strcmp(args->rest[0], "dump") && strcmp(args->rest[0], "perfetto"))) {
		lp_log_error("'trace' needs 'dump' or 'perfetto' and a trace folder or file");
		lp_log_hint("usage: %s", usage_line);
		return LP_EXIT_USAGE;
	}
	if (!strcmp(args->rest[0], "dump")) {
		rc = trace_dump(args->rest[1]);
	} else if (!opt_output) {
		lp_log_error("'trace perfetto' needs an output file (-o trace.json.gz)");
		rc = LP_EXIT_USAGE;
	} else {
		rc = trace_perfetto(args->rest[1], opt_output, opt_no_flows);
	}
	return rc;
}

const struct lp_cmd lp_cmd_trace = {
	"trace", cmd_trace, "dump or convert traces of the built-in tracer", usage_line, description, opts,
};
