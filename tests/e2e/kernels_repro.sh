#!/bin/bash
# `llmprof kernels` on inputs that once crashed it or gave silent wrong answers (issue 20) and on
# the smaller correctness items of issue 11: each case asserts the exit status and the message.
# Fixtures: tests/fixtures/repro/README.md.
set -u
. "$(dirname "$0")/lib.bash"
F="$LP_SRC/tests/fixtures"
R="$F/repro"

# crashes of the ncu summary reader: now one line naming file:line, exit 3
expect_exit 3 "$LLMPROF" kernels "$R/ncu_summary_cli_crash_min.csv"
grep -q "ncu_summary_cli_crash_min.csv:2: truncated row" "$LP_TMP/stderr" || fail "crash_min: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels "$R/fuzz_ncu_summary_crash.csv"
grep -q "fuzz_ncu_summary_crash.csv:3:10: 'Invocations' value" "$LP_TMP/stderr" || fail "crash: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels --stage decode_all "$R/fuzz_ncu_summary_pernvtx_crash.csv"
grep -q "fuzz_ncu_summary_pernvtx_crash.csv:2:17: 'Average' value .* is not a finite decimal number" "$LP_TMP/stderr" ||
  fail "pernvtx crash: $(cat "$LP_TMP/stderr")"

# a header twice, two exports concatenated: an error naming the line, never units read from a header
expect_exit 3 "$LLMPROF" kernels "$R/duphdr_raw.csv"
grep -q "duphdr_raw.csv:2: second header line" "$LP_TMP/stderr" || fail "duphdr: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels "$R/concat_raw.csv"
grep -q "concat_raw.csv:7: second header line" "$LP_TMP/stderr" || fail "concat: $(cat "$LP_TMP/stderr")"
# a units row with a number in it
sed '2s/"Mbyte"/"12"/' "$F/ncu/synthetic_raw.csv" >badunits.csv
expect_exit 3 "$LLMPROF" kernels badunits.csv
grep -q "badunits.csv:2:14: units row does not look like units: '12' in column 'dram__bytes_read.sum'" "$LP_TMP/stderr" ||
  fail "units row: $(cat "$LP_TMP/stderr")"

# the rule for every number: inf, overflow, hex are errors naming file:line:col
expect_exit 3 "$LLMPROF" kernels "$R/inf_nsys.csv"
grep -q "inf_nsys.csv:2:2: 'Total Time' value 'inf' is not a finite decimal number" "$LP_TMP/stderr" ||
  fail "inf: $(cat "$LP_TMP/stderr")"
printf 'Time (%%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n10.0,5,1e30,1,1,1,1,1,kern\n' >overflow.csv
expect_exit 3 "$LLMPROF" kernels overflow.csv
grep -q "overflow.csv:2:3: 'Instances' value '1e30' is not a count" "$LP_TMP/stderr" || fail "overflow: $(cat "$LP_TMP/stderr")"
printf 'Time (%%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n10.0,0x10,1,1,1,1,1,1,kern\n' >hex.csv
expect_exit 3 "$LLMPROF" kernels hex.csv
grep -q "hex.csv:2:2: 'Total Time' value '0x10' is not a finite decimal number" "$LP_TMP/stderr" || fail "hex: $(cat "$LP_TMP/stderr")"
sed '3s/"12.5"/"inf"/' "$F/ncu/synthetic_raw.csv" >infraw.csv
expect_exit 3 "$LLMPROF" kernels infraw.csv
grep -q "infraw.csv:3:15: 'gpu__time_duration.sum' value 'inf'" "$LP_TMP/stderr" || fail "inf raw: $(cat "$LP_TMP/stderr")"

# invalid UTF-8: every kernel keeps its kernel_name key, the bad bytes become U+FFFD
"$LLMPROF" kernels --format json "$R/badutf8_nsys.csv" >utf8.json || fail "badutf8 exited $?"
[ "$(grep -c '"kernel_name"' utf8.json)" = 11 ] || fail "kernel_name keys dropped: $(grep -c '"kernel_name"' utf8.json) of 11"
grep -q $'"kernel_name": "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd(attention' utf8.json || fail "no U+FFFD in $(head -c 600 utf8.json)"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' utf8.json 2>/dev/null || ! command -v python3 >/dev/null ||
  fail "not valid JSON"
