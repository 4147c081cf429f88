"""torch.einsum with an equation built at run time (an f-string with placeholders); a literal
equation is expanded at conversion time instead (mappings/torch_functions.py)."""


def torch_einsum(equation, *operands):
    """torch.einsum(equation, *operands): torch's one-letter axes (spaces ignored, '...' kept)
    as an einops pattern, contracted by einops_einsum (ops.einsum has no CPU kernel)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return einops_einsum(*operands, _torch_einsum_pattern(equation))


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
