/* trace_file.c: the reader of one *.lptrace file (docs/trace-format.md), the first half of the
 * tracer's parse stage. A file is mapped and validated once (record framing, payload sizes, the
 * string table); then its records are handed out in order (lp_trace_file_next) to the replay in
 * trace_read.c, and by the `llmprof trace` dump. Also: listing the trace files of a run folder.
 */
#include "parse/trace_read.h"
#include "parse/trace_impl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/str.h"
#include "core/vec.h"
#include "llmprof/trace_format.h"

struct lp_trace_strref {
	uint32_t sid;
	uint32_t len;
	size_t off;
	size_t order;                /* file position, so the last definition of an id wins */
};

/* ---- record framing ---- */

static const struct {
	uint16_t type;
	const char *name;
	size_t min_size;
} rec_types[] = {
	{ LP_TREC_PROCESS, "PROCESS", sizeof(struct lp_trace_process) },
	{ LP_TREC_STRING, "STRING", sizeof(struct lp_trace_string) },
	{ LP_TREC_CUPTI_STATUS, "CUPTI_STATUS", sizeof(struct lp_trace_cupti_status) },
	{ LP_TREC_DOMAIN, "DOMAIN", sizeof(struct lp_trace_domain) },
	{ LP_TREC_THREAD_NAME, "THREAD_NAME", sizeof(struct lp_trace_thread_name) },
	{ LP_TREC_NVTX, "NVTX", sizeof(struct lp_trace_nvtx) },
	{ LP_TREC_LAUNCH, "LAUNCH", sizeof(struct lp_trace_launch) },
	{ LP_TREC_GRAPH_NODE, "GRAPH_NODE", sizeof(struct lp_trace_graph_node) },
	{ LP_TREC_KERNEL, "KERNEL", sizeof(struct lp_trace_kernel) },
	{ LP_TREC_COPY, "COPY", sizeof(struct lp_trace_copy) },
	{ LP_TREC_OVERHEAD, "OVERHEAD", sizeof(struct lp_trace_overhead) },
	{ LP_TREC_DROPPED, "DROPPED", sizeof(struct lp_trace_dropped) },
	{ LP_TREC_DEVICE, "DEVICE", sizeof(struct lp_trace_device) },
	{ LP_TREC_CLOCK_SYNC, "CLOCK_SYNC", sizeof(struct lp_trace_clock_sync) },
	{ LP_TREC_END, "END", sizeof(struct lp_trace_end) },
	{ LP_TREC_RANK, "RANK", sizeof(struct lp_trace_rank) },
	/* 1.1's SAMPLING record ended at units_recorded; pick and later fields read as 0 */
	{ LP_TREC_SAMPLING, "SAMPLING", offsetof(struct lp_trace_sampling, pick) },
	{ LP_TREC_STAGE, "STAGE", sizeof(struct lp_trace_stage) },
};

const char *lp_trace_record_type_name(uint16_t type)
{
	size_t i;
	for (i = 0; i < sizeof(rec_types) / sizeof(rec_types[0]); i++)
		if (rec_types[i].type == type)
			return rec_types[i].name;
	return NULL;
}

static size_t record_min_size(uint16_t type)
{
	size_t i;
	for (i = 0; i < sizeof(rec_types) / sizeof(rec_types[0]); i++)
		if (rec_types[i].type == type)
			return rec_types[i].min_size;
	return 0;
}

