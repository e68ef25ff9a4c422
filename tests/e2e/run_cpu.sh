#!/bin/bash
# `llmprof run` without a GPU (issue 6's CPU end to end): the reference model on the CPU leaves the
# full bundle (provenance, trace, kernels.md saying no GPU kernels were recorded, operators and
# stage timings from the CPU run, report.md, stakeholder_summary.md, summary.json), exit 0; the
# stage times agree with the workload's own timings; `llmprof report` reproduces the same files;
# bad overrides exit 2 having written nothing; run.id names a run; keep_last prunes.
set -u
. "$(dirname "$0")/lib.bash"
have_gpu && skip "a GPU is present: this test covers the CPU path"

expect_exit 0 "$LLMPROF" run run.repeats=2 run.device=cpu
dir=$(run_dir_from_stdout)
[[ "$dir" =~ ^tmp/stage2/[0-9]{8}-[0-9]{6}-[0-9a-f]{4}$ ]] || fail "unexpected run folder '$dir' in: $(cat "$LP_TMP/stdout")"
for f in config.yaml env.json inputs.yaml manifest.json phases.json kernels.md operators.md report.md \
         stakeholder_summary.md summary.json trace/cmd.txt trace/workload.stdout; do
  [ -s "$dir/$f" ] || fail "$dir/$f missing or empty"
done
ls "$dir"/trace/*.lptrace >/dev/null 2>&1 || fail "no trace file in $dir/trace"
for d in nsys ncu logs; do [ -d "$dir/$d" ] || fail "$dir/$d missing"; done
grep -q '"status": "ok"' "$dir/manifest.json" || fail "status not ok: $(cat "$dir/manifest.json")"
grep -qi "no GPU kernels were recorded" "$dir/kernels.md" || fail "kernels.md does not say no GPU kernels: $(cat "$dir/kernels.md")"
grep -q "| attention |" "$dir/operators.md" || fail "operators.md lacks the attention op: $(head -c 1500 "$dir/operators.md")"
grep -q "^  repeats: 2$" "$dir/config.yaml" || fail "config.yaml lacks the override"
grep -q "^  batch: 1$" "$dir/config.yaml" || fail "config.yaml lacks the resolved inputs.batch"
grep -q "llmprof-llm" "$dir/inputs.yaml" || fail "inputs.yaml lacks the workload argv"
# the phases: everything requested ran; ncu is skipped on a CPU run, with the reason
python3 - "$dir" <<'PY' || fail "phases / stage check failed"
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
ph = {p["name"]: p for p in s["phases"]}
for n in ("provenance", "capture", "analysis", "reports"):
    assert ph[n]["status"] == "ok", ph[n]
assert ph["ncu"]["status"] == "skipped" and "CPU" in ph["ncu"]["reason"], ph["ncu"]
assert s["have_gpu"] is False
stages = {st["name"]: st for st in s["stages"]}
assert set(stages) == {"prefill", "decode_all"}, list(stages)
# cross-check against the workload's own monotonic-clock timings (JSON lines)
own = [json.loads(l) for l in open(d + "/trace/workload.stdout") if '"iter"' in l]
assert len(own) == 2, own
for key, stage in (("prefill_ms", "prefill"), ("decode_ms", "decode_all")):
    mine = stages[stage]["latency_ms"]["mean"]
    theirs = sum(o[key] for o in own) / len(own)
    assert abs(mine - theirs) <= 0.05 * theirs + 0.5, (stage, mine, theirs)
assert stages["decode_all"]["steps"]["mean"] == 32
PY
# every artifact in the manifest matches the file on disk
python3 - "$dir" <<'PY' || fail "manifest does not match the files"
import hashlib, json, os, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
paths = set()
for a in m["artifacts"]:
    p = os.path.join(d, a["path"]); paths.add(a["path"])
    data = open(p, "rb").read()
    assert len(data) == a["size_bytes"], a
    assert hashlib.sha256(data).hexdigest() == a["sha256"], a
for f in ("config.yaml", "summary.json", "report.md", "trace/cmd.txt"):
    assert f in paths, f
PY
# `llmprof report` recomputes the same bytes from the artifacts alone
mkdir -p before && cp "$dir"/*.md "$dir"/summary.json before/
expect_exit 0 "$LLMPROF" report "$dir"
for f in before/*; do cmp -s "$f" "$dir/$(basename "$f")" || fail "llmprof report changed $(basename "$f")"; done

# bad overrides: exit 2, nothing written
n_before=$(ls tmp/stage2 | wc -l)
expect_exit 2 "$LLMPROF" run run.top_n_kernel=3
grep -q "^error: unknown key 'run.top_n_kernel'" "$LP_TMP/stderr" || fail "$(cat "$LP_TMP/stderr")"
expect_exit 2 "$LLMPROF" run run.repeats=0
[ "$(ls tmp/stage2 | wc -l)" -eq "$n_before" ] || fail "a bad override left a run folder"

# a workload that makes no NVTX or CUDA call: a partial run (exit 3) that says why
expect_exit 3 "$LLMPROF" run -- /bin/true --flag
d2=$(run_dir_from_stdout)
grep -q "left no trace" "$d2/phases.json" || fail "no reason for the empty capture: $(cat "$d2/phases.json")"
grep -q "/bin/true" "$d2/inputs.yaml" || fail "inputs.yaml lacks the workload"
[ -s "$d2/env.json" ] || fail "provenance lost after a failed capture"

expect_exit 0 "$LLMPROF" run run.id=second
[ "$(run_dir_from_stdout)" = tmp/stage2/second ] || fail "run.id not used: $(cat "$LP_TMP/stdout")"
expect_exit 2 "$LLMPROF" run run.id=second
grep -q "^error: run folder 'tmp/stage2/second' already exists$" "$LP_TMP/stderr" || fail "$(cat "$LP_TMP/stderr")"

expect_exit 0 "$LLMPROF" run artifacts.keep_last=1
[ "$(ls tmp/stage2 | wc -l)" -eq 1 ] || fail "keep_last=1 left: $(ls tmp/stage2)"
[ -d "$(run_dir_from_stdout)" ] || fail "keep_last removed the new run"

# --dry-run prints the phases with their command lines and creates nothing
expect_exit 0 "$LLMPROF" run --dry-run model=llama-3.2-1b
grep -q "2 capture: .*CUDA_INJECTION64_PATH=.*llmprof-llm --model llama-3.2-1b" "$LP_TMP/stdout" || fail "dry run: $(cat "$LP_TMP/stdout")"
[ "$(ls tmp/stage2 | wc -l)" -eq 1 ] || fail "--dry-run created a run folder"
pass
