"""einops on MindSpore tensors: rearrange, repeat, reduce, einsum, pack/unpack, parse_shape
and the Rearrange/Reduce layers.

einops has no MindSpore backend. msmigrate translates calls whose pattern is a literal
into reshape/transpose/broadcast/reduction code at the call site; these helpers serve the
rest (patterns built at run time, lists of tensors, einsum, pack/unpack, the layers).
The pattern is parsed from the tensor's shape with plain Python, so inside a Cell's
construct in GRAPH mode MindSpore evaluates the planning once, while compiling.
"""


# ----------------------------------------------------------------- pattern parsing
# Pure Python (no MindSpore): msmigrate reads this part to translate literal patterns.
EINOPS_ELLIPSIS = "..."


def einops_parse_side(text, allow_underscore=False):
    """One side of a pattern ('b (h w) ... c') as a tuple of groups. A group is a tuple of
    axis tokens: a name, an int (an anonymous axis such as 3), or '...'. A bare '...'
    stands alone as the string '...'; '1' and '()' are empty groups."""
    text = text.replace(EINOPS_ELLIPSIS, " \u2026 ")
    if "." in text:
        raise ValueError("einops: dots are only allowed in one ellipsis '...'")
    groups = []
    current = None          # the open parenthesised group, or None
    seen = []
    token = ""
    for char in text + " ":
        if char.isalnum() or char in ("_", "\u2026"):
            token += char
            continue
        if token:
            if token == "\u2026":
                axis = EINOPS_ELLIPSIS
            elif token.isdecimal():
                axis = int(token)
            elif token.isidentifier() and (not (token.startswith("_") or token.endswith("_"))
                                           or (allow_underscore and token == "_")):
                axis = token
            else:
                raise ValueError(f"einops: invalid axis name {token!r}")
            if isinstance(axis, str) and axis != "_":
                if axis in seen:
                    raise ValueError(f"einops: duplicate axis {axis!r} in {text.strip()!r}")
                seen.append(axis)
            if isinstance(axis, int) and axis < 1:
                raise ValueError(f"einops: anonymous axis must be positive, not {axis}")
            if current is not None:
                if axis != 1:          # '1' inside parentheses changes nothing
                    current.append(axis)
            elif axis == EINOPS_ELLIPSIS:
                groups.append(EINOPS_ELLIPSIS)
            else:
                groups.append(() if axis == 1 else (axis,))
            token = ""
        if char == "(":
            if current is not None:
                raise ValueError("einops: parentheses cannot be nested")
            current = []
        elif char == ")":
            if current is None:
                raise ValueError("einops: unbalanced parentheses")
            groups.append(tuple(current))
            current = None
        elif char != " ":
            raise ValueError(f"einops: unexpected character {char!r}")
    if current is not None:
        raise ValueError("einops: unbalanced parentheses")
    if sum(1 for g in groups if g == EINOPS_ELLIPSIS or EINOPS_ELLIPSIS in g) > 1:
        raise ValueError("einops: only one ellipsis per side")
    return tuple(groups)


def _einops_expand_ellipsis(groups, n_ellipsis):
    """Replace '...' by n_ellipsis axes named '...0', '...1' (a bare ellipsis gives one
    group per axis; inside parentheses they stay one group)."""
    names = tuple(f"{EINOPS_ELLIPSIS}{i}" for i in range(n_ellipsis))
    out = []
    for g in groups:
        if g == EINOPS_ELLIPSIS:
            out.extend((n,) for n in names)
        elif EINOPS_ELLIPSIS in g:
            expanded = []
            for a in g:
                expanded.extend(names if a == EINOPS_ELLIPSIS else (a,))
            out.append(tuple(expanded))
        else:
            out.append(g)
    return tuple(out)


