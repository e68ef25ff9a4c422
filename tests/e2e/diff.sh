#!/bin/bash
# `llmprof diff`: identical runs are within noise everywhere and pass any --fail-if; a kernel made
# slower (and the decode latency with it) is detected, named in the narrative and fails the gate;
# added and removed kernels; a schema mismatch exits 3; bad expressions exit 2; two kernel tables.
# The runs are the real H100 run folder of tests/fixtures/runs, reported here, and copies of it
# whose summary.json is edited the way a slower build would change it.
set -u
. "$(dirname "$0")/lib.bash"
cp -r "$LP_SRC/tests/fixtures/runs/h100_llm_tiny_graph" a
expect_exit 0 "$LLMPROF" report a
cp -r a b
expect_exit 0 "$LLMPROF" diff a b --fail-if 'decode.latency > +3%' --fail-if 'ttft > +5%' --fail-if 'decode.tokens_per_s < -1%'
grep -q "^Decode +0.0% (within noise" "$LP_TMP/stdout" || fail "identical runs: $(head -8 "$LP_TMP/stdout")"
grep -q "None: same device, model, inputs and configuration." "$LP_TMP/stdout" || fail "environment differs for a copy"
grep -Eq "\| (slower|faster|higher|lower) " "$LP_TMP/stdout" && fail "identical runs got a verdict: $(grep -E '(slower|faster)' "$LP_TMP/stdout")"
expect_exit 0 "$LLMPROF" diff --format json a b
python3 -c "import json,sys; d=json.load(open('$LP_TMP/stdout')); assert all(r['verdict'] in ('within noise','n/a') for r in d['rows']), d" \
  || fail "json: a verdict other than noise for identical runs"

# B: k_attn_decode 30% slower per launch; the decode latency of each iteration +20 us (of 217 us)
mkdir -p slow && cp -r a/. slow/
python3 - slow/summary.json <<'PY'
import json, sys
p = sys.argv[1]; s = json.load(open(p))
for r in s["kernels"]["rows"]:
    if r["short_name"] == "k_attn_decode":
        r["mean_ms"] *= 1.3; r["total_ms"] *= 1.3; r["stage_ms"]["decode_ms"] *= 1.3; r["std_ms"] *= 1.0
    if r["short_name"] == "k_embed":
        r["kernel_name"] = "k_embed_v2(int)"; r["short_name"] = r["label"] = "k_embed_v2"
for st in s["stages"]:
    if st["kind"] == "decode":
        for k in ("latency_ms", "gpu_busy_ms"):
            st[k]["mean"] += 0.020
s["tokens"]["decode_step_ms"] += 0.0025
s["tokens"]["decode_tokens_per_s"] = 8 / (s["tokens"]["decode_step_ms"] * 8) * 1e3
json.dump(s, open(p, "w"), indent=2)
PY
sed -i 's/^  repeats: 2$/  repeats: 3/' slow/config.yaml
expect_exit 1 "$LLMPROF" diff a slow --fail-if 'decode.latency > +3%' --fail-if 'ttft > +5%'
grep -q "^- config.run.repeats: 2 -&gt; 3$" "$LP_TMP/stdout" || fail "config difference not listed: $(grep -A3 Environment "$LP_TMP/stdout")"
grep -q "^Decode +9.2% (slower, p = " "$LP_TMP/stdout" || fail "slower decode not detected: $(grep -m1 Decode "$LP_TMP/stdout")"
grep -q "k\\\\_attn\\\\_decode +0.0026 ms/step" "$LP_TMP/stdout" || fail "the narrative does not name k_attn_decode: $(grep -m1 Decode "$LP_TMP/stdout")"
grep -q "| k\\\\_attn\\\\_decode (per launch) | 0.0043 | 0.0056 | .* | +30.00% | slower (p = " "$LP_TMP/stdout" \
  || fail "kernel row: $(grep attn "$LP_TMP/stdout")"
grep -q "1 kernel added, 1 removed" "$LP_TMP/stdout" || fail "added/removed not counted"
grep -q "| k\\\\_embed\\\\_v2 (per iteration) | - | .* | added |" "$LP_TMP/stdout" || fail "added kernel row missing"
grep -q "^error: --fail-if 'decode.latency > +3%' holds" "$LP_TMP/stderr" || fail "gate message: $(cat "$LP_TMP/stderr")"
grep -q "ttft" "$LP_TMP/stderr" && fail "ttft did not change but failed the gate"
# a condition the change does not meet passes
expect_exit 0 "$LLMPROF" diff a slow --fail-if 'decode.latency > +10%'

# schema mismatch, unreadable run, bad expressions
mkdir -p old && cp -r a/. old/
python3 -c "import json; p='old/summary.json'; s=json.load(open(p)); s['schema_version']=99; json.dump(s, open(p,'w'))"
expect_exit 3 "$LLMPROF" diff a old
grep -q "schema 1 vs 99: the runs cannot be compared" "$LP_TMP/stderr" || fail "schema message: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" diff a "$LP_TMP/nothing-here"
for bad in 'decode.latency >> 3' 'decode.latency' '> 3%' 'decode.latency > fast'; do
  expect_exit 2 "$LLMPROF" diff a b --fail-if "$bad"
  grep -q "^error: --fail-if '.*': not 'METRIC OP VALUE'" "$LP_TMP/stderr" || fail "bad expression '$bad': $(cat "$LP_TMP/stderr")"
  grep -q "^hint: " "$LP_TMP/stderr" || fail "no hint for '$bad'"
done
expect_exit 2 "$LLMPROF" diff a b --fail-if 'nosuch.metric > 3%'
grep -q "no metric 'nosuch.metric'" "$LP_TMP/stderr" || fail "unknown metric: $(cat "$LP_TMP/stderr")"
expect_exit 2 "$LLMPROF" diff a
expect_exit 2 "$LLMPROF" diff --format html a b

# two kernel tables (trace folders): deltas without verdicts
expect_exit 0 "$LLMPROF" diff a/trace "$LP_SRC/tests/fixtures/runs/h100_torch_graph/trace"
grep -q "^Kernel tables: 12 kernels in A" "$LP_TMP/stdout" || fail "table mode: $(head -8 "$LP_TMP/stdout")"
pass
