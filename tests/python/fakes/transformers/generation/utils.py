import torch


class DynamicCache(object):
    def __init__(self):
        self.n = 0

    def get_seq_length(self, layer_idx=0):
        return self.n


class GenerationMixin(object):
    def generate(self, input_ids=None, max_new_tokens=4, **_k):
        """One prefill forward, then one forward per further new token, like transformers."""
        cache = DynamicCache()
        batch = input_ids.shape[0]
        self(input_ids=input_ids, past_key_values=cache, use_cache=True)
        for _ in range(max_new_tokens - 1):
            self(input_ids=torch.Tensor(batch, 1), past_key_values=cache, use_cache=True)
        return torch.Tensor(batch, input_ids.shape[1] + max_new_tokens)
