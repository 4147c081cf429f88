# Recurrent cells in float64. MindSpore's nn.LSTMCell refuses inputs other than float16/float32, while
# torch runs a model made `.double()` (pytorch/examples' time_sequence_prediction) in float64.


class LSTMCell(nn.LSTMCell):
    """torch.nn.LSTMCell: mindspore.nn.LSTMCell (the same Parameters weight_ih, weight_hh, bias_ih,
    bias_hh, torch's gate order input, forget, cell, output), computed with plain ops in the inputs'
    dtype, float64 included."""

    def construct(self, x, hx):
        h, c = hx
        gates = ops.matmul(x, self.weight_ih.T) + ops.matmul(h, self.weight_hh.T)
        if self.bias_ih is not None:
            gates = gates + self.bias_ih + self.bias_hh
        i, f, g, o = ops.split(gates, gates.shape[-1] // 4, -1)
        c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
        return ops.sigmoid(o) * ops.tanh(c), c
