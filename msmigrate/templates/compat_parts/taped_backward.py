"""torch's `loss.backward()` where the loss was built before the statements of a train step could hold it: a
REINFORCE rollout keeps each action's log-probability (`saved_log_probs.append(m.log_prob(a))`) and the loss is
summed from them after the episode, in another function. MindSpore 2.10 has no Tensor.backward; its PyNative
executor records the operations run between new_graph and end_graph (what mindspore.grad does around a
function) and differentiates what it recorded. open_tape() starts that recording where the program starts,
tape_backward() keeps the loss, and tape_step() differentiates the losses kept since the last step with respect
to the optimizer's parameters, hands the gradients to the optimizer as torch's .grad, steps, and starts
recording again. The forward runs once, as in torch. PyNative only: a compiled graph records nothing here."""
from mindspore.common.api import _pynative_executor as _tape_executor


def _tape_graph():
    """The key PyNative's executor files the recording under (never called)."""


# open: recording; losses: what backward() was called on since the last step
_TAPE = {"open": False, "losses": []}


def _int_index_as_tuple(tensor_class):
    """MindSpore 2.10 refuses a plain int index (`x[0]`, and `a, b = x`, which iterates with one) in a gradient
    taken inside another recording: TypeError 'Only support integers, ... but got 0 with type int'. While the tape
    records, every train step's gradient is such a nested one (a module with a taped backward() imported by a
    program whose own steps are compiled steps). `x[(0,)]` is the same index and passes: Tensor's indexing is
    given that form (its other indexes unchanged)."""
    plain = tensor_class.__getitem__     # (the helper's reading of NumPy indexes, or TensorPy's own)

    def getitem(self, index):
        return plain(self, (int(index),) if type(index) is int or isinstance(index, np.integer) else index)
    getitem.int_as_tuple = True
    tensor_class.__getitem__ = getitem


def open_tape():
    """Start recording every operation from here on (PYNATIVE mode; in GRAPH mode tape_backward raises)."""
    if _TAPE["open"] or ms.get_context("mode") != ms.PYNATIVE_MODE:
        return
    if not getattr(ms.Tensor.__getitem__, "int_as_tuple", False):
        _int_index_as_tuple(ms.Tensor)
    _tape_executor.set_grad_flag(True)
    _tape_executor.new_graph(_tape_graph)
    _TAPE["open"] = True


def close_tape():
    """Stop recording (the losses kept are dropped): a process that goes on without the converted program."""
    if _TAPE["open"]:
        _tape_executor.end_graph(_tape_graph, ms.Tensor(0.0))
        _tape_executor.set_grad_flag(False)
    _TAPE["open"], _TAPE["losses"] = False, []


def tape_backward(loss, gradient=None):
    """torch's `loss.backward(gradient)`: the loss is kept; the next tape_step() differentiates it."""
    if not _TAPE["open"] or ms.get_context("mode") != ms.PYNATIVE_MODE:    # (a mode changed since open_tape)
        where = calling_line()
        raise MigrationError(f"{where + ': ' if where else ''}backward() of a loss computed before its train step "
                             "is differentiated from PyNative's record of the operations: run in PYNATIVE_MODE "
                             "(the mode line the converted program starts with)")
    if gradient is not None:
        loss = (loss * gradient).sum()
    elif loss.size != 1:
        where = calling_line()
        raise MigrationError(f"{where + ': ' if where else ''}backward() of a tensor of shape {tuple(loss.shape)}: "
                             "grad can be implicitly created only for scalar outputs (torch's RuntimeError)")
    _TAPE["losses"].append(loss.reshape(()))


def tape_step(*optimizers):
    """`opt.step()` (several: `actor_opt.step(); critic_opt.step()` after one backward()) after tape_backward():
    the gradients of the kept losses' sum; a parameter the losses did not reach keeps torch's None."""
    losses = _TAPE["losses"]
    if not losses:
        where = calling_line()
        raise MigrationError(f"{where + ': ' if where else ''}step() with no backward() since the last step: torch "
                             "would apply whatever .grad holds, which this converted step does not keep")
    total = losses[0]
    for extra in losses[1:]:
        total = total + extra
    weights = [p for opt in optimizers for p in opt.parameters]
    wrong_second_order(total)
    nodes = _reached_nodes(total)
    reached = [getattr(p, "_grad_node", None) is not None and p._grad_node._unique_id() in nodes for p in weights]
    _tape_executor.end_graph(_tape_graph, total)
    grads = _tape_executor.grad(_tape_graph, ops.GradOperation(get_by_list=True), weights, None, False)
    _TAPE["open"], _TAPE["losses"] = False, []
    at = 0
    for opt in optimizers:     # the updates write the Parameters in place: between two recordings
        count = len(opt.parameters)
        hold_gradients(opt, tuple(g if used else None for g, used in
                                  zip(grads[at:at + count], reached[at:at + count])))
        at += count
        opt.step()
    open_tape()
