#!/usr/bin/env python3
"""turn_driver.py: the turns of bench/tracer/cost_call.sh after the start-ups, fast enough for
step-level turns (LP_COST_TURN_STEPS=K: every process stops after every K decode steps, thousands
of turns a run). Standard library only.

    turn_driver.py --dir TD --deadline EPOCH_S [--steps K] [--log FILE] [--poll-ms MS]
                   [--grace-s S] [--threads-at C,C... --threads-log FILE] TAG=ROOT_PID ...

The processes (examples/plain_common.py bench_turn / step_turn) write TD/<TAG>.stop ("PID TIME")
and stop themselves (SIGSTOP). Round-robin over the TAGs in the order given, reversed in every
other cycle (the one at both ends then runs twice in a row, once last and once first), one process
running at a time: remove its stop file, SIGCONT it, wait until it has written the file again and
is stopped (/proc/PID/stat state T) or has ended (its ROOT_PID, the bash subshell that runs it, is
gone or a zombie). A process not stopped at its turn is passed over (still starting, or ended).
No new turn after EPOCH_S (the running one is waited for, at most --grace-s more); the caller then
releases the processes (TD/release, SIGCONT) as cost_call.sh's turns() does. Polls every
--poll-ms (0.2): a handoff costs well under a millisecond, against cost_call.sh's bash loop's
20 ms sleeps and forks.

--log: one line per cycle, `CYCLE T0 TAG:TURN_MS:LAG_MS ...` in the order run (T0: the cycle's
start, epoch seconds; TURN_MS: SIGCONT to the stop seen; LAG_MS: the time written in the stop
file (just before the process stops itself) to the stop seen, the handoff's delay; `-` when the
process ended in its turn), after a `#` header line with K
and the tags. sample_check.py cost maps each process's turns to cycles from it. stdout: a summary
(cycles, turns per tag, turn and cycle ms quantiles, lag quantiles) as one JSON line.

--threads-at: after each of these cycles, every stopped process's threads, one line each in
--threads-log: `CYCLE TAG PID TID NAME CPUS` (/proc/PID/task/TID/status: the thread's name and
Cpus_allowed_list), to see where a tracer's and CUPTI's threads may run beside the main thread
the benchmark pinned (bench/tracer/README.md run 28, "Next").
"""

import argparse
import json
import os
import signal
import sys
import time


