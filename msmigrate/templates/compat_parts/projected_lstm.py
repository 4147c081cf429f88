"""torch.nn.LSTM with proj_size > 0 (MindSpore's LSTM has no projection): each step's hidden state is
o * tanh(c) projected by weight_hr to proj_size, and that projection is h (the next step's recurrent input, the
output, h_n); c keeps hidden_size. torch's parameter names, shapes, order and U(-1/sqrt(hidden), 1/sqrt(hidden))
initialisation; gates i, f, g, o as torch stacks them; dropout between layers. Steps run one by one (in GRAPH
mode the loops unroll)."""
import math

import mindspore as ms
from mindspore import nn, ops
from mindspore.common import initializer as init


class ProjectedLSTM(nn.Cell):
    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not 0 < proj_size < hidden_size:
            raise ValueError("proj_size has to be a positive integer smaller than hidden_size")
        self.hidden_size, self.proj_size, self.num_layers = hidden_size, proj_size, num_layers
        self.bias, self.batch_first, self.bidirectional = bias, batch_first, bidirectional
        self.dirs = 2 if bidirectional else 1
        self.drop = nn.Dropout(p=dropout) if dropout else None
        k = 1.0 / math.sqrt(hidden_size)
        for layer in range(num_layers):
            for d in range(self.dirs):
                width = input_size if layer == 0 else proj_size * self.dirs
                shapes = [("weight_ih", (4 * hidden_size, width)), ("weight_hh", (4 * hidden_size, proj_size))]
                shapes += [("bias_ih", (4 * hidden_size,)), ("bias_hh", (4 * hidden_size,))] if bias else []
                for name, shape in shapes + [("weight_hr", (proj_size, hidden_size))]:
                    name += f"_l{layer}" + ("_reverse" if d else "")
                    setattr(self, name, ms.Parameter(init.initializer(init.Uniform(k), shape, ms.float32), name=name))

    def _direction(self, x, h, c, layer, d):
        """One layer's pass over x (seq, batch, features), forward (d=0) or reversed: outputs and the last h, c."""
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        w_ih, w_hh, w_hr = (getattr(self, n + sfx) for n in ("weight_ih", "weight_hh", "weight_hr"))
        outs = [None] * x.shape[0]
        for t in (range(x.shape[0]) if d == 0 else range(x.shape[0] - 1, -1, -1)):
            gates = ops.matmul(x[t], w_ih.T) + ops.matmul(h, w_hh.T)
            if self.bias:
                gates = gates + getattr(self, "bias_ih" + sfx) + getattr(self, "bias_hh" + sfx)
            i, f, g, o = ops.split(gates, self.hidden_size, 1)
            c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
            h = ops.matmul(ops.sigmoid(o) * ops.tanh(c), w_hr.T)
            outs[t] = h
        return ops.stack(outs), h, c

    def construct(self, x, hx=None):
        unbatched = x.ndim == 2
        if unbatched:
            x, hx = x.expand_dims(1), (None if hx is None else (hx[0].expand_dims(1), hx[1].expand_dims(1)))
        elif self.batch_first:
            x = x.swapaxes(0, 1)
        n, batch = self.num_layers * self.dirs, x.shape[1]
        h0, c0 = hx if hx is not None else (ops.zeros((n, batch, self.proj_size), x.dtype),
                                            ops.zeros((n, batch, self.hidden_size), x.dtype))
        hs, cs = [], []
        for layer in range(self.num_layers):
            if layer and self.drop is not None:
                x = self.drop(x)
            outs = []
            for d in range(self.dirs):
                out, h, c = self._direction(x, h0[layer * self.dirs + d], c0[layer * self.dirs + d], layer, d)
                outs.append(out)
                hs.append(h)
                cs.append(c)
            x = ops.concat(outs, -1) if self.dirs == 2 else outs[0]
        h_n, c_n = ops.stack(hs), ops.stack(cs)
        if unbatched:
            return x.squeeze(1), (h_n.squeeze(1), c_n.squeeze(1))
        return (x.swapaxes(0, 1) if self.batch_first else x), (h_n, c_n)
