"""The training step: backward()/step() and what rides on them. The conversion is
done by msmigrate/train_loop.py on whole loop bodies; these records are what the
report and `msmigrate api` say about each piece."""
from __future__ import annotations

from ..records import DIFFERENCE, mapping

T = "tests/test_train_loop.py"

mapping("Tensor.backward", "mindspore.value_and_grad", args=("gradient", "retain_graph", "create_graph", "inputs"),
        status=DIFFERENCE,
        note="the statements the loss depends on become a forward function; value_and_grad over the "
             "optimizer's parameters gives the gradients, `optimizer(grads)` applies them in a train step "
             "compiled (a Cell graph) in GRAPH mode. A backward() outside a recognised "
             "zero_grad/backward/step loop body becomes a TODO",
        test=f"{T}::test_basic_loop_matches_torch")
mapping("Optimizer.step", "expr:{self}(grads)", status=DIFFERENCE,
        note="runs inside the train step on the gradients value_and_grad returned",
        test=f"{T}::test_basic_loop_matches_torch")
mapping("torch.nn.utils.clip_grad_norm_", "_ms_compat.clip_grad_norm_",
        args=("parameters", "max_norm", "norm_type", "error_if_nonfinite", "foreach"),
        target_args=("parameters", "max_norm", "norm_type", "error_if_nonfinite", "foreach"), status=DIFFERENCE,
        note="inside a converted train step the gradients are clipped with torch's formula "
             "(_ms_compat.clip_grad_norm, returns the total norm too); elsewhere it raises, since MindSpore "
             "keeps no .grad", test=f"{T}::test_clipping_and_aux_outputs")
mapping("torch.nn.utils.clip_grad_value_", "_ms_compat.clip_grad_value_",
        args=("parameters", "clip_value", "foreach"), target_args=("parameters", "clip_value", "foreach"),
        status=DIFFERENCE, note="inside a converted train step the gradients are clamped; elsewhere it raises",
        test=f"{T}::test_clipping_and_aux_outputs")
mapping("Tensor.grad", "mindspore.value_and_grad", status=DIFFERENCE,
        note="a hand-written update after backward() (`for p in model.parameters(): p -= lr * p.grad`, "
             "p.data.add_/sub_, p.grad.zero_()) runs inside the train step on the gradients value_and_grad "
             "returns for the parameters the loop iterates; every change of a parameter is an ops.assign. "
             "Elsewhere MindSpore keeps no .grad",
        test=f"{T}::test_hand_written_update_under_no_grad")
