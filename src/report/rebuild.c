/* rebuild.c: run folder -> analysis input -> lp_analyze -> reports (see rebuild.h). The one
 * place that knows which artifact feeds which part of the analysis. */
#include "report/rebuild.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analysis.h"
#include "config/yaml.h"
#include "core/fs.h"
#include "core/str.h"
#include "parse/ncu_raw.h"
#include "parse/trace_read.h"
#include "report/reports.h"

/* The main ncu export of the run: the first ncu/<name>_raw.csv in name order (a run writes one;
 * ncu/regions/ holds slices of it, not separate results). */
int lp_rebuild_load_ncu(const char *run_dir, struct lp_kernel_table *out, struct lp_err *err)
{
	struct lp_buf dir = LP_BUF_INIT, path = LP_BUF_INIT;
	struct dirent **names = NULL;
	int n, i, rc = 0;
	memset(out, 0, sizeof(*out));
	lp_fs_join(&dir, run_dir, "ncu");
	n = lp_fs_is_dir(dir.data) ? scandir(dir.data, &names, NULL, alphasort) : 0;
	for (i = 0; i < n; i++) {
		if (!path.len && lp_str_ends_with(names[i]->d_name, "_raw.csv")) {
			lp_fs_join(&path, dir.data, names[i]->d_name);
			if (lp_fs_is_file(path.data) && lp_fs_size(path.data) > 0 &&
			    lp_ncu_raw_kernel_table(path.data, NULL, out, err) < 0)
				rc = -1;
		}
		free(names[i]);
	}
	free(names);
	lp_buf_release(&dir);
	lp_buf_release(&path);
	return rc;
}

static int64_t get_i64(const json_t *o, const char *const *keys)
{
	for (; *keys; keys++) {
		const json_t *v = json_object_get(o, *keys);
		if (json_is_integer(v))
			return (int64_t)json_integer_value(v);
		if (json_is_real(v))
			return (int64_t)json_real_value(v);
	}
	return 0;
}

int lp_rebuild_device_from_env(const json_t *env, struct lp_device *out)
{
	static const char *const k_sm[] = { "sm_count", "multiprocessor_count", "sms", NULL };
	static const char *const k_clk[] = { "sm_clock_mhz", "max_sm_clock_mhz", "clock_sm_max_mhz", NULL };
	static const char *const k_mclk[] = { "mem_clock_mhz", "max_mem_clock_mhz", "memory_clock_mhz", NULL };
	static const char *const k_bus[] = { "mem_bus_width_bits", "memory_bus_width_bits", "memory_bus_width", NULL };
	static const char *const k_mem[] = { "mem_bytes", "memory_bytes", "memory_total_bytes", NULL };
	static const char *const k_ccM[] = { "cc_major", NULL };
	static const char *const k_ccm[] = { "cc_minor", NULL };
	const json_t *gpus = json_object_get(env, "gpus"), *g, *cc, *clocks;
	memset(out, 0, sizeof(*out));
	out->name = "";
	out->uuid = "";
	if (!json_is_array(gpus) || !json_array_size(gpus) || !json_is_object(g = json_array_get(gpus, 0)))
		return -1;
	if (!json_is_string(json_object_get(g, "name")))
		return -1;
	out->name = json_string_value(json_object_get(g, "name"));
	if (json_is_string(json_object_get(g, "uuid")))
		out->uuid = json_string_value(json_object_get(g, "uuid"));
	out->id = (int32_t)get_i64(g, (const char *const[]){ "index", "id", NULL });
	out->sm_count = (int32_t)get_i64(g, k_sm);
	out->sm_clock_mhz = (uint32_t)get_i64(g, k_clk);
	out->mem_clock_mhz = (uint32_t)get_i64(g, k_mclk);
	clocks = json_object_get(g, "clocks");
	if (json_is_object(clocks)) {
		if (!out->sm_clock_mhz)
			out->sm_clock_mhz = (uint32_t)get_i64(clocks, (const char *const[]){ "sm_max_mhz", "sm_mhz", "sm", NULL });
		if (!out->mem_clock_mhz)
			out->mem_clock_mhz = (uint32_t)get_i64(clocks, (const char *const[]){ "mem_max_mhz", "mem_mhz", "mem", NULL });
	}
	out->mem_bus_width_bits = (uint32_t)get_i64(g, k_bus);
	out->mem_bytes = (uint64_t)get_i64(g, k_mem);
	out->cc_major = (int32_t)get_i64(g, k_ccM);
	out->cc_minor = (int32_t)get_i64(g, k_ccm);
	cc = json_object_get(g, "compute_capability");
	if (!cc)
		cc = json_object_get(g, "cc");
	if (json_is_string(cc)) {
		const char *s = json_string_value(cc), *dot = strchr(s, '.');
		if (dot && s[0] >= '0' && s[0] <= '9') {
			out->cc_major = (int32_t)strtol(s, NULL, 10);
			out->cc_minor = (int32_t)strtol(dot + 1, NULL, 10);
		}
	}
	return 0;
}

