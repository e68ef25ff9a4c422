#!/usr/bin/env bash
# check_containers.sh: arrays grow and tables hash through src/core/ only (docs/architecture.md
# "Containers": LP_ARRAY_* / LP_VEC / lp_reallocarray in core/vec.h, struct lp_map in core/map.h).
# Outside src/core/, no C or CUDA host code of src/ and workload/ calls realloc, doubles a
# capacity by hand ("cap * 2 : 64", "cap *= 2"), carries a hash constant (FNV, the golden ratio)
# or steps a linear probe ("(j + 1) & (cap - 1)"). inject/ is not checked: the tracer links no
# lpcore (docs/tracer.md) and keeps its own small tables. A hit that is not a container is listed
# in ALLOW below with the reason; an ALLOW entry that matches nothing fails too, so the list
# stays true. PENDING names files (globs) whose conversion their owner has not landed yet; they
# are reported, not failed, and their line goes when the file is converted. Prints file:line of
# each offence and exits 1.
#
#   tests/layers/check_containers.sh [ROOT]     (ROOT holds src/ and workload/)
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}

# "path|extended regex matched against the line|why it is fine"
ALLOW=(
	"src/report/figures.c|16777619u|a colour chosen from a name's FNV-1a hash (same name, same colour), no table"
	"src/report/figures.c|2166136261u|the same colour hash's seed"
	"workload/rng.h|0x9E3779B97F4A7C15ull|the reference model's counter-based random numbers (SplitMix64), no table"
	"src/analyze/sampling.c|0x9e3779b97f4a7c15ull|the sampled tracer's block positions (SplitMix64's finalizer, trace_format.h), no table"
)
# "path glob|owner, what is left"
PENDING=(
)

files=$(find "$root/src" "$root/workload" \( -name '*.[ch]' -o -name '*.cu' -o -name '*.cuh' \) \
	! -path "$root/src/core/*" 2>/dev/null | sort)
[[ -n $files ]] || { echo "no sources under $root/src: wrong folder?"; exit 1; }
pat='(^|[^A-Za-z0-9_])realloc[[:space:]]*\('
pat+='|\*[[:space:]]*2[[:space:]]*:[[:space:]]*[0-9]+'
pat+='|cap[A-Za-z_]*[[:space:]]*(\*|<<)=[[:space:]]*[12]([^0-9]|$)'
pat+='|1099511628211|1469598103934665603|16777619|2166136261|0x9e3779b97f4a7c15'
pat+='|\+[[:space:]]*1\)[[:space:]]*&[^;]*(cap|mask)'
bad=0
used=()
declare -A pending_hits=()
while IFS= read -r hit; do
	[[ -n $hit ]] || continue
	file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}; code=${rest#*:}
	rel=${file#"$root"/}
	# comments are not code: /* ... */ on one line and lines that continue a block comment
	stripped=$(sed -E 's#/\*.*\*/##g; s#//.*##; s#^[[:space:]]*\*.*##; s#^[[:space:]]*/\*.*##' <<<"$code")
	grep -qiE "$pat" <<<"$stripped" || continue
	ok=0
	for i in "${!ALLOW[@]}"; do
		IFS='|' read -r apath are _ <<<"${ALLOW[$i]}"
		if [[ $rel == "$apath" ]] && grep -qE "$are" <<<"$stripped"; then
			ok=1
			used[$i]=1
		fi
	done
	((ok)) && continue
	for pend in "${PENDING[@]}"; do
		# shellcheck disable=SC2053  # the path is a glob
		if [[ $rel == ${pend%%|*} ]]; then
			ok=1
			pending_hits[${pend%%|*}]=$((${pending_hits[${pend%%|*}]:-0} + 1))
		fi
	done
	((ok)) && continue
	echo "$rel:$line: a hand-written growth loop or hash table: $(sed -E 's/^[[:space:]]+//' <<<"$code")"
	bad=1
done < <(grep -HniE "$pat" $files)
for i in "${!ALLOW[@]}"; do
	if [[ -z ${used[$i]:-} ]]; then
		echo "ALLOW entry matches nothing (remove it): ${ALLOW[$i]}"
		bad=1
	fi
done
for pend in "${PENDING[@]}"; do
	echo "pending: ${pend%%|*} (${pend#*|}): ${pending_hits[${pend%%|*}]:-0} hits"
done
if ((bad)); then
	echo "containers: grow arrays with LP_ARRAY_PUSH/LP_ARRAY_RESERVE/LP_VEC (core/vec.h) and index with"
	echo "struct lp_map (core/map.h); a hit that is no container goes into ALLOW with its reason"
	exit 1
fi
echo "containers: $(wc -w <<<"$files") files outside src/core/ checked, ${#ALLOW[@]} allowlist entries, ${#PENDING[@]} pending"
