/* rundir_list.c: the runs under artifacts.stage2_dir and the files of one run (see rundir.h):
 * what `llmprof runs` and `llmprof artifacts` print, and what artifacts.keep_last prunes. */
#include "collect/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fs.h"
#include "core/vec.h"

/* A "running" run whose process is gone (same host, pid not alive) was interrupted. */
static int process_gone(const json_t *m)
{
	char host[256] = "";
	const char *mhost = json_string_value(json_object_get(m, "host"));
	json_int_t pid = json_integer_value(json_object_get(m, "pid"));
	gethostname(host, sizeof(host) - 1);
	if (!mhost || strcmp(mhost, host) || pid <= 0)
		return 0;  /* another machine: cannot tell */
	return kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* A folder under the root whose manifest.json is missing or unreadable: listed as "damaged" with
 * the reason, never silently left out (nor pruned). */
static int damaged_info(const char *name, struct lp_buf *path, const struct lp_err *why, struct lp_run_info *info)
{
	struct lp_buf m = LP_BUF_INIT;
	lp_fs_join(&m, path->data, LP_RUNDIR_MANIFEST);
	if (!lp_fs_exists(m.data)) {
		lp_buf_reset(&m);
		lp_buf_adds(&m, "no " LP_RUNDIR_MANIFEST);
	} else {
		lp_buf_reset(&m);
		lp_buf_addf(&m, "corrupt %s: %s", LP_RUNDIR_MANIFEST, why->msg);
	}
	info->damaged = 1;
	info->id = strdup(name);
	info->path = lp_buf_detach(path, NULL);
	info->status = strdup("damaged");
	info->created_at = strdup("");
	info->problem = lp_buf_detach(&m, NULL);
	if (!info->id || !info->path || !info->status || !info->created_at || !info->problem) {
		lp_rundir_list_free(info, 1);
		return -1;
	}
	return 0;
}

static int read_info(const char *root, const char *name, struct lp_run_info *info)
{
	struct lp_rundir rd;
	struct lp_buf path = LP_BUF_INIT;
	struct lp_err why = LP_ERR_INIT;
	json_t *item;
	const char *status, *created;
	size_t i;
	memset(info, 0, sizeof(*info));
	if (lp_rundir_validate_id(name, NULL) < 0)
		return -1;
	lp_fs_join(&path, root, name);
	if (!lp_fs_is_dir(path.data)) {
		lp_buf_release(&path);
		return -1;
	}
	if (lp_rundir_open(&rd, path.data, &why) < 0)
		return damaged_info(name, &path, &why, info);
	status = json_string_value(json_object_get(rd.manifest, "status"));
	if (!status)
		status = "unknown";
	if (!strcmp(status, "running") && process_gone(rd.manifest))
		status = "interrupted";
	created = json_string_value(json_object_get(rd.manifest, "created_at"));
	info->id_matches = json_is_string(json_object_get(rd.manifest, "run_id")) &&
			   !strcmp(json_string_value(json_object_get(rd.manifest, "run_id")), name);
	info->id = strdup(name);
	info->path = lp_buf_detach(&path, NULL);
	info->status = strdup(status);
	info->created_at = strdup(created ? created : "");
	json_array_foreach(json_object_get(rd.manifest, "artifacts"), i, item) {
		info->n_artifacts++;
		info->total_bytes += (int64_t)json_integer_value(json_object_get(item, "size_bytes"));
	}
	lp_rundir_release(&rd);
	if (!info->id || !info->path || !info->status || !info->created_at) {
		lp_rundir_list_free(info, 1);
		return -1;
	}
	return 0;
}

static int newest_first(const void *pa, const void *pb)
{
	const struct lp_run_info *a = pa, *b = pb;
	int c = strcmp(b->created_at, a->created_at);
	return c ? c : strcmp(b->id, a->id);
}

int lp_rundir_list(const char *root, struct lp_run_info **out, size_t *n_out, struct lp_err *err)
{
	DIR *d;
	struct dirent *de;
	struct lp_run_info *runs = NULL;
	size_t n = 0, cap = 0;
	*out = NULL;
	*n_out = 0;
	d = opendir(root);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return lp_err_set(err, LP_EOTHER, "cannot open folder '%s': %s", root, strerror(errno));
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (LP_ARRAY_RESERVE(runs, cap, n + 1, err) < 0) {
			closedir(d);
			lp_rundir_list_free(runs, n);
			return -1;
		}
		if (read_info(root, de->d_name, &runs[n]) == 0)
			n++;
	}
	closedir(d);
	if (n)
		qsort(runs, n, sizeof(*runs), newest_first);
	*out = runs;
	*n_out = n;
	return 0;
}

void lp_rundir_list_free(struct lp_run_info *runs, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++) {
		free(runs[i].id);
		free(runs[i].path);
		free(runs[i].status);
		free(runs[i].created_at);
		free(runs[i].problem);
	}
	free(runs);
}

