/* provenance.c: env.json, config.yaml and inputs.yaml, the first artifacts of every run (phase
 * "provenance"), so a run can be understood and repeated from its folder alone. The GPU and
 * CUDA part is in prov_gpu.c. */
#include "collect/provenance.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "config/yaml.h"
#include "core/fs.h"
#include "core/proc.h"
#include "core/sha256.h"

/* Environment variables that change what a CUDA program or a profiler does. */
static const char *const env_vars[] = {
	"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_MODULE_LOADING",
	"CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "NSYS_NVTX_PROFILER_REGISTER_ONLY",
	"NVIDIA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "LD_PRELOAD", "PATH", "OMP_NUM_THREADS",
	"MKL_NUM_THREADS", "CUBLAS_WORKSPACE_CONFIG", "PYTORCH_CUDA_ALLOC_CONF", "TORCH_CUDA_ARCH_LIST",
	"HF_HOME", "TRANSFORMERS_OFFLINE", "LLMPROF_CONF_DIR",
};

/* Value of `key=value` / `key="value"` in an os-release style file, NULL when absent. */
static json_t *os_release_value(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *p = text;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t n = eol ? (size_t)(eol - p) : strlen(p);
		if (n > kl && !strncmp(p, key, kl) && p[kl] == '=') {
			const char *v = p + kl + 1, *e = p + n;
			if (e > v && (*v == '"' || *v == '\'') && e[-1] == *v && e - v >= 2) {
				v++;
				e--;
			}
			return json_stringn(v, (size_t)(e - v));
		}
		p = eol ? eol + 1 : NULL;
	}
	return NULL;
}

static json_t *os_info(void)
{
	struct lp_buf text = LP_BUF_INIT;
	struct utsname u;
	json_t *os = json_object(), *v;
	static const char *const keys[] = { "PRETTY_NAME", "ID", "VERSION_ID" };
	static const char *const names[] = { "name", "id", "version_id" };
	size_t i;
	if (lp_fs_read_file("/etc/os-release", &text, 1 << 16, NULL) == 0 ||
	    lp_fs_read_file("/usr/lib/os-release", &text, 1 << 16, NULL) == 0) {
		for (i = 0; i < 3; i++)
			if ((v = os_release_value(text.data, keys[i])) != NULL)
				json_object_set_new(os, names[i], v);
	}
	lp_buf_release(&text);
	if (uname(&u) == 0) {
		json_object_set_new(os, "kernel", json_string(u.sysname));
		json_object_set_new(os, "kernel_release", json_string(u.release));
		json_object_set_new(os, "kernel_version", json_string(u.version));
		json_object_set_new(os, "machine", json_string(u.machine));
	}
	return os;
}

static json_t *cpu_info(void)
{
	struct lp_buf text = LP_BUF_INIT;
	json_t *cpu = json_object();
	cpu_set_t set;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	if (lp_fs_read_file("/proc/cpuinfo", &text, 8u << 20, NULL) == 0) {
		const char *m = strstr(text.data, "model name");
		const char *colon = m ? strchr(m, ':') : NULL;
		if (colon) {
			const char *e = strchr(colon, '\n');
			colon++;
			while (*colon == ' ' || *colon == '\t')
				colon++;
			json_object_set_new(cpu, "model", json_stringn(colon, e ? (size_t)(e - colon) : strlen(colon)));
		}
	}
	lp_buf_release(&text);
	if (!json_object_get(cpu, "model"))
		json_object_set_new(cpu, "model", json_null());
	json_object_set_new(cpu, "logical_cores", online > 0 ? json_integer(online) : json_null());
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		json_object_set_new(cpu, "usable_cores", json_integer(CPU_COUNT(&set)));
	return cpu;
}

/* (provenance.h) Where the clock source cannot be read in user space (a virtual machine's
 * without a stable TSC, some sandboxes) each read is a system call. */
