#!/bin/bash
# Programs nobody wrote for llmprof (issue 12), end to end on the CPU with the stand-ins of
# tests/python/fakes: `llmprof run -- python3 prog.py` puts python/llmprof_auto on the program's
# PYTHONPATH (chaining the user's PYTHONPATH), so an unmodified generate() program and a
# hand-written loop get prefill / decode_all / decode_step stages, the first (cold) iteration is
# left out as warm-up, and the model shape and token counts come from the program's account
# (auto/program.<pid>.json) with the report saying so; a program with default-domain
# prefill / decode / decode_step ranges of its own gets those, through the stage mapping, and no
# shim ranges; run.auto_stages=false turns the shim off; `llmprof report` reproduces the reports.
# Needs the NVTX interop library (CUDA toolkit) for ranges to reach the tracer.
set -u
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
ldconfig -p 2>/dev/null | grep -q libnvtx3interop.so.1 || [ -e /usr/local/cuda/lib64/libnvtx3interop.so.1 ] ||
  skip "libnvtx3interop.so.1 (CUDA toolkit) not found: Python NVTX ranges cannot be recorded"
export PYTHONPATH="$LP_SRC/tests/python/fakes" PYTHONDONTWRITEBYTECODE=1
prog="$LP_SRC/tests/python/fake_hf_program.py"

check() {  # check DIR MODE: the summary.json of a run of fake_hf_program.py MODE
  python3 - "$1" "$2" <<'PY' || fail "summary check failed for $2 in $1"
import json, sys
d, mode = sys.argv[1], sys.argv[2]
s = json.load(open(d + "/summary.json"))
st = {x["name"]: x for x in s["stages"]}
assert set(st) == {"prefill", "decode_all"}, list(st)
# three iterations, the cold first one left out (no warm-up range)
for n in ("prefill", "decode_all"):
    assert st[n]["iterations"] == 2 and st[n]["skipped_first"] == 1, st[n]
assert st["decode_all"]["steps"]["mean"] == 4, st["decode_all"]["steps"]
assert st["prefill"]["per_iteration"][0]["payload"] == (None if mode == "ranges" else 32), st["prefill"]
m = s["stage_mapping"]
assert m["skip_first"]["iterations"] == 1 and m["skip_first"]["rule"].startswith("auto"), m
# a hand-written loop: the shim's decode_all closes at the next prefill or at exit (0.2 s after
# the last step); each measured one ends at its last step instead (4 steps of 2 ms)
assert m["decode_ends_at_last_step"] == (2 if mode == "loop" else 0), m
assert st["decode_all"]["latency_ms"]["max"] < 100, st["decode_all"]["latency_ms"]
if mode == "ranges":
    # the program's own default-domain ranges, through the default mapping; no shim ranges
    assert [(e["domain"], e["name"]) for e in m["ranges"]["decode_all"]] == [("", "decode")], m
    assert [(e["domain"], e["name"]) for e in m["ranges"]["prefill"]] == [("", "prefill")], m
    assert s["sources"]["model"] and "llmprof_auto" in s["sources"]["model"], s["sources"]
else:
    assert [(e["domain"], e["name"]) for e in m["ranges"]["decode_all"]] == [("LLM", "decode_all")], m
    assert m["ranges"]["decode_step"][0]["ranges"] == 12, m
# the shape and the counts from the program's account
assert s["model"]["known"] and s["model"]["hidden_size"] == 128 and s["model"]["dtype"] == "bf16", s["model"]
assert s["model"]["name"] == "FakeLlamaForCausalLM", s["model"]
assert s["tokens"]["batch"] == 2 and s["tokens"]["prompt_len"] == 16, s["tokens"]
assert "llmprof_auto" in s["sources"]["batch"] and "llmprof_auto" in s["sources"]["prompt_len"], s["sources"]
assert s["sources"]["program_parameters"] == 512 * 128 + 1000, s["sources"]
PY
}