"$LLMPROF" kernels --format csv "$R/badutf8_nsys.csv" >utf8.csv || fail "badutf8 csv exited $?"
grep -q $'\xef\xbf\xbd' utf8.csv || fail "csv not sanitized"
if grep -aq $'\xff' utf8.csv utf8.json; then fail "raw invalid bytes printed"; fi

# ncu CSV written with --log-file: the ==PROF== lines before the header are skipped
"$LLMPROF" kernels "$R/logfile_raw.csv" >log.md || fail "logfile exited $?: $(cat "$LP_TMP/stderr")"
"$LLMPROF" kernels "$F/ncu/synthetic_raw.csv" >plain.md || fail "plain exited $?"
diff -u plain.md log.md || fail "a --log-file CSV reads differently"

# start/end ranges count for --stage (ncu raw: the start/end column)
"$LLMPROF" kernels --stage prefill "$F/ncu/synthetic_raw.csv" >se.md || fail "start/end stage exited $?"
grep -q '^1 kernels\? shown of 1' se.md || fail "start/end range 'prefill' in the ncu raw page: $(cat se.md)"

"$LLMPROF" kernels --stage LLM@prefill "$R/startend_details.csv" >sed.md || fail "start/end stage (details) exited $?"
grep -q '^1 kernels\? shown of 1' sed.md || fail "start/end range 'prefill' in the ncu details page: $(cat sed.md)"

# an unknown --stage: a warning listing the ranges that exist, exit 3
expect_exit 3 "$LLMPROF" kernels --stage nosuch "$F/ncu/synthetic_raw.csv"
grep -q "warning: stage 'nosuch' matches no NVTX range in" "$LP_TMP/stderr" || fail "no warning: $(cat "$LP_TMP/stderr")"
grep -q "hint: ranges seen: LLM@decode_all, LLM@decode_step, outer:scope, LLM@prefill" "$LP_TMP/stderr" ||
  fail "ranges not listed: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels --stage nosuch "$F/trace/h200_cuda_demo"
grep -q "hint: ranges seen: " "$LP_TMP/stderr" || fail "trace: ranges not listed: $(cat "$LP_TMP/stderr")"

# a truncated trace: what could be read, a warning naming the damage, exit 3
mkdir -p cut && head -c 5000 "$F/trace/h200_cuda_demo/vm.1513.lptrace" >cut/vm.1513.lptrace
expect_exit 3 "$LLMPROF" kernels cut
grep -q "warning: 'cut/vm.1513.lptrace' is truncated at byte 4954 of 5000" "$LP_TMP/stderr" || fail "trace: $(cat "$LP_TMP/stderr")"
grep -q "^2 kernels shown of 2" "$LP_TMP/stdout" || fail "what could be read was not printed: $(cat "$LP_TMP/stdout")"
"$LLMPROF" kernels "$F/trace/h200_cuda_demo" >/dev/null || fail "the whole trace exited $?"

# nsys SQLite: a huge string id, a truncated file, a mangled name, a start/end range
# a raw page with no units row (or a result where it belongs), or without the duration column
for f in ncu_raw_units_row_dropped ncu_raw_units_row_is_a_data_row; do
  expect_exit 3 "$LLMPROF" kernels "$R/$f.csv"
  grep -q "^error: .*$f.csv:2: no units row under the header (row 2 is a result: ID '0')$" "$LP_TMP/stderr" ||
    fail "$f: $(cat "$LP_TMP/stderr")"
  [ -s "$LP_TMP/stdout" ] && fail "$f: a table was printed"
done
expect_exit 3 "$LLMPROF" kernels "$R/ncu_raw_header_cells_swapped.csv"
grep -q "ncu_raw_header_cells_swapped.csv:2:14: units row says 'Mbyte' for 'gpu__time_duration.sum', not a time" "$LP_TMP/stderr" ||
  fail "swapped header cells: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels "$R/ncu_raw_name_block_swapped.csv"
