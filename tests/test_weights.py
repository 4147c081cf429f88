"""Tests for msmigrate.weights: torch checkpoints -> MindSpore, checked against real torch and real MindSpore."""
from __future__ import annotations

import io
import os
import pickle
import pickletools
import struct
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")
tnn = torch.nn
mnn = ms.nn

from msmigrate.weights import (  # noqa: E402
    UnsafeWeightsError,
    WeightsError,
    WeightsMismatchError,
    build_net,
    convert_state_dict,
    convert_weights_file,
    load_torch_state_dict,
    main_weights,
    read_torch_weights,
)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------------------------------------------------------------
# a torch net and its hand-written MindSpore twin (same attribute names, the converter's layer choices)


class TorchNet(tnn.Module):
    def __init__(self):
        super().__init__()
        self.conv1d = tnn.Conv1d(3, 4, 3, padding=1)
        self.conv2d = tnn.Conv2d(3, 4, 3, padding=1)
        self.conv2d_nb = tnn.Conv2d(4, 4, 3, padding=1, bias=False, groups=2)
        self.convt = tnn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
        self.bn1 = tnn.BatchNorm1d(4)
        self.bn2 = tnn.BatchNorm2d(4)
        self.ln = tnn.LayerNorm(8)
        self.gn = tnn.GroupNorm(2, 4)
        self.emb = tnn.Embedding(10, 8)
        self.prelu = tnn.PReLU(4)
        self.lstm = tnn.LSTM(8, 6, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = tnn.GRU(8, 6, batch_first=True)
        self.mha = tnn.MultiheadAttention(8, 2)
        self.features = tnn.Sequential(tnn.Linear(8, 16), tnn.ReLU(), tnn.Sequential(tnn.Linear(16, 8)))
        self.blocks = tnn.ModuleList([tnn.Linear(8, 8), tnn.BatchNorm1d(8)])
        self.scale = tnn.Parameter(torch.randn(8))
        self.register_buffer("pos", torch.randn(5))
        self.register_buffer("tmp", torch.zeros(3), persistent=False)


class MsNet(mnn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1d = mnn.Conv1d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.conv2d = mnn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.conv2d_nb = mnn.Conv2d(4, 4, 3, pad_mode="pad", padding=1, has_bias=False, group=2)
        self.convt = mnn.Conv2dTranspose(4, 2, 3, stride=2, pad_mode="pad", padding=1, has_bias=True)
        self.bn1 = mnn.BatchNorm1d(4)
        self.bn2 = mnn.BatchNorm2d(4)
        self.ln = mnn.LayerNorm((8,), epsilon=1e-5)
        self.gn = mnn.GroupNorm(2, 4)
        self.emb = mnn.Embedding(10, 8)
        self.prelu = mnn.PReLU(4)
        self.lstm = mnn.LSTM(8, 6, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = mnn.GRU(8, 6, batch_first=True)
        self.mha = mnn.MultiheadAttention(8, 2)
        self.features = mnn.SequentialCell([mnn.Dense(8, 16), mnn.ReLU(), mnn.SequentialCell([mnn.Dense(16, 8)])])
        self.blocks = mnn.CellList([mnn.Dense(8, 8), mnn.BatchNorm1d(8)])
        self.scale = ms.Parameter(ms.Tensor(np.zeros(8, np.float32)), name="scale")
        self.pos = ms.Parameter(ms.Tensor(np.zeros(5, np.float32)), name="pos", requires_grad=False)


# MindSpore name -> (torch name, layout change). Written by hand from probing MindSpore 2.10; every MindSpore
# parameter not listed must come from the torch key with the identical name.
EXPECTED = {
    "conv1d.weight": ("conv1d.weight", lambda a: a[:, :, None, :]),   # (out,in,k) -> (out,in,1,k)
    "bn1.gamma": ("bn1.weight", None), "bn1.beta": ("bn1.bias", None),
    "bn1.moving_mean": ("bn1.running_mean", None), "bn1.moving_variance": ("bn1.running_var", None),
    "bn2.gamma": ("bn2.weight", None), "bn2.beta": ("bn2.bias", None),
    "bn2.moving_mean": ("bn2.running_mean", None), "bn2.moving_variance": ("bn2.running_var", None),
    "blocks.1.gamma": ("blocks.1.weight", None), "blocks.1.beta": ("blocks.1.bias", None),
    "blocks.1.moving_mean": ("blocks.1.running_mean", None),
    "blocks.1.moving_variance": ("blocks.1.running_var", None),
    "ln.gamma": ("ln.weight", None), "ln.beta": ("ln.bias", None),
    "gn.gamma": ("gn.weight", None), "gn.beta": ("gn.bias", None),
    "emb.embedding_table": ("emb.weight", None),
    "prelu.w": ("prelu.weight", None),
}


def _randomise(tnet):
    """Make every tensor distinctive (BN stats included) so a wrong mapping cannot pass by accident."""
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, t in tnet.state_dict().items():
            if t.is_floating_point():
                t.copy_(torch.rand(t.shape, generator=g) * (1.5 if "running_var" in name else 1) + 0.25
                        if "running_var" in name else torch.randn(t.shape, generator=g))
            else:
                t.fill_(7)
    return tnet


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    torch.manual_seed(0)
    tnet = _randomise(TorchNet()).eval()
    path = tmp_path_factory.mktemp("w") / "model.pt"
    torch.save(tnet.state_dict(), path)
    mnet = MsNet()
    report = load_torch_state_dict(mnet, str(path))
    return tnet, mnet, report, path


def test_every_parameter_bit_exact(pair):
    tnet, mnet, report, _ = pair
    sd = {k: v.detach().numpy() for k, v in tnet.state_dict().items()}
    seen = set()
    for name, p in mnet.parameters_and_names():
        tkey, fn = EXPECTED.get(name, (name, None))
        want = sd[tkey] if fn is None else fn(sd[tkey])
        got = p.asnumpy()
        assert got.shape == want.shape, name
        assert got.dtype == want.dtype, name
        assert got.tobytes() == want.tobytes(), name   # bit-exact
        seen.add(tkey)
    leftover = set(sd) - seen
    assert leftover == {"bn1.num_batches_tracked", "bn2.num_batches_tracked", "blocks.1.num_batches_tracked"}
    assert sorted(k for k, _ in report.consumed) == sorted(leftover)
    assert "tmp" not in sd                                     # non-persistent buffer never saved
    assert ("conv1d.weight", (4, 3, 3), (4, 3, 1, 3)) in report.reshaped
    assert report.ok and not report.missing and not report.unexpected and not report.cast


def _out(x):
    return x.asnumpy() if hasattr(x, "asnumpy") else x.detach().numpy()


def test_layer_outputs_match_torch(pair):
    tnet, mnet, _, _ = pair
    rng = np.random.default_rng(0)
    x1 = rng.standard_normal((2, 3, 7)).astype(np.float32)
    x2 = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    x4 = rng.standard_normal((2, 4, 6, 6)).astype(np.float32)
    xb1 = rng.standard_normal((5, 4)).astype(np.float32)
    xs = rng.standard_normal((2, 5, 8)).astype(np.float32)
    ids = np.array([[1, 2, 9], [0, 4, 4]], np.int32)
    cases = [
        ("conv1d", x1), ("conv2d", x2), ("conv2d_nb", x4), ("convt", x4), ("bn1", xb1), ("bn2", x4),
        ("ln", xs), ("gn", x4), ("prelu", x4), ("features", xs),
    ]
    with torch.no_grad():
        for name, x in cases:
            t = getattr(tnet, name)(torch.from_numpy(x))
            m = getattr(mnet, name)(ms.Tensor(x))
            np.testing.assert_allclose(_out(m), _out(t), atol=1e-5, rtol=0, err_msg=name)
        t = tnet.emb(torch.from_numpy(ids.astype(np.int64)))
        np.testing.assert_array_equal(_out(mnet.emb(ms.Tensor(ids))), _out(t))
        for name in ("lstm", "gru"):
            to, th = getattr(tnet, name)(torch.from_numpy(xs))
            mo, mh = getattr(mnet, name)(ms.Tensor(xs))
            # MindSpore's CPU tanh is an approximation (abs error up to ~1e-4 for |x| >= 4, measured); the GRU goes
            # through it while the LSTM uses a fused kernel that matches torch exactly.
            np.testing.assert_allclose(_out(mo), _out(to), atol=1e-5 if name == "lstm" else 2e-4, rtol=0,
                                       err_msg=name)
            if name == "lstm":
                np.testing.assert_allclose(_out(mh[0]), _out(th[0]), atol=1e-5, rtol=0)
                np.testing.assert_allclose(_out(mh[1]), _out(th[1]), atol=1e-5, rtol=0)
        q = rng.standard_normal((5, 2, 8)).astype(np.float32)
        to, tw = tnet.mha(*(torch.from_numpy(q),) * 3)
        mo, mw = mnet.mha(*(ms.Tensor(q),) * 3)
        np.testing.assert_allclose(_out(mo), _out(to), atol=1e-5, rtol=0)
        np.testing.assert_allclose(_out(mw), _out(tw), atol=1e-5, rtol=0)


class TorchMisc(tnn.Module):
    def __init__(self):
        super().__init__()
        self.bn3 = tnn.BatchNorm3d(3)
        self.conv3 = tnn.Conv3d(3, 2, 2)
        self.convt1 = tnn.ConvTranspose1d(3, 5, 3)
        self.in_aff = tnn.InstanceNorm2d(4, affine=True)
        self.in_plain = tnn.InstanceNorm1d(4)           # no tensors at all in torch
        self.rnn = tnn.RNN(4, 3)
        self.mha_kv = tnn.MultiheadAttention(8, 2, kdim=6, vdim=5)
        self.dense_nb = tnn.Linear(3, 2, bias=False)
        self.bn_noaff = tnn.BatchNorm2d(2, affine=False)
        self.gn_noaff = tnn.GroupNorm(1, 2, affine=False)


class MsMisc(mnn.Cell):
    def __init__(self):
        super().__init__()
        self.bn3 = mnn.BatchNorm3d(3)
        self.conv3 = mnn.Conv3d(3, 2, 2, pad_mode="pad", has_bias=True)
        self.convt1 = mnn.Conv1dTranspose(3, 5, 3, pad_mode="pad", has_bias=True)
        self.in_aff = mnn.InstanceNorm2d(4)
        self.in_plain = mnn.InstanceNorm1d(4, affine=False)
        self.rnn = mnn.RNN(4, 3)
        self.mha_kv = mnn.MultiheadAttention(8, 2, kdim=6, vdim=5)
        self.dense_nb = mnn.Dense(3, 2, has_bias=False)
        self.bn_noaff = mnn.BatchNorm2d(2, affine=False)
        self.gn_noaff = mnn.GroupNorm(1, 2, affine=False)


def test_more_layer_layouts(tmp_path):
    tnet = _randomise(TorchMisc())
    sd = {k: v.numpy() for k, v in tnet.state_dict().items()}
    path = tmp_path / "misc.pth"
    torch.save(tnet.state_dict(), path)
    mnet = MsMisc()
    report = load_torch_state_dict(mnet, str(path))
    p = dict((n, q.asnumpy()) for n, q in mnet.parameters_and_names())
    assert p["bn3.bn2d.gamma"].tobytes() == sd["bn3.weight"].tobytes()
    assert p["bn3.bn2d.moving_variance"].tobytes() == sd["bn3.running_var"].tobytes()
    assert ("bn3.num_batches_tracked" in [k for k, _ in report.consumed])
    assert p["conv3.weight"].tobytes() == sd["conv3.weight"].tobytes()
    assert p["convt1.weight"].shape == (3, 5, 1, 3)
    assert p["convt1.weight"].tobytes() == sd["convt1.weight"].tobytes()
    assert p["in_aff.gamma"].tobytes() == sd["in_aff.weight"].tobytes()
    assert p["rnn.weight_hh_l0"].tobytes() == sd["rnn.weight_hh_l0"].tobytes()
    for k in ("q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "out_proj.weight"):
        assert p[f"mha_kv.{k}"].tobytes() == sd[f"mha_kv.{k}"].tobytes()
    defaulted = {n for n, _ in report.defaulted}
    # MindSpore InstanceNorm always owns gamma/beta/moving stats; torch has none of them here
    assert {"in_plain.gamma", "in_plain.beta", "in_plain.moving_mean", "in_plain.moving_variance",
            "in_aff.moving_mean", "in_aff.moving_variance",
            "bn_noaff.gamma", "bn_noaff.beta", "gn_noaff.gamma", "gn_noaff.beta"} == defaulted
    assert p["bn_noaff.moving_mean"].tobytes() == sd["bn_noaff.running_mean"].tobytes()
    np.testing.assert_array_equal(p["in_plain.gamma"], np.ones(4, np.float32))
    # ConvTranspose1d output parity (cheap)
    x = np.random.default_rng(1).standard_normal((2, 3, 6)).astype(np.float32)
    with torch.no_grad():
        np.testing.assert_allclose(_out(mnet.convt1(ms.Tensor(x))), _out(tnet.convt1(torch.from_numpy(x))),
                                   atol=1e-5, rtol=0)


# ---------------------------------------------------------------------------------------------------------------------
# reading torch files without torch


def _tricky_state():
    g = torch.Generator().manual_seed(3)
    base = torch.randn(6, 8, generator=g)
    return {
        "plain": torch.randn(3, 4, generator=g),
        "noncontig": base[:, ::2],                   # strided view
        "transposed": base.t(),                      # shares storage with the two others
        "offset_view": base[2:4, 1:],                # storage offset
        "fp16": torch.randn(5, generator=g).half(),
        "bf16": torch.randn(5, generator=g).bfloat16(),
        "f64": torch.randn(2, 2, generator=g).double(),
        "i64": torch.arange(6).reshape(2, 3),
        "i32": torch.arange(4, dtype=torch.int32),
        "i8": torch.tensor([-3, 4], dtype=torch.int8),
        "u8": torch.tensor([250, 4], dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        "param": tnn.Parameter(torch.ones(2)),
    }


@pytest.mark.parametrize("zipformat", [True, False], ids=["zip", "legacy"])
def test_reader_matches_torch_load(tmp_path, zipformat):
    sd = _tricky_state()
    path = tmp_path / "t.pt"
    torch.save(sd, path, _use_new_zipfile_serialization=zipformat)
    got = read_torch_weights(path)
    ref = torch.load(path, weights_only=True)
    assert list(got) == list(sd)
    for k, t in ref.items():
        want = t.detach().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy()
        assert got[k].dtype == want.dtype, k
        assert got[k].shape == want.shape, k
        assert got[k].tobytes() == want.tobytes(), k
        assert got[k].flags.c_contiguous, k


def test_state_dict_of_real_layers_in_fp16(tmp_path):
    tnet = _randomise(TorchMisc()).half()
    path = tmp_path / "h.bin"
    torch.save(tnet.state_dict(), path)
    got = read_torch_weights(path)
    for k, v in tnet.state_dict().items():
        assert got[k].dtype == v.numpy().dtype and got[k].tobytes() == v.numpy().tobytes(), k
    # fp16 source into fp32 MindSpore parameters: cast (exact widening) and recorded
    mnet = MsMisc()
    report = load_torch_state_dict(mnet, str(path))
    assert ("conv3.weight", "float16", "float32") in report.cast
    np.testing.assert_array_equal(mnet.conv3.weight.asnumpy(), tnet.conv3.weight.detach().float().numpy())


@pytest.mark.parametrize("wrapper", ["state_dict", "model", "model_state_dict"])
def test_wrapped_checkpoint(tmp_path, wrapper):
    lin = tnn.Linear(3, 2)
    path = tmp_path / "ckpt.pth"
    torch.save({"epoch": 4, wrapper: lin.state_dict(), "optimizer": {"state": {}, "param_groups": []},
                "blob": b"\x00\x01"}, path)
    got = read_torch_weights(path)
    assert set(got) == {"weight", "bias"}
    assert any(f"[{wrapper!r}]" in n for n in got.notes)
    np.testing.assert_array_equal(got["weight"], lin.weight.detach().numpy())


def test_not_a_state_dict(tmp_path):
    path = tmp_path / "x.pt"
    torch.save({"epoch": 1, "note": "nothing here"}, path)
    with pytest.raises(WeightsError, match="no state_dict found"):
        read_torch_weights(path)


class _Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pickles_never_run(tmp_path):
    marker = tmp_path / "PWNED"
    # 1. inside a real torch zip archive, next to real tensors
    zpath = tmp_path / "evil.pt"
    torch.save({"weight": torch.ones(2), "x": _Evil(marker)}, zpath)
    # 2. a bare pickle with a .pth name
    ppath = tmp_path / "evil.pth"
    ppath.write_bytes(pickle.dumps(_Evil(marker), protocol=2))
    # 3. the legacy format
    lpath = tmp_path / "evil_legacy.pt"
    torch.save({"x": _Evil(marker)}, lpath, _use_new_zipfile_serialization=False)
    control = tmp_path / "CONTROL"
    pickle.loads(pickle.dumps(_Evil(control), protocol=2))   # control: plain pickle does run the payload
    assert control.exists()
    for p in (zpath, ppath, lpath):
        with pytest.raises(UnsafeWeightsError) as ei:
            read_torch_weights(p)
        msg = str(ei.value)
        assert "system" in msg and ("posix" in msg or "os." in msg), msg
        assert "\n" not in msg
    # 4. crafted pickles: BUILD (mutate) an allowed function; call builtins.eval
    build = b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n}X" + struct.pack("<I", 12) + b"__defaults__)sb."
    cmd = f"__import__('os').system('touch {marker}')".encode()
    evalp = b"\x80\x02cbuiltins\neval\nX" + struct.pack("<I", len(cmd)) + cmd + b"\x85R."
    pickletools.dis(evalp, out=io.StringIO())      # well-formed pickles (parsed, never loaded by plain pickle)
    pickletools.dis(build, out=io.StringIO())
    for i, blob in enumerate((build, evalp)):
        p = tmp_path / f"crafted{i}.pt"
        p.write_bytes(blob)
        with pytest.raises(UnsafeWeightsError):
            read_torch_weights(p)
    assert not marker.exists()
    ok = tmp_path / "ok.pt"
    torch.save({"w": torch.arange(3.0)}, ok)
    np.testing.assert_array_equal(read_torch_weights(ok)["w"], np.arange(3.0, dtype=np.float32))


def _assert_one_line_weights_error(path):
    with pytest.raises(WeightsError) as ei:
        read_torch_weights(path)
    assert "\n" not in str(ei.value) and str(ei.value)
    return str(ei.value)


def test_truncated_and_corrupt_files(tmp_path):
    sd = {"a": torch.randn(64, 64), "b": torch.randn(10)}
    good = tmp_path / "good.pt"
    torch.save(sd, good)
    blob = good.read_bytes()
    for frac in (0.3, 0.6, 0.95):
        p = tmp_path / f"trunc{frac}.pt"
        p.write_bytes(blob[: int(len(blob) * frac)])
        _assert_one_line_weights_error(p)
    # valid zip whose tensor record is short
    short = tmp_path / "short.pt"
    with zipfile.ZipFile(good) as zin, zipfile.ZipFile(short, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("data/0"):
                data = data[:100]
            zout.writestr(info.filename, data)
    assert "truncated or corrupt" in _assert_one_line_weights_error(short)
    legacy = tmp_path / "legacy.pt"
    torch.save(sd, legacy, _use_new_zipfile_serialization=False)
    lb = legacy.read_bytes()
    for cut in (len(lb) // 2, len(lb) - 7, 40):
        p = tmp_path / f"ltrunc{cut}.pt"
        p.write_bytes(lb[:cut])
        _assert_one_line_weights_error(p)
    for name, data in (("empty.pt", b""), ("junk.pt", b"hello, not weights"), ("junk.safetensors", b"\x05" * 20)):
        p = tmp_path / name
        p.write_bytes(data)
        _assert_one_line_weights_error(p)
    _assert_one_line_weights_error(tmp_path / "does_not_exist.pt")


def test_safetensors_path(tmp_path):
    from safetensors.torch import save_file

    tnet = _randomise(tnn.Sequential(tnn.Conv1d(2, 3, 3), tnn.BatchNorm1d(3), tnn.Embedding(4, 3)))
    sd = {k: v.contiguous() for k, v in tnet.state_dict().items()}
    sd["extra_bf16"] = torch.randn(3).bfloat16()
    path = tmp_path / "m.safetensors"
    save_file(sd, str(path))
    got = read_torch_weights(path)
    assert got["extra_bf16"].dtype == np.float32
    np.testing.assert_array_equal(got["extra_bf16"], sd["extra_bf16"].float().numpy())
    # the built-in fallback reader (used when safetensors.numpy cannot make a bf16 array) agrees bit for bit
    from msmigrate.weights import _read_safetensors_raw

    raw = _read_safetensors_raw(str(path))
    assert set(raw) == set(got) and all(raw[k].tobytes() == got[k].tobytes() for k in got)
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(path.read_bytes()[:-10])
    _assert_one_line_weights_error(cut)
    del sd["extra_bf16"]
    save_file(sd, str(path))
    mnet = mnn.SequentialCell([mnn.Conv1d(2, 3, 3, pad_mode="pad", has_bias=True), mnn.BatchNorm1d(3),
                               mnn.Embedding(4, 3)])
    report = load_torch_state_dict(mnet, str(path))
    assert report.ok
    np.testing.assert_array_equal(mnet[2].embedding_table.asnumpy(), sd["2.weight"].numpy())
    np.testing.assert_array_equal(mnet[1].moving_variance.asnumpy(), sd["1.running_var"].numpy())
    np.testing.assert_array_equal(mnet[0].weight.asnumpy()[:, :, 0, :], sd["0.weight"].numpy())


# ---------------------------------------------------------------------------------------------------------------------
# mismatches, dicts, tied weights


class _SmallMs(mnn.Cell):
    def __init__(self, out=4, extra=False):
        super().__init__()
        self.fc = mnn.Dense(3, out)
        self.bn = mnn.BatchNorm1d(out)
        if extra:
            self.head = mnn.Dense(out, 2)


def _small_torch_state(out=4):
    m = _randomise(tnn.Sequential())
    m.fc = tnn.Linear(3, out)
    m.bn = tnn.BatchNorm1d(out)
    return {k: v.detach().numpy() for k, v in m.state_dict().items()}


def test_mismatch_lists_every_problem():
    state = _small_torch_state()
    state["fc.weight"] = np.zeros((4, 5), np.float32)           # shape
    state["stray.weight"] = np.zeros(2, np.float32)            # unexpected
    del state["bn.running_var"]                                # missing
    net = _SmallMs(extra=True)                                 # head.weight / head.bias missing
    with pytest.raises(WeightsMismatchError) as ei:
        convert_state_dict(net, state)
    msg = str(ei.value)
    for needle in ("fc.weight", "(4, 5)", "(4, 3)", "stray.weight", "bn.moving_variance", "bn.running_var",
                   "head.weight", "head.bias"):
        assert needle in msg, (needle, msg)
    assert "5 mismatches" in msg and "\n" not in msg
    rep = ei.value.report
    assert len(rep.missing) == 3 and len(rep.unexpected) == 1 and len(rep.shape_mismatch) == 1
    # non-strict: everything that fits is loaded, the rest reported
    before = net.fc.weight.asnumpy().copy()
    report = load_torch_state_dict(net, state, strict=False)
    assert not report.ok and len(report.mismatch_lines()) == 5
    np.testing.assert_array_equal(net.fc.weight.asnumpy(), before)
    np.testing.assert_array_equal(net.bn.gamma.asnumpy(), state["bn.weight"])


def test_dict_of_torch_tensors_and_dataparallel_prefix():
    tm = tnn.Sequential()
    tm.fc = tnn.Linear(3, 4)
    tm.bn = tnn.BatchNorm1d(4)
    sd = {"module." + k: v for k, v in tm.state_dict().items()}
    net = _SmallMs()
    report = load_torch_state_dict(net, sd)
    assert any("module." in n for n in report.notes)
    np.testing.assert_array_equal(net.fc.weight.asnumpy(), tm.fc.weight.detach().numpy())


def test_tied_weights():
    class T(tnn.Module):
        def __init__(self):
            super().__init__()
            self.emb = tnn.Embedding(5, 3)
            self.head = tnn.Linear(3, 5, bias=False)
            self.head.weight = self.emb.weight

    class M(mnn.Cell):
        def __init__(self):
            super().__init__()
            self.emb = mnn.Embedding(5, 3)
            self.head = mnn.Dense(3, 5, has_bias=False)
            self.head.weight = self.emb.embedding_table

    t = T()
    buf = io.BytesIO()
    torch.save(t.state_dict(), buf)
    p = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"tied_{os.getpid()}.pt")
    with open(p, "wb") as f:
        f.write(buf.getvalue())
    try:
        m = M()
        report = load_torch_state_dict(m, p)
    finally:
        os.remove(p)
    assert report.ok and report.aliases == [("head.weight", "emb.embedding_table")]
    np.testing.assert_array_equal(m.emb.embedding_table.asnumpy(), t.emb.weight.detach().numpy())
    bad = {k: v.detach().numpy().copy() for k, v in t.state_dict().items()}
    bad["head.weight"] += 1
    with pytest.raises(WeightsMismatchError, match="tied parameter"):
        convert_state_dict(M(), bad)


# ---------------------------------------------------------------------------------------------------------------------
# ckpt writing, build_net, CLI


def test_convert_without_net_roundtrips(tmp_path):
    sd = _tricky_state()
    del sd["empty"]
    src = tmp_path / "in.pt"
    torch.save(sd, src)
    out = tmp_path / "out" / "w.ckpt"
    report = convert_weights_file(src, out)
    assert report.written == str(out) and out.exists()
    back = ms.load_checkpoint(str(out))
    assert set(back) == set(sd)
    for k, t in sd.items():
        want = t.detach().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy()
        got = back[k].asnumpy()
        assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes(), k


_NETMOD = """
import mindspore.nn as nn

class Small(nn.Cell):
    def __init__(self, out=4):
        super().__init__()
        self.fc = nn.Dense(3, out)
        self.bn = nn.BatchNorm1d(out)

def make():
    return Small()

def make_wrong():
    return Small(out=6)

def make_not_cell():
    return 3
"""


def test_cli_exit_codes(tmp_path, capsys):
    tm = tnn.Sequential()
    tm.fc = tnn.Linear(3, 4)
    tm.bn = tnn.BatchNorm1d(4)
    src = tmp_path / "small.pt"
    torch.save(tm.state_dict(), src)
    moddir = tmp_path / "netpkg"
    moddir.mkdir()
    modname = f"wnet_{os.getpid()}"
    (moddir / f"{modname}.py").write_text(textwrap.dedent(_NETMOD))

    status = tmp_path / "status"

    def run(*argv, child=False):
        # with --net the command runs itself in a child process (the factory is user code that may end its
        # process): `child=True` goes that way; the other cases call what that child runs, in this process
        capsys.readouterr()
        rc = main_weights(list(argv), status_file=None if child else str(status))
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        return rc, out, err

    rc, out, err = run(str(src), "-o", str(tmp_path / "plain.ckpt"))
    assert rc == 0 and "wrote" in out
    assert set(ms.load_checkpoint(str(tmp_path / "plain.ckpt"))) == set(tm.state_dict())

    rc, out, err = run(str(src), "-o", str(tmp_path / "net.ckpt"), "--net", f"{modname}:make", "--path", str(moddir),
                       child=True)
    assert rc == 0 and "wrote" in out, err
    back = ms.load_checkpoint(str(tmp_path / "net.ckpt"))
    np.testing.assert_array_equal(back["bn.gamma"].asnumpy(), tm.bn.weight.detach().numpy())
    np.testing.assert_array_equal(back["fc.weight"].asnumpy(), tm.fc.weight.detach().numpy())

    rc, out, err = run(str(src), "-o", str(tmp_path / "bad.ckpt"), "--net", f"{modname}:make_wrong",
                       "--path", str(moddir))
    assert rc == 1 and "shape mismatch" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "bad.ckpt").exists()

    rc, out, err = run(str(src), "-o", str(tmp_path / "lenient.ckpt"), "--net", f"{modname}:make_wrong",
                       "--path", str(moddir), "--no-strict")
    assert rc == 0 and "warning" in err and (tmp_path / "lenient.ckpt").exists()

    for argv in (
        [str(tmp_path / "missing.pt"), "-o", str(tmp_path / "x.ckpt")],
        [str(src), "-o", str(tmp_path / "x.ckpt"), "--net", "no_colon"],
        [str(src), "-o", str(tmp_path / "x.ckpt"), "--net", "no_such_module_xyz:make"],
        [str(src), "-o", str(tmp_path / "x.ckpt"), "--net", f"{modname}:make_not_cell", "--path", str(moddir)],
        [str(src), "-o", str(tmp_path / "x.ckpt"), "--path", str(moddir)],
    ):
        rc, out, err = run(*argv)
        assert rc == 2 and len(err.strip().splitlines()) == 1, (argv, err)

    evil = tmp_path / "evil.pt"
    torch.save({"x": _Evil(tmp_path / "PWNED")}, evil)
    rc, out, err = run(str(evil), "-o", str(tmp_path / "x.ckpt"))
    assert rc == 2 and "system" in err
    assert not (tmp_path / "PWNED").exists()
    rc, out, err = run(str(src))                       # argparse usage error: -o missing
    assert rc == 2


def test_build_net_errors(tmp_path):
    with pytest.raises(WeightsError, match="MODULE:CALLABLE"):
        build_net("a:b:c")
    with pytest.raises(WeightsError, match="no such directory"):
        build_net("m:f", str(tmp_path / "nope"))


def test_module_imports_and_reads_without_torch(tmp_path):
    sd = {"w": torch.arange(6.0).reshape(2, 3)[:, 1:], "h": torch.ones(2).half()}
    p = tmp_path / "w.pt"
    torch.save(sd, p)
    code = textwrap.dedent(f"""
        import sys
        sys.modules['torch'] = None          # any 'import torch' now fails
        import msmigrate.weights as W
        assert 'mindspore' not in sys.modules
        d = W.read_torch_weights({str(p)!r})
        assert d['w'].tolist() == [[1.0, 2.0], [4.0, 5.0]], d['w']
        assert str(d['h'].dtype) == 'float16'
        assert 'torch' not in [m for m in sys.modules if sys.modules[m] is not None and m == 'torch']
        print('ok')
    """)
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