def einops_recipe(pattern, operation, ndim, given):
    """What rearrange/repeat/reduce(pattern) does to an ndim-dimensional tensor, given the
    axis lengths named in `given` (a tuple of names). Returns a tuple:
      axes        elementary axes: the input's (left to right), then the new ones of repeat;
                  each a name, or ('#', position, length) for an anonymous axis
      in_groups   per input dimension, the indices (into axes) it is made of
      reduced     indices of the input's elementary axes that are reduced away
      order       the kept input axes in output order (indices into axes)
      out_groups  per output dimension, the indices it is made of (new axes included)
    Anonymous axes get their length from the pattern; named ones from `given` or the shape."""
    if "->" not in pattern:
        raise ValueError(f"einops: pattern {pattern!r} has no '->'")
    left_text, right_text = pattern.split("->")
    left = einops_parse_side(left_text)
    right = einops_parse_side(right_text)
    left_ell = any(g == EINOPS_ELLIPSIS for g in left)
    if any(g != EINOPS_ELLIPSIS and EINOPS_ELLIPSIS in g for g in left):
        raise ValueError("einops: an ellipsis inside parentheses is only allowed on the right side")
    right_ell = any(g == EINOPS_ELLIPSIS or EINOPS_ELLIPSIS in g for g in right)
    if right_ell and not left_ell:
        raise ValueError(f"einops: ellipsis on the right side only of {pattern!r}")
    if left_ell:
        n_ell = ndim - (len(left) - 1)
        if n_ell < 0:
            raise ValueError(f"einops: {pattern!r} needs at least {len(left) - 1} dimensions, got {ndim}")
        left = _einops_expand_ellipsis(left, n_ell)
        right = _einops_expand_ellipsis(right, n_ell)
    elif ndim != len(left):
        raise ValueError(f"einops: {pattern!r} needs {len(left)} dimensions, got {ndim}")
    # anonymous axes are distinct from each other: give each its own key
    axes = []
    in_groups = []
    for g in left:
        idx = []
        for a in g:
            axes.append(("#", len(axes), a) if isinstance(a, int) else a)
            idx.append(len(axes) - 1)
        in_groups.append(tuple(idx))
    left_names = [a for a in axes if not isinstance(a, tuple)]
    right_names = [a for g in right for a in g if not isinstance(a, int)]
    only_left = [a for a in left_names if a not in right_names]
    only_right = [a for a in right_names if a not in left_names]
    right_anonymous = any(isinstance(a, int) for g in right for a in g)
    if operation == "rearrange":
        if right_anonymous or len(left_names) != len(axes):
            raise ValueError("einops: rearrange takes no anonymous axes other than 1")
        if only_left or only_right:
            raise ValueError(f"einops: axes on one side only of {pattern!r}: {only_left + only_right}")
    elif operation == "repeat":
        if only_left:
            raise ValueError(f"einops: repeat drops axes {only_left}")
        missing = [a for a in only_right if a not in given]
        if missing:
            raise ValueError(f"einops: repeat needs the lengths of the new axes {missing}")
    elif only_right or right_anonymous:
        raise ValueError(f"einops: reduce cannot add axes: {pattern!r}")
    for name in given:
        if name not in left_names and name not in right_names:
            raise ValueError(f"einops: axis {name!r} is not used in {pattern!r}")
    for g in in_groups:
        unknown = [axes[i] for i in g if not isinstance(axes[i], tuple) and axes[i] not in given]
        if len(unknown) > 1:
            raise ValueError(f"einops: cannot infer the lengths of {unknown} in {pattern!r}")
    out_groups = []
    for g in right:
        idx = []
        for a in g:
            if isinstance(a, int) or a not in axes:     # a new axis of repeat
                axes.append(("#", len(axes), a) if isinstance(a, int) else a)
                idx.append(len(axes) - 1)
            else:
                idx.append(axes.index(a))
        out_groups.append(tuple(idx))
    n_in = sum(len(g) for g in in_groups)
    kept = tuple(i for g in out_groups for i in g)
    reduced = tuple(i for i in range(n_in) if i not in kept)
    order = tuple(i for g in out_groups for i in g if i < n_in)
    return tuple(axes), tuple(in_groups), reduced, order, tuple(out_groups)


def einops_lengths(recipe, shape, lengths):
    """Every elementary axis length (a list), from the input shape and the given lengths
    (a dict); checks what einops checks."""
    axes, in_groups = recipe[0], recipe[1]
    known = []
    for a in axes:
        if isinstance(a, tuple):
            known.append(a[2])
        else:
            known.append(lengths.get(a, -1))
    for dim, group in zip(shape, in_groups):
        product = 1
        unknown = -1
        for i in group:
            if known[i] == -1:
                unknown = i
            else:
                product = product * known[i]
        if unknown == -1:
            if product != dim:
                raise ValueError(f"einops: dimension of length {dim} does not match the axes' product {product}")
        else:
            if product == 0 or dim % product != 0:
                raise ValueError(f"einops: cannot split a dimension of length {dim} into parts of {product}")
            known[unknown] = dim // product
    return known


def einops_pack_split(pattern):
    """pack/unpack pattern ('b * c'): the number of axes before and after '*'."""
    parts = pattern.split()
    if parts.count("*") != 1:
        raise ValueError(f"einops: a pack pattern needs exactly one '*': {pattern!r}")
    position = parts.index("*")
    return position, len(parts) - position - 1


