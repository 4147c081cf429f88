"""Checkpoints in converted programs (records in msmigrate/mappings/checkpoints.py, helpers in
templates/compat_parts/checkpoints.py): torch.save/torch.load, state_dict/load_state_dict of models
and optimizers, safetensors. A torch program is converted; torch runs the original, MindSpore the
conversion; files written by one side are read by the other."""
from __future__ import annotations

import io
import os
import pickle
import tempfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")

from msmigrate.registry import DIFFERENCE, TODO  # noqa: E402

from .harness import load_converted, load_torch  # noqa: E402

PROGRAM = '''
import io

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.conv = nn.Conv1d(4, 6, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm1d(6)
        self.act = nn.ReLU()
        self.ln = nn.LayerNorm(6)
        self.fc = nn.Linear(6, 3)

    def forward(self, ids):
        x = self.emb(ids).permute(0, 2, 1)
        x = self.act(self.bn(self.conv(x))).permute(0, 2, 1)
        return self.fc(self.ln(x)).mean(1)


def make():
    return Net()


def save_weights(model, path):
    torch.save(model.state_dict(), path)


def load_weights(model, path):
    model.load_state_dict(torch.load(path, map_location="cpu"))
    return model


def save_checkpoint(path, model, optimizer, epoch, best_acc, extra=None, scheduler=None):
    state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
             "best_acc": best_acc, "extra": extra}
    if scheduler is not None:
        state["scheduler"] = scheduler.state_dict()
    torch.save(state, path)


def resume(path, model, optimizer, scheduler=None):
    ckpt = torch.load(path, map_location=lambda storage, loc: storage)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(ckpt["scheduler"])
    return ckpt["epoch"], ckpt["best_acc"], ckpt["extra"]


def load_any(path):
    return torch.load(path, weights_only=True)


def save_whole(model, path):
    torch.save(model, path)


def load_strict(model, sd):
    return model.load_state_dict(sd)


def load_partial(model, sd):
    missing, unexpected = model.load_state_dict(sd, strict=False)
    return sorted(missing), sorted(unexpected)


def read_by_torch_names(model):
    """Reads its own state_dict by torch's names, as model builders do (sizes from entries, keys tested
    and deleted), then loads what is left back in."""
    sd = model.state_dict()
    sizes = (sd["emb.weight"].shape[0], sd["ln.weight"].shape[0], sd.get("bn.running_var").shape[0])
    found = ["bn.bias" in sd, "bn.nothing" in sd, "fc.weight" in sd]
    ln_bias = sd.pop("ln.bias")
    del sd["bn.running_mean"]
    missing, unexpected = model.load_state_dict(sd, strict=False)
    return sizes, found, ln_bias * 2, len(sd), len(missing), len(unexpected)


def to_bytes(obj):
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def from_bytes(data):
    return torch.load(io.BytesIO(data))
'''

# torch name -> the converted model's MindSpore name, where they differ
MS_NAME = {"emb.weight": "emb.embedding_table", "bn.weight": "bn.gamma", "bn.bias": "bn.beta",
           "bn.running_mean": "bn.moving_mean", "bn.running_var": "bn.moving_variance",
           "ln.weight": "ln.gamma", "ln.bias": "ln.beta"}

IDS = [np.random.default_rng(i).integers(0, 10, (4, 5)) for i in range(6)]
TARGETS = [np.random.default_rng(10 + i).standard_normal((4, 3)).astype(np.float32) for i in range(6)]


@pytest.fixture(scope="module")
def programs():
    t = load_torch(PROGRAM)
    mod, code, sites = load_converted(PROGRAM)
    return t, mod, code, sites


# ------------------------------------------------------------------------------ training helpers
def torch_step(net, opt, i, sched=None):
    opt.zero_grad()
    loss = ((net(torch.from_numpy(IDS[i])) - torch.from_numpy(TARGETS[i])) ** 2).mean()
    loss.backward()
    opt.step()
    if sched is not None:
        sched.step()
    return loss.item()


