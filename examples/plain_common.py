"""plain_common.py: what examples/*_plain.py share: model shapes, building a random-weight model
from a config (no download), and timing a program's prefill and decode with CUDA events the way a
careful user would. Nothing here knows llmprof: these programs are what llmprof must handle
without help (docs/nvtx.md, "Programs you did not write for llmprof").

The timing: CUDA events recorded when each top-level forward of the model starts and returns (its
kernels queued), and one when the generation returns. Prefill = the first forward's two events;
decode = the second forward's start to the generation's end: the same boundaries as the prefill
and decode_all ranges llmprof_auto pushes (docs/metrics.md "Self-check").
"""

import json
import os
import signal
import sys
import time

# Shapes (Hugging Face config fields). The MoE ones are Qwen2-MoE-style (routed experts of
# moe_intermediate_size plus one shared expert of shared_expert_intermediate_size).
PRESETS = {
    "tiny": dict(model_type="llama", vocab_size=512, hidden_size=128, intermediate_size=384,
                 num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
                 max_position_embeddings=4096, rope_theta=10000.0, rms_norm_eps=1e-5,
                 tie_word_embeddings=True),
    "llama-3.2-1b": dict(model_type="llama", vocab_size=128256, hidden_size=2048,
                         intermediate_size=8192, num_hidden_layers=16, num_attention_heads=32,
                         num_key_value_heads=8, head_dim=64, max_position_embeddings=131072,
                         rope_theta=500000.0, rms_norm_eps=1e-5, tie_word_embeddings=True),
    "qwen2.5-1.5b": dict(model_type="qwen2", vocab_size=151936, hidden_size=1536,
                         intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
                         num_key_value_heads=2, max_position_embeddings=32768,
                         rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True),
    "qwen2-moe-tiny": dict(model_type="qwen2_moe", vocab_size=1024, hidden_size=256,
                           intermediate_size=1024, moe_intermediate_size=128,
                           shared_expert_intermediate_size=512, num_experts=8,
                           num_experts_per_tok=2, num_hidden_layers=4, num_attention_heads=8,
                           num_key_value_heads=4, max_position_embeddings=4096,
                           decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=False,
                           rope_theta=10000.0, rms_norm_eps=1e-6, tie_word_embeddings=False),
    "qwen1.5-moe-a2.7b": dict(model_type="qwen2_moe", vocab_size=151936, hidden_size=2048,
                              intermediate_size=5632, moe_intermediate_size=1408,
                              shared_expert_intermediate_size=5632, num_experts=60,
                              num_experts_per_tok=4, num_hidden_layers=24,
                              num_attention_heads=16, num_key_value_heads=16,
                              max_position_embeddings=8192, decoder_sparse_step=1,
                              mlp_only_layers=[], norm_topk_prob=False, rope_theta=1000000.0,
                              rms_norm_eps=1e-6, tie_word_embeddings=False),
}


def add_args(p):
    p.add_argument("--model", default="tiny", choices=sorted(PRESETS), help="preset shape")
    p.add_argument("--model-config", help="a config.json (overrides --model)")
    p.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--prompt-len", type=int, default=128)
    p.add_argument("--new-tokens", type=int, default=32, help="tokens generated per sequence")
    p.add_argument("--iters", type=int, default=4,
                   help="generations; the first is cold and left out of the summary (no warm-up "
                        "is marked: llmprof leaves out the first iteration too)")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--step-times", action="store_true",
                   help="also print each decode forward's CUDA-event time (step_ms)")
    p.add_argument("--cache", default="dynamic", choices=["dynamic", "static"],
                   help="generate()'s KV cache; static: transformers compiles the decode forward "
                        "(torch.compile, CUDA graphs) in the first generation")
    p.add_argument("--sdpa", default="any", choices=["any", "nocudnn"],
                   help="nocudnn: PyTorch's SDPA without its cuDNN backend (bench/tracer/README.md "
                        "run 34: are cuDNN's attention plans, made in the cold generation, what "
                        "tracing it exactly leaves behind?)")


def check_args(p, a):
    if a.batch < 1 or a.prompt_len < 1 or a.iters < 2 or a.new_tokens < 2:
        p.error("--batch, --prompt-len >= 1, --iters >= 2, --new-tokens >= 2")


