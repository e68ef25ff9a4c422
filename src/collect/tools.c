/* tools.c: finding nsys/ncu, their versions, the GPUs and the permissions a run needs (see
 * tools.h). `llmprof check` prints it; the run writes it into env.json and stops early (exit 4)
 * when the requested mode cannot run. */
#include "collect/tools.h"

#include <ctype.h>
#include <dlfcn.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/proc.h"

static const char *cuda_root(const struct lp_tools_opts *o)
{
	const char *e = getenv("CUDA_HOME");
	if (o && o->cuda_root)
		return o->cuda_root;
	return e && *e ? e : "/usr/local/cuda";
}

static int executable(const char *p)
{
	return lp_fs_is_file(p) && access(p, X_OK) == 0;
}

/* The last (newest, by sorted name) executable match of a glob pattern. */
static int glob_last(const char *pattern, char *out, size_t cap)
{
	glob_t g;
	size_t i;
	int found = 0;
	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	for (i = g.gl_pathc; i-- > 0;) {
		if (executable(g.gl_pathv[i])) {
			snprintf(out, cap, "%s", g.gl_pathv[i]);
			found = 1;
			break;
		}
	}
	globfree(&g);
	return found;
}

/* Marks the tool found (its path already in t->path) and says where; returns 0. */
static int mark_found(struct lp_tool *t, const char *via)
{
	t->found_via = via;
	t->found = 1;
	return 0;
}

int lp_tools_find(const char *name, const struct lp_tools_opts *o, struct lp_tool *t)
{
	const char *cfg = !strcmp(name, "nsys") ? (o ? o->nsys_path : NULL) : (o ? o->ncu_path : NULL);
	const char *opt = o && o->opt_root ? o->opt_root : "/opt/nvidia";
	const char *cuda = cuda_root(o);
	struct lp_buf b = LP_BUF_INIT;
	char pat[LP_PATH_CAP];
	memset(t, 0, sizeof(*t));
	t->name = !strcmp(name, "nsys") ? "nsys" : "ncu";
	t->found_via = "";
	if (cfg && *cfg) {
		if (executable(cfg)) {
			snprintf(t->path, sizeof(t->path), "%s", cfg);
			return mark_found(t, "config");
		}
		snprintf(t->problem, sizeof(t->problem), "configured tools.%s '%s' is not an executable file", t->name, cfg);
		return -1;
	}
	if (lp_fs_which(name, &b) == 0) {
		snprintf(t->path, sizeof(t->path), "%s", b.data);
		lp_buf_release(&b);
		return mark_found(t, "PATH");
	}
	lp_buf_release(&b);
	if (!strcmp(name, "nsys")) {
		const char *pats[][2] = {
			{ "/nsight-systems*/*/bin/nsys", "/opt/nvidia" },
			{ "/nsight-systems*/bin/nsys", "/opt/nvidia" },
			{ "/nsight-compute/*/host/target-linux-x64/nsys", "ncu bundle" },
			{ "/nsight-compute*/host/target-linux-x64/nsys", "ncu bundle" },
		};
		size_t i;
		for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
			snprintf(pat, sizeof(pat), "%s%s", opt, pats[i][0]);
			if (glob_last(pat, t->path, sizeof(t->path)))
				return mark_found(t, pats[i][1]);
		}
		snprintf(pat, sizeof(pat), "%s/nsight-systems*/bin/nsys", cuda);
		if (glob_last(pat, t->path, sizeof(t->path)))
			return mark_found(t, "cuda");
	} else {
		snprintf(pat, sizeof(pat), "%s/nsight-compute*/*/ncu", opt);
		if (!glob_last(pat, t->path, sizeof(t->path)))
			snprintf(pat, sizeof(pat), "%s/nsight-compute*/ncu", opt);
		if (t->path[0] || glob_last(pat, t->path, sizeof(t->path)))
			return mark_found(t, "/opt/nvidia");
		snprintf(pat, sizeof(pat), "%s/nsight-compute*/ncu", cuda);
		if (glob_last(pat, t->path, sizeof(t->path)))
			return mark_found(t, "cuda");
	}
	snprintf(pat, sizeof(pat), "%s/bin/%s", cuda, name);
	if (executable(pat)) {
		snprintf(t->path, sizeof(t->path), "%s", pat);
		return mark_found(t, "cuda");
	}
	snprintf(t->problem, sizeof(t->problem), "%s not found on PATH, in %s/nsight-* or %s/bin", name, opt, cuda);
	return -1;
}

