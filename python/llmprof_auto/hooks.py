"""hooks.py: stage hooks by name (config `stages.hooks`, docs/nvtx.md "Stage hooks by name").

Each hook names a function and the stage its calls are:

    MODULE:QUALNAME=STAGE[@PAYLOAD]
    sglang.srt.model_executor.model_runner:ModelRunner.forward_decode=decode_step@arg1.batch_size

MODULE is a dotted module name (``__main__`` is the script Python was started with; in
multiprocessing children it is also matched as ``__mp_main__``), QUALNAME a function of the module
or a method of a class in it (``Outer.Inner.method``; static and class methods too). STAGE is one of
STAGES. PAYLOAD, optional, says how to read the range's payload (tokens in the batch) from the
call's arguments, with a tiny accessor grammar (no eval, no calls, no GPU sync):

    PAYLOAD := TERM | 'len(' TERM ')'
    TERM    := ROOT ('.' NAME | '[' ['-'] DIGITS ']')*        at most 8 accessors
    ROOT    := 'arg' DIGITS      the N-th positional argument (arg0 is self for a method)
             | 'kw.' NAME        the argument of that name, by keyword or by its position
    NAME    := [A-Za-z][A-Za-z0-9_]*                           (no leading underscore)

The value must be a Python int >= 0 (``len(...)``, a ``.shape[0]``, an int attribute); anything
else (a tensor, None) gives no payload for that call and counts as a payload miss, never an error.

The shim (__init__.py) wraps each target right after its module is executed (an import hook, no
eager import); classes of ``__main__`` are wrapped when the class statement runs (a wrapper around
``builtins.__build_class__``, installed only for such hooks). A wrapper pushes the stage range
(domain LLM) around the call, counts the call, and never changes the call's result or exceptions.
Standard library only; thread-safe under the GIL (counters are plain ints).
"""

import functools
import re

STAGES = ("prefill", "decode_step", "decode_all", "mixed", "warmup")
MAX_HOOKS = 64
MAX_ACCESSORS = 8
MAIN_NAMES = ("__main__", "__mp_main__")

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_ROOT = re.compile(r"arg([0-9]{1,2})|kw\.([A-Za-z][A-Za-z0-9_]*)")
_ACCESS = re.compile(r"\.([A-Za-z][A-Za-z0-9_]*)|\[(-?[0-9]{1,6})\]")


class HookError(ValueError):
    """A hook entry that does not parse; the message names the entry and what is wrong."""


def parse_payload(text):
    """(root, accessors, use_len) of a payload expression; root is ("arg", N) or ("kw", NAME),
    accessors a list of ("attr", NAME) / ("item", N). Raises HookError."""
    s = text.strip()
    use_len = False
    if s.startswith("len(") and s.endswith(")"):
        use_len, s = True, s[4:-1].strip()
    m = _ROOT.match(s)
    if not m:
        raise HookError("payload '%s' must start with argN or kw.NAME" % text)
    root = ("arg", int(m.group(1))) if m.group(1) is not None else ("kw", m.group(2))
    acc, pos = [], m.end()
    while pos < len(s):
        a = _ACCESS.match(s, pos)
        if not a:
            raise HookError("payload '%s': unexpected '%s' (only .name, [N] and len(...))" % (text, s[pos:]))
        acc.append(("attr", a.group(1)) if a.group(1) is not None else ("item", int(a.group(2))))
        pos = a.end()
        if len(acc) > MAX_ACCESSORS:
            raise HookError("payload '%s': more than %d accessors" % (text, MAX_ACCESSORS))
    return root, acc, use_len


class Hook(object):
    """One parsed entry, and what happened to it in this process."""

    def __init__(self, text):
        self.text = text
        entry = text.strip()
        if ":" not in entry or "=" not in entry:
            raise HookError("hook '%s' is not MODULE:QUALNAME=STAGE[@PAYLOAD]" % text)
        target, _, rest = entry.partition("=")
        module, _, qual = target.partition(":")
        stage, _, payload = rest.partition("@")
        module, qual, stage = module.strip(), qual.strip(), stage.strip()
        if not _DOTTED.match(module):
            raise HookError("hook '%s': '%s' is not a module name" % (text, module))
        if not _DOTTED.match(qual) or qual.count(".") >= 8:
            raise HookError("hook '%s': '%s' is not a function or Class.method name" % (text, qual))
        if stage not in STAGES:
            raise HookError("hook '%s': unknown stage '%s' (expected one of %s)" % (text, stage, ", ".join(STAGES)))
        self.module, self.qualname, self.stage = module, qual.split("."), stage
        self.payload = payload.strip() or None
        if "@" in rest and not self.payload:
            raise HookError("hook '%s': empty payload after '@'" % text)
        try:
            self.reader = parse_payload(self.payload) if self.payload else None
        except HookError as e:
            raise HookError("hook '%s': %s" % (text, e))
        self.calls = 0
        self.payload_misses = 0
        self.imported = False      # its module was executed in this process
        self.found = False         # the target was found and wrapped
        self.error = None          # why it was not, when its module was imported

    def modules(self):
        return MAIN_NAMES if self.module == "__main__" else (self.module,)

    def as_dict(self):
        return {"hook": self.text, "stage": self.stage, "module_imported": self.imported,
                "found": self.found, "calls": self.calls, "payload_misses": self.payload_misses,
                "error": self.error}


