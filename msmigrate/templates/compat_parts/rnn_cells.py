"""torch.nn.RNNCell / LSTMCell / GRUCell as torch calls them (mappings/torch_nn_more.py): MindSpore's cells of the
same parameters require hx, where torch's forward(input, hx=None) starts from zeros; and torch takes an unbatched
(1-D) input, giving an unbatched state."""
from mindspore import nn, ops


def _cell_batched(input, hx, hidden_size, pair):
    """(input, hx) as MindSpore's cells take them: 2-D, hx zeros of input's dtype where torch defaults it."""
    if input.ndim == 1:
        input = input.unsqueeze(0)
        if hx is not None:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if pair else hx.unsqueeze(0)
    if hx is None:
        zeros = ops.zeros((input.shape[0], hidden_size), input.dtype)
        hx = (zeros, zeros) if pair else zeros
    return input, hx


class RNNCell(nn.RNNCell):
    def construct(self, input, hx=None):
        x, h = _cell_batched(input, hx, self.hidden_size, False)
        out = super().construct(x, h)
        return out if input.ndim == 2 else out.squeeze(0)


class GRUCell(nn.GRUCell):
    def construct(self, input, hx=None):
        x, h = _cell_batched(input, hx, self.hidden_size, False)
        out = super().construct(x, h)
        return out if input.ndim == 2 else out.squeeze(0)


class LSTMCell(nn.LSTMCell):
    def construct(self, input, hx=None):
        x, h = _cell_batched(input, hx, self.hidden_size, True)
        out_h, out_c = super().construct(x, h)
        if input.ndim == 2:
            return out_h, out_c
        return out_h.squeeze(0), out_c.squeeze(0)
