/* rundir.c: making a run folder and keeping its manifest (see rundir.h). The first thing a run
 * does (after the configuration is valid) and the last thing each phase touches: every artifact
 * of collect, analyze and report is written or recorded here. Listing and pruning: rundir_list.c. */
#include "collect/rundir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/provenance.h"
#include "core/fs.h"
#include "core/sha256.h"

static const char *const subdirs[] = { "nsys", "ncu", "trace", "logs" };

static int random_u16(unsigned *out, struct lp_err *err)
{
	unsigned char b[2];
	ssize_t n = getrandom(b, sizeof(b), GRND_NONBLOCK);
	if (n != (ssize_t)sizeof(b)) {
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, b, sizeof(b)) : -1;
		if (fd >= 0)
			close(fd);
		if (n != (ssize_t)sizeof(b))
			return lp_err_set(err, LP_EOTHER, "cannot read random bytes for the run id");
	}
	*out = (unsigned)b[0] << 8 | b[1];
	return 0;
}

static int new_id(char *out, size_t cap, struct lp_err *err)
{
	time_t now = time(NULL);
	struct tm tm;
	char stamp[32];
	unsigned r = 0;
	if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm))
		return lp_err_set(err, LP_EOTHER, "cannot format the time for the run id");
	if (random_u16(&r, err) < 0)
		return -1;
	snprintf(out, cap, "%s-%04x", stamp, r);
	return 0;
}

/* "2025-01-31T12:00:00.123Z" */
static void iso_now(char out[32])
{
	struct timespec ts;
	struct tm tm;
	char base[24];
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, 32, "%.19s.%03dZ", base, (int)(ts.tv_nsec / 1000000) % 1000);
}

/* JSON files end with a newline, like every text file we write. */
static int write_json_text(const char *path, const char *text, struct lp_err *err)
{
	struct lp_buf b = LP_BUF_INIT;
	int rc;
	if (lp_buf_adds(&b, text) < 0 || lp_buf_addc(&b, '\n') < 0) {
		lp_buf_release(&b);
		return lp_oom(err);
	}
	rc = lp_fs_write_atomic(path, b.data, b.len, err);
	lp_buf_release(&b);
	return rc;
}

static int save_manifest(struct lp_rundir *rd, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT;
	char now[32], *text;
	int rc;
	iso_now(now);
	json_object_set_new(rd->manifest, "updated_at", json_string(now));
	text = json_dumps(rd->manifest, JSON_INDENT(2));
	if (!text)
		return lp_oom(err);
	lp_rundir_path(rd, LP_RUNDIR_MANIFEST, &path);
	rc = write_json_text(path.data, text, err);
	free(text);
	lp_buf_release(&path);
	return rc;
}

static json_t *new_manifest(const char *run_id)
{
	char now[32], host[256] = "";
	iso_now(now);
	gethostname(host, sizeof(host) - 1);
	return json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:[]}", "schema_version", 1,
		"run_id", run_id, "status", "running", "created_at", now, "updated_at", now, "host", host,
		"pid", (json_int_t)getpid(), "llmprof_version", lp_version_string(), "llmprof_commit",
		lp_version_commit(), "artifacts");
}

static int make_folder(struct lp_rundir *rd, const char *root, const char *run_id, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT;
	int tries;
	for (tries = 0; tries < 64; tries++) {
		if (run_id)
			snprintf(rd->run_id, sizeof(rd->run_id), "%s", run_id);
		else if (new_id(rd->run_id, sizeof(rd->run_id), err) < 0)
			break;
		lp_fs_join(&path, root, rd->run_id);
		if (mkdir(path.data, 0755) == 0) {
			rd->path = lp_buf_detach(&path, NULL);
			return 0;
		}
		if (errno != EEXIST) {
			lp_err_set(err, LP_EOTHER, "cannot create run folder '%s': %s", path.data, strerror(errno));
			break;
		}
		if (run_id) {
			lp_err_set(err, LP_EUSAGE, "run folder '%s' already exists", path.data);
			lp_err_hint(err, "pick another run.id, or leave it null for a generated one");
			break;
		}
	}
	if (tries == 64)
		lp_err_set(err, LP_EOTHER, "cannot find a free run id under '%s'", root);
	lp_buf_release(&path);
	return -1;
}

int lp_rundir_create(struct lp_rundir *rd, const char *root, const char *run_id, struct lp_err *err)
{
	struct lp_buf sub = LP_BUF_INIT;
	size_t i;
	memset(rd, 0, sizeof(*rd));
	if (run_id && lp_rundir_validate_id(run_id, err) < 0)
		return -1;
	if (lp_fs_mkdir_p(root, err) < 0 || make_folder(rd, root, run_id, err) < 0)
		return -1;
	for (i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		lp_fs_join(&sub, rd->path, subdirs[i]);
		if (lp_fs_mkdir_p(sub.data, err) < 0)
			goto fail;
	}
	rd->manifest = new_manifest(rd->run_id);
	if (!rd->manifest) {
		lp_oom(err);
		goto fail;
	}
	if (save_manifest(rd, err) < 0)
		goto fail;
	lp_buf_release(&sub);
	return 0;
fail:
	lp_buf_release(&sub);
	lp_rundir_release(rd);
	return -1;
}

