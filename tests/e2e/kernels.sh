#!/bin/bash
# `llmprof kernels` on every kind of SOURCE (synthetic fixtures), against golden outputs, and
# the exit statuses for bad input (3) and bad usage (2).
set -u
. "$(dirname "$0")/lib.bash"
F="$LP_SRC/tests/fixtures"
G="$F/golden"

cp "$F/ncu/synthetic_raw.csv" raw.csv
"$LLMPROF" kernels raw.csv >out.md || fail "kernels raw.csv exited $?"
diff -u "$G/kernels_ncu_raw.md" out.md || fail "markdown differs from the golden output"
(cd "$LP_SRC" && "$LLMPROF" kernels --format json tests/fixtures/ncu/synthetic_raw.csv) >out.json || fail "json exited $?"
diff -u "$G/kernels_ncu_raw.json" out.json || fail "json differs from the golden output"
"$LLMPROF" kernels --format csv "$F/nsys/summary_cuda_gpu_kern_sum.csv" >out.csv || fail "csv exited $?"
diff -u "$G/kernels_nsys_sum.csv" out.csv || fail "csv differs from the golden output"
"$LLMPROF" kernels --top 1 "$F/ncu/synthetic_details.csv" >top.md || fail "details exited $?"
grep -q '^1 kernels shown of 2' top.md || fail "--top 1 on the details page: $(cat top.md)"

# an nsys-like SQLite export, built from SQL (sqlite3 CLI or Python's sqlite3)
if command -v sqlite3 >/dev/null 2>&1; then
  sqlite3 run.sqlite <"$F/nsys/synthetic.sql" || fail "sqlite3 failed"
elif command -v python3 >/dev/null 2>&1; then
  python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(open(sys.argv[2]).read()); c.commit()' \
    run.sqlite "$F/nsys/synthetic.sql" || fail "python3 sqlite3 failed"
fi
if [ -f run.sqlite ]; then
  "$LLMPROF" kernels --stage LLM@decode_all run.sqlite >sq.md || fail "kernels run.sqlite exited $?"
  diff -u <(sed 1,2d "$G/kernels_nsys_sqlite_decode.md" | sed '$d') <(sed 1,2d sq.md | sed '$d') || fail "sqlite table differs"
  # a run folder: nsys/run.sqlite inside
  mkdir -p run1/nsys && cp run.sqlite run1/nsys/run.sqlite
  "$LLMPROF" kernels --format json run1 >run.json || fail "kernels on a run folder exited $?"
  grep -q '"source_kind": "nsys-sqlite"' run.json || fail "run folder not read through nsys/run.sqlite"
fi

# bad input: exit 3 with one line naming the file
expect_exit 3 "$LLMPROF" kernels "$F/ncu/truncated_quote_raw.csv"
grep -q "truncated_quote_raw.csv:6: end of file inside a quoted field" "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels "$F/ncu/truncated_row_raw.csv"
expect_exit 3 "$LLMPROF" kernels "$F/nsys/summary_nvtx_sum.csv"
printf 'hello\n' >notes.txt
expect_exit 3 "$LLMPROF" kernels notes.txt
grep -q "notes.txt': not an ncu raw/details page" "$LP_TMP/stderr" || fail "bad message: $(cat "$LP_TMP/stderr")"
expect_exit 3 "$LLMPROF" kernels does-not-exist.csv
mkdir -p emptydir
expect_exit 3 "$LLMPROF" kernels emptydir
# usage errors: exit 2
expect_exit 2 "$LLMPROF" kernels
expect_exit 2 "$LLMPROF" kernels --format xml raw.csv
pass
