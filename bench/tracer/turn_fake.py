#!/usr/bin/env python3
"""turn_fake.py: a stand-in for examples/hf_generate.py (--kind hf) and
examples/hf_generate_plain.py (--kind plain) in cost_call.sh's turns, without a GPU or torch: the
same JSON lines (iter, decode_ms, decode_ms_per_step, step_ms; step_full_ms and turn_steps with
step turns), the same turn-taking (examples/plain_common.py bench_turn / step_turn; --kind plain
runs plain_common.ForwardClock itself, on a stand-in torch and model), and decode steps whose time
follows a host shared by all processes that switches between two speeds, as the GPU machines'
hosts do (bench/tracer/README.md, runs 18 and 19). For bench/tracer/turn_smoke.sh and
tests/e2e/bench_stepturn.sh.

The mode is the second field of LLMPROF_BENCH_TAG (PROG_MODE_X, as cost_call.sh names processes)
or --mode; a mode costs --cost's percent on every step (default plain 0, auto 3, exact 15). A
step is --step-ms of work at the host's fast speed (85% inside the forward, 15% after it, the part
of HF's generate() between forwards), times the mode's cost, times a random factor of sd --noise.
The host (--host EPOCH:SEED, the same for all processes): from EPOCH on, plateaus of --host-min-s
to --host-max-s seconds (uniform, from SEED), fast and slow (--host-slow times the fast time) in
turn. A step's time is what its work takes on that host from the moment it starts (a step that
spans a switch is part fast, part slow); the process sleeps that long, and the times printed are
these model times, not its own wall clock, so that the CPU contention of a shared test machine
(a process scheduled late) does not enter them. --nominal: no host, no noise, and steps of 12 to
21 ms by a pattern over generation and index (exact numbers for a test).
--log FILE: one line per decode step "TAG ITER INDEX T0 T1" (wall clock) to check that no two
processes' steps overlap.
"""

import argparse
import bisect
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import plain_common  # noqa: E402


class Host(object):
    """The shared host's speed: 1 (fast) or `slow` (the time factor) at a wall time."""

    def __init__(self, spec, slow, lo, hi):
        self.slow = slow
        self.bounds = []
        if not spec:
            return
        epoch, _, seed = spec.partition(":")
        rnd = random.Random(int(seed or 0))
        t = float(epoch)
        while t < float(epoch) + 7200:
            t += rnd.uniform(lo, hi)
            self.bounds.append(t)

    def duration(self, t, s):
        """Wall seconds that s seconds of fast-speed work take from wall time t on (the speed
        switching on the way)."""
        if not self.bounds:
            return s
        i = bisect.bisect(self.bounds, t)
        u = t
        while i < len(self.bounds):
            f = self.slow if i % 2 else 1.0
            room = (self.bounds[i] - u) / f
            if s <= room:
                return u + s * f - t
            s -= room
            u = self.bounds[i]
            i += 1
        return u + s - t


class Fake(object):
    def __init__(self, a, tag):
        self.a = a
        self.tag = tag
        self.host = Host(None if a.nominal else a.host, a.host_slow, a.host_min_s, a.host_max_s)
        self.rnd = random.Random(tag)
        self.vclock = 0.0  # ms: the model's clock
        self.log = open(a.log, "a") if a.log else None

    def now_ms(self):
        return self.vclock

    def work(self, ms):
        """ms of work at the host's fast speed: the clock of the stand-in events (now_ms) moves
        on by the time the host takes for it from now on, and the process sleeps that long."""
        t0 = time.time()
        d = self.host.duration(t0, ms / 1e3)
        self.vclock += d * 1e3
        left = t0 + d - time.time()
        if left > 0:
            time.sleep(left)

    def noise(self, it, j):
        """The step's random factor; --nominal: a pattern over generation and index (1 to 1.75),
        the same in every process, so that steps paired wrongly show"""
        if self.a.nominal:
            return 1.0 + 0.25 * ((it * 7 + j) % 4)
        return self.rnd.lognormvariate(0.0, self.a.noise) if self.a.noise else 1.0

    def note(self, it, j, t0):
        if self.log and it >= 0:
            self.log.write("%s %d %d %.6f %.6f\n" % (self.tag, it, j, t0, time.time()))
            self.log.flush()


class Event(object):
    """torch.cuda.Event's part that ForwardClock uses, on the fake's clock."""
    fake = None

    def __init__(self, enable_timing=True):
        self.t = None

    def record(self):
        self.t = Event.fake.now_ms()

    def elapsed_time(self, other):
        return other.t - self.t

    def synchronize(self):
        pass


class Cuda(object):
    Event = Event

    @staticmethod
    def synchronize():
        pass


class Torch(object):
    cuda = Cuda


