#!/bin/bash
# bench/tracer/cost_call.sh's turn-taking and sample_check.py's cost summary, on CPU stand-ins for
# the two programs (no GPU, no tracer work): each stand-in prints the programs' JSON lines with
# step times set by its mode (plain 10 ms, sampled 11 ms with its recorded steps 5% slower, exact
# 12 ms) and stops itself after every generation through examples/plain_common.py's bench_turn.
# Checks: every generation ran alone (no two overlap in time), every process had all its turns,
# the order alternated, and the summary's paired overheads (+10%, +20%) and in-process recorded
# over skipped steps (+5%) are the ones built in. Skipped without python3 or taskset.
set -u
. "$(dirname "$0")/lib.bash"
need_cost_tools
cat >"$LP_TMP/stand_in.py" <<EOF
import json, os, sys, time
sys.path.insert(0, "$LP_SRC/examples")
from plain_common import bench_turn
tag = os.environ.get("LLMPROF_BENCH_TAG", "x_plain_t")
mode = tag.split("_")[1]
scale = {"plain": 1.0, "sampled": 1.1, "exact": 1.2}[mode]
gens = int(sys.argv[1])
time.sleep(0.3)            # start-up
bench_turn()               # after the unmeasured first generation
for i in range(gens):
    t0 = time.time()
    time.sleep(0.15)
    steps = [10.0 * scale * (1.05 if mode == "sampled" and j >= 2 and (j - 2) % 8 == 0 else 1.0)
             for j in range(64)]
    print(json.dumps({"iter": i, "decode_ms_per_step": 10.0 * scale, "step_ms": steps}), flush=True)
    with open("$LP_TMP/gens.txt", "a") as f:
        f.write("%s %d %.6f %.6f\n" % (tag, i, t0, time.time()))
    if i + 1 < gens:
        bench_turn()
EOF
cost_turns "hf_plain_t hf_sampled_t hf_exact_t plain_plain_t plain_sampled_t" \
	"python3 $LP_TMP/stand_in.py 4" "python3 $LP_TMP/stand_in.py 3"
W=$LP_TMP/work
python3 - "$LP_TMP/gens.txt" "$W/turns.txt" "$W/cost.json" <<'EOF' || fail "checks failed"
import json, sys
gens = [l.split() for l in open(sys.argv[1])]
assert len(gens) == 3 * 4 + 2 * 3, len(gens)
iv = sorted((float(a), float(b), t) for t, _, a, b in gens)
for (a0, b0, t0), (a1, b1, t1) in zip(iv, iv[1:]):
    assert a1 >= b0, "generations overlap: %s and %s" % (t0, t1)
turns = [l.split() for l in open(sys.argv[2])]
assert len(turns) == len(gens), (len(turns), len(gens))
first = [t[0] for t in turns if t[1] == "1"]
second = [t[0] for t in turns if t[1] == "2"]
assert first == ["hf_plain_t", "hf_sampled_t", "hf_exact_t", "plain_plain_t", "plain_sampled_t"], first
assert second == first[::-1], second
d = json.load(open(sys.argv[3]))
hf, pl = d["programs"]["hf"], d["programs"]["plain"]
assert hf["plain"]["n"] == 4 and pl["plain"]["n"] == 3
assert abs(hf["sampled"]["overhead_pct_paired"]["median"] - 10.0) < 1e-6, hf["sampled"]
assert abs(hf["exact"]["overhead_pct_paired"]["median"] - 20.0) < 1e-6, hf["exact"]
assert abs(pl["sampled"]["overhead_pct_paired"]["median"] - 10.0) < 1e-6, pl["sampled"]
assert abs(d["inproc_neighbours"]["median"] - 5.0) < 1e-6, d["inproc_neighbours"]
assert abs(hf["exact"]["step_quantiles_overhead_pct"]["p10"] - 20.0) < 1e-6
EOF
pass
