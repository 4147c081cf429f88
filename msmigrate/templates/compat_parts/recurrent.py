"""torch's recurrent calls on MindSpore's layers. torch.nn.LSTM/GRU/RNN (_ms_compat.py's classes) take an
unbatched input (seq, features) with states (layers, hidden): a batch of one. torch.nn.RNNCell/GRUCell/LSTMCell
(here): hx optional (zeros when left out), an unbatched input (features,) with states (hidden,) a batch of one;
MindSpore's layers take neither. Same parameter names (weight_ih, weight_hh, bias_ih, bias_hh...).
LSTMCell also runs in float64 (a model made `.double()`), where MindSpore's cell takes float16/float32 only."""
import mindspore as ms
from mindspore import nn, ops


def _state_batch(hx, add):
    """A state (layers, hidden) as a batch of one (layers, 1, hidden), or back; LSTM's (h, c) each."""
    if hx is None:
        return None
    if isinstance(hx, tuple):
        return tuple(_state_batch(h, add) for h in hx)
    return hx.expand_dims(1) if add else hx.squeeze(1)


def _sequence_inputs(x, hx, batch_first):
    """(x, hx, unbatched) as MindSpore's LSTM/GRU/RNN take them. torch's LSTM also takes its (h, c) as a list
    (`states = [s.detach() for s in states]`); MindSpore's refuses anything but a tuple."""
    if isinstance(hx, list):
        hx = tuple(hx)
    if x.ndim == 3:
        return x, hx, False
    return x.expand_dims(0 if batch_first else 1), _state_batch(hx, True), True


def _sequence_outputs(result, unbatched, batch_first):
    if not unbatched:
        return result
    out, h = result
    return out.squeeze(0 if batch_first else 1), _state_batch(h, False)


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


# x @ w.T: the primitive with transpose_b; ops.matmul(x, w.T) transposes a view first, 100x slower
# op by op on CPU (measured 0.12 ms against 16 ms for a 9x51 by 51x204 float64 product)
_matmul_nt = ops.MatMul(transpose_b=True)


def _lstm_cell_any_dtype(cell, x, hx):
    """One LSTMCell step with plain ops in x's dtype: torch's gate order (input, forget, cell, output)."""
    h, c = hx
    gates = _matmul_nt(x, cell.weight_ih) + _matmul_nt(h, cell.weight_hh)
    if cell.bias_ih is not None:
        gates = gates + cell.bias_ih + cell.bias_hh
    i, f, g, o = ops.split(gates, cell.hidden_size, -1)
    c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
    return ops.sigmoid(o) * ops.tanh(c), c


def _torch_cell(base, pair):
    """base (a MindSpore cell) with torch's arguments and calls; pair: the state is (h, c)."""
    class Cell(base):
        def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
            with from_init_stream():    # not NumPy's global stream (init_stream.py)
                if base is nn.RNNCell:
                    super().__init__(input_size, hidden_size, has_bias=bias, nonlinearity=nonlinearity)
                else:
                    super().__init__(input_size, hidden_size, has_bias=bias)

        def construct(self, x, hx=None):
            x, hx, unbatched = _cell_inputs(x, hx, self.hidden_size, pair)
            if pair and x.dtype == ms.float64:
                return _cell_output(_lstm_cell_any_dtype(self, x, hx), unbatched, pair)
            return _cell_output(super().construct(x, hx), unbatched, pair)
    Cell.__name__ = Cell.__qualname__ = base.__name__
    return Cell


RNNCell = _torch_cell(nn.RNNCell, False)
GRUCell = _torch_cell(nn.GRUCell, False)
LSTMCell = _torch_cell(nn.LSTMCell, True)
