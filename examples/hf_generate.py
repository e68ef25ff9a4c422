#!/usr/bin/env python3
"""hf_generate.py: greedy generation with a Hugging Face transformers model, instrumented with the
same NVTX stage structure as llmprof's reference workload (llmprof-llm), so that llmprof can profile
it after `--` and its numbers can be cross-checked against llmprof-llm's:

    llmprof run -- python examples/hf_generate.py --model llama-3.2-1b --prompt-len 512 --new-tokens 128

The model is built from a config with random weights (no download): a preset (--model tiny,
llama-3.2-1b, qwen2.5-1.5b, llama-3.1-8b: the shapes of conf/model/llm/) or any config.json
(--model-config PATH). Prefill and the decode loop (KV cache, greedy argmax, no host sync per step)
are written out by hand. Ranges, in the NVTX domain LLM (python/llmprof_nvtx.py):
`warmup` around warm-up iterations; per iteration `prefill` (payload: batch x prompt tokens), then
`decode_all` with one `decode_step` per token (payload: step index); with --nvtx-ops on, module
ranges from forward hooks: embed, layer (payload: index) > attn_norm, attention, mlp_norm, mlp;
final_norm, lm_head, and sample. --emit-nvtx adds PyTorch's own operator ranges
(torch.autograd.profiler.emit_nvtx, default domain).

--kineto runs the measured iterations (not the warm-up) under torch.profiler instead, for
bench/tracer/overhead.sh's side-by-side overhead numbers.

Output: one JSON line per measured iteration (prefill_ms, decode_ms, tokens, tokens_per_s, timed
with torch.cuda.Event on the GPU) and a summary line, like llmprof-llm.

bench/tracer/cost_call.sh's turns: with LLMPROF_BENCH_TURN the process stops after every
generation (plain_common.bench_turn); with LLMPROF_BENCH_TURN_STEPS=K too, also after every K-th
decode step of the measured iterations (after the step's end mark, the GPU synchronized first:
outside step_ms), and the lines carry turn_steps. decode_ms (and decode_ms_per_step, tokens_per_s)
then include the stops: the cost analysis uses step_ms only (--step-times).
"""

import argparse
import contextlib
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llmprof_nvtx import llm_range, push, pop, available as nvtx_available  # noqa: E402
from plain_common import StepCounters, bench_pin, bench_prewarm, bench_turn, step_turn, turn_steps  # noqa: E402  (bench/tracer/)

PRESETS = {
    "tiny": dict(model_type="llama", vocab_size=512, hidden_size=128, intermediate_size=384,
                 num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                 max_position_embeddings=1024, rope_theta=10000.0, rms_norm_eps=1e-5,
                 tie_word_embeddings=True),
    "llama-3.2-1b": dict(model_type="llama", vocab_size=128256, hidden_size=2048,
                         intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                         num_key_value_heads=8, head_dim=64, max_position_embeddings=131072,
                         rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=True),
    "qwen2.5-1.5b": dict(model_type="qwen2", vocab_size=151936, hidden_size=1536,
                         intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                         num_key_value_heads=2, max_position_embeddings=32768,
                         rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True),
    "llama-3.1-8b": dict(model_type="llama", vocab_size=128256, hidden_size=4096,
                         intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32,
                         num_key_value_heads=8, head_dim=128, max_position_embeddings=131072,
                         rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=False),
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="tiny", choices=sorted(PRESETS), help="preset shape")
    p.add_argument("--model-config", help="a config.json (overrides --model)")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prompt-len", type=int, default=64)
    p.add_argument("--new-tokens", type=int, default=32)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--nvtx-ops", default="on", choices=["on", "off"])
    p.add_argument("--emit-nvtx", action="store_true",
                   help="also wrap the run in torch.autograd.profiler.emit_nvtx()")
    p.add_argument("--attn", default="sdpa", help="attn_implementation (sdpa, eager, ...)")
    p.add_argument("--step-times", action="store_true",
                   help="also time every decode step with CUDA events around its decode_step "
                        "range (step_ms in the iteration lines: the tracer's per-step latencies "
                        "are checked against them; with LLMPROF_BENCH_TURN_STEPS the only "
                        "decode times without the turns' stops)")
    p.add_argument("--kineto", metavar="TRACE", nargs="?", const="",
                   help="run the measured iterations under PyTorch's profiler (CPU + CUDA "
                        "activities), for comparing profilers' overhead; TRACE: also write its "
                        "Chrome trace there")
    a = p.parse_args(argv)
    for name in ("batch", "prompt_len", "iters"):
        if getattr(a, name) < 1:
            p.error("--%s must be at least 1" % name.replace("_", "-"))
    if a.new_tokens < 0 or a.warmup < 0:
        p.error("--new-tokens and --warmup must be >= 0")
    return a