def einops_einsum_terms(pattern, ndims):
    """einsum pattern with named axes ('b i d, b j d -> b i j') as (tuple of input axis
    tuples, output axis tuple); '...' becomes one name per dimension it covers."""
    if "->" not in pattern:
        raise ValueError("einops.einsum: the pattern needs '->'")
    left, right = pattern.split("->")
    inputs = []
    n_ell = -1
    for text, ndim in zip(left.split(","), ndims):
        names = tuple(text.replace(EINOPS_ELLIPSIS, f" {EINOPS_ELLIPSIS} ").split())
        if EINOPS_ELLIPSIS in names:
            n = ndim - (len(names) - 1)
            if n_ell not in (-1, n):
                raise ValueError("einops.einsum: '...' covers a different number of dimensions in two inputs")
            n_ell = n
        inputs.append(names)
    if len(inputs) != len(ndims):
        raise ValueError(f"einops.einsum: {len(ndims)} tensors for {len(inputs)} inputs in the pattern")
    out = tuple(right.replace(EINOPS_ELLIPSIS, f" {EINOPS_ELLIPSIS} ").split())
    ell = tuple(f"{EINOPS_ELLIPSIS}{i}" for i in range(max(n_ell, 0)))

    def expand(names):
        res = []
        for n in names:
            res.extend(ell if n == EINOPS_ELLIPSIS else (n,))
        return tuple(res)
    inputs = tuple(expand(n) for n in inputs)
    for names, ndim in zip(inputs, ndims):
        if len(names) != ndim:
            raise ValueError(f"einops.einsum: {names} for a tensor with {ndim} dimensions")
        if any(names.count(n) > 1 for n in names):
            raise ValueError("einops.einsum: repeated axes within one input (diagonals) are not supported here")
    return inputs, expand(out)


# ---------------------------------------------------------------- MindSpore execution
# The plans below are computed from shapes with plain Python; ops.constexpr makes GRAPH mode
# run them while compiling (shapes are known then) instead of compiling the parser.
def _einops_product(values):
    product = 1
    for v in values:
        product = product * v
    return product


@ops.constexpr
def _einops_plan(pattern, operation, shape, lengths):
    """(init reshape, reduced axes, permutation, reshape before broadcast, broadcast shape,
    final reshape) for rearrange/repeat/reduce; None where a step is not needed."""
    given = dict(lengths)
    recipe = einops_recipe(pattern, operation, len(shape), tuple(given))
    axes, in_groups, reduced, order, out_groups = recipe
    size = einops_lengths(recipe, shape, given)
    n_in = sum(len(g) for g in in_groups)
    init = None
    # a reshape also checks lengths given for plain axes, as einops does
    if any(len(g) != 1 or axes[g[0]] in given for g in in_groups):
        init = tuple(size[:n_in])
    kept = [i for i in range(n_in) if i not in reduced]
    perm = tuple(kept.index(i) for i in order)
    flat_out = [i for g in out_groups for i in g]
    expand = bcast = None
    if len(flat_out) != len(order):           # repeat: new axes of length 1, then broadcast
        expand = tuple(size[i] if i < n_in else 1 for i in flat_out)
        bcast = tuple(size[i] for i in flat_out)
    final = tuple(_einops_product([size[i] for i in g]) for g in out_groups)
    if final == tuple(size[i] for i in flat_out):
        final = None
    return init, reduced, (None if perm == tuple(range(len(perm))) else perm), expand, bcast, final


# einops' reduction names -> the mindspore.ops function taking (x, axes)
_EINOPS_REDUCTIONS = {"mean": "mean", "sum": "sum", "max": "amax", "min": "amin", "prod": "prod", "any": "any",
                      "all": "all"}


def _einops_reduce(x, reduction, axes):
    if isinstance(reduction, str):
        return getattr(ops, _EINOPS_REDUCTIONS[reduction])(x, axes)
    return reduction(x, axes)   # einops also takes a function(tensor, axes)


def _einops_apply(x, pattern, operation, reduction, lengths):
    if isinstance(x, (list, tuple)):          # einops stacks a list of tensors along a new first axis
        x = ops.stack(x)
    init, reduced, perm, expand, bcast, final = _einops_plan(pattern, operation, x.shape, tuple(lengths.items()))
    if init is not None:
        x = x.reshape(init)
    if reduced:
        x = _einops_reduce(x, reduction, reduced)
    if perm is not None:
        x = ops.transpose(x, perm)
    if expand is not None:
        x = ops.broadcast_to(x.reshape(expand), bcast)
    if final is not None:
        x = x.reshape(final)
    return x


