# torch's typed tensor classes used as values (`Tensor = torch.cuda.FloatTensor if cuda else
# torch.FloatTensor`, then `Tensor(n, 1)`, `Tensor(array)`, `isinstance(x, Tensor)`): called,
# they build a tensor as torch's legacy constructor does (legacy_tensor); as a type they match
# MindSpore tensors of their dtype.


class _LegacyTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, ms.Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args):
        return legacy_tensor(cls.dtype, *args)

    def __repr__(cls):
        return f"<legacy tensor type {cls.__name__} ({cls.dtype})>"


def _legacy_type(name, dtype):
    return _LegacyTensorType(name, (), {"dtype": dtype})


FloatTensor = _legacy_type("FloatTensor", ms.float32)
DoubleTensor = _legacy_type("DoubleTensor", ms.float64)
HalfTensor = _legacy_type("HalfTensor", ms.float16)
LongTensor = _legacy_type("LongTensor", ms.int64)
IntTensor = _legacy_type("IntTensor", ms.int32)
ShortTensor = _legacy_type("ShortTensor", ms.int16)
ByteTensor = _legacy_type("ByteTensor", ms.uint8)
CharTensor = _legacy_type("CharTensor", ms.int8)
BoolTensor = _legacy_type("BoolTensor", ms.bool_)
