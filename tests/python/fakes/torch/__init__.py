"""A fake torch for llmprof_auto's tests (tests/python/fakes/README.md)."""
from . import compiler  # noqa: F401
from . import cuda  # noqa: F401
from . import nn  # noqa: F401


class dtype(object):
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name

    __repr__ = __str__


bfloat16 = dtype("bfloat16")
float16 = dtype("float16")
float32 = dtype("float32")


class Tensor(object):
    """Only a shape."""

    def __init__(self, *shape):
        self.shape = tuple(shape)

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n


def zeros(*shape, **_k):
    return Tensor(*shape)