def build_model(args, torch, transformers):
    """A random-weight causal LM on the GPU from a preset or a config.json."""
    if args.model_config:
        cfg = transformers.AutoConfig.from_pretrained(args.model_config)
    else:
        fields = dict(PRESETS[args.model])
        cfg = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    if getattr(args, "sdpa", "any") == "nocudnn":
        torch.backends.cuda.enable_cudnn_sdp(False)
    torch.manual_seed(args.seed)
    with torch.device("cuda"):
        try:
            model = transformers.AutoModelForCausalLM.from_config(cfg, dtype=dtype)
        except TypeError:  # transformers 4.x
            model = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype)
    return model.to(dtype).eval(), cfg


class StepCounters(object):
    """Bench only (LLMPROF_BENCH_COUNTERS=1, bench/tracer/step_call.sh): the calling thread's CPU
    time and, where the kernel lets us open them (perf_event_open; a VM need not expose the PMU),
    its CPU cycles and instructions, read at each decode step's boundaries. The host of the GPU
    machines changes speed by up to a factor 2 for 0.2-0.8 s at a time (bench/tracer/README.md
    runs 18-25), which moves a launch-bound step's wall time; the launching thread's cycles and
    instructions say how much work the step was, whatever the speed (sample_check.py cost compares
    modes by them beside wall time). The H200 VM of run 26 counts neither, and there the thread's
    CPU time moves with its wall time (the vCPUs run slower, they are not descheduled). Unset:
    read() returns None and nothing is opened."""

    def __init__(self):
        self.fds = []
        self.names = []
        if os.environ.get("LLMPROF_BENCH_COUNTERS") != "1":
            self.on = False
            return
        self.on = True
        import ctypes
        import struct
        libc = ctypes.CDLL(None, use_errno=True)
        # struct perf_event_attr (linux/perf_event.h), 128 bytes: type PERF_TYPE_HARDWARE (0),
        # config CPU_CYCLES (0) / INSTRUCTIONS (1), flags exclude_hv (bit 6): this thread, user and
        # kernel (the driver's ioctls), every CPU it runs on
        for name, config in (("cycles", 0), ("instr", 1)):
            for flags in (1 << 6, (1 << 6) | (1 << 5)):  # then without the kernel (paranoid >= 2)
                attr = ctypes.create_string_buffer(struct.pack("IIQQQQQ", 0, 128, config, 0, 0, 0, flags), 128)
                fd = libc.syscall(298, attr, 0, -1, -1, 0)  # SYS_perf_event_open on x86_64
                if fd >= 0:
                    self.fds.append(fd)
                    self.names.append(name)
                    break

    def read(self):
        """(thread CPU ns, {name: count}) now, or None when off."""
        if not self.on:
            return None
        return time.thread_time_ns(), {n: int.from_bytes(os.read(fd, 8), "little")
                                       for n, fd in zip(self.names, self.fds)}

    @staticmethod
    def deltas(pairs):
        """{"step_cpu_ms": [...], "step_cycles": [...], ...} of a list of (start, end) reads."""
        pairs = [(a, b) for a, b in pairs if a and b]
        if not pairs:
            return {}
        out = {"step_cpu_ms": [round((b[0] - a[0]) / 1e6, 5) for a, b in pairs]}
        for n in pairs[0][0][1]:
            out["step_" + n] = [b[1][n] - a[1][n] for a, b in pairs]
        return out


