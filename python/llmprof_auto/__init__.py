"""llmprof_auto: prefill / decode stage ranges and the model's shape for unmodified Python programs.

`llmprof run -- python prog.py` starts it through site/sitecustomize.py (run.auto_stages, on by
default; docs/nvtx.md "Programs you did not write for llmprof"). Standard library only, and it
imports nothing heavy itself: an import hook waits until the program imports transformers, then

- wraps ``GenerationMixin.generate`` and hooks the forward of every causal-LM model built
  (``PreTrainedModel.post_init``), so that each top-level forward becomes a ``prefill`` or
  ``decode_step`` range inside ``decode_all`` (tracker.py has the rules), pushed in the NVTX
  domain ``LLM`` through python/llmprof_nvtx.py, where llmprof's tracer and ncu's
  ``LLM@decode_all/`` filter see them;
- with LLMPROF_AUTO_WARMUP=N (run.auto_warmup) puts each of the first N generate() calls inside
  a ``warmup`` range (left out of the reports; llmprof's tracer detaches CUPTI there);
- with LLMPROF_AUTO_OPS=1 (run.auto_ops) pushes ``layer`` (payload: index), ``attention``,
  ``mlp`` / ``moe`` ranges from module hooks, named like the reference workload's;
- writes the program's account to $LLMPROF_AUTO_DIR/program.<pid>.json: the model's class, HF
  config, dtype and parameter count, and the batch / prompt / decode-step counts seen
  (llmprof's MFU/MBU use them when model= and inputs.* are not set).

With LLMPROF_AUTO_HOOKS set (config `stages.hooks`, one entry a line; hooks.py has the grammar) it
also wraps the named functions and methods when their modules are imported, pushes their stage
ranges around each call and counts the calls; the account lists every hook with its calls and,
for one that never matched, why. Hooks replace the automatic stages: with any hook set, the
forward hooks above push no stage range (they still count).

It watches torch.cuda.nvtx.range_push and llmprof_nvtx.push: once the program pushes a stage
range of its own (prefill, decode, decode_all, decode_step, step), it stops pushing stage ranges.
Nothing here may break the program: hooks swallow their own errors (LLMPROF_AUTO_VERBOSE=1
prints them once on stderr).
"""

import atexit
import functools
import json
import os
import sys
import threading
import time
import weakref

from .tracker import StageTracker, STAGE_NAMES, _count  # noqa: F401
from . import hooks as _hooks

__all__ = ["install", "installed", "tracker", "account", "attach", "detach"]

_state = {"installed": False, "tracker": None, "nvtx": None, "push": None, "pop": None,
          "models": {}, "model": None, "last_write": 0.0, "warned": set(),
          "hooks": [], "hook_errors": []}
_lock = threading.Lock()


def _say(what, err=None):
    if os.environ.get("LLMPROF_AUTO_VERBOSE") == "1" and what not in _state["warned"]:
        _state["warned"].add(what)
        sys.stderr.write("llmprof_auto: %s%s\n" % (what, ": %r" % (err,) if err is not None else ""))


# ---- NVTX ranges (python/llmprof_nvtx.py, domain LLM) ----

class _Ranges(object):
    """push/pop through llmprof_nvtx's original functions (the wrapped ones watch the program)."""

    def push(self, name, payload=None):
        if _state["push"] is None:
            _load_nvtx()
        try:
            _state["push"](name, payload)
        except Exception as e:  # pragma: no cover - ctypes failures
            _say("push failed", e)

    def pop(self):
        try:
            _state["pop"]()
        except Exception as e:  # pragma: no cover
            _say("pop failed", e)


def _warmup_generations():
    """LLMPROF_AUTO_WARMUP (run.auto_warmup): how many first generate() calls are warm-up."""
    v = os.environ.get("LLMPROF_AUTO_WARMUP", "0") or "0"
    try:
        n = int(v)
    except ValueError:
        n = -1
    if n < 0:
        _say("LLMPROF_AUTO_WARMUP is not a count (0 or more): none", v)
        return 0
    return n


