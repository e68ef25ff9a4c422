/* lifecycle.c: the file side of the injected tracer's writer (writer.c is the record side): the
 * per-process file and what leads it, the background flush thread that writes published records,
 * the forced flushes (exit, SIGTERM/SIGINT, cuProfilerStop), fork children, and initialization.
 * Shares inj_w with writer.c through writer_impl.h; the lock order is written there.
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

/* ---- the file ---- */

uint32_t inj_intern_locked(const char *s, size_t n);
int inj_start_flusher_locked(void);

static size_t read_small_file(const char *path, char *out, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	if (fd < 0)
		return 0;
	while (len < cap) {
		ssize_t r = read(fd, out + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	return len;
}

/* Opens this process's file, writes the preamble and queues the PROCESS record and (in a fork
 * child) the strings and domains already known. inj_w.lock held. */
int inj_open_file_locked(void)
{
	struct lp_trace_preamble pre;
	struct lp_trace_process pr;
	char host[256], exe[1024], cmd[2048];
	ssize_t n;
	size_t clen, i;
	int fd = -1, k;
	uint32_t sid;

	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	for (i = 0; host[i]; i++)
		if (host[i] == '/')
			host[i] = '_';
	inj_w.pid = (uint32_t)getpid();
	if (inj_mkdir_p(inj_w.dir) < 0) {
		lp_inj_log("cannot create trace folder '%s': %s", inj_w.dir, strerror(errno));
		return -1;
	}
	for (k = 0; k < 100 && fd < 0; k++) {
		if (k == 0)
			snprintf(inj_w.path, sizeof(inj_w.path), "%s/%s.%u%s", inj_w.dir, host, (unsigned)inj_w.pid, LP_TRACE_FILE_SUFFIX);
		else
			snprintf(inj_w.path, sizeof(inj_w.path), "%s/%s.%u.%d%s", inj_w.dir, host, (unsigned)inj_w.pid, k,
				LP_TRACE_FILE_SUFFIX);
		fd = open(inj_w.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		lp_inj_log("cannot create trace file '%s': %s", inj_w.path, strerror(errno));
		return -1;
	}
	memcpy(pre.magic, LP_TRACE_MAGIC, sizeof(pre.magic));
	pre.version_major = LP_TRACE_VERSION_MAJOR;
	pre.version_minor = LP_TRACE_VERSION_MINOR;
	pre.flags = 0;
	if (inj_write_all(fd, &pre, sizeof(pre)) < 0) {
		lp_inj_log("cannot write '%s': %s", inj_w.path, strerror(errno));
		close(fd);
		return -1;
	}
	inj_w.fd = fd;

	/* a fork child re-states what its file refers to: every string and domain known so far */
	for (sid = 1; sid <= inj_w.n_strs; sid++) {
		struct lp_trace_string rs = { sid, inj_w.strs[sid - 1].len };
		inj_append_raw_locked(LP_TREC_STRING, &rs, sizeof(rs), inj_w.strs[sid - 1].s, rs.len);
	}
	for (sid = 1; sid <= inj_w.n_domains; sid++) {
		struct lp_trace_domain d = { sid, inj_w.domains[sid - 1] };
		inj_append_raw_locked(LP_TREC_DOMAIN, &d, sizeof(d), NULL, 0);
	}

	memset(&pr, 0, sizeof(pr));
	pr.pid = inj_w.pid;
	pr.ppid = inj_w.forked ? inj_w.parent_pid : (uint32_t)getppid();
	pr.start_ns = lp_inj_now_ns();
	pr.clock = LP_TRACE_CLOCK_REALTIME;
	pr.forked = (uint32_t)inj_w.forked;
	pr.host_sid = inj_intern_locked(host, strlen(host));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	pr.exe_sid = inj_intern_locked(exe, strlen(exe));
	clen = read_small_file("/proc/self/cmdline", cmd, sizeof(cmd) - 1);
	while (clen && cmd[clen - 1] == '\0')
		clen--;
	for (i = 0; i < clen; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	pr.cmdline_sid = inj_intern_locked(cmd, clen);
	inj_append_raw_locked(LP_TREC_PROCESS, &pr, sizeof(pr), NULL, 0);
	inj_w.rank_written = 0;
	inj_rank_record_locked();
	if (inj_w.cupti_status_code) {
		struct lp_trace_cupti_status cs = { (uint32_t)inj_w.cupti_status_code, inj_w.cupti_status_sid };
		inj_append_raw_locked(LP_TREC_CUPTI_STATUS, &cs, sizeof(cs), NULL, 0);
	}
	/* written now, so that the PROCESS record leads the file whatever thread buffers fill first
	 * (no flush thread runs yet: this is initialization or a fork child's first record) */
	if (inj_w.cur && inj_w.cur->len) {
		if (inj_write_all(fd, inj_w.cur->data, inj_w.cur->len) < 0)
			lp_inj_log("cannot write '%s': %s", inj_w.path, strerror(errno));
		inj_w.cur->len = 0;
		atomic_store_explicit(&inj_w.cur->pub_len, 0, memory_order_relaxed);
	}
	lp_inj_log("tracing to '%s'", inj_w.path);
	return 0;
}

/* ---- flushing ---- */

/* Records in [from, to) of a buffer (for the drop count when a write fails). */
static uint64_t count_records(const struct inj_buf *b, size_t from, size_t to)
{
	uint64_t n = 0;
	while (from + sizeof(struct lp_trace_rec_header) <= to) {
		struct lp_trace_rec_header h;
		memcpy(&h, b->data + from, sizeof(h));
		from += sizeof(h) + h.size;
		n++;
	}
	return n;
}

static void write_span(struct inj_buf *b, size_t from, size_t to)
{
	if (to <= from)
		return;
	if (inj_w.fd < 0 || inj_write_all(inj_w.fd, b->data + from, to - from) < 0) {
		uint64_t n = count_records(b, from, to);
		pthread_mutex_lock(&inj_w.lock);
		inj_w.own_dropped += n;
		pthread_mutex_unlock(&inj_w.lock);
		if (!inj_w.write_error_logged && inj_w.fd >= 0) {
			inj_w.write_error_logged = 1;
			lp_inj_log("cannot write '%s': %s (records are dropped and counted)", inj_w.path, strerror(errno));
		}
	}
}

/* One round: CUPTI records in, buffers out to the file. Takes write_lock. Full buffers first (in
 * the order they filled up), then, when `include_cur`, the shared partial buffer and what every
 * thread buffer published since the last round. */
static void flush_round(int include_cur, int force_cupti)
{
	struct inj_buf *list, *b, *next;
	struct lp_inj_slot *sl;
	size_t n_spans = 0, i;
	uint64_t cdrop, odrop;

	pthread_mutex_lock(&inj_w.write_lock);
	lp_inj_cupti_service(); /* bursts: an attach asked for ahead (sample.c) */
	lp_inj_stage_drain(0);
	if (force_cupti)
		lp_inj_cupti_flush(1);
	else if (include_cur)
		lp_inj_cupti_flush(0); /* periodic: completed records, so a SIGKILL loses one period */
	lp_inj_cupti_drain();
	pthread_mutex_lock(&inj_w.lock);
	cdrop = atomic_load(&inj_w.cupti_dropped);
	odrop = inj_w.own_dropped + atomic_load(&inj_w.own_dropped_fast);
	if (inj_w.fd >= 0 && (cdrop != inj_w.written_dropped[0] || odrop != inj_w.written_dropped[1])) {
		struct lp_trace_dropped d = { cdrop, odrop };
		if (inj_append_raw_locked(LP_TREC_DROPPED, &d, sizeof(d), NULL, 0) == 0) {
			inj_w.written_dropped[0] = cdrop;
			inj_w.written_dropped[1] = odrop;
		}
	}
	list = inj_w.full_head;
	inj_w.full_head = inj_w.full_tail = NULL;
	if (include_cur && inj_w.cur && inj_w.cur->len) {
		b = inj_w.cur;
		inj_w.cur = NULL;
		b->next = NULL;
		if (list) {
			struct inj_buf *t = list;
			while (t->next)
				t = t->next;
			t->next = b;
		} else {
			list = b;
		}
	}
	if (include_cur) {
		for (sl = inj_w.threads; sl; sl = sl->next) {
			size_t to;
			if (!sl->cur)
				continue;
			to = atomic_load_explicit(&sl->cur->pub_len, memory_order_acquire);
			if (to <= sl->cur->flushed)
				continue;
			if (n_spans == inj_w.cap_spans) {
				size_t ncap = inj_w.cap_spans ? inj_w.cap_spans * 2 : 64;
				struct inj_span *ns = realloc(inj_w.spans, ncap * sizeof(*ns));
				if (!ns)
					break; /* the next round writes it */
				inj_w.spans = ns;
				inj_w.cap_spans = ncap;
			}
			inj_w.spans[n_spans].b = sl->cur;
			inj_w.spans[n_spans].from = sl->cur->flushed;
			inj_w.spans[n_spans].to = to;
			n_spans++;
		}
	}
	pthread_mutex_unlock(&inj_w.lock);

	/* a queued buffer is final: its owner moved on (its last pub_len store preceded the queueing
	 * under inj_w.lock); a listed one is still being written past `to`, never before it */
	for (b = list; b; b = b->next)
		write_span(b, b->flushed, atomic_load_explicit(&b->pub_len, memory_order_acquire));
	for (i = 0; i < n_spans; i++) {
		write_span(inj_w.spans[i].b, inj_w.spans[i].from, inj_w.spans[i].to);
		inj_w.spans[i].b->flushed = inj_w.spans[i].to; /* only flush rounds (serialized) touch it */
	}
	pthread_mutex_lock(&inj_w.lock);
	for (b = list; b; b = next) {
		next = b->next;
		inj_free_buffer_locked(b);
	}
	pthread_mutex_unlock(&inj_w.lock);
	pthread_mutex_unlock(&inj_w.write_lock);
}

static void *flusher_main(void *arg)
{
	uint64_t last_full = lp_inj_now_ns();
	(void)arg;
	for (;;) {
		struct pollfd pfd;
		char drain[64];
		uint64_t req, now;
		int stop, sync;
		pfd.fd = inj_w.wake_pipe[0];
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, (int)inj_w.flush_ms) > 0) {
			while (read(inj_w.wake_pipe[0], drain, sizeof(drain)) > 0) {
			}
		}
		req = atomic_load(&inj_w.flush_req_gen);
		stop = atomic_load(&inj_w.stop);
		sync = req > atomic_load(&inj_w.flush_done_gen);
		now = lp_inj_now_ns();
		if (stop)
			break;
		if (sync || now - last_full >= (uint64_t)inj_w.flush_ms * 1000000ull) {
			flush_round(1, sync);
			last_full = now;
		} else {
			flush_round(0, 0);
		}
		if (sync)
			atomic_store(&inj_w.flush_done_gen, req);
	}
	return NULL;
}

int inj_start_flusher_locked(void)
{
	sigset_t all, old;
	int rc;
	if (inj_w.wake_pipe[0] >= 0) {
		close(inj_w.wake_pipe[0]);
		close(inj_w.wake_pipe[1]);
		inj_w.wake_pipe[0] = inj_w.wake_pipe[1] = -1;
	}
	if (pipe2(inj_w.wake_pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
		lp_inj_log("cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	/* the flush thread never takes the host's signals */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&inj_w.flusher, NULL, flusher_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		lp_inj_log("cannot start the flush thread: %s", strerror(rc));
		return -1;
	}
	inj_w.flusher_running = 1;
	return 0;
}

void lp_inj_request_flush(int wait_ms)
{
	uint64_t gen;
	int waited = 0;
	if (!lp_inj_active() || !inj_w.flusher_running)
		return;
	gen = atomic_fetch_add(&inj_w.flush_req_gen, 1) + 1;
	lp_inj_wake();
	while (wait_ms > 0 && waited < wait_ms && atomic_load(&inj_w.flush_done_gen) < gen) {
		poll(NULL, 0, 5);
		waited += 5;
	}
}

/* End of the process: everything out, END record, CUPTI detached, file closed. */
static void shutdown_tracer(void)
{
	static _Atomic uint32_t done_gen = 0; /* fork generation + 1 of the last shutdown */
	uint32_t mine = lp_inj_fork_gen() + 1;
	struct lp_trace_end e;
	if (atomic_exchange(&done_gen, mine) == mine || !lp_inj_active())
		return;
	pthread_mutex_lock(&inj_w.lock);
	if (inj_w.need_reopen) { /* fork child that recorded nothing: no file */
		atomic_store(&inj_w.state, ST_CLOSED);
		pthread_mutex_unlock(&inj_w.lock);
		return;
	}
	pthread_mutex_unlock(&inj_w.lock);

	pthread_mutex_lock(&inj_w.write_lock);
	lp_inj_cupti_flush(1);
	pthread_mutex_unlock(&inj_w.write_lock);
	if (inj_w.flusher_running) {
		struct timespec ts;
		atomic_store(&inj_w.stop, 1);
		lp_inj_wake();
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 5;
		if (pthread_timedjoin_np(inj_w.flusher, NULL, &ts) != 0)
			lp_inj_log("the flush thread did not stop within 5 s; writing without it");
		inj_w.flusher_running = 0;
	}
	lp_inj_stage_drain(1);
	lp_inj_sample_finish();
	flush_round(1, 0);
	lp_inj_cupti_finalize();
	e.end_ns = lp_inj_now_ns();
	e.reason = LP_TRACE_END_EXIT;
	e.reserved = 0;
	pthread_mutex_lock(&inj_w.lock);
	inj_append_raw_locked(LP_TREC_END, &e, sizeof(e), NULL, 0);
	pthread_mutex_unlock(&inj_w.lock);
	flush_round(1, 0);
	pthread_mutex_lock(&inj_w.lock);
	atomic_store(&inj_w.state, ST_CLOSED);
	pthread_mutex_unlock(&inj_w.lock);
	pthread_mutex_lock(&inj_w.write_lock);
	if (inj_w.fd >= 0) {
		close(inj_w.fd);
		inj_w.fd = -1;
	}
	pthread_mutex_unlock(&inj_w.write_lock);
	lp_inj_log("trace closed ('%s')", inj_w.path);
}

static void on_exit_handler(void)
{
	shutdown_tracer();
}

__attribute__((destructor)) static void on_unload(void)
{
	shutdown_tracer();
}

/* SIGTERM/SIGINT: flush what we have (bounded wait), then do what the host would have done. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;
	struct sigaction *old = sig == SIGTERM ? &inj_w.old_term : &inj_w.old_int;
	lp_inj_request_flush(inj_w.signal_wait_ms);
	if (old->sa_flags & SA_SIGINFO) {
		if (old->sa_sigaction)
			old->sa_sigaction(sig, si, uc);
	} else if (old->sa_handler == SIG_DFL) {
		/* restore the default action and re-raise: delivered when this handler returns, so the
		 * process ends with the signal's own status */
		sigaction(sig, old, NULL);
		raise(sig);
	} else if (old->sa_handler != SIG_IGN) {
		old->sa_handler(sig);
	}
	errno = saved;
}

static void install_signal_handlers(void)
{
	int sigs[2] = { SIGTERM, SIGINT }, i;
	for (i = 0; i < 2; i++) {
		struct sigaction sa, *old = sigs[i] == SIGTERM ? &inj_w.old_term : &inj_w.old_int;
		if (sigaction(sigs[i], NULL, old) < 0)
			continue;
		if (!(old->sa_flags & SA_SIGINFO) && old->sa_handler == SIG_IGN)
			continue; /* the host ignores it (nohup): leave it so */
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_signal;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
	inj_w.handlers_installed = 1;
}

/* ---- fork ---- */

static void atfork_prepare(void)
{
	pthread_mutex_lock(&inj_w.write_lock);
	pthread_mutex_lock(&inj_w.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&inj_w.lock);
	pthread_mutex_unlock(&inj_w.write_lock);
}

static void atfork_child(void)
{
	struct inj_buf *b, *next;
	/* the forking thread owns both locks in the child */
	atomic_fetch_add(&inj_w.fork_gen, 1);
	inj_w.parent_pid = inj_w.pid;
	inj_w.forked = 1;
	inj_w.flusher_running = 0;
	atomic_store(&inj_w.stop, 0);
	atomic_store(&inj_w.flush_req_gen, 0);
	atomic_store(&inj_w.flush_done_gen, 0);
	/* the parent writes what was buffered; the child starts empty */
	if (inj_w.cur)
		inj_queue_full_locked(inj_w.cur);
	inj_w.cur = NULL;
	for (b = inj_w.full_head; b; b = next) {
		next = b->next;
		inj_free_buffer_locked(b);
	}
	inj_w.full_head = inj_w.full_tail = NULL;
	{
		/* thread buffers hold the parent's records; the other threads do not exist here (their
		 * slots stay listed, empty: they are never freed, so no pointer to them dangles) */
		struct lp_inj_slot *sl;
		for (sl = inj_w.threads; sl; sl = sl->next) {
			if (sl->cur)
				inj_free_buffer_locked(sl->cur);
			sl->cur = NULL;
		}
	}
	if (inj_w.fd >= 0)
		close(inj_w.fd);
	inj_w.fd = -1;
	inj_w.own_dropped = 0;
	atomic_store(&inj_w.own_dropped_fast, 0);
	atomic_store(&inj_w.cupti_dropped, 0);
	inj_w.written_dropped[0] = inj_w.written_dropped[1] = 0;
	inj_w.write_error_logged = 0;
	lp_inj_sample_forked();
	if (lp_inj_cupti_forked()) {
		const char *m = "fork child of a process that used CUDA: CUPTI left alone";
		inj_w.cupti_status_code = LP_TRACE_CUPTI_FORK;
		inj_w.cupti_status_sid = inj_intern_locked(m, strlen(m));
	}
	if (atomic_load(&inj_w.state) == ST_ON) {
		if (inj_w.fork_child_mode)
			inj_w.need_reopen = 1;
		else
			atomic_store(&inj_w.state, ST_OFF);
	}
	pthread_mutex_unlock(&inj_w.lock);
	pthread_mutex_unlock(&inj_w.write_lock);
}

/* ---- initialization ---- */

static void init_once(void)
{
	const char *dir = getenv("LLMPROF_TRACE_DIR");
	const char *logp = getenv("LLMPROF_TRACE_LOG");

	if (logp && *logp)
		inj_w.log_fd = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (inj_env_off("LLMPROF_TRACE")) {
		lp_inj_log("LLMPROF_TRACE=%s: tracing off", getenv("LLMPROF_TRACE"));
		atomic_store(&inj_w.state, ST_OFF);
		return;
	}
	snprintf(inj_w.dir, sizeof(inj_w.dir), "%s", dir && *dir ? dir : "trace");
	inj_w.flush_ms = (unsigned)inj_env_long("LLMPROF_TRACE_FLUSH_MS", 500, 10, 600000);
	inj_w.buf_bytes = (size_t)inj_env_long("LLMPROF_TRACE_BUFFER_MB", 4, 1, 10) << 20;
	inj_w.max_buffers = (unsigned)inj_env_long("LLMPROF_TRACE_MAX_BUFFERS", 16, 2, 1024);
	/* per-thread buffers: 1/8 of the size, 8 times as many (the same memory at most) */
	inj_w.tbuf_bytes = inj_w.buf_bytes / 8;
	inj_w.max_tbuffers = inj_w.max_buffers * 8;
	if (pthread_key_create(&inj_w.thread_key, inj_thread_release) == 0)
		atomic_store_explicit(&inj_w.have_thread_key, 1, memory_order_release);
	inj_w.signal_wait_ms = (int)inj_env_long("LLMPROF_TRACE_SIGNAL_WAIT_MS", 2000, 0, 60000);
	inj_w.fork_child_mode = !lp_inj_env_off("LLMPROF_TRACE_FORK");

	pthread_mutex_lock(&inj_w.lock);
	if (inj_open_file_locked() < 0 || inj_start_flusher_locked() < 0) {
		if (inj_w.fd >= 0) {
			close(inj_w.fd);
			unlink(inj_w.path);
			inj_w.fd = -1;
		}
		pthread_mutex_unlock(&inj_w.lock);
		atomic_store(&inj_w.state, ST_OFF);
		return;
	}
	atomic_store(&inj_w.state, ST_ON);
	pthread_mutex_unlock(&inj_w.lock);
	lp_inj_sample_init();
	atexit(on_exit_handler);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	if (!inj_env_off("LLMPROF_TRACE_SIGNALS"))
		install_signal_handlers();
}

int lp_inj_init(void)
{
	pthread_once(&inj_w.once, init_once);
	return lp_inj_active();
}

/* Loaded with LD_PRELOAD: NVTX v3 does not look for preloaded tools, and the CUDA driver only
 * loads CUDA_INJECTION64_PATH. Point both at this very file (when unset) before main runs, while
 * the process is single-threaded; dlopen of the same file returns this copy. */
__attribute__((constructor)) static void on_load(void)
{
	const char *pre = getenv("LD_PRELOAD");
	char self[PATH_MAX];
	Dl_info info;
	const char *base;
	if (!pre || !*pre || inj_env_off("LLMPROF_TRACE"))
		return;
	if (!dladdr((void *)(uintptr_t)on_load, &info) || !info.dli_fname)
		return;
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	if (!strstr(pre, base) || !realpath(info.dli_fname, self))
		return;
	setenv("NVTX_INJECTION64_PATH", self, 0);
	setenv("CUDA_INJECTION64_PATH", self, 0);
}
