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
        return self._add(self._pre, (hook, with_kwargs), prepend)

    def register_forward_hook(self, hook, prepend=False, with_kwargs=False, always_call=False):
        return self._add(self._post, (hook, with_kwargs, always_call), prepend)

    @staticmethod
    def _add(hooks, entry, prepend):
        """prepend: the hook runs before those already registered (torch >= 2.0)."""
        hooks.insert(0, entry) if prepend else hooks.append(entry)
        return _Handle(hooks, entry)

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
