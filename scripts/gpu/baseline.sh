#!/bin/bash
# baseline.sh: run.baseline=reference on a GPU machine (issue 22), with a prebuilt build/:
# examples/hf_generate.py (llama-3.2-1b shape, eager, bf16, random weights; prompt 512, 128 new
# tokens) under `llmprof run --mode light run.baseline=reference`, so the reference workload runs
# the shape the shim reported; then an MLA config (refused). The program/reference ratios, the
# program's self-check and the nested reference run's own self-check go to $OUT/summary.txt; the
# run folders' reports to $OUT/baseline.tgz.
set -u
OUT=${OUT:-/tmp/lp-baseline}
mkdir -p "$OUT"
L=$PWD/build/bin/llmprof
SRC=$PWD
W=/tmp/lp-baseline-w; rm -rf "$W"; mkdir -p "$W"
summary=$OUT/summary.txt; : >"$summary"
say() { echo "$*" | tee -a "$summary"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$summary"
start=$(date +%s)
(cd "$W" && "$L" run --mode light run.id=hf run.repeats=3 run.baseline=reference -- python3 "$SRC/examples/hf_generate.py" \
  --model llama-3.2-1b --prompt-len 512 --new-tokens 128 --iters 3 >"$W/hf.stdout" 2>"$W/hf.stderr")
say "== hf with baseline: rc=$? in $(( $(date +%s) - start ))s"
cat "$W/hf.stdout" | tee -a "$summary"
tail -5 "$W/hf.stderr" | tee -a "$summary"
d=$W/tmp/stage2/hf
python3 - "$d" <<'PY' | tee -a "$summary"
import json, sys
d = sys.argv[1]
ph = {p["name"]: p for p in json.load(open(d + "/phases.json"))["phases"]}
print("baseline phase:", ph["baseline"]["status"], ph["baseline"]["reason"])
s = json.load(open(d + "/summary.json"))
print("program self-check:", [(c["what"], c["llmprof"], c["workload"], c["diff"]) for c in s["self_check"]["checks"]])
print("baseline:", json.dumps(s.get("baseline"), indent=1))
b = json.load(open(d + "/baseline/summary.json"))
print("reference self-check:", [(c["what"], c["llmprof"], c["workload"], c["diff"]) for c in b["self_check"]["checks"]])
print("reference tokens:", b["tokens"])
print("reference perf:", [(p["stage"], p["mbu_latency"], p["mfu_latency"]) for p in b["perf"]])
PY
sed -n '/^## Against the reference/,/^## MFU/p' "$d/report.md" | tee -a "$summary"
# a shape the reference cannot run: refused with the reader's reason
cat >"$W/mla.json" <<'J'
{"model_type": "deepseek_v2", "architectures": ["DeepseekV2ForCausalLM"], "hidden_size": 1280, "intermediate_size": 6848,
 "moe_intermediate_size": 896, "num_hidden_layers": 2, "num_attention_heads": 10, "num_key_value_heads": 10,
 "vocab_size": 129280, "n_routed_experts": 64, "num_experts_per_tok": 6, "n_shared_experts": 2, "kv_lora_rank": 512,
 "q_lora_rank": null, "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "first_k_dense_replace": 1,
 "max_position_embeddings": 8192, "rms_norm_eps": 1e-6, "rope_theta": 10000, "hidden_act": "silu"}
J
(cd "$W" && "$L" run --mode light run.id=mla run.repeats=1 run.baseline=reference model.hf_config="$W/mla.json" -- \
  python3 "$SRC/examples/hf_generate.py" --model tiny --prompt-len 16 --new-tokens 4 --iters 1 >"$W/mla.stdout" 2>"$W/mla.stderr")
say "== mla: rc=$?"
grep -i "baseline\|reference" "$W/mla.stderr" "$W/mla.stdout" | tee -a "$summary"
rm -rf "$W"/tmp/stage2/*/trace "$W"/tmp/stage2/*/baseline/trace
tar czf "$OUT/baseline.tgz" -C "$W" tmp hf.stdout hf.stderr mla.stdout mla.stderr 2>/dev/null
