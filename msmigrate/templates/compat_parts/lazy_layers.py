# torch's lazy layers (nn.LazyLinear, LazyConv*d, LazyConvTranspose*d, LazyBatchNorm*d, LazyInstanceNorm*d): the
# layer is built at the first call, from the input's size (its last dimension for Linear, dimension 1 of a batch
# otherwise), and held as the child `layer`, whose parameters torch names as the lazy module's own (weight, not
# layer.weight: the weight loaders and state_dict flatten `torch_flat_child`). Until then the cell holds a frozen
# placeholder Parameter, so the names its parents give it (net.0.) reach the built layer's parameters, which
# MindSpore wants unique. The first call must be a direct one (`m(x)`, `model(x)` in PyNative mode): a cell
# compiled inside a graph before it is built stops with an error saying so. Like torch's, they start in training
# mode.


class _Lazy(nn.Cell):
    torch_flat_child = "layer"
    _unbatched_rank = None    # the rank of an unbatched input (its channels are then dimension 0)
    _batch_of_one = False     # the built layer takes batches only (MindSpore's convolutions): unbatched -> 1

    def __init__(self, name, *args, **kwargs):
        super().__init__()
        self._lazy_name, self._lazy_args, self._lazy_kwargs = name, args, kwargs
        self._lazy_built = False
        self.lazy_placeholder = ms.Parameter(ops.zeros((1,), ms.float32), name="lazy_placeholder",
                                             requires_grad=False)
        self.set_train(True)   # torch's modules start in training mode (a BatchNorm then uses batch statistics)

    def _size(self, x):
        if self._unbatched_rank is None:
            return x.shape[-1]
        return x.shape[0] if x.ndim == self._unbatched_rank else x.shape[1]

    def __call__(self, *args, **kwargs):
        if not self._lazy_built:
            prefix = self.lazy_placeholder.name[:-len("lazy_placeholder")]
            layer = self._build(self._size(args[0]), *self._lazy_args, **self._lazy_kwargs)
            layer.set_train(self.training)
            delattr(self, "lazy_placeholder")
            self.layer = layer
            layer.update_parameters_name(prefix + "layer.")
            self._lazy_built = True
        return super().__call__(*args, **kwargs)

    def construct(self, *args):
        if not self._lazy_built:
            # (a graph raises only Python's own exception types)
            raise ValueError("a torch lazy layer's first call is inside a compiled graph; call it (or the model "
                             "holding it) once in PyNative mode first, as torch builds it at that call")
        if self._batch_of_one and args[0].ndim == self._unbatched_rank:
            return self.layer(args[0].expand_dims(0))[0]
        return self.layer(*args)

    def __getattr__(self, name):
        # torch's names of the built layer's parameters: m.weight, m.running_mean
        layer = self.__dict__.get("_cells", {}).get("layer")
        if layer is not None and name in _LAZY_NAMES:
            owner = layer.bn2d if isinstance(layer, nn.BatchNorm3d) else layer   # its parameters' holder
            for ms_name in _LAZY_NAMES[name]:
                if ms_name in owner._params:
                    return owner._params[ms_name]
        return super().__getattr__(name)


_LAZY_NAMES = {"weight": ("weight", "gamma"), "bias": ("bias", "beta"), "running_mean": ("moving_mean",),
               "running_var": ("moving_variance",)}


class LazyLinear(_Lazy):
    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__("LazyLinear", out_features, bias)

    def _build(self, size, out_features, bias):
        return nn.Dense(size, out_features, has_bias=bias)


def _lazy_conv(nd, base):
    class LazyConv(_Lazy):
        _unbatched_rank, _batch_of_one = nd + 1, True

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            if padding_mode != "zeros":
                raise MigrationError(f"LazyConv{nd}d padding_mode={padding_mode!r} is not converted")
            super().__init__(f"LazyConv{nd}d", out_channels, kernel_size, stride, padding, dilation, groups, bias)

        def _build(self, size, out_channels, kernel_size, stride, padding, dilation, groups, bias):
            if nd == 1:   # MindSpore's 1-d layer takes ints
                kernel_size, stride, dilation = (v[0] if isinstance(v, (tuple, list)) else v
                                                 for v in (kernel_size, stride, dilation))
            return base(size, out_channels, kernel_size, stride=stride, pad_mode=conv_pad_mode(padding),
                        padding=conv_padding(padding, nd), dilation=dilation, group=groups, has_bias=bias)
    LazyConv.__name__ = LazyConv.__qualname__ = f"LazyConv{nd}d"
    return LazyConv


LazyConv1d = _lazy_conv(1, nn.Conv1d)
LazyConv2d = _lazy_conv(2, nn.Conv2d)
LazyConv3d = _lazy_conv(3, nn.Conv3d)


def _lazy_conv_transpose(nd, base):
    class LazyConvTranspose(_Lazy):
        _unbatched_rank, _batch_of_one = nd + 1, True

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            if padding_mode != "zeros":
                raise MigrationError(f"LazyConvTranspose{nd}d padding_mode={padding_mode!r} is not converted")
            super().__init__(f"LazyConvTranspose{nd}d", out_channels, kernel_size, stride, padding, output_padding,
                             groups, bias, dilation)

        def _build(self, size, out_channels, kernel_size, stride, padding, output_padding, groups, bias, dilation):
            if output_padding not in (0, (0,) * nd, [0] * nd):
                if nd == 1:
                    raise MigrationError("LazyConvTranspose1d output_padding: MindSpore's Conv1dTranspose takes one "
                                         "symmetric padding only")
                padding = conv_transpose_padding(padding, output_padding, nd)   # torch's extra rows, computed
            else:
                padding = conv_padding(padding, nd)
            if nd == 1:
                kernel_size, stride, dilation = (v[0] if isinstance(v, (tuple, list)) else v
                                                 for v in (kernel_size, stride, dilation))
            return base(size, out_channels, kernel_size, stride=stride, pad_mode="pad", padding=padding,
                        dilation=dilation, group=groups, has_bias=bias)
    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = f"LazyConvTranspose{nd}d"
    return LazyConvTranspose


LazyConvTranspose1d = _lazy_conv_transpose(1, nn.Conv1dTranspose)
LazyConvTranspose2d = _lazy_conv_transpose(2, nn.Conv2dTranspose)
LazyConvTranspose3d = _lazy_conv_transpose(3, nn.Conv3dTranspose)


def _lazy_norm(name, built, unbatched_rank, cumulative=None):
    class LazyNorm(_Lazy):
        _unbatched_rank = unbatched_rank

        def __init__(self, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None,
                     dtype=None):
            super().__init__(name, eps, momentum, affine, track_running_stats)

        def _build(self, size, eps, momentum, affine, track_running_stats):
            if momentum is None and cumulative is not None:   # torch's cumulative moving average
                return cumulative(size, eps, None, affine, track_running_stats)
            return built(size, eps, momentum, affine, track_running_stats)
    LazyNorm.__name__ = LazyNorm.__qualname__ = name
    return LazyNorm


# BatchNorm1d takes (N, C) and (N, C, L): the channels are dimension 1 either way
LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d, 1, CumulativeBatchNorm1d)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d, 3, CumulativeBatchNorm2d)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d, 4, CumulativeBatchNorm3d)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", InstanceNorm1d, 2)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", InstanceNorm2d, 3)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", InstanceNorm3d, 4)
