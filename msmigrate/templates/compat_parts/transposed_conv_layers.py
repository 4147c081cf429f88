# torch.nn.ConvTranspose1d/2d/3d with torch's arguments, where the class is called with *args/**kwargs (encodec's
# NormConvTranspose1d: `nn.ConvTranspose1d(*args, **kwargs)`) or passed around as a value: the arguments bound
# by name at run time, then the layer the converter writes for a direct call (torch's output_padding as the
# asymmetric padding (p, p - output_padding) per dim, and any_batch's rows past the padding where it is larger).


def _conv_transpose_layer(nd, base):
    class ConvTranspose(base):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                     bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
            if padding_mode != "zeros":
                raise MigrationError(f"ConvTranspose{nd}d padding_mode={padding_mode!r}: torch takes only 'zeros' "
                                     "for a transposed convolution")
            if isinstance(padding, str):
                raise MigrationError(f"ConvTranspose{nd}d padding={padding!r}: torch takes ints only here")

            def per_dim(v):
                return list(v) if isinstance(v, (tuple, list)) else [v] * nd
            if nd == 1:   # MindSpore's 1-d layer takes ints; any_batch.Conv1dTranspose computes output_padding
                kernel_size, stride, dilation, padding, output_padding = (
                    per_dim(v)[0] for v in (kernel_size, stride, dilation, padding, output_padding))
                with from_init_stream():
                    super().__init__(in_channels, out_channels, kernel_size, stride=stride, pad_mode="pad",
                                     padding=padding, dilation=dilation, group=groups, has_bias=bias,
                                     output_padding=output_padding)
                return
            pads, outs = per_dim(padding), per_dim(output_padding)
            flat = tuple(x for p, o in zip(pads, outs) for x in (p, max(p - o, 0)))
            grow = tuple(max(o - p, 0) for p, o in zip(pads, outs))
            with from_init_stream():
                super().__init__(in_channels, out_channels, conv_size(kernel_size), stride=conv_size(stride),
                                 pad_mode="pad", padding=flat, dilation=conv_size(dilation), group=groups,
                                 has_bias=bias, grow_end=grow if any(grow) else None)
    ConvTranspose.__name__ = ConvTranspose.__qualname__ = f"ConvTranspose{nd}d"
    return ConvTranspose


# isinstance/issubclass answer for MindSpore's layers too, as the other adapters' (module_tree.py's _torch_class)
ConvTranspose1d = _torch_class(_conv_transpose_layer(1, any_batch.Conv1dTranspose), nn.Conv1dTranspose)
ConvTranspose2d = _torch_class(_conv_transpose_layer(2, any_batch.Conv2dTranspose), nn.Conv2dTranspose)
ConvTranspose3d = _torch_class(_conv_transpose_layer(3, any_batch.Conv3dTranspose), nn.Conv3dTranspose)