static int cmp_strref(const void *a, const void *b)
{
	const struct lp_trace_strref *x = a, *y = b;
	if (x->sid != y->sid)
		return x->sid < y->sid ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int lp_trace_corrupt(struct lp_err *err, const struct lp_trace_file *f, size_t off, const char *what)
{
	lp_err_set(err, LP_EPARSE, "corrupt trace '%s' at byte offset %zu: %s", f->path, off, what);
	return -1;
}

/* Pass 1: framing, sizes and the string table. */
static int validate(struct lp_trace_file *f, struct lp_err *err)
{
	struct lp_trace_preamble pre;
	size_t off = sizeof(pre), cap = 0;
	char what[160];

	if (f->size < sizeof(pre)) {
		if (f->size == 0 || !memcmp(f->data, LP_TRACE_MAGIC, f->size < 8 ? f->size : 8)) {
			f->truncated = 1;
			f->truncated_at = 0;
			f->end = f->size;
			f->version_major = 0;
			return 1; /* cut before the preamble ended: an empty trace */
		}
		return lp_trace_corrupt(err, f, 0, "not an llmprof trace (bad magic)");
	}
	memcpy(&pre, f->data, sizeof(pre));
	if (memcmp(pre.magic, LP_TRACE_MAGIC, sizeof(pre.magic)))
		return lp_trace_corrupt(err, f, 0, "not an llmprof trace (bad magic)");
	f->version_major = pre.version_major;
	f->version_minor = pre.version_minor;
	if (pre.version_major != LP_TRACE_VERSION_MAJOR) {
		lp_err_set(err, LP_EPARSE, "trace '%s' has format version %u.%u; this llmprof reads %u.x",
			f->path, pre.version_major, pre.version_minor, LP_TRACE_VERSION_MAJOR);
		return -1;
	}
	while (off < f->size) {
		struct lp_trace_rec_header h;
		size_t min;
		if (f->size - off < sizeof(h)) {
			f->truncated = 1;
			f->truncated_at = off;
			break;
		}
		memcpy(&h, f->data + off, sizeof(h));
		if (h.type == 0)
			return lp_trace_corrupt(err, f, off, "record of type 0");
		if (h.size > LP_TRACE_MAX_RECORD_BYTES) {
			snprintf(what, sizeof(what), "record of %u bytes exceeds the limit of %u", h.size,
				LP_TRACE_MAX_RECORD_BYTES);
			return lp_trace_corrupt(err, f, off, what);
		}
		if (f->size - off - sizeof(h) < h.size) {
			f->truncated = 1;
			f->truncated_at = off;
			break;
		}
		min = record_min_size(h.type);
		if (h.size < min) {
			snprintf(what, sizeof(what), "%s record of %u bytes, expected at least %zu",
				lp_trace_record_type_name(h.type), h.size, min);
			return lp_trace_corrupt(err, f, off, what);
		}
		if (h.type == LP_TREC_STRING) {
			struct lp_trace_string s;
			memcpy(&s, f->data + off + sizeof(h), sizeof(s));
			if (s.sid == 0 || s.sid >= LP_TRACE_MAX_STRINGS)
				return lp_trace_corrupt(err, f, off, "string id out of range");
			if (s.len > LP_TRACE_MAX_STRING_BYTES || s.len > h.size - sizeof(s))
				return lp_trace_corrupt(err, f, off, "string length out of range");
			if (LP_ARRAY_RESERVE(f->strings, cap, f->n_strings + 1, NULL) < 0)
				return lp_oom(err);
			f->strings[f->n_strings].sid = s.sid;
			f->strings[f->n_strings].len = s.len;
			f->strings[f->n_strings].off = off + sizeof(h) + sizeof(s);
			f->strings[f->n_strings].order = f->n_strings;
			f->n_strings++;
		}
		off += sizeof(h) + h.size;
	}
	f->end = f->truncated ? f->truncated_at : off;
	if (f->n_strings)
		qsort(f->strings, f->n_strings, sizeof(*f->strings), cmp_strref);
	return 0;
}

int lp_trace_file_open_mem(struct lp_trace_file *f, const char *name, const void *data, size_t size,
	struct lp_err *err)
{
	memset(f, 0, sizeof(*f));
	f->path = strdup(name ? name : "(memory)");
	if (!f->path)
		return lp_oom(err);
	f->data = data;
	f->size = size;
	f->pos = sizeof(struct lp_trace_preamble);
	if (validate(f, err) < 0) {
		lp_trace_file_close(f);
		return -1;
	}
	return 0;
}

int lp_trace_file_open(struct lp_trace_file *f, const char *path, struct lp_err *err)
{
	struct stat st;
	void *map = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return lp_err_set(err, LP_EUSAGE, "cannot open trace '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return lp_err_set(err, LP_EUSAGE, "cannot read trace '%s': not a regular file", path);
	}
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			int e = errno;
			close(fd);
			return lp_err_set(err, LP_EOTHER, "cannot map trace '%s': %s", path, strerror(e));
		}
	}
	close(fd);
	if (lp_trace_file_open_mem(f, path, map ? map : "", map ? (size_t)st.st_size : 0, err) < 0) {
		if (map)
			munmap(map, (size_t)st.st_size);
		return -1;
	}
	f->mapped = map != NULL;
	return 0;
}