int lp_rundir_open(struct lp_rundir *rd, const char *path, struct lp_err *err)
{
	struct lp_buf mpath = LP_BUF_INIT;
	json_error_t jerr;
	const char *id, *slash;
	memset(rd, 0, sizeof(*rd));
	lp_fs_join(&mpath, path, LP_RUNDIR_MANIFEST);
	if (!lp_fs_is_file(mpath.data)) {
		lp_err_set(err, LP_EUSAGE, "'%s' is not a run folder: it has no %s", path, LP_RUNDIR_MANIFEST);
		lp_buf_release(&mpath);
		return -1;
	}
	rd->manifest = json_load_file(mpath.data, 0, &jerr);
	if (!json_is_object(rd->manifest)) {
		lp_err_set(err, LP_EUSAGE, "%s:%d:%d: %s", mpath.data, jerr.line, jerr.column,
			rd->manifest ? "expected an object" : jerr.text);
		lp_buf_release(&mpath);
		lp_rundir_release(rd);
		return -1;
	}
	lp_buf_release(&mpath);
	if (!json_is_array(json_object_get(rd->manifest, "artifacts")))
		json_object_set_new(rd->manifest, "artifacts", json_array());
	id = json_string_value(json_object_get(rd->manifest, "run_id"));
	if (!id) {
		slash = strrchr(path, '/');
		id = slash && slash[1] ? slash + 1 : path;
	}
	snprintf(rd->run_id, sizeof(rd->run_id), "%s", id);
	rd->path = strdup(path);
	if (!rd->path) {
		lp_rundir_release(rd);
		return lp_oom(err);
	}
	return 0;
}

void lp_rundir_release(struct lp_rundir *rd)
{
	free(rd->path);
	json_decref(rd->manifest);
	memset(rd, 0, sizeof(*rd));
}

int lp_rundir_path(const struct lp_rundir *rd, const char *rel, struct lp_buf *out)
{
	return lp_fs_join(out, rd->path, rel);
}

static int check_rel(const char *rel, struct lp_err *err)
{
	const char *p = rel;
	if (!*rel || rel[0] == '/')
		return lp_err_set(err, LP_EOTHER, "artifact path '%s' must be relative to the run folder", rel);
	if (!strcmp(rel, LP_RUNDIR_MANIFEST))
		return lp_err_set(err, LP_EOTHER, "'%s' is kept by the run folder itself", rel);
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return lp_err_set(err, LP_EOTHER, "artifact path '%s' has an empty, '.' or '..' part", rel);
		p += n + (slash != NULL);
	}
	return 0;
}

static int add_entry(struct lp_rundir *rd, const char *rel, int64_t size, const char *sha,
	const char *phase, struct lp_err *err)
{
	json_t *list = json_object_get(rd->manifest, "artifacts"), *item, *entry;
	char now[32];
	size_t i;
	iso_now(now);
	entry = json_pack("{s:s, s:I, s:s, s:s, s:s}", "path", rel, "size_bytes", (json_int_t)size,
		"sha256", sha, "phase", phase ? phase : "unknown", "written_at", now);
	if (!entry)
		return lp_oom(err);
	json_array_foreach(list, i, item) {
		if (!strcmp(json_string_value(json_object_get(item, "path")) ?
			json_string_value(json_object_get(item, "path")) : "", rel)) {
			json_array_set_new(list, i, entry);
			return save_manifest(rd, err);
		}
	}
	if (json_array_append_new(list, entry) < 0)
		return lp_oom(err);
	return save_manifest(rd, err);
}

int lp_rundir_has(const struct lp_rundir *rd, const char *rel)
{
	const json_t *item;
	size_t i;
	json_array_foreach(json_object_get(rd->manifest, "artifacts"), i, item) {
		const char *p = json_string_value(json_object_get(item, "path"));
		if (p && !strcmp(p, rel))
			return 1;
	}
	return 0;
}

int lp_rundir_write(struct lp_rundir *rd, const char *rel, const void *data, size_t len,
	const char *phase, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT;
	char sha[65];
	char *slash;
	int rc = -1;
	if (check_rel(rel, err) < 0)
		return -1;
	lp_rundir_path(rd, rel, &path);
	slash = strrchr(path.data, '/');
	if (slash && strchr(rel, '/')) {
		*slash = '\0';
		if (lp_fs_mkdir_p(path.data, err) < 0)
			goto out;
		*slash = '/';
	}
	if (lp_fs_write_atomic(path.data, data, len, err) < 0)
		goto out;
	lp_sha256_hex(data, len, sha);
	rc = add_entry(rd, rel, (int64_t)len, sha, phase, err);
out:
	lp_buf_release(&path);
	return rc;
}

int lp_rundir_record(struct lp_rundir *rd, const char *rel, const char *phase, struct lp_err *err)
{
	struct lp_buf path = LP_BUF_INIT;
	char sha[65];
	int64_t size;
	int rc = -1;
	if (check_rel(rel, err) < 0)
		return -1;
	lp_rundir_path(rd, rel, &path);
	size = lp_fs_size(path.data);
	if (size < 0 || !lp_fs_is_file(path.data))
		lp_err_set(err, LP_EOTHER, "cannot record '%s': no such file", path.data);
	else if (lp_sha256_file_hex(path.data, sha, err) == 0)
		rc = add_entry(rd, rel, size, sha, phase, err);
	lp_buf_release(&path);
	return rc;
}

const char *lp_run_status_name(enum lp_run_status status)
{
	switch (status) {
	case LP_RUN_OK: return "ok";
	case LP_RUN_PARTIAL: return "partial";
	case LP_RUN_FAILED: return "failed";
	case LP_RUN_INTERRUPTED: return "interrupted";
	default: return "running";
	}
}

int lp_rundir_set_status(struct lp_rundir *rd, enum lp_run_status status, struct lp_err *err)
{
	if (json_object_set_new(rd->manifest, "status", json_string(lp_run_status_name(status))) < 0)
		return lp_oom(err);
	return save_manifest(rd, err);
}
