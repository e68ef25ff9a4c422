#!/bin/bash
# run-all.sh AREA[:SECONDS]...: runs scripts/gpu/AREA.sh for each area on the GPU machine, from the
# repo root, with a prebuilt build/ (carried, not rebuilt). Each area writes into its own folder,
# which is packed into $OUT/AREA.tgz (the device tool brings back at most 8 files). Summaries last.
set -u
cd "$(dirname "$0")/../.."
REAL_OUT=${OUT:-/tmp/lp-gpu-out}
mkdir -p "$REAL_OUT" /tmp/lp-gpu
export LD_LIBRARY_PATH="$PWD/.carry/libs:${LD_LIBRARY_PATH:-}"
export LP_NSYS_LIBS="$PWD/.carry/nsyslibs"
export PYTHONUNBUFFERED=1
for spec in "$@"; do
  area=${spec%%:*}; secs=${spec#*:}; [ "$secs" = "$spec" ] && secs=300
  dir=/tmp/lp-gpu/$area; rm -rf "$dir"; mkdir -p "$dir"
  start=$(date +%s)
  OUT=$dir timeout -k 10 "$secs" bash "scripts/gpu/$area.sh" >"$dir/log.txt" 2>&1
  rc=$?
  echo "$area: rc=$rc in $(( $(date +%s) - start ))s" >>/tmp/lp-gpu/summary.txt
  tar czf "$REAL_OUT/$area.tgz" -C /tmp/lp-gpu "$area"
done
for spec in "$@"; do
  area=${spec%%:*}
  echo "===== $area (last lines of log) ====="
  tail -n 25 "/tmp/lp-gpu/$area/log.txt"
done
echo "===== summary ====="
cat /tmp/lp-gpu/summary.txt