int lp_rundir_prune(const char *root, int64_t keep_last, const char *keep_id, size_t *n_removed,
	struct lp_err *err)
{
	struct lp_run_info *runs;
	size_t n, i;
	int64_t kept = 0;
	int rc = 0;
	*n_removed = 0;
	if (keep_last < 1)
		return lp_err_set(err, LP_EUSAGE, "artifacts.keep_last must be >= 1, got %lld",
			(long long)keep_last);
	if (lp_rundir_list(root, &runs, &n, err) < 0)
		return -1;
	if (keep_id)
		for (i = 0; i < n; i++)
			kept += !strcmp(runs[i].id, keep_id);
	for (i = 0; i < n && rc == 0; i++) {
		if (keep_id && !strcmp(runs[i].id, keep_id))
			continue;
		if (runs[i].damaged)
			continue;  /* not a run we can vouch for: neither counted nor removed */
		if (kept < keep_last) {
			kept++;
			continue;
		}
		if (!strcmp(runs[i].status, "running") || !runs[i].id_matches)
			continue;  /* a live run of another process, or a folder copied in by hand */
		if (lp_fs_remove_tree(runs[i].path, err) < 0)
			rc = -1;
		else
			(*n_removed)++;
	}
	lp_rundir_list_free(runs, n);
	return rc;
}

int lp_rundir_resolve(const char *root, const char *arg, struct lp_buf *path, struct lp_err *err)
{
	struct lp_buf cand = LP_BUF_INIT;
	int id_ok = !strchr(arg, '/') && lp_rundir_validate_id(arg, NULL) == 0;
	lp_buf_reset(path);
	if (id_ok) {
		lp_fs_join(&cand, root, arg);
		if (lp_fs_is_dir(cand.data)) {
			lp_buf_adds(path, cand.data);
			lp_buf_release(&cand);
			return 0;
		}
		lp_buf_release(&cand);
	}
	if (lp_fs_is_dir(arg))
		return lp_buf_adds(path, arg);
	if (!id_ok)
		return lp_err_set(err, LP_EUSAGE, "no run folder '%s'", arg);
	lp_err_set(err, LP_EUSAGE, "no run '%s' under '%s'", arg, root);
	return lp_err_hint(err, "'llmprof runs' lists the runs");
}

/* ---- the files of one run ---- */

struct file_list {
	struct lp_rundir_file *v;
	size_t n, cap;
};

static int walk(const char *base, const char *rel, struct file_list *fl, int depth, struct lp_err *err)
{
	struct lp_buf dir = LP_BUF_INIT, child = LP_BUF_INIT, crel = LP_BUF_INIT;
	DIR *d;
	struct dirent *de;
	int rc = 0;
	if (depth > 16)
		return 0;
	lp_fs_join(&dir, base, rel);
	d = opendir(dir.data);
	if (!d) {
		lp_err_set(err, LP_EOTHER, "cannot open folder '%s': %s", dir.data, strerror(errno));
		lp_buf_release(&dir);
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || strstr(de->d_name, ".tmp."))
			continue;
		lp_fs_join(&crel, rel, de->d_name);
		lp_fs_join(&child, base, crel.data);
		if (lp_fs_is_dir(child.data)) {
			rc = walk(base, crel.data, fl, depth + 1, err);
		} else if (lp_fs_is_file(child.data)) {
			if (LP_ARRAY_RESERVE(fl->v, fl->cap, fl->n + 1, err) < 0) {
				rc = -1;
				break;
			}
			fl->v[fl->n].rel = lp_buf_detach(&crel, NULL);
			fl->v[fl->n].size_bytes = lp_fs_size(child.data);
			fl->v[fl->n].phase = NULL;
			fl->n++;
		}
	}
	closedir(d);
	lp_buf_release(&dir);
	lp_buf_release(&child);
	lp_buf_release(&crel);
	return rc;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct lp_rundir_file *)a)->rel, ((const struct lp_rundir_file *)b)->rel);
}

int lp_rundir_files(const struct lp_rundir *rd, struct lp_rundir_file **out, size_t *n_out,
	struct lp_err *err)
{
	struct file_list fl = { NULL, 0, 0 };
	json_t *item;
	size_t i, j;
	*out = NULL;
	*n_out = 0;
	if (walk(rd->path, "", &fl, 0, err) < 0) {
		lp_rundir_files_free(fl.v, fl.n);
		return -1;
	}
	if (fl.n)
		qsort(fl.v, fl.n, sizeof(*fl.v), by_path);
	json_array_foreach(json_object_get(rd->manifest, "artifacts"), i, item) {
		const char *p = json_string_value(json_object_get(item, "path"));
		for (j = 0; p && j < fl.n; j++)
			if (!strcmp(fl.v[j].rel, p))
				fl.v[j].phase = json_string_value(json_object_get(item, "phase"));
	}
	*out = fl.v;
	*n_out = fl.n;
	return 0;
}

void lp_rundir_files_free(struct lp_rundir_file *files, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		free(files[i].rel);
	free(files);
}
