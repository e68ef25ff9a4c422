#!/bin/bash
# Stage truth on real GPU runs (tests/fixtures/runs, captured on an H100): `llmprof report` on a copy
# of each run folder; the latencies, TTFT, ms/step and tokens/s agree with the program's own
# CUDA-event timings (the self-check) although the host ranges end long before the GPU work (CUDA
# graph replays); per-step percentiles, the overlap factor of the PDL decode, busy shares adding up
# to 100%, and the bound verdicts.
set -u
. "$(dirname "$0")/lib.bash"
for name in h100_llm_tiny_graph h100_torch_graph; do
  cp -r "$LP_SRC/tests/fixtures/runs/$name" "$name"
  expect_exit 0 "$LLMPROF" report "$name"
  python3 - "$name" <<'PY' || fail "$name: stage numbers do not hold"
import json, sys
name = sys.argv[1]
s = json.load(open(name + "/summary.json"))
st = {x["name"]: x for x in s["stages"]}
pf, dec = st["prefill"], st["decode_all"]
sc = s["self_check"]
assert sc["workload_reported"] and len(sc["checks"]) == 4, sc
for c in sc["checks"]:
    # TTFT of a 0.2-1.8 ms prefill: events and ranges differ by a few us; decode within 1%
    tol = 0.05 if c["what"].startswith("time to first") else 0.01
    assert abs(c["diff"]) <= tol, c
assert not sc["failed"], sc
# the host range of the graph decode ends long before its GPU work: latency is not host time
assert dec["latency_ms"]["mean"] > 1.3 * dec["host_ms"]["mean"], (dec["latency_ms"], dec["host_ms"])
t = s["tokens"]
assert abs(t["decode_step_ms"] - dec["latency_ms"]["mean"] / 8) < 1e-9, t
assert abs(t["ttft_ms"] - pf["latency_ms"]["mean"]) < 1e-9, t
sl = dec["step_latency_ms"]
assert sl["n"] == 16 and sl["min"] <= sl["p50"] <= sl["p90"] <= sl["p99"] <= sl["max"], sl
k = s["kernels"]
assert abs(sum(r["share"] for r in k["rows"]) - 1) < 1e-6, "shares do not add up to 100%"
assert abs(sum(r["busy_ms"] for r in k["rows"]) - k["busy_ms"]) < 1e-6 * k["busy_ms"]
if name == "h100_llm_tiny_graph":
    # programmatic dependent launch: summed kernel time 1.6x the busy time, said in the reports
    assert dec["overlap"] > 1.5, dec["overlap"]
    assert k["total_ms"] > 1.3 * k["busy_ms"], k
    assert dec["bound"] == "GPU-bound", dec["bound"]
    assert any(a["rule"] == "overlap-decode" for a in s["advice"]["takeaways"])
else:
    assert dec["overlap"] < 1.01, dec["overlap"]
for p in s["perf"]:
    assert "mfu_host" not in p and "mfu_latency" in p, p
PY
  grep -q "^## Self-check against the workload's own timings" "$name/report.md" || fail "$name: no self-check section"
  grep -q "| decode tokens/s | " "$name/report.md" || fail "$name: no tokens/s check row"
done
# the gap waterfall adds up to the latency; a bandwidth probe's rate gives a second floor
cp -r "$LP_SRC/tests/fixtures/runs/h100_llm_tiny_graph" probed
echo '{"probe": "d2d_copy", "device": "NVIDIA H100 80GB HBM3", "bytes": 2147483648, "iters": 10, "ms": 14.3, "copy_gb_per_s": 3003.50}' >probed/probe.json
expect_exit 0 "$LLMPROF" report probed
python3 - probed <<'PY' || fail "waterfall numbers do not hold"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
for w in s["waterfall"]:
    assert w["valid"], w
    assert abs(sum(i["ms"] for i in w["items"]) - w["latency_ms"]) < 1e-9 * w["latency_ms"], w
    assert w["items"][0]["kind"] == "floor" and w["items"][0]["ms"] == w["floor_ms"] > 0, w
    # memory-bound tiny model: the floor scales with the bandwidth, 3350 GB/s datasheet vs 3003.5 measured
    assert abs(w["floor_measured_ms"] / w["floor_ms"] - 3350 / 3003.5) < 1e-6, (w["floor_measured_ms"], w["floor_ms"])
    assert w["measured_bw_gbs"] == 3003.5
PY
grep -q "At the measured copy bandwidth (3004 GB/s, llmprof-probe) the floor is" probed/report.md || fail "no measured floor line"
grep -q "^\*\*Decode step\*\* (per step, mean over 16)" probed/report.md || fail "no decode waterfall"
grep -q "\[waterfall-decode\]" probed/stakeholder_summary.md || fail "no waterfall recommendation"
grep -q "^Overlap (decode\\\\_all): kernels run concurrently" h100_llm_tiny_graph/report.md || fail "no overlap note"
grep -q "steps: 16 measured .decode_step. ranges" h100_llm_tiny_graph/report.md || fail "no step percentiles"
pass
