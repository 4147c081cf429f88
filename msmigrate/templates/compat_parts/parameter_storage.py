"""A Parameter made from a tensor computed from another one (`nn.Parameter(U.diag())`, `nn.Parameter(w.t())`,
`nn.Parameter(torch.linspace(a, b, n).reshape(1, n))`): MindSpore 2.10's result of such an op may be a view of
its input's storage, and a Parameter over a view is not updated as one: the optimizer's ops.assign on a diagonal
view changes nothing (silently: Glow's Invertible1x1Conv's S never trained) and Adam's refuses a reshaped one
("Not support view input for inplace op Assign"). torch's Parameter trains the elements it holds; the Parameter
here holds a copy with storage of its own."""
import mindspore as ms


def parameter_data(data):
    """`data` as a Parameter's value: a MindSpore tensor copied into storage of its own; anything else (a NumPy
    array, a list) as given."""
    return data.copy() if isinstance(data, ms.Tensor) and not isinstance(data, ms.Parameter) else data