int lp_tools_parse_version(const char *text, char *out, size_t cap)
{
	const char *p = text;
	while ((p = strstr(p, "ersion")) != NULL) {
		const char *q = p + 6;
		size_t n = 0;
		if (p > text && (p[-1] == 'V' || p[-1] == 'v')) {
			while (*q == ' ' || *q == ':')
				q++;
			if (isdigit((unsigned char)*q)) {
				while (q[n] && (isdigit((unsigned char)q[n]) || q[n] == '.'))
					n++;
				while (n && q[n - 1] == '.')
					n--;
				snprintf(out, cap, "%.*s", (int)n, q);
				return 0;
			}
		}
		p += 6;
	}
	return -1;
}

/* ---- short queries (--version, --list-sections) ---- */

int lp_tools_query(struct lp_proc_spec *s, size_t max_bytes, struct lp_buf *out, struct lp_proc_result *r,
	struct lp_err *err)
{
	static const struct lp_proc_env env[] = { { "LC_ALL", "C" } };
	char dir[] = "/tmp/llmprof-query-XXXXXX", log[64];
	int rc;
	lp_buf_reset(out);
	if (!mkdtemp(dir))
		return lp_err_set(err, LP_EIO, "cannot create a temporary folder");
	snprintf(log, sizeof(log), "%s/out", dir);
	s->env = env;
	s->n_env = 1;
	s->stdout_path = log;
	s->stderr_path = log;
	rc = lp_proc_run(s, r, err);
	s->stdout_path = s->stderr_path = NULL;   /* the folder is gone */
	if (rc == 0)
		lp_fs_read_file(log, out, max_bytes, NULL);   /* what it printed, if anything: the caller judges */
	unlink(log);
	rmdir(dir);
	return rc;
}

int lp_tools_write_cmds(const char *out_dir, const struct lp_buf *cmds, int rc, struct lp_err *err)
{
	struct lp_err later = LP_ERR_INIT;
	struct lp_buf path = LP_BUF_INIT;
	if (!cmds->len)
		return rc;
	if (lp_fs_join(&path, out_dir, "cmd.txt") < 0 ||
	    lp_fs_write_atomic(path.data, cmds->data, cmds->len, rc == 0 ? err : &later) < 0) {
		if (path.oom)
			lp_oom(rc == 0 ? err : &later);
		rc = -1;
	}
	lp_buf_release(&path);
	return rc;
}

int lp_tools_probe_version(struct lp_tool *t, double timeout_s, struct lp_err *err)
{
	const char *argv[] = { t->path, "--version", NULL };
	struct lp_proc_spec s;
	struct lp_proc_result r;
	struct lp_buf out = LP_BUF_INIT;
	int rc = -1;
	memset(&s, 0, sizeof(s));
	s.argv = argv;
	s.timeout_s = timeout_s > 0 ? timeout_s : 30;
	s.grace_s = 1;
	if (lp_tools_query(&s, 1 << 16, &out, &r, err) == 0) {
		if (r.exited && r.exit_code == 0 && lp_tools_parse_version(out.data, t->version, sizeof(t->version)) == 0) {
			rc = 0;
		} else {
			struct lp_buf d = LP_BUF_INIT;
			lp_proc_describe(&r, &s, &d);
			snprintf(t->problem, sizeof(t->problem), "'%.80s --version' failed (%.40s): %.100s", t->path, d.data, out.data);
			lp_buf_release(&d);
			lp_err_set(err, LP_EENV, "%s", t->problem);
		}
	} else {
		snprintf(t->problem, sizeof(t->problem), "%.250s", err ? err->msg : "cannot run");
	}
	lp_buf_release(&out);
	return rc;
}

/* ---- GPUs ---- */

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_count_fn)(unsigned *);
typedef int (*nvml_handle_fn)(unsigned, void **);
typedef int (*nvml_name_fn)(void *, char *, unsigned);
typedef int (*nvml_driver_fn)(char *, unsigned);
struct nvml_memory { unsigned long long total, free, used; };
typedef int (*nvml_mem_fn)(void *, struct nvml_memory *);