def einops_rearrange(tensor, pattern, **axes_lengths):
    """einops.rearrange."""
    return _einops_apply(tensor, pattern, "rearrange", None, axes_lengths)


def einops_repeat(tensor, pattern, **axes_lengths):
    """einops.repeat (broadcast, then reshape: a copy as in einops)."""
    return _einops_apply(tensor, pattern, "repeat", None, axes_lengths)


def einops_reduce(tensor, pattern, reduction, **axes_lengths):
    """einops.reduce: 'mean', 'sum', 'max', 'min', 'prod', 'any', 'all' or a function(x, axes)."""
    return _einops_apply(tensor, pattern, "reduce", reduction, axes_lengths)


@ops.constexpr
def _einops_parse_shape(pattern, shape):
    groups = einops_parse_side(pattern, allow_underscore=True)
    if EINOPS_ELLIPSIS in groups:
        groups = _einops_expand_ellipsis(groups, len(shape) - (len(groups) - 1))
    if len(groups) != len(shape):
        raise ValueError(f"einops.parse_shape: {pattern!r} does not fit a shape of {len(shape)} dimensions")
    result = {}
    for g, dim in zip(groups, shape):
        if len(g) == 0 and dim == 1:
            continue
        if len(g) != 1 or isinstance(g[0], int) and g[0] != dim:
            raise ValueError(f"einops.parse_shape: {pattern!r} does not fit the shape {shape}")
        if isinstance(g[0], str) and g[0] != "_" and not g[0].startswith(EINOPS_ELLIPSIS):
            result[g[0]] = dim
    return result


def einops_parse_shape(tensor, pattern):
    """einops.parse_shape: {axis name: length}; '_' skips a dimension."""
    return _einops_parse_shape(pattern, tensor.shape)


@ops.constexpr
def _einops_pack_plan(pattern, shapes):
    before, after = einops_pack_split(pattern)
    flat, stars = [], []
    for shape in shapes:
        if len(shape) < before + after:
            raise ValueError(f"einops.pack: {pattern!r} needs at least {before + after} dimensions, got {shape}")
        star = tuple(shape[before:len(shape) - after])
        stars.append(star)
        flat.append(tuple(shape[:before]) + (_einops_product(star),) + tuple(shape[len(shape) - after:]))
    return before, tuple(flat), stars


def einops_pack(tensors, pattern):
    """einops.pack: (packed tensor, the shapes the '*' stood for)."""
    axis, flat, packed_shapes = _einops_pack_plan(pattern, tuple(t.shape for t in tensors))
    return ops.cat([t.reshape(s) for t, s in zip(tensors, flat)], axis=axis), packed_shapes