void lp_trace_file_close(struct lp_trace_file *f)
{
	if (f->mapped)
		munmap((void *)(uintptr_t)f->data, f->size);
	free(f->path);
	free(f->strings);
	memset(f, 0, sizeof(*f));
}

void lp_trace_file_rewind(struct lp_trace_file *f)
{
	f->pos = sizeof(struct lp_trace_preamble);
}

int lp_trace_file_next(struct lp_trace_file *f, struct lp_trace_record *rec)
{
	struct lp_trace_rec_header h;
	if (f->pos + sizeof(h) > f->end)
		return 0;
	memcpy(&h, f->data + f->pos, sizeof(h));
	rec->type = h.type;
	rec->size = h.size;
	rec->offset = f->pos;
	rec->payload = f->data + f->pos + sizeof(h);
	f->pos += sizeof(h) + h.size;
	return 1;
}

void lp_trace_record_get(const struct lp_trace_record *rec, void *out, size_t size)
{
	memset(out, 0, size);
	memcpy(out, rec->payload, rec->size < size ? rec->size : size);
}

const char *lp_trace_file_string(const struct lp_trace_file *f, uint32_t sid, size_t *len)
{
	size_t lo = 0, hi = f->n_strings, found = (size_t)-1;
	while (lo < hi) { /* the last entry with this id */
		size_t mid = lo + (hi - lo) / 2;
		if (f->strings[mid].sid <= sid) {
			if (f->strings[mid].sid == sid)
				found = mid;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (found == (size_t)-1)
		return NULL;
	if (len)
		*len = f->strings[found].len;
	return (const char *)f->data + f->strings[found].off;
}

/* ---- listing ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void lp_trace_list_free(char **files, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		free(files[i]);
	free(files);
}

int lp_trace_list_files(const char *path, char ***files, size_t *n, struct lp_err *err)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	char **list = NULL;
	size_t cnt = 0, cap = 0;
	int oom = 0;

	*files = NULL;
	*n = 0;
	if (stat(path, &st) < 0)
		return lp_err_set(err, LP_EUSAGE, "cannot read trace '%s': %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		list = malloc(sizeof(*list));
		if (!list || !(list[0] = strdup(path))) {
			free(list);
			return lp_oom(err);
		}
		*files = list;
		*n = 1;
		return 0;
	}
	d = opendir(path);
	if (!d)
		return lp_err_set(err, LP_EUSAGE, "cannot list trace folder '%s': %s", path, strerror(errno));
	while ((e = readdir(d)) != NULL) {
		struct lp_buf b = LP_BUF_INIT;
		if (!lp_str_ends_with(e->d_name, LP_TRACE_FILE_SUFFIX) || e->d_name[0] == '.')
			continue;
		if (LP_ARRAY_RESERVE(list, cap, cnt + 1, NULL) < 0 || lp_buf_addf(&b, "%s/%s", path, e->d_name) < 0 ||
		    !(list[cnt] = lp_buf_detach(&b, NULL))) {
			lp_buf_release(&b);
			oom = 1;
			break;
		}
		cnt++;
	}
	closedir(d);
	if (oom) {
		lp_trace_list_free(list, cnt);
		return lp_oom(err);
	}
	if (!cnt) {
		free(list);
		lp_err_set(err, LP_EUSAGE, "no trace files (*%s) in '%s'", LP_TRACE_FILE_SUFFIX, path);
		return lp_err_hint(err, "run the program with NVTX_INJECTION64_PATH and CUDA_INJECTION64_PATH "
			"set to libllmprof_inject.so (see docs/tracer.md)");
	}
	qsort(list, cnt, sizeof(*list), cmp_str);
	*files = list;
	*n = cnt;
	return 0;
}
