"""torch.isin(..., assume_unique=True). torch then skips its unique() and, once the test elements are not few
(numpy's heuristic: at least int(10 * elements.numel() ** 0.145)), marks an element found when its neighbour in
the stable sort of elements ++ test_elements is equal. On inputs that really are unique that is membership; on
repeated values torch's answer is that neighbour rule, not membership, and it is reproduced here (on the host:
MindSpore 2.10's CPU sort compares float64 as float32; isin has no gradient)."""


def isin_assume_unique(elements, test_elements, invert=False):
    """torch.isin(elements, test_elements, assume_unique=True, invert=invert)."""
    e = elements.asnumpy().reshape(-1)
    t = test_elements.asnumpy().reshape(-1)
    if e.size == 0 or t.size < int(10.0 * e.size ** 0.145):
        found = np.isin(e, t, invert=invert)    # torch's elementwise loop: assume_unique plays no part
    else:
        joined = np.concatenate([e, t])
        order = np.argsort(joined, kind="stable")
        ranked = joined[order]
        neighbour = np.append(ranked[1:] != ranked[:-1] if invert else ranked[1:] == ranked[:-1], invert)
        found = np.empty_like(neighbour)
        found[order] = neighbour
        found = found[:e.size]
    return ms.Tensor(found.reshape(elements.shape))