def _load_nvtx():
    try:
        import llmprof_nvtx
    except Exception as e:
        _say("llmprof_nvtx not importable", e)
        _state["push"], _state["pop"] = (lambda name, payload=None: None), (lambda: None)
        return
    _watch_llmprof_nvtx(llmprof_nvtx)


def _watch_llmprof_nvtx(mod):
    """Keeps the module's own push/pop for us and wraps the module's push to see the program's."""
    push = getattr(mod, "push", None)
    if push is None:
        return
    orig = getattr(push, "_llmprof_auto_orig", push)
    if _state["push"] is None:
        _state["push"], _state["pop"] = orig, mod.pop
    if getattr(push, "_llmprof_auto_orig", None) is None:
        @functools.wraps(orig)
        def watched_push(name, payload=None):
            tr = _state["tracker"]
            if tr is not None:
                tr.saw_range(name)
            return orig(name, payload)
        watched_push._llmprof_auto_orig = orig
        mod.push = watched_push


def _watch_torch_nvtx(mod):
    orig = getattr(mod, "range_push", None)
    if orig is None or getattr(orig, "_llmprof_auto_orig", None) is not None:
        return

    @functools.wraps(orig)
    def range_push(msg, *a, **k):
        tr = _state["tracker"]
        if tr is not None:
            tr.saw_range(msg)
        return orig(msg, *a, **k)
    range_push._llmprof_auto_orig = orig
    mod.range_push = range_push


# ---- reading a forward call's inputs (duck-typed: tensors are anything with .shape) ----

def _shape(x):
    s = getattr(x, "shape", None)
    try:
        return tuple(int(d) for d in s) if s is not None else None
    except Exception:
        return None


def forward_inputs(args, kwargs):
    """(batch, input tokens per sequence, tokens in the cache or None when unknown) of a
    causal LM's forward(input_ids, ..., past_key_values=...)."""
    ids = kwargs.get("input_ids")
    if ids is None and args:
        ids = args[0]
    shape = _shape(ids)
    if shape is None:
        shape = _shape(kwargs.get("inputs_embeds"))  # (batch, tokens, hidden)
    batch = tokens = None
    if shape:
        batch = shape[0]
        tokens = shape[1] if len(shape) >= 2 else 1
    return batch, tokens, cache_length(kwargs.get("past_key_values", kwargs.get("past_key_value")))


def cache_length(pkv):
    """Tokens held by a KV cache: 0 for none; None when it cannot be read without a GPU sync."""
    if pkv is None:
        return 0
    get = getattr(pkv, "get_seq_length", None)
    if get is not None:
        try:
            n = get()
        except Exception:
            return None
        return n if isinstance(n, int) else None  # a tensor (StaticCache) would sync: unknown
    try:  # legacy tuple of (key, value) per layer: key is (batch, heads, tokens, head_dim)
        if len(pkv) == 0:
            return 0
        s = _shape(pkv[0][0])
        return s[-2] if s and len(s) >= 2 else None
    except Exception:
        return None


# ---- the program's account ----

_DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16", "torch.float32": "fp32",
           "torch.float8_e4m3fn": "fp8", "torch.float8_e5m2": "fp8"}


def describe_model(model):
    """{"class", "hf_config", "dtype", "parameters"} of a Hugging Face model (duck-typed)."""
    out = {"class": type(model).__name__}
    cfg = getattr(model, "config", None)
    try:
        d = cfg.to_dict() if hasattr(cfg, "to_dict") else dict(vars(cfg)) if cfg is not None else None
        out["hf_config"] = json.loads(json.dumps(d, default=str)) if d is not None else None
    except Exception as e:
        _say("cannot read the model config", e)
        out["hf_config"] = None
    dtype = getattr(model, "dtype", None)
    out["dtype"] = _DTYPES.get(str(dtype), str(dtype) if dtype is not None else None)
    try:
        out["parameters"] = int(sum(p.numel() for p in model.parameters()))
    except Exception:
        out["parameters"] = None
    return out


