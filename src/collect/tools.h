/* tools.h: what this machine can profile: GPUs and driver, nsys and ncu (where, which version),
 * whether the nsys importer works, performance-counter permission, CUPTI and our tracer library.
 *
 * Lookup order for nsys and ncu: the configured path (config `tools.nsys` / `tools.ncu`), PATH,
 * /opt/nvidia/nsight-systems[-VER]/VER/bin (nsys), /opt/nvidia/nsight-compute/<ver>/ (ncu, and the
 * nsys that ships inside it at host/target-linux-x64/nsys), then the CUDA bin folder. Among
 * several versions in one pattern the newest (sorted last) wins. Versions come from
 * `<tool> --version` (run through core/proc.h with LC_ALL=C and a timeout).
 *
 * GPUs come from NVML (libnvidia-ml.so.1 through dlopen), else from `nvidia-smi`. Nothing here
 * needs a GPU to run: on a machine without one every probe says why not.
 *
 * Ownership: struct lp_tools is plain data (fixed buffers); lp_tools_to_json returns a new
 * reference. Not thread-safe (runs child processes). Never prints.
 *
 *   struct lp_tools t;
 *   struct lp_tools_opts o = { .exe_dir = ctx->exe_dir, .probe_versions = 1 };
 *   lp_tools_detect(&o, &t);
 *   if (!lp_tools_mode_ok(&t, "deep", 0, &why)) ...
 */
#ifndef LP_COLLECT_TOOLS_H
#define LP_COLLECT_TOOLS_H

#include <jansson.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/proc.h"

#define LP_TOOLS_MAX_GPUS 16
#define LP_PATH_CAP 1024

struct lp_tool {
	const char *name;                 /* "nsys", "ncu" */
	int found;
	char path[LP_PATH_CAP];
	const char *found_via;            /* "config", "PATH", "/opt/nvidia", "ncu bundle", "cuda" */
	char version[128];                /* "2025.3.1.0"; "" when --version failed */
	char problem[256];                /* why it cannot be used; "" when fine */
};

struct lp_gpu {
	int index;
	char name[128];
	char uuid[96];
	unsigned long long mem_bytes;
};

struct lp_tools {
	int n_gpus;
	struct lp_gpu gpus[LP_TOOLS_MAX_GPUS];
	char driver_version[64];
	const char *gpu_source;           /* "nvml", "nvidia-smi", "" */
	char gpu_problem[256];

	struct lp_tool nsys, ncu;

	int nsys_importer_ok;             /* libdw.so.1 and libelf.so.1 loadable */
	char importer_problem[256];
	char importer_where[LP_PATH_CAP]; /* where they were found: tools.nsys_lib_dir or the loader path */

	int counters_admin_only;          /* RmProfilingAdminOnly: 1, 0, or -1 unknown */
	int is_root;
	char counters_problem[384];       /* the ERR_NVGPUCTRPERM fix when it applies */

	char cupti_path[LP_PATH_CAP];     /* "" not found */
	char inject_path[LP_PATH_CAP];    /* our tracer library; "" not found */
	char inject_expected[LP_PATH_CAP];
};

struct lp_tools_opts {
	const char *nsys_path;            /* config tools.nsys (NULL: search) */
	const char *ncu_path;             /* config tools.ncu */
	const char *exe_dir;              /* folder of the llmprof binary (for ../lib) */
	const char *cuda_root;            /* NULL: $CUDA_HOME, else /usr/local/cuda */
	const char *opt_root;             /* NULL: /opt/nvidia (tests point it elsewhere) */
	int probe_versions;               /* run --version (0: only locate) */
	double timeout_s;                 /* per probe; 0: 30 */
	int skip_gpu;                     /* tests: do not touch NVML / nvidia-smi */
	const char *nsys_lib_dir;         /* config tools.nsys_lib_dir: the importer's libraries are
					     looked for there first, as `run` gives nsys (NULL: none) */
};

/* Never fails: every missing piece is recorded with its reason. */
void lp_tools_detect(const struct lp_tools_opts *o, struct lp_tools *t);

