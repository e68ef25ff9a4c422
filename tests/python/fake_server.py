"""A server-like loop without torch and without any NVTX (tests/e2e/stage_hooks.sh): it admits
requests, runs batched prefill, chunked-prefill (mixed) and decode "forwards" (sleeps), and times
each call itself, printing the self-check summary (docs/metrics.md). Stage hooks name its methods:

    __main__:Engine.forward_prefill=prefill@arg1.num_tokens
    __main__:Engine.forward_decode=decode_step@len(arg1.seqs)
    __main__:Engine.forward_mixed=mixed@arg1.num_tokens

With `spawn`, the decode forwards run in a multiprocessing child (spawn) that imports nothing of
llmprof: its hooks come through the inherited environment."""
import json
import multiprocessing as mp
import sys
import time


class Batch(object):
    def __init__(self, seqs, num_tokens):
        self.seqs = seqs
        self.num_tokens = num_tokens


class Engine(object):
    def forward_prefill(self, batch):
        time.sleep(0.004 + 0.0001 * batch.num_tokens / 8)

    def forward_decode(self, batch):
        time.sleep(0.002)

    def forward_mixed(self, batch):
        time.sleep(0.006)


def serve(n_iters, times):
    eng = Engine()
    running = []
    for it in range(n_iters):
        # admit two requests of 16 prompt tokens each
        new = [len(running), len(running) + 1]
        b = Batch(new, 32)
        t = time.perf_counter()
        if it % 3 == 2 and running:
            b = Batch(running + new, 32 + len(running))   # chunked prefill: prompts and decode tokens together
            eng.forward_mixed(b)
            times["mixed"].append(time.perf_counter() - t)
        else:
            eng.forward_prefill(b)
            times["prefill"].append(time.perf_counter() - t)
        running = (running + new)[-6:]
        for _ in range(3):
            t = time.perf_counter()
            eng.forward_decode(Batch(running, len(running)))
            times["decode"].append(time.perf_counter() - t)


def child(q):
    times = {"prefill": [], "decode": [], "mixed": []}
    serve(3, times)
    q.put(len(times["decode"]))


def main():
    times = {"prefill": [], "decode": [], "mixed": []}
    serve(9, times)
    if len(sys.argv) > 1 and sys.argv[1] == "spawn":
        ctx = mp.get_context("spawn")
        q = ctx.Queue()
        w = ctx.Process(target=child, args=(q,))
        w.start()
        q.get(timeout=60)
        w.join(60)

    def mean_ms(x):
        x = x[1:]   # the first call of each is left out, as llmprof's skip-first does
        return 1e3 * sum(x) / len(x)
    print(json.dumps({"summary": True, "prefill_ms": mean_ms(times["prefill"]),
                      "decode_ms_per_step": mean_ms(times["decode"]), "mixed_ms": mean_ms(times["mixed"])}),
          flush=True)


if __name__ == "__main__":
    main()
