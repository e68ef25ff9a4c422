"""llmprof_nvtx: NVTX ranges in the ``LLM`` domain for Python inference code.

llmprof (and Nsight Compute's ``--nvtx-include "LLM@decode_all/"``) understands a fixed stage
structure: ``prefill`` (payload: prompt tokens x batch), ``decode_all`` (payload, optional: the
decode steps planned) containing one ``decode_step`` per generated token (payload: step index), op
ranges inside (see docs/nvtx.md).
This module emits exactly that, from the standard library only:

    from llmprof_nvtx import llm_range, llm_ranged

    with llm_range("prefill", payload=batch * prompt_len):
        logits = model(input_ids)

    @llm_ranged("sample")
    def sample(logits): ...

Ranges are push/pop ranges of the calling thread, in the named domain ``LLM`` (what
``torch.cuda.nvtx.range_push("LLM@prefill")`` can NOT make: that is a default-domain range with an
"@" in its name). They go through ``libnvtx3interop.so.1`` (ctypes), which ships with the CUDA
toolkit and with the ``nvidia-nvtx`` pip package that PyTorch installs. Without it every call is a
no-op; set LLMPROF_NVTX_VERBOSE=1 to get a one-line notice on stderr saying so. Set
LLMPROF_NVTX_LIB=/path/to/libnvtx3interop.so.1 to try that library first.

Push ranges around the code that LAUNCHES the GPU work: profilers attribute a kernel to the ranges
open on the launching thread at launch time.
"""

import contextlib
import ctypes
import functools
import glob
import os
import sys
import threading

__all__ = ["llm_range", "llm_ranged", "push", "pop", "available", "library_path", "DOMAIN"]

DOMAIN = "LLM"
_LIB_NAME = "libnvtx3interop.so.1"

# nvtxEventAttributes_t (NVTX v3, version 3): the payload union is 8 bytes, the message union a
# pointer.
_NVTX_VERSION = 3
_NVTX_PAYLOAD_TYPE_UNSIGNED_INT64 = 1
_NVTX_MESSAGE_TYPE_ASCII = 1


class _Payload(ctypes.Union):
    _fields_ = [("ullValue", ctypes.c_uint64), ("llValue", ctypes.c_int64),
                ("dValue", ctypes.c_double)]


class _Message(ctypes.Union):
    _fields_ = [("ascii", ctypes.c_char_p), ("unicode", ctypes.c_wchar_p),
                ("registered", ctypes.c_void_p)]


class _EventAttributes(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint16), ("size", ctypes.c_uint16),
                ("category", ctypes.c_uint32), ("colorType", ctypes.c_int32),
                ("color", ctypes.c_uint32), ("payloadType", ctypes.c_int32),
                ("reserved0", ctypes.c_int32), ("payload", _Payload),
                ("messageType", ctypes.c_int32), ("message", _Message)]


def _candidates():
    """Where libnvtx3interop.so.1 may be, most specific first."""
    env = os.environ.get("LLMPROF_NVTX_LIB")
    if env:
        yield env
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root:
            yield os.path.join(root, "lib64", _LIB_NAME)
            yield os.path.join(root, "lib", _LIB_NAME)
    for root in sorted(glob.glob("/usr/local/cuda*"), reverse=True):
        yield os.path.join(root, "lib64", _LIB_NAME)
        yield os.path.join(root, "targets", "x86_64-linux", "lib", _LIB_NAME)
        yield os.path.join(root, "targets", "sbsa-linux", "lib", _LIB_NAME)
    # the nvidia-nvtx wheel (nvidia/nvtx/lib, or nvidia/cu13/lib in newer layouts)
    for entry in sys.path:
        if entry and os.path.isdir(os.path.join(entry, "nvidia")):
            for path in sorted(glob.glob(os.path.join(entry, "nvidia", "*", "lib", _LIB_NAME))):
                yield path
    for var in ("LD_LIBRARY_PATH",):
        for d in os.environ.get(var, "").split(":"):
            if d:
                yield os.path.join(d, _LIB_NAME)
    yield _LIB_NAME  # the dynamic loader's own search (ldconfig cache)


class _Nvtx:
    def __init__(self):
        self.lib = None
        self.path = None
        self.domain = None
        self.lock = threading.Lock()
        self.loaded = False

    def load(self):
        with self.lock:
            if self.loaded:
                return self.lib is not None
            self.loaded = True
            for path in _candidates():
                if os.sep in path and not os.path.exists(path):
                    continue
                try:
                    lib = ctypes.CDLL(path)
                    create = lib.nvtxDomainCreateA
                    push = lib.nvtxDomainRangePushEx
                    pop = lib.nvtxDomainRangePop
                except (OSError, AttributeError):
                    continue
                create.restype = ctypes.c_void_p
                create.argtypes = [ctypes.c_char_p]
                push.restype = ctypes.c_int
                push.argtypes = [ctypes.c_void_p, ctypes.POINTER(_EventAttributes)]
                pop.restype = ctypes.c_int
                pop.argtypes = [ctypes.c_void_p]
                self.lib, self.path = lib, path
                self.domain = create(DOMAIN.encode())
                return True
            if os.environ.get("LLMPROF_NVTX_VERBOSE") == "1":
                sys.stderr.write("llmprof_nvtx: %s not found; NVTX ranges are off\n" % _LIB_NAME)
            return False


_nvtx = _Nvtx()
_names = {}


def available():
    """True when ranges are emitted (the NVTX library was found)."""
    return _nvtx.load()


def library_path():
    """The NVTX library in use, or None."""
    _nvtx.load()
    return _nvtx.path


def push(name, payload=None):
    """Opens range ``name`` in the LLM domain on this thread; payload: an int >= 0 or None."""
    if not _nvtx.load():
        return
    msg = _names.get(name)
    if msg is None:
        msg = _names[name] = name.encode()  # keep the bytes alive for the C side
    attr = _EventAttributes()
    attr.version = _NVTX_VERSION
    attr.size = ctypes.sizeof(_EventAttributes)
    attr.messageType = _NVTX_MESSAGE_TYPE_ASCII
    attr.message.ascii = msg
    if payload is not None:
        attr.payloadType = _NVTX_PAYLOAD_TYPE_UNSIGNED_INT64
        attr.payload.ullValue = int(payload)
    _nvtx.lib.nvtxDomainRangePushEx(_nvtx.domain, ctypes.byref(attr))


def pop():
    """Closes this thread's innermost LLM range."""
    if _nvtx.lib is not None:
        _nvtx.lib.nvtxDomainRangePop(_nvtx.domain)


@contextlib.contextmanager
def llm_range(name, payload=None):
    """``with llm_range("decode_step", payload=i): ...``"""
    push(name, payload)
    try:
        yield
    finally:
        pop()


def llm_ranged(name=None, payload=None):
    """Decorator: runs the function inside range ``name`` (default: the function's name)."""
    def wrap(fn):
        label = name or fn.__name__

        @functools.wraps(fn)
        def inner(*args, **kwargs):
            with llm_range(label, payload):
                return fn(*args, **kwargs)
        return inner
    return wrap


if __name__ == "__main__":
    # `python3 python/llmprof_nvtx.py`: says whether ranges would be emitted, and from where.
    print("nvtx library: %s" % (library_path() or "not found (ranges are no-ops)"))
    with llm_range("prefill", payload=1):
        pass
