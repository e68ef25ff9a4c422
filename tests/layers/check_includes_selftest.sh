#!/usr/bin/env bash
# check_includes_selftest.sh: check_includes.sh and check_printing.sh must fail, naming
# file:line, on a copy of src/ with an include upwards / a print outside src/cmd/ planted, and
# pass on the tree as it is.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../src" && pwd)
tmp=${LP_TMP:-$(mktemp -d)}/layers_selftest
rm -rf "$tmp" && mkdir -p "$tmp" && cp -r "$src" "$tmp/src" || exit 1
"$here/check_includes.sh" "$tmp/src" >/dev/null || { echo "FAIL: the clean tree has an include upwards"; exit 1; }
"$here/check_printing.sh" "$tmp/src" >/dev/null || { echo "FAIL: the clean tree prints outside src/cmd/"; exit 1; }
# parse/ including collect/ (a layer beside it), at line 2 of csv.c
sed -i '1a #include "collect/rundir.h"' "$tmp/src/parse/csv.c"
out=$("$here/check_includes.sh" "$tmp/src"); rc=$?
if [[ $rc -ne 1 ]] || ! grep -q '^src/parse/csv.c:2: parse/ must not include "collect/rundir.h"' <<<"$out"; then
	echo "FAIL: an include upwards was not reported (rc $rc):"; echo "$out"; exit 1
fi
echo "ok: $out" | head -1
# analyze/ printing to stderr, at line 3 of analyze/welch.c (a comment that names fprintf is fine)
sed -i '1a /* not fprintf(stderr, ...) here */\nstatic void lp_noise(void) { fprintf(stderr, "x\\n"); }' "$tmp/src/analyze/welch.c"
out=$("$here/check_printing.sh" "$tmp/src"); rc=$?
if [[ $rc -ne 1 ]] || ! grep -q '^src/analyze/welch.c:3: prints' <<<"$out" || grep -q 'welch.c:2:' <<<"$out"; then
	echo "FAIL: a print outside src/cmd/ was not reported as welch.c:3 (rc $rc):"; echo "$out"; exit 1
fi
echo "ok: $out" | head -1
rm -rf "$tmp"
