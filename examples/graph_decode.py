#!/usr/bin/env python3
"""graph_decode.py: a hand-written Llama-style decoder in plain PyTorch whose decode step is captured
once as a CUDA graph and replayed per token, the way people write fast decode loops by hand. It
knows nothing of llmprof: its ranges are plain `torch.cuda.nvtx.range_push("prefill")`,
`"decode_all"`, `"decode_step"` (default domain), and nothing synchronizes inside them, so the host
ranges end long before the GPU work does. It times itself with CUDA events and prints the
JSON-lines convention of docs/metrics.md ("Self-check"), so llmprof can compare. --capture-at warmup
captures the graph inside the program's `warmup` range, as torch.compile's CUDA graphs and static
caches do; --op-ranges pushes layer > attention / mlp ranges in the forward, also while capturing
(docs/tracer.md "The warm-up": trace.warmup=graphs keeps them for the replays):

    llmprof run --mode light model=llama-3.2-1b inputs.batch=1 inputs.prompt_len=512 \
        inputs.new_tokens=128 -- python examples/graph_decode.py --prompt-len 512 --new-tokens 128

Random weights (bf16), no download. The shape defaults to llama-3.2-1b (GQA, SwiGLU, RMSNorm, tied
embeddings; RoPE left out: it changes no kernel shape that matters here). The KV cache is static
(max length prompt + new tokens); the decode step reads the position from a device tensor, so one
captured graph serves every step.
"""

