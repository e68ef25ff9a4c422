"""tracker.py: which NVTX stage range a forward call is, from its shape and cache (no torch here).

The rules (docs/nvtx.md, "Programs you did not write for llmprof"):

- Inside ``generate()`` (the outermost call on this thread): the first top-level forward is
  ``prefill`` (payload: batch x prompt tokens), every later one a ``decode_step`` (payload: the
  step index, from 0), and ``decode_all`` opens before the first step and closes when
  ``generate()`` returns. ``decode_all``'s payload is the decode steps planned when the call says
  (``max_new_tokens`` - 1, or ``max_length`` - prompt length - 1; generate_enter's ``limits``):
  llmprof's tracer foresees the generation's end from it (docs/nvtx.md).
- A forward called directly (a loop you wrote): an empty cache (no ``past_key_values``, or one
  holding 0 tokens) is ``prefill``; one new token per sequence on a non-empty cache is a
  ``decode_step``; anything else (a second prefill chunk, several draft tokens) gets no range.
  When the cache length cannot be read without a GPU sync, more than one input token is
  ``prefill`` and one token a ``decode_step`` after a prefill. ``decode_all`` opens at the first
  step after a prefill and closes at the next prefill, the next ``generate()`` or at exit; the
  account counts such ranges (``loop_decodes``) and llmprof then ends each at its last step.
- Only top-level forwards count (a causal LM called inside another one's forward is part of it).
- With ``warmup_generations`` N > 0 (run.auto_warmup, LLMPROF_AUTO_WARMUP): the first N
  ``generate()`` calls of the process are each inside a ``warmup`` range (the reports leave them
  out; llmprof's tracer detaches CUPTI inside, docs/tracer.md "The warm-up"). Bench only
  (``warmup_from="decode"``, LLMPROF_BENCH_WARMUP_FROM=decode): the range opens at their first
  decode step instead, so their prefills stay outside it; ``"steps=K"``: it holds only their
  first K decode steps, inside their ``decode_all`` (bench/tracer/README.md run 33).
- Once the program pushes stage ranges of its own (``prefill``, ``decode``, ``decode_all``,
  ``decode_step``, ``step``, seen through torch.cuda.nvtx or llmprof_nvtx), the tracker pushes
  nothing more: the program's ranges are the truth. It still counts what it sees.

Ranges are pushed through ``ranges`` (an object with ``push(name, payload=None)`` and ``pop()``),
per thread, properly nested. The tracker also counts what it saw (batch, prompt length, decode
steps per generation) for llmprof's MFU/MBU. Thread-safe: per-thread state, counters updated
under the GIL.
"""

import threading

STAGE_NAMES = frozenset(("prefill", "decode", "decode_all", "decode_step", "step"))

PREFILL = "prefill"
DECODE_STEP = "decode_step"


