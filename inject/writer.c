/* writer.c: the record side of the injected tracer's writer (lifecycle.c is the file side). NVTX
 * and CUPTI callbacks append fixed-size records (llmprof/trace_format.h) into their own thread's
 * buffer without any lock (the owner writes, then publishes the length with a release store);
 * strings, domains and status records go under one mutex into a shared buffer. Buffers come from
 * two pools (shared ones of LLMPROF_TRACE_BUFFER_MB, per-thread ones of 1/8 of that); the flush
 * thread (lifecycle.c) writes full buffers, and every LLMPROF_TRACE_FLUSH_MS what every buffer
 * has published so far. Order holds within a thread; different threads interleave in batches.
 * Also here: the per-thread state (one block behind one thread-local pointer), range ids, the
 * string table and domains.
 */

#include "writer_impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

struct inj_writer inj_w = {
	.once = PTHREAD_ONCE_INIT,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.write_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
	.wake_pipe = { -1, -1 },
	.log_fd = -1,
	.next_id = 1,
};

/* The calling thread's state, NULL until its first lp_inj_self. Only a pointer, so that the
 * library's whole thread-local storage is 8 bytes: built with the TLS descriptor dialect
 * (inject/CMakeLists.txt: -mtls-dialect=gnu2 on x86-64, the default elsewhere), a library that
 * dlopen loads gets it in glibc's static TLS surplus when there is room (then reading it is one
 * load at a fixed offset from the thread pointer, no __tls_get_addr and its dynamic thread vector)
 * and dynamic TLS otherwise (dlopen never fails for it, as it can for initial-exec TLS). */
static _Thread_local struct lp_inj_thread *tls_self;

/* The only code that touches tls_self. A descriptor call is assumed to preserve every register
 * but its result, which glibc's dynamic fallback did not do for vector registers before 2.40
 * (BZ #31372): out of line and out of interprocedural register allocation, the call sits where
 * the caller keeps nothing in a register it may clobber. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noipa))
#else
__attribute__((noinline))
#endif
static struct lp_inj_thread **self_ptr(void)
{
	return &tls_self;
}


/* ---- small helpers ---- */

uint64_t lp_inj_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t lp_inj_fork_gen(void)
{
	return atomic_load_explicit(&inj_w.fork_gen, memory_order_relaxed);
}

/* lp_inj_self's slow path: a thread's first call (its state allocated, zeroed, registered with
 * the thread-exit destructor when the key exists already; refill registers it otherwise), or its
 * first call in a fork child. NULL when out of memory. */
__attribute__((noinline, cold)) static struct lp_inj_thread *self_slow(struct lp_inj_thread **self, uint32_t gen)
{
	struct lp_inj_thread *t = *self;
	if (!t) {
		void *p;
		if (posix_memalign(&p, 64, sizeof(*t)) != 0)
			return NULL;
		t = memset(p, 0, sizeof(*t));
		if (atomic_load_explicit(&inj_w.have_thread_key, memory_order_acquire) &&
		    pthread_setspecific(inj_w.thread_key, t) == 0)
			t->keyed = 1;
		*self = t;
	}
	if (!t->tid || t->gen != gen) {
		/* a new thread, or the first call in a fork child: its file never saw the parent's
		 * pushes, and its buffer (if any) was emptied by the fork handler */
		t->gen = gen;
		t->tid = (uint32_t)syscall(SYS_gettid);
		t->busy = 0;
		t->depth = 0;
		t->overflow = 0;
		t->rt_correlation = 0;
		t->unit_parent = 0;
		t->unit_index = 0;
		t->unit_parents = 0;
		t->unit_prev = 0;
		t->reattach_units = 0;
		t->unit_skipping = 0;
		t->buf = NULL; /* the fork handler took the slot's buffer away (a new thread has none) */
		t->wlen = t->wcap = 0;
	}
	return t;
}

struct lp_inj_thread *lp_inj_self(void)
{
	struct lp_inj_thread **self = self_ptr();
	struct lp_inj_thread *t = *self;
	uint32_t gen = lp_inj_fork_gen();
	if (__builtin_expect(!t || !t->tid || t->gen != gen, 0))
		return self_slow(self, gen);
	return t;
}

uint32_t lp_inj_tid(void)
{
	struct lp_inj_thread *t = lp_inj_self();
	return t ? t->tid : (uint32_t)syscall(SYS_gettid);
}