def account():
    """What the program ran, as written to program.<pid>.json."""
    tr = _state["tracker"]
    who = "the program's own" if tr is not None and tr.user_ranges else "pushed by llmprof_auto"
    if _state["hooks"]:
        who = "stage hooks (stages.hooks)"
    doc = {"schema_version": 1, "writer": "llmprof_auto", "pid": os.getpid(),
           "argv": [str(a) for a in sys.argv[:16]],
           "stage_ranges": who,
           "hooks": [h.as_dict() for h in _state["hooks"]],
           "hook_errors": list(_state["hook_errors"]),
           "tokens": tr.counts.as_dict() if tr is not None else None,
           "models": sorted(set(m["class"] for m in _state["models"].values()))}
    if _state["model"] is not None:
        doc["model"] = _state["model"]
    return doc


def write_account(force=False):
    out = os.environ.get("LLMPROF_AUTO_DIR")
    if not out:
        return
    now = time.monotonic()
    if not force and now - _state["last_write"] < 1.0:
        return
    _state["last_write"] = now
    try:
        os.makedirs(out, exist_ok=True)
        path = os.path.join(out, "program.%d.json" % os.getpid())
        tmp = path + ".tmp.%d" % threading.get_ident()
        with open(tmp, "w") as f:
            json.dump(account(), f, indent=1, sort_keys=True, default=str)
        os.replace(tmp, path)
    except Exception as e:
        _say("cannot write the account", e)


# ---- hooks on transformers models ----

def _is_generator(model):
    gm = sys.modules.get("transformers.generation.utils")
    cls = getattr(gm, "GenerationMixin", None) if gm is not None else None
    if cls is not None and isinstance(model, cls):
        return True
    name = type(model).__name__
    return name.endswith(("ForCausalLM", "ForConditionalGeneration", "LMHeadModel"))


def _compiler(name):
    """torch.compiler.<name> of the torch the program imported, or None."""
    return getattr(getattr(sys.modules.get("torch"), "compiler", None), name, None)


def _eager(fn):
    """`fn` kept out of torch.compile (torch.compiler.disable): transformers compiles a model's
    __call__, its forward hooks included, for a static KV cache, and a compiled hook would push
    its ranges once while tracing instead of at every call (bench/tracer/README.md run 31)."""
    disable = _compiler("disable")
    try:
        return disable(fn) if disable is not None else fn
    except Exception:
        return fn


def _untraced(fn):
    """`fn` as a no-op while torch.compile traces it (torch.compiler.is_compiling): the op ranges'
    hooks inside a compiled model, which must neither break its graph (fullgraph=True fails on a
    break; a break per layer would change the program measured) nor push ranges once at tracing
    time. Such layers get no op ranges; their kernels stay in the stage (docs/nvtx.md)."""
    compiling = _compiler("is_compiling")
    if compiling is None:
        return fn

    @functools.wraps(fn)
    def hook(*a, **k):
        if compiling():
            return None
        return fn(*a, **k)
    return hook


def _register(module, pre, post, wrap=_eager):
    """Forward pre/post hooks with kwargs (torch >= 2.0), always_call when available, through
    `wrap` (_eager: kept out of torch.compile); their handles, or None when this torch has no
    kwargs hooks. Both run before the program's own hooks of the module, whenever those were
    registered (prepend): the range is pushed before the program's pre-hooks and popped before
    its post-hooks, where the tracer may attach or detach CUPTI, so that a program timing its
    forwards from its hooks sees that switch in the same step as the range does (bench/tracer/
    README.md run 32: hooks moved under torch.compile(model) came after the program's)."""
    pre, post = wrap(pre), wrap(post)
    try:
        h1 = module.register_forward_pre_hook(pre, with_kwargs=True, prepend=True)
    except TypeError:
        return None
    try:
        h2 = module.register_forward_hook(post, with_kwargs=True, always_call=True, prepend=True)
    except TypeError:
        h2 = module.register_forward_hook(post, with_kwargs=True, prepend=True)
    return [h1, h2]


