#!/bin/bash
# stages.sh: stage truth on a GPU machine (issue 11), with a prebuilt build/. For each program,
# `llmprof run` and the program's own CUDA-event timings (the self-check in summary.json) side by
# side: TTFT, decode latency, ms/step and tokens/s from llmprof vs the program, and the per-step
# percentiles, bound verdicts and overlap. Programs: llmprof-llm with the CUDA graph on (deep, nsys
# on) and off; examples/hf_generate.py (eager PyTorch); examples/graph_decode.py, a hand-written
# PyTorch decoder replaying a CUDA graph (and eagerly). Small runs of the same are kept as fixtures.
# Run folders (without the binary reports) go to $OUT as tarballs; a summary is printed last.
set -u
OUT=${OUT:-/tmp/lp-stages}
mkdir -p "$OUT"
L=$PWD/build/bin/llmprof
LLM=$PWD/build/bin/llmprof-llm
SRC=$PWD
W=/tmp/lp-stages-w; rm -rf "$W"; mkdir -p "$W"
NSYS_LIBS=${LP_NSYS_LIBS:-$PWD/.carry/nsyslibs}
SHAPE="model=llama-3.2-1b inputs.batch=1 inputs.prompt_len=512 inputs.new_tokens=128"
summary=$OUT/summary.txt; : >"$summary"
say() { echo "$*" | tee -a "$summary"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader | tee -a "$summary"

run() {  # run NAME args...: one llmprof run in $W/NAME, packed to $OUT/NAME.tgz
  local name=$1; shift
  local start=$(date +%s)
  (cd "$W" && "$L" run run.id="$name" "$@" >"$W/$name.stdout" 2>"$W/$name.stderr")
  local rc=$?
  say "== $name: rc=$rc in $(( $(date +%s) - start ))s"
  local d=$W/tmp/stage2/$name
  [ -d "$d" ] || { tail -5 "$W/$name.stderr" | tee -a "$summary"; return; }
  cp "$W/$name.stdout" "$W/$name.stderr" "$d/" 2>/dev/null
  python3 - "$d" <<'PY' | tee -a "$summary"
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
for p in s["phases"]:
    if p["status"] != "ok":
        print(f"  phase {p['name']} {p['status']} {p['reason'][:120]}")
for x in s["stages"]:
    l, h, g = x["latency_ms"], x["host_ms"], x["gpu_busy_ms"]
    sl = x.get("step_latency_ms")
    steps = f" steps p50 {sl['p50']:.4f} p90 {sl['p90']:.4f} p99 {sl['p99']:.4f} max {sl['max']:.4f}" if sl else ""
    print(f"  {x['name']:<10} latency {l['mean']:9.3f}±{l['std']:.3f} host {h['mean']:9.3f} busy {g['mean'] if g else 0:9.3f}"
          f" overlap {x['overlap'] or 0:.2f} {x['bound']}{steps}")
t = s["tokens"]
print(f"  ttft {t['ttft_ms']} ms, decode {t['decode_tokens_per_s']} tok/s, {t['decode_step_ms']} ms/step")
sc = s["self_check"]
for c in sc["checks"]:
    print(f"  check {c['what']:<36} llmprof {c['llmprof']:10.4f} own {c['workload']:10.4f} diff {100*c['diff']:+.3f}%")
print(f"  self-check failed: {sc['failed']}")
k = s["kernels"]
print(f"  kernels total {k['total_ms']:.3f} ms busy {k['busy_ms']:.3f} ms")
for a in s["advice"]["takeaways"]:
    if a["rule"].startswith(("clocks", "overlap", "self-check", "stage-dom")):
        print(f"  [{a['rule']}] {a['text'][:220]}")
PY
  (cd "$W/tmp/stage2" && tar czf "$OUT/$name.tgz" --exclude='*.ncu-rep' --exclude='*.nsys-rep' --exclude='*.qdstrm' \
    --exclude='*.sqlite' "$name")
}

# 1. llmprof-llm, CUDA graph on (the issue's command), deep with nsys for the independent clock
run llm_graph --mode deep $SHAPE run.repeats=3 profiling.nsys.enable=true tools.nsys_lib_dir="$NSYS_LIBS"
d=$W/tmp/stage2/llm_graph
csv=$(ls "$d"/nsys/*nvtx_gpu_proj_sum*.csv 2>/dev/null | head -1)
[ -n "$csv" ] && { say "  nsys nvtx_gpu_proj_sum:"; grep -E 'prefill|decode_all|decode_step' "$csv" | head -6 | tee -a "$summary"; }
# 2. llmprof-llm, CUDA graph off (eager launches)
run llm_eager --mode light $SHAPE run.repeats=3 -- "$LLM" --model llama-3.2-1b --device cuda --prompt-len 512 \
  --new-tokens 128 --iters 3 --warmup 1 --cuda-graph off
# 3. eager PyTorch (transformers)
run hf --mode light $SHAPE run.repeats=3 -- python3 "$SRC/examples/hf_generate.py" --model llama-3.2-1b \
  --prompt-len 512 --new-tokens 128 --iters 3 --warmup 1
# 4. hand-written PyTorch decoder replaying a CUDA graph, plain torch.cuda.nvtx ranges
run torch_graph --mode light $SHAPE run.repeats=3 -- python3 "$SRC/examples/graph_decode.py" --prompt-len 512 \
  --new-tokens 128 --iters 3 --warmup 1
run torch_eager --mode light $SHAPE run.repeats=3 -- python3 "$SRC/examples/graph_decode.py" --prompt-len 512 \
  --new-tokens 128 --iters 3 --warmup 1 --graph off
# 5. small runs kept as CPU-test fixtures (trace + workload.stdout)
run fx_llm_tiny_graph --mode light model=tiny run.device=cuda inputs.prompt_len=32 inputs.new_tokens=8 run.repeats=2
run fx_torch_graph --mode light inputs.batch=1 inputs.prompt_len=32 inputs.new_tokens=8 -- \
  python3 "$SRC/examples/graph_decode.py" --layers 2 --hidden 256 --heads 4 --kv-heads 2 --ffn 512 --vocab 1000 \
  --prompt-len 32 --new-tokens 8 --iters 2 --warmup 1
ls -la "$OUT" | tee -a "$summary"