#define SYM(h, name) ((void *)(uintptr_t)dlsym((h), (name)))

static int gpus_from_nvml(struct lp_tools *t)
{
	void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	nvml_init_fn init;
	nvml_count_fn count;
	nvml_handle_fn handle;
	nvml_name_fn name, uuid;
	nvml_driver_fn driver;
	nvml_mem_fn mem;
	int (*shutdown)(void);
	unsigned n = 0, i;
	if (!h) {
		snprintf(t->gpu_problem, sizeof(t->gpu_problem), "libnvidia-ml.so.1 not loadable (no NVIDIA driver?)");
		return -1;
	}
	*(void **)&init = SYM(h, "nvmlInit_v2");
	*(void **)&count = SYM(h, "nvmlDeviceGetCount_v2");
	*(void **)&handle = SYM(h, "nvmlDeviceGetHandleByIndex_v2");
	*(void **)&name = SYM(h, "nvmlDeviceGetName");
	*(void **)&uuid = SYM(h, "nvmlDeviceGetUUID");
	*(void **)&driver = SYM(h, "nvmlSystemGetDriverVersion");
	*(void **)&mem = SYM(h, "nvmlDeviceGetMemoryInfo");
	*(void **)&shutdown = SYM(h, "nvmlShutdown");
	if (!init || !count || !handle || !name || init() != 0) {
		snprintf(t->gpu_problem, sizeof(t->gpu_problem), "NVML did not initialize (driver not loaded?)");
		dlclose(h);
		return -1;
	}
	if (driver)
		driver(t->driver_version, sizeof(t->driver_version));
	if (count(&n) != 0)
		n = 0;
	for (i = 0; i < n && t->n_gpus < LP_TOOLS_MAX_GPUS; i++) {
		struct lp_gpu *g = &t->gpus[t->n_gpus];
		void *dev;
		struct nvml_memory m;
		if (handle(i, &dev) != 0)
			continue;
		memset(g, 0, sizeof(*g));
		g->index = (int)i;
		name(dev, g->name, sizeof(g->name));
		if (uuid)
			uuid(dev, g->uuid, sizeof(g->uuid));
		if (mem && mem(dev, &m) == 0)
			g->mem_bytes = m.total;
		t->n_gpus++;
	}
	if (shutdown)
		shutdown();
	dlclose(h);
	t->gpu_source = "nvml";
	if (!t->n_gpus)
		snprintf(t->gpu_problem, sizeof(t->gpu_problem), "NVML sees no GPU");
	return t->n_gpus ? 0 : -1;
}

static void gpus_from_smi(struct lp_tools *t, double timeout_s)
{
	char dir[] = "/tmp/llmprof-smi-XXXXXX", log[64];
	const char *argv[] = { "nvidia-smi", "--query-gpu=index,name,driver_version,memory.total,uuid",
		"--format=csv,noheader,nounits", NULL };
	struct lp_proc_env env[] = { { "LC_ALL", "C" } };
	struct lp_proc_spec s;
	struct lp_proc_result r;
	struct lp_buf out = LP_BUF_INIT;
	char *line, *save = NULL;
	if (!mkdtemp(dir))
		return;
	snprintf(log, sizeof(log), "%s/out", dir);
	memset(&s, 0, sizeof(s));
	s.argv = argv;
	s.env = env;
	s.n_env = 1;
	s.stdout_path = log;
	s.timeout_s = timeout_s;
	s.grace_s = 1;
	if (lp_proc_run(&s, &r, NULL) == 0 && r.exited && r.exit_code == 0 &&
			lp_fs_read_file(log, &out, 1 << 16, NULL) == 0) {
		for (line = strtok_r(out.data, "\n", &save); line && t->n_gpus < LP_TOOLS_MAX_GPUS;
				line = strtok_r(NULL, "\n", &save)) {
			struct lp_gpu *g = &t->gpus[t->n_gpus];
			char name[128] = "", drv[64] = "", uuid[96] = "";
			int idx;
			double mib = 0;
			if (sscanf(line, "%d, %127[^,], %63[^,], %lf, %95s", &idx, name, drv, &mib, uuid) < 3)
				continue;
			memset(g, 0, sizeof(*g));
			g->index = idx;
			snprintf(g->name, sizeof(g->name), "%s", name);
			snprintf(g->uuid, sizeof(g->uuid), "%s", uuid);
			g->mem_bytes = (unsigned long long)(mib * 1048576.0);
			snprintf(t->driver_version, sizeof(t->driver_version), "%s", drv);
			t->n_gpus++;
		}
		if (t->n_gpus) {
			t->gpu_source = "nvidia-smi";
			t->gpu_problem[0] = '\0';
		}
	}
	unlink(log);
	rmdir(dir);
	lp_buf_release(&out);
}