grep -q "ncu_raw_name_block_swapped.csv:3:7: 'Block Size' value 'void gemv_kernel<float, 4>(const float \*' is not a launch size" "$LP_TMP/stderr" ||
  fail "name/block swapped: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels "$R/nsys_kern_sum_cells_swapped.csv"
grep -q "nsys_kern_sum_cells_swapped.csv:2: 'Total Time' / 'Instances' = .* is outside 'Min' .. 'Max'" "$LP_TMP/stderr" ||
  fail "nsys cells swapped: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels "$R/ncu_raw_name_cc_swapped.csv"
grep -q "ncu_raw_name_cc_swapped.csv:3:7: 'CC' value 'void gemv_kernel<float, 4>(const float \*' is not a compute capability" "$LP_TMP/stderr" ||
  fail "name/CC swapped: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels "$R/ncu_details_cells_swapped.csv"
grep -q "ncu_details_cells_swapped.csv: result ID 0 ('k_embed(.*)') has no 'Duration' metric" "$LP_TMP/stderr" ||
  fail "details cells swapped: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels "$R/ncu_raw_duration_header_renamed.csv"
grep -q "ncu_raw_duration_header_renamed.csv:1: column 'gpu__time_duration.sum' missing" "$LP_TMP/stderr" ||
  fail "renamed duration: $(cat "$LP_TMP/stderr")"

if command -v sqlite3 >/dev/null 2>&1; then
  cp "$F/nsys/h200_llm.sqlite" bad.sqlite
  sqlite3 bad.sqlite "update CUPTI_ACTIVITY_KIND_KERNEL set demangledName=4000000000000000000 where rowid=(select min(rowid) from CUPTI_ACTIVITY_KIND_KERNEL)"
  expect_exit 3 "$LLMPROF" kernels bad.sqlite
  grep -q "kernel name id 4000000000000000000 is not in table 'StringIds'" "$LP_TMP/stderr" || fail "bad id: $(cat "$LP_TMP/stderr")"
  expect_exit 3 "$LLMPROF" kernels --stage decode_all bad.sqlite
  grep -q "kernel name id 4000000000000000000 is not in table 'StringIds'" "$LP_TMP/stderr" || fail "bad id (stage): $(cat "$LP_TMP/stderr")"

  head -c 300000 "$F/nsys/h200_llm.sqlite" >cut.sqlite
  expect_exit 3 "$LLMPROF" kernels cut.sqlite
  grep -q "'cut.sqlite' is truncated: 300000 bytes, its SQLite header says 413696 (a corrupt or incomplete nsys export)" \
    "$LP_TMP/stderr" || fail "truncated sqlite: $(cat "$LP_TMP/stderr")"

  sqlite3 syn.sqlite <"$F/nsys/synthetic.sql"
  m=_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalIiEEEEvNT_6ParamsE
  sqlite3 syn.sqlite "update StringIds set value='$m' where id=(select demangledName from CUPTI_ACTIVITY_KIND_KERNEL limit 1)"
  for stage in "" "--stage decode_all"; do
    # shellcheck disable=SC2086
    "$LLMPROF" kernels --format csv $stage syn.sqlite >mangled.csv || fail "mangled ($stage) exited $?"
    grep -q '^void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<int> >(cutlass::gemm::kernel::GemmUniversal<int>::Params),gemv_kernel,' mangled.csv ||
      fail "not demangled ($stage): $(cat mangled.csv)"
    if grep -q _ZN7cutlass mangled.csv; then fail "a mangled name left ($stage)"; fi
  done

  # a start/end range on another thread of the same process holds the launch at 5100
  sqlite3 syn.sqlite "insert into NVTX_EVENTS (start,end,eventType,text,globalTid,domainId) values (5050,5150,60,'span',1677721702,0)"
  "$LLMPROF" kernels --stage span syn.sqlite >span.md || fail "start/end stage on sqlite exited $?"
  grep -q '^1 kernels\? shown of 1' span.md || fail "start/end range 'span' in the sqlite export: $(cat span.md)"
fi
pass
