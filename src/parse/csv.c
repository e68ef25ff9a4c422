/* csv.c: the CSV reader every Nsight parser stands on (see csv.h). Input arrives in 1 MiB chunks;
 * a small state machine copies field bytes into one record buffer, scanning runs of ordinary bytes
 * with a class table so that the common case (unquoted numbers) costs a few instructions a byte. */
#include "parse/csv.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/vec.h"

/* The fuzz build makes the chunk small (-DLP_CSV_CHUNK_BYTES=4096, docs/fuzzing.md): under ASan a
 * 1 MiB allocation per open cost more than the parse, and small chunks cross more boundaries. */
#ifndef LP_CSV_CHUNK_BYTES
#define LP_CSV_CHUNK_BYTES (1u << 20)
#endif
#define CHUNK_BYTES LP_CSV_CHUNK_BYTES

enum { C_PLAIN = 0, C_COMMA = 1, C_QUOTE = 2, C_LF = 3, C_CR = 4, C_NUL = 5 };
static unsigned char cls[256];
static int cls_ready;

static void cls_init(void)
{
	if (cls_ready)
		return;
	cls[','] = C_COMMA;
	cls['"'] = C_QUOTE;
	cls['\n'] = C_LF;
	cls['\r'] = C_CR;
	cls[0] = C_NUL;
	cls_ready = 1;
}

static void set_limits(struct lp_csv *c, const struct lp_csv_limits *lim)
{
	c->lim.max_field_bytes = lim && lim->max_field_bytes ? lim->max_field_bytes : LP_CSV_MAX_FIELD_BYTES;
	c->lim.max_columns = lim && lim->max_columns ? lim->max_columns : LP_CSV_MAX_COLUMNS;
	c->lim.max_record_bytes = lim && lim->max_record_bytes ? lim->max_record_bytes : LP_CSV_MAX_RECORD_BYTES;
}

static void reset(struct lp_csv *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->next_line = 1;
	lp_buf_init(&c->rec, 0);
	cls_init();
}

int lp_csv_open(struct lp_csv *c, const char *path, const struct lp_csv_limits *lim, struct lp_err *err)
{
	reset(c);
	set_limits(c, lim);
	c->name = path;
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0)
		return lp_err_set(err, LP_EPARSE, "cannot open '%s': %s", path, strerror(errno));
	c->chunk = malloc(CHUNK_BYTES);
	if (!c->chunk) {
		close(c->fd);
		c->fd = -1;
		return lp_oom(err);
	}
	c->in = c->in_end = c->chunk;
	return 0;
}

void lp_csv_open_mem(struct lp_csv *c, const char *data, size_t len, const char *name,
	const struct lp_csv_limits *lim)
{
	reset(c);
	set_limits(c, lim);
	c->name = name;
	c->in = data;
	c->in_end = data + len;
	c->eof = 1;
}

void lp_csv_close(struct lp_csv *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->chunk);
	free(c->fields);
	free(c->lens);
	free(c->offs);
	lp_buf_release(&c->rec);
	c->fd = -1;
	c->chunk = NULL;
	c->fields = NULL;
	c->lens = NULL;
	c->offs = NULL;
}