json_t *lp_prov_clock(void)
{
	struct lp_buf text = LP_BUF_INIT;
	struct timespec t;
	long n = 0, i;
	double t0, s = 0;
	json_t *c = json_object();
	if (lp_fs_read_file("/sys/devices/system/clocksource/clocksource0/current_clocksource", &text, 256, NULL) == 0) {
		size_t len = strcspn(text.data, " \n");
		json_object_set_new(c, "source", len ? json_stringn(text.data, len) : json_null());
	} else {
		json_object_set_new(c, "source", json_null());
	}
	lp_buf_release(&text);
	t0 = lp_mono_s();
	do {
		for (i = 0; i < 1000; i++)
			clock_gettime(CLOCK_REALTIME, &t);
		n += 1000;
		s = lp_mono_s() - t0;
	} while (n < 100000 && s < 0.02);
	json_object_set_new(c, "realtime_read_ns", json_integer((json_int_t)floor(s / (double)n * 1e9 + 0.5)));
	json_object_set_new(c, "slow", json_boolean(s / (double)n * 1e9 > LP_SLOW_CLOCK_NS));
	return c;
}

static json_t *memory_info(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return json_pack("{s:o}", "total_bytes",
		pages > 0 && size > 0 ? json_integer((json_int_t)pages * size) : json_null());
}

/* The value with $HOME written as "~" (/home/ann/.local/bin -> ~/.local/bin): env.json travels
 * with a run folder, and a user's home path says who ran it, not how. */
static json_t *redact_home(const char *v)
{
	const char *home = getenv("HOME"), *p;
	size_t n = home ? strlen(home) : 0;
	struct lp_buf b = LP_BUF_INIT;
	json_t *j;
	while (n > 1 && home[n - 1] == '/')
		n--;
	if (n <= 1)
		return json_string(v);
	for (p = v; *p;) {
		if (!strncmp(p, home, n) && (p[n] == '/' || p[n] == ':' || !p[n]) && (p == v || p[-1] == ':')) {
			lp_buf_addc(&b, '~');
			p += n;
		} else {
			lp_buf_addc(&b, *p++);
		}
	}
	j = json_string(b.data);
	lp_buf_release(&b);
	return j;
}

