#!/bin/bash
# bench/tracer/cost_call.sh's step-level turns (LP_COST_TURN_STEPS=K, bench/tracer/turn_driver.py)
# and sample_check.py's step pairing, on bench/tracer/turn_fake.py (no GPU, no torch): --kind hf
# times its steps like examples/hf_generate.py, --kind plain runs examples/plain_common.py's
# ForwardClock on a stand-in model; --nominal: each step sleeps its time and prints the nominal
# value (plain 12 to 21 ms by a pattern over generation and step index, auto 3% more), so the
# statistics' results are exact. Checks: no two processes' steps overlap in time, every process
# ran K steps a turn, the cycles' order alternates, each process had all its turns, the unmodified
# program's step_full_ms covers its forwards and what lies between them (step_ms only the
# forwards), and the paired statistics give +3% for auto and 0 for the placebo (plain_u against
# plain_t); the threads listed after a cycle (LP_COST_THREADS_AT); then sample_check.py places,
# places_all, pool and pair, and cost_brief.py. Skipped without python3 or taskset.
set -u
. "$(dirname "$0")/lib.bash"
need_cost_tools
FAKE="python3 $LP_SRC/bench/tracer/turn_fake.py --nominal --new-tokens 8 --log $LP_TMP/steps.txt"
cost_turns "hf_plain_t hf_plain_u hf_auto_t plain_plain_t plain_plain_u plain_auto_t" \
	"$FAKE --kind hf --iters 3" "$FAKE --kind plain --iters 4" LP_COST_TURN_STEPS=2 LLMPROF_BENCH_COUNTERS=1 \
	LP_COST_THREADS_AT=2
W=$LP_TMP/work
# LP_COST_THREADS_AT=2: after the second cycle every process's threads, each on the CPUs cost_call.sh
# pinned the process to (LP_COST_CPUS=0)
for t in hf_plain_t hf_plain_u hf_auto_t plain_plain_t plain_plain_u plain_auto_t; do
	grep -q "^2 $t [0-9]* [0-9]* [^ ]* 0$" "$W/threads.txt" || fail "no thread of $t after cycle 2: $(cat "$W/threads.txt")"
done
grep -qv "^2 " "$W/threads.txt" && fail "threads listed after another cycle: $(cat "$W/threads.txt")"
expect_exit 2 python3 "$LP_SRC/bench/tracer/turn_driver.py" --dir "$LP_TMP" --deadline 0 --threads-at 2,x \
	--threads-log "$LP_TMP/t.txt" a=1
grep -q "threads-at: expected cycle numbers separated by commas, got '2,x'" "$LP_TMP/stderr" ||
	fail "--threads-at's error: $(cat "$LP_TMP/stderr")"
grep -q '"turn_driver": "all ended"' "$W/progress.txt" || fail "no driver summary: $(cat "$W/progress.txt")"
python3 - "$LP_TMP/steps.txt" "$W/turns_cycles.txt" "$W/cost.json" "$W/plain_auto_t.txt" <<'EOF' || fail "checks failed"
import json, sys
tags = ["hf_plain_t", "hf_plain_u", "hf_auto_t", "plain_plain_t", "plain_plain_u", "plain_auto_t"]
steps = sorted((float(a), float(b), t, int(i), int(j)) for t, i, j, a, b in (l.split() for l in open(sys.argv[1])))
assert len(steps) == 6 * 3 * 8, len(steps)
for (a0, b0, t0, _, _), (a1, b1, t1, _, _) in zip(steps, steps[1:]):
    assert a1 >= b0, "steps overlap: %s and %s" % (t0, t1)
# runs of one process's consecutive steps: K = 2 a turn, in step order; 4 where the reversed order
# gives the process at the end of one cycle the first turn of the next
runs = []
for a, b, t, i, j in steps:
    if runs and runs[-1][0] == t:
        runs[-1][1].append((i, j))
    else:
        runs.append((t, [(i, j)]))
for _, r in runs:
    assert len(r) in (2, 4) and r[0][1] % 2 == 0, r
    assert all(y == (x[0], x[1] + 1) or y == (x[0] + 1, 0) for x, y in zip(r, r[1:])), r
assert sum(len(r) == 4 for _, r in runs) >= 8, runs
cycles = [l.split() for l in open(sys.argv[2]) if not l.startswith("#")]
order = [[p.split(":")[0] for p in c[2:]] for c in cycles]
assert order[0] == tags and order[1] == tags[::-1], order[:2]
for t in tags:
    n = sum(o.count(t) for o in order)
    # 3 measured generations of 8 steps, 2 a turn; the unmodified program stops after its last
    # generation too (ForwardClock.finish), its exit is one more turn
    assert n == 3 * 4 + t.startswith("plain"), (t, n)
