#!/usr/bin/env bash
# check_printing.sh: only the CLI prints (docs/architecture.md "Printing"). Outside src/cmd/ and
# src/main.c no code of src/ writes to stdout or stderr (printf, puts, putchar, fprintf/fputs/
# fputc/fwrite/vfprintf to stdout or stderr, perror) and none includes core/log.h, the CLI's
# voice; core/log.c is that voice itself. Prints file:line of each offence and exits 1.
#
#   tests/layers/check_printing.sh [SRC_DIR]
set -u
src=${1:-$(cd "$(dirname "$0")/../../src" && pwd)}
bad=0
files=$(find "$src" -name '*.[ch]' ! -path "$src/cmd/*" ! -path "$src/main.c" ! -path "$src/core/log.c" | sort)
[[ -n $files ]] || { echo "no sources under $src: wrong folder?"; exit 1; }
# comments are not code: /* ... */ on one line and lines that continue a block comment are skipped
pat='(^|[^A-Za-z0-9_.>])(printf|vprintf|puts|putchar|perror)[[:space:]]*\(|(fprintf|vfprintf|fputs|fputc|putc|fwrite|fflush)[[:space:]]*\([^;]*(stdout|stderr)|#[[:space:]]*include[[:space:]]*"core/log\.h"'
while IFS= read -r hit; do
	[[ -n $hit ]] || continue
	file=${hit%%:*}; rest=${hit#*:}; line=${rest%%:*}; code=${rest#*:}
	stripped=$(sed -E 's#/\*.*\*/##g; s#^[[:space:]]*\*.*##; s#^[[:space:]]*/\*.*##' <<<"$code")
	grep -qE "$pat" <<<"$stripped" || continue
	echo "src/${file#"$src"/}:$line: prints or uses core/log.h outside src/cmd/: $(sed -E 's/^[[:space:]]+//' <<<"$code")"
	bad=1
done < <(grep -HnE "$pat" $files)
if ((bad)); then
	echo "printing: return data or an lp_err (or report through run/events.h); src/cmd/ prints"
	exit 1
fi
echo "printing: $(wc -w <<<"$files") files outside src/cmd/ checked, none prints"
