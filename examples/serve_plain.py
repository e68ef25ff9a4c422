#!/usr/bin/env python3
"""serve_plain.py: a small server-like loop with no NVTX and no llmprof in it, for stage hooks by
name (docs/nvtx.md "Stage hooks by name"). A fixed number of batch slots share one KV cache; the
loop admits requests into the slots, runs batched prefill and decode forwards of a random-weight
Hugging Face model (plain_common.py: no download), and every --mixed-every-th round admits half of
the slots with chunked prefill: ONE forward carries the new requests' prompt chunk (C tokens each)
and the other slots' decode token (1 real token, C - 1 masked pads), the way serving engines mix
prefill and decode. A slot's old context is masked out of the cache when a new request takes it; a
plain prefill round starts a fresh cache for all slots.

The engine's own methods are what llmprof's hooks name (the class lives in the main script: the
hooks say `__main__:`):

    llmprof run --mode light \\
      'stages.hooks=[__main__:Engine.warmup=warmup, __main__:Engine.forward_prefill=prefill@arg1.num_tokens, __main__:Engine.forward_decode=decode_step@arg1.num_tokens, __main__:Engine.forward_mixed=mixed@arg1.num_tokens]' \\
      -- python3 examples/serve_plain.py --model llama-3.2-1b

Each forward is timed with CUDA events recorded right before the call and right after it returns
(its kernels queued; no host sync inside), the same boundaries as the hooks' ranges; warm-up
forwards (inside Engine.warmup) are left out. The last stdout line is the self-check summary
(docs/metrics.md "Self-check"): prefill_ms, decode_ms_per_step and mixed_ms are means per call,
tokens_per_s is decode tokens over summed decode time; with --call-times also every call's ms
(call_ms) and each round's (round_ms: its calls summed; round_decode_ms: its decode calls;
round_kind: prefill or mixed, its first call).

Bench only (bench/tracer/serve_call.sh's turns): with LLMPROF_BENCH_TURN set the process syncs and
stops itself after every measured round (plain_common.step_turn), so that processes measured side
by side take turns round by round and their rounds can be paired; LLMPROF_BENCH_MAIN_CPU=N puts
the main thread on CPU N alone for the measured rounds (plain_common.bench_pin).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plain_common  # noqa: E402


class Batch(object):
    """One forward's inputs: ids (slots, tokens), the attention mask to append, and the real
    tokens it carries (pads left out): the hooks' payload."""

    def __init__(self, ids, mask_cols, num_tokens, fresh=None):
        self.ids = ids
        self.mask_cols = mask_cols
        self.num_tokens = num_tokens
        self.fresh = fresh          # slots whose old context is dropped (new requests)


class Engine(object):
    def __init__(self, model, torch, slots):
        self.model, self.torch, self.slots = model, torch, slots
        self.cache = None
        self.mask = None
        self.next_tok = None

    def _forward(self, batch):
        t = self.torch
        if batch.fresh is not None and self.mask is not None:
            self.mask[batch.fresh] = 0
        self.mask = batch.mask_cols if self.mask is None else t.cat([self.mask, batch.mask_cols], dim=1)
        out = self.model(input_ids=batch.ids, attention_mask=self.mask, past_key_values=self.cache, use_cache=True)
        self.cache = out.past_key_values
        self.next_tok = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)   # stays on the GPU: no sync

    def reset(self):
        self.cache = self.mask = self.next_tok = None

    def forward_prefill(self, batch):
        self._forward(batch)

    def forward_decode(self, batch):
        self._forward(batch)

    def forward_mixed(self, batch):
        self._forward(batch)

    def warmup(self, rounds):
        for _ in range(rounds):
            serve_round(self, self.args, None)
        self.reset()


def decode_batch(eng, torch):
    n = eng.slots
    return Batch(eng.next_tok, torch.ones((n, 1), dtype=torch.long, device="cuda"), n)