for mode in generate loop ranges; do
  expect_exit 0 "$LLMPROF" run --mode light run.id="auto-$mode" -- python3 "$prog" "$mode"
  dir=tmp/stage2/auto-$mode
  ls "$dir"/auto/program.*.json >/dev/null 2>&1 || fail "$mode: no auto/program.<pid>.json in $dir"
  grep -q '"auto/program\.' "$dir/manifest.json" || fail "$mode: the account is not in manifest.json"
  check "$dir" "$mode"
  grep -q "No warm-up range was seen: the first iteration of each stage" "$dir/report.md" ||
    fail "$mode: report.md does not say the first iteration was skipped"
  grep -q "Where the inputs came from: model shape from the program" "$dir/report.md" ||
    fail "$mode: report.md does not say where the shape came from"
  mkdir -p "before-$mode" && cp "$dir"/*.md "$dir"/summary.json "before-$mode"/
  expect_exit 0 "$LLMPROF" report "$dir"
  for f in "before-$mode"/*; do cmp -s "$f" "$dir/$(basename "$f")" || fail "llmprof report changed $(basename "$f")"; done
done
grep -q "pushed by llmprof_auto" tmp/stage2/auto-generate/report.md || fail "report.md does not say who pushed the ranges"
grep -q 'Stage mapping (built-in defaults' tmp/stage2/auto-ranges/report.md ||
  fail "report.md does not show the mapping of the program's own ranges: $(grep -n mapping tmp/stage2/auto-ranges/report.md)"
grep -q 'decode\\_all <- "decode" (default domain, 3 ranges)' tmp/stage2/auto-ranges/report.md ||
  fail "the mapping line does not name decode: $(grep -n 'Stage mapping' tmp/stage2/auto-ranges/report.md)"

# the mapping from the config: rename the stages of the `ranges` program away, and back
expect_exit 0 "$LLMPROF" run --mode light run.id=renamed 'stages.decode_all=[regex:dec(ode)?]' run.skip_first=0 \
  -- python3 "$prog" ranges
python3 - tmp/stage2/renamed <<'PY' || fail "configured mapping / skip_first=0 not applied"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
st = {x["name"]: x for x in s["stages"]}
assert st["decode_all"]["iterations"] == 3 and st["decode_all"]["skipped_first"] == 0, st["decode_all"]
assert s["stage_mapping"]["source"] == "stages.* in the config", s["stage_mapping"]
assert s["stage_mapping"]["skip_first"]["rule"] == "run.skip_first"
PY

# no stage at all (no name mapped to a stage, every top-level range taken as warm-up): one line saying so, how to add ranges, and
# the whole-run numbers
expect_exit 0 "$LLMPROF" run --mode light run.id=nostages 'stages.prefill=[none]' 'stages.decode_all=[none]' \
  'stages.warmup=[regex:.*]' -- python3 "$prog" ranges
grep -q "^No stage ranges were seen" tmp/stage2/nostages/report.md || fail "no 'No stage ranges were seen' line"
grep -q '^- C: `#include <llmprof/nvtx.h>`' tmp/stage2/nostages/report.md || fail "no C how-to line"
grep -q '^- C++: `nvtx3::scoped_range' tmp/stage2/nostages/report.md || fail "no C++ how-to line"
grep -q '^- Python: `torch.cuda.nvtx.range_push' tmp/stage2/nostages/report.md || fail "no Python how-to line"
grep -q "^Whole run: [0-9.]* ms from the first to the last recorded event" tmp/stage2/nostages/report.md ||
  fail "no whole-run line: $(sed -n '/Per-stage/,/Self-check/p' tmp/stage2/nostages/report.md)"

# off: no shim, so the unmodified program makes no NVTX call at all: no trace, no account
expect_exit 3 "$LLMPROF" run --mode light run.id=off run.auto_stages=false -- python3 "$prog" generate
[ -e tmp/stage2/off/auto ] && fail "run.auto_stages=false still wrote an account"
grep -q "left no trace" tmp/stage2/off/phases.json || fail "off: $(cat tmp/stage2/off/phases.json)"
pass
