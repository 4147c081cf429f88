"""Load the Keras model to convert: a .keras/.h5 file, a SavedModel directory, or MODULE:CALLABLE."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Optional

from .convert import KerasConversionError


def ensure_backend() -> None:
    """Keras 3 picks its backend at import time; without TensorFlow we use the (installed) torch backend."""
    if "keras" in sys.modules or os.environ.get("KERAS_BACKEND"):
        return
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        os.environ["KERAS_BACKEND"] = "torch"


def _import_keras():
    ensure_backend()
    try:
        import keras
    except ImportError as e:
        raise KerasConversionError(f"msmigrate keras needs the keras package (pip install keras): {e}") from None
    if not hasattr(keras, "Model") or int(keras.__version__.split(".")[0]) < 3:
        raise KerasConversionError(f"msmigrate keras needs Keras 3 (found keras {keras.__version__})")
    return keras


def load_keras_model(spec: str, path: Optional[str] = None):
    """Return a built keras.Model from ``spec`` (file, SavedModel directory or MODULE:CALLABLE)."""
    keras = _import_keras()
    if os.path.isdir(spec):
        if not os.path.exists(os.path.join(spec, "saved_model.pb")):
            raise KerasConversionError(f"{spec} is a directory without saved_model.pb (not a SavedModel)")
        try:
            import tensorflow  # noqa: F401
        except ImportError:
            raise KerasConversionError(
                f"{spec} is a TensorFlow SavedModel: loading it needs tensorflow-cpu "
                "(pip install tensorflow-cpu 'numpy<2'), or save the model as .keras/.h5 first") from None
        layer = keras.layers.TFSMLayer(spec, call_endpoint="serving_default")
        raise KerasConversionError(
            f"{spec}: a SavedModel holds a TensorFlow graph, not Keras layers ({type(layer).__name__}); "
            "load the original Keras model and save it as .keras, then convert that")
    if spec.endswith((".keras", ".h5", ".hdf5")):
        if not os.path.isfile(spec):
            raise KerasConversionError(f"no such file: {spec}")
        try:
            return keras.models.load_model(spec, compile=False)
        except Exception as e:  # noqa: BLE001
            raise KerasConversionError(f"cannot load {spec}: {type(e).__name__}: {e}") from None
    if ":" in spec:
        mod_name, _, fn_name = spec.partition(":")
        if path:
            sys.path.insert(0, os.path.abspath(path))
        try:
            mod = importlib.import_module(mod_name)
        except Exception as e:  # noqa: BLE001
            raise KerasConversionError(f"cannot import {mod_name}: {type(e).__name__}: {e}") from None
        obj = mod
        for part in fn_name.split("."):
            if not hasattr(obj, part):
                raise KerasConversionError(f"{mod_name} has no attribute {fn_name}")
            obj = getattr(obj, part)
        model = obj() if callable(obj) and not isinstance(obj, keras.Model) else obj
        if not isinstance(model, keras.Model):
            raise KerasConversionError(f"{spec} returned {type(model).__name__}, not a keras.Model")
        return model
    raise KerasConversionError(f"{spec}: expected a .keras/.h5 file, a SavedModel directory or MODULE:CALLABLE")
