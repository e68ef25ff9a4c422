"""ranks_spawn.py: a 2-process program with per-process GPU work started through
multiprocessing spawn (no launcher variables), for issue 17's check:

    llmprof run -- python3 tests/gpu_progs/ranks/ranks_spawn.py OWN_DIR

Worker w runs (40 + k + 80 w) kernels in iteration k; the parent does no CUDA work. Each worker
writes its own account to OWN_DIR.
"""
import multiprocessing as mp
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def worker(w, own_dir):
    import torch
    import common
    torch.cuda.set_device(0)
    c = common.Counter()
    x = common.setup("cuda:0", c)
    iters = common.iterations(x, w, 5, base=40, extra=80, c=c)
    common.report(own_dir, w, c, iters, {"worker": w})


def main():
    own_dir = sys.argv[1] if len(sys.argv) > 1 else "own"
    ctx = mp.get_context("spawn")
    ps = [ctx.Process(target=worker, args=(w, own_dir)) for w in range(2)]
    for p in ps:
        p.start()
    for p in ps:
        p.join()
    sys.exit(max(p.exitcode for p in ps))


if __name__ == "__main__":
    main()
