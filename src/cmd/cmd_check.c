/* cmd_check.c: `llmprof check`: a table of what this machine can profile and why not (GPUs,
 * driver, nsys, ncu, the nsys importer, counter permission, CUPTI, our tracer library, the host
 * clock it stamps events with), then what
 * `llmprof run` will do here (lp_tools_outlook, the verdict run itself uses) and its exit status:
 * 0, or 4 when a requested phase cannot run. The probing is in collect/tools.c. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "collect/provenance.h"
#include "collect/tools.h"
#include "config/config.h"
#include "core/buf.h"
#include "core/err.h"
#include "core/fs.h"
#include "core/log.h"
#include "core/opt.h"
#include "report/sections.h"

static const char usage_line[] =
	"llmprof check [--mode light|deep] [--nsys] [--format text|json] [overrides...] [-- workload argv...]";
static const char description[] =
	"Says what this machine can profile, and why not: GPUs and driver, nsys and ncu\n"
	"(PATH, config tools.nsys/tools.ncu, /opt/nvidia/nsight-*, the CUDA bin folder) and\n"
	"their versions, the nsys importer, performance-counter permission, CUPTI, the\n"
	"tracer library and the host clock it stamps events with (slow where each read is a\n"
	"system call). Then what 'llmprof run' with the same options and overrides will do\n"
	"here (a GPU run, or a CPU run: stages and operators, no GPU kernels) and its exit\n"
	"status: 0, or 4 when a phase it asks for cannot run here (the same as run's). A\n"
	"workload after '--' is judged as run judges one (no CUDA build of llmprof-llm needed).";

static const char *opt_mode, *opt_format = "text";
static int opt_nsys;
static const struct lp_opt opts[] = {
	LP_OPT_STRING(0, "mode", &opt_mode, "MODE", "light (tracer only) or deep (tracer and ncu; the default)"),
	LP_OPT_FLAG(0, "nsys", &opt_nsys, "also require nsys (the nsys phase is enabled)"),
	LP_OPT_STRING(0, "format", &opt_format, "FMT", "text (default) or json"),
	LP_OPT_END,
};

static void row(struct lp_buf *b, const char *what, const char *status, const char *detail)
{
	lp_buf_addf(b, "%-16s %-8s %s\n", what, status, detail);
}

static int cmd_check(const struct lp_args *args, struct lp_ctx *ctx)
{
	const char *mode = opt_mode, *format = opt_format;
	int with_nsys = opt_nsys, ok, i;
	struct lp_run_outlook ol;
	struct lp_config cfg = LP_CONFIG_INIT;
	struct lp_err err = LP_ERR_INIT;
	struct lp_tools t;
	struct lp_tools_opts o;
	struct lp_buf b = LP_BUF_INIT, why = LP_BUF_INIT, d = LP_BUF_INIT;
	json_t *clock = NULL;

	/* the composed configuration with the same overrides `run` takes (tools.*, run.mode,
	 * profiling.nsys.enable ...); --mode and --nsys win over it */
	if (lp_config_load(&cfg, ctx ? ctx->conf_dir : NULL, args->rest, (size_t)args->n_rest, &err) < 0)
		return lp_cmd_fail(&err);
	if (!mode)
		mode = json_string_value(lp_config_get(&cfg, "run.mode"));
	if (!mode)
		mode = "deep";
	if (json_is_true(lp_config_get(&cfg, "profiling.nsys.enable")))
		with_nsys = 1;
	if (strcmp(mode, "light") && strcmp(mode, "deep")) {
		lp_config_release(&cfg);
		lp_log_error("unknown mode '%s'", mode);
		lp_log_hint("use light or deep");
		return LP_EXIT_USAGE;
	}
	memset(&o, 0, sizeof(o));
	o.nsys_path = json_string_value(lp_config_get(&cfg, "tools.nsys"));
	o.ncu_path = json_string_value(lp_config_get(&cfg, "tools.ncu"));
	o.nsys_lib_dir = json_string_value(lp_config_get(&cfg, "tools.nsys_lib_dir"));
	o.exe_dir = ctx ? ctx->exe_dir : NULL;
	o.probe_versions = 1;
	lp_tools_detect(&o, &t);
	/* the verdict is run's own (collect/tools.h): a CPU run of deep mode exits 0 there, so it
	 * does here; lp_tools_mode_ok's stricter "every piece of the mode" is not what run does */
	lp_tools_outlook(&t, mode, json_string_value(lp_config_get(&cfg, "run.device")), with_nsys, !args->tail, &ol);
	ok = lp_exit_status(ol.fail_kind) == 0;
	lp_buf_adds(&why, ol.why);

	clock = lp_prov_clock();
	if (!strcmp(format, "json")) {
		json_t *j = lp_tools_to_json(&t);
		char *s;
		json_object_set(j, "host_clock", clock);
		json_object_set_new(j, "mode", json_string(mode));
		json_object_set_new(j, "mode_ok", json_boolean(ok));
		json_object_set_new(j, "why_not", ok ? json_null() : json_string(why.data));
		json_object_set_new(j, "run", json_string(ol.what));
		json_object_set_new(j, "gpu_run", json_boolean(ol.gpu_run));
		json_object_set_new(j, "expected_exit", json_integer(lp_exit_status(ol.fail_kind)));
		s = json_dumps(j, JSON_INDENT(2));
		if (s)
			puts(s);
		free(s);
		json_decref(j);
		goto done;
	}
	row(&b, "what", "status", "detail");
	if (t.n_gpus == 0)
		row(&b, "GPU", "missing", t.gpu_problem[0] ? t.gpu_problem : "no NVIDIA GPU found");
	for (i = 0; i < t.n_gpus; i++) {
		char what[32];
		lp_buf_reset(&d);
		lp_buf_addf(&d, "%s, %.0f GiB, driver %s (%s)", t.gpus[i].name, (double)t.gpus[i].mem_bytes / 1073741824.0,
			t.driver_version[0] ? t.driver_version : "?", t.gpu_source);
		snprintf(what, sizeof(what), "GPU %d", t.gpus[i].index);
		row(&b, what, "ok", d.data);
	}
	for (i = 0; i < 2; i++) {
		const struct lp_tool *x = i ? &t.ncu : &t.nsys;
		lp_buf_reset(&d);
		if (x->found)
			lp_buf_addf(&d, "%s at %s (%s)%s%s", x->version[0] ? x->version : "version unknown", x->path,
				x->found_via, x->problem[0] ? ": " : "", x->problem);
		else
			lp_buf_adds(&d, x->problem);
		row(&b, x->name, x->found && !x->problem[0] ? "ok" : x->found ? "broken" : "missing", d.data);
	}
	lp_buf_reset(&d);
	if (!t.nsys_importer_ok)
		lp_buf_adds(&d, t.importer_problem);
	else if (t.importer_where[0])
		lp_buf_addf(&d, "libdw.so.1 and libelf.so.1 loadable from %s%s", t.importer_where,
			o.nsys_lib_dir && !strcmp(o.nsys_lib_dir, t.importer_where) ? " (tools.nsys_lib_dir)" : "");
	else
		lp_buf_adds(&d, "libdw.so.1 and libelf.so.1 loadable");
	row(&b, "nsys importer", t.nsys_importer_ok ? "ok" : "missing", d.data);
	lp_buf_reset(&d);
	if (t.counters_admin_only < 0)
		lp_buf_adds(&d, "unknown (/proc/driver/nvidia/params unreadable)");
	else
		lp_buf_addf(&d, "RmProfilingAdminOnly=%d%s", t.counters_admin_only, t.is_root ? ", running as root" : "");
	row(&b, "perf counters", t.counters_problem[0] ? "denied" : t.counters_admin_only < 0 ? "unknown" : "ok", d.data);
	row(&b, "CUPTI", t.cupti_path[0] ? "ok" : "missing", t.cupti_path[0] ? t.cupti_path : "libcupti.so not found in the CUDA folders");
	row(&b, "tracer library", t.inject_path[0] ? "ok" : "missing", t.inject_path[0] ? t.inject_path : t.inject_expected);
	lp_buf_reset(&d);
	if (!lp_fmt_host_clock(clock, &d))
		lp_buf_adds(&d, "not measured");
	row(&b, "host clock", json_is_true(json_object_get(clock, "slow")) ? "slow" : "ok", d.data);
	row(&b, "run", ol.gpu_run ? "GPU" : "CPU", ol.what);
	lp_buf_reset(&d);
	lp_buf_addf(&d, "%s", ok ? "'llmprof run' can run it here (exit 0)" : why.data);
	if (!ok)
		lp_buf_addf(&d, " ('llmprof run' exits %d)", lp_exit_status(ol.fail_kind));
	row(&b, !strcmp(mode, "deep") ? "mode deep" : "mode light", ok ? "ok" : "no", d.data);
	fputs(b.data, stdout);
	if (t.counters_problem[0] && !strcmp(mode, "deep") && ol.gpu_run)
		lp_log_hint("%s", t.counters_problem);
done:
	json_decref(clock);
	lp_buf_release(&b);
	lp_buf_release(&why);
	lp_buf_release(&d);
	lp_config_release(&cfg);   /* last: `mode` may point into it */
	return lp_exit_status(ol.fail_kind);
}

const struct lp_cmd lp_cmd_check = {
	"check", cmd_check, "say what this machine can profile, and why not", usage_line, description, opts,
};