uint64_t lp_inj_next_id(void)
{
	struct lp_inj_thread *t = lp_inj_self();
	if (!t)
		return atomic_fetch_add_explicit(&inj_w.next_id, 1, memory_order_relaxed);
	if (t->next_id == t->end_id) {
		enum { BLOCK = 1024 };
		t->next_id = atomic_fetch_add_explicit(&inj_w.next_id, BLOCK, memory_order_relaxed);
		t->end_id = t->next_id + BLOCK;
	}
	return t->next_id++;
}

int lp_inj_active(void)
{
	return atomic_load_explicit(&inj_w.state, memory_order_acquire) == ST_ON;
}

unsigned lp_inj_flush_ms(void)
{
	return inj_w.flush_ms;
}

long inj_env_long(const char *name, long def, long lo, long hi)
{
	const char *s = getenv(name);
	char *end;
	long v;
	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return def;
	return v;
}

int inj_env_off(const char *name)
{
	const char *s = getenv(name);
	return s && (!strcmp(s, "0") || !strcmp(s, "off") || !strcmp(s, "no") || !strcmp(s, "false"));
}

int lp_inj_env_on(const char *name)
{
	const char *s = getenv(name);
	return s && (!strcmp(s, "1") || !strcmp(s, "on"));
}

int lp_inj_env_off(const char *name)
{
	const char *s = getenv(name);
	return s && (!strcmp(s, "0") || !strcmp(s, "off"));
}

void lp_inj_log(const char *fmt, ...)
{
	char line[1024];
	int n, m;
	va_list ap;
	if (inj_w.log_fd < 0)
		return;
	n = snprintf(line, sizeof(line), "llmprof-inject[%u]: ", (unsigned)getpid());
	if (n < 0)
		return;
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(inj_w.log_fd, line, (size_t)n) < 0) {
		/* nowhere else to say it */
	}
}

int inj_write_all(int fd, const void *data, size_t len)
{
	const unsigned char *p = data;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int inj_mkdir_p(const char *path)
{
	char tmp[2048];
	size_t i, n = strlen(path);
	if (n == 0 || n >= sizeof(tmp))
		return -1;
	memcpy(tmp, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (tmp[i] == '/' || tmp[i] == '\0') {
			char c = tmp[i];
			tmp[i] = '\0';
			if (mkdir(tmp, 0777) < 0 && errno != EEXIST)
				return -1;
			tmp[i] = c;
		}
	}
	return 0;
}

static uint32_t hash32(const char *s, size_t n)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	size_t i;
	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h ? h : 1;
}

void lp_inj_wake(void)
{
	int saved = errno;
	if (inj_w.wake_pipe[1] >= 0 && write(inj_w.wake_pipe[1], "w", 1) < 0) {
		/* full pipe: a wake-up is pending anyway */
	}
	errno = saved;
}

/* ---- buffers (inj_w.lock held) ---- */

static struct inj_buf *take_buffer_locked(int per_thread)
{
	struct inj_buf **list = per_thread ? &inj_w.tfree_list : &inj_w.free_list;
	unsigned *n = per_thread ? &inj_w.n_tbuffers : &inj_w.n_buffers;
	size_t bytes = per_thread ? inj_w.tbuf_bytes : inj_w.buf_bytes;
	struct inj_buf *b = *list;
	if (b) {
		*list = b->next;
	} else {
		if (*n >= (per_thread ? inj_w.max_tbuffers : inj_w.max_buffers))
			return NULL;
		b = malloc(sizeof(*b) + bytes);
		if (!b)
			return NULL;
		b->cap = bytes;
		b->per_thread = per_thread;
		(*n)++;
	}
	b->next = NULL;
	b->len = 0;
	b->flushed = 0;
	atomic_store_explicit(&b->pub_len, 0, memory_order_relaxed);
	return b;
}

void inj_free_buffer_locked(struct inj_buf *b)
{
	struct inj_buf **list = b->per_thread ? &inj_w.tfree_list : &inj_w.free_list;
	b->next = *list;
	*list = b;
}

void inj_queue_full_locked(struct inj_buf *b)
{
	b->next = NULL;
	if (inj_w.full_tail)
		inj_w.full_tail->next = b;
	else
		inj_w.full_head = b;
	inj_w.full_tail = b;
}

