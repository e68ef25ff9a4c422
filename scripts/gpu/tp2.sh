#!/bin/bash
# tp2.sh: issue 18 on a machine with 2 GPUs (nvidia-h200-x2): a tensor-parallel decode with NCCL
# all-reduces (examples/tp_decode.py, 2 ranks under torchrun) profiled by `llmprof run` with nsys
# on. Run from a tree with a prebuilt build/ (bin, lib) and the nsys importer's libs in
# $LP_NSYS_LIBS (default .carry-nsyslibs):
#   OUT=/tmp/out bash scripts/gpu/tp2.sh [STEP...]
# Steps (default: light fixture):
#   light    llama-3.2-1b shape, 16 layers, prompt 512, 64 decode steps, 3 iterations, --mode light
#   fixture  the same widths with 2 layers, 16 decode steps, 2 iterations (small traces: the CPU
#            tests' fixture tests/fixtures/trace/h200x2_tp)
#   deep     --mode deep on the fixture shape: ncu profiles rank 0 only (profiling.ncu.rank=0), a
#            120 s ncu budget, the presets' defaults (NCCL_P2P_DISABLE=1 in the ncu phase, 60 s stall watch)
#   auto     the fixture shape with the tracer's defaults (trace.sample=auto), no nsys: its 24 ms
#            generations stay exact (auto's gen=, run 37)
#   autogen0 the same with trace.sample=auto,gen=0: sampled, the ranks' tracing modes merged
#   lightauto light's full shape with the defaults (sampled: 0.8 s generations), no nsys
#   deepp2p  the same as deep without nsys, with NCCL's P2P left on in the ncu phase
#            (profiling.ncu.nccl_p2p_off=false), a 60 s budget and a 20 s stall watch: does a replay stall?
#   gloo     issue 17's single-GPU ncu rank gate: 2 gloo ranks on GPU 0 under --mode deep (gloo1:
#            the same with profiling.ncu.rank=1)
#   ncuprobe ncu by hand on rank 0 (LD_PRELOAD gate), NCCL kernels excluded by a kernel-name regex
# Each step: $OUT/tp_<step>.tgz (run folder without the bulky binaries, the programs' own JSON,
# nsys's per-process kernel counts from its sqlite export) and lines in $OUT/progress.txt.
set -u
OUT=${OUT:-/tmp/lp-tp2}
mkdir -p "$OUT"
SRC=$PWD
L=$SRC/build/bin/llmprof
W=/tmp/lp-tp2-w; rm -rf "$W"; mkdir -p "$W"
P=$OUT/progress.txt
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
export LC_ALL=C
NSYSLIBS=${LP_NSYS_LIBS:-$SRC/.carry-nsyslibs}
TORCHRUN=$(command -v torchrun || true)
[ -n "$TORCHRUN" ] || TORCHRUN="python3 -m torch.distributed.run"
NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | sort | tail -1)
NSYS=$(command -v nsys || ls -d /opt/nvidia/nsight-systems*/*/bin/nsys /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | sort | tail -1)
note() { echo "$*" | tee -a "$P"; }
note "== tp2.sh $(date -u +%FT%TZ) steps: ${*:-light fixture}"
note "gpu: $(nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tr '\n' ';')"
note "ncu: $NCU ($("$NCU" --version 2>&1 | tail -1)); nsys: $NSYS ($(LD_LIBRARY_PATH=$NSYSLIBS "$NSYS" --version 2>&1 | tail -1))"
note "torch: $(python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.nccl.version())' 2>&1)"
nvidia-smi topo -m >"$OUT/topo.txt" 2>&1

TP="$SRC/examples/tp_decode.py"
FULL="--model llama-3.2-1b --prompt-len 512 --new-tokens 64 --iters 3 --warmup 1"
SMALL="--model llama-3.2-1b --layers 2 --prompt-len 512 --new-tokens 16 --iters 2 --warmup 1"
NSYSON="trace.sample=off profiling.nsys.enable=true tools.nsys=$NSYS tools.nsys_lib_dir=$NSYSLIBS"

nsys_counts() {  # nsys_counts SQLITE: kernels and NCCL kernels per process, per device
  python3 - "$1" <<'PY'
import sqlite3, sys, json
c = sqlite3.connect(sys.argv[1])
q = """select (k.globalPid >> 24) & 16777215 as pid, k.deviceId, count(*),
       sum(case when s.value like 'nccl%' then 1 else 0 end)
       from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s on s.id = k.shortName group by 1, 2 order by 1"""
rows = c.execute(q).fetchall()
print(json.dumps([{"pid": r[0], "device": r[1], "kernels": r[2], "nccl_kernels": r[3]} for r in rows]))
PY
}

ncu_pids() {  # ncu_pids RUN_DIR: profiled results per process in the ncu raw CSVs
  python3 - "$1" <<'PY'
import csv, glob, sys, collections
c = collections.Counter()
for f in glob.glob(sys.argv[1] + "/ncu/**/*_raw.csv", recursive=True):
    rows = [r for r in csv.reader(open(f, errors="replace")) if r]
    hdr = next((i for i, r in enumerate(rows) if "Process ID" in r), None)
    if hdr is None:
        continue
    col = rows[hdr].index("Process ID")
    for r in rows[hdr + 2:]:
        if len(r) > col and r[col].strip().isdigit():
            c[int(r[col])] += 1
print(dict(c))
PY
}