assert len(cycles) == 13, len(cycles)
line = json.loads(open(sys.argv[4]).readline())
assert line["turn_steps"] == 2 and len(line["step_full_ms"]) == 8, line
want = [12.36 * (1 + 0.25 * (j % 4)) for j in range(8)]  # the fake's pattern, generation 0
assert all(abs(x - w) < 1e-6 for x, w in zip(line["step_full_ms"], want)), line["step_full_ms"]
assert all(abs(x - w * 0.85) < 1e-6 for x, w in zip(line["step_ms"], want)), line["step_ms"]
# LLMPROF_BENCH_COUNTERS=1: the thread's CPU time over the same 8 spans (the fake sleeps: small)
assert len(line["step_cpu_ms"]) == 8 and all(0 <= x < w for x, w in zip(line["step_cpu_ms"], want)), line
d = json.load(open(sys.argv[3]))
assert set(d["paired_steps_cpu_ms"]) == {"plain"}, d["paired_steps_cpu_ms"].keys()  # hf's fake has none
for prog in ("hf", "plain"):
    ps = d["paired_steps"][prog]
    assert ps["reference"] == [prog + "_plain_t", prog + "_plain_u"], ps
    a = ps["modes"]["auto"]
    assert a["per_generation_pct"]["n"] == 3 and abs(a["per_generation_pct"]["mean"] - 3.0) < 1e-3, a
    assert abs(a["step_pairs"]["median_pct"] - 3.0) < 1e-3 and a["step_pairs"]["n"] == 24, a
    assert abs(a["against_first_plain"]["mean"] - 3.0) < 1e-3, a
    pl = ps["placebo"]["per_generation_pct"]
    assert pl["n"] == 3 and abs(pl["mean"]) < 1e-3 and abs(pl["ci95"][0]) < 1e-3, pl
    assert abs(d["programs"][prog]["auto"]["overhead_pct_paired"]["median"] - 3.0) < 1e-3
EOF
# sample_check.py places: every step of the process in one place of the schedule (every=8,
# burst=2,first=2 over the fake's 8 steps: 2 first, then the cluster of 2 of the block of 8 where
# it falls inside the 6 steps left), as many recorded as the schedule says
python3 "$LP_SRC/bench/tracer/sample_check.py" places "$W" hf_auto_t every=8,burst=2,first=2 >"$LP_TMP/places.json" ||
	fail "places failed"
python3 - "$LP_TMP/places.json" "$LP_SRC/bench/tracer" <<'EOF' || fail "places: wrong grouping"
import json, sys
sys.path.insert(0, sys.argv[2])
from sample_check import burst_schedule
d = json.load(open(sys.argv[1]))
p = d["places"]
assert d["generations"] == 3 and d["plain_processes"] == 2, d
assert sum(v["n"] for v in p.values()) == 24, p
want = sum(sum(burst_schedule(g + 2, 8, every=8, burst=2, first=2)) for g in range(3))
assert sum(v["n"] for k, v in p.items() if k == "first" or k.startswith("rec_")) == want and 6 <= want <= 12, (want, p)
assert all(abs(v["median_pct"] - 3.0) < 1e-6 for v in p.values()), p  # the fake's auto: +3% every step
# 8 steps leave no detached place here: the level is 0 and all of the +3% lies above it
assert "detached" not in p, p
m = d["summary"]
assert abs(m["total_pct"] - 3.0) < 1e-6 and m["detached_pct"] == 0 and abs(m["above_detached_pct"] - 3.0) < 1e-6, m
EOF
# places_all: every traced process (the stand-in writes no tracer log: the default schedule) and
# the group of each program and mode
python3 "$LP_SRC/bench/tracer/sample_check.py" places_all "$W" >"$LP_TMP/places_all.txt" || fail "places_all failed"
grep -q '^hf_auto_t  *every=128,burst=4,first=2  *+3.00%  *+0.00%  *+3.00%' "$LP_TMP/places_all.txt" &&
	grep -q '^plain_auto_t ' "$LP_TMP/places_all.txt" &&
	grep -q '^  hf  *auto  *n=1  total +3.00 to +3.00, mean +3.00;' "$LP_TMP/places_all.txt" &&
	! grep -q '_plain_' "$LP_TMP/places_all.txt" || fail "places_all: $(cat "$LP_TMP/places_all.txt")"
# a tracer's log line names the schedule that process ran
echo "llmprof-inject[1]: stages: sampling auto (unit decode_step, 2 in each block of 8 after the first 2, CUPTI detached between bursts, at a random position, seed 0, auto above 20000 launches/s), GPU times on" \
	>"$W/inject_hf_auto_t.log"
python3 "$LP_SRC/bench/tracer/sample_check.py" places_all "$W" >"$LP_TMP/places_all.txt" || fail "places_all failed"
grep -q '^hf_auto_t  *every=8,burst=2,first=2  *+3.00%' "$LP_TMP/places_all.txt" &&
	grep -q '^plain_auto_t  *every=128,burst=4,first=2 ' "$LP_TMP/places_all.txt" ||
	fail "places_all: the logged schedule: $(cat "$LP_TMP/places_all.txt")"