def _count(v):
    """`v` when it is a plain int >= 0 (not a bool), else None."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


class Counts(object):
    """What the program ran, as llmprof needs it."""

    def __init__(self):
        self.batch = None          # of the last prefill
        self.prompt_len = None     # input tokens per sequence of the last prefill
        self.decode_steps = None   # decode steps of the last finished generation / loop iteration
        self.consistent = True     # batch and prompt length never changed between prefills
        self.prefills = 0
        self.generate_calls = 0
        self.decode_steps_total = 0
        self.warmup_generations = 0  # generate() calls marked as warm-up
        self.loop_decodes = 0      # decode_all ranges pushed outside generate(): their end is late

    def as_dict(self):
        return {
            "batch": self.batch, "prompt_len": self.prompt_len,
            "decode_steps": self.decode_steps,
            "new_tokens": None if self.decode_steps is None else self.decode_steps + 1,
            "consistent": self.consistent, "prefills": self.prefills,
            "generate_calls": self.generate_calls, "decode_steps_total": self.decode_steps_total,
            "warmup_generations": self.warmup_generations, "loop_decodes": self.loop_decodes,
        }


class _ThreadState(threading.local):
    def __init__(self):
        self.gen_depth = 0          # nested generate() calls
        self.gen_prefilled = False  # the current generate() ran its prefill
        self.fwd_depth = 0          # nested top-level forwards
        self.decode_open = False    # this tracker's decode_all is open
        self.steps = 0              # decode steps since the last prefill
        self.prefilled = False      # a prefill ran on this thread (for direct calls)
        self.warmup_open = False    # this tracker's warmup range around a generate() is open
        self.warmup_pending = False  # warmup_from="decode": the range opens at the first step
        self.warmup_inner = False   # warmup_from="steps=K": open inside decode_all
        self.limits = (None, None)  # the current generate()'s (max_new_tokens, max_length)
        self.prompt_len = None      # input tokens per sequence of its prefill


class StageTracker(object):
    def __init__(self, ranges, on_change=None, warmup_generations=0, warmup_from="generate"):
        self.ranges = ranges
        self.warmup_generations = warmup_generations  # the first N generate() calls: warm-up
        self.warmup_steps = 0       # bench only: "steps=K", the first K steps only
        if isinstance(warmup_from, str) and warmup_from.startswith("steps=") and warmup_from[6:].isdigit():
            self.warmup_steps = int(warmup_from[6:])
        self.warmup_at_decode = warmup_from == "decode" or self.warmup_steps > 0  # from their first step
        self.counts = Counts()
        self.user_ranges = False    # the program pushes stage ranges itself
        self.on_change = on_change  # called after a prefill and after generate() returns
        self._t = _ThreadState()

    # -- the program's own ranges --

    def saw_range(self, name):
        """A range the program pushed itself (torch.cuda.nvtx.range_push, llmprof_nvtx.push)."""
        if not self.user_ranges and isinstance(name, str) and name in STAGE_NAMES:
            self.user_ranges = True

    # -- generate() --

    def generate_enter(self, limits=(None, None)):
        """`limits`: the call's (max_new_tokens, max_length), either None when not known."""
        t = self._t
        t.gen_depth += 1
        if t.gen_depth == 1:
            self._close_decode(t)
            t.gen_prefilled = False
            t.steps = 0
            t.limits = limits
            t.prompt_len = None
            if self.counts.generate_calls < self.warmup_generations and not self.user_ranges:
                if self.warmup_at_decode:
                    t.warmup_pending = True
                else:
                    self.ranges.push("warmup", None)
                    t.warmup_open = True
                self.counts.warmup_generations += 1
            self.counts.generate_calls += 1

    def generate_exit(self):
        t = self._t
        if t.gen_depth <= 0:
            return
        t.gen_depth -= 1
        if t.gen_depth == 0:
            if t.gen_prefilled:
                self.counts.decode_steps = t.steps
            self._close_decode(t)
            t.warmup_pending = False
            if t.warmup_open:
                self.ranges.pop()
                t.warmup_open = False
            if self.on_change:
                self.on_change()

    # -- forward --

    def forward_enter(self, batch, input_len, cache_len):
        """Before a causal LM's forward. batch / input_len: from the input shape (None unknown);
        cache_len: tokens already in the cache (0 empty, None unknown). Returns the range kind
        pushed (PREFILL, DECODE_STEP) or None; pass it to forward_exit. Once the program pushes
        its own stage ranges nothing is pushed, but the counts go on."""
        t = self._t
        t.fwd_depth += 1
        if t.fwd_depth > 1:
            return None
        push = not self.user_ranges
        kind = self.classify(batch, input_len, cache_len)
        if kind == PREFILL:
            self._close_decode(t)
            t.steps = 0
            t.prefilled = True
            if t.gen_depth:
                t.gen_prefilled = True
                t.prompt_len = input_len
            self._count_prefill(batch, input_len)
            if push:
                self.ranges.push("prefill", batch * input_len if batch and input_len else None)
            if self.on_change:
                self.on_change()
        elif kind == DECODE_STEP:
            if push:
                if not t.decode_open:
                    inner = t.warmup_pending and t.gen_depth and self.warmup_steps > 0
                    if t.warmup_pending and t.gen_depth and not inner:
                        self.ranges.push("warmup", None)
                        t.warmup_open = True
                    t.warmup_pending = False
                    self.ranges.push("decode_all", self._planned_steps(t) if t.gen_depth else None)
                    t.decode_open = True
                    if not t.gen_depth:
                        self.counts.loop_decodes += 1
                    if inner:
                        self.ranges.push("warmup", None)
                        t.warmup_inner = True
                elif t.warmup_inner and t.steps >= self.warmup_steps:
                    self.ranges.pop()
                    t.warmup_inner = False
                self.ranges.push("decode_step", t.steps)
            t.steps += 1
            self.counts.decode_steps_total += 1
            if not t.gen_depth:
                self.counts.decode_steps = t.steps  # a loop: the steps since its prefill
        return kind if push else None

    def forward_exit(self, kind):
        t = self._t
        if t.fwd_depth > 0:
            t.fwd_depth -= 1
        if kind is not None:
            self.ranges.pop()

    def classify(self, batch, input_len, cache_len):
        """The rules above, for this thread's state; no side effects."""
        t = self._t
        if t.gen_depth:
            return DECODE_STEP if t.gen_prefilled else PREFILL
        if cache_len == 0:
            return PREFILL
        if cache_len is None:
            if input_len is not None and input_len > 1:
                return PREFILL
            return DECODE_STEP if t.prefilled and input_len == 1 else PREFILL
        return DECODE_STEP if input_len == 1 else None

    def close(self):
        """At exit: closes this thread's open decode_all."""
        self._close_decode(self._t)

    # -- helpers --

    def _close_decode(self, t):
        if t.warmup_inner:
            self.ranges.pop()
            t.warmup_inner = False
        if t.decode_open:
            self.ranges.pop()
            t.decode_open = False

    @staticmethod
    def _planned_steps(t):
        """The decode steps this generate() plans (None: not known): max_new_tokens - 1, else
        max_length - prompt length - 1 (transformers' rule: max_new_tokens wins)."""
        new, length = t.limits
        if _count(new) is None and _count(length) is not None and _count(t.prompt_len) is not None:
            new = length - t.prompt_len
        return new - 1 if _count(new) is not None and new >= 2 else None

    def _count_prefill(self, batch, input_len):
        c = self.counts
        if c.prefills and (c.batch != batch or c.prompt_len != input_len):
            c.consistent = False
        c.batch, c.prompt_len = batch, input_len
        c.prefills += 1