pack() {  # pack NAME RUN_DIR WORK_DIR: the run folder (sans big binaries) + own JSON -> $OUT
  local name=$1 rd=$2 wd=$3 dst=$W/pack/$1
  mkdir -p "$dst"
  [ -d "$rd/ncu" ] && note "$name ncu results per pid: $(ncu_pids "$rd" 2>&1)"
  [ -f "$rd/logs/ncu_gate.log" ] && note "$name gate: $(sort "$rd/logs/ncu_gate.log" | uniq -c | tr '\n' ';')"
  find "$rd/logs" -name 'ncu_gate.log' -exec sh -c 'for f; do echo "gate log $f:"; cat "$f"; done' _ {} + >>"$P" 2>/dev/null
  [ -d "$rd" ] && (cd "$rd" && tar cf - --exclude='*.nsys-rep' --exclude='*.qdstrm' --exclude='*.ncu-rep' \
    --exclude='run.sqlite' .) | (cd "$dst" && tar xf -)
  [ -f "$rd/nsys/run.sqlite" ] && nsys_counts "$rd/nsys/run.sqlite" >"$dst/nsys_counts.json" 2>&1
  [ -f "$rd/nsys/run.sqlite" ] && note "$name nsys counts: $(cat "$dst/nsys_counts.json")"
  cp -a "$wd/own" "$dst/own" 2>/dev/null
  cp "$wd"/llmprof.std* "$dst/" 2>/dev/null
  if [ "${KEEP_TRACE:-1}" = 0 ]; then find "$dst" -name '*.lptrace' -delete; fi
  (cd "$W/pack" && tar czf "$OUT/tp_$name.tgz" "$name")
  note "$name packed: $(du -sh "$OUT/tp_$name.tgz" | cut -f1)"
}

phases() {  # phases NAME RUN_DIR: the phase statuses into the progress file
  [ -f "$2/phases.json" ] && note "$1 phases: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([(p.get('name'),p.get('status'),p.get('reason')) for p in d['phases']])" "$2/phases.json" 2>&1 | head -c 1500)"
}

run_llmprof() {  # run_llmprof NAME TIMEOUT MODE ARGS -- overrides...
  local name=$1 to=$2 mode=$3 args=$4; shift 4
  local d=$W/$name; mkdir -p "$d"
  local t0=$(date +%s)
  (cd "$d" && timeout "$to" "$L" run --mode "$mode" run.id="$name" run.timeout_s=$((to - 10)) "$@" -- \
    $TORCHRUN --nproc-per-node 2 "$TP" $args --own-dir "$d/own" >"$d/llmprof.stdout" 2>"$d/llmprof.stderr")
  local rc=$?
  note "$name: llmprof run rc=$rc in $(( $(date +%s) - t0 )) s"
  tail -5 "$d/llmprof.stderr" | sed "s/^/$name stderr: /" >>"$P"
  local rd; rd=$(find "$d" -name summary.json -printf '%h\n' | head -1)
  [ -n "$rd" ] || rd=$(find "$d" -maxdepth 4 -type d -name "$name" | head -1)
  phases "$name" "$rd"
  python3 - "$d/own" <<'PY' >>"$P" 2>&1
import glob, json, sys
for f in sorted(glob.glob(sys.argv[1] + "/tp.*.json")):
    r = json.load(open(f))
    its = r["iterations"]
    print("own %s: rank %d pid %d collectives %d prefill_ms %s step_ms(mean) %s" % (
        f.split("/")[-1], r["rank"], r["pid"], r["collectives_total"],
        [round(i["prefill_ms"], 3) for i in its],
        [round(sum(i["step_ms"]) / max(len(i["step_ms"]), 1), 4) for i in its]))
PY
  [ -f "$rd/report.md" ] && awk '/^## Ranks/{on=1} on{print; n++} n>70{exit}' "$rd/report.md" >>"$P"
  [ -f "$rd/report.md" ] && awk '/^## Tracing mode/{on=1; print; next} on && /^## /{exit} on' "$rd/report.md" >>"$P"
  grep -rh "stages: auto" "$rd/logs" "$rd/trace" 2>/dev/null | sort | uniq -c | head -8 >>"$P"
  pack "$name" "$rd" "$d"
}

