# torch.testing.assert_close / assert_allclose on MindSpore tensors: torch's rule
# |actual - expected| <= atol + rtol * |expected| with torch's per-dtype default tolerances, the same
# shape (no broadcasting), the same dtype when check_dtype, NaN equal only with equal_nan; nested
# sequences and mappings compared item by item. A mismatch raises AssertionError, as torch's does.

# torch.testing's defaults (rtol, atol) by dtype; any other dtype is compared exactly
_CLOSE_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
                     "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def _close_operand(x):
    """(NumPy array, dtype name) of a tensor, array or number (a Python float is float64, as torch reads it)."""
    if isinstance(x, ms.Tensor):
        name = str(x.dtype).lower().replace("bool_", "bool")
        return (x.astype(ms.float32) if name == "bfloat16" else x).asnumpy(), name
    a = np.asarray(x)
    return a, a.dtype.name


def _assert_close_leaf(actual, expected, rtol, atol, equal_nan, check_dtype, msg, where):
    a, a_dt = _close_operand(actual)
    e, e_dt = _close_operand(expected)
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match{where}: {a.shape} != {e.shape}.")
    if check_dtype and a_dt != e_dt:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match{where}: {a_dt} != {e_dt}.")
    if rtol is None:
        rtol = max(_CLOSE_TOLERANCES.get(a_dt, (0.0, 0.0))[0], _CLOSE_TOLERANCES.get(e_dt, (0.0, 0.0))[0])
        atol = max(_CLOSE_TOLERANCES.get(a_dt, (0.0, 0.0))[1], _CLOSE_TOLERANCES.get(e_dt, (0.0, 0.0))[1])
    if a.dtype == np.bool_ or e.dtype == np.bool_:
        ok = a == e
    else:
        a64, e64 = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64), \
            e.astype(np.complex128 if np.iscomplexobj(e) else np.float64)
        ok = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if not np.all(ok):
        bad = int(np.size(ok) - np.count_nonzero(ok))
        raise AssertionError(msg or f"Tensor-likes are not close{where}!\n\nMismatched elements: {bad} / "
                                    f"{np.size(ok)} (rtol={rtol}, atol={atol})")


def _assert_close_tree(actual, expected, rtol, atol, equal_nan, check_dtype, msg, where=""):
    if isinstance(actual, dict) and isinstance(expected, dict):
        if set(actual) != set(expected):
            raise AssertionError(msg or f"The keys of the mappings do not match{where}.")
        for k in actual:
            _assert_close_tree(actual[k], expected[k], rtol, atol, equal_nan, check_dtype, msg, f"{where}[{k!r}]")
        return
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            raise AssertionError(msg or f"The length of the sequences mismatch{where}: {len(actual)} != "
                                        f"{len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _assert_close_tree(a, e, rtol, atol, equal_nan, check_dtype, msg, f"{where}[{i}]")
        return
    _assert_close_leaf(actual, expected, rtol, atol, equal_nan, check_dtype, msg, where and f" at item {where}")


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """torch.testing.assert_close (device, layout and stride: MindSpore has one of each to compare)."""
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted, but got no "
                         f"{'rtol' if rtol is None else 'atol'}.")
    _assert_close_tree(actual, expected, rtol, atol, equal_nan, check_dtype, msg)


# torch.testing.assert_allclose's own defaults (looser than assert_close's)
_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """torch.testing.assert_allclose (deprecated in torch): expected read in actual's dtype, dtypes not checked,
    NaN equal by default."""
    if not isinstance(actual, ms.Tensor):
        actual = ms.Tensor(actual)     # a list of floats is float32, as torch.tensor makes it
    if not isinstance(expected, ms.Tensor):
        expected = ms.Tensor(expected).astype(actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(_close_operand(x)[1], (0.0, 0.0)) for x in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False, msg=msg or None)
