#!/bin/bash
# `llmprof report` replaces reports only by equal-or-better ones (issue 20), and takes the run id
# from the artifacts (issue 11), on a real CPU run:
# - a copied or moved run folder regenerates byte-identical reports;
# - a truncated trace, or an ncu export that manifest.json lists but that is gone, exits 3 with a
#   warning naming the file, and the good reports already there stay as they were;
# - a run folder without reports gets them from what can be read, still exit 3.
set -u
. "$(dirname "$0")/lib.bash"

reports="kernels.md operators.md report.md stakeholder_summary.md summary.json report.html"
same_reports() {  # same_reports DIR_A DIR_B
  local f
  for f in $reports; do cmp -s "$1/$f" "$2/$f" || fail "$2/$f differs from $1/$f"; done
}

expect_exit 0 "$LLMPROF" run --mode light run.id=orig run.repeats=1 run.warmup=0 inputs.prompt_len=8 inputs.new_tokens=2
orig=tmp/stage2/orig
mkdir -p keep && cp -r "$orig" keep/orig

# a copy under another name (and another parent) reproduces the same bytes: the run id comes
# from the artifacts, not the folder's name
mkdir -p elsewhere && cp -r "$orig" elsewhere/renamed-copy
expect_exit 0 "$LLMPROF" report elsewhere/renamed-copy
same_reports keep/orig elsewhere/renamed-copy
grep -q "renamed-copy" elsewhere/renamed-copy/report.md && fail "report.md names the folder, not the run id"
grep -q '"run_id": "orig"' elsewhere/renamed-copy/summary.json || fail "summary.json run_id is not 'orig'"

# a truncated trace: exit 3, the damage named, the good reports kept byte for byte
cp -r "$orig" cut
trace=$(ls cut/trace/*.lptrace)
truncate -s $(( $(stat -c %s "$trace") - 5 )) "$trace"
expect_exit 3 "$LLMPROF" report cut
grep -q "^warning: damaged artifacts in 'cut': .*$(basename "$trace")' is truncated at byte" "$LP_TMP/stderr" ||
  fail "no warning naming the truncated trace: $(cat "$LP_TMP/stderr")"
grep -q "^hint: the reports already in 'cut' were kept" "$LP_TMP/stderr" || fail "no 'kept' hint: $(cat "$LP_TMP/stderr")"
[ -s "$LP_TMP/stdout" ] && fail "lists reports it did not write: $(cat "$LP_TMP/stdout")"
same_reports keep/orig cut
grep -q "iterations 0" cut/report.md && fail "report.md was overwritten with an empty analysis"

# the same without reports: they are written from what could be read, and the exit is still 3
rm -f $(for f in $reports; do echo "cut/$f"; done)
expect_exit 3 "$LLMPROF" report cut
for f in $reports; do [ -s "cut/$f" ] || fail "cut/$f not written"; done
grep -q "^cut/report.md$" "$LP_TMP/stdout" || fail "does not list the reports it wrote"

# an export that manifest.json lists, gone: exit 3, named, reports kept
cp -r "$orig" nocsv
cp "$LP_SRC/tests/fixtures/ncu/synthetic_raw.csv" nocsv/ncu/run_raw.csv
python3 - nocsv <<'PY' || fail "cannot add the export to the manifest"
import json, os, sys
d = sys.argv[1]
m = json.load(open(d + "/manifest.json"))
m["artifacts"].append({"path": "ncu/run_raw.csv", "size_bytes": os.path.getsize(d + "/ncu/run_raw.csv"),
                       "sha256": "", "phase": "ncu"})
json.dump(m, open(d + "/manifest.json", "w"), indent=2)
PY
expect_exit 0 "$LLMPROF" report nocsv
mkdir -p keep/nocsv && for f in $reports; do cp "nocsv/$f" keep/nocsv/; done
rm nocsv/ncu/run_raw.csv
expect_exit 3 "$LLMPROF" report nocsv
grep -q "^warning: damaged artifacts in 'nocsv': 'ncu/run_raw.csv' is missing (manifest.json lists it)" "$LP_TMP/stderr" ||
  fail "no warning naming the missing export: $(cat "$LP_TMP/stderr")"
same_reports keep/nocsv nocsv

# a header-only trace (what a workload stopped at once leaves) is read as an empty trace
mkdir -p empty && cp -r "$orig"/config.yaml "$orig"/env.json empty/ && mkdir -p empty/trace
head -c 16 "$trace" > empty/trace/host.1.lptrace
expect_exit 3 "$LLMPROF" report empty
grep -q "has no END record" "$LP_TMP/stderr" || fail "header-only trace: $(cat "$LP_TMP/stderr")"
[ -s empty/summary.json ] || fail "header-only trace: no summary.json"
pass