/* Finds one tool ("nsys" or "ncu") as lp_tools_detect does; 0 found, -1 not (t->problem says). */
int lp_tools_find(const char *name, const struct lp_tools_opts *o, struct lp_tool *t);
/* A tool's short query (`--version`, `--list-sections`): runs s->argv under LC_ALL=C (the caller
 * sets argv, timeout_s, grace_s; this sets env and the output paths) with stdout and stderr into a
 * temporary file, and reads what it printed into out (reset; at most max_bytes). 0 when it ran,
 * whatever its status (*r: the caller judges it, lp_proc_describe(r, s, ...) says it); -1 when it
 * could not be run. */
int lp_tools_query(struct lp_proc_spec *s, size_t max_bytes, struct lp_buf *out, struct lp_proc_result *r,
	struct lp_err *err);
/* Writes the commands a tool's run launched (`cmds`, one a line; nothing when empty) to
 * <out_dir>/cmd.txt. They are part of the artifacts: a failed write fails the run. `rc` is the
 * run's result so far (after an earlier failure, that one stays what err says); returns rc, or -1
 * when the write failed. */
int lp_tools_write_cmds(const char *out_dir, const struct lp_buf *cmds, int rc, struct lp_err *err);
/* Runs `<path> --version` and extracts the version number into t->version. */
int lp_tools_probe_version(struct lp_tool *t, double timeout_s, struct lp_err *err);
/* Pulls "2025.3.1.0" out of a --version text; 0 found. */
int lp_tools_parse_version(const char *text, char *out, size_t cap);

/* Can `mode` ("light" or "deep") run here? `with_nsys`: the nsys phase is enabled. When not,
 * `why` gets "; "-separated reasons. Returns 1 or 0. */
/* Sets nsys_importer_ok, importer_where and importer_problem: libelf.so.1 and libdw.so.1
 * loadable the way nsys will load them (lp_tools_nsys_ld_path(lib_dir) first). lp_tools_detect
 * calls it with opts->nsys_lib_dir. */
void lp_tools_check_importer(struct lp_tools *t, const char *lib_dir);
/* The LD_LIBRARY_PATH nsys runs with: tools.nsys_lib_dir (lib_dir) before ours; "" when neither.
 * `run` and `check` both use it, so check looks where run looks. */
int lp_tools_nsys_ld_path(const char *lib_dir, struct lp_buf *out);

int lp_tools_mode_ok(const struct lp_tools *t, const char *mode, int with_nsys, struct lp_buf *why);

/* What `llmprof run` will do on this machine, said the same way by `check`, `run --dry-run` and
 * `run` itself. `device` is run.device (NULL or "auto": the GPU when usable), `reference` 1 for
 * the built-in model (its CUDA path must have been built), 0 for a program after `--`.
 * fail_kind is the error kind the run will end with when every phase works: LP_OK, or LP_EENV
 * (environment; src/cmd/ turns kinds into exit statuses) when a requested phase cannot run here (the tracer library missing; nsys enabled but unusable;
 * deep mode on a GPU run without a usable ncu or with the counters denied). A CPU run of deep mode
 * exits 0: ncu has no GPU kernels to profile, so it is skipped, not failed. */
struct lp_run_outlook {
	int gpu_run;          /* GPU kernels will be recorded */
	int fail_kind;        /* enum lp_err_kind: LP_OK or LP_EENV */
	char what[384];       /* "CPU run: stages and operators, no GPU kernels (no NVIDIA GPU found)" */
	char cpu_why[288];    /* a CPU run: why ("run.device=cpu", "no NVIDIA GPU found", ...); else "" */
	char why[1024];       /* LP_EENV: "; "-separated reasons; else "" */
};
void lp_tools_outlook(const struct lp_tools *t, const char *mode, const char *device, int with_nsys, int reference,
	struct lp_run_outlook *o);
/* 1 when llmprof-llm was built with its CUDA path (nvcc found at configure time). */
int lp_tools_cuda_built(void);

/* For env.json: {"gpus": [...], "driver": ..., "nsys": {...}, "ncu": {...}, ...}. */
json_t *lp_tools_to_json(const struct lp_tools *t);

#define LP_NVGPUCTRPERM_FIX \
	"performance counters are restricted to admin users (ERR_NVGPUCTRPERM): run as root, or set " \
	"'options nvidia NVreg_RestrictProfilingToAdminUsers=0' in /etc/modprobe.d/ and reload the " \
	"driver (https://developer.nvidia.com/ERR_NVGPUCTRPERM)"

#endif
