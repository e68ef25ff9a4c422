#!/bin/bash
# `llmprof trace dump|perfetto` and `llmprof kernels`-style loading on a trace made by the NVTX
# demo under the injected library; usage errors, a truncated file, a corrupt file.
set -u
. "$(dirname "$0")/lib.bash"

lib="$LP_BUILD/lib/libllmprof_inject.so"
demo="$LP_BUILD/tests/lp_trace_nvtx_demo"
# skipped only where the build has no tracer (no NVTX v3 headers); where it has one, a missing
# library or demo fails
[ "${LP_HAVE_INJECT:-1}" = 0 ] && skip "libllmprof_inject.so is not part of this build (no NVTX v3 headers)"
[ -f "$lib" ] && [ -x "$demo" ] || fail "this build has the tracer, but '$lib' or '$demo' is missing"

NVTX_INJECTION64_PATH="$lib" LLMPROF_TRACE_DIR="$LP_TMP/trace" "$demo" >"$LP_TMP/demo.out" 2>&1 ||
  fail "demo exited $?: $(cat "$LP_TMP/demo.out")"
[ -s "$LP_TMP/demo.out" ] && fail "the tracer wrote into the host's output: $(cat "$LP_TMP/demo.out")"
n=$(ls "$LP_TMP"/trace/*.lptrace | wc -l)
[ "$n" -eq 1 ] || fail "expected one trace file, found $n"

# LD_PRELOAD alone is enough: the library points NVTX at itself before main
LD_PRELOAD="$lib" LLMPROF_TRACE_DIR="$LP_TMP/preload" "$demo" >/dev/null 2>&1 || fail "preloaded demo failed"
ls "$LP_TMP"/preload/*.lptrace >/dev/null 2>&1 || fail "no trace under LD_PRELOAD"

expect_exit 0 "$LLMPROF" trace dump "$LP_TMP/trace"
grep -q '^file .*\.lptrace (format 1\.[0-9]*, [0-9]* bytes)$' "$LP_TMP/stdout" || fail "no file line in dump"
grep -q ' PROCESS pid=[0-9]* ' "$LP_TMP/stdout" || fail "no PROCESS record in dump"
grep -q ' NVTX PUSH .* name="decode_step" payload=u64:3' "$LP_TMP/stdout" || fail "no decode_step push in dump"
grep -q ' DOMAIN domain=1 name="LLM"' "$LP_TMP/stdout" || fail "no LLM domain in dump"
grep -q ' NVTX PUSH .* name="q\\"b\\\\c\\x01d\\x0a"' "$LP_TMP/stdout" || fail "awkward name not escaped in dump"
grep -q ' END end_ns=' "$LP_TMP/stdout" || fail "no END record (clean exit) in dump"
# the sampling and stage records are printed field by field, not skipped
grep -q ' SAMPLING mode=1 why=[0-9]* every=[0-9]* .* unit="decode_step"$' "$LP_TMP/stdout" || fail "no SAMPLING record in dump"
grep -q ' STAGE range=[0-9]* tid=[0-9]* index=0 sample=1 gpu=[0-9]* .* name="decode_step"$' "$LP_TMP/stdout" || fail "no decode_step STAGE record in dump"
grep -q 'UNKNOWN' "$LP_TMP/stdout" && fail "a record type the dump does not know: $(grep -m1 UNKNOWN "$LP_TMP/stdout")"
[ "$(grep -c ' NVTX PUSH ' "$LP_TMP/stdout")" -eq 17 ] || fail "expected 17 pushes in dump"

expect_exit 0 "$LLMPROF" trace perfetto "$LP_TMP/trace" -o "$LP_TMP/t.json.gz"
gzip -t "$LP_TMP/t.json.gz" || fail "not gzip"
if command -v python3 >/dev/null; then
  python3 - "$LP_TMP/t.json.gz" <<'PY' || fail "perfetto JSON check failed"
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
names = {e.get("name") for e in d["traceEvents"]}
assert "decode_step" in names and "outer" in names and "worker_range" in names, names
assert any(e["ph"] == "b" and e["name"] == "startend_a" for e in d["traceEvents"])
PY
fi

# usage errors
expect_exit 2 "$LLMPROF" trace
expect_exit 2 "$LLMPROF" trace frob "$LP_TMP/trace"
expect_exit 2 "$LLMPROF" trace perfetto "$LP_TMP/trace"
grep -q "needs an output file" "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"
mkdir -p "$LP_TMP/empty"
expect_exit 2 "$LLMPROF" trace dump "$LP_TMP/empty"
grep -q "^error: no trace files (\*.lptrace) in '.*empty'$" "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"

# a killed process: the tail is cut mid-record; read up to there with a warning
f=$(ls "$LP_TMP"/trace/*.lptrace)
size=$(stat -c %s "$f")
mkdir -p "$LP_TMP/cut"
head -c $((size - 5)) "$f" >"$LP_TMP/cut/x.lptrace"
expect_exit 0 "$LLMPROF" trace dump "$LP_TMP/cut"
grep -q "warning: '.*x.lptrace' ends inside a record at byte offset [0-9]*" "$LP_TMP/stderr" ||
  fail "no truncation warning: $(cat "$LP_TMP/stderr")"
expect_exit 0 "$LLMPROF" trace perfetto "$LP_TMP/cut" -o "$LP_TMP/cut.json.gz"

# a corrupt file: an error naming the file and the offset, exit 3
mkdir -p "$LP_TMP/bad"
printf 'LLMPTRC\n\001\000\000\000\000\000\000\000\011\000\000\000\377\377\377\177' >"$LP_TMP/bad/b.lptrace"
expect_exit 3 "$LLMPROF" trace dump "$LP_TMP/bad"
grep -q "^error: corrupt trace '.*b.lptrace' at byte offset 16: record of 2147483647 bytes exceeds the limit" \
  "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"
pass