def build_model(args, torch):
    import transformers
    if args.model_config:
        cfg = transformers.AutoConfig.from_pretrained(args.model_config)
        cfg = getattr(cfg, "text_config", None) or getattr(cfg, "language_config", None) or cfg
        name = os.path.basename(os.path.dirname(os.path.abspath(args.model_config))) or "hf-config"
    else:
        fields = dict(PRESETS[args.model])
        cfg = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
        name = args.model
    cfg.use_cache = True
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    torch.manual_seed(args.seed)
    with torch.device(args.device):
        try:
            model = transformers.AutoModelForCausalLM.from_config(
                cfg, dtype=dtype, attn_implementation=args.attn)
        except TypeError:  # transformers 4.x
            model = transformers.AutoModelForCausalLM.from_config(
                cfg, torch_dtype=dtype, attn_implementation=args.attn)
    return model.to(dtype).eval(), cfg, name


def add_op_ranges(model):
    """Forward hooks that push/pop op ranges around the modules of a Llama-style model."""
    handles = []

    def ranged(module, name, payload=None):
        def pre(*_):
            push(name, payload)

        def post(*_):
            pop()
        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post))

    base = getattr(model, "model", model)
    if hasattr(base, "embed_tokens"):
        ranged(base.embed_tokens, "embed")
    for i, layer in enumerate(getattr(base, "layers", [])):
        ranged(layer, "layer", i)
        for attr, name in (("input_layernorm", "attn_norm"), ("self_attn", "attention"),
                           ("post_attention_layernorm", "mlp_norm"), ("mlp", "mlp")):
            if hasattr(layer, attr):
                ranged(getattr(layer, attr), name)
    if hasattr(base, "norm"):
        ranged(base.norm, "final_norm")
    if hasattr(model, "lm_head"):
        ranged(model.lm_head, "lm_head")
    return handles


class Timer:
    """CUDA events on the GPU, the monotonic clock on the CPU."""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device == "cuda"

    def mark(self):
        if self.cuda:
            e = self.torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.monotonic()

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def ms(self, a, b):
        if self.cuda:
            b.synchronize()
            return a.elapsed_time(b)
        return (b - a) * 1e3


def iteration(model, prompt, args, torch, timer, ops, turn_k=0, counters=None):
    """Prefill, then args.new_tokens decode steps; returns (prefill_ms, decode_ms, tokens).
    turn_k > 0: a step-level turn (plain_common.step_turn) after every turn_k-th step but the
    last (the generation's own turn follows it), after the step's end mark. counters: a
    plain_common.StepCounters read at each step's two marks (iteration.step_counts)."""
    batch = prompt.shape[0]
    tokens = torch.empty((batch, args.new_tokens + 1), dtype=torch.long, device=prompt.device)
    kw = {"use_cache": True}
    t0 = timer.mark()
    with llm_range("prefill", payload=batch * prompt.shape[1]):
        try:
            out = model(input_ids=prompt, logits_to_keep=1, **kw)
        except TypeError:
            out = model(input_ids=prompt, **kw)
        with (llm_range("sample") if ops else contextlib.nullcontext()):
            nxt = out.logits[:, -1, :].argmax(dim=-1)
            tokens[:, 0] = nxt
    past = out.past_key_values
    t1 = timer.mark()
    steps, counts = [], []
    with llm_range("decode_all", payload=args.new_tokens):  # the steps planned (docs/nvtx.md)
        for s in range(args.new_tokens):
            c0 = counters.read() if counters else None
            e0 = timer.mark() if args.step_times else None
            with llm_range("decode_step", payload=s):
                out = model(input_ids=nxt[:, None], past_key_values=past, **kw)
                past = out.past_key_values
                with (llm_range("sample") if ops else contextlib.nullcontext()):
                    nxt = out.logits[:, -1, :].argmax(dim=-1)
                    tokens[:, s + 1] = nxt
            if args.step_times:
                steps.append((e0, timer.mark()))
            if counters:
                counts.append((c0, counters.read()))
            if turn_k and (s + 1) % turn_k == 0 and s + 1 < args.new_tokens:
                step_turn(timer.sync)
    t2 = timer.mark()
    iteration.step_ms = [timer.ms(a, b) for a, b in steps]
    iteration.step_counts = StepCounters.deltas(counts)
    return timer.ms(t0, t1), timer.ms(t1, t2), tokens[0].tolist()