class ForwardClock(object):
    """CUDA events at the start and end of each top-level forward of `model` (forward hooks)."""

    def __init__(self, torch, model):
        self.torch = torch
        self.events = []   # (start, end) per forward of the current generation
        self.depth = 0
        # step-level turns (turn_steps()): every K decode forwards the pre-hook records an event
        # that ends the previous forward's full step (cuts: forward index -> event), then syncs
        # and stops; not in the first generation (cold, left out: the turns' start-up)
        self.turn_k = turn_steps()
        self.gens = 0
        self.cuts = {}
        self.step_full_ms = None
        # LLMPROF_BENCH_COUNTERS=1: the thread's counters at the same places as the events
        self.counters = StepCounters()
        self.counts, self.cut_counts, self.step_counts = [], {}, None
        # eager under torch.compile: transformers compiles the model's __call__ (hooks included)
        # for a static cache, and a compiled hook records its events once, at capture
        eager = getattr(getattr(torch, "compiler", None), "disable", None) or (lambda f: f)
        model.register_forward_pre_hook(eager(self._pre))
        model.register_forward_hook(eager(self._post))

    def _event(self):
        e = self.torch.cuda.Event(enable_timing=True)
        e.record()
        return e

    def _pre(self, *_):
        self.depth += 1
        if self.depth == 1:
            n = len(self.events)  # this forward's index: 0 the prefill, n the decode forward n - 1
            if self.turn_k and self.gens and n > 1 and (n - 1) % self.turn_k == 0:
                self.cuts[n - 1] = self._event()
                self.cut_counts[n - 1] = self.counters.read()
                step_turn(self.torch.cuda.synchronize)
            self.counts.append(self.counters.read())
            self.events.append([self._event(), None])

    def _post(self, *_):
        self.depth -= 1
        if self.depth == 0:
            self.events[-1][1] = self._event()

    def start(self):
        self.events = []
        self.cuts = {}
        self.counts, self.cut_counts = [], {}
        if self.gens == 1:
            if "empty" in bench_prewarm():  # bench only: the cold one's allocator segments given back
                self.torch.cuda.synchronize()
                self.torch.cuda.empty_cache()
            bench_pin()  # the measured generations (the first is cold and left out)

    def finish(self):
        """(prefill_ms, decode_ms, steps) of the generation just run; sets step_ms (each decode
        forward's span) and, with step-level turns, step_full_ms (a decode forward's start to the
        next one's, or to the generation's end for the last: HF's work between forwards included,
        the turns' stops not). decode_ms includes the stops: with step turns use the step lists."""
        end = self._event()
        end_count = self.counters.read()
        end.synchronize()
        ev = self.events
        if len(ev) < 2:
            return None
        prefill = ev[0][0].elapsed_time(ev[0][1])
        decode = ev[1][0].elapsed_time(end)
        self.step_ms = [a.elapsed_time(b) for a, b in ev[1:]]
        self.step_full_ms = None
        if self.turn_k and self.gens:
            ends = [self.cuts.get(i, ev[i + 1][0]) if i + 1 < len(ev) else end
                    for i in range(1, len(ev))]
            self.step_full_ms = [ev[i][0].elapsed_time(e) for i, e in enumerate(ends, 1)]
        # the counters over the same spans as step_full_ms (a forward's start to the next one's)
        c = self.counts
        self.step_counts = StepCounters.deltas(
            [(c[i], self.cut_counts.get(i, c[i + 1] if i + 1 < len(c) else end_count))
             for i in range(1, len(c))]) if self.counters.on and self.gens else None
        self.gens += 1
        bench_turn()
        return prefill, decode, len(ev) - 1


def bench_turn():
    """Turn-taking for bench/tracer/cost_call.sh (several processes measured one generation at a
    time, interleaved): with LLMPROF_BENCH_TURN=DIR set, the process writes DIR/<LLMPROF_BENCH_TAG>.stop
    ("PID TIME": its pid, the epoch seconds) after each generation and stops itself (SIGSTOP)
    until the driver continues it; DIR/release ends the turns. Without the variable: nothing."""
    d = os.environ.get("LLMPROF_BENCH_TURN")
    if not d or os.path.exists(os.path.join(d, "release")):
        return
    path = os.path.join(d, os.environ.get("LLMPROF_BENCH_TAG", str(os.getpid())) + ".stop")
    with open(path + ".tmp", "w") as f:
        f.write("%d %.6f" % (os.getpid(), time.time()))
    os.replace(path + ".tmp", path)
    os.kill(os.getpid(), signal.SIGSTOP)


def bench_pin():
    """Bench only (bench/tracer/step_call.sh MAIN_CPU): with LLMPROF_BENCH_MAIN_CPU=N the calling
    thread (the program's main thread, which launches the kernels) runs on CPU N alone from here
    on; the threads started before (CUDA's, the tracer's) keep the process's CPUs. Each vCPU of
    the GPU machines changes speed on its own (bench/tracer/host_probe.py, run 26), so processes
    taking turns on one CPU see the same speeds. Called before the measured generations."""
    v = os.environ.get("LLMPROF_BENCH_MAIN_CPU", "")
    if v:
        if not v.isdigit():
            raise SystemExit("error: LLMPROF_BENCH_MAIN_CPU=%r: expected a CPU number" % v)
        os.sched_setaffinity(0, {int(v)})  # Linux: pid 0 is the calling thread


PREWARM_WORDS = ("gen", "cublas", "empty")


