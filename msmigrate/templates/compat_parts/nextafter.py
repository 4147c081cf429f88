import mindspore as ms
from mindspore import ops

# Measured on MindSpore 2.10 CPU: ops.nextafter returns a float32 input unchanged (it steps in float64 and
# rounds back), and does not broadcast (shapes (1, 3) and (5, 3) gave unrelated values). float32 is stepped on
# its bits here: the int32 of a float's bits counts its magnitude, so +1 moves away from zero, -1 towards it.


def nextafter(input, other):
    """torch.nextafter: the next float after input towards other, broadcast, float32 exact."""
    shape = (ops.zeros_like(input) + ops.zeros_like(other)).shape
    a, b = ops.broadcast_to(input, shape), ops.broadcast_to(other, shape)
    if a.dtype != ms.float32:
        return ops.nextafter(a, b)
    # compared as integers: a CPU thread that treats subnormals as zero (DAZ) would take -1e-45 == 0
    bits, other_bits = a.view(ms.int32), b.view(ms.int32)
    key_a, key_b = _nextafter_key(bits), _nextafter_key(other_bits)   # float order, -0 == +0
    away = (key_b > key_a) == (key_a > 0)   # towards a larger magnitude
    stepped = ops.where(away, bits + 1, bits - 1).view(ms.float32)
    # from zero: the smallest subnormal with other's sign (bits 1, or the sign bit and 1)
    tiny = ops.where(key_b > 0, ops.ones_like(bits), ops.full_like(bits, -2147483647)).view(ms.float32)
    out = ops.where(key_a == 0, tiny, stepped)
    out = ops.where(key_a == key_b, b, out)
    return ops.where(ops.isnan(a) | ops.isnan(b), a + b, out)


def _nextafter_key(bits):
    """float32 bits -> an int32 in the floats' order (a negative float: minus its magnitude bits; -0 is 0)."""
    magnitude = ops.bitwise_and(bits, ops.full_like(bits, 0x7FFFFFFF))
    return ops.where(bits < 0, -magnitude, bits)



def copysign(input, other):
    """torch.copysign: |input| with other's sign bit, -0.0's too (ops.copysign reads a negative zero, tensor or
    number, as positive); the value and dtype of ops.copysign otherwise."""
    out = ops.copysign(input, other)
    other = ms.Tensor(other, ms.float32) if isinstance(other, float) else other
    if not isinstance(other, ms.Tensor) or not other.is_floating_point():
        return out
    negative_zero = ops.logical_and(other == 0, 1 / other < 0)
    return ops.where(negative_zero, -ops.abs(out), out)