int lp_prov_env(const json_t *tools, json_t **out, struct lp_err *err)
{
	char host[256] = "", now[32];
	time_t t = time(NULL);
	struct tm tm;
	json_t *env, *vars;
	size_t i;
	*out = NULL;
	gethostname(host, sizeof(host) - 1);
	gmtime_r(&t, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	env = json_pack("{s:i, s:s, s:s, s:o, s:o, s:o, s:o}", "schema_version", 1, "collected_at", now,
		"host", host, "os", os_info(), "cpu", cpu_info(), "clock", lp_prov_clock(), "memory", memory_info());
	vars = json_object();
	if (!env || !vars) {
		json_decref(env);
		json_decref(vars);
		return lp_oom(err);
	}
	if (lp_prov_gpus(env, err) < 0) {
		json_decref(env);
		json_decref(vars);
		return -1;
	}
	json_object_set_new(env, "llmprof", json_pack("{s:s, s:s}", "version", lp_version_string(),
		"commit", lp_version_commit()));
	json_object_set_new(env, "tools", tools ? json_deep_copy(tools) : json_object());
	for (i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++) {
		const char *v = getenv(env_vars[i]);
		json_object_set_new(vars, env_vars[i], v ? redact_home(v) : json_null());
	}
	json_object_set_new(env, "environment", vars);
	*out = env;
	return 0;
}

/* ---- inputs.yaml ---- */

static int listed(const json_t *files, const char *path)
{
	size_t i;
	json_t *f;
	json_array_foreach(files, i, f)
		if (!strcmp(json_string_value(json_object_get(f, "path")), path))
			return 1;
	return 0;
}

static int add_path(json_t *files, const char *path, size_t argv_index, struct lp_err *err)
{
	int64_t size = lp_fs_size(path);
	char sha[65];
	json_t *f;
	if (!lp_fs_is_file(path) || listed(files, path))
		return 0;
	f = json_pack("{s:s, s:I, s:I}", "path", path, "argv_index", (json_int_t)argv_index,
		"size_bytes", (json_int_t)size);
	if (!f)
		return lp_oom(err);
	if ((uint64_t)size > LP_PROV_HASH_MAX_BYTES) {
		json_object_set_new(f, "sha256", json_null());
		json_object_set_new(f, "sha256_skipped", json_string("larger than 1 GiB"));
	} else if (lp_sha256_file_hex(path, sha, err) < 0) {
		json_decref(f);
		return -1;
	} else {
		json_object_set_new(f, "sha256", json_string(sha));
	}
	return json_array_append_new(files, f) == 0 ? 0 : lp_oom(err);
}

/* An argv word naming a file; argv[0] without a '/' is looked up on PATH, as exec does. */
static int add_file(json_t *files, const char *word, size_t argv_index, struct lp_err *err)
{
	struct lp_buf found = LP_BUF_INIT;
	int rc;
	if (argv_index == 0 && !strchr(word, '/') && lp_fs_which(word, &found) == 0)
		rc = add_path(files, found.data, argv_index, err);
	else
		rc = add_path(files, word, argv_index, err);
	lp_buf_release(&found);
	return rc;
}

int lp_prov_inputs(const char *const *argv, size_t argc, const struct lp_config *cfg, json_t **out,
	struct lp_err *err)
{
	json_t *in, *args = json_array(), *files = json_array(), *ovr;
	char cwd[4096];
	size_t i;
	*out = NULL;
	if (!args || !files)
		goto oom;
	for (i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		if (json_array_append_new(args, json_string(argv[i])) < 0)
			goto oom;
		/* a file is named by the word itself, or after '=' in --opt=FILE / key=FILE */
		if (add_file(files, argv[i], i, err) < 0 || (eq && add_file(files, eq + 1, i, err) < 0)) {
			json_decref(args);
			json_decref(files);
			return -1;
		}
	}
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	ovr = cfg && cfg->overrides ? json_deep_copy(cfg->overrides) : json_array();
	in = json_pack("{s:{s:o, s:s}, s:o, s:o}", "workload", "argv", args, "cwd", cwd, "files", files,
		"overrides", ovr);
	if (!in)
		return lp_oom(err);
	*out = in;
	return 0;
oom:
	json_decref(args);
	json_decref(files);
	return lp_oom(err);
}

static int dump_to_buf(const char *data, size_t len, void *b)
{
	return lp_buf_add(b, data, len);
}

static int write_yaml(struct lp_rundir *rd, const char *rel, const char *header, const json_t *v,
	struct lp_err *err)
{
	struct lp_buf text = LP_BUF_INIT;
	int rc;
	lp_buf_adds(&text, header);
	rc = lp_yaml_dump(v, &text, err);
	if (rc == 0)
		rc = lp_rundir_write(rd, rel, text.data, text.len, "provenance", err);
	lp_buf_release(&text);
	return rc;
}

int lp_prov_write(struct lp_rundir *rd, const struct lp_config *cfg, const char *const *argv,
	size_t argc, const json_t *tools, struct lp_err *err)
{
	json_t *env = NULL, *inputs = NULL;
	struct lp_buf text = LP_BUF_INIT;
	int rc = -1;
	if (write_yaml(rd, "config.yaml", "# llmprof: the resolved configuration of this run\n",
		    cfg->root, err) < 0 ||
	    lp_prov_env(tools, &env, err) < 0)
		goto out;
	if (json_dump_callback(env, dump_to_buf, &text, JSON_INDENT(2)) < 0 || lp_buf_addc(&text, '\n') < 0) {
		lp_oom(err);
		goto out;
	}
	if (lp_rundir_write(rd, "env.json", text.data, text.len, "provenance", err) < 0 ||
	    lp_prov_inputs(argv, argc, cfg, &inputs, err) < 0 ||
	    write_yaml(rd, "inputs.yaml", "# llmprof: the workload command and the files it names\n",
		    inputs, err) < 0)
		goto out;
	rc = 0;
out:
	lp_buf_release(&text);
	json_decref(env);
	json_decref(inputs);
	return rc;
}
