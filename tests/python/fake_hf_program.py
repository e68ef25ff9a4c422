#!/usr/bin/env python3
"""fake_hf_program.py: a program written the way Hugging Face users write them, against the fakes
in tests/python/fakes (no torch here), for python/llmprof_auto's tests.

    PYTHONPATH=python/llmprof_auto/site:tests/python/fakes python3 fake_hf_program.py MODE [--record]

MODE: generate (model.generate() three times, batch 2, prompt 16, 5 new tokens), loop (a
hand-written KV-cache loop calling the model directly), ranges (the same loop inside
default-domain torch.cuda.nvtx ranges prefill / decode / decode_step: the shim must stay out).
--record prints, as the last line, the ranges llmprof_auto pushed ({"ranges": [...]}) instead of
pushing them. Every mode prints the docs/metrics.md self-check summary line from its own clock.
"""
import json
import sys
import time

import torch
from torch.cuda import nvtx
from transformers.generation.utils import DynamicCache, GenerationMixin
from transformers.modeling_utils import PreTrainedModel

RECORD = "--record" in sys.argv
records = []
if RECORD:
    import llmprof_auto
    assert llmprof_auto.installed(), "the sitecustomize did not start llmprof_auto"
    llmprof_auto._state["push"] = lambda name, payload=None: records.append(("push", name, payload))
    llmprof_auto._state["pop"] = lambda: records.append(("pop",))


class Config(object):
    def to_dict(self):
        return {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 512,
                "hidden_size": 128, "intermediate_size": 384, "num_hidden_layers": 2,
                "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
                "max_position_embeddings": 1024, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
                "tie_word_embeddings": True, "torch_dtype": torch.bfloat16}


class FakeLlamaForCausalLM(PreTrainedModel, GenerationMixin):
    def __init__(self):
        PreTrainedModel.__init__(self)
        self.config = Config()
        self._dtype = torch.bfloat16
        self._params = [torch.Tensor(512, 128), torch.Tensor(1000)]
        self.post_init()

    def forward(self, input_ids=None, past_key_values=None, use_cache=True, **_k):
        n = input_ids.shape[1]
        time.sleep(0.004 if n > 1 else 0.002)
        if past_key_values is not None:
            past_key_values.n += n
        return torch.Tensor(input_ids.shape[0], n, 512)


def main():
    mode = next((a for a in sys.argv[1:] if not a.startswith("--")), "generate")
    model = FakeLlamaForCausalLM()
    batch, prompt, new = 2, 16, 5
    pre, dec = [], []
    for _ in range(3):
        ids = torch.Tensor(batch, prompt)
        if mode == "generate":
            t0 = time.monotonic()
            model.generate(input_ids=ids, max_new_tokens=new)
            pre.append(None)
            dec.append((time.monotonic() - t0) * 1e3)
            continue
        cache = DynamicCache()
        wrap = mode == "ranges"
        t0 = time.monotonic()
        if wrap:
            nvtx.range_push("prefill")
        model(input_ids=ids, past_key_values=cache, use_cache=True)
        if wrap:
            nvtx.range_pop()
        t1 = time.monotonic()
        if wrap:
            nvtx.range_push("decode")
        for i in range(new - 1):
            if wrap:
                nvtx.range_push("decode_step")
            model(input_ids=torch.Tensor(batch, 1), past_key_values=cache, use_cache=True)
            if wrap:
                nvtx.range_pop()
        if wrap:
            nvtx.range_pop()
        t2 = time.monotonic()
        pre.append((t1 - t0) * 1e3)
        dec.append((t2 - t1) * 1e3)
    summary = {"summary": True, "iters": 3}
    if pre[0] is not None:
        summary["prefill_ms"] = sum(pre[1:]) / 2
        summary["decode_ms"] = sum(dec[1:]) / 2
        summary["decode_ms_per_step"] = summary["decode_ms"] / (new - 1)
    print(json.dumps(summary), flush=True)
    if mode == "loop":
        time.sleep(0.2)  # the program's work after its last step (saving, reporting) before exit
    if RECORD:
        import llmprof_auto
        llmprof_auto.tracker().close()
        print(json.dumps({"ranges": records}), flush=True)


if __name__ == "__main__":
    main()