import argparse
import json
import sys


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layers", type=int, default=16)
    p.add_argument("--hidden", type=int, default=2048)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--ffn", type=int, default=8192)
    p.add_argument("--vocab", type=int, default=128256)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prompt-len", type=int, default=512)
    p.add_argument("--new-tokens", type=int, default=128)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--iters", type=int, default=3)
    p.add_argument("--graph", default="on", choices=["on", "off"])
    p.add_argument("--capture-at", default="setup", choices=["setup", "warmup"],
                   help="capture the decode graph before the warm-up (setup) or inside its range, as "
                        "torch.compile's CUDA graphs and static caches do (warmup)")
    p.add_argument("--op-ranges", action="store_true",
                   help="push layer > attention / mlp ranges in the forward (also while capturing)")
    return p.parse_args(argv)


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    dev, dt = "cuda", torch.bfloat16
    hd = a.hidden // a.heads
    L = a.prompt_len + a.new_tokens

    def w(*shape):
        return (torch.randn(*shape, device=dev, dtype=torch.float32) * 0.02).to(dt)

    emb = w(a.vocab, a.hidden)
    layers = [dict(n1=torch.ones(a.hidden, device=dev, dtype=dt), qkv=w((a.heads + 2 * a.kv_heads) * hd, a.hidden),
                   o=w(a.hidden, a.heads * hd), n2=torch.ones(a.hidden, device=dev, dtype=dt),
                   gu=w(2 * a.ffn, a.hidden), d=w(a.hidden, a.ffn)) for _ in range(a.layers)]
    nf = torch.ones(a.hidden, device=dev, dtype=dt)
    kc = torch.zeros(a.layers, a.batch, a.kv_heads, L, hd, device=dev, dtype=dt)
    vc = torch.zeros_like(kc)
    pos = torch.zeros(1, dtype=torch.long, device=dev)      # decode position (device tensor)
    tok = torch.zeros(a.batch, 1, dtype=torch.long, device=dev)
    keys = torch.arange(L, device=dev)

    def rms(x, g):
        return F.rms_norm(x, (x.shape[-1],), g, 1e-5)

    push = torch.cuda.nvtx.range_push if a.op_ranges else (lambda name: None)
    pop = torch.cuda.nvtx.range_pop if a.op_ranges else (lambda: None)

    def forward(ids, start, n, mask):
        """ids: (B, n) tokens at positions start..start+n-1 (start: a device tensor)."""
        x = emb[ids]
        idx = start + torch.arange(n, device=dev)
        for i, ly in enumerate(layers):
            push("layer")
            push("attention")
            h = rms(x, ly["n1"]) @ ly["qkv"].t()
            q, k, v = h.split([a.heads * hd, a.kv_heads * hd, a.kv_heads * hd], dim=-1)
            q = q.view(a.batch, n, a.heads, hd).transpose(1, 2)
            kc[i].index_copy_(2, idx, k.view(a.batch, n, a.kv_heads, hd).transpose(1, 2))
            vc[i].index_copy_(2, idx, v.view(a.batch, n, a.kv_heads, hd).transpose(1, 2))
            att = F.scaled_dot_product_attention(q, kc[i], vc[i], attn_mask=mask, enable_gqa=True)
            x = x + att.transpose(1, 2).reshape(a.batch, n, a.heads * hd) @ ly["o"].t()
            pop()
            push("mlp")
            g, u = (rms(x, ly["n2"]) @ ly["gu"].t()).chunk(2, dim=-1)
            x = x + (F.silu(g) * u) @ ly["d"].t()
            pop()
            pop()
        return (rms(x[:, -1:], nf) @ emb.t()).argmax(-1)

    prompt = torch.randint(0, a.vocab, (a.batch, a.prompt_len), device=dev)
    zero = torch.zeros(1, dtype=torch.long, device=dev)
    causal = keys[None, :] <= (torch.arange(a.prompt_len, device=dev)[:, None])   # (P, L), prompt rows

    def decode_step():
        mask = (keys <= pos)[None, :]
        tok.copy_(forward(tok, pos, 1, mask))
        pos.add_(1)

    def capture():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                pos.fill_(a.prompt_len)
                decode_step()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        pos.fill_(a.prompt_len)
        with torch.cuda.graph(g):
            decode_step()
        return g

    graph = capture() if a.graph == "on" and a.capture_at == "setup" else None
    step = [graph.replay if graph is not None else decode_step]

    def iteration():
        ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
        ev[0].record()
        torch.cuda.nvtx.range_push("prefill")
        tok.copy_(forward(prompt, zero, a.prompt_len, causal))
        pos.fill_(a.prompt_len)
        torch.cuda.nvtx.range_pop()
        ev[1].record()
        torch.cuda.nvtx.range_push("decode_all")
        for i in range(a.new_tokens):
            torch.cuda.nvtx.range_push("decode_step")
            step[0]()
            torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
        ev[2].record()
        ev[2].synchronize()
        return ev[0].elapsed_time(ev[1]), ev[1].elapsed_time(ev[2])

    with torch.inference_mode():
        torch.cuda.nvtx.range_push("warmup")
        if a.graph == "on" and a.capture_at == "warmup":
            graph = capture()
            step[0] = graph.replay
        for _ in range(a.warmup):
            iteration()
        torch.cuda.nvtx.range_pop()
        res = []
        for i in range(a.iters):
            pm, dm = iteration()
            res.append((pm, dm))
            print(json.dumps({"iter": i, "prefill_ms": pm, "decode_ms": dm,
                              "decode_ms_per_step": dm / a.new_tokens,
                              "tokens_per_s": a.batch * a.new_tokens / dm * 1e3}), flush=True)
    pm = sum(r[0] for r in res) / len(res)
    dm = sum(r[1] for r in res) / len(res)
    print(json.dumps({"summary": True, "program": "graph_decode.py", "graph": a.graph, "capture_at": a.capture_at,
                      "op_ranges": a.op_ranges, "iters": a.iters,
                      "batch": a.batch, "prompt_len": a.prompt_len, "new_tokens": a.new_tokens,
                      "prefill_ms": pm, "decode_ms": dm, "decode_ms_per_step": dm / a.new_tokens,
                      "tokens_per_s": a.batch * a.new_tokens / dm * 1e3}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
