"""ranks_gloo.py: 2+ ranks on ONE GPU under torchrun with the gloo backend (compute on the GPU,
collectives on the CPU), for issue 17's check:

    llmprof run -- torchrun --nproc-per-node 2 tests/gpu_progs/ranks/ranks_gloo.py OWN_DIR

Every iteration ends with a gloo all_reduce of 1024 floats copied to the host, inside an
`all_reduce` NVTX range: the faster rank waits there for the slower one. Each rank writes its own
account (kernels launched, per-iteration CUDA-event latency, all_reduce time) to OWN_DIR.
"""
import os
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def main():
    own_dir = sys.argv[1] if len(sys.argv) > 1 else "own"
    dist.init_process_group(backend="gloo")
    rank = dist.get_rank()
    torch.cuda.set_device(0)
    c = common.Counter()
    x = common.setup("cuda:0", c)

    def collective(t):
        h = t[:1024].cpu()            # a device-to-host copy, no kernel
        torch.cuda.nvtx.range_push("all_reduce")
        t0 = time.perf_counter()
        dist.all_reduce(h)
        ms = (time.perf_counter() - t0) * 1e3
        torch.cuda.nvtx.range_pop()
        return ms

    iters = common.iterations(x, rank, 5, base=40, extra=60, c=c, collective=collective)
    common.report(own_dir, rank, c, iters, {"world_size": dist.get_world_size(),
                                            "local_rank": int(os.environ.get("LOCAL_RANK", -1))})
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
