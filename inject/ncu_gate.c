/* ncu_gate.c: libllmprof_ncu_gate.so, preloaded (LD_PRELOAD) into every process of a multi-rank
 * job that llmprof profiles with Nsight Compute, so that ncu profiles one chosen rank only
 * (`profiling.ncu.rank`, docs/ranks.md): ncu serializes kernels across processes, and ranks it
 * slows down unevenly make their collectives wait or hang.
 *
 * How: the job does NOT run under ncu. llmprof starts it with this library preloaded,
 * LLMPROF_NCU_RANK=r and LLMPROF_NCU_EXEC = ncu's command line up to the program (ncu's path and
 * options, separated by the byte 0x1f). In the process whose launcher rank (RANK,
 * OMPI_COMM_WORLD_RANK, ... as in rank.c) is r, this constructor re-executes the process under
 * ncu before main: execv(ncu, ncu options + this process's own argv from /proc/self/cmdline).
 * The pid stays (the launcher keeps watching it), ncu runs the program as its child and profiles
 * it (and its children), nothing else. LLMPROF_NCU_GATE_DONE=1 is set first, so ncu's own process
 * and everything under it leave the gate alone. Other ranks and rankless processes (the
 * launcher) run untouched, without ncu.
 *
 * (Removing CUDA_INJECTION64_PATH in the other ranks under a job-wide ncu, the first design, does
 * not work: on 2 H200 with ncu 2025.3.1 ncu still connected to and profiled the other rank.)
 *
 * When exec fails the process goes on unprofiled. The decision is written to
 * LLMPROF_NCU_GATE_LOG when set (never to the host's stdout/stderr). Nothing is exported. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject.h"

#define GATE_MAX_ARGS 4096
#define GATE_CMDLINE_MAX (1u << 20)

/* One line "pid P rank R (SOURCE): WHAT" to LLMPROF_NCU_GATE_LOG, when set. */
static void gate_log(const struct lp_inj_rank *rk, const char *what)
{
	const char *logp = getenv("LLMPROF_NCU_GATE_LOG");
	FILE *f;
	if (!logp || !*logp || !(f = fopen(logp, "a")))
		return;
	fprintf(f, "pid %ld rank %ld (%s): %s\n", (long)getpid(), (long)rk->rank,
		rk->source ? rk->source : "no rank variable", what);
	fclose(f);
}

/* This process's argv from /proc/self/cmdline into buf; returns argc (0: unreadable). */
static int read_cmdline(char *buf, size_t cap, char **argv, int max)
{
	size_t len = 0;
	ssize_t n;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), argc = 0;
	size_t i;
	if (fd < 0)
		return 0;
	while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	if (!len || len >= cap - 1)
		return 0;
	buf[len] = '\0';
	for (i = 0; i < len && argc < max; i += strlen(buf + i) + 1)
		argv[argc++] = buf + i;
	return argc;
}

__attribute__((constructor)) static void ncu_gate(void)
{
	const char *want = getenv("LLMPROF_NCU_RANK"), *exe = getenv("LLMPROF_NCU_EXEC");
	static char cmdline[GATE_CMDLINE_MAX], tools[65536];
	static char *argv[GATE_MAX_ARGS + 1];
	struct lp_inj_rank rk;
	char *end, *s;
	long chosen;
	int n = 0, own;
	if (!want || !*want || !exe || !*exe)
		return;
	if (getenv("LLMPROF_NCU_GATE_DONE"))
		return;   /* ncu itself, or a process under it */
	chosen = strtol(want, &end, 10);
	if (*end || chosen < 0)
		return;
	lp_inj_rank_read(&rk);
	if (!rk.source || rk.rank != chosen) {
		gate_log(&rk, "not profiled");
		return;
	}
	if (strlen(exe) >= sizeof(tools)) {
		gate_log(&rk, "LLMPROF_NCU_EXEC too long, not profiled");
		return;
	}
	memcpy(tools, exe, strlen(exe) + 1);
	for (s = tools; n < GATE_MAX_ARGS / 2;) {
		argv[n++] = s;
		s = strchr(s, '\x1f');
		if (!s)
			break;
		*s++ = '\0';
	}
	own = read_cmdline(cmdline, sizeof(cmdline), argv + n, GATE_MAX_ARGS - n);
	if (!own) {
		gate_log(&rk, "cannot read /proc/self/cmdline, not profiled");
		return;
	}
	argv[n + own] = NULL;
	setenv("LLMPROF_NCU_GATE_DONE", "1", 1);
	gate_log(&rk, "profiled, exec ncu");
	execv(argv[0], argv);
	n = errno;
	unsetenv("LLMPROF_NCU_GATE_DONE");
	gate_log(&rk, n == ENOENT ? "exec ncu failed (no such file), not profiled" : "exec ncu failed, not profiled");
}
