"""torch.compiler.disable and is_compiling as llmprof_auto uses them: disable marks the function
as kept out of compile; is_compiling says what a test set in `compiling`."""
import functools

compiling = False


def is_compiling():
    return compiling


def disable(fn=None, recursive=True):
    def mark(f):
        @functools.wraps(f)
        def inner(*a, **k):
            return f(*a, **k)
        inner._fake_compiler_disabled = True
        return inner
    return mark(fn) if fn is not None else mark
