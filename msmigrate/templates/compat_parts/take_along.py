# torch.take_along_dim broadcasts the input and the indices against each other in every dimension but
# dim; ops.gather_elements wants equal shapes (an index of size 1 elsewhere gave a smaller result).


def take_along_dim(input, indices, dim):
    """torch.take_along_dim(input, indices, dim): both broadcast outside dim, then ops.gather_elements."""
    d = dim % input.ndim
    common = [max(a, b) for a, b in zip(input.shape, indices.shape)]
    x_shape = tuple(input.shape[i] if i == d else common[i] for i in range(input.ndim))
    i_shape = tuple(indices.shape[i] if i == d else common[i] for i in range(input.ndim))
    if tuple(input.shape) != x_shape:
        input = ops.broadcast_to(input, x_shape)
    if tuple(indices.shape) != i_shape:
        indices = ops.broadcast_to(indices, i_shape)
    return ops.gather_elements(input, d, indices)
