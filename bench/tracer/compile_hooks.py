#!/usr/bin/env python3
"""compile_hooks.py: how forward hooks like llmprof_auto's behave under torch.compile (run 31).
For each hook variant (plain: a Python hook; disable: wrapped in torch.compiler.disable;
compiling: returns at once under torch.compiler.is_compiling()), each compile target (call: the
module's __call__, hooks inside the compiled region, as transformers' static-cache generate() and
torch.compile(module) do; forward: model.forward only, hooks outside) and fullgraph False/True:
does it run, and how many of 6 calls ran the hook's body eagerly (6: every call, as llmprof needs).
backend=eager (dynamo's tracing decides this, not the backend). One JSON line per case."""
import json
import sys


def main():
    import torch
    torch._dynamo.config.suppress_errors = False
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    for variant in ("plain", "disable", "compiling"):
        for target in ("call", "forward"):
            for fullgraph in (False, True):
                torch._dynamo.reset()
                m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64)).to(dev)
                ran = []

                def body(*_a, **_k):
                    ran.append(1)  # a Python side effect, as our tracker's state changes are

                if variant == "plain":
                    hook = body
                elif variant == "disable":
                    hook = torch.compiler.disable(body)
                else:
                    def hook(*a, **k):
                        if torch.compiler.is_compiling():
                            return
                        body(*a, **k)
                m.register_forward_pre_hook(hook)
                if target == "call":
                    f = torch.compile(m, fullgraph=fullgraph, backend="eager")
                else:
                    m.forward = torch.compile(m.forward, fullgraph=fullgraph, backend="eager")
                    f = m
                err = None
                try:
                    x = torch.randn(4, 64, device=dev)
                    for _ in range(6):
                        f(x)
                except Exception as e:  # noqa: BLE001
                    err = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:160])
                print(json.dumps({"variant": variant, "target": target, "fullgraph": fullgraph,
                                  "ok": err is None, "hook_ran": len(ran), "error": err}), flush=True)
    print(json.dumps({"torch": torch.__version__}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
