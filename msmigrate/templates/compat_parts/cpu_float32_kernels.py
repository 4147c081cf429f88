"""MindSpore 2.10's CPU float32 kernels of these functions are approximations; its float64 kernels are exact to
rounding. Measured against torch on 20,000 normal inputs (x 4), largest error relative to max(|value|, 1e-3), torch's
own float32 being ~1e-7: tanh 1.0e-4 (and above 1 near |x| = 5: tanh(5.0) = 1.0000098, so 1 - tanh² flips sign),
log2 1.3e-4, log 8.9e-5, log10 3.9e-5, expm1 3.6e-5, exp 4.8e-6, silu 2.4e-6, sigmoid 2.3e-6, softmax 3.9e-6,
softplus 2e-4. A converted call of one more than 1e-5 off (and exp/log steps inside helpers that must give torch's
values) takes a float32 tensor on CPU in float64 and rounds once (values and gradients through the cast); other
targets and dtypes keep MindSpore's own kernel."""
import mindspore as ms
from mindspore import ops


@ops.constexpr
def float64_on_cpu(dtype):
    """True where an exp/log step on a `dtype` tensor is to be taken in float64: float32 on CPU."""
    return dtype == ms.float32 and ms.get_context("device_target") == "CPU"


def _through_float64(op, x):
    """op(x), a CPU float32 x taken in float64 and rounded once (as torch's kernels round)."""
    if float64_on_cpu(x.dtype):
        return op(x.astype(ms.float64)).astype(ms.float32)
    return op(x)


def precise_exp(x):
    """ops.exp(x), a CPU float32 x through float64 (one rounding, as torch's)."""
    return _through_float64(ops.exp, x)


def precise_log(x):
    """ops.log(x), a CPU float32 x through float64 (one rounding, as torch's)."""
    return _through_float64(ops.log, x)


def precise_expm1(x):
    """ops.expm1(x), a CPU float32 x through float64."""
    return _through_float64(ops.expm1, x)


def precise_log2(x):
    """ops.log2(x), a CPU float32 x through float64."""
    return _through_float64(ops.log2, x)


def precise_log10(x):
    """ops.log10(x), a CPU float32 x through float64."""
    return _through_float64(ops.log10, x)


def precise_sigmoid(x):
    """ops.sigmoid(x), a CPU float32 x through float64 (MindSpore's float32 kernel: 2.3e-6 off); an integer or bool x
    as float32, as torch promotes it. torch._foreach_sigmoid's items (torch.sigmoid keeps ops.sigmoid, noted)."""
    if x.dtype in (ms.bool_, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8):
        x = x.astype(ms.float32)
    return _through_float64(ops.sigmoid, x)


def precise_tanh(input):     # torch's argument name: F.tanh(input=x) converts one to one
    """ops.tanh(input), a CPU float32 input through float64 (MindSpore's float32 kernel: 1e-4 off, above 1 near 5)."""
    return _through_float64(ops.tanh, input)



def _precise_rnn_tanh_cell(inputs, hidden, w_ih, w_hh, b_ih, b_hh):
    """mindspore.nn's RNN(tanh) step (nn/layer/rnn_cells.py), its tanh through precise_tanh."""
    gates = ops.MatMul(False, True)(inputs, w_ih) + ops.MatMul(False, True)(hidden, w_hh)
    return precise_tanh(gates if b_ih is None else gates + b_ih + b_hh)


def _precise_gru_cell(inputs, hidden, w_ih, w_hh, b_ih, b_hh):
    """mindspore.nn's GRU step (nn/layer/rnn_cells.py), its tanh through precise_tanh."""
    gi = ops.MatMul(False, True)(inputs, w_ih)
    gh = ops.MatMul(False, True)(hidden, w_hh)
    if b_ih is not None:
        gi, gh = gi + b_ih, gh + b_hh
    i_r, i_i, i_n = ops.Split(1, 3)(gi)
    h_r, h_i, h_n = ops.Split(1, 3)(gh)
    resetgate = ops.Sigmoid()(i_r + h_r)
    inputgate = ops.Sigmoid()(i_i + h_i)
    newgate = precise_tanh(i_n + resetgate * h_n)
    return newgate + inputgate * (hidden - newgate)


def precise_recurrence(layer, mode):
    """On CPU, a GRU or tanh RNN layer's steps with precise_tanh. MindSpore 2.10 runs them as Python steps
    (nn/layer/rnns.py's _DynamicRNNBase) with its float32 tanh kernel: 7.5e-5 (GRU) and 1.4e-4 (RNN) off torch
    on saturating weights. LSTM's fused CPU kernel matches torch; other targets keep their kernels."""
    if ms.get_context("device_target") != "CPU":
        return
    from mindspore.nn.layer import rnns
    if mode == "GRU":
        steps = rnns._DynamicRNNBase("GRU")    # what _DynamicGRUCPUGPU runs on CPU, with the precise step
        steps.cell = _precise_gru_cell
        layer.rnn = steps
    elif mode == "RNN_TANH":
        layer.rnn.cell = _precise_rnn_tanh_cell
