#!/bin/bash
# python/llmprof_auto's own tests (tests/python/test_llmprof_auto.py, standard library unittest):
# the tracker's prefill / decode_step / decode_all rules for generate() and hand-written loops,
# reading shapes and caches without a GPU sync, the account file, the sitecustomize chaining a
# user's sitecustomize, the off switch, no eager imports, op ranges. Skipped only without python3.
set -u
. "$(dirname "$0")/lib.bash"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
export PYTHONDONTWRITEBYTECODE=1
cd "$LP_SRC/tests/python" || fail "no tests/python"
python3 -W error::ResourceWarning -m unittest -v test_llmprof_auto >"$LP_TMP/unittest.log" 2>&1 ||
  fail "python3 -m unittest test_llmprof_auto failed: $(tail -n 40 "$LP_TMP/unittest.log")"
grep -q "^OK" "$LP_TMP/unittest.log" || fail "unittest did not say OK: $(tail -n 5 "$LP_TMP/unittest.log")"
