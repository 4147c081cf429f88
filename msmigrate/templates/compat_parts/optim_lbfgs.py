"""torch.optim.LBFGS: limited-memory BFGS on the parameters, with torch's step(closure) contract.

MindSpore 2.10 has no optimizer with this algorithm (mindspore.scipy.optimize.minimize's LBFGS is a
functional minimizer with its own line search, learning rate and stopping rules). The converted
closure returns `(loss, grads)`: the loss it returned in torch and the gradients value_and_grad
computed over optimizer.parameters (msmigrate/step_closure.py). One step(closure) runs up to
max_iter iterations (max_eval closure calls):

* the direction is the two-loop recursion over the last history_size pairs (s = step taken,
  y = change of the gradient), a pair kept only when y.s > 1e-10, scaled by H = y.s / y.y;
* the first step ever starts from -gradient with length lr * min(1, 1 / |g|_1), later ones with lr;
* without line_search_fn the step is taken as is; with 'strong_wolfe' a bracketing line search
  with cubic interpolation (c1=1e-4, c2=0.9, at most 25 evaluations) picks its length;
* it stops at max_iter / max_eval, when max|g| <= tolerance_grad, when the directional derivative
  is > -tolerance_change, or when the step or the loss change falls under tolerance_change.

The scalars the algorithm compares and combines (losses, step lengths, slopes) are 0-d tensors of
the gradients' dtype: torch casts a Python number to a tensor's dtype in mixed arithmetic, MindSpore
casts it to float32 (lr=0.8 times a float64 tensor would be off by 1.5e-8), so numbers are made
tensors of that dtype first (_scalar). The state (history,
n_iter, func_evals) carries over from one step() to the next, as torch's does. The vector work runs
op by op between closure calls; the closure's gradient step is the compiled part."""


def _scalar(value, like):
    """A Python number as a 0-d tensor of `like`'s dtype (see the top of this section)."""
    return ms.Tensor(float(value), like.dtype)


def _dot(a, b):
    return (a * b).sum()


def _flat_grads(grads):
    return ops.cat([g.reshape(-1) for g in grads])


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2, clamped to
    `bounds` (default: between x1 and x2); the middle of the bounds when the cubic has none."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = ops.sqrt(d2_square)
    if x1 <= x2:
        t = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        t = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(t, low), high)


class _Point:
    """One trial step length of the line search: length, loss, flat gradient, slope along d."""

    def __init__(self, t, f, g, slope):
        self.t, self.f, self.g, self.slope = t, f, g, slope


