#!/bin/bash
# The reports of a run whose ncu phase sampled (docs/ncu-sampling.md): `llmprof report` reads
# ncu/sampling.json and kernels.md, report.md, report.html and summary.json show the coverage and
# the sampled / reused marks; the same run folder without sampling.json shows none of it.
set -u
. "$(dirname "$0")/lib.bash"

cp -r "$LP_SRC/tests/fixtures/runs/h100_llm_tiny_deep" plain
cp -r "$LP_SRC/tests/fixtures/runs/h100_llm_tiny_deep" sampled
cat > sampled/ncu/sampling.json <<'JSON'
{"k": 3, "k_used": 3, "coverage_target": 0.95, "launches": 70, "kernel_ms": 1.0, "groups_total": 3,
 "groups_wanted": 2, "groups_cached": 1, "groups_dropped_budget": 0, "planned_share": 0.9,
 "predicted_launches": 4, "eta_s": 12.5, "budget_s": 120, "elapsed_s": 9.5, "partial": null,
 "processes": [{"kernel_id": "::regex:^(k_dec_gemv)$:^(3|9|15)$", "groups": 1, "planned_launches": 3,
                "predicted_launches": 4, "est_s": 12.5}],
 "groups": [
  {"kernel_name": "void k_dec_gemv<1, 2>(lp_llm_dec_gemv)", "function": "k_dec_gemv", "grid": [48, 1, 1],
   "block": [256, 1, 1], "shared_bytes": 0, "region": "decode_all", "launches": 30, "steps": 10,
   "total_ms": 0.6, "share": 0.6, "region_share": 0.6, "status": "planned", "process": 0, "picks": [],
   "profiled": 3, "has_metrics": true},
  {"kernel_name": "void k_attn_decode<32>(unsigned short *)", "function": "k_attn_decode", "grid": [2, 1, 1],
   "block": [128, 1, 1], "shared_bytes": 0, "region": "decode_all", "launches": 30, "steps": 10,
   "total_ms": 0.3, "share": 0.3, "region_share": 0.3, "status": "cached", "process": null, "picks": [],
   "profiled": 1, "has_metrics": true},
  {"kernel_name": "void k_argmax(int)", "function": "k_argmax", "grid": [1, 1, 1], "block": [1024, 1, 1],
   "shared_bytes": 0, "region": "decode_all", "launches": 10, "steps": 10, "total_ms": 0.1, "share": 0.1,
   "region_share": 0.1, "status": "beyond_target", "process": null, "picks": [], "profiled": 0,
   "has_metrics": false}],
 "coverage": {"target": 0.95, "share": 0.9, "groups_with_metrics": 2, "groups_reused": 1, "groups": 3,
              "met": false, "regions": [{"region": "decode_all", "kernel_ms": 1.0, "share": 0.9,
                                         "groups_with_metrics": 2, "groups": 3, "met": false}]}}
JSON

expect_exit 0 "$LLMPROF" report plain
expect_exit 0 "$LLMPROF" report sampled
for f in kernels.md report.md report.html; do
  grep -q "Nsight Compute coverage" "plain/$f" && fail "plain/$f has a coverage section without sampling.json"
  grep -q "Nsight Compute coverage" "sampled/$f" || fail "sampled/$f has no coverage section"
done
grep -q '"ncu_sampling"' plain/summary.json && fail "plain/summary.json has ncu_sampling"
python3 - sampled <<'PY' || fail "summary.json: ncu_sampling"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))["ncu_sampling"]
assert abs(s["share"] - 0.9) < 1e-9 and s["met"] is False and s["groups_reused"] == 1 and s["k"] == 3, s
PY
grep -q "90.0% of the selection's kernel time has ncu metrics (target 95%, NOT met): 2 of 3 groups" sampled/kernels.md \
  || fail "kernels.md summary line: $(grep -n 'selection' sampled/kernels.md)"
grep -qF '| 48,1,1 | 256,1,1 | decode\_all | 30 | 3 | 60.0% | sampled |' sampled/kernels.md \
  || fail "kernels.md: the sampled row: $(grep -n '48,1,1' sampled/kernels.md)"
grep -qF '| 2,1,1 | 128,1,1 | decode\_all | 30 | 1 | 30.0% | reused |' sampled/kernels.md || fail "kernels.md: the reused row"
grep -qF '| 10 | 0 | 10.0% | beyond the coverage target |' sampled/report.md || fail "report.md: the group without metrics"
grep -qF '| sampled |' sampled/report.md && fail "report.md lists covered groups"
grep -q 'class="ncu-reused"' sampled/report.html || fail "report.html: the reused mark"
pass
