"""The input dtypes MindSpore's convolution kernels take: float16/float32 (bfloat16), no float64 on any path
(Conv2D, Conv2DTranspose, Conv3D; mint's Conv2DExt has no CPU kernel). torch computes a float64 convolution in
float64; a float32 one would differ from it, so a float64 input stops with the torch line instead of MindSpore's
TypeError."""
import mindspore as ms
from mindspore.ops.primitive import constexpr as _conv_constexpr


@_conv_constexpr(check=False)
def _refuse_float64_conv(dtype, api, where):
    """Runs in PyNative, and while compiling a graph (the dtype is known then): GRAPH mode cannot raise
    MigrationError from the graph itself."""
    if dtype == ms.float64:
        raise MigrationError(f"{api} at {where}: a float64 input; MindSpore's convolution kernels take float16/"
                             "float32 only (torch computes it in float64): cast input and weight to float32")
    return True


def conv_input(x, api, where):
    _refuse_float64_conv(x.dtype, api, where)
    return x
