/* csv.h: a streaming RFC 4180 CSV reader with limits, and the number cells Nsight tools write.
 *
 * Records are read one at a time from a file (read in 1 MiB chunks) or from memory. Quoted fields
 * may hold commas, doubled quotes and line breaks; CRLF and LF both end a record. Every record is
 * bounded: field length, column count and record length (limits below, 0 = the default). Past a
 * limit, or at end of input inside a quoted field (a truncated file), lp_csv_next fails with
 * "<name>:<line>: ..." in err. `line` is the 1-based physical line where the current record began.
 *
 * Ownership: the reader owns its buffers; field pointers are valid until the next lp_csv_next.
 * Fields are NUL-terminated (a NUL byte inside a field is refused). Not thread-safe.
 *
 *   struct lp_csv c;
 *   if (lp_csv_open(&c, "ncu/run_raw.csv", NULL, err) < 0) return -1;
 *   while ((rc = lp_csv_next(&c, err)) > 0)
 *       use(c.fields[0], c.n_fields);
 *   lp_csv_close(&c);               // rc < 0: err says file:line and why
 *
 * Numbers (lp_csv_number): "2,336" (thousands separators), "1.5e3", "-3"; "", "n/a", "nan",
 * "N/A" and "-" are "no value" (returns 0), anything else is not a number (returns -1): "inf",
 * hex ("0x10" is not 16) and values that overflow a double included, so a returned value is
 * always finite. lp_csv_cell_number applies the rule for every number cell: a cell that is not a
 * number is an error naming file:line:col and the column, "no value" stays explicit.
 */
#ifndef LP_PARSE_CSV_H
#define LP_PARSE_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/buf.h"
#include "core/err.h"

#define LP_CSV_MAX_FIELD_BYTES (1u << 20)   /* one cell (ncu rule descriptions are a few KB) */
#define LP_CSV_MAX_COLUMNS 16384            /* ncu's full set is ~2000 metric columns */
#define LP_CSV_MAX_RECORD_BYTES (64u << 20)

struct lp_csv_limits {
	size_t max_field_bytes;
	size_t max_columns;
	size_t max_record_bytes;
};

struct lp_csv {
	/* current record */
	char **fields;            /* n_fields pointers into `rec`, NUL-terminated */
	size_t *lens;             /* byte length of each field */
	size_t n_fields;
	uint64_t line;            /* physical line where the record began (1-based) */
	int quoted_last;          /* internal */
	/* input */
	const char *name;         /* for messages (the path, or a label) */
	int fd;                   /* -1 for memory input */
	char *chunk;              /* read buffer (file input) */
	const char *in;           /* unread input [in, in_end) */
	const char *in_end;
	int eof;
	uint64_t next_line;       /* physical line of the next byte */
	uint64_t bytes_read;      /* total input bytes consumed so far */
	int past_preamble;        /* internal: the tool-log lines before the first record are skipped */
	uint64_t preamble_lines;  /* lines skipped before the first record (ncu --log-file "==PROF==") */
	/* storage */
	struct lp_buf rec;
	size_t *offs;
	size_t cap_fields;
	size_t cap_out;           /* capacity of fields/lens */
	struct lp_csv_limits lim;
};

int lp_csv_open(struct lp_csv *c, const char *path, const struct lp_csv_limits *lim, struct lp_err *err);
/* Reads from memory (not copied: `data` must outlive the reader); `name` labels errors. */
void lp_csv_open_mem(struct lp_csv *c, const char *data, size_t len, const char *name,
	const struct lp_csv_limits *lim);
/* 1: a record is in c->fields; 0: end of input; -1: error (err names file:line). A blank line is
 * a record with one empty field. A UTF-8 byte-order mark at the start is skipped, and so are whole
 * lines starting with "==" before the first record: the "==PROF==" / "==WARNING==" lines that
 * ncu writes ahead of the CSV when its output goes to a --log-file (counted in preamble_lines). */
int lp_csv_next(struct lp_csv *c, struct lp_err *err);
void lp_csv_close(struct lp_csv *c);

/* Index of the column named `name` in a header record (exact match), -1 when absent. */
int lp_csv_column(const struct lp_csv *c, const char *name);

/* Parses a number cell: 1 value in *out, 0 no value ("", n/a, nan, -), -1 not a number. */
int lp_csv_number(const char *s, double *out);
/* The same with the error: 1 value, 0 no value, -1 "<file>:<line>:<col>: '<column>' value '<cell>'
 * is not a finite decimal number" in err (LP_EPARSE). `col` is 0-based (printed 1-based). */
int lp_csv_cell_number(const char *file, uint64_t line, size_t col, const char *column, const char *s,
	double *out, struct lp_err *err);
/* Does a cell that lp_csv_number refused look like a number gone wrong (a sign, digit or point
 * first, or inf/infinity) rather than text? Readers of columns that mix numbers and text (ncu's
 * raw page has string-valued metrics) use it to tell a damaged number from a text value. */
int lp_csv_numberish(const char *s);
/* 1 and *out for a cell holding a whole number in [0, max], 0 no value, -1 error as above
 * (a fraction, a negative value or one past `max` included: "overflows"). */
int lp_csv_cell_count(const char *file, uint64_t line, size_t col, const char *column, const char *s,
	uint64_t max, uint64_t *out, struct lp_err *err);

#endif
