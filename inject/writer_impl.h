/* writer_impl.h: what the two halves of the record writer share (inject/ internal; nothing
 * outside writer.c and lifecycle.c includes it).
 *   writer.c     the record side: per-thread and shared buffers, lp_inj_append, strings and
 *                domains, the per-thread state;
 *   lifecycle.c  the file side: opening the file, the flush thread and its rounds, the end of the
 *                process, signals, fork and initialization.
 * Locks: inj_w.write_lock (the file descriptor and flush rounds) is taken before inj_w.lock
 * (buffers, strings, domains, state). Functions named *_locked expect inj_w.lock held.
 */
#ifndef LP_INJECT_WRITER_IMPL_H
#define LP_INJECT_WRITER_IMPL_H

#include "inject.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum { ST_UNINIT = 0, ST_ON = 1, ST_OFF = 2, ST_CLOSED = 3 };

struct inj_buf {
	struct inj_buf *next;
	size_t len, cap;                 /* bytes written (by the owner) and capacity */
	_Atomic size_t pub_len;          /* bytes the flush thread may write (release-stored) */
	size_t flushed;                  /* bytes already written to the file (flush side only) */
	int per_thread;                  /* which pool it returns to */
	unsigned char data[];
};

/* A thread's record buffer: `cur` is written by its owner only (which mirrors it, its length and
 * capacity in its thread state: lp_inj_thread.buf, wlen, wcap), and by the fork handler in the
 * child (the child's thread sees the new fork generation and forgets its mirror); the slot is
 * listed (under inj_w.lock) so that the flush thread can write what it published. */
struct lp_inj_slot {
	struct lp_inj_slot *next;
	struct inj_buf *cur;
};

struct inj_span {                    /* part of a thread buffer to write in this flush round */
	struct inj_buf *b;
	size_t from, to;
};

struct inj_str {
	char *s;
	uint32_t len;
	uint32_t hash;
};

struct inj_writer {
	pthread_once_t once;
	pthread_mutex_t lock;        /* buffers, strings, domains, state */
	pthread_mutex_t write_lock;  /* the file descriptor and flush rounds; taken before `lock` */
	_Atomic int state;
	int fd;
	uint32_t pid;
	char dir[2048];
	char path[4096];
	size_t buf_bytes, tbuf_bytes;    /* shared and per-thread buffer sizes */
	unsigned max_buffers, n_buffers;
	unsigned max_tbuffers, n_tbuffers;
	struct inj_buf *tfree_list;      /* per-thread buffers */
	struct lp_inj_slot *threads;     /* threads with a buffer */
	pthread_key_t thread_key;        /* its destructor frees a thread's state and slot at exit */
	_Atomic int have_thread_key;     /* set (release) once thread_key exists */
	struct inj_span *spans;          /* flush side scratch */
	size_t cap_spans;
	unsigned flush_ms;
	int signal_wait_ms;
	int fork_child_mode;         /* 1: child gets its own file; 0: child disabled */
	int need_reopen;             /* fork child: open its own file at the first record */
	int forked;
	uint32_t parent_pid;
	struct inj_buf *cur, *full_head, *full_tail, *free_list;
	/* strings: by id (1..n) and an open-addressing index of ids */
	struct inj_str *strs;
	uint32_t n_strs, cap_strs;
	uint32_t *slots;
	uint32_t cap_slots;          /* power of two */
	/* domains: name string id by domain id (1..n) */
	uint32_t *domains;
	uint32_t n_domains, cap_domains;
	uint64_t own_dropped;
	_Atomic uint64_t own_dropped_fast;   /* drops on the lock-free path */
	_Atomic uint64_t cupti_dropped;
	uint64_t written_dropped[2];
	int wake_pipe[2];
	pthread_t flusher;
	int flusher_running;
	_Atomic int stop;
	_Atomic uint64_t flush_req_gen, flush_done_gen;
	_Atomic uint64_t next_id;
	_Atomic uint32_t fork_gen;
	int log_fd;
	int write_error_logged;
	struct sigaction old_term, old_int;
	int handlers_installed;
	int cupti_status_code;
	uint32_t cupti_status_sid;
	struct lp_trace_rank rank_last;      /* the last RANK record written (rank.c) */
	int rank_written;
};

extern struct inj_writer inj_w;

/* writer.c */
/* Buffers back to their pool, and into the queue of full ones (inj_w.lock held). */
void inj_free_buffer_locked(struct inj_buf *b);
void inj_queue_full_locked(struct inj_buf *b);
/* One record into the shared buffer (strings, domains, status; inj_w.lock held); -1: dropped. */
int inj_append_raw_locked(uint16_t type, const void *payload, size_t size, const void *extra, size_t extra_len);
/* String id of n bytes, writing its STRING record the first time (inj_w.lock held); 0: failure. */
uint32_t inj_intern_locked(const char *s, size_t n);
/* Appends a RANK record when the launcher's variables (rank.c) differ from the last one written
 * (inj_w.lock held, the file open). */
void inj_rank_record_locked(void);
/* pthread key destructor of a thread's state (lp_inj_thread, its buffer slot with it). */
void inj_thread_release(void *arg);
long inj_env_long(const char *name, long def, long lo, long hi);
int inj_env_off(const char *name);
int inj_write_all(int fd, const void *data, size_t len);
int inj_mkdir_p(const char *path);

/* lifecycle.c */
/* Opens this process's file and queues its first records (inj_w.lock held). */
int inj_open_file_locked(void);
/* Starts the background flush thread (inj_w.lock held). */
int inj_start_flusher_locked(void);

#endif