/* ---- the rest ---- */

static void check_counters(struct lp_tools *t)
{
	struct lp_buf b = LP_BUF_INIT;
	const char *p;
	t->is_root = geteuid() == 0;
	t->counters_admin_only = -1;
	if (lp_fs_read_file("/proc/driver/nvidia/params", &b, 1 << 20, NULL) == 0 &&
			(p = strstr(b.data, "RmProfilingAdminOnly:")) != NULL)
		t->counters_admin_only = (int)strtol(p + strlen("RmProfilingAdminOnly:"), NULL, 10);
	lp_buf_release(&b);
	if (t->counters_admin_only == 1 && !t->is_root)
		snprintf(t->counters_problem, sizeof(t->counters_problem), "%s", LP_NVGPUCTRPERM_FIX);
}

static void find_cupti(struct lp_tools *t, const struct lp_tools_opts *o)
{
	const char *cuda = cuda_root(o);
	const char *pats[] = { "/extras/CUPTI/lib64/libcupti.so*", "/targets/x86_64-linux/lib/libcupti.so*",
		"/lib64/libcupti.so*", "/targets/sbsa-linux/lib/libcupti.so*" };
	size_t i;
	char pat[LP_PATH_CAP];
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		glob_t g;
		snprintf(pat, sizeof(pat), "%s%s", cuda, pats[i]);
		if (glob(pat, 0, NULL, &g) == 0) {
			snprintf(t->cupti_path, sizeof(t->cupti_path), "%s", g.gl_pathv[g.gl_pathc - 1]);
			globfree(&g);
			return;
		}
	}
	{
		void *h = dlopen("libcupti.so", RTLD_LAZY | RTLD_LOCAL);
		if (h) {
			snprintf(t->cupti_path, sizeof(t->cupti_path), "libcupti.so (on the loader path)");
			dlclose(h);
		}
	}
}

int lp_tools_nsys_ld_path(const char *lib_dir, struct lp_buf *out)
{
	const char *old = getenv("LD_LIBRARY_PATH");
	lp_buf_reset(out);
	if (lib_dir && *lib_dir)
		lp_buf_addf(out, "%s%s", lib_dir, old && *old ? ":" : "");
	if (old && *old)
		lp_buf_adds(out, old);
	return out->oom ? -1 : 0;
}

/* Loads `name` the way the dynamic loader resolves it for nsys: from the folders of `ld_path`
 * in order (the LD_LIBRARY_PATH nsys gets), else from the default paths. Keeps it loaded in *h
 * (libdw.so.1 needs libelf.so.1 by soname: loading libelf first lets libdw find that copy).
 * `where` gets the folder it came from ("" for the default paths). */
static int load_like_nsys(const char *ld_path, const char *name, void **h, char *where, size_t cap)
{
	const char *p = ld_path;
	struct lp_buf cand = LP_BUF_INIT;
	*h = NULL;
	where[0] = '\0';
	while (p && *p && !*h) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n) {
			lp_buf_reset(&cand);
			lp_buf_addf(&cand, "%.*s/%s", (int)n, p, name);
			if (lp_fs_is_file(cand.data) && (*h = dlopen(cand.data, RTLD_LAZY | RTLD_LOCAL)) != NULL)
				snprintf(where, cap, "%.*s", (int)n, p);
		}
		p = e ? e + 1 : NULL;
	}
	lp_buf_release(&cand);
	if (!*h)
		*h = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
	return *h != NULL;
}