# pool: two calls (a directory, and a cost.tgz like step_call.sh brings back, whose auto process
# and one plain process ran 2% slower still), each process against its own call's plain
# processes, a plain one against the other plain ones (leave one out: -1.96% and +2.00% in the
# second call, where against both it would read -0.99% and +0.99%); auto +3.00% and
# 1.0506 / 1.01 = +4.02%: mean +3.51, sd 0.72 and the t interval with 1 degree of freedom
mkdir -p "$LP_TMP/call2" && cp "$W"/*.txt "$LP_TMP/call2/"
python3 - "$LP_TMP/call2/hf_auto_t.txt" "$LP_TMP/call2/hf_plain_u.txt" <<'EOF2' || fail "could not slow the second call"
import json, sys
for path in sys.argv[1:]:
    lines = [json.loads(l) for l in open(path) if l.startswith("{")]
    with open(path, "w") as f:
        for d in lines:
            for k in ("step_ms", "step_full_ms"):
                if k in d:
                    d[k] = [x * 1.02 for x in d[k]]
            f.write(json.dumps(d) + "\n")
EOF2
tar -C "$LP_TMP/call2" -czf "$LP_TMP/call2.tgz" . || fail "tar"
python3 "$LP_SRC/bench/tracer/sample_check.py" pool "$W" "$LP_TMP/call2.tgz" >"$LP_TMP/pool.txt" || fail "pool failed"
grep -q '^2 calls;' "$LP_TMP/pool.txt" &&
	grep -q '^hf  *auto  *2  *+3\.51%  *0\.72  *\[-2\.97, +9\.99\]  *+3\.00 to +4\.02$' "$LP_TMP/pool.txt" &&
	grep -q '^hf  *plain  *4  *+0\.01%  .* -1\.96 to +2\.00$' "$LP_TMP/pool.txt" &&
	grep -q '^plain  *plain  *4  *+0\.00%  *0\.00 ' "$LP_TMP/pool.txt" &&
	grep -q '^plain  *auto  *2  *+3\.00%' "$LP_TMP/pool.txt" &&
	grep -q '^all  *auto  *4  *+3\.25%' "$LP_TMP/pool.txt" || fail "pool: $(cat "$LP_TMP/pool.txt")"
# pair: auto against plain inside each call (the second call's plain processes -1.96 and +2.00,
# its auto +4.02: +4.00), weighted 2/3 each: +3.50; the sd pooled inside modes and calls from
# the second call's two plain processes (sqrt(2 x 1.98^2 / 2) = 1.98, 2 df); both programs together
python3 "$LP_SRC/bench/tracer/sample_check.py" pair auto plain "$W" "$LP_TMP/call2.tgz" >"$LP_TMP/pair.txt" || fail "pair failed"
grep -q '^  hf    call2\.tgz: auto n=1, plain n=2: +4\.00$' "$LP_TMP/pair.txt" &&
	grep -q '^hf    2 calls: auto - plain = +3\.50 points, 95% interval \[-3\.8[78], +10\.8[78]\] (process sd 1\.98, 2 df)$' "$LP_TMP/pair.txt" &&
	grep -q '^all   2 calls: auto - plain = +3\.25 points' "$LP_TMP/pair.txt" || fail "pair: $(cat "$LP_TMP/pair.txt")"
expect_exit 1 python3 "$LP_SRC/bench/tracer/sample_check.py" pair auto late3 "$W"
grep -q "^pair: no call ran both auto and late3$" "$LP_TMP/stderr" || fail "pair's error: $(cat "$LP_TMP/stderr")"
# cost_brief.py: the call's paired figures in one line per mode (a bare path named after itself)
python3 "$LP_SRC/bench/tracer/cost_brief.py" "$W/cost.json" >"$LP_TMP/brief.txt" || fail "cost_brief failed"
grep -q '^cost.json hf  *time  *auto  *+3.00% ' "$LP_TMP/brief.txt" &&
	grep -q 'placebo +0.00% ' "$LP_TMP/brief.txt" || fail "cost_brief: $(cat "$LP_TMP/brief.txt")"
expect_exit 1 python3 "$LP_SRC/bench/tracer/cost_brief.py" "x=$LP_TMP/no-such.json"
grep -q "^cost_brief.py: .*no-such.json: " "$LP_TMP/stderr" || fail "cost_brief's error: $(cat "$LP_TMP/stderr")"
expect_exit 1 python3 "$LP_SRC/bench/tracer/sample_check.py" pool "$LP_TMP/no-such-call"
grep -q "pool: .*no-such-call: not a directory or a readable tar file" "$LP_TMP/stderr" || fail "pool's error: $(cat "$LP_TMP/stderr")"
pass
