/* fs.c: atomic writes and small file helpers (see fs.h); the run directory and every report
 * writer go through lp_fs_write_atomic. */
#include "core/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int lp_fs_mkdir_p(const char *path, struct lp_err *err)
{
	struct lp_buf b = LP_BUF_INIT;
	size_t i;
	if (!*path)
		return lp_err_set(err, LP_EOTHER, "cannot create a folder with an empty name");
	if (lp_buf_adds(&b, path) < 0)
		return lp_oom(err);
	for (i = 1; i <= b.len; i++) {
		if (b.data[i] != '/' && b.data[i] != '\0')
			continue;
		b.data[i] = '\0';
		if (mkdir(b.data, 0755) < 0 && errno != EEXIST) {
			int e = errno;
			lp_err_set(err, LP_EOTHER, "cannot create folder '%s': %s", b.data, strerror(e));
			lp_buf_release(&b);
			return -1;
		}
		if (i < b.len)
			b.data[i] = '/';
	}
	lp_buf_release(&b);
	if (!lp_fs_is_dir(path))
		return lp_err_set(err, LP_EOTHER, "'%s' exists and is not a folder", path);
	return 0;
}

static void fsync_parent(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd;
	if (!slash) {
		snprintf(dir, sizeof(dir), ".");
	} else {
		size_t n = (size_t)(slash - path);
		if (n == 0)
			n = 1;
		if (n >= sizeof(dir))
			return;
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int lp_fs_write_atomic(const char *path, const void *data, size_t len, struct lp_err *err)
{
	struct lp_buf tmp = LP_BUF_INIT;
	const char *p = data;
	int fd;
	if (lp_buf_addf(&tmp, "%s.tmp.XXXXXX", path) < 0)
		return lp_oom(err);
	fd = mkostemp(tmp.data, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		lp_buf_release(&tmp);
		return lp_err_set(err, LP_EOTHER, "cannot write '%s': %s", path, strerror(e));
	}
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = errno;
			close(fd);
			unlink(tmp.data);
			lp_buf_release(&tmp);
			return lp_err_set(err, LP_EOTHER, "cannot write '%s': %s", path, strerror(e));
		}
		p += n;
		len -= (size_t)n;
	}
	if (fchmod(fd, 0644) < 0 || fsync(fd) < 0 || close(fd) < 0) {
		int e = errno;
		unlink(tmp.data);
		lp_buf_release(&tmp);
		return lp_err_set(err, LP_EOTHER, "cannot write '%s': %s", path, strerror(e));
	}
	if (rename(tmp.data, path) < 0) {
		int e = errno;
		unlink(tmp.data);
		lp_buf_release(&tmp);
		return lp_err_set(err, LP_EOTHER, "cannot write '%s': %s", path, strerror(e));
	}
	lp_buf_release(&tmp);
	fsync_parent(path);
	return 0;
}

int lp_fs_read_file(const char *path, struct lp_buf *out, size_t max_bytes, struct lp_err *err)
{
	char chunk[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t total = 0;
	if (fd < 0)
		return lp_err_set(err, errno == ENOENT ? LP_EUSAGE : LP_EOTHER, "cannot open '%s': %s",
			path, strerror(errno));
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			return lp_err_set(err, LP_EOTHER, "cannot read '%s': %s", path, strerror(e));
		}
		if (n == 0)
			break;
		total += (size_t)n;
		if (max_bytes && total > max_bytes) {
			close(fd);
			return lp_err_set(err, LP_EUSAGE, "'%s' is larger than the limit of %zu bytes",
				path, max_bytes);
		}
		if (lp_buf_add(out, chunk, (size_t)n) < 0) {
			close(fd);
			return lp_oom(err);
		}
	}
	close(fd);
	return 0;
}

int lp_fs_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int lp_fs_is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int lp_fs_is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int64_t lp_fs_size(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -1;
	return (int64_t)st.st_size;
}

int lp_fs_remove_tree(const char *path, struct lp_err *err)
{
	DIR *d;
	struct dirent *de;
	struct stat st;
	if (!*path || strcmp(path, "/") == 0)
		return lp_err_set(err, LP_EOTHER, "refusing to remove '%s'", path);
	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		if (unlink(path) < 0)
			return lp_err_set(err, LP_EOTHER, "cannot remove '%s': %s", path, strerror(errno));
		return 0;
	}
	d = opendir(path);
	if (!d)
		return lp_err_set(err, LP_EOTHER, "cannot open folder '%s': %s", path, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		struct lp_buf child = LP_BUF_INIT;
		int rc;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		lp_fs_join(&child, path, de->d_name);
		rc = lp_fs_remove_tree(child.data, err);
		lp_buf_release(&child);
		if (rc < 0) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	if (rmdir(path) < 0)
		return lp_err_set(err, LP_EOTHER, "cannot remove '%s': %s", path, strerror(errno));
	return 0;
}

int lp_fs_join(struct lp_buf *out, const char *a, const char *b)
{
	lp_buf_reset(out);
	if (b[0] == '/' || !a[0])
		return lp_buf_adds(out, b);
	if (lp_buf_adds(out, a) < 0)
		return -1;
	if (out->len && out->data[out->len - 1] != '/' && lp_buf_addc(out, '/') < 0)
		return -1;
	return lp_buf_adds(out, b);
}

int lp_fs_exe_dir(struct lp_buf *out, struct lp_err *err)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	char *slash;
	if (n < 0)
		return lp_err_set(err, LP_EOTHER, "cannot find the running executable: %s", strerror(errno));
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (slash)
		*slash = '\0';
	lp_buf_reset(out);
	return lp_buf_adds(out, path);
}

int lp_fs_which(const char *name, struct lp_buf *out)
{
	const char *path = getenv("PATH");
	const char *p;
	if (strchr(name, '/')) {
		if (access(name, X_OK) == 0) {
			lp_buf_reset(out);
			return lp_buf_adds(out, name);
		}
		return -1;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		lp_buf_reset(out);
		lp_buf_add(out, n ? p : ".", n ? n : 1);
		lp_buf_addc(out, '/');
		lp_buf_adds(out, name);
		if (access(out->data, X_OK) == 0 && lp_fs_is_file(out->data))
			return 0;
		if (!end)
			break;
		p = end + 1;
	}
	lp_buf_reset(out);
	return -1;
}