def serve_round(eng, args, times):
    """One round: admit every slot (prefill, or chunked prefill of half the slots mixed with the
    others' decode), then --decode-steps batched decode forwards."""
    torch = eng.torch
    n, c = eng.slots, args.chunk
    eng.round = getattr(eng, "round", 0) + 1
    mixed = eng.cache is not None and eng.round % args.mixed_every == 0
    if not mixed:
        eng.reset()   # every slot gets a new request: a fresh cache
        ids = torch.randint(0, eng.vocab, (n, args.prompt_len), device="cuda")
        b = Batch(ids, torch.ones((n, args.prompt_len), dtype=torch.long, device="cuda"), n * args.prompt_len)
        timed(eng.forward_prefill, b, times, "prefill", torch)
    else:
        half = n // 2
        ids = torch.randint(0, eng.vocab, (n, c), device="cuda")
        ids[half:, -1:] = eng.next_tok[half:]            # decoding slots: their token last
        cols = torch.ones((n, c), dtype=torch.long, device="cuda")
        cols[half:, :-1] = 0                              # ... after C - 1 masked pads
        b = Batch(ids, cols, half * c + (n - half), torch.arange(half, device="cuda"))
        timed(eng.forward_mixed, b, times, "mixed", torch)
    for _ in range(args.decode_steps):
        timed(eng.forward_decode, decode_batch(eng, torch), times, "decode", torch)


def timed(fn, batch, times, key, torch):
    if times is None:
        return fn(batch)
    ev = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
    ev[0].record()
    fn(batch)
    ev[1].record()
    times[key].append((ev, batch.num_tokens))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    plain_common.add_args(p)
    p.add_argument("--slots", type=int, default=8, help="batch slots (requests served together)")
    p.add_argument("--chunk", type=int, default=64, help="prompt tokens per chunk in mixed forwards")
    p.add_argument("--decode-steps", type=int, default=8, help="decode forwards per round")
    p.add_argument("--rounds", type=int, default=24, help="measured rounds")
    p.add_argument("--mixed-every", type=int, default=3, help="every N-th round admits with chunked prefill")
    p.add_argument("--call-times", action="store_true", help="the summary line also lists every call's ms (call_ms)")
    p.add_argument("--warmup-rounds", type=int, default=3)
    args = p.parse_args()
    if args.slots < 2 or args.chunk < 2 or args.decode_steps < 1 or args.rounds < 2 or args.mixed_every < 2:
        p.error("--slots >= 2, --chunk >= 2, --decode-steps >= 1, --rounds >= 2, --mixed-every >= 2")
    import torch
    import transformers
    plain_common.need_cuda(torch)
    model, cfg = plain_common.build_model(args, torch, transformers)
    torch.manual_seed(args.seed)
    eng = Engine(model, torch, args.slots)
    eng.vocab, eng.args = cfg.vocab_size, args
    times = {"prefill": [], "decode": [], "mixed": []}
    turns = bool(os.environ.get("LLMPROF_BENCH_TURN"))
    ends = []   # per round: how many calls of each kind had been made at its end
    with torch.inference_mode():
        eng.warmup(args.warmup_rounds)
        torch.cuda.synchronize()
        plain_common.bench_pin()  # bench only: the main thread on LLMPROF_BENCH_MAIN_CPU
        for _ in range(args.rounds):
            serve_round(eng, args, times)
            ends.append({k: len(v) for k, v in times.items()})
            if turns:
                plain_common.step_turn(torch.cuda.synchronize)
        torch.cuda.synchronize()
    ms = {k: [a.elapsed_time(b) for (a, b), _ in v] for k, v in times.items()}
    rounds, prev = [], {k: 0 for k in times}
    for e in ends:
        rounds.append({k: ms[k][prev[k]:e[k]] for k in times})
        prev = e
    dec_tokens = sum(t for _, t in times["decode"])
    summary = {"summary": True, "iters": args.rounds,
               "prefill_ms": sum(ms["prefill"]) / max(len(ms["prefill"]), 1),
               "decode_ms_per_step": sum(ms["decode"]) / max(len(ms["decode"]), 1),
               "mixed_ms": sum(ms["mixed"]) / max(len(ms["mixed"]), 1),
               "tokens_per_s": dec_tokens / (sum(ms["decode"]) / 1e3) if ms["decode"] else 0,
               "calls": {k: len(v) for k, v in ms.items()},
               **({"call_ms": ms, "round_ms": [sum(sum(v) for v in r.values()) for r in rounds],
                   "round_decode_ms": [sum(r["decode"]) for r in rounds],
                   "round_kind": ["mixed" if r["mixed"] else "prefill" for r in rounds]} if args.call_times else {}),
               "model": args.model_config or args.model, "slots": args.slots}
    print(json.dumps(summary), flush=True)


if __name__ == "__main__":
    main()