def _strong_wolfe(evaluate, d, f, g, slope, t, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step length along d meeting the strong Wolfe conditions (sufficient decrease c1, curvature
    c2), from a start at t: lengths grow (cubic extrapolation up to 10x) until an interval holds a
    minimum, which is then narrowed by cubic interpolation. evaluate(t) -> (loss, flat gradient) at
    the parameters + t * d. Returns (loss, gradient, t, evaluations)."""
    d_max = ops.abs(d).max()
    c1, c2, tolerance_change = _scalar(c1, d), _scalar(c2, d), _scalar(tolerance_change, d)
    one_percent, tenth = _scalar(0.01, d), _scalar(0.1, d)
    start = _Point(_scalar(0, d), f, g, slope)
    f_new, g_new = evaluate(t)
    evals, tries = 1, 0
    new = _Point(t, f_new, g_new, _dot(g_new, d))
    prev = start
    interval = None          # [a, b]: a minimum lies between them
    found = None
    while tries < max_ls:
        if new.f > f + c1 * new.t * slope or (tries > 1 and new.f >= prev.f):
            interval = [prev, new]
            break
        if abs(new.slope) <= -c2 * slope:
            found = new
            break
        if new.slope >= 0:
            interval = [prev, new]
            break
        # still descending: extrapolate, at least 1% past the current length, at most 10 times it
        low = new.t + one_percent * (new.t - prev.t)
        t = _cubic_minimum(prev.t, prev.f, prev.slope, new.t, new.f, new.slope, bounds=(low, new.t * 10))
        prev = new
        f_new, g_new = evaluate(t)
        evals, tries = evals + 1, tries + 1
        new = _Point(t, f_new, g_new, _dot(g_new, d))
    if found is not None:
        return found.f, found.g, found.t, evals
    if tries == max_ls:      # out of evaluations before an interval was found (the loop below ends at once)
        interval = [start, new]
    stalled = False
    while tries < max_ls:
        a, b = interval
        if abs(b.t - a.t) * d_max < tolerance_change:
            break
        t = _cubic_minimum(a.t, a.f, a.slope, b.t, b.f, b.slope)
        top, bottom = max(a.t, b.t), min(a.t, b.t)
        margin = tenth * (top - bottom)
        if min(top - t, t - bottom) < margin:
            # close to an end of the interval: twice in a row, or outside it, move 10% inside
            if stalled or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        f_new, g_new = evaluate(t)
        evals, tries = evals + 1, tries + 1
        new = _Point(t, f_new, g_new, _dot(g_new, d))
        lo = 0 if interval[0].f <= interval[1].f else 1
        hi = 1 - lo
        if new.f > f + c1 * t * slope or new.f >= interval[lo].f:
            interval[hi] = new       # too high: the new point closes the interval
            continue
        if abs(new.slope) <= -c2 * slope:
            interval[lo] = new
            break
        if new.slope * (interval[hi].t - interval[lo].t) >= 0:
            interval[hi] = interval[lo]
        interval[lo] = new
    best = _best(interval)
    return best.f, best.g, best.t, evals


def _best(interval):
    return interval[0] if interval[0].f <= interval[1].f else interval[1]


class LBFGS(_TorchOptimizer, _ms_optim.Optimizer):
    """torch.optim.LBFGS (see the top of this section). step(closure) only: the converted closure
    returns (loss, gradients of optimizer.parameters)."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self.lbfgs_state = {"func_evals": 0, "n_iter": 0}

    def construct(self, gradients):
        # `optimizer(grads)` in a compiled train step: raised through a constexpr, which the graph parser accepts
        _raise_migration_error("LBFGS re-evaluates the loss during its step: it updates only through "
                             "optimizer.step(closure), as torch's LBFGS does")

    def _move(self, t, d):
        """parameters += t * d (d flat, in the parameters' order)."""
        start = 0
        for p in self.parameters:
            n = p.size
            ops.assign(p, p + t * d[start:start + n].reshape(p.shape))
            start += n

    def _evaluate(self, closure):
        loss, grads = closure_loss_and_grads(closure())
        # None: a parameter the loss did not use (value_and_grad_reached); torch's LBFGS reads zeros for it
        grads = tuple(ops.zeros_like(p) if g is None else g for p, g in zip(self.parameters, grads))
        self.lbfgs_state["func_evals"] += 1
        return loss, _flat_grads(grads)

    def _evaluate_along(self, closure, d):
        """evaluate(t) for the line search: loss and gradient at the parameters + t * d, the parameters
        left as they were."""
        saved = [p.value().copy() for p in self.parameters]

        def evaluate(t):
            self._move(t, d)
            loss, flat_grad = self._evaluate(closure)
            for p, x in zip(self.parameters, saved):
                ops.assign(p, x)
            return _scalar(loss, flat_grad), flat_grad
        return evaluate

    def _direction(self, flat_grad, state):
        """-H g by the two-loop recursion over the stored (s, y) pairs."""
        steps, changes, inv_ys = state["old_stps"], state["old_dirs"], state["ro"]
        q = -flat_grad
        alphas = [None] * len(steps)
        for i in reversed(range(len(steps))):
            alphas[i] = _dot(steps[i], q) * inv_ys[i]
            q = q - alphas[i] * changes[i]
        r = q * state["H_diag"]
        for i in range(len(steps)):
            beta = _dot(changes[i], r) * inv_ys[i]
            r = r + (alphas[i] - beta) * steps[i]
        return r

    def _remember(self, flat_grad, state, history_size):
        """Adds the last iteration's pair (s = t * d, y = change of the gradient) when y.s > 1e-10."""
        y = flat_grad - state["prev_flat_grad"]
        s = state["d"] * state["t"]
        ys = _dot(y, s)
        if ys > _scalar(1e-10, ys):
            if len(state["old_dirs"]) == history_size:
                for key in ("old_dirs", "old_stps", "ro"):
                    state[key].pop(0)
            state["old_dirs"].append(y)
            state["old_stps"].append(s)
            state["ro"].append(1.0 / ys)
            state["H_diag"] = ys / _dot(y, y)

    def step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.lbfgs_state
        orig_loss, flat_grad = self._evaluate(closure)
        loss = float(orig_loss)
        evals = 1
        # compared with tensors: as tensors of their dtype (the loss change is compared in Python floats)
        grad_limit, change_limit = _scalar(tolerance_grad, flat_grad), _scalar(tolerance_change, flat_grad)
        if ops.abs(flat_grad).max() <= grad_limit:
            return orig_loss
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                state.update(d=-flat_grad, old_dirs=[], old_stps=[], ro=[], H_diag=1)
            else:
                self._remember(flat_grad, state, group["history_size"])
                state["d"] = self._direction(flat_grad, state)
            d = state["d"]
            state["prev_flat_grad"], state["prev_loss"] = flat_grad, loss
            prev_loss = loss
            if state["n_iter"] == 1:
                inv_l1 = 1.0 / ops.abs(flat_grad).sum()
                t = (inv_l1 if inv_l1 < 1.0 else _scalar(1.0, inv_l1)) * _scalar(lr, inv_l1)
            else:
                t = _scalar(lr, flat_grad)
            slope = _dot(flat_grad, d)
            if slope > -change_limit:      # not a descent direction
                state["t"] = t
                break
            if group["line_search_fn"] == "strong_wolfe":
                f, flat_grad, t, ls_evals = _strong_wolfe(self._evaluate_along(closure, d), d,
                                                          _scalar(loss, flat_grad), flat_grad, slope, t)
                loss = float(f)
                self._move(t, d)
            else:
                self._move(t, d)
                ls_evals = 0
                if n_iter != max_iter:
                    step_loss, flat_grad = self._evaluate(closure)
                    loss, ls_evals = float(step_loss), 1
            state["t"] = t
            evals += ls_evals
            if n_iter == max_iter or evals >= max_eval:
                break
            if ops.abs(flat_grad).max() <= grad_limit:
                break
            if ops.abs(d * t).max() <= change_limit or abs(loss - prev_loss) < tolerance_change:
                break
        return orig_loss