def ms_step(net, opt, i, sched=None):
    def loss_fn(ids, y):
        return ((net(ids) - y) ** 2).mean()
    loss, grads = ms.value_and_grad(loss_fn, None, opt.parameters)(ms.Tensor(IDS[i]), ms.Tensor(TARGETS[i]))
    opt(grads)
    if sched is not None:
        sched.step()
    return float(loss.asnumpy())


def ms_make_opt(kind, net, lr):
    from mindspore.experimental import optim
    if kind == "adam":
        return optim.Adam(net.trainable_params(), lr=lr)
    return optim.SGD(net.trainable_params(), lr=lr, momentum=0.9, nesterov=True)


def torch_make_opt(kind, net, lr):
    if kind == "adam":
        return torch.optim.Adam(net.parameters(), lr=lr)
    return torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9, nesterov=True)


def ms_state(net):
    return {k: v.asnumpy().copy() for k, v in net.state_dict().items()}


def assert_same_as_torch(mnet, tnet, rtol=1e-5, atol=1e-5):
    """The converted model's state equals torch's, through the name/layout mapping."""
    got = ms_state(mnet)
    for k, v in tnet.state_dict().items():
        if k.endswith("num_batches_tracked"):
            continue
        name = MS_NAME.get(k, k)
        np.testing.assert_allclose(got[name].reshape(v.shape), v.detach().numpy(), rtol=rtol, atol=atol, err_msg=k)


def eval_outputs(mnet, tnet, i=5):
    mnet.set_train(False)
    tnet.eval()
    with torch.no_grad():
        t_out = tnet(torch.from_numpy(IDS[i])).numpy()
    return mnet(ms.Tensor(IDS[i])).asnumpy(), t_out


# ------------------------------------------------------------------------------ conversion
def test_conversion_sites(programs):
    t, mod, code, sites = programs
    assert not [(s.api, s.note) for s in sites if s.status == TODO]
    apis = {s.api: s.status for s in sites}
    for api in ("torch.save", "torch.load", "Module.state_dict", "Module.load_state_dict"):
        assert api in apis, (api, sorted(apis))
    assert apis["torch.save"] == DIFFERENCE and apis["torch.load"] == DIFFERENCE
    assert "import torch" not in code and "map_location" not in code and "weights_only" not in code
    assert "_ms_compat.save(state, path)" in code and "_ms_compat.load(path)" in code
    assert "_ms_compat.load_state_dict(model, sd, strict=False)" in code