def parse_hooks(texts):
    """Hooks of a list of entries (the environment's LLMPROF_AUTO_HOOKS, one a line). Raises
    HookError for the first bad one."""
    out = []
    for t in texts:
        if t.strip():
            out.append(Hook(t))
    if len(out) > MAX_HOOKS:
        raise HookError("more than %d hooks" % MAX_HOOKS)
    return out


# ---- reading the payload of a call ----

def _position_of(fn, name):
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    names = code.co_varnames[:code.co_argcount]
    return names.index(name) if name in names else None


def read_payload(hook, pos_of_kw, args, kwargs):
    """The payload of one call, or None (not an int >= 0, or an accessor failed)."""
    root, acc, use_len = hook.reader
    if root[0] == "arg":
        if root[1] >= len(args):
            return None
        v = args[root[1]]
    elif root[1] in kwargs:
        v = kwargs[root[1]]
    elif pos_of_kw is not None and pos_of_kw < len(args):
        v = args[pos_of_kw]
    else:
        return None
    for kind, x in acc:
        v = getattr(v, x) if kind == "attr" else v[x]
    if use_len:
        v = len(v)
    if type(v) is int and v >= 0:   # bool, tensors and numpy scalars are not taken (a tensor may sync)
        return v
    return None


# ---- wrapping ----

def wrap(fn, hook, ranges, on_enter=None, on_exit=None):
    """A function that pushes hook.stage around fn (payload from hook.reader), counting calls."""
    if getattr(fn, "_llmprof_hook", None) is hook:
        return fn
    pos = _position_of(fn, hook.reader[0][1]) if hook.reader and hook.reader[0][0] == "kw" else None
    stage = hook.stage

    @functools.wraps(fn)
    def hooked(*args, **kwargs):
        payload = None
        try:
            hook.calls += 1
            if hook.reader is not None:
                try:
                    payload = read_payload(hook, pos, args, kwargs)
                except Exception:
                    payload = None
                if payload is None:
                    hook.payload_misses += 1
            if on_enter is not None:
                on_enter(hook)
            ranges.push(stage, payload)
        except Exception:
            pass
        try:
            return fn(*args, **kwargs)
        finally:
            try:
                ranges.pop()
                if on_exit is not None:
                    on_exit(hook)
            except Exception:
                pass
    hooked._llmprof_hook = hook
    return hooked


def _code_flags(fn):
    code = getattr(fn, "__code__", None)
    return code.co_flags if code is not None else 0


_CO_ASYNC = 0x20 | 0x80 | 0x100 | 0x200   # generator, coroutine, iterable coroutine, async generator


def _wrap_callable(fn, hook, ranges, enter, exit_):
    if not callable(fn):
        raise TypeError("not a function")
    if _code_flags(fn) & _CO_ASYNC:
        raise TypeError("a generator or async function (the range would close before its work runs)")
    return wrap(fn, hook, ranges, enter, exit_)


def apply_to_class(cls, hook, attr, ranges, enter=None, exit_=None):
    """Wraps method `attr` of cls (its own, or inherited: then set on cls). Raises on failure."""
    raw = None
    for k in getattr(cls, "__mro__", (cls,)):
        if attr in getattr(k, "__dict__", {}):
            raw = k.__dict__[attr]
            break
    if raw is None:
        raise AttributeError("class %s has no attribute '%s'" % (getattr(cls, "__qualname__", cls), attr))
    if isinstance(raw, staticmethod):
        new = staticmethod(_wrap_callable(raw.__func__, hook, ranges, enter, exit_))
    elif isinstance(raw, classmethod):
        new = classmethod(_wrap_callable(raw.__func__, hook, ranges, enter, exit_))
    else:
        new = _wrap_callable(raw, hook, ranges, enter, exit_)
    setattr(cls, attr, new)


def apply(module, hook, ranges, enter=None, exit_=None):
    """Finds hook's target in an executed module and wraps it. Returns True when wrapped; else
    sets hook.error."""
    hook.imported = True
    try:
        owner = module
        for part in hook.qualname[:-1]:
            owner = getattr(owner, part)
        name = hook.qualname[-1]
        if isinstance(owner, type):
            apply_to_class(owner, hook, name, ranges, enter, exit_)
        else:
            fn = getattr(owner, name)
            if getattr(fn, "_llmprof_hook", None) is not hook:
                setattr(owner, name, _wrap_callable(fn, hook, ranges, enter, exit_))
    except Exception as e:
        hook.error = "%s: %s" % (type(e).__name__, e)
        return False
    hook.found, hook.error = True, None
    return True
