# Recurrent cells in float64. MindSpore's nn.LSTMCell refuses inputs other than float16/float32, while
# torch runs a model made `.double()` (pytorch/examples' time_sequence_prediction) in float64.


# x @ w.T: the primitive with transpose_b; ops.matmul(x, w.T) transposes a view first, 100x slower
# op by op on CPU (measured 0.12 ms against 16 ms for a 9x51 by 51x204 float64 product)
_matmul_nt = ops.MatMul(transpose_b=True)


class LSTMCell(nn.LSTMCell):
    """torch.nn.LSTMCell: mindspore.nn.LSTMCell (the same Parameters weight_ih, weight_hh, bias_ih,
    bias_hh, torch's gate order input, forget, cell, output), computed with plain ops in the inputs'
    dtype, float64 included."""

    def construct(self, x, hx):
        h, c = hx
        gates = _matmul_nt(x, self.weight_ih) + _matmul_nt(h, self.weight_hh)
        if self.bias_ih is not None:
            gates = gates + self.bias_ih + self.bias_hh
        i, f, g, o = ops.split(gates, self.hidden_size, -1)
        c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
        return ops.sigmoid(o) * ops.tanh(c), c
