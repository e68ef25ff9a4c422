#!/usr/bin/env bash
# check_includes.sh: every #include "x/..." between the folders of src/ must go down the layers
# of docs/architecture.md. Prints file:line of each include that goes up or sideways and exits 1;
# exits 0 when there is none. Run by CTest (layers_includes) on the source tree:
#
#   tests/layers/check_includes.sh [SRC_DIR]        # default: the src/ beside this script
#
# The allowed table is read from docs/architecture.md (its "| layer | may include |" table), so the
# page and the check cannot drift apart: a layer may include itself and the layers on its line
# (src/main.c counts as cmd/). include/llmprof/ (the public headers) is allowed everywhere; folders
# of src/ not in the table are an error (a new layer needs a line there).
set -u
src=${1:-$(cd "$(dirname "$0")/../../src" && pwd)}
doc=$(cd "$(dirname "$0")/../.." && pwd)/docs/architecture.md
declare -A allowed=()
while IFS='|' read -r _ layer incs _; do
	layer=${layer//[[:space:]]/}
	incs=${incs//,/ }
	incs=${incs//-/}
	allowed[$layer]=$(echo $incs)
done < <(awk '/^\| *layer *\| *may include *\|/ { on = 1; next }
	on && /^\|[-| ]+\|$/ { next }
	on && /^\|/ { print; next }
	on { exit }' "$doc")
if ((${#allowed[@]} == 0)); then
	echo "$doc: no '| layer | may include |' table"
	exit 1
fi
bad=0
checked=0
# src/main.c belongs to the CLI: it is checked as cmd/
for dir in "$src"/*/ "$src"/; do
	if [[ $dir == "$src"/ ]]; then layer=cmd; else layer=$(basename "$dir"); fi
	if [[ -z ${allowed[$layer]+x} ]]; then
		echo "src/$layer/: a folder that is not a layer of docs/architecture.md (add it to $0)"
		bad=1
		continue
	fi
	while IFS=: read -r file line inc; do
		[[ -n $file ]] || continue
		checked=$((checked + 1))
		target=${inc%%/*}
		[[ $target == "$layer" || $target == llmprof ]] && continue   # include/llmprof/: public
		ok=0
		for a in ${allowed[$layer]}; do
			[[ $a == "$target" ]] && ok=1
		done
		if ((!ok)); then
			echo "src/${file#"$src"/}:$line: $layer/ must not include \"$inc\" ($target/ is not below $layer/)"
			bad=1
		fi
	done < <(grep -HnoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[A-Za-z0-9_]+/[^"]+"' "$dir"*.[ch] 2>/dev/null |
		sed -E 's/^([^:]+):([0-9]+):.*"([^"]+)"$/\1:\2:\3/')
done
if ((checked == 0)); then
	echo "no #include \"x/...\" found under $src: wrong folder?"
	exit 1
fi
if ((bad)); then
	echo "layers: see docs/architecture.md for the allowed direction"
	exit 1
fi
echo "layers: $checked #include \"x/...\" lines of src/ checked, none goes up"