# ------------------------------------------------------------------------------ torch file -> MindSpore
@pytest.mark.parametrize("fmt", ["zip", "legacy"])
def test_torch_checkpoint_loads_into_converted_model(programs, tmp_path, fmt):
    """torch trains 2 steps and saves {'epoch', 'model', 'optimizer', 'best_acc'}; the converted program
    resumes from that file (no torch involved), gives torch's outputs, and 3 more Adam steps stay with torch."""
    t, mod, _, _ = programs
    torch.manual_seed(0)
    tnet = t["make"]()
    topt = torch_make_opt("adam", tnet, 0.01)
    for i in range(2):
        torch_step(tnet, topt, i)
    path = str(tmp_path / "checkpoint.pth")
    extra = {"history": [0.5, 0.25], "name": "run1"}
    if fmt == "zip":
        t["save_checkpoint"](path, tnet, topt, 2, 0.625, extra)
    else:
        torch.save({"epoch": 2, "model": tnet.state_dict(), "optimizer": topt.state_dict(), "best_acc": 0.625,
                    "extra": extra}, path, _use_new_zipfile_serialization=False)

    mnet = mod.make()
    mopt = ms_make_opt("adam", mnet, 0.5)  # lr and Adam's moments and step come from the file
    epoch, acc, got_extra = mod.resume(path, mnet, mopt)
    assert (epoch, acc, got_extra) == (2, 0.625, extra)
    assert float(mopt.param_groups[0]["lr"].asnumpy()) == np.float32(0.01)
    assert int(mopt.state_step.asnumpy()) == 2
    assert_same_as_torch(mnet, tnet, rtol=0, atol=0)
    m_out, t_out = eval_outputs(mnet, tnet)
    np.testing.assert_allclose(m_out, t_out, rtol=1e-5, atol=1e-5)

    mnet.set_train(True)
    tnet.train()
    for i in range(2, 5):
        np.testing.assert_allclose(ms_step(mnet, mopt, i), torch_step(tnet, topt, i), rtol=1e-5, atol=1e-6)
    assert_same_as_torch(mnet, tnet, rtol=1e-4, atol=1e-5)
    m_out, t_out = eval_outputs(mnet, tnet)
    np.testing.assert_allclose(m_out, t_out, rtol=1e-4, atol=1e-5)

    # a plain torch state_dict (.bin), loaded into a fresh model, runs in GRAPH mode too
    bin_path = str(tmp_path / "weights.bin")
    torch.save(tnet.state_dict(), bin_path)
    fresh = mod.load_weights(mod.make(), bin_path)
    fresh.set_train(False)
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        np.testing.assert_allclose(fresh(ms.Tensor(IDS[5])).asnumpy(), t_out, rtol=1e-4, atol=1e-5)
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def test_torch_sgd_state_continues_like_torch(programs, tmp_path):
    """torch's SGD momentum buffers load into mindspore.experimental.optim.SGD (accum, and stat=0 so the
    momentum is not restarted)."""
    t, mod, _, _ = programs
    torch.manual_seed(1)
    tnet = t["make"]()
    topt = torch_make_opt("sgd", tnet, 0.05)
    for i in range(2):
        torch_step(tnet, topt, i)
    path = str(tmp_path / "sgd.pt")
    t["save_checkpoint"](path, tnet, topt, 2, 0.5)
    mnet = mod.make()
    mopt = ms_make_opt("sgd", mnet, 0.05)
    mod.resume(path, mnet, mopt)
    mnet.set_train(True)   # a new Cell is in eval mode, a new Module in train mode
    for i in range(2, 5):
        np.testing.assert_allclose(ms_step(mnet, mopt, i), torch_step(tnet, topt, i), rtol=1e-5, atol=1e-6)
    assert_same_as_torch(mnet, tnet, rtol=1e-4, atol=1e-5)


# ------------------------------------------------------------------------------ MindSpore round trip
@pytest.mark.parametrize("kind", ["adam", "sgd"])
def test_training_checkpoint_round_trip(programs, tmp_path, kind):
    """The converted program saves at step 2 and resumes in a fresh model/optimizer: epoch, accuracy,
    extra values come back with their types, and 3 more steps equal an uninterrupted 5-step run."""
    from mindspore.experimental.optim.lr_scheduler import StepLR

    t, mod, _, _ = programs
    init = str(tmp_path / "init.pt")
    net_a = mod.make()
    mod.save_weights(net_a, init)
    assert sorted(os.listdir(tmp_path)) == ["init.pt"]  # the path as given, no '.ckpt' appended

    def sched_for(opt):
        return StepLR(opt, step_size=2, gamma=0.5) if kind == "sgd" else None

    opt_a = ms_make_opt(kind, net_a, 0.01)
    sched_a = sched_for(opt_a)
    net_a.set_train(True)
    uninterrupted = [ms_step(net_a, opt_a, i, sched_a) for i in range(5)]

    net_b = mod.load_weights(mod.make(), init)
    net_b.set_train(True)
    opt_b = ms_make_opt(kind, net_b, 0.01)
    sched_b = sched_for(opt_b)
    first = [ms_step(net_b, opt_b, i, sched_b) for i in range(2)]
    path = str(tmp_path / "last.pth")
    extra = {"history": [0.5, 0.25], "cfg": ("adam", 3), "note": "x", "none": None, 7: "int key",
             "arr": np.arange(3, dtype=np.int64), "mean": ms.Tensor(np.array([1.5, 2.5], np.float32)),
             "acc64": np.float64(0.3), "empty": np.zeros((0, 2), np.float32)}
    mod.save_checkpoint(path, net_b, opt_b, 2, 0.1, extra, sched_b)

    net_c = mod.make()   # other random weights, other lr: everything must come from the file
    net_c.set_train(True)
    opt_c = ms_make_opt(kind, net_c, 0.5)
    sched_c = sched_for(opt_c)
    epoch, acc, got = mod.resume(path, net_c, opt_c, sched_c)
    assert epoch == 2 and type(epoch) is int
    assert acc == 0.1 and type(acc) is float  # exact, though MindSpore's own append_dict keeps float32
    assert got["history"] == [0.5, 0.25] and got["cfg"] == ("adam", 3) and got["note"] == "x"
    assert got["none"] is None and got[7] == "int key" and list(got) == list(extra)
    np.testing.assert_array_equal(got["arr"], extra["arr"])
    assert isinstance(got["arr"], np.ndarray) and isinstance(got["mean"], ms.Tensor)
    np.testing.assert_array_equal(got["mean"].asnumpy(), [1.5, 2.5])
    assert got["acc64"] == np.float64(0.3) and type(got["acc64"]) is np.float64
    assert got["empty"].shape == (0, 2)
    resumed = first + [ms_step(net_c, opt_c, i, sched_c) for i in range(2, 5)]
    np.testing.assert_allclose(resumed, uninterrupted, rtol=1e-6, atol=1e-7)
    a, c = ms_state(net_a), ms_state(net_c)
    assert list(a) == list(c)
    for k in a:
        np.testing.assert_allclose(c[k], a[k], rtol=1e-6, atol=1e-7, err_msg=k)
    lr_a, lr_c = (float(o.param_groups[0]["lr"].asnumpy()) for o in (opt_a, opt_c))
    assert lr_a == lr_c and np.isclose(lr_c, 0.01 * 0.25 if kind == "sgd" else 0.01, rtol=1e-6)  # StepLR state

    # the file is an ordinary MindSpore checkpoint at the path the program chose
    assert sorted(os.listdir(tmp_path)) == ["init.pt", "last.pth"]
    link = os.path.join(tempfile.mkdtemp(), "last.ckpt")
    os.symlink(path, link)
    raw = ms.load_checkpoint(link)
    assert int(raw["epoch"].asnumpy()) == 2
    np.testing.assert_array_equal(raw["model/fc.weight"].asnumpy(), ms_state(net_b)["fc.weight"])
    slot = "exp_avg" if kind == "adam" else "momentum_buffer"
    assert f"optimizer/state/0/{slot}" in raw