int inj_append_raw_locked(uint16_t type, const void *payload, size_t size, const void *extra,
	size_t extra_len)
{
	struct lp_trace_rec_header h;
	size_t need = sizeof(h) + size + extra_len;
	if (size + extra_len > LP_TRACE_MAX_RECORD_BYTES)
		return -1;
	if (!inj_w.cur || inj_w.cur->cap - inj_w.cur->len < need) {
		struct inj_buf *b = take_buffer_locked(0);
		if (!b || b->cap < need) {
			if (b)
				inj_free_buffer_locked(b);
			inj_w.own_dropped++;
			return -1;
		}
		if (inj_w.cur) {
			inj_queue_full_locked(inj_w.cur);
			lp_inj_wake();
		}
		inj_w.cur = b;
	}
	h.type = type;
	h.flags = 0;
	h.size = (uint32_t)(size + extra_len);
	memcpy(inj_w.cur->data + inj_w.cur->len, &h, sizeof(h));
	memcpy(inj_w.cur->data + inj_w.cur->len + sizeof(h), payload, size);
	if (extra_len)
		memcpy(inj_w.cur->data + inj_w.cur->len + sizeof(h) + size, extra, extra_len);
	inj_w.cur->len += need;
	atomic_store_explicit(&inj_w.cur->pub_len, inj_w.cur->len, memory_order_relaxed); /* read under inj_w.lock */
	return 0;
}

/* ---- per-thread buffers ---- */

static int ready_locked(void);

/* Thread exit: what the thread buffered is written by the next flush round; its state is freed. */
void inj_thread_release(void *arg)
{
	struct lp_inj_thread *t = arg, **self = self_ptr();
	struct lp_inj_slot *s = t->slot, **pp;
	if (*self == t)
		*self = NULL; /* a later call of this thread (another destructor) starts over */
	if (s) {
		pthread_mutex_lock(&inj_w.lock);
		for (pp = &inj_w.threads; *pp; pp = &(*pp)->next) {
			if (*pp == s) {
				*pp = s->next;
				if (s->cur)
					inj_queue_full_locked(s->cur);
				free(s);
				break;
			}
		}
		pthread_mutex_unlock(&inj_w.lock);
	}
	free(t);
}

/* The slow path of lp_inj_append: the thread has no buffer yet or its buffer is full. Hands the
 * full one to the flush thread and takes another from the pool. NULL: dropped (counted). Sets the
 * thread's mirror of its buffer (t->buf, wlen, wcap) either way. */
static struct inj_buf *refill(struct lp_inj_thread *t, size_t need)
{
	struct inj_buf *b = NULL;
	pthread_mutex_lock(&inj_w.lock);
	if (ready_locked() < 0)
		goto out;
	if (!t->keyed && atomic_load_explicit(&inj_w.have_thread_key, memory_order_relaxed) &&
	    pthread_setspecific(inj_w.thread_key, t) == 0)
		t->keyed = 1; /* a state from before the key existed */
	if (!t->slot) {
		t->slot = calloc(1, sizeof(*t->slot));
		if (!t->slot)
			goto out;
		t->slot->next = inj_w.threads;
		inj_w.threads = t->slot;
	}
	if (t->slot->cur && t->slot->cur->cap - t->slot->cur->len >= need) {
		b = t->slot->cur; /* a fork child's reopen left it usable */
		goto out;
	}
	if (t->slot->cur) {
		inj_queue_full_locked(t->slot->cur);
		t->slot->cur = NULL;
		lp_inj_wake();
	}
	b = take_buffer_locked(1);
	if (b && b->cap < need) {
		inj_free_buffer_locked(b);
		b = NULL;
	}
	t->slot->cur = b;
out:
	t->buf = b;
	t->wlen = b ? b->len : 0;
	t->wcap = b ? b->cap : 0;
	if (!b)
		inj_w.own_dropped++;
	pthread_mutex_unlock(&inj_w.lock);
	return b;
}

/* ---- strings and domains (inj_w.lock held) ---- */

static int strings_grow_locked(void)
{
	uint32_t ncap = inj_w.cap_slots ? inj_w.cap_slots * 2 : 4096, i;
	uint32_t *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -1;
	for (i = 0; i < inj_w.cap_slots; i++) {
		uint32_t sid = inj_w.slots[i], j;
		if (!sid)
			continue;
		j = inj_w.strs[sid - 1].hash & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = sid;
	}
	free(inj_w.slots);
	inj_w.slots = ns;
	inj_w.cap_slots = ncap;
	return 0;
}

