"""torch.einsum with an equation built at run time (an f-string with placeholders); a literal
equation is expanded at conversion time instead (mappings/torch_functions.py)."""


def torch_einsum(equation, *operands):
    """torch.einsum(equation, *operands): torch's one-letter axes (spaces ignored, '...' kept)
    as an einops pattern, contracted by einops_einsum (ops.einsum has no CPU kernel)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    operands = _ellipsis_broadcast(equation, operands)
    return einops_einsum(*operands, _torch_einsum_pattern(equation))


def _ellipsis_broadcast(equation, operands):
    """torch broadcasts, as `*` does, the dimensions '...' covers (right-aligned: s4's log_vandermonde_naive,
    `contract('... n, ... n l -> ... l', v, vandermonde_matrix)` with v (C, H, N) and the matrix (H, N, L)) and a
    letter of size 1 in one operand against its size in another (s4's DPLR step, `contract('r h n, r h m, ... h m
    -> ... h n', P, Q, state)`); einops_einsum wants '...' to cover the same dimensions in every operand and each
    letter one size: each operand gets its missing leading ones and is broadcast to the common sizes."""
    axes = _einsum_operand_axes(equation, tuple(o.ndim for o in operands))
    if axes is None:
        return operands
    padded = []
    for o, (start, missing, names) in zip(operands, axes):
        if missing:
            o = o.reshape(o.shape[:start] + (1,) * missing + o.shape[start:])
        padded.append(o)
    sizes = {}
    for o, (_, _, names) in zip(padded, axes):
        for name, size in zip(names, o.shape):
            sizes[name] = max(sizes.get(name, 1), size)
    out = []
    for o, (_, _, names) in zip(padded, axes):
        want = tuple(sizes[name] for name in names)
        out.append(o if tuple(o.shape) == want else ops.broadcast_to(o, want))
    return tuple(out)


@ops.constexpr
def _einsum_operand_axes(equation, ndims):
    """Per operand (where its '...' starts, how many leading dimensions of size 1 it lacks against the operand
    whose '...' covers most, its axis names with '...' spelled '.0', '.1', ...); None for more operands than terms."""
    terms = equation.replace(" ", "").partition("->")[0].split(",")
    if len(terms) != len(ndims):
        return None
    counts = [ndim - (len(term) - 3) if "..." in term else 0 for term, ndim in zip(terms, ndims)]
    n = max(counts) if counts else 0
    out = []
    for term, c in zip(terms, counts):
        if "..." not in term:
            out.append((0, 0, tuple(term)))
            continue
        start = term.index("...")
        names = tuple(term[:start]) + tuple(f".{i}" for i in range(n)) + tuple(term[start + 3:])
        out.append((start, n - c, names))
    return tuple(out)


# The equation is read with plain Python string methods, which GRAPH mode does not compile (nor a
# raise of MigrationError): ops.constexpr runs it while compiling, on the constant equation.
@ops.constexpr
def _torch_einsum_pattern(equation):
    """torch's equation ('bhid,bhjd->bhij') as an einops pattern ('b h i d, b h j d -> b h i j')."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if not arrow:   # implicit output: the letters seen once, in alphabetical order, after any '...'
        letters = "".join(t.replace("...", "") for t in terms)
        rhs = ("..." if "..." in lhs else "") + "".join(sorted(c for c in set(letters) if letters.count(c) == 1))

    def axes(term):
        names = term.replace("...", ".").replace(".", " ... ").split(" ")
        out = []
        for n in names:
            out.extend([n] if n == "..." else list(n))
        return " ".join(out)
    if any(len(set(t.replace("...", ""))) != len(t.replace("...", "")) for t in terms):
        raise MigrationError(f"torch.einsum({equation!r}): a letter repeated inside one operand (a diagonal) "
                             "is not converted")
    return ", ".join(axes(t) for t in terms) + " -> " + axes(rhs)
