"""torch.nn.utils.parametrize.register_parametrization (and parametrizations.weight_norm, built on it) on a
MindSpore cell. As torch does, the cell's class becomes a subclass whose `weight` (the parametrized name) is a
property: the parametrization cells applied to the original tensor(s), held in `cell.parametrizations.<name>`
(a CellList with Parameters original / original0, original1...), so the parameter names are torch's state_dict
keys (parametrizations.weight.original0) and torch weights load. Works in PyNative and GRAPH mode."""
import mindspore as ms
from mindspore import nn, ops


class _ParametrizationList(nn.Cell):
    """torch's ParametrizationList: the parametrizations of one tensor (children 0, 1, ...) and its original(s).
    A plain Cell, not a CellList: GRAPH mode reads no attribute of a CellList."""

    def __init__(self, cells, originals, is_tensor):
        super().__init__()
        self.n = 0
        for cell in cells:
            self.append(cell)
        self.is_tensor = is_tensor
        self.ntensors = len(originals)
        for i, p in enumerate(originals):
            setattr(self, "original" if is_tensor else f"original{i}", p)

    def append(self, cell):
        self.insert_child_to_cell(str(self.n), cell)
        self.n += 1

    def __getitem__(self, i):
        return self._cells[str(i)]

    def __len__(self):
        return self.n

    def originals(self):
        if self.is_tensor:
            return (self.original,)
        return tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def construct(self):
        return _parametrized_value(self)


def _parametrized_value(plist):
    """The parametrizations applied in turn to the original(s), written out for GRAPH mode."""
    if plist.is_tensor:
        x = getattr(plist, "0")(plist.original)
    elif plist.ntensors == 2:
        x = getattr(plist, "0")(plist.original0, plist.original1)
    else:
        x = getattr(plist, "0")(*plist.originals())
    for i in range(1, plist.n):
        x = getattr(plist, str(i))(x)
    return x


class _ParametrizationDict(nn.Cell):
    """cell.parametrizations: one _ParametrizationList per parametrized name (a CellDict cannot hold a CellList)."""


def _parametrized_prefix(param, name):
    full = getattr(param, "name", name) or name
    return full[:-len(name)] if full.endswith(name) else ""