def attach(model, hosts=()):
    """Hooks a causal LM's forward (and, with LLMPROF_AUTO_OPS=1, its layers). Idempotent. `hosts`:
    the modules whose call runs the model's (torch.compile's wrappers, _patch_dynamo; a model
    compiled twice has two): hooked too, and the model's own hooks then do nothing while compile
    traces them (_untraced), so that a wrapper's compiled call has no break, and a direct call of
    the model (generate() on a wrapper runs the model's) still gets its ranges."""
    if getattr(model, "_llmprof_auto", False) or not _is_generator(model):
        return False
    tr = _state["tracker"]
    kinds = threading.local()

    def pre(module, args, kwargs):
        try:
            if id(model) not in _state["models"]:
                _note_model(model)
            b, n, c = forward_inputs(args, kwargs)
            stack = getattr(kinds, "stack", None)
            if stack is None:
                stack = kinds.stack = []
            stack.append(tr.forward_enter(b, n, c))
        except Exception as e:
            _say("forward pre-hook failed", e)

    def post(module, args, kwargs, output):
        try:
            stack = getattr(kinds, "stack", None)
            if stack:
                tr.forward_exit(stack.pop())
        except Exception as e:
            _say("forward hook failed", e)

    try:
        model._llmprof_auto = True
    except Exception:
        return False
    handles = _register(model, pre, post, _untraced if hosts else _eager)
    for host in hosts:
        outer = _register(host, pre, post) if handles is not None else None
        handles = handles + outer if outer is not None else None
    if handles is None:
        return False
    model._llmprof_auto_handles = handles
    model._llmprof_auto_hosts = [weakref.ref(h) for h in hosts]
    if os.environ.get("LLMPROF_AUTO_OPS") == "1" and not getattr(model, "_llmprof_auto_ops", False):
        model._llmprof_auto_ops = True
        add_op_ranges(model)
    return True


def detach(model):
    """Removes what attach() hooked on a model (not the op ranges); attach() can hook it again."""
    for h in getattr(model, "_llmprof_auto_handles", None) or []:
        if h is not None and hasattr(h, "remove"):
            h.remove()
    model._llmprof_auto_handles = None
    model._llmprof_auto = False


def _note_model(model):
    with _lock:
        if id(model) in _state["models"]:
            return
        d = describe_model(model)
        _state["models"][id(model)] = d
        if _state["model"] is None:
            _state["model"] = d
    write_account(force=True)


def add_op_ranges(model, ranges=None):
    """layer (payload: index) > attention, mlp / moe ranges from module hooks."""
    r = ranges or _Ranges()
    base = getattr(model, "model", None) or getattr(model, "transformer", None) or model
    base = getattr(base, "language_model", None) or base
    layers = getattr(base, "layers", None) or getattr(base, "h", None) or []

    def ranged(module, name, payload=None):
        def pre(*_a, **_k):
            r.push(name, payload)

        def post(*_a, **_k):
            r.pop()
        pre, post = _untraced(pre), _untraced(post)
        module.register_forward_pre_hook(pre)
        try:
            module.register_forward_hook(post, always_call=True)
        except TypeError:
            module.register_forward_hook(post)

    n = 0
    for i, layer in enumerate(layers):
        ranged(layer, "layer", i)
        n += 1
        for attr in ("self_attn", "attn", "attention"):
            if getattr(layer, attr, None) is not None:
                ranged(getattr(layer, attr), "attention")
                break
        for attr in ("mlp", "block_sparse_moe", "feed_forward"):
            m = getattr(layer, attr, None)
            if m is not None:
                moe = "moe" in type(m).__name__.lower() or hasattr(m, "experts")
                ranged(m, "moe" if moe else "mlp")
                break
    return n


# ---- patches, applied when the modules are imported ----

def _patch_method(mod, cls_name, name, wrap):
    """Replaces mod.<cls_name>.<name> by wrap(original), functools.wraps'd and marked with the
    original, once (a wrapper already there is kept)."""
    cls = getattr(mod, cls_name, None)
    orig = getattr(cls, name, None) if cls is not None else None
    if orig is None or getattr(orig, "_llmprof_auto_orig", None) is not None:
        return
    new = functools.wraps(orig)(wrap(orig))
    new._llmprof_auto_orig = orig
    setattr(cls, name, new)


