#!/bin/bash
# `llmprof check`: the table, its exit status (run's: 0 / 4 when a requested phase cannot run), a
# configured tool that
# is found through tools.ncu=, json output, usage errors.
set -u
. "$(dirname "$0")/lib.bash"

mkdir -p fake
printf '#!/bin/sh\necho "Version 2099.1.0.0 (build 1)"\n' >fake/ncu && chmod +x fake/ncu
"$LLMPROF" check tools.ncu="$LP_TMP/fake/ncu" >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || fail "check exited $rc: $(cat err.txt)"
grep -q "^ncu  *ok  *2099.1.0.0 at $LP_TMP/fake/ncu (config)" out.txt || fail "configured ncu not shown: $(cat out.txt)"
grep -q "^mode deep" out.txt || fail "no mode line: $(cat out.txt)"
# the tracer's clock, measured here: ok or slow, its source and one read's cost
grep -q "^host clock  *\(ok\|slow\)  *.*, [0-9]* ns a read" out.txt || fail "no host clock row: $(cat out.txt)"
if [ "$rc" -eq 4 ]; then grep -q "^mode deep  *no " out.txt || fail "exit 4 but mode ok"; fi
if [ "$rc" -eq 0 ]; then grep -q "^mode deep  *ok " out.txt || fail "exit 0 but mode not ok"; fi

"$LLMPROF" check --format json --mode light >out.json 2>/dev/null
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 4 ] || fail "check --format json exited $rc"
grep -q '"mode": "light"' out.json || fail "json lacks the mode: $(head -c 500 out.json)"
python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["host_clock"]; assert c["realtime_read_ns"] >= 1 and c["slow"] in (True, False), c' out.json ||
  fail "json's host_clock: $(grep -A4 host_clock out.json)"
if ! have_gpu; then
  # no GPU: `run` runs the CPU path and exits 0, so check says that and exits 0 too (issue 21)
  expect_exit 0 "$LLMPROF" check --mode light
  grep -q "^run  *CPU  *CPU run: stages and operators, no GPU kernels (" "$LP_TMP/stdout" ||
    fail "check does not say what run will do: $(cat "$LP_TMP/stdout")"
  expect_exit 0 "$LLMPROF" check --format json
  grep -q '"expected_exit": 0' "$LP_TMP/stdout" || fail "json: $(tail -n 6 "$LP_TMP/stdout")"
  # a workload after `--` is judged the same way (no GPU: a CPU run)
  expect_exit 0 "$LLMPROF" check -- python3 x.py
  # the tracer is what every run needs: without it run exits 4, and so does check
  mkdir -p nolib/bin && cp "$LLMPROF" nolib/bin/llmprof
  expect_exit 4 nolib/bin/llmprof --config-dir "$LP_SRC/conf" check
  grep -q "^mode deep  *no  *the tracer library .* ('llmprof run' exits 4)$" "$LP_TMP/stdout" ||
    fail "check without the tracer: $(cat "$LP_TMP/stdout")"
fi
expect_exit 2 "$LLMPROF" check --mode medium
expect_exit 2 "$LLMPROF" check frobnicate=1
grep -q "^error: unknown key 'frobnicate'" "$LP_TMP/stderr" || fail "check does not name the key: $(cat "$LP_TMP/stderr")"
# the composed config: run.mode picks the mode like --mode does
"$LLMPROF" check --format json run.mode=light >out2.json 2>/dev/null
grep -q '"mode": "light"' out2.json || fail "run.mode=light not used: $(head -c 300 out2.json)"

# tools.nsys_lib_dir: check looks for the importer's libraries where `run` points nsys
# (LD_LIBRARY_PATH=DIR first), so a folder holding them is where they are found
mkdir -p libs
libc=$(ldd "$(command -v ls)" | awk '/libc.so/ {print $3}')
for l in libdw.so.1 libelf.so.1; do cp "$(dirname "$libc")/libdl.so.2" "libs/$l"; done  # loadable stand-ins
"$LLMPROF" check --nsys tools.nsys_lib_dir="$LP_TMP/libs" >out3.txt 2>/dev/null
grep -q "^nsys importer  *ok  *libdw.so.1 and libelf.so.1 loadable from $LP_TMP/libs (tools.nsys_lib_dir)$" out3.txt ||
  fail "check did not look in tools.nsys_lib_dir: $(grep importer out3.txt)"
"$LLMPROF" check --nsys --format json tools.nsys_lib_dir="$LP_TMP/libs" >out3.json 2>/dev/null
grep -q "\"nsys_importer_dir\": \"$LP_TMP/libs\"" out3.json || fail "json: $(grep importer out3.json)"
pass
