"""A module for tests/python/test_hooks.py to hook by name: methods (plain, static, class, inherited),
a module function, a generator (refused), and a batch object with a payload to read."""


class Batch(object):
    def __init__(self, n_seqs, n_tokens):
        self.seqs = list(range(n_seqs))
        self.num_tokens = n_tokens
        self.ids = _Shape(n_seqs, n_tokens)


class _Shape(object):
    def __init__(self, *shape):
        self.shape = shape


class Engine(object):
    def forward_prefill(self, batch):
        return "prefill %d" % batch.num_tokens

    def forward_decode(self, batch, temperature=1.0):
        return "decode %d" % len(batch.seqs)

    def forward_mixed(self, batch):
        return "mixed"

    @staticmethod
    def sample(logits, top_k=1):
        return top_k

    @classmethod
    def build(cls):
        return cls()

    def stream(self):
        yield 1


class SubEngine(Engine):
    pass


def warmup(n):
    return n * 2


def boom():
    raise KeyError("boom")