def prewarm(words, model, prompt, args, torch, timer, ops):
    """Bench only: LLMPROF_BENCH_PREWARM's gen and cublas (plain_common.bench_prewarm), before the
    first stage range. gen: one iteration with the stage ranges (prefill, decode_all,
    decode_step) left out, the op ranges kept; cublas: one product with the smallest weight matrix."""
    global llm_range
    if "cublas" in words:
        w = min((p for p in model.parameters() if p.dim() == 2), key=lambda p: p.numel())
        x = torch.ones((prompt.shape[1], w.shape[1]), dtype=w.dtype, device=w.device)
        torch.nn.functional.linear(x, w).sum().item()
    if "gen" in words:
        stage = llm_range
        llm_range = lambda name, payload=None: contextlib.nullcontext()  # noqa: E731
        try:
            iteration(model, prompt, args, torch, timer, ops)
        finally:
            llm_range = stage
        timer.sync()


def report_iteration(i, result, args, sums, first, turn_k=0):
    """Prints iteration i's JSON line; adds its times to sums, its first tokens to first."""
    pm, dm, toks = result
    sums[0] += pm
    sums[1] += dm
    if not first:
        first.extend(toks[:16])
    dtok = args.batch * args.new_tokens
    line = {
        "iter": i, "prefill_ms": round(pm, 4), "decode_ms": round(dm, 4),
        "tokens": dtok, "tokens_per_s": dtok / dm * 1e3 if dm > 0 else 0.0,
        "prefill_tokens_per_s": args.batch * args.prompt_len / pm * 1e3 if pm > 0 else 0.0,
        "decode_ms_per_step": dm / args.new_tokens if args.new_tokens else 0.0,
    }
    if args.step_times:
        line["step_ms"] = [round(x, 5) for x in getattr(iteration, "step_ms", [])]
        line.update(getattr(iteration, "step_counts", None) or {})
    if turn_k:
        line["turn_steps"] = turn_k
    print(json.dumps(line), flush=True)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.stderr.write("error: --device cuda but torch sees no CUDA device\n")
        return 4
    model, cfg, name = build_model(args, torch)
    if args.prompt_len + args.new_tokens > getattr(cfg, "max_position_embeddings", 1 << 30):
        sys.stderr.write("error: prompt length + new tokens is over the model's positions\n")
        return 2
    ops = args.nvtx_ops == "on"
    if ops:
        add_op_ranges(model)
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    prompt = torch.randint(0, cfg.vocab_size, (args.batch, args.prompt_len), generator=gen)
    prompt = prompt.to(args.device)
    timer = Timer(torch, args.device)
    emit = torch.autograd.profiler.emit_nvtx() if args.emit_nvtx else contextlib.nullcontext()
    sums = [0.0, 0.0]
    first = []
    turn_k = turn_steps()  # step-level turns in the measured iterations only (0: none)
    counters = StepCounters()  # LLMPROF_BENCH_COUNTERS=1 (measured iterations only)
    pre = bench_prewarm()  # bench only: LLMPROF_BENCH_PREWARM
    with torch.inference_mode(), emit:
        prewarm(pre, model, prompt, args, torch, timer, ops)
        if args.warmup:
            with llm_range("warmup", payload=args.warmup):
                for _ in range(args.warmup):
                    iteration(model, prompt, args, torch, timer, ops)
                    bench_turn()
        prof = contextlib.nullcontext()
        if args.kineto is not None:
            acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
            prof = torch.profiler.profile(activities=acts)
        if "empty" in pre and args.device == "cuda":
            torch.cuda.empty_cache()
        bench_pin()  # LLMPROF_BENCH_MAIN_CPU (bench/tracer/step_call.sh): the measured iterations
        with prof:
            for i in range(args.iters):
                report_iteration(i, iteration(model, prompt, args, torch, timer, ops, turn_k,
                                              counters if counters.on else None), args, sums, first, turn_k)
                if i + 1 < args.iters:
                    bench_turn()
        if args.kineto:
            prof.export_chrome_trace(args.kineto)
    pm, dm = sums[0] / args.iters, sums[1] / args.iters
    params = sum(p.numel() for p in model.parameters())
    print(json.dumps({
        "summary": True, "model": name, "family": getattr(cfg, "model_type", "?"),
        "device": args.device,
        "device_name": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
        "batch": args.batch, "prompt_len": args.prompt_len, "new_tokens": args.new_tokens,
        "warmup": args.warmup, "iters": args.iters, "seed": args.seed,
        "nvtx": nvtx_available(), "nvtx_ops": ops, "emit_nvtx": args.emit_nvtx,
        "kineto": args.kineto is not None,
        "params": params, "prefill_ms": pm, "decode_ms": dm,
        "decode_ms_per_step": dm / args.new_tokens if args.new_tokens else 0.0,
        "tokens_per_s": args.batch * args.new_tokens / dm * 1e3 if dm > 0 else 0.0,
        "prefill_tokens_per_s": args.batch * args.prompt_len / pm * 1e3 if pm > 0 else 0.0,
        "torch": torch.__version__, "transformers": __import__("transformers").__version__,
        "first_tokens": first,
    }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