class Model(object):
    """A model whose generate() calls its forward hooks the way HF's generate() does."""

    def __init__(self, fake, step_ms):
        self.fake, self.step_ms = fake, step_ms
        self.pre, self.post = [], []

    def register_forward_pre_hook(self, f):
        self.pre.append(f)

    def register_forward_hook(self, f):
        self.post.append(f)

    def forward(self, ms):
        """Returns the wall time after the pre-hooks (where a step turn stops)."""
        for f in self.pre:
            f(self, ())
        t0 = time.time()
        self.fake.work(ms)
        for f in self.post:
            f(self, (), None)
        return t0

    def generate(self, it, n, cost):
        self.forward(self.step_ms * 2)  # the prefill
        self.fake.work(self.step_ms * 0.15)
        for j in range(n):
            x = self.step_ms * cost * self.fake.noise(it, j)
            t0 = self.forward(x * 0.85)
            self.fake.work(x * 0.15)
            self.fake.note(it, j, t0)


# what cost_call.sh's modes set, for --env-log (tests/e2e/bench_cost_modes.sh)
ENV_SHOWN = ("CUDA_MODULE_LOADING", "LLMPROF_BENCH_PREWARM", "LLMPROF_TRACE_CUPTI_DELAY", "LLMPROF_TRACE_SAMPLE", "LLMPROF_TRACE_WARMUP",
             "LLMPROF_AUTO_WARMUP", "LLMPROF_BENCH_WARMUP_FROM", "LLMPROF_AUTO_DIR", "LLMPROF_TRACE_BURST_REATTACH",
             "LLMPROF_TRACE_REATTACH_LEAD_MS")


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kind", choices=["hf", "plain"], default="hf")
    p.add_argument("--mode")
    p.add_argument("--iters", type=int, default=3,
                   help="hf: measured generations after one warm-up; plain: generations, the first left out")
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--step-ms", type=float, default=12.0)
    p.add_argument("--cost", default="plain=0,auto=3,exact=15")
    p.add_argument("--noise", type=float, default=0.02)
    p.add_argument("--host")
    p.add_argument("--host-slow", type=float, default=2.0)
    p.add_argument("--host-min-s", type=float, default=0.2)
    p.add_argument("--host-max-s", type=float, default=1.0)
    p.add_argument("--nominal", action="store_true")
    p.add_argument("--log")
    p.add_argument("--env-log", help="append the tag and the environment a mode sets (ENV_SHOWN) to this file")
    a, _ = p.parse_known_args(argv)  # cost_call.sh's --kineto and the programs' options: ignored
    tag = os.environ.get("LLMPROF_BENCH_TAG", "%s_%s_x" % (a.kind, a.mode or "plain"))
    if a.env_log:
        with open(a.env_log, "a") as f:
            f.write(" ".join([tag] + ["%s=%s" % (k, os.environ[k]) for k in ENV_SHOWN if k in os.environ]) + "\n")
    mode = a.mode or tag.split("_")[1]
    costs = dict((k, float(v)) for k, v in (x.split("=") for x in a.cost.split(",")))
    cost = 1.0 + costs.get(mode, 0.0) / 100
    fake = Fake(a, tag)
    Event.fake = fake
    n = a.new_tokens
    if a.kind == "plain":
        model = Model(fake, a.step_ms)
        clock = plain_common.ForwardClock(Torch, model)
        results, step_ms, step_full, counts = [], [], [], []
        for g in range(a.iters):
            clock.start()
            model.generate(g - 1, n, cost)
            results.append(clock.finish())
            step_ms.append(clock.step_ms)
            step_full.append(clock.step_full_ms)
            counts.append(clock.step_counts)
        plain_common.report(results, 1, {"fake": True, "mode": mode}, step_ms, step_full, clock.turn_k, counts)
        return 0
    k = plain_common.turn_steps()
    sync = Cuda.synchronize

    def generation(it, turn_k):
        fake.work(a.step_ms * 2)  # prefill
        t1 = fake.now_ms()
        steps = []
        for j in range(n):
            t0, e0 = time.time(), fake.now_ms()
            fake.work(a.step_ms * cost * fake.noise(it, j))
            steps.append(fake.now_ms() - e0)
            fake.note(it, j, t0)
            if turn_k and (j + 1) % turn_k == 0 and j + 1 < n:
                plain_common.step_turn(sync)
        return fake.now_ms() - t1, steps

    generation(-1, 0)  # the warm-up
    plain_common.bench_turn()
    for i in range(a.iters):
        dm, steps = generation(i, k)
        line = {"iter": i, "decode_ms": round(dm, 4), "decode_ms_per_step": dm / n,
                "step_ms": [round(x, 5) for x in steps]}
        if k:
            line["turn_steps"] = k
        print(json.dumps(line), flush=True)
        if i + 1 < a.iters:
            plain_common.bench_turn()
    print(json.dumps({"summary": True, "fake": True, "mode": mode}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
