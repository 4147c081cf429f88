"""Keras (Keras 3) models → MindSpore ``nn.Cell`` source + checkpoint (``msmigrate keras``).

convert_keras_model(model, out_dir, keep_nhwc=False) -> KerasConversion   (model: a built keras.Model)
load_keras_model(spec, path=None)                    -> keras.Model
main_keras(argv)                                     -> int   (the ``msmigrate keras`` command)

The converter walks the built model's layer graph, writes ``model.py`` (classic ``mindspore.nn``/``ops``),
``model.ckpt`` (weights re-laid out for channels-first MindSpore) and ``keras-report.md``.
"""
from .convert import KerasConversion, KerasConversionError, convert_keras_model  # noqa: F401
from .load import load_keras_model  # noqa: F401


def main_keras(argv):
    from .cli import main_keras as _main

    return _main(argv)
