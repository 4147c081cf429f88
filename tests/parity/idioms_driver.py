"""The MindSpore side of tests/parity/test_idioms.py, run as a script in a fresh interpreter where
`import torch` fails: imports the converted snippets from WORK, loads the torch weights from
WORK/inputs.pkl (numpy arrays, through msmigrate.weights), and writes what they compute to
WORK/results.pkl. Usage: idioms_driver.py WORK REPO_ROOT"""
import sys

sys.modules["torch"] = None   # any `import torch` now fails
WORK, ROOT = sys.argv[1], sys.argv[2]
sys.path.insert(0, WORK)
sys.path.insert(1, ROOT)

import pickle  # noqa: E402

import mindspore as ms  # noqa: E402

from msmigrate.weights import load_torch_state_dict  # noqa: E402

with open(f"{WORK}/inputs.pkl", "rb") as f:
    INPUTS = pickle.load(f)
MODES = {"pynative": ms.PYNATIVE_MODE, "graph": ms.GRAPH_MODE}
res = {}


def signature(params):
    out = []
    for p in params:
        a = p.asnumpy()
        out.append((tuple(a.shape), round(float(a.sum()), 4), round(float((a * a).sum()), 4)))
    return sorted(out)


def built(module, key):
    model = module.make()
    report = load_torch_state_dict(model, INPUTS["states"][key], strict=True)
    model.set_train(False)
    return model, report


def gpt():
    import gpt_ms
    idx = ms.Tensor(INPUTS["inputs"]["gpt"])
    for mode, flag in MODES.items():
        ms.set_context(mode=flag)
        model, report = built(gpt_ms, "gpt")
        res[f"gpt_logits_{mode}"] = model(idx).asnumpy()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    model, report = built(gpt_ms, "gpt")
    res["gpt_load_report_ok"] = report.ok
    res["gpt_ms_param_names"] = [p.name for p in model.get_parameters()]
    res["gpt_names"] = gpt_ms.names(model)
    res["gpt_groups"] = [signature(g) for g in gpt_ms.groups(model)]
    for mode, flag in MODES.items():
        ms.set_context(mode=flag)
        tied = gpt_ms.make_tied()
        load_torch_state_dict(tied, INPUTS["states"]["tied"], strict=True)
        res[f"tied_logits_{mode}"] = tied(idx).asnumpy()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    res["tied_info"] = gpt_ms.tied_info(tied)


def params():
    import params_ms
    x = ms.Tensor(INPUTS["inputs"]["params"])
    for mode, flag in MODES.items():
        ms.set_context(mode=flag)
        model, _ = built(params_ms, "params")
        res[f"params_out_{mode}"] = model(x).asnumpy()
        weights = model.trainable_params()

        def loss_fn(x):
            return (model(x) ** 2).mean()
        grads = ms.grad(loss_fn, grad_position=None, weights=weights)(x)
        res[f"params_grads_{mode}"] = {p.name: g.asnumpy() for p, g in zip(weights, grads)}
    ms.set_context(mode=ms.PYNATIVE_MODE)
    res["params_aliased_pynative"] = params_ms.make_aliased()(x).asnumpy()
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        params_ms.make_aliased()(x)
        res["params_aliased_graph"] = ("no error", "")
    except Exception as e:  # noqa: BLE001  (the kind is what is compared)
        res["params_aliased_graph"] = (type(e).__name__, str(e))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    model, _ = built(params_ms, "params")
    res["params_info"] = params_ms.info(model)
    res["params_ms_param_names"] = sorted(p.name for p in model.get_parameters())
    ms.set_context(mode=ms.GRAPH_MODE)
    res["params_loss"] = float(params_ms.train(model, x, 3).asnumpy())
    res["params_trained"] = {p.name: p.asnumpy() for p in model.get_parameters()}
    ms.set_context(mode=ms.PYNATIVE_MODE)


def inspect():
    import inspect_ms
    model, _ = built(inspect_ms, "inspect")
    res["inspect_names"] = inspect_ms.names(model)
    res["inspect_modules"] = inspect_ms.module_names(model)
    res["inspect_children"] = inspect_ms.child_names(model)
    res["inspect_count"] = inspect_ms.count(model)
    res["inspect_timm"] = [signature(g["params"]) for g in inspect_ms.timm_groups(model)]
    res["inspect_hf"] = [signature(g) for g in inspect_ms.hf_groups(model)]
    res["inspect_kinds"] = inspect_ms.kinds(model)


def values():
    import values_ms
    x = ms.Tensor(INPUTS["inputs"]["values"])
    for mode, flag in MODES.items():
        ms.set_context(mode=flag)
        model, _ = built(values_ms, "values")
        res[f"values_out_{mode}"] = model(x).asnumpy()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    res["values_names"] = values_ms.names()
    res["values_apply"] = [a.asnumpy() for a in values_ms.apply_all(x)]
    ev = values_ms.Evaluator()
    res["values_decorated"] = [a.asnumpy() for a in (
        values_ms.twice(x), values_ms.thrice(x), ev.up(x), ev.down(x), ev.same(x),
        values_ms.gradient_switches(x, True), values_ms.gradient_switches(x, False))]
    res["values_dynamic"] = [values_ms.dynamic("tanh")(x).asnumpy(), values_ms.dynamic("float32") is ms.float32]
    res["values_dtype"] = values_ms.default_dtype_zeros()
    for key, name in (("values_unconvertible", "stft"), ("values_missing", "frobnicate")):
        try:
            values_ms.dynamic(name)
            res[key] = ("no error", "")
        except Exception as e:  # noqa: BLE001  (the kind is what is compared)
            res[key] = (type(e).__name__, str(e))


for scenario in (gpt, params, inspect, values):
    scenario()

with open(f"{WORK}/results.pkl", "wb") as f:
    pickle.dump(res, f)
