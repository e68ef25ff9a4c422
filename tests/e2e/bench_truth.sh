#!/bin/bash
# bench/tracer/sample_check.py truth (run 39) on session 21's H200 processes of
# bench/tracer/kernel_truth.py (bench/tracer/results/truth_run39_call1.tar.xz: plain x2, and one
# each traced exact with its warm-up recorded (the tracer before run 39), bursts
# (every=16,burst=4,lead=2, the warm-up detached) and the same bursts with the warm-up recorded;
# Nsight Compute's gpu__time_duration of a plain process). What the run found, read back through
# the program's own CUDA events and the traces:
#  - a process whose kernels loaded without CUPTI runs the MLP op as the plain one does in the steps
#    CUPTI was detached; one whose kernels loaded with CUPTI attached runs it >1% slower there;
#  - the tracer reads cuBLAS's split-K GEMV >4% slower where it was loaded with CUPTI attached;
#  - recording adds GPU time between a graph's kernels, not inside them (the tracer's kernel times
#    of an op agree across modes but for the split-K GEMV's);
#  - ncu reads each small kernel ~0.5-1 us longer than CUPTI does, so it cannot arbitrate 1-5%.
# Skipped without python3.
set -u
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
sample_check_results truth_run39_call1.tar.xz truth "$LP_TMP/truth.json"
python3 - "$LP_TMP/truth.json" <<'PY' || fail "truth: $(head -c 800 "$LP_TMP/truth.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["processes"] == ["burst_1", "burstrec_1", "exact_1", "plain_1", "plain_2"], d["processes"]
ops = d["ops"]
assert sorted(ops) == ["mlp", "oproj", "qkv", "rmsnorm", "rotary", "softmax"], sorted(ops)
mlp = ops["mlp"]
assert 38 < mlp["plain_us"] < 40, mlp["plain_us"]
# loaded without CUPTI: as plain where CUPTI was detached; loaded with it: slower there too
assert abs(mlp["burst"]["unrecorded_vs_plain_pct"]) < 0.2, mlp["burst"]
assert mlp["burstrec"]["unrecorded_vs_plain_pct"] > 1.0, mlp["burstrec"]
# an exact trace records every step: no unrecorded one
assert "unrecorded_us" not in mlp["exact"] and mlp["exact"]["processes"] == 1, mlp["exact"]
# recording costs GPU time between the kernels: every op is slower in the recorded steps, while
# the tracer's kernel time of the ops without the split-K GEMV agrees across modes within 0.5%
for name, op in ops.items():
    for mode in ("burst", "burstrec", "exact"):
        assert op[mode]["recorded_vs_plain_pct"] > 1.0, (name, mode, op[mode])
    if name != "mlp":
        k = [op[m]["tracer_kernels_us"] for m in ("burst", "burstrec", "exact")]
        assert max(k) / min(k) < 1.005, (name, k)
kern = {k["kernel"]: k for k in d["kernels_mean_ns"]}
sk = next(v for k, v in kern.items() if "splitK_TNT" in k)
assert sk["exact"] / sk["burst"] > 1.04 and sk["burstrec"] / sk["burst"] > 1.04, sk
assert abs(sk["exact"] / sk["burstrec"] - 1) < 0.005, sk
small = [v for v in kern.values() if "ncu" in v and v["exact"] < 3500]
assert len(small) >= 10, len(small)
for v in small:
    assert 500 < v["ncu"] - v["exact"] < 1000, v
PY
pass
