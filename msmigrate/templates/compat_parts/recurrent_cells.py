"""torch.nn.RNNCell / GRUCell / LSTMCell: MindSpore's cells with torch's arguments and calls. torch's hx is
optional (zeros when left out) and an unbatched input (features,) with an unbatched state (hidden,) is a batch
of one; MindSpore's cells take neither. Same parameter names (weight_ih, weight_hh, bias_ih, bias_hh)."""
from mindspore import nn, ops


def _cell_inputs(x, hx, hidden_size, pair):
    """(x, hx) as MindSpore's cells take them (batched, hx given) and whether x was unbatched."""
    unbatched = x.ndim == 1
    if unbatched:
        x = x.expand_dims(0)
    if hx is None:
        zeros = ops.zeros((x.shape[0], hidden_size), x.dtype)
        hx = (zeros, zeros) if pair else zeros
    elif unbatched:
        hx = (hx[0].expand_dims(0), hx[1].expand_dims(0)) if pair else hx.expand_dims(0)
    return x, hx, unbatched


def _cell_output(out, unbatched, pair):
    if not unbatched:
        return out
    return (out[0].squeeze(0), out[1].squeeze(0)) if pair else out.squeeze(0)


class RNNCell(nn.RNNCell):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, has_bias=bias, nonlinearity=nonlinearity)

    def construct(self, x, hx=None):
        x, hx, unbatched = _cell_inputs(x, hx, self.hidden_size, False)
        return _cell_output(super().construct(x, hx), unbatched, False)


class GRUCell(nn.GRUCell):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, has_bias=bias)

    def construct(self, x, hx=None):
        x, hx, unbatched = _cell_inputs(x, hx, self.hidden_size, False)
        return _cell_output(super().construct(x, hx), unbatched, False)


class LSTMCell(nn.LSTMCell):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, has_bias=bias)

    def construct(self, x, hx=None):
        x, hx, unbatched = _cell_inputs(x, hx, self.hidden_size, True)
        return _cell_output(super().construct(x, hx), unbatched, True)