def bench_prewarm():
    """Bench only (bench/tracer/cost_call.sh modes pwgen, pwcublas, autoempty; run 29's next step:
    what the first generation does under CUPTI that costs the rest of the process). The set of
    words in LLMPROF_BENCH_PREWARM (comma-separated): gen, one whole generation before the first
    stage range, its NVTX stage ranges left out (under LLMPROF_TRACE_CUPTI_DELAY=1 it then runs
    before CUPTI's start: every kernel's first launch, cuBLAS's handles, the allocator's growth);
    cublas, one matrix product of the model's weights there (cuBLAS's handle and workspace only);
    empty, torch.cuda.empty_cache() after the warm-up (the allocator's segments made then, under
    CUPTI by default, given back and made again after it; ForwardClock's programs, the unmodified
    one among them, honour only this word, after their first, cold generation). Empty when unset;
    an unknown word ends the program with an error naming it."""
    v = os.environ.get("LLMPROF_BENCH_PREWARM", "")
    words = set(w for w in v.split(",") if w)
    bad = sorted(words - set(PREWARM_WORDS))
    if bad:
        raise SystemExit("error: LLMPROF_BENCH_PREWARM=%r: %s is not one of %s" % (v, bad[0], ", ".join(PREWARM_WORDS)))
    return words


def turn_steps():
    """Step-level turns for bench/tracer/cost_call.sh (LP_COST_TURN_STEPS): K when
    LLMPROF_BENCH_TURN_STEPS=K (K >= 1) is set beside LLMPROF_BENCH_TURN, else 0. The caller reads
    it once and, when K > 0, calls step_turn() after every K-th decode step of a measured
    generation (outside the step's timing); unset, nothing is done per step."""
    if not os.environ.get("LLMPROF_BENCH_TURN"):
        return 0
    v = os.environ.get("LLMPROF_BENCH_TURN_STEPS", "")
    if not v:
        return 0
    if not v.isdigit() or int(v) < 1:
        raise SystemExit("error: LLMPROF_BENCH_TURN_STEPS=%r: expected a whole number >= 1" % v)
    return int(v)


def step_turn(sync):
    """A turn inside a generation: sync() (torch.cuda.synchronize: the process's queued GPU work
    finishes now, not in another process's turn), then bench_turn(). The driver
    (bench/tracer/turn_driver.py) continues the processes round-robin, K steps each, so the steps
    of the same generation and index of all processes run within one round (~0.1-0.3 s, inside one
    of the host's speed plateaus) and can be paired (sample_check.py cost)."""
    sync()
    bench_turn()


def report(results, batch, extra=None, step_ms=None, step_full_ms=None, turn_k=0, step_counts=None,
           line_extra=None):
    """One JSON line per measured generation, then the summary line (docs/metrics.md); step_ms:
    per generation, its decode forwards' times (printed when given); step_full_ms: the same for
    ForwardClock.step_full_ms (with step turns; None entries are left out); turn_k: K of the step
    turns, printed as turn_steps when not 0 (decode_ms then includes the stops); step_counts: per
    generation, ForwardClock.step_counts (LLMPROF_BENCH_COUNTERS=1), its lists added to the line;
    line_extra: per generation, a dict of more keys for its line."""
    measured = results[1:]  # the first generation is cold
    for i, (pm, dm, steps) in enumerate(measured):
        line = {"iter": i, "prefill_ms": pm, "decode_ms": dm, "decode_ms_per_step": dm / steps,
                "tokens_per_s": batch * steps / dm * 1e3}
        if step_ms:
            line["step_ms"] = [round(x, 5) for x in step_ms[i + 1]]
        if step_full_ms and step_full_ms[i + 1] is not None:
            line["step_full_ms"] = [round(x, 5) for x in step_full_ms[i + 1]]
        if turn_k:
            line["turn_steps"] = turn_k
        if step_counts and step_counts[i + 1]:
            line.update(step_counts[i + 1])
        if line_extra and line_extra[i + 1]:
            line.update(line_extra[i + 1])
        print(json.dumps(line), flush=True)
    n = len(measured)
    pm = sum(r[0] for r in measured) / n
    dm = sum(r[1] for r in measured) / n
    steps = sum(r[2] for r in measured) / n
    out = {"summary": True, "iters": n, "prefill_ms": pm, "decode_ms": dm,
           "decode_ms_per_step": dm / steps, "tokens_per_s": batch * steps / dm * 1e3,
           "decode_steps": steps}
    out.update(extra or {})
    print(json.dumps(out), flush=True)


def need_cuda(torch):
    if not torch.cuda.is_available():
        sys.stderr.write("error: these examples need a CUDA GPU\n")
        sys.exit(4)
