"""MindSpore 2.10 (CPU, PYNATIVE) against torch: the mixed second derivative d/dw (dL/dx) through a matmul.

    python bench/matmul_second_order.py

Measured 2026-12: x @ w, ops.matmul and mint.matmul give a wrong (or zero) result, the ops.MatMul primitive,
ops.dense give torch's. It matters wherever converted code differentiates a
gradient again (torch.autograd.grad(create_graph=True) taken into a train step, autograd.functional.hessian /
hvp / vhp, gradgradcheck): msmigrate/mappings/autograd.py notes it on those records."""
import numpy as np
import mindspore as ms
import torch
from mindspore import mint, ops

rng = np.random.default_rng(0)
x, w, c = [rng.standard_normal(s).astype(np.float32) for s in ((3, 2), (2, 2), (3, 2))]
X, C, S = ms.Tensor(x), ms.Tensor(c), ms.Tensor(np.ones((3, 2), np.float32))


def torch_mixed(f):
    tx, tw = torch.from_numpy(x).requires_grad_(), torch.from_numpy(w).requires_grad_()
    u = f(tx, tw)
    du = torch.autograd.grad(u, tx, torch.ones_like(u), create_graph=True)[0]
    (du * torch.from_numpy(c)).sum().backward()
    return tw.grad.numpy()


def ms_mixed(f):
    def weighted(x_, w_):
        return (f(x_, w_) * S).sum()
    return ms.grad(lambda w_: (ms.grad(weighted, grad_position=0)(X, w_) * C).sum())(ms.Tensor(w)).asnumpy()


CASES = {
    "x @ w": (lambda a, b: torch.tanh(a @ b), lambda a, b: ops.tanh(a @ b)),
    "ops.matmul": (lambda a, b: torch.tanh(a @ b), lambda a, b: ops.tanh(ops.matmul(a, b))),
    "mint.matmul": (lambda a, b: torch.tanh(a @ b), lambda a, b: ops.tanh(mint.matmul(a, b))),
    "ops.MatMul()": (lambda a, b: torch.tanh(a @ b), lambda a, b: ops.tanh(ops.MatMul()(a, b))),
    "ops.dense(x, w.T)": (lambda a, b: torch.tanh(a @ b), lambda a, b: ops.tanh(ops.dense(a, b.T))),
    "linear sum(x @ w)": (lambda a, b: a @ b, lambda a, b: a @ b),
}
if __name__ == "__main__":
    for name, (tf, mf) in CASES.items():
        ref, got = torch_mixed(tf), ms_mixed(mf)
        print(f"{name:22s} {'same as torch' if np.allclose(got, ref, atol=1e-5) else 'DIFFERENT'}"
              f"  max |diff| {np.abs(got - ref).max():.3g}")