def make_jit_step(net, opt):
    def loss_fn(ids, y):
        return ((net(ids) - y) ** 2).mean()
    grad_fn = ms.value_and_grad(loss_fn, None, opt.parameters)

    @ms.jit
    def step(ids, y):
        loss, grads = grad_fn(ids, y)
        opt(grads)
        return loss
    return lambda i: float(step(ms.Tensor(IDS[i]), ms.Tensor(TARGETS[i])).asnumpy())


def test_resume_after_compiled_step(programs, tmp_path):
    """Loading into a model and optimizer whose mindspore.jit step already ran: the values are written
    into the Parameters' memory (Parameter.set_data, which Cell.load_state_dict and load_param_into_net
    use, would leave the compiled step reading the old values)."""
    t, mod, _, _ = programs
    init = str(tmp_path / "init.pt")
    net_a = mod.make()
    mod.save_weights(net_a, init)
    net_a.set_train(True)
    opt_a = ms_make_opt("adam", net_a, 0.01)
    step_a = make_jit_step(net_a, opt_a)
    uninterrupted = [step_a(i) for i in range(5)]

    net_b = mod.load_weights(mod.make(), init)
    net_b.set_train(True)
    opt_b = ms_make_opt("adam", net_b, 0.01)
    step_b = make_jit_step(net_b, opt_b)
    first = [step_b(i) for i in range(2)]
    path = str(tmp_path / "ckpt.pt")
    mod.save_checkpoint(path, net_b, opt_b, 2, 0.5)

    net_c = mod.make()
    net_c.set_train(True)
    opt_c = ms_make_opt("adam", net_c, 0.01)
    step_c = make_jit_step(net_c, opt_c)
    step_c(5)  # compiled, and weights, moments and step count moved on
    mod.resume(path, net_c, opt_c)
    resumed = first + [step_c(i) for i in range(2, 5)]
    np.testing.assert_allclose(resumed, uninterrupted, rtol=1e-6, atol=1e-7)
    a, c = ms_state(net_a), ms_state(net_c)
    for k in a:
        np.testing.assert_allclose(c[k], a[k], rtol=1e-6, atol=1e-7, err_msg=k)


