from torch import nn


class PreTrainedModel(nn.Module):
    def post_init(self):
        pass

    @property
    def dtype(self):
        return self._dtype
