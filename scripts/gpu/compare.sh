#!/bin/bash
# compare.sh: `llmprof diff` and the gap waterfall on a GPU machine (issues 14 and 19), with a
# prebuilt build/. Two repeats of the same llmprof-llm run (diff: within noise), the cuBLAS GEMV
# against the fused default (diff: the decode speed-up and the kernels behind it), and the gap
# waterfall of llmprof-llm (deep) and examples/hf_generate.py (light and deep). Run folders (no
# binary reports) go to $OUT as tarballs with the diff outputs; a summary is printed last.
set -u
OUT=${OUT:-/tmp/lp-compare}
mkdir -p "$OUT"
L=$PWD/build/bin/llmprof
LLM=$PWD/build/bin/llmprof-llm
SRC=$PWD
W=/tmp/lp-compare-w; rm -rf "$W"; mkdir -p "$W"
SHAPE="model=llama-3.2-1b inputs.batch=1 inputs.prompt_len=512 inputs.new_tokens=128"
summary=$OUT/summary.txt; : >"$summary"
say() { echo "$*" | tee -a "$summary"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$summary"

run() {  # run NAME args...
  local name=$1; shift
  local start=$(date +%s)
  (cd "$W" && "$L" run run.id="$name" "$@" >"$W/$name.stdout" 2>"$W/$name.stderr")
  say "== $name: rc=$? in $(( $(date +%s) - start ))s"
  local d=$W/tmp/stage2/$name
  [ -d "$d" ] || { tail -5 "$W/$name.stderr" | tee -a "$summary"; return; }
  cp "$W/$name.stdout" "$W/$name.stderr" "$d/" 2>/dev/null
  python3 - "$d" <<'PY' | tee -a "$summary"
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
t = s["tokens"]
print(f"  ttft {t['ttft_ms']} ms, decode {t['decode_tokens_per_s']} tok/s, {t['decode_step_ms']} ms/step,"
      f" self-check failed {s['self_check']['failed']}")
for w in s.get("waterfall", []):
    if not w["valid"]:
        print(f"  waterfall {w['stage']}: n/a ({w['why']})"); continue
    tot = sum(i["ms"] for i in w["items"])
    print(f"  waterfall {w['stage']} per {w['unit']}: latency {w['latency_ms']:.4f} ms, items sum {tot:.4f} ms"
          f" ({100*(tot-w['latency_ms'])/w['latency_ms']:+.6f}%), floor {w['floor_ms']:.4f} ms, ncu floors {w['used_ncu']}")
    for i in w["items"]:
        src = f" [{i.get('floor_source')} floor {i.get('floor_ms', 0):.4f}]" if i["kind"] == "kernel" else ""
        print(f"    {i['kind']:<8} {i['ms']:+9.4f} ms  {i['label'][:70]}{src}")
    for g in w["largest_gaps"]:
        print(f"    gap {g['ms']:.4f} ms x{g['count']:.2f}  {g['where'][:90]}")
PY
  (cd "$W/tmp/stage2" && tar czf "$OUT/$name.tgz" --exclude='*.ncu-rep' --exclude='*.nsys-rep' --exclude='*.qdstrm' \
    --exclude='*.sqlite' "$name")
}
diff_runs() {  # diff_runs NAME A B [--fail-if ...]
  local name=$1 a=$2 b=$3; shift 3
  (cd "$W/tmp/stage2" && "$L" diff "$a" "$b" "$@" >"$OUT/$name.md" 2>"$OUT/$name.stderr"; echo "rc=$?" >>"$OUT/$name.stderr")
  say "== diff $name ($a -> $b): $(tail -1 "$OUT/$name.stderr")"
  sed -n '6p' "$OUT/$name.md" | tee -a "$summary"
  grep -E "^\| (time to first token|decode tokens/s|decode ms per step|decode_all: latency per iteration) " "$OUT/$name.md" | tee -a "$summary"
  grep -A8 "^## Kernels" "$OUT/$name.md" | tail -6 | cut -c1-200 | tee -a "$summary"
}

# 1. llmprof-llm twice (the same run), then with the cuBLAS GEMV instead of the fused kernels
run llm_a --mode light $SHAPE run.repeats=5 -- "$LLM" --model llama-3.2-1b --device cuda --prompt-len 512 --new-tokens 128 --iters 5 --warmup 1
run llm_b --mode light $SHAPE run.repeats=5 -- "$LLM" --model llama-3.2-1b --device cuda --prompt-len 512 --new-tokens 128 --iters 5 --warmup 1
run llm_cublas --mode light $SHAPE run.repeats=5 -- "$LLM" --model llama-3.2-1b --device cuda --prompt-len 512 --new-tokens 128 --iters 5 --warmup 1 --gemv cublas
diff_runs same llm_a llm_b --fail-if 'decode.latency > +3%' --fail-if 'ttft > +5%'
diff_runs cublas llm_a llm_cublas --fail-if 'decode.latency > +3%'
# 2. the gap waterfall: llmprof-llm deep (ncu floors), hf_generate.py light and deep
run llm_deep --mode deep $SHAPE run.repeats=3
run hf_light --mode light $SHAPE run.repeats=3 -- python3 "$SRC/examples/hf_generate.py" --model llama-3.2-1b \
  --prompt-len 512 --new-tokens 128 --iters 3 --warmup 1
run hf_deep --mode deep $SHAPE run.repeats=2 -- python3 "$SRC/examples/hf_generate.py" --model llama-3.2-1b \
  --prompt-len 512 --new-tokens 128 --iters 2 --warmup 1
ls -la "$OUT" | tee -a "$summary"
