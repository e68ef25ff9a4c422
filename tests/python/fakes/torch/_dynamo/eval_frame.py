"""torch.compile(module)'s wrapper: its own hooks run around the "compiled" call of the wrapped
module's __call__, whose hooks the real one would trace into the compiled region."""
from .. import nn


class OptimizedModule(nn.Module):
    def __init__(self, mod, dynamo_ctx=None):
        nn.Module.__init__(self)
        self._orig_mod = mod
        self.dynamo_ctx = dynamo_ctx

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)