static int64_t cfg_i64(const json_t *cfg, const char *a, const char *b)
{
	const json_t *v = json_object_get(json_object_get(cfg, a), b);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static double cfg_num(const json_t *cfg, const char *a, const char *b)
{
	const json_t *v = json_object_get(json_object_get(cfg, a), b);
	return json_is_number(v) ? json_number_value(v) : 0;
}

int lp_report_rebuild(const char *run_dir, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT;
	json_t *cfg = NULL, *env = NULL;
	struct lp_profile prof;
	struct lp_kernel_table ncu;
	struct lp_phase_status *phases = NULL;
	struct lp_analysis_input in;
	struct lp_analysis a;
	struct lp_device env_dev;
	int rc = -1, have_prof = 0, have_ncu = 0;

	memset(&in, 0, sizeof(in));
	if (!lp_fs_is_dir(run_dir))
		return lp_err_set(err, LP_EUSAGE, "'%s' is not a run folder", run_dir);
	lp_fs_join(&path, run_dir, "config.yaml");
	if (!lp_fs_is_file(path.data)) {
		lp_err_set(err, LP_EUSAGE, "'%s' is not a run folder: it has no config.yaml", run_dir);
		goto done;
	}
	if (lp_yaml_load_file(path.data, &cfg, err) < 0) {
		err->status = LP_EUSAGE;
		goto done;
	}
	lp_fs_join(&path, run_dir, "env.json");
	if (lp_fs_is_file(path.data) && lp_yaml_load_file(path.data, &env, err) < 0) {
		err->status = LP_EUSAGE;
		goto done;
	}
	lp_fs_join(&path, run_dir, "trace");
	if (!lp_fs_is_dir(path.data)) {
		lp_err_set(err, LP_EUSAGE, "'%s' is not a run folder: it has no trace/", run_dir);
		goto done;
	}
	lp_profile_init(&prof, path.data);
	have_prof = 1;
	if (lp_trace_load(path.data, &prof, err) < 0) {
		lp_err_prefix(err, "cannot analyze '%s'", run_dir);
		goto done;
	}
	/* named relative to the run folder: the reports must not depend on how the folder was spelled */
	prof.source = lp_profile_intern(&prof, "trace");
	if (lp_rebuild_load_ncu(run_dir, &ncu, err) < 0)
		goto done;
	have_ncu = 1;
	if (lp_phases_load(run_dir, &phases, &in.n_phases, &in.traced_s, &in.untraced_s, err) < 0)
		goto done;

	in.profile = &prof;
	in.model = json_object_get(cfg, "model");
	in.batch = cfg_i64(cfg, "inputs", "batch");
	in.prompt_len = cfg_i64(cfg, "inputs", "prompt_len");
	in.new_tokens = cfg_i64(cfg, "inputs", "new_tokens");
	in.peak_tflops = cfg_num(cfg, "device", "peak_tflops");
	in.peak_bw_gbs = cfg_num(cfg, "device", "peak_bw_gbs");
	if (json_is_string(json_object_get(json_object_get(cfg, "run"), "mode")))
		in.mode = json_string_value(json_object_get(json_object_get(cfg, "run"), "mode"));
	if (!prof.n_devices && env && lp_rebuild_device_from_env(env, &env_dev) == 0)
		in.device = &env_dev;
	in.ncu = ncu.rows;
	in.n_ncu = ncu.n_rows;
	in.phases = phases;
	in.env = env;
	{
		/* the run id: the folder's last path component */
		struct lp_buf id = LP_BUF_INIT;
		const char *s = run_dir, *e = run_dir + strlen(run_dir);
		while (e > s && e[-1] == '/')
			e--;
		s = e;
		while (s > run_dir && s[-1] != '/')
			s--;
		lp_buf_add(&id, s, (size_t)(e - s));
		in.run_id = id.data;
		if (lp_analyze(&in, &a, err) == 0) {
			rc = lp_report_write_all(run_dir, &a, err);
			lp_analysis_release(&a);
		}
		lp_buf_release(&id);
	}
done:
	if (have_ncu)
		lp_kernel_table_release(&ncu);
	if (have_prof)
		lp_profile_release(&prof);
	free(phases);
	if (cfg)
		json_decref(cfg);
	if (env)
		json_decref(env);
	lp_buf_release(&path);
	return rc;
}
