"""torch.autograd: custom Functions (a Cell whose bprop calls the user's backward) and the functional
transforms (torch.autograd.functional), all in the emitted runtime (templates/compat_parts/autograd.py)."""
from __future__ import annotations

from ..callsite import UnsupportedSite
from ..records import CONVERTED, DIFFERENCE, mapping, rule

T = "tests/parity/test_autograd.py"

_FUNCTION_NOTE = ("subclasses keep forward(ctx, ...) / backward(ctx, *grads) as written; Fn.apply(...) runs "
                  "forward in a Cell whose bprop calls backward, so ms.grad/value_and_grad use the custom "
                  "gradient. PYNATIVE mode only: a converted program whose imports define one starts in PYNATIVE "
                  "mode, and a graph compiled over Fn.apply stops; needs_input_grad is True for every tensor "
                  "argument")
for _src in ("torch.autograd.Function", "torch.autograd.function.Function"):
    mapping(_src, "_ms_compat.Function", status=DIFFERENCE, note=_FUNCTION_NOTE,
            test=f"{T}::test_custom_functions")
for _src in ("torch.autograd.function.FunctionCtx", "torch.autograd.function.BackwardCFunction"):
    mapping(_src, "_ms_compat.FunctionCtx", note="the ctx type (annotations and isinstance checks)",
            test=f"{T}::test_custom_functions")
mapping("torch.autograd.function.once_differentiable", "_ms_compat.once_differentiable", takes_torch_args=True,
        note="backward is used as written; a second-order gradient differentiates backward's operations again "
             "(torch raises there instead)",
        test=f"{T}::test_custom_functions")

_FUNCTIONAL = {
    "jacobian": (("func", "inputs", "create_graph", "strict", "vectorize", "strategy"),
                 "one reverse-mode gradient per output element; torch's nesting of tuple inputs/outputs"),
    "hessian": (("func", "inputs", "create_graph", "strict", "vectorize", "outer_jacobian_strategy"),
                "mindspore.jacfwd over mindspore.jacrev of the single-element function where it compiles (exact, "
                "the terms through reductions and x @ w included); else op by op, checked against finite "
                "differences of the gradient: MigrationError where MindSpore dropped terms (through reductions, "
                "x @ w's cross blocks); in GRAPH mode it raises MigrationError"),
    "vjp": (("func", "inputs", "v", "create_graph", "strict"), "mindspore.vjp; v defaults to 1 for a "
                                                                "single-element output as in torch"),
    "jvp": (("func", "inputs", "v", "create_graph", "strict"), "mindspore.jvp"),
    "vhp": (("func", "inputs", "v", "create_graph", "strict"), "v^T H, H as hessian computes it"),
    "hvp": (("func", "inputs", "v", "create_graph", "strict"), "H v, H as hessian computes it"),
}
# measured against torch (MindSpore 2.10 CPU PYNATIVE): a second derivative through x @ w / ops.matmul /
# mint.matmul loses the term of the matmul's other operand (d/dw of dL/dx is 0 for sum(x @ w)); the
# ops.MatMul primitive, ops.dense and nn.Dense are right
MATMUL_SECOND_ORDER = ("MindSpore 2.10 loses the mixed second derivative through x @ w / ops.matmul (cross blocks "
                       "wrong; nn.Dense/ops.dense are right) and, op by op, the terms through a reduction (the "
                       "hessian of sum(y) ** 2 is 0); in GRAPH mode it raises MigrationError")
for _name, (_args, _note) in _FUNCTIONAL.items():
    second = _name in ("hessian", "vhp", "hvp")
    mapping(f"torch.autograd.functional.{_name}", f"_ms_compat.{_name}", args=_args, target_args=_args,
            status=DIFFERENCE if second else CONVERTED,
            note=_note + "; create_graph/strict/vectorize/strategy only tune torch's computation",
            test=f"{T}::test_hessian_through_a_reduction" if second else f"{T}::test_functional_transforms")

