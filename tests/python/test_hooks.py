"""Tests of stage hooks by name (python/llmprof_auto/hooks.py and the shim's use of them; run by
tests/e2e/stage_hooks.sh through `python3 -m unittest`): the entry and payload grammar (good and
bad entries), reading payloads without calls, lazy wrapping on import (module functions, methods,
static / class / inherited methods, classes of the main script), calls counted and written into
the account, hooks that never match, bad entries that are reported and skipped, and
multiprocessing children (spawn) that get the hooks through the inherited environment."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SITE = os.path.join(ROOT, "python", "llmprof_auto", "site")
sys.path.insert(0, os.path.join(ROOT, "python"))

from llmprof_auto import hooks  # noqa: E402


class Grammar(unittest.TestCase):
    def test_good_entries(self):
        h = hooks.Hook("sglang.srt.model_executor.model_runner:ModelRunner.forward_decode=decode_step@arg1.batch_size")
        self.assertEqual((h.module, h.qualname, h.stage, h.payload),
                         ("sglang.srt.model_executor.model_runner", ["ModelRunner", "forward_decode"], "decode_step",
                          "arg1.batch_size"))
        self.assertEqual(h.reader, (("arg", 1), [("attr", "batch_size")], False))
        h = hooks.Hook(" pkg:run = prefill ")
        self.assertEqual((h.module, h.qualname, h.stage, h.reader), ("pkg", ["run"], "prefill", None))
        self.assertEqual(hooks.Hook("m:A.B.f=mixed@len(kw.seqs)").reader, (("kw", "seqs"), [], True))
        self.assertEqual(hooks.Hook("m:f=warmup@arg0.shape[0]").reader,
                         (("arg", 0), [("attr", "shape"), ("item", 0)], False))
        self.assertEqual(hooks.Hook("m:f=decode_all@arg2[-1].x").reader,
                         (("arg", 2), [("item", -1), ("attr", "x")], False))
        self.assertEqual(hooks.Hook("__main__:Server.step=decode_step").modules(), ("__main__", "__mp_main__"))

    def test_bad_entries_name_themselves(self):
        bad = {
            "no_colon=prefill": "MODULE:QUALNAME=STAGE",
            "m:f": "MODULE:QUALNAME=STAGE",
            "m:f=decode": "unknown stage 'decode'",
            "m-x:f=prefill": "not a module name",
            "m:f()=prefill": "not a function",
            "m:f=prefill@": "empty payload",
            "m:f=prefill@eval(arg1)": "must start with argN or kw.NAME",
            "m:f=prefill@arg1.__class__": "unexpected '.__class__'",
            "m:f=prefill@arg1.numel()": "unexpected '()'",
            "m:f=prefill@len(arg1": "must start with argN or kw.NAME",
            "m:f=prefill@arg1+arg2": "unexpected '+arg2'",
            "m:f=prefill@arg1" + ".a" * 9: "more than 8 accessors",
        }
        for entry, why in bad.items():
            with self.assertRaises(hooks.HookError, msg=entry) as cm:
                hooks.Hook(entry)
            msg = str(cm.exception)
            self.assertIn(why, msg, entry)
            self.assertNotIn("\n", msg)
            self.assertTrue(entry.split("@")[0].split("=")[0] in msg or entry in msg, msg)

    def test_read_payload(self):
        class B(object):
            seqs = [1, 2, 3]
            n = 7
            shape = (4, 5)
            t = object()

        def f(self, batch, scale=1):
            pass

        def rp(expr, args, kwargs=None, fn=f):
            h = hooks.Hook("m:f=prefill@" + expr)
            pos = hooks._position_of(fn, h.reader[0][1]) if h.reader[0][0] == "kw" else None
            return hooks.read_payload(h, pos, args, kwargs or {})
        b = B()
        self.assertEqual(rp("arg1.n", (None, b)), 7)
        self.assertEqual(rp("len(arg1.seqs)", (None, b)), 3)
        self.assertEqual(rp("arg1.shape[0]", (None, b)), 4)
        self.assertEqual(rp("arg1.shape[-1]", (None, b)), 5)
        self.assertEqual(rp("kw.batch.n", (None, b)), 7)             # positional, found by name
        self.assertEqual(rp("kw.batch.n", (None,), {"batch": b}), 7)  # by keyword
        self.assertEqual(rp("kw.scale", (None, b), {"scale": 3}), 3)
        self.assertIsNone(rp("arg3", (None, b)))                      # not passed
        self.assertIsNone(rp("arg1.t", (None, b)))                    # not an int
        self.assertIsNone(rp("kw.scale", (None, b), {"scale": True}))  # a bool is not a count
        self.assertIsNone(rp("kw.scale", (None, b), {"scale": -1}))


def run_prog(code, hooks_text, extra_env=None, cwd=HERE, record=False):
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([SITE, HERE])
    e.pop("LLMPROF_AUTO_STAGES", None)
    e["LLMPROF_AUTO_HOOKS"] = "\n".join(hooks_text)
    e.update(extra_env or {})
    with tempfile.TemporaryDirectory() as d:
        e["LLMPROF_AUTO_DIR"] = d
        prog = os.path.join(d, "prog.py")
        with open(prog, "w") as f:
            f.write((RECORDER if record else "") + textwrap.dedent(code))
        p = subprocess.run([sys.executable, prog], env=e, capture_output=True, text=True, timeout=120, cwd=cwd)
        accounts = {}
        for name in sorted(os.listdir(d)):
            if name.startswith("program."):
                with open(os.path.join(d, name)) as f:
                    accounts[name] = json.load(f)
    return p, accounts


RECORDER = '''
import json, sys, llmprof_auto
rec = []
llmprof_auto._state["push"] = lambda n, p=None: rec.append([n, p])
llmprof_auto._state["pop"] = lambda: rec.append(["pop"])
'''


def by_hook(account):
    return {h["hook"]: h for h in account["hooks"]}


class WholeShim(unittest.TestCase):
    def test_lazy_wrapping_methods_and_functions(self):
        hk = ["hookee:Engine.forward_prefill=prefill@arg1.num_tokens",
              "hookee:Engine.forward_decode=decode_step@len(kw.batch.seqs)",
              "hookee:Engine.forward_mixed=mixed@arg1.ids.shape[1]",
              "hookee:Engine.sample=decode_all@kw.top_k",
              "hookee:Engine.build=warmup",
              "hookee:warmup=warmup@arg0",
              "hookee:boom=prefill"]
        p, acc = run_prog('''
        assert "hookee" not in sys.modules          # nothing imported eagerly
        import hookee
        e = hookee.Engine.build()
        b = hookee.Batch(3, 40)
        out = [e.forward_prefill(b), e.forward_decode(b), e.forward_decode(batch=b), e.forward_mixed(b),
               hookee.Engine.sample(None, top_k=5), e.sample(None), hookee.warmup(4),
               hookee.SubEngine().forward_decode(b)]
        try:
            hookee.boom()
        except KeyError:
            out.append("raised")
        out.append(hookee.Engine.forward_prefill.__name__)
        print(json.dumps([out, rec]))
        ''', hk, record=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        out, rec = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual(out, ["prefill 40", "decode 3", "decode 3", "mixed", 5, 1, 8, "decode 3", "raised",
                               "forward_prefill"])
        P = lambda n, x: [[n, x], ["pop"]]  # noqa: E731
        self.assertEqual(rec, P("warmup", None) + P("prefill", 40) + P("decode_step", 3) + P("decode_step", 3) +
                         P("mixed", 40) + P("decode_all", 5) + P("decode_all", None) + P("warmup", 4) +
                         P("decode_step", 3) + P("prefill", None))
        (acc,) = acc.values()
        h = by_hook(acc)
        self.assertEqual(acc["stage_ranges"], "stage hooks (stages.hooks)")
        self.assertEqual(h[hk[1]]["calls"], 3)
        self.assertEqual(h[hk[3]]["calls"], 2)
        self.assertEqual(h[hk[3]]["payload_misses"], 1)            # e.sample(None): top_k not passed
        for x in h.values():
            self.assertTrue(x["found"] and x["module_imported"], x)

    def test_unmatched_hooks_and_bad_entries(self):
        hk = ["nosuch.module:f=prefill", "hookee:Nope.forward=prefill", "hookee:Engine.stream=decode_step",
              "hookee:Engine.forward_decode=decode", "hookee:warmup=prefill@eval(arg0)",
              "hookee:Engine.forward_prefill=prefill"]
        p, acc = run_prog('''
        import hookee
        print(json.dumps([hookee.Engine().forward_prefill(hookee.Batch(1, 2)), list(hookee.Engine().stream()), rec]))
        ''', hk, record=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual(out, ["prefill 2", [1], [["prefill", None], ["pop"]]])
        (acc,) = acc.values()
        h = by_hook(acc)
        self.assertEqual(set(h), {hk[0], hk[1], hk[2], hk[5]})
        self.assertFalse(h[hk[0]]["module_imported"])
        self.assertFalse(h[hk[0]]["found"])
        self.assertTrue(h[hk[1]]["module_imported"])
        self.assertIn("Nope", h[hk[1]]["error"])
        self.assertIn("generator", h[hk[2]]["error"])
        self.assertEqual(h[hk[5]]["calls"], 1)
        self.assertEqual(len(acc["hook_errors"]), 2)
        self.assertIn("unknown stage 'decode'", acc["hook_errors"][0])
        self.assertIn("eval(arg0)", acc["hook_errors"][1])

    def test_main_script_classes(self):
        hk = ["__main__:Server.step=decode_step@arg1", "__main__:Server.Inner.go=prefill",
              "__main__:loop=decode_all"]
        p, acc = run_prog('''
        class Server(object):
            def step(self, n):
                return n + 1

            class Inner(object):
                def go(self):
                    return "go"

        def loop():
            return "loop"
        print(json.dumps([Server().step(4), Server.Inner().go(), loop(), rec]))
        ''', hk, record=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual(out, [5, "go", "loop", [["decode_step", 4], ["pop"], ["prefill", None], ["pop"]]])
        h = by_hook(list(acc.values())[0])
        self.assertEqual(h[hk[0]]["calls"], 1)
        self.assertEqual(h[hk[1]]["calls"], 1)
        self.assertFalse(h[hk[2]]["found"])
        self.assertIn("module-level function of the main script", h[hk[2]]["error"])

    def test_spawned_children_get_the_hooks(self):
        hk = ["hookee:Engine.forward_decode=decode_step@len(arg1.seqs)", "__main__:Worker.run=prefill"]
        p, acc = run_prog('''
        import json, multiprocessing as mp, os

        class Worker(object):
            def run(self):
                return os.getpid()

        def child(q):
            import llmprof_auto, hookee
            rec = []
            llmprof_auto._state["push"] = lambda n, p=None: rec.append([n, p])
            llmprof_auto._state["pop"] = lambda: rec.append(["pop"])
            hookee.Engine().forward_decode(hookee.Batch(2, 2))
            Worker().run()
            q.put([llmprof_auto.installed(), rec])

        if __name__ == "__main__":
            ctx = mp.get_context("spawn")
            q = ctx.Queue()
            w = ctx.Process(target=child, args=(q,))
            w.start()
            got = q.get(timeout=60)
            w.join(60)
            print(json.dumps([w.exitcode, got, w.pid]))
        ''', hk)
        self.assertEqual(p.returncode, 0, p.stderr)
        code, got, pid = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual(code, 0)
        self.assertEqual(got, [True, [["decode_step", 2], ["pop"], ["prefill", None], ["pop"]]])
        self.assertIn("program.%d.json" % pid, acc)
        h = by_hook(acc["program.%d.json" % pid])
        self.assertEqual(h[hk[0]]["calls"], 1)
        self.assertEqual(h[hk[1]]["calls"], 1)
        # the parent (and multiprocessing's resource tracker) never imported hookee
        for name, a in acc.items():
            if name != "program.%d.json" % pid:
                self.assertEqual(by_hook(a)[hk[0]]["calls"], 0)
                self.assertFalse(by_hook(a)[hk[0]]["module_imported"])

    def test_no_hooks_no_change(self):
        p, acc = run_prog('import sys\nprint("hookee" in sys.modules)\n', [])
        self.assertEqual(p.stdout.strip(), "False", p.stderr)
        (a,) = acc.values()
        self.assertEqual(a["hooks"], [])
        self.assertEqual(a["stage_ranges"], "pushed by llmprof_auto")


if __name__ == "__main__":
    unittest.main()