void lp_tools_check_importer(struct lp_tools *t, const char *lib_dir)
{
	struct lp_buf ld = LP_BUF_INIT;
	char elf_at[LP_PATH_CAP], dw_at[LP_PATH_CAP];
	void *elf = NULL, *dw = NULL;
	int elf_ok, dw_ok;
	lp_tools_nsys_ld_path(lib_dir, &ld);
	elf_ok = load_like_nsys(ld.data, "libelf.so.1", &elf, elf_at, sizeof(elf_at));
	dw_ok = load_like_nsys(ld.data, "libdw.so.1", &dw, dw_at, sizeof(dw_at));
	t->nsys_importer_ok = elf_ok && dw_ok;
	if (t->nsys_importer_ok && (dw_at[0] || elf_at[0]))
		snprintf(t->importer_where, sizeof(t->importer_where), "%s", dw_at[0] ? dw_at : elf_at);
	if (!t->nsys_importer_ok)
		snprintf(t->importer_problem, sizeof(t->importer_problem),
			"%s not loadable%s%s%s: nsys would leave only a .qdstrm; install libdw1 and libelf1, or set "
			"tools.nsys_lib_dir to a folder holding libdw.so.1 and libelf.so.1",
			dw_ok ? "libelf.so.1" : "libdw.so.1", lib_dir ? " (looked in tools.nsys_lib_dir '" : "",
			lib_dir ? lib_dir : "", lib_dir ? "' first)" : "");
	if (dw)
		dlclose(dw);
	if (elf)
		dlclose(elf);
	lp_buf_release(&ld);
}

void lp_tools_detect(const struct lp_tools_opts *o, struct lp_tools *t)
{
	double timeout = o && o->timeout_s > 0 ? o->timeout_s : 30;
	memset(t, 0, sizeof(*t));
	t->gpu_source = "";
	if (!(o && o->skip_gpu) && gpus_from_nvml(t) < 0)
		gpus_from_smi(t, timeout);
	if (o && o->skip_gpu)
		snprintf(t->gpu_problem, sizeof(t->gpu_problem), "not probed");
	lp_tools_find("nsys", o, &t->nsys);
	lp_tools_find("ncu", o, &t->ncu);
	if (o && o->probe_versions) {
		if (t->nsys.found)
			lp_tools_probe_version(&t->nsys, timeout, NULL);
		if (t->ncu.found)
			lp_tools_probe_version(&t->ncu, timeout, NULL);
	}
	lp_tools_check_importer(t, o ? o->nsys_lib_dir : NULL);
	check_counters(t);
	find_cupti(t, o);
	if (o && o->exe_dir) {
		snprintf(t->inject_expected, sizeof(t->inject_expected), "%s/../lib/libllmprof_inject.so", o->exe_dir);
		if (lp_fs_is_file(t->inject_expected))
			snprintf(t->inject_path, sizeof(t->inject_path), "%s", t->inject_expected);
	}
}

int lp_tools_mode_ok(const struct lp_tools *t, const char *mode, int with_nsys, struct lp_buf *why)
{
	int ok = 1;
#define NEED(cond, ...) do { if (!(cond)) { if (why) { if (why->len) lp_buf_adds(why, "; "); lp_buf_addf(why, __VA_ARGS__); } ok = 0; } } while (0)
	NEED(t->n_gpus > 0, "no usable NVIDIA GPU (%s)", t->gpu_problem[0] ? t->gpu_problem : "none found");
	NEED(t->cupti_path[0], "CUPTI (libcupti.so) not found");
	NEED(t->inject_path[0], "the tracer library '%s' is missing (build it: make build)", t->inject_expected);
	if (with_nsys) {
		NEED(t->nsys.found, "%s", t->nsys.problem);
		NEED(t->nsys_importer_ok || !t->nsys.found, "nsys importer: %s", t->importer_problem);
	}
	if (!strcmp(mode, "deep")) {
		NEED(t->ncu.found, "%s", t->ncu.problem);
		NEED(!t->counters_problem[0], "%s", t->counters_problem);
	}
#undef NEED
	return ok;
}

int lp_tools_cuda_built(void)
{
#ifdef LP_HAVE_CUDA_BUILD
	return 1;
#else
	return 0;
#endif
}