ncuprobe() {  # ncu by hand on rank 0 with the gate: does the regex exclude NCCL, does it finish?
  local d=$W/ncuprobe; mkdir -p "$d"
  local gate=$SRC/build/lib/libllmprof_ncu_gate.so re=${1:-'regex:^(?!nccl)'}
  local t0=$(date +%s)
  note "ncuprobe regex: $re"
  (cd "$d" && LLMPROF_NCU_RANK=0 LLMPROF_NCU_GATE_LOG=$d/gate.log LD_PRELOAD=$gate timeout 80 "$NCU" \
    --target-processes all --kernel-name-base function --kernel-name "$re" -c 6 \
    --metrics gpu__time_duration.sum -o probe -f \
    $TORCHRUN --nproc-per-node 2 "$TP" --model llama-3.2-1b --layers 2 --prompt-len 64 --new-tokens 4 \
    --iters 1 --warmup 0 --own-dir "$d/own" >"$d/ncu.log" 2>&1)
  note "ncuprobe: rc=$? in $(( $(date +%s) - t0 )) s"
  grep -E '==PROF==|==ERROR==|==WARNING==' "$d/ncu.log" | head -20 >>"$P"
  cat "$d/gate.log" >>"$P" 2>/dev/null
  [ -f "$d/probe.ncu-rep" ] && "$NCU" -i "$d/probe.ncu-rep" --csv --page raw --print-units base \
    --metrics gpu__time_duration.sum >"$d/probe_raw.csv" 2>&1 && cut -c1-200 "$d/probe_raw.csv" | head -12 >>"$P"
  mkdir -p "$W/pack"; cp -a "$d" "$W/pack/ncuprobe"; rm -f "$W/pack/ncuprobe/probe.ncu-rep"
  (cd "$W/pack" && tar czf "$OUT/tp_ncuprobe.tgz" ncuprobe)
}

for step in ${*:-light fixture}; do
  case $step in
    light)   KEEP_TRACE=0 run_llmprof light ${LIGHT_TIMEOUT:-200} light "$FULL" $NSYSON ;;
    fixture) run_llmprof fixture 120 light "$SMALL" $NSYSON ;;
    auto)    run_llmprof auto 120 light "$SMALL" ;;
    autogen0) run_llmprof autogen0 120 light "$SMALL" trace.sample=auto,gen=0 ;;
    lightauto) run_llmprof lightauto ${LIGHT_TIMEOUT:-200} light "$FULL" ;;
    deep)    run_llmprof deep 260 deep "$SMALL" $NSYSON profiling.ncu.rank=0 profiling.ncu.budget_s=120 ;;
    deepp2p) run_llmprof deepp2p 150 deep "$SMALL" trace.sample=off profiling.ncu.rank=0 profiling.ncu.budget_s=60 \
               profiling.ncu.nccl_p2p_off=false profiling.ncu.stall_s=20 ;;
    gloo|gloo1)
      nr=0; [ "$step" = gloo1 ] && nr=1
      d=$W/$step; mkdir -p "$d"; t0=$(date +%s)
      (cd "$d" && timeout 120 "$L" run --mode deep run.id=$step run.timeout_s=110 trace.sample=off \
        profiling.ncu.budget_s=30 profiling.ncu.rank=$nr run.stage=prefill -- $TORCHRUN --nproc-per-node 2 \
        "$SRC/tests/gpu_progs/ranks/ranks_gloo.py" "$d/own" >"$d/llmprof.stdout" 2>"$d/llmprof.stderr")
      note "$step: llmprof run rc=$? in $(( $(date +%s) - t0 )) s (profiling.ncu.rank=$nr)"; tail -5 "$d/llmprof.stderr" >>"$P"
      rd=$(find "$d" -name summary.json -printf '%h\n' | head -1); phases $step "$rd"
      cat "$d"/own/*.json >>"$P" 2>/dev/null; echo >>"$P"
      KEEP_TRACE=0 pack $step "$rd" "$d" ;;
    ncuprobe) ncuprobe
      grep -qi 'regex\|invalid' "$W/ncuprobe/ncu.log" && ! [ -f "$W/ncuprobe/probe.ncu-rep" ] && \
        { rm -rf "$W/ncuprobe" "$W/pack/ncuprobe"; ncuprobe 'regex:^([^n]|n[^c]|nc[^c]|ncc[^l])'; } ;;
  esac
done
note "== done $(date -u +%FT%TZ)"
