/* trace_read.h: reads the built-in tracer's per-process files (docs/trace-format.md,
 * include/llmprof/trace_format.h) into the shared profile model (profile/profile.h).
 *
 * lp_trace_load takes a trace folder (every *.lptrace in it, in name order) or one file and
 * appends devices, processes, NVTX ranges (a tree per thread through `parent`), kernels and
 * copies to an initialized profile. Kernels get `range` = the innermost push/pop range open on the
 * launching thread when the launch API was called. CUDA graph kernels: the ranges open when their
 * node was captured, placed under the range open at cudaGraphLaunch through synthetic copies
 * (lp_range.synthetic, one set per graph launch; not when the capture-time stack already starts
 * with the launch stack); the capture-time range alone when no range was open at the launch; the
 * launch range when the node has no capture-time range. C++ kernel names are demangled
 * with the C++ runtime's __cxa_demangle when libstdc++ can be loaded (else kept mangled).
 *
 * Errors: a corrupt file fails with a message naming the file and the byte offset; a truncated
 * tail (a killed process) is read up to the last complete record and counts one warning in
 * profile->warnings; lp_trace_load_damage names it, and files without their END record too. Limits: LP_TRACE_MAX_RECORD_BYTES per record, LP_TRACE_MAX_STRING_BYTES per
 * string, LP_TRACE_MAX_DEPTH open push/pop ranges per thread, 2^31 ranges/kernels per profile.
 *
 * The lower-level file API (open, iterate records, look up strings) serves `llmprof trace dump`.
 * Ownership: a struct lp_trace_file owns its mapping until lp_trace_file_close; record payloads
 * and strings point into it. Not thread-safe (use one file/profile per thread).
 *
 *   struct lp_profile p; lp_profile_init(&p, dir);
 *   if (lp_trace_load(dir, &p, &err) < 0) return lp_err_print(&err);
 *   ... p.kernels[i].range ... lp_profile_release(&p);
 */
#ifndef LP_PARSE_TRACE_READ_H
#define LP_PARSE_TRACE_READ_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/err.h"
#include "profile/profile.h"

int lp_trace_load(const char *path, struct lp_profile *out, struct lp_err *err);
/* The same, and says what was damaged but read around, one line per file appended to `damage`
 * (may be NULL): a file cut inside a record or its preamble ("'<f>' is truncated at byte N of M:
 * read up to the last complete record"), or a file without the END record that a clean exit
 * writes ("'<f>' has no END record: the process was killed or the file was cut"). Such a load
 * still succeeds with what could be read; a truncated file also counts one in out->warnings
 * (a missing END alone does not: a killed host's flushed records are whole).
 * Callers that replace reports or exit 0 must look at `damage` (`llmprof kernels` exits 3). */
int lp_trace_load_damage(const char *path, struct lp_profile *out, struct lp_buf *damage, struct lp_err *err);
/* The same for one file already in memory (`name` is used in messages); for tests and fuzzing. */
int lp_trace_load_mem(const char *name, const void *data, size_t size, struct lp_profile *out,
	struct lp_err *err);

/* ---- files and records ---- */

struct lp_trace_strref;

struct lp_trace_file {
	char *path;                  /* owned copy of the name */
	const unsigned char *data;
	size_t size;
	int mapped;                  /* data is an mmap of the file */
	uint16_t version_major, version_minor;
	size_t end;                  /* offset after the last complete record */
	int truncated;               /* the file ends inside a record (or inside the preamble) */
	size_t truncated_at;         /* where the incomplete tail starts */
	size_t pos;                  /* iteration cursor */
	struct lp_trace_strref *strings;  /* sorted by id */
	size_t n_strings;
};

struct lp_trace_record {
	uint16_t type;               /* enum lp_trace_rec_type (unknown types are passed through) */
	uint32_t size;               /* payload bytes */
	size_t offset;               /* of the record header in the file */
	const unsigned char *payload;
};

/* Maps and validates a file: preamble, every record header, known payload sizes, strings.
 * Returns -1 on an unreadable or corrupt file (message names the file and offset). */
int lp_trace_file_open(struct lp_trace_file *f, const char *path, struct lp_err *err);
int lp_trace_file_open_mem(struct lp_trace_file *f, const char *name, const void *data, size_t size,
	struct lp_err *err);
void lp_trace_file_close(struct lp_trace_file *f);
/* Next record from the start (or after lp_trace_file_rewind): 1 got one, 0 at the end. */
int lp_trace_file_next(struct lp_trace_file *f, struct lp_trace_record *rec);
void lp_trace_file_rewind(struct lp_trace_file *f);
/* Copies the record's payload into `out` (`size` bytes of a trace_format.h struct; a longer
 * payload from a newer minor version is cut, validation guaranteed it is not shorter). */
void lp_trace_record_get(const struct lp_trace_record *rec, void *out, size_t size);
/* The bytes of string `sid` (not NUL-terminated) or NULL when the file has no such string. */
const char *lp_trace_file_string(const struct lp_trace_file *f, uint32_t sid, size_t *len);
/* A record type's name ("KERNEL") or NULL when unknown. */
const char *lp_trace_record_type_name(uint16_t type);

/* The trace files a path names: the file itself, or the *.lptrace files of a folder sorted by
 * name. Fails when there are none. Free with lp_trace_list_free. */
int lp_trace_list_files(const char *path, char ***files, size_t *n, struct lp_err *err);
void lp_trace_list_free(char **files, size_t n);

#endif
