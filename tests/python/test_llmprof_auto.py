"""Tests of python/llmprof_auto (run by tests/e2e/python_auto.sh through `python3 -m unittest`).

No torch here: the tracker's rules are driven with plain numbers, the input readers with fake
tensors and caches, and the whole shim (sitecustomize chaining, the import hook, the generate()
and forward hooks, the account file) runs in child interpreters against tests/python/fakes.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SITE = os.path.join(ROOT, "python", "llmprof_auto", "site")
FAKES = os.path.join(HERE, "fakes")
sys.path.insert(0, os.path.join(ROOT, "python"))

import llmprof_auto  # noqa: E402
from llmprof_auto.tracker import StageTracker, PREFILL, DECODE_STEP  # noqa: E402


class Rec(object):
    def __init__(self):
        self.ops = []

    def push(self, name, payload=None):
        self.ops.append(("push", name, payload))

    def pop(self):
        self.ops.append(("pop",))


def run_generations(t, gens, steps=2):
    """`gens` generate() calls on tracker t, each a prefill (batch 2, 7 tokens) and `steps` steps."""
    for _ in range(gens):
        t.generate_enter()
        for c in range(steps + 1):
            t.forward_exit(t.forward_enter(2, 7 if c == 0 else 1, 0 if c == 0 else 6 + c))
        t.generate_exit()


def gen_ops(batch, prompt, steps, planned=None):
    """The ranges of one generation; `planned`: decode_all's payload (generate()'s steps planned)."""
    ops = [("push", "prefill", batch * prompt), ("pop",)]
    if steps:
        ops.append(("push", "decode_all", planned))
        for i in range(steps):
            ops += [("push", "decode_step", i), ("pop",)]
        ops.append(("pop",))
    return ops


class TrackerRules(unittest.TestCase):
    def setUp(self):
        self.r = Rec()
        self.t = StageTracker(self.r)

    def fwd(self, batch, n, cache):
        k = self.t.forward_enter(batch, n, cache)
        self.t.forward_exit(k)
        return k

    def test_generate_prefill_then_steps_inside_decode_all(self):
        for _ in range(2):
            self.t.generate_enter()
            self.assertEqual(self.fwd(2, 7, 0), PREFILL)
            for c in range(3):
                self.assertEqual(self.fwd(2, 1, 7 + c), DECODE_STEP)
            self.t.generate_exit()
        self.assertEqual(self.r.ops, gen_ops(2, 7, 3) * 2)
        c = self.t.counts.as_dict()
        self.assertEqual((c["batch"], c["prompt_len"], c["decode_steps"], c["new_tokens"]), (2, 7, 3, 4))
        self.assertEqual((c["generate_calls"], c["prefills"], c["decode_steps_total"]), (2, 2, 6))
        self.assertEqual(c["loop_decodes"], 0)  # generate() closes its own
        self.assertTrue(c["consistent"])

    def test_first_generations_as_warmup(self):
        # run.auto_warmup=2: the first two generate() calls each inside a warmup range, nested
        # around their decode_all; the third not; a hand-written loop never
        t = StageTracker(self.r, warmup_generations=2)
        run_generations(t, 3)
        wu = [("push", "warmup", None)] + gen_ops(2, 7, 2) + [("pop",)]
        self.assertEqual(self.r.ops, wu * 2 + gen_ops(2, 7, 2))
        c = t.counts.as_dict()
        self.assertEqual((c["generate_calls"], c["warmup_generations"]), (3, 2))

    def test_warmup_from_the_first_decode_step(self):
        # bench only (LLMPROF_BENCH_WARMUP_FROM=decode): the warm-up generation's prefill stays
        # outside its warmup range, which opens before its decode_all and closes with generate()
        t = StageTracker(self.r, warmup_generations=1, warmup_from="decode")
        run_generations(t, 2)
        g = gen_ops(2, 7, 2)
        self.assertEqual(self.r.ops, g[:2] + [("push", "warmup", None)] + g[2:] + [("pop",)] + g)
        self.assertEqual(t.counts.warmup_generations, 1)
        # "steps=K": the range holds the first K steps only, inside decode_all
        r = self.r = Rec()
        run_generations(StageTracker(r, warmup_generations=1, warmup_from="steps=1"), 2)
        w = g[:3] + [("push", "warmup", None)] + g[3:5] + [("pop",)] + g[5:]
        self.assertEqual(r.ops, w + g)
        # a generation shorter than K: the range closes before its decode_all
        r = self.r = Rec()
        run_generations(StageTracker(r, warmup_generations=1, warmup_from="steps=3"), 1)
        self.assertEqual(r.ops, g[:3] + [("push", "warmup", None)] + g[3:] + [("pop",)])

    def test_decode_all_payload_is_the_planned_steps(self):
        # generate()'s limits (max_new_tokens, max_length): decode_all's payload is the decode
        # steps planned (the tracer foresees the generation's end from it), None when not known
        for limits, planned in (((4, None), 3), ((None, 12), 4), ((None, 8), None), ((1, None), None),
                                ((True, None), None), (("4", None), None), ((None, None), None)):
            r = Rec()
            t = StageTracker(r)
            t.generate_enter(limits)
            t.forward_exit(t.forward_enter(2, 7, 0))
            t.forward_exit(t.forward_enter(2, 1, 7))
            t.generate_exit()
            self.assertEqual(r.ops[2], ("push", "decode_all", planned), limits)
        # a hand-written loop has no generate(): no payload
        r = Rec()
        t = StageTracker(r)
        t.forward_exit(t.forward_enter(1, 5, 0))
        t.forward_exit(t.forward_enter(1, 1, 5))
        self.assertEqual(r.ops[2], ("push", "decode_all", None))

    def test_generation_limits(self):
        class Config(object):
            def __init__(self, new, length):
                self.max_new_tokens, self.max_length = new, length

        class Model(object):
            generation_config = Config(None, 20)

        lim = llmprof_auto.generation_limits
        self.assertEqual(lim(Model(), {}), (None, 20))
        self.assertEqual(lim(Model(), {"max_new_tokens": 128}), (128, None))  # max_new_tokens wins
        self.assertEqual(lim(Model(), {"max_length": 64}), (None, 64))
        # a generation_config passed replaces the model's
        self.assertEqual(lim(Model(), {"generation_config": Config(32, 20)}), (32, None))
        self.assertEqual(lim(Model(), {"generation_config": Config(None, None)}), (None, None))
        self.assertEqual(lim(Model(), {"generation_config": Config(8, 20), "max_new_tokens": 4}), (4, None))
        self.assertEqual(lim(object(), {"max_new_tokens": 2.5}), (None, None))
        self.assertEqual(lim(None, None), (None, None))  # never raises

    def test_no_warmup_range_when_the_program_pushes_its_own(self):
        t = StageTracker(self.r, warmup_generations=1)
        t.saw_range("prefill")
        t.generate_enter()
        t.generate_exit()
        self.assertEqual(self.r.ops, [])
        self.assertEqual(t.counts.warmup_generations, 0)

    def test_generate_without_cache_uses_call_order(self):
        # use_cache=False: every forward sees the whole sequence and no cache
        self.t.generate_enter()
        for n in (5, 6, 7):
            self.fwd(1, n, 0)
        self.t.generate_exit()
        self.assertEqual(self.r.ops, gen_ops(1, 5, 2))

    def test_generate_with_one_new_token_has_no_decode(self):
        self.t.generate_enter()
        self.fwd(1, 4, 0)
        self.t.generate_exit()
        self.assertEqual(self.r.ops, gen_ops(1, 4, 0))
        self.assertEqual(self.t.counts.decode_steps, 0)

    def test_hand_written_loop(self):
        for _ in range(2):
            self.assertEqual(self.fwd(3, 10, 0), PREFILL)
            for c in range(2):
                self.assertEqual(self.fwd(3, 1, 10 + c), DECODE_STEP)
        self.t.close()
        self.assertEqual(self.r.ops, gen_ops(3, 10, 2) * 2)
        self.assertEqual(self.t.counts.decode_steps, 2)
        self.assertEqual(self.t.counts.as_dict()["loop_decodes"], 2)  # llmprof ends them at their last step

    def test_ambiguous_forwards_get_no_range(self):
        self.fwd(1, 8, 0)
        self.assertIsNone(self.fwd(1, 4, 8))   # a second prefill chunk / draft tokens
        self.assertEqual(self.r.ops, [("push", "prefill", 8), ("pop",)])

    def test_unknown_cache_length(self):
        self.assertEqual(self.t.classify(1, 1, None), PREFILL)      # no prefill yet
        self.assertEqual(self.fwd(1, 9, None), PREFILL)
        self.assertEqual(self.fwd(1, 1, None), DECODE_STEP)

    def test_nested_forward_is_part_of_the_outer_one(self):
        k = self.t.forward_enter(1, 5, 0)
        self.assertIsNone(self.t.forward_enter(1, 5, 0))
        self.t.forward_exit(None)
        self.t.forward_exit(k)
        self.assertEqual(self.r.ops, [("push", "prefill", 5), ("pop",)])

    def test_program_ranges_win(self):
        self.t.saw_range("aten::mm")
        self.assertFalse(self.t.user_ranges)
        self.t.saw_range("decode")
        self.assertTrue(self.t.user_ranges)
        self.t.generate_enter()
        self.assertIsNone(self.fwd(1, 5, 0))
        self.assertIsNone(self.fwd(1, 1, 5))
        self.t.generate_exit()
        self.assertEqual(self.r.ops, [])
        # the counts go on: the program's shape is still worth reporting
        c = self.t.counts
        self.assertEqual((c.batch, c.prompt_len, c.decode_steps, c.prefills), (1, 5, 1, 1))

    def test_inconsistent_prompts_are_flagged(self):
        self.fwd(1, 5, 0)
        self.fwd(1, 6, 0)
        self.assertFalse(self.t.counts.consistent)
        self.assertEqual(self.t.counts.prompt_len, 6)


class T(object):
    def __init__(self, *shape):
        self.shape = shape


class Cache(object):
    def __init__(self, n):
        self.n = n

    def get_seq_length(self):
        return self.n


class Inputs(unittest.TestCase):
    def test_forward_inputs(self):
        f = llmprof_auto.forward_inputs
        self.assertEqual(f((), {"input_ids": T(2, 9)}), (2, 9, 0))
        self.assertEqual(f((T(4, 1),), {"past_key_values": Cache(12)}), (4, 1, 12))
        self.assertEqual(f((), {"inputs_embeds": T(3, 5, 64), "past_key_values": None}), (3, 5, 0))
        self.assertEqual(f((), {}), (None, None, 0))

    def test_cache_length(self):
        c = llmprof_auto.cache_length
        self.assertEqual(c(None), 0)
        self.assertEqual(c(Cache(0)), 0)
        self.assertIsNone(c(Cache(T())))                       # a tensor: would sync, unknown
        self.assertEqual(c(((T(1, 8, 33, 64), T(1, 8, 33, 64)),)), 33)   # legacy tuples
        self.assertEqual(c(()), 0)

    def test_describe_model(self):
        class Cfg(object):
            def to_dict(self):
                return {"hidden_size": 8, "weird": object()}

        class M(object):
            config = Cfg()
            dtype = "torch.float16"

            def parameters(self):
                return iter([_N(6), _N(4)])
        d = llmprof_auto.describe_model(M())
        self.assertEqual(d["class"], "M")
        self.assertEqual(d["dtype"], "fp16")
        self.assertEqual(d["parameters"], 10)
        self.assertEqual(d["hf_config"]["hidden_size"], 8)
        self.assertIsInstance(d["hf_config"]["weird"], str)


class _N(object):
    def __init__(self, n):
        self.n = n

    def numel(self):
        return self.n


def run_child(args, extra_path=(), env=None):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([SITE] + list(extra_path) + [FAKES])
    e.pop("LLMPROF_AUTO_STAGES", None)
    e.update(env or {})
    p = subprocess.run([sys.executable] + args, env=e, capture_output=True, text=True, timeout=120)
    return p


# a child's preamble: the ranges llmprof_auto pushes go to `rec` (names, "pop")
RECORDING = r'''
import json, sys, llmprof_auto
rec = []
llmprof_auto._state["push"] = lambda n, p=None: rec.append(n)
llmprof_auto._state["pop"] = lambda: rec.append("pop")
'''


class WholeShim(unittest.TestCase):
    prog = os.path.join(HERE, "fake_hf_program.py")

    def ranges_of(self, mode, env=None):
        p = run_child([self.prog, mode, "--record"], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout.strip().splitlines()[-1])["ranges"]

    def test_generate_gets_stages_and_an_account(self):
        with tempfile.TemporaryDirectory() as d:
            ops = self.ranges_of("generate", {"LLMPROF_AUTO_DIR": d})
            # max_new_tokens=5: decode_all's payload says 4 steps planned
            self.assertEqual([tuple(o) for o in ops], gen_ops(2, 16, 4, 4) * 3)
            files = os.listdir(d)
            self.assertEqual(len(files), 1, files)
            self.assertRegex(files[0], r"^program\.\d+\.json$")
            with open(os.path.join(d, files[0])) as f:
                doc = json.load(f)
        self.assertEqual(doc["model"]["class"], "FakeLlamaForCausalLM")
        self.assertEqual(doc["model"]["dtype"], "bf16")
        self.assertEqual(doc["model"]["parameters"], 512 * 128 + 1000)
        self.assertEqual(doc["model"]["hf_config"]["num_key_value_heads"], 2)
        t = doc["tokens"]
        self.assertEqual((t["batch"], t["prompt_len"], t["decode_steps"], t["new_tokens"]), (2, 16, 4, 5))
        self.assertEqual(doc["stage_ranges"], "pushed by llmprof_auto")

    def test_first_generate_as_warmup(self):
        ops = self.ranges_of("generate", {"LLMPROF_AUTO_WARMUP": "1"})
        wu = [("push", "warmup", None)] + gen_ops(2, 16, 4, 4) + [("pop",)]
        self.assertEqual([tuple(o) for o in ops], wu + gen_ops(2, 16, 4, 4) * 2)
        # not a count: none, and the program runs
        ops = self.ranges_of("generate", {"LLMPROF_AUTO_WARMUP": "one"})
        self.assertEqual([tuple(o) for o in ops], gen_ops(2, 16, 4, 4) * 3)

    def test_hand_written_loop(self):
        ops = self.ranges_of("loop")
        self.assertEqual([tuple(o) for o in ops], gen_ops(2, 16, 4) * 3)

    def test_program_with_its_own_ranges_gets_none(self):
        self.assertEqual(self.ranges_of("ranges"), [])

    def test_program_with_llmprof_nvtx_ranges_gets_none(self):
        code = RECORDING + r'''
sys.argv = ["x", "generate"]
from llmprof_nvtx import llm_range   # the program's own LLM-domain ranges (examples/hf_generate.py)
import fake_hf_program as f
m = f.FakeLlamaForCausalLM()
with llm_range("prefill", payload=32):
    m(input_ids=f.torch.Tensor(2, 16))
print(json.dumps([rec, llmprof_auto.tracker().user_ranges, llmprof_auto.tracker().counts.prefills]))
'''
        p = run_child(["-c", code], extra_path=[HERE])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout.strip().splitlines()[-1]), [[], True, 1])

    def test_compiled_model_keeps_its_stage_hooks_outside(self):
        # torch.compile(model) (the fake OptimizedModule): the wrapper gets the stage hooks, whose
        # hooks run outside the compiled call, and the model's own do nothing while traced: the
        # same ranges as the model alone, once; a direct call of the model (generate() on the
        # wrapper) still gets them. The program timed its forwards from hooks registered before
        # the wrapper was made: the model's stage hooks, registered again then, still run before
        # the program's at both ends (the range popped, and CUPTI switched, before its end event)
        code = RECORDING + r'''
import fake_hf_program as f
m = f.FakeLlamaForCausalLM()
m.register_forward_pre_hook(lambda mod, a: rec.append("prog_pre"))
m.register_forward_hook(lambda mod, a, o: rec.append("prog_post"))
if sys.argv[-1] == "compiled":
    from torch._dynamo.eval_frame import OptimizedModule
    c = OptimizedModule(m)
else:
    c = m
import torch.compiler
torch.compiler.compiling = c is not m   # the wrapper's call traces the model's hooks
c(input_ids=f.torch.Tensor(2, 16))
torch.compiler.compiling = False
llmprof_auto.tracker().generate_exit()
n = len(rec)
m(input_ids=f.torch.Tensor(2, 16))     # the model called directly, eagerly
llmprof_auto.tracker().generate_exit()
kept_out = [getattr(h[0], "_fake_compiler_disabled", False) for h in m._pre + c._pre]
print(json.dumps([len(m._pre), len(m._post), len(c._pre), len(c._post), rec[:n], rec[n:], kept_out]))
'''
        out = {}
        for how in ("plain", "compiled"):
            p = run_child(["-c", 'import sys; sys.argv = ["x", "generate", "%s"]\n' % how + code], extra_path=[HERE])
            self.assertEqual(p.returncode, 0, p.stderr)
            out[how] = json.loads(p.stdout.strip().splitlines()[-1])
        eager = ["prefill", "prog_pre", "pop", "prog_post"]
        self.assertEqual(out["plain"][:2], [2, 2])
        self.assertEqual(out["plain"][4:6], [eager, eager])
        self.assertEqual(out["compiled"][:4], [2, 2, 1, 1])
        # the wrapper's hooks around the compiled call: the program's run inside it
        self.assertEqual(out["compiled"][4], ["prefill", "prog_pre", "prog_post", "pop"])
        self.assertEqual(out["compiled"][5], eager)
        # fullgraph=True refuses a torch.compiler.disable'd hook inside the compiled call: the
        # model's hooks are not, the wrapper's (outside it) are; the program's own come second
        self.assertEqual(out["plain"][6], [True, False, True, False])  # (c is m)
        self.assertEqual(out["compiled"][6], [False, False, True])

    def test_model_compiled_twice_keeps_both_wrappers(self):
        # torch.compile(model) twice: both wrappers keep the stage hooks (the second used to take
        # them from the first), each call through either gets its ranges once
        code = RECORDING + r'''
import fake_hf_program as f
from torch._dynamo.eval_frame import OptimizedModule
import torch.compiler
m = f.FakeLlamaForCausalLM()
c1 = OptimizedModule(m)
c2 = OptimizedModule(m)
out = []
for c in (c1, c2, c1):
    torch.compiler.compiling = True
    c(input_ids=f.torch.Tensor(2, 16))
    torch.compiler.compiling = False
    llmprof_auto.tracker().generate_exit()
    out.append(list(rec))
    del rec[:]
print(json.dumps([len(c1._pre), len(c2._pre), len(m._pre), out]))
'''
        p = run_child(["-c", 'import sys; sys.argv = ["x", "generate"]\n' + code], extra_path=[HERE])
        self.assertEqual(p.returncode, 0, p.stderr)
        n1, n2, nm, out = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual((n1, n2, nm), (1, 1, 1))
        self.assertEqual(out, [["prefill", "pop"]] * 3)

    def test_off_switch(self):
        p = run_child(["-c", "import sys; print('llmprof_auto' in sys.modules)"],
                      env={"LLMPROF_AUTO_STAGES": "0"})
        self.assertEqual(p.stdout.strip(), "False", p.stderr)

    def test_user_sitecustomize_still_runs(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "sitecustomize.py"), "w") as f:
                f.write("import os\nos.environ['USER_SITECUSTOMIZE'] = 'ran'\nMARK = 42\n")
            p = run_child(["-c", "import os, sys, sitecustomize, llmprof_auto; "
                                 "print(os.environ.get('USER_SITECUSTOMIZE'), sitecustomize.MARK, "
                                 "llmprof_auto.installed())"], extra_path=[d])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["ran", "42", "True"])

    def test_failing_user_sitecustomize_is_reported_not_fatal(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "sitecustomize.py"), "w") as f:
                f.write("raise ValueError('boom')\n")
            p = run_child(["-c", "print('alive')"], extra_path=[d])
        self.assertEqual(p.stdout.strip(), "alive")
        self.assertIn("Error in sitecustomize", p.stderr)
        self.assertIn("boom", p.stderr)

    def test_no_eager_imports(self):
        p = run_child(["-c", "import sys; print(sorted(m for m in ('torch', 'transformers', 'llmprof_nvtx') "
                             "if m in sys.modules))"])
        self.assertEqual(p.stdout.strip(), "[]", p.stderr)

    def test_op_ranges(self):
        code = r'''
import json, llmprof_auto
from torch import nn
from transformers.modeling_utils import PreTrainedModel
rec = []
class R(object):
    def push(self, n, p=None): rec.append((n, p))
    def pop(self): rec.append(("pop",))
class Attn(nn.Module): forward = lambda self, x: x
class Mlp(nn.Module): forward = lambda self, x: x
class SparseMoeBlock(nn.Module):
    experts = ()
    forward = lambda self, x: x
class Layer(nn.Module):
    def __init__(self, moe):
        nn.Module.__init__(self); self.self_attn = Attn(); self.mlp = SparseMoeBlock() if moe else Mlp()
    def forward(self, x): return self.mlp(self.self_attn(x))
class Base(nn.Module):
    def __init__(self):
        nn.Module.__init__(self); self.layers = [Layer(False), Layer(True)]
class MForCausalLM(PreTrainedModel):
    def __init__(self): PreTrainedModel.__init__(self); self.model = Base()
m = MForCausalLM()
print(llmprof_auto.add_op_ranges(m, R()))
llmprof_auto.attach(m)
m.model.layers[1](0)
print(json.dumps(rec))
import torch.compiler
torch.compiler.compiling = True   # traced by torch.compile: no range pushed, no graph break
m.model.layers[1](0)
torch.compiler.compiling = False
print(len(rec))
print(json.dumps([getattr(h[0], "_fake_compiler_disabled", False) for h in m._pre + m._post]))
'''
        p = run_child(["-c", code])
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.split("\n")
        self.assertEqual(lines[0], "2")
        self.assertEqual(json.loads(lines[1]), [["layer", 1], ["attention", None], ["pop"], ["moe", None], ["pop"],
                                                ["pop"]])
        # the op ranges' hooks are no-ops while torch.compile traces them; the model's own stage
        # hooks are kept out of it (transformers compiles __call__, hooks included, for a static
        # cache), so that they run at every call
        self.assertEqual(lines[2], "6")
        self.assertEqual(json.loads(lines[3]), [True, True])


if __name__ == "__main__":
    unittest.main()
