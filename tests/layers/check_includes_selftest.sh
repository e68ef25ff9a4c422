#!/usr/bin/env bash
# check_includes_selftest.sh: check_includes.sh must fail, naming file:line, on an include that
# goes up (a copy of src/ with one added), and pass on the tree as it is.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../src" && pwd)
tmp=${LP_TMP:-$(mktemp -d)}/layers_selftest
rm -rf "$tmp" && mkdir -p "$tmp" && cp -r "$src" "$tmp/src" || exit 1
"$here/check_includes.sh" "$tmp/src" >/dev/null || { echo "FAIL: the clean tree does not pass"; exit 1; }
# parse/ including collect/ (a layer beside it), at line 2 of csv.c
sed -i '1a #include "collect/rundir.h"' "$tmp/src/parse/csv.c"
out=$("$here/check_includes.sh" "$tmp/src"); rc=$?
if [[ $rc -ne 1 ]] || ! grep -q '^src/parse/csv.c:2: parse/ must not include "collect/rundir.h"' <<<"$out"; then
	echo "FAIL: an include upwards was not reported (rc $rc):"; echo "$out"; exit 1
fi
echo "ok: $out" | head -1
rm -rf "$tmp"