uint32_t inj_intern_locked(const char *s, size_t n)
{
	uint32_t h, j, sid;
	char *copy;
	struct lp_trace_string rs;
	if (n > LP_TRACE_MAX_STRING_BYTES)
		n = LP_TRACE_MAX_STRING_BYTES;
	if ((inj_w.n_strs + 1) * 2 > inj_w.cap_slots && strings_grow_locked() < 0)
		return 0;
	h = hash32(s, n);
	for (j = h & (inj_w.cap_slots - 1); (sid = inj_w.slots[j]) != 0; j = (j + 1) & (inj_w.cap_slots - 1)) {
		const struct inj_str *e = &inj_w.strs[sid - 1];
		if (e->hash == h && e->len == n && !memcmp(e->s, s, n))
			return sid;
	}
	if (inj_w.n_strs >= LP_TRACE_MAX_STRINGS - 1)
		return 0;
	if (inj_w.n_strs == inj_w.cap_strs) {
		uint32_t ncap = inj_w.cap_strs ? inj_w.cap_strs * 2 : 1024;
		struct inj_str *ns = realloc(inj_w.strs, ncap * sizeof(*ns));
		if (!ns)
			return 0;
		inj_w.strs = ns;
		inj_w.cap_strs = ncap;
	}
	copy = malloc(n + 1);
	if (!copy)
		return 0;
	memcpy(copy, s, n);
	copy[n] = '\0';
	sid = ++inj_w.n_strs;
	inj_w.strs[sid - 1].s = copy;
	inj_w.strs[sid - 1].len = (uint32_t)n;
	inj_w.strs[sid - 1].hash = h;
	inj_w.slots[j] = sid;
	rs.sid = sid;
	rs.len = (uint32_t)n;
	if (inj_w.fd >= 0)
		inj_append_raw_locked(LP_TREC_STRING, &rs, sizeof(rs), copy, n);
	/* else: a fork child before its file exists; inj_open_file_locked writes the whole table */
	return sid;
}

/* A fork child opens its own file at its first record. inj_w.lock held; returns 0 when ready. */
static int ready_locked(void)
{
	if (atomic_load(&inj_w.state) != ST_ON)
		return -1;
	if (inj_w.need_reopen) {
		inj_w.need_reopen = 0;
		if (inj_open_file_locked() < 0 || inj_start_flusher_locked() < 0) {
			atomic_store(&inj_w.state, ST_OFF);
			return -1;
		}
	}
	return 0;
}

void inj_rank_record_locked(void)
{
	struct lp_inj_rank rk;
	struct lp_trace_rank tr;
	if (!lp_inj_rank_read(&rk))
		return;
	memset(&tr, 0, sizeof(tr));
	tr.rank = rk.rank;
	tr.local_rank = rk.local_rank;
	tr.world_size = rk.world_size;
	tr.local_world_size = rk.local_world_size;
	tr.source_sid = rk.source ? inj_intern_locked(rk.source, strlen(rk.source)) : 0;
	tr.visible_devices_sid = rk.visible_devices ? inj_intern_locked(rk.visible_devices, strlen(rk.visible_devices)) : 0;
	if (inj_w.rank_written && !memcmp(&tr, &inj_w.rank_last, sizeof(tr)))
		return;
	if (inj_append_raw_locked(LP_TREC_RANK, &tr, sizeof(tr), NULL, 0) == 0) {
		inj_w.rank_last = tr;
		inj_w.rank_written = 1;
	}
}

void lp_inj_rank_update(void)
{
	if (!lp_inj_active())
		return;
	pthread_mutex_lock(&inj_w.lock);
	if (ready_locked() == 0)
		inj_rank_record_locked();
	pthread_mutex_unlock(&inj_w.lock);
}

static uint32_t intern_stable(const char *s, size_t n, const char **stable)
{
	uint32_t sid = 0;
	*stable = NULL;
	if (!lp_inj_active() || !s)
		return 0;
	pthread_mutex_lock(&inj_w.lock);
	if (ready_locked() == 0 && (sid = inj_intern_locked(s, n)) != 0)
		*stable = inj_w.strs[sid - 1].s;
	pthread_mutex_unlock(&inj_w.lock);
	return sid;
}

uint32_t lp_inj_intern(const char *s, size_t n)
{
	const char *stable;
	return intern_stable(s, n, &stable);
}

