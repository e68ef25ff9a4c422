#!/bin/bash
# Issue 20, process hygiene and honest messages of `llmprof run` (CPU only):
# - SIGINT / SIGTERM to llmprof stop the workload and exit 130 / 143 (not 3, a failed phase);
#   the run is "interrupted", only reports that exist are announced (none here), and the
#   workload stopped before any NVTX/CUDA call still leaves a readable (empty) trace;
# - SIGKILL of llmprof (no handler runs) still ends the workload and its children;
# - run.timeout_s takes a fraction and the message gives the real elapsed time, not "0 s";
# - model.* shape overrides reach the reference workload (it runs the shape the report counts).
set -u
. "$(dirname "$0")/lib.bash"

alive() { [ -d "/proc/$1" ] && ! grep -q '^State:.*[ZX]' "/proc/$1/status" 2>/dev/null; }

# wait_file PATH: up to 20 s for a file to appear
wait_file() {
  local i
  for i in $(seq 200); do [ -s "$1" ] && return 0; sleep 0.1; done
  return 1
}

# interrupt SIGNAL EXPECTED_EXIT ID: a workload that sleeps, interrupted while it runs
interrupt() {
  local sig=$1 want=$2 id=$3 pid rc dir
  rm -f "$LP_TMP/w.pid"
  "$LLMPROF" run --mode light run.id="$id" -- sh -c "echo \$\$ > '$LP_TMP/w.pid'; exec sleep 60" \
    >"$LP_TMP/stdout" 2>"$LP_TMP/stderr" &
  pid=$!
  wait_file "$LP_TMP/w.pid" || fail "the workload did not start: $(cat "$LP_TMP/stderr")"
  kill "-$sig" "$pid"
  wait "$pid"
  rc=$?
  [ "$rc" -eq "$want" ] || fail "SIG$sig: llmprof exited $rc, expected $want; stderr: $(cat "$LP_TMP/stderr")"
  alive "$(cat "$LP_TMP/w.pid")" && fail "SIG$sig: the workload still runs"
  dir=tmp/stage2/$id
  grep -q "^run: $dir (exit $want)$" "$LP_TMP/stdout" || fail "SIG$sig: summary line: $(cat "$LP_TMP/stdout")"
  grep -q "report.md" "$LP_TMP/stdout" && fail "SIG$sig: announces reports never written: $(cat "$LP_TMP/stdout")"
  grep -q "^reports: none written$" "$LP_TMP/stdout" || fail "SIG$sig: no 'reports: none written': $(cat "$LP_TMP/stdout")"
  grep -q "report.md" "$LP_TMP/stderr" && fail "SIG$sig: points at a report.md that does not exist: $(cat "$LP_TMP/stderr")"
  [ -e "$dir/report.md" ] && fail "SIG$sig: report.md written"
  grep -q '"status": "interrupted"' "$dir/manifest.json" || fail "SIG$sig: status: $(cat "$dir/manifest.json")"
  grep -q "was interrupted" "$dir/phases.json" || fail "SIG$sig: phases.json: $(cat "$dir/phases.json")"
  # the workload never loaded the tracer: an empty trace (the preamble alone) stands for it; the
  # reader takes it as an empty trace that lacks the END record of a clean exit, so `report`
  # writes the reports (there were none) and exits 3 naming the damage
  ls "$dir"/trace/*.lptrace >/dev/null 2>&1 || fail "SIG$sig: no trace file left"
  [ "$(stat -c %s "$dir"/trace/*.lptrace)" -eq 16 ] || fail "SIG$sig: the empty trace is not the 16-byte preamble"
  expect_exit 3 "$LLMPROF" report "$dir"
  grep -q "^warning: damaged artifacts in '$dir': .*lptrace' has no END record" "$LP_TMP/stderr" ||
    fail "SIG$sig: report's warning: $(cat "$LP_TMP/stderr")"
  [ -s "$dir/report.md" ] || fail "SIG$sig: report on the interrupted run wrote no report.md"
  grep -q "^$dir/report.md$" "$LP_TMP/stdout" || fail "SIG$sig: report did not list what it wrote"
}
interrupt INT 130 int1
interrupt TERM 143 term1

# SIGKILL of llmprof: the workload and its children end too (nothing writes on into the folder)
rm -f "$LP_TMP/w.pid" "$LP_TMP/gc.pid"
"$LLMPROF" run --mode light run.id=kill1 -- \
  sh -c "sleep 60 & echo \$! > '$LP_TMP/gc.pid'; echo \$\$ > '$LP_TMP/w.pid'; wait" >/dev/null 2>&1 &
pid=$!
wait_file "$LP_TMP/w.pid" && wait_file "$LP_TMP/gc.pid" || fail "the workload did not start"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
for i in $(seq 100); do
  alive "$(cat "$LP_TMP/w.pid")" || alive "$(cat "$LP_TMP/gc.pid")" || break
  sleep 0.1
done
alive "$(cat "$LP_TMP/w.pid")" && fail "the workload outlived a SIGKILLed llmprof"
alive "$(cat "$LP_TMP/gc.pid")" && fail "the workload's child outlived a SIGKILLed llmprof"

# run.timeout_s=1.5: accepted (docs/config.md: a number), and the real elapsed time is reported
expect_exit 3 "$LLMPROF" run --mode light run.id=to1 run.timeout_s=1.5 -- sleep 30
grep -q "timed out after 1\.[5-9] s (limit 1.5 s)" tmp/stage2/to1/phases.json ||
  fail "timeout message: $(cat tmp/stage2/to1/phases.json)"
grep -q "after 0 s" tmp/stage2/to1/phases.json && fail "says 'after 0 s'"
grep -q "report.md" "$LP_TMP/stdout" && fail "a timed-out run announces report.md: $(cat "$LP_TMP/stdout")"

# model shape overrides: the reference workload runs the shape whose parameters the report counts
expect_exit 0 "$LLMPROF" run --mode light run.id=shape1 run.repeats=1 run.warmup=0 inputs.prompt_len=8 \
  inputs.new_tokens=2 model.hidden_size=256 model.num_hidden_layers=8
grep -q -- "--model $LP_TMP/tmp/stage2/shape1/model.json\|--model [^ ]*/shape1/model.json" tmp/stage2/shape1/trace/cmd.txt ||
  fail "the workload was not given the shape: $(cat tmp/stage2/shape1/trace/cmd.txt)"
python3 - tmp/stage2/shape1 <<'PY' || fail "parameter counts differ"
import json, sys
d = sys.argv[1]
own = [json.loads(l) for l in open(d + "/trace/workload.stdout") if '"summary"' in l][0]
mine = json.load(open(d + "/summary.json"))["model"]["params"]["total"]
assert own["params"] == mine == 3281152, (own["params"], mine)
PY
# a shape the workload cannot run is refused before anything runs
expect_exit 2 "$LLMPROF" run --mode light run.id=shape2 model.head_dim=48
grep -q "^error: the model.\* overrides do not give a shape the reference workload can run: .*head_dim" "$LP_TMP/stderr" ||
  fail "message: $(cat "$LP_TMP/stderr")"
[ -e tmp/stage2/shape2 ] && fail "a refused run left a folder"
pass