void lp_tools_outlook(const struct lp_tools *t, const char *mode, const char *device, int with_nsys, int reference,
	struct lp_run_outlook *o)
{
	struct lp_buf why = LP_BUF_INIT;
	const char *cpu_why = NULL;
	int deep = mode && !strcmp(mode, "deep");
	memset(o, 0, sizeof(*o));
	if (device && !strcmp(device, "cpu"))
		cpu_why = "run.device=cpu";
	else if (t->n_gpus == 0)
		cpu_why = t->gpu_problem[0] ? t->gpu_problem : "no NVIDIA GPU found";
	else if (reference && !lp_tools_cuda_built())
		cpu_why = "llmprof-llm was built without its CUDA path (no nvcc at configure time)";
	o->gpu_run = !cpu_why;
#define NEED(cond, ...) do { if (!(cond)) { if (why.len) lp_buf_adds(&why, "; "); lp_buf_addf(&why, __VA_ARGS__); } } while (0)
	NEED(t->inject_path[0], "the tracer library '%s' is missing (build it: make build)", t->inject_expected);
	if (with_nsys) {
		NEED(t->nsys.found && !t->nsys.problem[0], "nsys: %s", t->nsys.problem[0] ? t->nsys.problem : "not found");
		NEED(t->nsys_importer_ok || !t->nsys.found, "nsys importer: %s", t->importer_problem);
	}
	if (deep && o->gpu_run) {
		NEED(t->ncu.found && !t->ncu.problem[0], "ncu: %s", t->ncu.problem[0] ? t->ncu.problem : "not found");
		NEED(!t->counters_problem[0], "%s", t->counters_problem);
	}
#undef NEED
	if (o->gpu_run)
		snprintf(o->what, sizeof(o->what), "GPU run: stages, operators and GPU kernels%s%s",
			deep ? ", ncu on the top kernels" : "", with_nsys ? ", nsys" : "");
	else
	{
		snprintf(o->cpu_why, sizeof(o->cpu_why), "%s", cpu_why);
		snprintf(o->what, sizeof(o->what), "CPU run: stages and operators, no GPU kernels (%s)", cpu_why);
	}
	snprintf(o->why, sizeof(o->why), "%s", why.len ? why.data : "");
	o->fail_kind = why.len ? LP_EENV : LP_OK;
	lp_buf_release(&why);
}

static json_t *tool_json(const struct lp_tool *t)
{
	return json_pack("{s:b,s:s?,s:s?,s:s?,s:s?}", "found", t->found, "path", t->found ? t->path : NULL,
		"found_via", t->found ? t->found_via : NULL, "version", t->version[0] ? t->version : NULL,
		"problem", t->problem[0] ? t->problem : NULL);
}

json_t *lp_tools_to_json(const struct lp_tools *t)
{
	json_t *o = json_object(), *gpus = json_array();
	int i;
	for (i = 0; i < t->n_gpus; i++)
		json_array_append_new(gpus, json_pack("{s:i,s:s,s:s,s:I}", "index", t->gpus[i].index, "name",
			t->gpus[i].name, "uuid", t->gpus[i].uuid, "mem_bytes", (json_int_t)t->gpus[i].mem_bytes));
	json_object_set_new(o, "gpus", gpus);
	json_object_set_new(o, "gpu_source", json_string(t->gpu_source));
	json_object_set_new(o, "driver_version", t->driver_version[0] ? json_string(t->driver_version) : json_null());
	if (t->gpu_problem[0])
		json_object_set_new(o, "gpu_problem", json_string(t->gpu_problem));
	json_object_set_new(o, "nsys", tool_json(&t->nsys));
	json_object_set_new(o, "ncu", tool_json(&t->ncu));
	json_object_set_new(o, "nsys_importer_ok", json_boolean(t->nsys_importer_ok));
	if (t->importer_where[0])
		json_object_set_new(o, "nsys_importer_dir", json_string(t->importer_where));
	json_object_set_new(o, "rm_profiling_admin_only",
		t->counters_admin_only < 0 ? json_null() : json_integer(t->counters_admin_only));
	json_object_set_new(o, "is_root", json_boolean(t->is_root));
	json_object_set_new(o, "cupti", t->cupti_path[0] ? json_string(t->cupti_path) : json_null());
	json_object_set_new(o, "tracer_library", t->inject_path[0] ? json_string(t->inject_path) : json_null());
	return o;
}
