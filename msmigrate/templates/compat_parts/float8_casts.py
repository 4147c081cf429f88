"""A cast to float8 (torch.float8_e4m3fn / float8_e5m2): MindSpore 2.10 names the dtypes, but its CPU kernels
have none (Cast raises TypeError, when the value is computed; no tensor can be built from float8 values): there
a MigrationError names the original site, in a compiled graph too (a constexpr: the graph parser refuses a
raise of MigrationError)."""
from mindspore.ops.primitive import constexpr as _float8_constexpr


def float8_cast(x, dtype, where):
    """x.astype(dtype), dtype a float8; on CPU, MigrationError naming `where`."""
    _float8_on_cpu(str(dtype), where)
    return x.astype(dtype)


@_float8_constexpr(check=False)
def _float8_on_cpu(dtype, where):
    if ms.get_context("device_target") == "CPU":
        raise MigrationError(f"x.to({dtype}) at {where}: MindSpore 2.10 has no float8 kernels on CPU (Ascend "
                             f"computes float8); keep the values in float16/bfloat16 there")