def test_state_dict_file_objects_and_names(programs, tmp_path):
    """model.state_dict() keeps MindSpore's names; torch.save/torch.load through a BytesIO; a plain
    state_dict file is a MindSpore checkpoint mindspore.load_checkpoint reads with the same keys."""
    t, mod, _, _ = programs
    net = mod.make()
    sd = mod.to_bytes(net.state_dict())
    back = mod.from_bytes(sd)
    assert list(back) == list(net.state_dict())
    assert "bn.moving_mean" in back and "emb.embedding_table" in back
    other = mod.make()
    mod.load_strict(other, back)
    for k, v in ms_state(net).items():
        np.testing.assert_array_equal(ms_state(other)[k], v)
    path = str(tmp_path / "w.ckpt")
    mod.save_weights(net, path)
    raw = ms.load_checkpoint(path)
    assert [k for k in raw if k != "__torch_save_layout__"] == list(net.state_dict())
    # and such a file loads with MindSpore's own API
    third = mod.make()
    not_loaded, _ = ms.load_param_into_net(third, raw)
    assert not not_loaded
    np.testing.assert_array_equal(ms_state(third)["fc.weight"], ms_state(net)["fc.weight"])


def test_state_dict_answers_torch_names(programs):
    """A converted model's state_dict keeps MindSpore's names but answers torch's too: lookups, `in`,
    get/pop/del by torch's name give what torch gives."""
    t, mod, _, _ = programs
    torch.manual_seed(0)
    tnet = t["make"]()
    mnet = mod.make()
    mod.load_strict(mnet, {k: v.detach().numpy() for k, v in tnet.state_dict().items()})
    t_sizes, t_found, t_bias, t_len, t_missing, t_unexpected = t["read_by_torch_names"](tnet)
    m_sizes, m_found, m_bias, m_len, m_missing, m_unexpected = mod.read_by_torch_names(mnet)
    assert (m_sizes, m_found) == (t_sizes, t_found)
    np.testing.assert_allclose(m_bias.asnumpy(), t_bias.detach().numpy(), rtol=1e-6)
    # torch counts BatchNorm's num_batches_tracked, MindSpore has no such entry
    assert (m_len, m_missing, m_unexpected) == (t_len - 1, t_missing, t_unexpected)
    assert list(mnet.state_dict()) == list(mod.make().state_dict())


# ------------------------------------------------------------------------------ strict
def test_strict_mismatch_lists_every_key(programs, tmp_path):
    t, mod, _, _ = programs
    tnet = t["make"]()
    path = str(tmp_path / "torch.pt")
    torch.save(tnet.state_dict(), path)
    sd = mod.load_any(path)   # torch's names, read by the converted program
    for k in ("fc.bias", "bn.running_var"):
        del sd[k]
    sd["head.weight"] = ms.Tensor(np.zeros((2, 2), np.float32))
    sd["extra.bias"] = ms.Tensor(np.zeros(2, np.float32))
    t_sd = {k: v for k, v in tnet.state_dict().items() if k not in ("fc.bias", "bn.running_var")}
    t_sd["head.weight"] = torch.zeros(2, 2)
    t_sd["extra.bias"] = torch.zeros(2)

    with pytest.raises(RuntimeError) as t_err:
        t["load_strict"](t["make"](), t_sd)
    mnet = mod.make()
    with pytest.raises(RuntimeError) as m_err:
        mod.load_strict(mnet, sd)
    for msg in (str(t_err.value), str(m_err.value)):
        assert "Missing key(s) in state_dict" in msg and "Unexpected key(s) in state_dict" in msg
        assert '"head.weight"' in msg and '"extra.bias"' in msg and '"fc.bias"' in msg
    # missing keys in torch's names on both sides: a converted program compares them with torch's (MAE's
    # main_finetune.py asserts them; tests/test_heldout62_programs.py::test_missing_keys_in_torch_names)
    assert '"bn.running_var"' in str(t_err.value) and '"bn.running_var"' in str(m_err.value)

    t_missing, t_unexpected = t["load_partial"](t["make"](), t_sd)
    missing, unexpected = mod.load_partial(mnet, sd)
    assert missing == sorted(t_missing) == ["bn.running_var", "fc.bias"]
    assert unexpected == t_unexpected == ["extra.bias", "head.weight"]
    # what matched was loaded, renamed and reshaped (Conv1d (out, in, k) -> (out, in, 1, k))
    got = ms_state(mnet)
    np.testing.assert_array_equal(got["conv.weight"][:, :, 0, :], tnet.conv.weight.detach().numpy())
    np.testing.assert_array_equal(got["bn.gamma"], tnet.bn.weight.detach().numpy())

    bad = dict(mod.load_any(path))
    bad["fc.weight"] = ms.Tensor(np.zeros((5, 5), np.float32))
    with pytest.raises(RuntimeError, match="size mismatch for fc.weight"):
        mod.load_partial(mod.make(), bad)