def _patch_modeling_utils(mod):
    def wrap(orig):
        def post_init(self, *a, **k):
            r = orig(self, *a, **k)
            try:
                attach(self)
            except Exception as e:
                _say("cannot hook the model", e)
            return r
        return post_init
    _patch_method(mod, "PreTrainedModel", "post_init", wrap)


def generation_limits(model, kwargs):
    """(max_new_tokens, max_length) of a generate() call: its keyword arguments, else the
    generation_config it passes, else the model's (attribute reads only; None where not an int
    >= 0). For decode_all's payload, the steps planned (tracker.py)."""
    try:
        config = kwargs.get("generation_config")
        if config is None:
            config = getattr(model, "generation_config", None)
        out = []
        for name in ("max_new_tokens", "max_length"):
            v = kwargs.get(name)
            if v is None and config is not None:
                v = getattr(config, name, None)
            out.append(_count(v))
        if out[0] is not None:
            out[1] = None  # transformers: max_new_tokens wins over max_length
        return tuple(out)
    except Exception:
        return (None, None)


def _patch_generation_utils(mod):
    tr = _state["tracker"]

    def wrap(orig):
        def generate(self, *a, **k):
            try:
                attach(self)  # a model built before the hooks (unpickled, from another library)
            except Exception:
                pass
            tr.generate_enter(generation_limits(self, k))
            try:
                return orig(self, *a, **k)
            finally:
                tr.generate_exit()
        return generate
    _patch_method(mod, "GenerationMixin", "generate", wrap)


def _patch_dynamo(mod):
    """torch.compile(model) wraps a hooked model in an OptimizedModule whose compiled call runs the
    model's hooks inside the compiled region: kept out of it (_eager), they break the graph,
    which fullgraph=True refuses. So the wrapper gets the stage hooks, whose own hooks run before
    and after the compiled call, and the model's become no-ops while traced (attach's `hosts`;
    bench/tracer/README.md run 31)."""
    def wrap(orig):
        def __init__(self, *a, **k):
            orig(self, *a, **k)
            try:
                inner = getattr(self, "_orig_mod", None)
                if inner is not None and getattr(inner, "_llmprof_auto_handles", None):
                    hosts = [r() for r in getattr(inner, "_llmprof_auto_hosts", None) or []]
                    detach(inner)
                    attach(inner, [h for h in hosts if h is not None] + [self])
            except Exception as e:
                _say("cannot move the hooks out of torch.compile", e)
        return __init__
    _patch_method(mod, "OptimizedModule", "__init__", wrap)


_PATCHES = {
    "torch._dynamo.eval_frame": _patch_dynamo,
    "transformers.modeling_utils": _patch_modeling_utils,
    "transformers.generation.utils": _patch_generation_utils,
    "torch.cuda.nvtx": _watch_torch_nvtx,
    "llmprof_nvtx": _watch_llmprof_nvtx,
}


class _PostImport(object):
    """A meta path finder that runs a patch right after a watched module is executed. It finds
    the module with the other finders and wraps only that spec's loader.exec_module (an instance
    attribute, removed again once the module ran): the module's loader keeps its type."""

    def __init__(self, patches):
        self.patches = patches
        self.busy = set()

    def find_spec(self, fullname, path=None, target=None):
        patch = self.patches.get(fullname)
        if patch is None or fullname in self.busy:
            return None
        self.busy.add(fullname)
        try:
            spec = None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self.busy.discard(fullname)
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return None
        orig = loader.exec_module

        def exec_module(module):
            try:
                orig(module)
            finally:
                try:
                    del loader.exec_module
                except AttributeError:
                    pass
            try:
                patch(module)
            except Exception as e:
                _say("cannot patch %s" % fullname, e)
        try:
            loader.exec_module = exec_module
        except Exception:
            return None  # a loader without instance attributes: imported unpatched
        return spec


# ---- stage hooks by name (hooks.py) ----