mapping("torch.autograd.is_tensor_like", "_ms_compat.is_tensor_like", args=("inp",), target_args=("inp",),
        note="isinstance(x, ms.Tensor): MindSpore has no __torch_function__ protocol", test=f"{T}::test_checks")
_GRADCHECK_ARGS = ("func", "inputs")
# the helpers take torch's whole signature (their keyword options with torch's names and meaning)
mapping("torch.autograd.gradcheck", "_ms_compat.gradcheck", args=_GRADCHECK_ARGS, target_args=_GRADCHECK_ARGS,
        status=DIFFERENCE, takes_torch_args=True,
        note="MindSpore's gradients against central finite differences; every floating-point tensor input is "
             "checked (torch: those with requires_grad); the batched/forward-mode options are not checked",
        test=f"{T}::test_checks")
for _src in ("torch.autograd.gradcheck.gradcheck",):
    mapping(_src, "_ms_compat.gradcheck", args=_GRADCHECK_ARGS, target_args=_GRADCHECK_ARGS, status=DIFFERENCE,
            takes_torch_args=True, note="as torch.autograd.gradcheck", test=f"{T}::test_checks")
_GRADGRADCHECK_ARGS = ("func", "inputs", "grad_outputs")
for _src in ("torch.autograd.gradgradcheck", "torch.autograd.gradcheck.gradgradcheck"):
    mapping(_src, "_ms_compat.gradgradcheck", args=_GRADGRADCHECK_ARGS, target_args=_GRADGRADCHECK_ARGS,
            status=DIFFERENCE, takes_torch_args=True,
            note="gradcheck of the first gradient (v^T J as a function of the inputs and of v): MindSpore's "
                 "second-order gradients against finite differences of its first-order ones; grad_outputs left "
                 "out are random normal (seeded); a custom Function's backward marked once_differentiable is "
                 "differentiated again here (torch raises); " + MATMUL_SECOND_ORDER,
            test=f"{T}::test_checks")
_GRAD_NOTE = ("converted where the computation from the inputs (names) to the output is straight-line code of the "
              "same function (an if/else of plain statements binding the names on every path included; a gradient "
              "inside a statement, `g += autograd.grad(c, x)[0]`, taken out first), a derivative of a derivative included (msmigrate/higher_order_grad.py: mindspore.grad "
              "of that computation, differentiable again); elsewhere (loops, several outputs, is_grads_batched) "
              "torch's recorded graph has no MindSpore counterpart and the call stays a TODO that raises; write "
              "instead: ms.grad(fn, grad_position)(inputs) over a function computing the output. MindSpore 2.10 "
              "PYNATIVE gives a zero mixed second derivative through x @ w / ops.matmul (nn.Dense/linear are right)")


@rule("torch.autograd.grad", "mindspore.grad", status=DIFFERENCE,
      args=("outputs", "inputs", "grad_outputs", "retain_graph", "create_graph", "only_inputs", "allow_unused",
            "is_grads_batched", "materialize_grads"),
      note=_GRAD_NOTE, test=f"{T}::test_autograd_grad_outside_a_train_step")
def _autograd_grad(ctx):
    # the call becomes a raising placeholder here; higher_order_grad.py then replaces the placeholders whose
    # computation it can take into a function (the statements of the block from the inputs to the output)
    raise UnsupportedSite("torch.autograd.grad is converted where its output is computed from its input names by "
                          "straight-line statements of the same function (no loop, one output); here it is not; "
                          "write instead: ms.grad(fn, grad_position)(inputs) over a function computing the output")
@rule("torch.autograd.backward", "mindspore.value_and_grad", status=DIFFERENCE,
      args=("tensors", "grad_tensors", "retain_graph", "create_graph", "grad_variables", "inputs"),
      note="with one tensor it is tensors.backward(gradient=grad_tensors, ...), which is how the converter "
           "reads it (msmigrate/autograd_backward.py) before the training-loop rewrite converts it as "
           "Tensor.backward; several tensors at once (torch sums their gradients) stay a TODO; write instead: "
           "backward() of their sum",
      test="tests/test_train_loop.py::test_autograd_backward_function_converts_as_tensor_backward")
