"""nn.Module's forward hooks, as torch calls them."""


class _Handle(object):
    """What register_forward_*hook returns: remove() takes the hook out again."""

    def __init__(self, hooks, entry):
        self.hooks, self.entry = hooks, entry

    def remove(self):
        if self.entry in self.hooks:
            self.hooks.remove(self.entry)


class Module(object):
    def __init__(self):
        self._pre = []
        self._post = []
        self._params = []

    def register_forward_pre_hook(self, hook, prepend=False, with_kwargs=False):
        self._pre.append((hook, with_kwargs))
        return _Handle(self._pre, self._pre[-1])

    def register_forward_hook(self, hook, prepend=False, with_kwargs=False, always_call=False):
        self._post.append((hook, with_kwargs, always_call))
        return _Handle(self._post, self._post[-1])

    def parameters(self):
        return iter(self._params)

    def __call__(self, *args, **kwargs):
        for hook, wk in self._pre:
            if wk:
                hook(self, args, kwargs)
            else:
                hook(self, args)
        ok = False
        out = None
        try:
            out = self.forward(*args, **kwargs)
            ok = True
        finally:
            for hook, wk, always in self._post:
                if ok or always:
                    if wk:
                        hook(self, args, kwargs, out)
                    else:
                        hook(self, args, out)
        return out
