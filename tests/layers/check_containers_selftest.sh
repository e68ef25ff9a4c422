#!/usr/bin/env bash
# check_containers_selftest.sh: check_containers.sh must pass on the tree as it is and fail,
# naming file:line, on a copy with a hand-written growth loop or a private hash table planted, and
# on an allowlist entry that no longer matches anything.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=${LP_TMP:-$(mktemp -d)}/containers_selftest
rm -rf "$tmp" && mkdir -p "$tmp" && cp -r "$root/src" "$root/workload" "$tmp/" || exit 1
out=$("$here/check_containers.sh" "$tmp") || { echo "FAIL: the clean tree has a hand-written container:"; echo "$out"; exit 1; }
# a realloc doubling loop at lines 2-3 of parse/csv.c (a comment naming realloc( is fine)
sed -i '1a /* not realloc(p, n) here */\nstatic size_t lp_grow_cap(size_t cap) { return cap ? cap * 2 : 64; }\nstatic void *lp_grow(void *p, size_t n) { return realloc(p, n); }' \
	"$tmp/src/parse/csv.c"
out=$("$here/check_containers.sh" "$tmp"); rc=$?
if [[ $rc -ne 1 ]] || ! grep -q '^src/parse/csv.c:3: a hand-written growth loop' <<<"$out" ||
		! grep -q '^src/parse/csv.c:4: ' <<<"$out" || grep -q 'csv.c:2:' <<<"$out"; then
	echo "FAIL: a growth loop was not reported as csv.c:3 and csv.c:4 (rc $rc):"; echo "$out"; exit 1
fi
echo "ok: $out" | head -1
cp "$root/src/parse/csv.c" "$tmp/src/parse/csv.c"
# an FNV hash with a linear probe in workload/ host code
printf '%s\n' 'static unsigned long lp_h(const char *s) { unsigned long h = 14695981039346656037UL;' \
	'for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211UL; return h; }' \
	'static unsigned long lp_next(unsigned long j, unsigned long cap) { return (j + 1) & (cap - 1); }' \
	>>"$tmp/workload/engine.c"
out=$("$here/check_containers.sh" "$tmp"); rc=$?
if [[ $rc -ne 1 ]] || [[ $(grep -c '^workload/engine.c:' <<<"$out") -ne 3 ]]; then
	echo "FAIL: a hash table in workload/engine.c was not reported on its 3 lines (rc $rc):"; echo "$out"; exit 1
fi
echo "ok: $(grep -m1 '^workload/engine.c:' <<<"$out")"
cp "$root/workload/engine.c" "$tmp/workload/engine.c"
# an allowed hit gone: its ALLOW entry must be named
sed -i 's/2166136261u/0x811c9dc5u/' "$tmp/src/report/figures.c"
out=$("$here/check_containers.sh" "$tmp"); rc=$?
if [[ $rc -ne 1 ]] || ! grep -q '^ALLOW entry matches nothing.*src/report/figures.c|2166136261u' <<<"$out"; then
	echo "FAIL: a stale ALLOW entry was not reported (rc $rc):"; echo "$out"; exit 1
fi
echo "ok: $(grep -m1 '^ALLOW' <<<"$out")"
rm -rf "$tmp"