def _autograd_backward(ctx):
    # what reaches the record is what autograd_backward.py could not write as Tensor.backward()
    raise UnsupportedSite("torch.autograd.backward over several tensors (or a starred argument): torch sums "
                          "their gradients; write instead: (a + b).backward() over one tensor")

# the saved-tensor machinery of torch's recorded graph: MindSpore keeps no graph a program can inspect or hook
_SAVED = ("MindSpore differentiates functions (ms.grad / value_and_grad) and keeps no recorded graph whose saved "
          "tensors a program can inspect, pack or unpack")
mapping("torch.autograd.SavedTensor", None,
        note=f"the object a torch graph node holds for a saved tensor (grad_fn._raw_saved_*): {_SAVED}; write "
             "instead: nothing for inspection (the values are those forward computed)")
for _src in ("torch.autograd.graph.saved_tensors_hooks", "torch.autograd.graph.save_on_cpu",
             "torch.autograd.graph.disable_saved_tensors_hooks"):
    mapping(_src, None,
            note=f"pack/unpack hooks on the tensors saved for backward: {_SAVED}; write instead: to save memory, "
                 "recompute activations (Cell.recompute() or mindspore.recompute on the block); hooks that change "
                 "the saved values have no counterpart")

mapping("torch.func.grad", "_ms_compat.func_grad", args=("func", "argnums", "has_aux"),
        target_args=("func", "argnums", "has_aux"),
        note="mindspore.grad(func, grad_position=argnums); has_aux: func's (output, aux) gives (grads, aux) as torch "
             "(PYNATIVE: aux is read back from the call); nested for higher derivatives (" + MATMUL_SECOND_ORDER + ")",
        status=DIFFERENCE, test=f"{T}::test_func_grad")


def _is_grad_enabled(ctx):
    """torch's grad mode where the code says it: False under `with torch.no_grad()` / inference_mode /
    set_grad_enabled(False) or in a function decorated with one, True elsewhere (torch's default)."""
    if ctx.bound.order:
        raise UnsupportedSite("torch.is_grad_enabled takes no arguments")
    return ctx.expr("False" if ctx.tr.lexical_grad_mode() is False else "True")


for _src in ("torch.is_grad_enabled",):
    rule(_src, "True", status=DIFFERENCE, test=f"{T}::test_is_grad_enabled",
         note="False inside `with torch.no_grad()` / inference_mode() / set_grad_enabled(False) and in a function "
              "they decorate, True elsewhere, as torch's default; MindSpore records gradients only inside "
              "grad/value_and_grad, and the converted no_grad does nothing, so a function torch runs under its "
              "CALLER's no_grad reads True here (its branches on the mode compute the same values unless they "
              "differ in more than gradient bookkeeping)")(_is_grad_enabled)

for _src in ("torch.vmap", "torch.func.vmap"):
    mapping(_src, "_ms_compat.vmap", args=("func", "in_dims", "out_dims", "randomness"),
            target_args=("func", "in_dims", "out_dims", "randomness"), kwonly=("chunk_size",),
            unsupported={"randomness": "torch draws per slice ('different') or once ('same') inside a mapped "
                                       "function; the helper calls the function once per slice, so its draws differ "
                                       "from torch's; write instead: draw outside the mapped function"},
            unsupported_ok={"randomness": ("'error'", '"error"')},
            note="func called once per slice of the mapped dimension, the results stacked at out_dims (nested "
                 "tuples/lists/dicts too): torch's values and gradients; mindspore.vmap batches op by op and "
                 "mis-batches some (x.T transposes the mapped dimension too, MindSpore 2.10), so it is not used",
            test=f"{T}::test_vmap")