/* 1: more input available, 0: end of input, -1: read error. */
static int refill(struct lp_csv *c, struct lp_err *err)
{
	ssize_t n;
	if (c->eof)
		return 0;
	for (;;) {
		n = read(c->fd, c->chunk, CHUNK_BYTES);
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	if (n < 0)
		return lp_err_set(err, LP_EPARSE, "cannot read '%s': %s", c->name, strerror(errno));
	if (n == 0) {
		c->eof = 1;
		return 0;
	}
	c->in = c->chunk;
	c->in_end = c->chunk + n;
	if (c->bytes_read == 0 && n >= 3 && memcmp(c->in, "\xEF\xBB\xBF", 3) == 0)
		c->in += 3;
	c->bytes_read += (uint64_t)n;
	return 1;
}

static int push_field_start(struct lp_csv *c, struct lp_err *err)
{
	if (c->n_fields >= c->lim.max_columns)
		return lp_err_set(err, LP_EPARSE, "%s:%llu: more than %zu columns", c->name,
			(unsigned long long)c->line, c->lim.max_columns);
	if (c->n_fields == c->cap_fields && LP_ARRAY_RESERVE(c->offs, c->cap_fields, c->n_fields + 1, err) < 0)
		return -1;
	c->offs[c->n_fields++] = c->rec.len;
	return 0;
}

static int grow_rec(struct lp_csv *c, size_t n, struct lp_err *err)
{
	if (lp_buf_grow(&c->rec, n) < 0)
		return lp_oom(err);
	return 0;
}

static inline int end_field(struct lp_csv *c, struct lp_err *err)
{
	if (c->rec.len + 1 >= c->rec.cap && grow_rec(c, 1, err) < 0)
		return -1;
	c->rec.data[c->rec.len++] = '\0';
	return 0;
}

static inline int add_bytes(struct lp_csv *c, const char *p, size_t n, struct lp_err *err)
{
	if (!n)
		return 0;
	if (c->rec.len - c->offs[c->n_fields - 1] + n > c->lim.max_field_bytes)
		return lp_err_set(err, LP_EPARSE, "%s:%llu: field %zu longer than %zu bytes", c->name,
			(unsigned long long)c->line, c->n_fields, c->lim.max_field_bytes);
	if (c->rec.len + n > c->lim.max_record_bytes)
		return lp_err_set(err, LP_EPARSE, "%s:%llu: record longer than %zu bytes", c->name,
			(unsigned long long)c->line, c->lim.max_record_bytes);
	if (c->rec.len + n + 1 >= c->rec.cap && grow_rec(c, n + 1, err) < 0)
		return -1;
	memcpy(c->rec.data + c->rec.len, p, n);
	c->rec.len += n;
	return 0;
}

static int finish_record(struct lp_csv *c, struct lp_err *err)
{
	size_t i;
	if (c->cap_out < c->cap_fields) {
		char **nf = lp_reallocarray(c->fields, c->cap_fields, sizeof(*nf));
		size_t *nl;
		if (!nf)
			return lp_oom(err);
		c->fields = nf;
		nl = lp_reallocarray(c->lens, c->cap_fields, sizeof(*nl));
		if (!nl)
			return lp_oom(err);
		c->lens = nl;
		c->cap_out = c->cap_fields;
	}
	for (i = 0; i < c->n_fields; i++) {
		size_t end = i + 1 < c->n_fields ? c->offs[i + 1] - 1 : c->rec.len - 1;
		c->fields[i] = c->rec.data + c->offs[i];
		c->lens[i] = end - c->offs[i];
	}
	return 1;
}

enum { S_START, S_PLAIN, S_QUOTED, S_QUOTE_SEEN };

/* Skips whole lines that start with "==" at the start of input (ncu's log lines). */
static int skip_preamble(struct lp_csv *c, struct lp_err *err)
{
	int at_line_start = 1, in_log_line = 0;
	for (;;) {
		const char *nl;
		if (c->in == c->in_end) {
			int r = c->fd >= 0 ? refill(c, err) : 0;
			if (r <= 0)
				return r;
		}
		if (at_line_start) {
			/* need two bytes to decide; a line split after its first '=' is rare: refill once */
			if (c->in_end - c->in < 2 && c->in[0] == '=' && !c->eof && c->fd >= 0) {
				/* the chunk ends after one '=': it cannot be a header line start worth keeping
				 * apart, since every CSV we read starts with '"' or a letter */
				in_log_line = 1;
			} else {
				in_log_line = c->in_end - c->in >= 2 && c->in[0] == '=' && c->in[1] == '=';
			}
			if (!in_log_line)
				return 0;
			at_line_start = 0;
		}
		nl = memchr(c->in, '\n', (size_t)(c->in_end - c->in));
		if (!nl) {
			c->in = c->in_end;
			continue;
		}
		c->in = nl + 1;
		c->next_line++;
		c->preamble_lines++;
		at_line_start = 1;
	}
}

int lp_csv_next(struct lp_csv *c, struct lp_err *err)
{
	int state = S_START, started = 0, skip_lf = 0;
	lp_buf_reset(&c->rec);
	c->n_fields = 0;
	if (c->fd < 0 && c->bytes_read == 0) {
		/* memory input: skip a BOM once */
		if (c->in_end - c->in >= 3 && memcmp(c->in, "\xEF\xBB\xBF", 3) == 0)
			c->in += 3;
		c->bytes_read = 1;
	}
	if (!c->past_preamble) {
		c->past_preamble = 1;
		if (skip_preamble(c, err) < 0)
			return -1;
	}
	c->line = c->next_line;
	for (;;) {
		const char *p, *e;
		if (c->in == c->in_end) {
			int r = c->fd >= 0 ? refill(c, err) : 0;
			if (r < 0)
				return -1;
			if (r == 0)
				break;
		}
		p = c->in;
		e = c->in_end;
		if (skip_lf) {
			skip_lf = 0;
			if (*p == '\n') {
				c->in = p + 1;
				c->next_line++;
				return finish_record(c, err);
			}
			return finish_record(c, err);
		}
		switch (state) {
		case S_START:
			started = 1;
			if (push_field_start(c, err) < 0)
				return -1;
			if (*p == '"') {
				c->in = p + 1;
				state = S_QUOTED;
				continue;
			}
			state = S_PLAIN;
			continue;
		case S_PLAIN: {
			const char *q = p;
			while (q < e && cls[(unsigned char)*q] == C_PLAIN)
				q++;
			while (q < e && *q == '"')  /* lenient: a stray quote inside a plain field is literal */
				for (q++; q < e && cls[(unsigned char)*q] == C_PLAIN; q++)
					;
			if (add_bytes(c, p, (size_t)(q - p), err) < 0)
				return -1;
			c->in = q;
			if (q == e)
				continue;
			goto separator;
		}
		case S_QUOTED: {
			const char *q = memchr(p, '"', (size_t)(e - p)), *nl;
			if (!q)
				q = e;
			if (memchr(p, '\0', (size_t)(q - p)))
				return lp_err_set(err, LP_EPARSE, "%s:%llu: NUL byte in a field", c->name,
					(unsigned long long)c->line);
			for (nl = p; (nl = memchr(nl, '\n', (size_t)(q - nl))) != NULL; nl++)
				c->next_line++;
			if (add_bytes(c, p, (size_t)(q - p), err) < 0)
				return -1;
			c->in = q;
			if (q == e)
				continue;
			c->in = q + 1;
			state = S_QUOTE_SEEN;
			continue;
		}
		case S_QUOTE_SEEN:
			if (*p == '"') {  /* doubled quote */
				if (add_bytes(c, p, 1, err) < 0)
					return -1;
				c->in = p + 1;
				state = S_QUOTED;
				continue;
			}
			if (cls[(unsigned char)*p] == C_PLAIN) {  /* lenient: "a"b reads as ab */
				state = S_PLAIN;
				continue;
			}
			goto separator;
		}
	separator:
		p = c->in;
		switch (cls[(unsigned char)*p]) {
		case C_COMMA:
			if (end_field(c, err) < 0)
				return -1;
			c->in = p + 1;
			state = S_START;
			continue;
		case C_LF:
			if (end_field(c, err) < 0)
				return -1;
			c->in = p + 1;
			c->next_line++;
			return finish_record(c, err);
		case C_CR:
			if (end_field(c, err) < 0)
				return -1;
			c->in = p + 1;
			skip_lf = 1;
			continue;
		case C_NUL:
			return lp_err_set(err, LP_EPARSE, "%s:%llu: NUL byte in a field", c->name,
				(unsigned long long)c->line);
		default:
			/* a quote after plain bytes was consumed above; cannot happen */
			c->in = p + 1;
			continue;
		}
	}
	/* end of input */
	if (skip_lf)
		return finish_record(c, err);
	if (state == S_QUOTED)
		return lp_err_set(err, LP_EPARSE, "%s:%llu: end of file inside a quoted field (truncated file?)",
			c->name, (unsigned long long)c->line);
	if (!started)
		return 0;
	if (end_field(c, err) < 0)
		return -1;
	return finish_record(c, err);
}

int lp_csv_column(const struct lp_csv *c, const char *name)
{
	size_t i;
	for (i = 0; i < c->n_fields; i++)
		if (strcmp(c->fields[i], name) == 0)
			return (int)i;
	return -1;
}

/* Drops thousands separators: "12,345,678.5" -> "12345678.5". Only exact groups of three digits
 * after a comma are accepted, so "1,2" stays not-a-number. */
static int strip_thousands(const char *s, char *out, size_t cap)
{
	size_t n = 0;
	const char *p = s;
	int digits = 0, seen_comma = 0;
	if (*p == '-' || *p == '+')
		out[n++] = *p++;
	while (*p && *p != '.' && *p != 'e' && *p != 'E') {
		if (*p == ',') {
			if (digits == 0 || (seen_comma && digits != 3))
				return -1;
			if (!seen_comma && digits > 3)
				return -1;
			seen_comma = 1;
			digits = 0;
		} else if (*p >= '0' && *p <= '9') {
			digits++;
			if (n + 1 >= cap)
				return -1;
			out[n++] = *p;
		} else {
			return -1;
		}
		p++;
	}
	if (seen_comma && digits != 3)
		return -1;
	while (*p) {
		if (*p == ',' || n + 1 >= cap)
			return -1;
		out[n++] = *p++;
	}
	out[n] = '\0';
	return 0;
}

/* [+-]digits[.digits][(e|E)[+-]digits], or with the digits only after the point; trailing
 * spaces allowed. */
static int is_decimal(const char *s)
{
	int digits = 0;
	if (*s == '+' || *s == '-')
		s++;
	for (; *s >= '0' && *s <= '9'; s++)
		digits++;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			digits++;
	if (!digits)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	while (*s == ' ')
		s++;
	return *s == '\0';
}

int lp_csv_number(const char *s, double *out)
{
	char tmp[128];
	double v;
	char *end;
	while (*s == ' ')
		s++;
	if (!*s || !strcmp(s, "-") || !strcasecmp(s, "n/a") || !strcasecmp(s, "nan") || !strcasecmp(s, "-nan"))
		return 0;
	if (strchr(s, ',')) {
		if (strip_thousands(s, tmp, sizeof(tmp)) < 0)
			return -1;
		s = tmp;
	}
	/* decimal syntax only: strtod would also take "inf", "infinity" and hex ("0x10" as 16) */
	if (!is_decimal(s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end == s)
		return -1;
	while (*end == ' ')
		end++;
	if (*end || !isfinite(v))
		return -1;
	if (isnan(v))
		return 0;
	*out = v;
	return 1;
}

int lp_csv_cell_number(const char *file, uint64_t line, size_t col, const char *column, const char *s,
	double *out, struct lp_err *err)
{
	int k = lp_csv_number(s, out);
	if (k >= 0)
		return k;
	return lp_err_set(err, LP_EPARSE, "%s:%llu:%zu: '%s' value '%.40s' is not a finite decimal number", file,
		(unsigned long long)line, col + 1, column, s);
}

int lp_csv_cell_count(const char *file, uint64_t line, size_t col, const char *column, const char *s,
	uint64_t max, uint64_t *out, struct lp_err *err)
{
	double v;
	int k = lp_csv_cell_number(file, line, col, column, s, &v, err);
	if (k <= 0)
		return k;
	/* 2^64 is exactly representable; any double below it converts without overflow */
	if (v < 0 || v != floor(v) || v >= 18446744073709551616.0 || (uint64_t)v > max)
		return lp_err_set(err, LP_EPARSE, "%s:%llu:%zu: '%s' value '%.40s' is not a count (negative, "
			"fractional or overflowing)", file, (unsigned long long)line, col + 1, column, s);
	*out = (uint64_t)v;
	return 1;
}

int lp_csv_numberish(const char *s)
{
	while (*s == ' ')
		s++;
	if ((*s >= '0' && *s <= '9') || *s == '.')
		return 1;
	if (*s == '+' || *s == '-') {
		if (s[1] == '\0')
			return 0;   /* "-" is ncu's "no value" */
		s++;
	}
	return (*s >= '0' && *s <= '9') || *s == '.' || !strncasecmp(s, "inf", 3);
}