def proc_state(pid):
    """The state letter of /proc/PID/stat ('' when there is no such process)."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            s = f.read()
    except OSError:
        return ""
    i = s.rfind(b")")  # the command name may hold spaces and parentheses
    return s[i + 2:i + 3].decode() if i >= 0 else ""


def gone(pid):
    return proc_state(pid) in ("", "Z")


def stop_file(path):
    """(pid, epoch seconds it was written) of a stop file ("PID TIME"; TIME None in the older
    "PID" form), or (None, None) while it is absent."""
    try:
        with open(path) as f:
            v = f.read().split()
    except OSError:
        return None, None
    if not v or not v[0].isdigit():
        return None, None
    try:
        t = float(v[1]) if len(v) > 1 else None
    except ValueError:
        t = None
    return int(v[0]), t


def thread_lines(cycle, tag, pid):
    """`CYCLE TAG PID TID NAME CPUS` for each thread of process PID (none when it is gone)."""
    out = []
    try:
        tids = sorted(os.listdir("/proc/%d/task" % pid), key=int)
    except OSError:
        return out
    for tid in tids:
        f = {}
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as fh:
                for line in fh:
                    k, _, v = line.partition(":")
                    f[k] = v.strip()
        except OSError:
            continue
        out.append("%d %s %d %s %s %s" % (cycle, tag, pid, tid, (f.get("Name") or "?").replace(" ", "_"),
                                          f.get("Cpus_allowed_list", "?")))
    return out


def quantiles(v):
    if not v:
        return None
    v = sorted(v)
    q = lambda p: round(v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))], 3)  # noqa: E731
    return dict(n=len(v), p50=q(.5), p90=q(.9), p99=q(.99), max=round(v[-1], 3))


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dir", required=True)
    p.add_argument("--deadline", type=float, required=True, help="epoch seconds: no new turn after it")
    p.add_argument("--steps", default="", help="K of the step turns (for the log only)")
    p.add_argument("--log")
    p.add_argument("--poll-ms", type=float, default=0.2)
    p.add_argument("--grace-s", type=float, default=60.0,
                   help="how long past the deadline a running turn is waited for")
    p.add_argument("--threads-at", default="", help="cycles after which every process's threads are listed")
    p.add_argument("--threads-log", help="where --threads-at writes")
    p.add_argument("procs", nargs="+", metavar="TAG=ROOT_PID")
    a = p.parse_args(argv)
    try:
        threads_at = {int(x) for x in a.threads_at.split(",") if x}
    except ValueError:
        p.error("--threads-at: expected cycle numbers separated by commas, got %r" % a.threads_at)
    if threads_at and not a.threads_log:
        p.error("--threads-at needs --threads-log")
    tags, root = [], {}
    for s in a.procs:
        tag, _, pid = s.partition("=")
        if not tag or not pid.isdigit():
            p.error("expected TAG=ROOT_PID, got %r" % s)
        tags.append(tag)
        root[tag] = int(pid)
    poll = a.poll_ms / 1e3
    log = open(a.log, "w") if a.log else None
    if log:
        log.write("# turn_driver K=%s deadline=%.3f tags=%s\n" % (a.steps, a.deadline, " ".join(tags)))
    turns = {t: 0 for t in tags}
    turn_ms = {t: [] for t in tags}
    lags, cycle_ms = [], []
    cycle, why = 0, "all ended"
    while True:
        cycle += 1
        order = tags if cycle % 2 == 1 else tags[::-1]
        alive, late, parts = False, False, []
        c0 = time.time()
        for tag in order:
            if gone(root[tag]):
                continue
            alive = True
            if time.time() > a.deadline:
                late = True
                break
            path = os.path.join(a.dir, tag + ".stop")
            pid, _ = stop_file(path)
            if pid is None or proc_state(pid) != "T":
                continue
            os.remove(path)
            t0 = time.monotonic()
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                continue
            ended, lag, k = False, None, 0
            limit = a.deadline + a.grace_s
            while True:
                time.sleep(poll)
                k += 1
                if os.path.exists(path):
                    q, wrote = stop_file(path)
                    if q is not None and proc_state(q) == "T":
                        lag = (time.time() - wrote) * 1e3 if wrote else 0.0
                        break
                if k % 16 == 0 and (gone(root[tag]) or time.time() > limit):
                    ended = gone(root[tag])
                    break
            ms = (time.monotonic() - t0) * 1e3
            turns[tag] += 1
            turn_ms[tag].append(ms)
            if lag is not None:
                lags.append(lag)
            parts.append("%s:%.3f:%s" % (tag, ms, "%.3f" % lag if lag is not None else "-"))
            if not ended and lag is None:  # neither stopped nor ended: past the grace period
                why = "a turn ran past the deadline's grace period"
                late = True
                break
        if parts:
            cycle_ms.append((time.time() - c0) * 1e3)
            if log:
                log.write("%d %.4f %s\n" % (cycle, c0, " ".join(parts)))
            if len(cycle_ms) in threads_at:
                with open(a.threads_log, "a") as tl:
                    for tag in tags:
                        pid, _ = stop_file(os.path.join(a.dir, tag + ".stop"))
                        if pid is not None:
                            tl.writelines(x + "\n" for x in thread_lines(len(cycle_ms), tag, pid))
        elif alive and not late:
            time.sleep(poll)  # no process ready (still starting): do not spin
        if late:
            why = why if why != "all ended" else "deadline"
            break
        if not alive:
            break
    if log:
        log.close()
    allt = [x for v in turn_ms.values() for x in v]
    print(json.dumps(dict(turn_driver=why, cycles=len(cycle_ms), steps=a.steps, turns=turns,
                          turn_ms=quantiles(allt), cycle_ms=quantiles(cycle_ms), lag_ms=quantiles(lags),
                          turn_ms_per_tag={t: quantiles(v) for t, v in turn_ms.items()})), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
