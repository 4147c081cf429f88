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
    """torch broadcasts the dimensions '...' covers, right-aligned, as for `*` (s4's log_vandermonde_naive:
    `contract('... n, ... n l -> ... l', v, vandermonde_matrix)` with v (C, H, N) and the matrix (H, N, L));
    einops_einsum wants '...' to cover the same dimensions in every operand: each operand gets its missing
    leading ones and is broadcast to the common sizes."""
    places = _einsum_ellipsis_places(equation, tuple(o.ndim for o in operands))
    spans = [p for p in places if p is not None]
    if not spans:
        return operands
    n = max(c for _, c in spans)
    padded = []
    for o, p in zip(operands, places):
        if p is not None and p[1] < n:
            start, c = p
            o = o.reshape(o.shape[:start] + (1,) * (n - c) + o.shape[start:])
        padded.append(o)
    sizes = [1] * n
    for o, p in zip(padded, places):
        if p is not None:
            for i in range(n):
                sizes[i] = max(sizes[i], o.shape[p[0] + i])
    out = []
    for o, p in zip(padded, places):
        if p is not None and tuple(o.shape[p[0]:p[0] + n]) != tuple(sizes):
            o = ops.broadcast_to(o, o.shape[:p[0]] + tuple(sizes) + o.shape[p[0] + n:])
        out.append(o)
    return tuple(out)


@ops.constexpr
def _einsum_ellipsis_places(equation, ndims):
    """Per operand, (the position of its first dimension under '...', how many '...' covers), or None."""
    terms = equation.replace(" ", "").partition("->")[0].split(",")
    out = []
    for term, ndim in zip(terms, ndims):
        if "..." not in term:
            out.append(None)
            continue
        start = term.index("...")
        out.append((start, ndim - (len(term) - 3)))
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