def _name_parametrization(plist, index):
    """The parameters of parametrization `index` named as torch's keys (parametrizations.weight.0.scale)."""
    prefix = plist.originals()[0].name.rsplit("original", 1)[0] + f"{index}."
    for local, p in plist[index].parameters_and_names():
        p.name = prefix + local


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """torch.nn.utils.parametrize.register_parametrization: `module.<tensor_name>` becomes
    parametrization(original); with a right_inverse, the original(s) are right_inverse(current value)."""
    plists = module._cells.get("parametrizations")
    if plists is not None and tensor_name in plists._cells:
        plist = plists._cells[tensor_name]
        plist.append(parametrization)
        _name_parametrization(plist, len(plist) - 1)
        return module
    param = getattr(module, tensor_name)
    if not isinstance(param, ms.Tensor):
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element "
                         f"with name '{tensor_name}'")
    # MindSpore's Conv1d weight (out, in, 1, k): the parametrization sees torch's 3-D weight, as in torch
    conv1d = tensor_name == "weight" and isinstance(module, (nn.Conv1d, nn.Conv1dTranspose))
    original = param.value().squeeze(2) if conv1d else param
    new = original
    if hasattr(parametrization, "right_inverse"):
        try:
            new = parametrization.right_inverse(ops.stop_gradient(original))
        except NotImplementedError:
            pass
    prefix = _parametrized_prefix(param, tensor_name) + f"parametrizations.{tensor_name}."
    is_tensor = isinstance(new, ms.Tensor)
    requires_grad = getattr(param, "requires_grad", False)
    if is_tensor:
        if new.dtype != original.dtype:
            raise ValueError(f"When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                             f"original.dtype: {original.dtype}\nright_inverse(original).dtype: {new.dtype}")
        originals = [ms.Parameter(new.copy(), name=prefix + "original", requires_grad=requires_grad)]
    else:
        originals = [ms.Parameter(ops.stop_gradient(t).copy(), name=f"{prefix}original{i}",
                                  requires_grad=requires_grad) for i, t in enumerate(new)]
    delattr(module, tensor_name)
    if plists is None:
        plists = _ParametrizationDict()
        module.insert_child_to_cell("parametrizations", plists)
    plists.insert_child_to_cell(tensor_name, _ParametrizationList([parametrization], originals, is_tensor))
    for i, p in enumerate(originals):   # full names, also when the cell already sits in a network
        p.name = prefix + ("original" if is_tensor else f"original{i}")
    _name_parametrization(getattr(plists, tensor_name), 0)
    if not unsafe:
        value = _parametrized_value(getattr(plists, tensor_name))
        if value.shape != original.shape or value.dtype != original.dtype:
            raise ValueError(f"Registering a parametrization may not change the shape or dtype of the tensor: "
                             f"{original.shape} {original.dtype} -> {value.shape} {value.dtype}")

    def derived(self):
        value = _parametrized_value(getattr(self.parametrizations, tensor_name))
        return value.expand_dims(2) if conv1d else value
    members = dict(getattr(type(module), "_ms_parametrized", {}) or {})
    members[tensor_name] = property(derived)
    base = getattr(type(module), "_ms_parametrized_base", type(module))
    module.__class__ = type(base.__name__, (base,), dict(members, _ms_parametrized=members,
                                                         _ms_parametrized_base=base))
    return module


def is_parametrized(module, tensor_name=None):
    """torch.nn.utils.parametrize.is_parametrized."""
    plists = module._cells.get("parametrizations")
    if plists is None:
        return False
    return bool(plists._cells) if tensor_name is None else tensor_name in plists._cells


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """torch.nn.utils.parametrize.remove_parametrizations: the parametrized value (or, with
    leave_parametrized=False, the single original) becomes a plain Parameter again."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plists = module._cells["parametrizations"]
    plist = plists._cells[tensor_name]
    if leave_parametrized:
        value = ops.stop_gradient(getattr(module, tensor_name))
    elif plist.is_tensor:
        value = plist.original
        if tensor_name == "weight" and isinstance(module, (nn.Conv1d, nn.Conv1dTranspose)):
            value = value.expand_dims(2)
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                         "parametrized in terms of a sequence of tensors.")
    prefix = plist.originals()[0].name.rsplit(f"parametrizations.{tensor_name}.", 1)[0]
    requires_grad = plist.originals()[0].requires_grad
    del plists._cells[tensor_name]
    members = {k: v for k, v in type(module)._ms_parametrized.items() if k != tensor_name}
    base = type(module)._ms_parametrized_base
    if members:
        module.__class__ = type(base.__name__, (base,), dict(members, _ms_parametrized=members,
                                                             _ms_parametrized_base=base))
    else:
        module.__class__ = base
        del module._cells["parametrizations"]
    setattr(module, tensor_name, ms.Parameter(value.copy(), name=prefix + tensor_name, requires_grad=requires_grad))
    return module


class _ParamWeightNorm(nn.Cell):
    """torch.nn.utils.parametrizations' _WeightNorm: (weight_g, weight_v) -> weight_g * weight_v / ||weight_v||."""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def construct(self, weight_g, weight_v):
        return weight_v * (weight_g / _param_norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _param_norm_except_dim(weight, self.dim), weight


def _param_norm_except_dim(v, dim):
    if dim == -1:
        return ops.sqrt((v * v).sum())
    dim = dim % v.ndim
    axes = tuple(i for i in range(v.ndim) if i != dim)
    return ops.sqrt((v * v).sum(axis=axes, keepdims=True))


def parametrizations_weight_norm(module, name="weight", dim=0):
    """torch.nn.utils.parametrizations.weight_norm: parameters parametrizations.<name>.original0 (g) and
    original1 (v)."""
    return register_parametrization(module, name, _ParamWeightNorm(dim), unsafe=True)


class _ParamSpectralNorm(nn.Cell):
    """torch.nn.utils.parametrizations' _SpectralNorm: weight / sigma with sigma = u . (W v) from the buffers _u, _v;
    in training mode (set_train) each evaluation first runs n_power_iterations on them."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError(f"Expected n_power_iterations to be positive, but got n_power_iterations="
                             f"{n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        self.n_power_iterations = n_power_iterations
        if ndim > 1:
            w_mat = self._matrix(ops.stop_gradient(weight))
            u = _param_normalize(ops.standard_normal((w_mat.shape[0],)).astype(weight.dtype), eps)
            v = _param_normalize(ops.standard_normal((w_mat.shape[1],)).astype(weight.dtype), eps)
            for _ in range(15):   # torch's start: 15 iterations from random vectors
                u = _param_normalize(ops.matmul(w_mat, v), eps)
                v = _param_normalize(ops.matmul(w_mat.T, u), eps)
            self._u = ms.Parameter(u, name="_u", requires_grad=False)
            self._v = ms.Parameter(v, name="_v", requires_grad=False)

    def _matrix(self, weight):
        if self.dim != 0:
            weight = ops.moveaxis(weight, self.dim, 0)
        return weight.reshape(weight.shape[0], -1)

    def construct(self, weight):
        if weight.ndim == 1:
            return _param_normalize(weight, self.eps)
        w_mat = self._matrix(weight)
        u, v = self._u, self._v
        if self.training:
            w_const = ops.stop_gradient(w_mat)
            for _ in range(self.n_power_iterations):
                u = _param_normalize(ops.matmul(w_const, v), self.eps)
                v = _param_normalize(ops.matmul(w_const.T, u), self.eps)
            ops.assign(self._u, u)
            ops.assign(self._v, v)
        u, v = ops.stop_gradient(u), ops.stop_gradient(v)
        return weight / (u * ops.matmul(w_mat, v)).sum()

    def right_inverse(self, value):
        return value


def _param_normalize(x, eps):
    return x / ops.clamp(ops.sqrt((x * x).sum()), min=eps)


def parametrizations_spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """torch.nn.utils.parametrizations.spectral_norm: parametrizations.<name>.original and the buffers
    parametrizations.<name>.0._u / _v, as torch (their random start differs: load torch's to match)."""
    weight = getattr(module, name)
    if dim is None:
        dim = 1 if isinstance(module, (nn.Conv1dTranspose, nn.Conv2dTranspose, nn.Conv3dTranspose)) else 0
    return register_parametrization(module, name, _ParamSpectralNorm(weight, n_power_iterations, dim, eps))


class _ParamOrthogonal(nn.Cell):
    """torch.nn.utils.parametrizations' _Orthogonal: an orthogonal matrix from the unconstrained original through
    matrix_exp / cayley of its skew-symmetric part or householder reflections; with use_trivialization the
    buffer `base` (set by right_inverse) multiplies it from the left, as torch."""

    def __init__(self, weight, orthogonal_map, use_trivialization=True):
        super().__init__()
        self.shape = tuple(weight.shape)
        self.orthogonal_map = orthogonal_map
        self.use_trivialization = use_trivialization

    def construct(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.swapaxes(-1, -2)
            n, k = k, n
        if self.orthogonal_map == "householder":
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = _param_householder_product(A, tau)
            # torch multiplies by the diagonal's int() (±1), which no gradient reaches
            Q = Q * ops.stop_gradient(ops.diagonal(X, 0, -2, -1)).astype(ms.int32).astype(X.dtype).expand_dims(-2)
        else:
            X = X.tril()
            if n != k:
                X = ops.cat([X, ops.zeros(X.shape[:-2] + (n, n - k), X.dtype)], -1)
            A = X - X.swapaxes(-1, -2)
            if self.orthogonal_map == "matrix_exp":
                Q = linalg_matrix_exp(A)
            else:
                Id = ops.broadcast_to(ops.eye(n, n, A.dtype), A.shape)
                Q = ops.matrix_solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        if self.use_trivialization:
            Q = ops.matmul(self.base, Q)
        if transposed:
            Q = Q.swapaxes(-1, -2)
        return Q

    def right_inverse(self, Q):
        if tuple(Q.shape) != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {tuple(Q.shape)}.")
        if not self.use_trivialization:
            raise NotImplementedError("use_trivialization=False: the geqrf-based right inverse is not converted")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        if n < k:
            Q = Q.swapaxes(-1, -2)
            n, k = k, n
        if n != k:   # torch completes a tall matrix with random columns (its generator: load torch's base)
            Q = ops.cat([Q, ops.standard_normal(Q.shape[:-2] + (n, n - k)).astype(Q.dtype)], -1)
        if n != k or not _param_is_orthogonal(Q):
            Q = _param_make_orthogonal(Q)
        self.base = ms.Parameter(Q.copy(), name="base", requires_grad=False)
        eye = ops.eye(Q_init.shape[-2], Q_init.shape[-1], Q_init.dtype)
        return -ops.broadcast_to(eye, Q_init.shape)


def _param_householder_product(A, tau):
    """torch.linalg.householder_product(A, tau) for A strictly lower triangular, written with matmuls (ops.orgqr
    has no gradient): the first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i = e_i + A[:, i]."""
    n, k = A.shape[-2], A.shape[-1]
    eye = ops.eye(n, n, A.dtype)
    Q = ops.broadcast_to(eye, A.shape[:-2] + (n, n))
    for i in range(k):
        v = A[..., :, i] + eye[i]
        Q = Q - tau[..., i:i + 1, None] * ops.matmul(Q, v[..., :, None]) * v[..., None, :]
    return Q[..., :k]


def _param_is_orthogonal(Q):
    """torch's _is_orthogonal: allclose(Q^T Q, I, atol=10 n eps) (rtol 1e-5)."""
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * {ms.float16: 2.0 ** -10, ms.float64: 2.0 ** -52}.get(Q.dtype, 2.0 ** -23)
    eye = ops.eye(k, k, Q.dtype)
    gram = ops.matmul(Q.swapaxes(-1, -2), Q)
    return bool((ops.abs(gram - eye) <= eps + 1e-5 * eye).all())


def _param_make_orthogonal(A):
    """torch's _make_orthogonal: the Q of A's QR with R's diagonal made positive."""
    Q, R = ops.qr(A)
    return Q * ops.sign(ops.diagonal(R, 0, -2, -1)).expand_dims(-2)


def parametrizations_orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """torch.nn.utils.parametrizations.orthogonal: parametrizations.<name>.original and the buffer
    parametrizations.<name>.0.base, as torch."""
    weight = getattr(module, name, None)
    if not isinstance(weight, ms.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    if orthogonal_map not in ("matrix_exp", "cayley", "householder"):
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    return register_parametrization(module, name, _ParamOrthogonal(weight, orthogonal_map, use_trivialization),
                                    unsafe=True)