@ops.constexpr
def _einops_unpack_plan(pattern, shape, packed_shapes):
    before, after = einops_pack_split(pattern)
    stars = [tuple(s) for s in packed_shapes]
    sizes = [_einops_product([d for d in s if d != -1]) for s in stars]
    unknown = [i for i, s in enumerate(stars) if -1 in s]
    if len(unknown) > 1:
        raise ValueError("einops.unpack: at most one shape may hold -1")
    if unknown:
        rest = shape[before] - (sum(sizes) - sizes[unknown[0]])
        stars[unknown[0]] = tuple(rest // sizes[unknown[0]] if d == -1 else d for d in stars[unknown[0]])
        sizes[unknown[0]] = rest
    if sum(sizes) != shape[before]:
        raise ValueError(f"einops.unpack: shapes {packed_shapes} do not add up to {shape[before]}")
    starts = tuple(sum(sizes[:i]) for i in range(len(sizes)))
    outs = tuple(tuple(shape[:before]) + s + tuple(shape[len(shape) - after:]) for s in stars)
    return before, starts, tuple(sizes), outs


def einops_unpack(tensor, packed_shapes, pattern):
    """einops.unpack: the list of tensors einops.pack packed (one shape may hold a -1)."""
    axis, starts, sizes, outs = _einops_unpack_plan(pattern, tensor.shape, tuple(tuple(s) for s in packed_shapes))
    return [ops.narrow(tensor, axis, start, n).reshape(out) for start, n, out in zip(starts, sizes, outs)]


def _einops_sum_plan(axes, needed):
    drop = tuple(i for i in range(len(axes)) if axes[i] not in needed)
    return drop, tuple(n for n in axes if n in needed)


@ops.constexpr
def _einops_einsum_plan(pattern, shapes):
    """Pairwise contraction steps for einops.einsum: per further operand (axes of the running
    result to sum away, of the operand to sum away, permutation and 3-d shape of each side,
    shape of the product), then (axes to sum away, permutation) for the result."""
    inputs, out = einops_einsum_terms(pattern, tuple(len(s) for s in shapes))
    size = {}
    for names, shape in zip(inputs, shapes):
        for n, d in zip(names, shape):
            size[n] = d
    steps = []
    current = inputs[0]
    for i in range(1, len(inputs)):
        needed = out + tuple(n for names in inputs[i + 1:] for n in names)
        drop_a, current = _einops_sum_plan(current, needed + inputs[i])
        drop_b, other = _einops_sum_plan(inputs[i], needed + current)
        batch = tuple(n for n in current if n in other and n in needed)
        summed = tuple(n for n in current if n in other and n not in needed)
        a_free = tuple(n for n in current if n not in other)
        b_free = tuple(n for n in other if n not in current)
        perm_a = tuple(current.index(n) for n in batch + a_free + summed)
        perm_b = tuple(other.index(n) for n in batch + summed + b_free)
        nb, m, k, n_ = (_einops_product([size[n] for n in part]) for part in (batch, a_free, summed, b_free))
        current = batch + a_free + b_free
        steps.append((drop_a, drop_b, perm_a, (nb, m, k), perm_b, (nb, k, n_), tuple(size[n] for n in current)))
    drop, current = _einops_sum_plan(current, out)
    missing = [n for n in out if n not in current]
    if missing:
        raise ValueError(f"einops.einsum: output axes {missing} are in no input")
    perm = tuple(current.index(n) for n in out)
    return tuple(steps), drop, (None if perm == tuple(range(len(perm))) else perm)


def einops_einsum(*tensors_and_pattern):
    """einops.einsum(x, y, 'b i d, b j d -> b i j'): MindSpore's einsum has no CPU kernel, so
    this contracts pairwise with transposes, reshapes and batched matmuls."""
    tensors = tensors_and_pattern[:-1]
    steps, drop, perm = _einops_einsum_plan(tensors_and_pattern[-1], tuple(t.shape for t in tensors))
    result = tensors[0]
    for i in range(len(steps)):
        drop_a, drop_b, perm_a, shape_a, perm_b, shape_b, shape_out = steps[i]
        other = tensors[i + 1]
        if drop_a:
            result = ops.sum(result, drop_a)
        if drop_b:
            other = ops.sum(other, drop_b)
        a = ops.transpose(result, perm_a).reshape(shape_a)
        b = ops.transpose(other, perm_b).reshape(shape_b)
        result = _einsum_matmul(a, b).reshape(shape_out)
    if drop:
        result = ops.sum(result, drop)
    if perm is not None:
        result = ops.transpose(result, perm)
    return result


def _einsum_matmul(a, b):
    """ops.matmul, on the real and imaginary parts where an operand is complex (s4's log_vandermonde_naive:
    `contract('... n, ... n l -> ... l', v, vandermonde_matrix)` of complex tensors): MindSpore 2.10 has no
    gradient for a complex product (compat_parts/complex_operands.py)."""
    complex_a, complex_b = a.dtype in (ms.complex64, ms.complex128), b.dtype in (ms.complex64, ms.complex128)
    if not complex_a and not complex_b:
        return ops.matmul(a, b)
    real = ms.float64 if ms.complex128 in (a.dtype, b.dtype) or ms.float64 in (a.dtype, b.dtype) else ms.float32
    ar, ai = (ops.real(a).astype(real), ops.imag(a).astype(real)) if complex_a else (a.astype(real), None)
    br, bi = (ops.real(b).astype(real), ops.imag(b).astype(real)) if complex_b else (b.astype(real), None)
    if ai is None:
        return ops.Complex()(ops.matmul(ar, br), ops.matmul(ar, bi))
    if bi is None:
        return ops.Complex()(ops.matmul(ar, br), ops.matmul(ai, br))
    return ops.Complex()(ops.matmul(ar, br) - ops.matmul(ai, bi), ops.matmul(ar, bi) + ops.matmul(ai, br))


class EinopsRearrange(nn.Cell):
    """einops.layers.torch.Rearrange."""

    def __init__(self, pattern, **axes_lengths):
        super().__init__()
        self.pattern = pattern
        self.axes_lengths = axes_lengths

    def construct(self, x):
        return _einops_apply(x, self.pattern, "rearrange", None, self.axes_lengths)


class EinopsReduce(nn.Cell):
    """einops.layers.torch.Reduce."""

    def __init__(self, pattern, reduction, **axes_lengths):
        super().__init__()
        self.pattern = pattern
        self.reduction = reduction
        self.axes_lengths = axes_lengths

    def construct(self, x):
        return _einops_apply(x, self.pattern, "reduce", self.reduction, self.axes_lengths)
