"""A program that only reports a model (tests/e2e/baseline.sh): it writes an llmprof_auto-style
account with a Hugging Face config (argv[1]: "llama", or "mla" for a shape the reference workload
cannot run) and the token counts, under LLMPROF_AUTO_DIR, as program.1.json (the shim's own
account of this process has its pid in the name and names no model)."""
import json
import os
import sys

cfg = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 256,
       "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
       "num_key_value_heads": 2, "vocab_size": 1000, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
       "max_position_embeddings": 2048, "hidden_act": "silu"}
if sys.argv[1] == "mla":
    cfg.update({"model_type": "deepseek_v2", "architectures": ["DeepseekV2ForCausalLM"],
                "kv_lora_rank": 512})
out = os.environ.get("LLMPROF_AUTO_DIR")
if out:
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "program.1.json"), "w") as f:
        json.dump({"schema_version": 1, "writer": "llmprof_auto", "pid": os.getpid(),
                   "model": {"class": cfg["architectures"][0], "hf_config": cfg, "dtype": "bf16",
                             "parameters": 1},
                   "tokens": {"batch": 1, "prompt_len": 16, "decode_steps": 3, "new_tokens": 4}}, f)