uint32_t lp_inj_intern_cached(const char *s, size_t n)
{
	struct lp_inj_thread *t;
	struct lp_inj_strcache *e;
	const char *stable;
	uint32_t h, sid;
	if (!s)
		return 0;
	if (n > LP_TRACE_MAX_STRING_BYTES)
		n = LP_TRACE_MAX_STRING_BYTES;
	t = lp_inj_self();
	if (!t)
		return intern_stable(s, n, &stable);
	h = hash32(s, n);
	e = &t->strings[h & (LP_INJ_STRCACHE - 1)];
	if (e->sid && e->hash == h && e->len == n && !memcmp(e->s, s, n))
		return e->sid;
	sid = intern_stable(s, n, &stable);
	if (sid) {
		e->s = stable;
		e->len = (uint32_t)n;
		e->hash = h;
		e->sid = sid;
	}
	return sid;
}

uint32_t lp_inj_domain(const char *name, size_t n)
{
	uint32_t id = 0, sid, i;
	if (!lp_inj_active() || !name)
		return 0;
	pthread_mutex_lock(&inj_w.lock);
	if (ready_locked() < 0 || (sid = inj_intern_locked(name, n)) == 0)
		goto out;
	for (i = 0; i < inj_w.n_domains; i++) {
		if (inj_w.domains[i] == sid) {
			id = i + 1;
			goto out;
		}
	}
	if (inj_w.n_domains == inj_w.cap_domains) {
		uint32_t ncap = inj_w.cap_domains ? inj_w.cap_domains * 2 : 16;
		uint32_t *nd = realloc(inj_w.domains, ncap * sizeof(*nd));
		if (!nd)
			goto out;
		inj_w.domains = nd;
		inj_w.cap_domains = ncap;
	}
	inj_w.domains[inj_w.n_domains++] = sid;
	id = inj_w.n_domains;
	{
		struct lp_trace_domain d = { id, sid };
		inj_append_raw_locked(LP_TREC_DOMAIN, &d, sizeof(d), NULL, 0);
	}
out:
	pthread_mutex_unlock(&inj_w.lock);
	return id;
}

int lp_inj_append(uint16_t type, const void *payload, size_t size, const void *extra, size_t extra_len)
{
	struct lp_inj_thread *t;
	struct lp_trace_rec_header h;
	struct inj_buf *b;
	size_t need = sizeof(h) + size + extra_len;
	if (!lp_inj_active())
		return -1;
	t = lp_inj_self();
	if (!t || t->busy || size + extra_len > LP_TRACE_MAX_RECORD_BYTES) {
		/* no state (out of memory), or re-entered from a signal handler in the middle of an
		 * append on this thread */
		atomic_fetch_add_explicit(&inj_w.own_dropped_fast, 1, memory_order_relaxed);
		return -1;
	}
	t->busy = 1;
	/* the write position and end come from the thread state's first line: the buffer's header is
	 * only stored to (its line's miss does not hold up the record) */
	b = t->buf;
	if (__builtin_expect(t->wcap - t->wlen < need || inj_w.need_reopen, 0))
		b = refill(t, need);
	if (b) {
		size_t len = t->wlen;
		unsigned char *p = b->data + len;
		h.type = type;
		h.flags = 0;
		h.size = (uint32_t)(size + extra_len);
		memcpy(p, &h, sizeof(h));
		memcpy(p + sizeof(h), payload, size);
		if (extra_len)
			memcpy(p + sizeof(h) + size, extra, extra_len);
		len += need;
		t->wlen = len;
		b->len = len;
		atomic_store_explicit(&b->pub_len, len, memory_order_release);
	}
	t->busy = 0;
	return b ? 0 : -1;
}

void lp_inj_set_cupti_status(uint32_t code, const char *message)
{
	lp_inj_log("cupti: %s", message ? message : "");
	if (!lp_inj_active())
		return;
	pthread_mutex_lock(&inj_w.lock);
	if (ready_locked() == 0) {
		struct lp_trace_cupti_status cs;
		cs.code = code;
		cs.message_sid = message ? inj_intern_locked(message, strlen(message)) : 0;
		inj_w.cupti_status_code = (int)code;
		inj_w.cupti_status_sid = cs.message_sid;
		inj_append_raw_locked(LP_TREC_CUPTI_STATUS, &cs, sizeof(cs), NULL, 0);
	}
	pthread_mutex_unlock(&inj_w.lock);
}

void lp_inj_add_cupti_dropped(uint64_t n)
{
	atomic_fetch_add(&inj_w.cupti_dropped, n);
}