def _load_hooks():
    """Parses LLMPROF_AUTO_HOOKS; a bad entry is recorded in the account and skipped."""
    out, errors = [], []
    for line in os.environ.get("LLMPROF_AUTO_HOOKS", "").splitlines()[:_hooks.MAX_HOOKS]:
        if not line.strip():
            continue
        try:
            out.append(_hooks.Hook(line))
        except _hooks.HookError as e:
            errors.append(str(e))
            _say("bad hook", e)
    return out, errors


def _hook_exit(_hook):
    write_account()   # at most once a second: a worker killed without atexit still leaves its counts


def _hook_patch(module_hooks):
    ranges = _Ranges()

    def patch(module):
        for h in module_hooks:
            _hooks.apply(module, h, ranges, None, _hook_exit)
            if not h.found:
                _say("hook %s not applied" % h.text, h.error)
    return patch


def _chain(first, second):
    def both(module):
        try:
            first(module)
        finally:
            second(module)
    return both


def _watch_main_classes(main_hooks):
    """Classes of the main script are never imported: wraps builtins.__build_class__ so that a
    class statement of __main__ / __mp_main__ naming a hooked class gets its methods wrapped."""
    import builtins
    by_class = {}
    for h in main_hooks:
        if len(h.qualname) < 2:
            h.error = "a module-level function of the main script cannot be hooked (a method of its classes can)"
            continue
        by_class.setdefault(".".join(h.qualname[:-1]), []).append(h)
    if not by_class:
        return
    orig = builtins.__build_class__
    if getattr(orig, "_llmprof_auto_orig", None) is not None:
        return
    ranges = _Ranges()

    @functools.wraps(orig)
    def build_class(func, name, *bases, **kw):
        cls = orig(func, name, *bases, **kw)
        try:
            if getattr(cls, "__module__", None) in _hooks.MAIN_NAMES:
                for h in by_class.get(getattr(cls, "__qualname__", name), ()):
                    h.imported = True
                    try:
                        _hooks.apply_to_class(cls, h, h.qualname[-1], ranges, None, _hook_exit)
                        h.found, h.error = True, None
                    except Exception as e:
                        h.error = "%s: %s" % (type(e).__name__, e)
        except Exception as e:
            _say("class hook failed", e)
        return cls
    build_class._llmprof_auto_orig = orig
    builtins.__build_class__ = build_class


def _after_fork_in_child():
    for h in _state["hooks"]:
        h.calls = h.payload_misses = 0


def _at_exit():
    tr = _state["tracker"]
    if tr is not None:
        try:
            tr.close()
        except Exception:
            pass
    write_account(force=True)


def install():
    """Starts the shim (once): the import hook, patches for modules already imported, the
    exit handler. Returns the tracker."""
    with _lock:
        if _state["installed"]:
            return _state["tracker"]
        _state["installed"] = True
        _state["tracker"] = StageTracker(
            _Ranges(), on_change=write_account, warmup_generations=_warmup_generations(),
            warmup_from=os.environ.get("LLMPROF_BENCH_WARMUP_FROM", "generate"))  # bench only
    patches = dict(_PATCHES)
    _state["hooks"], _state["hook_errors"] = _load_hooks()
    if _state["hooks"]:
        _state["tracker"].user_ranges = True   # hooks replace the automatic stages
        by_module = {}
        for h in _state["hooks"]:
            for name in h.modules():
                by_module.setdefault(name, []).append(h)
        for name, hs in by_module.items():
            if name in _hooks.MAIN_NAMES:
                continue
            p = _hook_patch(hs)
            patches[name] = _chain(patches[name], p) if name in patches else p
        _watch_main_classes([h for h in _state["hooks"] if h.module == "__main__"])
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork_in_child)
    sys.meta_path.insert(0, _PostImport(patches))
    for name, patch in patches.items():
        if name in sys.modules:
            try:
                patch(sys.modules[name])
            except Exception as e:
                _say("cannot patch %s" % name, e)
    atexit.register(_at_exit)
    return _state["tracker"]


def installed():
    return _state["installed"]


def tracker():
    return _state["tracker"]