def test_norm_layers_without_affine_or_stats(tmp_path):
    """torch saves no weight/bias for affine=False and no running stats for track_running_stats=False;
    the converted model's frozen counterparts keep their values under strict=True."""
    src = '''
import torch
import torch.nn as nn


def make():
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, affine=False), nn.LayerNorm(4),
                         nn.BatchNorm1d(4, track_running_stats=False))


def load(model, path):
    model.load_state_dict(torch.load(path))
    return model
'''
    t = load_torch(src)
    mod, _, _ = load_converted(src)
    torch.manual_seed(3)
    tnet = t["make"]()
    with torch.no_grad():
        tnet[1].running_mean.fill_(0.5)
        tnet[2].weight.fill_(2.0)
    path = str(tmp_path / "norms.pt")
    torch.save(tnet.state_dict(), path)
    mnet = mod.load(mod.make(), path)
    tnet.eval()
    mnet.set_train(False)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(mnet(ms.Tensor(x)).asnumpy(), tnet(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


# ------------------------------------------------------------------------------ safety
class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("how", ["raw pickle", "torch zip", "nested in a state_dict", "legacy format"])
def test_malicious_pickle_is_refused(programs, tmp_path, how):
    import _ms_compat

    t, mod, _, _ = programs
    marker = tmp_path / "pwned"
    path = str(tmp_path / "evil.pt")
    if how == "raw pickle":
        with open(path, "wb") as f:
            pickle.dump({"model": _Evil(marker)}, f, protocol=2)
    elif how == "torch zip":
        torch.save(_Evil(marker), path)
    elif how == "nested in a state_dict":
        torch.save({"model": t["make"]().state_dict(), "hook": _Evil(marker)}, path)
    else:
        torch.save({"model": t["make"]().state_dict(), "hook": _Evil(marker)}, path,
                   _use_new_zipfile_serialization=False)
    with pytest.raises(_ms_compat.UnsafeCheckpointError, match=r"refusing to load .*(posix|os)\.system") as err:
        mod.load_any(path)
    assert isinstance(err.value, pickle.UnpicklingError)
    assert "nothing was run" in str(err.value)
    assert not marker.exists()


def test_whole_model(programs, tmp_path):
    """torch.save(model): the converted program saves the parameters; loading a whole model (its own
    file or one pickled by torch) raises naming the reason, without unpickling any class."""
    import _ms_compat

    t, mod, _, _ = programs
    net = mod.make()
    path = str(tmp_path / "model.pt")
    mod.save_whole(net, path)
    link = os.path.join(tempfile.mkdtemp(), "model.ckpt")
    os.symlink(path, link)
    raw = ms.load_checkpoint(link)
    np.testing.assert_array_equal(raw["fc.weight"].asnumpy(), ms_state(net)["fc.weight"])
    with pytest.raises(_ms_compat.MigrationError, match="whole model .*Net.*load_state_dict"):
        mod.load_any(path)

    tpath = str(tmp_path / "torch_model.pt")
    torch.save(torch.nn.Sequential(torch.nn.Linear(2, 2)), tpath)
    with pytest.raises(_ms_compat.MigrationError, match=r"torch\.nn\.modules\.container\.Sequential.*state_dict"):
        mod.load_any(tpath)


# ------------------------------------------------------------------------------ safetensors
SAFETENSORS_PROGRAM = '''
import torch
from safetensors.torch import load_file, save_file
import safetensors.torch


def save(model, path):
    save_file(model.state_dict(), path, metadata={"format": "pt"})


def load(model, path):
    model.load_state_dict(load_file(path, device="cpu"))
    return model


def round_trip(tensors):
    return safetensors.torch.load(safetensors.torch.save(tensors))
'''


def test_safetensors(programs, tmp_path):
    st = pytest.importorskip("safetensors.torch")
    t, mod, _, _ = programs
    smod, code, sites = load_converted(SAFETENSORS_PROGRAM)
    assert "safetensors" not in code.replace("_ms_compat.safetensors_", "")
    assert not [s for s in sites if s.status == TODO]

    # torch writes, the converted program reads (torch names -> MindSpore names)
    torch.manual_seed(4)
    tnet = t["make"]()
    path = str(tmp_path / "model.safetensors")
    st.save_file(tnet.state_dict(), path)
    mnet = smod.load(mod.make(), path)
    assert_same_as_torch(mnet, tnet, rtol=0, atol=0)
    m_out, t_out = eval_outputs(mnet, tnet)
    np.testing.assert_allclose(m_out, t_out, rtol=1e-5, atol=1e-5)

    # the converted program writes at exactly the path given; torch's reader and the converted one read it
    out = str(tmp_path / "converted.safetensors")
    smod.save(mnet, out)
    assert os.path.exists(out)
    back = st.load_file(out)
    for k, v in ms_state(mnet).items():
        np.testing.assert_array_equal(back[k].numpy(), v)
    again = smod.load(mod.make(), out)
    for k, v in ms_state(mnet).items():
        np.testing.assert_array_equal(ms_state(again)[k], v)

    # dtypes survive, bfloat16 included
    tensors = {"f": ms.Tensor(np.array([1.5, -2.0], np.float32)), "i": ms.Tensor(np.array([3, 4], np.int64)),
               "b": ms.Tensor(np.array([0.5, 3.0], np.float32)).astype(ms.bfloat16),
               "m": ms.Tensor(np.array([[True, False]]))}
    got = smod.round_trip(tensors)
    assert {k: v.dtype for k, v in got.items()} == {k: v.dtype for k, v in tensors.items()}
    for k in tensors:
        np.testing.assert_array_equal(got[k].astype(ms.float32).asnumpy(), tensors[k].astype(ms.float32).asnumpy())
    # a torch bf16 file reads the same
    bf = str(tmp_path / "bf16.safetensors")
    st.save_file({"w": torch.tensor([0.5, 3.0], dtype=torch.bfloat16)}, bf)
    w = mod.load_any(bf)["w"]
    assert w.dtype == ms.bfloat16
    np.testing.assert_array_equal(w.astype(ms.float32).asnumpy(), [0.5, 3.0])


WRAPPERS = '''
import io
import torch


def save_all(*args, **kwargs):
    return torch.save(*args, **kwargs)


def load_bytes(data, **kwargs):
    return torch.load(io.BytesIO(data), **kwargs)


def round_trip(w):
    buf = io.BytesIO()
    save_all({"w": w, "step": 3}, buf, pickle_protocol=2)
    back = load_bytes(buf.getvalue(), map_location="cpu", weights_only=True)
    return back["w"] * 2, back["step"]
'''


def test_wrappers_passing_torch_arguments_along():
    """`def save_all(*args, **kwargs): torch.save(*args, **kwargs)` (a training library's wrapper): the helpers
    take torch's whole signature, so the call converts as it stands (it was a TODO) and computes torch's."""
    import mindspore as ms
    ns = load_torch(WRAPPERS)
    mod, code, sites = load_converted(WRAPPERS)
    assert not [s for s in sites if s.status == TODO], code
    assert "_ms_compat.save(*args, **kwargs)" in code and "_ms_compat.load(io.BytesIO(data), **kwargs)" in code
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    t_w, t_step = ns["round_trip"](torch.from_numpy(w))
    m_w, m_step = mod.round_trip(ms.Tensor(w))
    np.testing.assert_array_equal(m_w.asnumpy(), t_w.numpy())
    assert m_step == t_step == 3
