#!/usr/bin/env python3
"""tp_decode.py: a tensor-parallel decode over N GPUs with NCCL (Megatron-style), for profiling
multi-rank inference with llmprof (issue 18):

    llmprof run -- torchrun --nproc-per-node 2 examples/tp_decode.py --own-dir OWN

Random bf16 weights of a Llama shape (default llama-3.2-1b; no download), split over the ranks:
column-parallel QKV and gate/up projections (each rank holds heads / N query heads, kv_heads / N
KV heads and intermediate / N MLP columns), row-parallel O and down projections, each followed by
an all_reduce of the hidden state (2 per layer); the embedding is replicated, the LM head is split
over the vocabulary and the greedy token is picked by an all_gather of every rank's local
(max logit, index). A KV cache per rank; per iteration a prefill of --prompt-len tokens, then
--new-tokens decode steps, one token each.

Stages are marked with llmprof's NVTX contract (python/llmprof_nvtx.py, domain LLM): `warmup`
around the warm-up iterations, per iteration `prefill` (payload: batch x prompt tokens) and
`decode_all` holding one `decode_step` per token (payload: step index). The host synchronizes at
the end of every stage (as generate()'s stopping check does), so a stage's CUDA-event time and the
latency a profiler measures (range start to the end of its last GPU work) are the same quantity.
The events are recorded just inside the ranges (after the push, before the synchronize and pop):
outside them they would also time the ranges' own Python calls (~25 us each side, measured).
--nvtx off leaves the ranges out.

Each rank times its own stages with CUDA events (prefill, every decode step, the whole decode)
and writes them with its counts (NCCL collectives issued, per iteration and in all) to
OWN/tp.<rank>.<pid>.json; rank 0 prints a summary line. Keep NVLink multicast off when profiling
(NCCL_NVLS_ENABLE=0; llmprof run sets it for the workload).
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from llmprof_nvtx import llm_range, available as nvtx_available  # noqa: E402

SHAPES = {
    "tiny": dict(vocab=512, hidden=128, inter=384, layers=2, heads=4, kv_heads=2, head_dim=32,
                 theta=10000.0, eps=1e-5),
    "llama-3.2-1b": dict(vocab=128256, hidden=2048, inter=8192, layers=16, heads=32, kv_heads=8,
                         head_dim=64, theta=500000.0, eps=1e-5),
    "llama-3.1-8b": dict(vocab=128256, hidden=4096, inter=14336, layers=32, heads=32, kv_heads=8,
                         head_dim=128, theta=500000.0, eps=1e-5),
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="llama-3.2-1b", choices=sorted(SHAPES))
    p.add_argument("--layers", type=int, default=None,
                   help="keep the model's widths but only this many layers (small traces)")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prompt-len", type=int, default=512)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--nvtx", default="on", choices=["on", "off"])
    p.add_argument("--backend", default="nccl", help="torch.distributed backend (nccl; gloo runs "
                   "the collectives on the CPU)")
    p.add_argument("--own-dir", default=None, help="write this rank's timings there")
    a = p.parse_args(argv)
    if a.batch < 1 or a.prompt_len < 1 or a.new_tokens < 0 or a.iters < 1 or a.warmup < 0:
        p.error("batch, prompt-len, iters >= 1; new-tokens, warmup >= 0")
    if a.layers is not None and a.layers < 1:
        p.error("--layers must be >= 1")
    return a


class TP:
    """The rank's shard of the model and its collectives (counted)."""

    def __init__(self, torch, dist, shape, world, rank, dev, seed):
        self.torch, self.dist = torch, dist
        self.world, self.rank, self.dev = world, rank, dev
        s = shape
        for k in ("heads", "kv_heads", "inter", "vocab"):
            if s[k] % world:
                raise SystemExit("error: %s=%d is not divisible by the world size %d" % (k, s[k], world))
        self.s = s
        self.h, self.hd = s["hidden"], s["head_dim"]
        self.nh, self.nkv = s["heads"] // world, s["kv_heads"] // world
        self.ni = s["inter"] // world
        self.nv = s["vocab"] // world
        self.eps = s["eps"]
        self.collectives = 0
        g = torch.Generator(device=dev).manual_seed(seed + rank)
        bf = torch.bfloat16

        def w(*shape_):
            return (torch.randn(*shape_, generator=g, device=dev, dtype=torch.float32) * 0.02).to(bf)

        self.embed = (torch.randn(s["vocab"], self.h, device=dev, dtype=torch.float32,
                                  generator=torch.Generator(device=dev).manual_seed(seed)) * 0.02).to(bf)
        self.layers = []
        q, kv = self.nh * self.hd, self.nkv * self.hd
        for _ in range(s["layers"]):
            self.layers.append(dict(
                ln1=torch.ones(self.h, device=dev, dtype=bf),
                qkv=w(q + 2 * kv, self.h),           # column-parallel
                o=w(self.h, q),                      # row-parallel
                ln2=torch.ones(self.h, device=dev, dtype=bf),
                gate_up=w(2 * self.ni, self.h),      # column-parallel
                down=w(self.h, self.ni),             # row-parallel
            ))
        self.norm = torch.ones(self.h, device=dev, dtype=bf)
        self.lm_head = w(self.nv, self.h)            # vocabulary-parallel
        inv = 1.0 / (s["theta"] ** (torch.arange(0, self.hd, 2, device=dev, dtype=torch.float32) / self.hd))
        self.inv_freq = inv

    def all_reduce(self, x):
        self.dist.all_reduce(x)
        self.collectives += 1
        return x

    def rms(self, x, w):
        F = self.torch.nn.functional
        if hasattr(F, "rms_norm"):
            return F.rms_norm(x, (self.h,), w, self.eps)
        t = self.torch
        v = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * t.rsqrt(v + self.eps)).to(x.dtype) * w

    def rope_tables(self, pos):
        """cos, sin [T, hd] for positions pos [T] (rotate-half form), once per forward."""
        t = self.torch
        f = t.outer(pos.float(), self.inv_freq)          # [T, hd/2]
        emb = t.cat((f, f), dim=-1)
        return emb.cos().to(t.bfloat16), emb.sin().to(t.bfloat16)

    def rope(self, x, cs):
        """x [B, heads, T, hd]."""
        t = self.torch
        cos, sin = cs
        x1, x2 = x[..., : self.hd // 2], x[..., self.hd // 2:]
        return x * cos + t.cat((-x2, x1), dim=-1) * sin

    def new_cache(self, batch, length):
        t = self.torch
        shp = (batch, self.nkv, length, self.hd)
        return [(t.zeros(shp, device=self.dev, dtype=t.bfloat16),
                 t.zeros(shp, device=self.dev, dtype=t.bfloat16)) for _ in self.layers]

    def forward(self, ids, start, cache):
        """ids [B, T] at positions start..start+T-1; returns the greedy next token [B]."""
        t = self.torch
        F = t.nn.functional
        B, T = ids.shape
        x = F.embedding(ids, self.embed)
        cs = self.rope_tables(t.arange(start, start + T, device=self.dev))
        q_dim, kv_dim = self.nh * self.hd, self.nkv * self.hd
        for L, (kc, vc) in zip(self.layers, cache):
            a = self.rms(x, L["ln1"])
            qkv = F.linear(a, L["qkv"])
            q, k, v = qkv.split([q_dim, kv_dim, kv_dim], dim=-1)
            q = self.rope(q.view(B, T, self.nh, self.hd).transpose(1, 2), cs)
            k = self.rope(k.view(B, T, self.nkv, self.hd).transpose(1, 2), cs)
            v = v.view(B, T, self.nkv, self.hd).transpose(1, 2)
            kc[:, :, start:start + T] = k
            vc[:, :, start:start + T] = v
            o = F.scaled_dot_product_attention(q, kc[:, :, :start + T], vc[:, :, :start + T],
                                               is_causal=(start == 0 and T > 1), enable_gqa=True)
            o = o.transpose(1, 2).reshape(B, T, q_dim)
            x = x + self.all_reduce(F.linear(o, L["o"]))
            m = self.rms(x, L["ln2"])
            gu = F.linear(m, L["gate_up"])
            g_, u = gu.split([self.ni, self.ni], dim=-1)
            x = x + self.all_reduce(F.linear(F.silu(g_) * u, L["down"]))
        last = self.rms(x[:, -1, :], self.norm)
        logits = F.linear(last, self.lm_head).float()      # [B, vocab / world]
        val, idx = logits.max(dim=-1)
        mine = t.stack((val, (idx + self.rank * self.nv).float()), dim=-1)   # [B, 2]
        every = t.empty((self.world,) + tuple(mine.shape), device=self.dev, dtype=mine.dtype)
        self.dist.all_gather_into_tensor(every, mine)
        self.collectives += 1
        best = every[:, :, 0].argmax(dim=0)                 # [B]
        return every[best, t.arange(B, device=self.dev), 1].long()


def iteration(m, prompt, args, torch, sync):
    """One prefill + new_tokens decode steps; returns the CUDA-event timings (ms)."""
    B = prompt.shape[0]
    cache = m.new_cache(B, args.prompt_len + args.new_tokens)
    torch.cuda.synchronize()
    c0 = m.collectives
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    with llm_range("prefill", payload=B * args.prompt_len):
        ev[0].record()
        nxt = m.forward(prompt, 0, cache)
        ev[1].record()
        sync()
    steps = []
    d0 = torch.cuda.Event(enable_timing=True)
    d1 = torch.cuda.Event(enable_timing=True)
    d0.record()
    with llm_range("decode_all"):
        for s in range(args.new_tokens):
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            with llm_range("decode_step", payload=s):
                e0.record()
                nxt = m.forward(nxt[:, None], args.prompt_len + s, cache)
                e1.record()
                sync()
            steps.append((e0, e1))
    d1.record()
    torch.cuda.synchronize()
    return {
        "prefill_ms": ev[0].elapsed_time(ev[1]),
        "decode_ms": d0.elapsed_time(d1),
        "step_ms": [a.elapsed_time(b) for a, b in steps],
        "collectives": m.collectives - c0,
        "token0": int(nxt[0]),
    }


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    import torch
    import torch.distributed as dist
    if args.nvtx == "off":
        global llm_range
        import contextlib

        def llm_range(name, payload=None):  # noqa: F811
            return contextlib.nullcontext()
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    if args.backend == "nccl":
        dist.init_process_group(backend="nccl", device_id=dev)
    else:
        dist.init_process_group(backend=args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    shape = dict(SHAPES[args.model])
    if args.layers:
        shape["layers"] = args.layers
    t_init = time.perf_counter()
    m = TP(torch, dist, shape, world, rank, dev, args.seed)
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    prompt = torch.randint(0, shape["vocab"], (args.batch, args.prompt_len), generator=gen).to(dev)

    def sync():
        torch.cuda.synchronize()

    setup_coll = m.collectives
    with torch.inference_mode():
        if args.warmup:
            with llm_range("warmup", payload=args.warmup):
                for _ in range(args.warmup):
                    iteration(m, prompt, args, torch, sync)
        warm_coll = m.collectives - setup_coll
        its = [iteration(m, prompt, args, torch, sync) for _ in range(args.iters)]
    init_s = time.perf_counter() - t_init
    rec = {
        "rank": rank, "world_size": world, "local_rank": local, "pid": os.getpid(),
        "device": torch.cuda.get_device_name(dev), "model": args.model,
        "layers": shape["layers"], "batch": args.batch,
        "prompt_len": args.prompt_len, "new_tokens": args.new_tokens, "warmup": args.warmup,
        "iters": args.iters, "nvtx": args.nvtx == "on" and nvtx_available(),
        "backend": args.backend, "collectives_total": m.collectives,
        "collectives_warmup": warm_coll,
        "collectives_per_forward": 2 * shape["layers"] + 1,
        "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version())),
        "wall_s": round(init_s, 3), "iterations": its,
    }
    if args.own_dir:
        os.makedirs(args.own_dir, exist_ok=True)
        with open(os.path.join(args.own_dir, "tp.%d.%d.json" % (rank, os.getpid())), "w") as f:
            json.dump(rec, f)
    if rank == 0:
        pm = sum(i["prefill_ms"] for i in its) / len(its)
        sm = [x for i in its for x in i["step_ms"]]
        # the self-check convention (docs/metrics.md): rank 0's own means, said to be rank 0's
        print(json.dumps({"summary": True, "rank": rank, "world_size": world, "model": args.model,
                          "prefill_ms": round(pm, 4),
                          "decode_ms": round(sum(i["decode_ms"] for i in its) / len(its), 4),
                          "decode_ms_per_step": round(sum(sm) / len(sm), 4) if sm else 0.0,
                          "collectives_total": m.collectives, "token0": its[-1]["token0"]}),
              flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
