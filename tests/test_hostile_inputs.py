"""Crafted, hostile inputs: each gets a one-line error and a non-zero exit, never a traceback or a crash,
nothing from it runs, and the input is byte-identical afterwards. Files are written here (no fixtures from
elsewhere); the expensive ones are small stand-ins of the reported cases."""
from __future__ import annotations

import ctypes
import faulthandler
import importlib
import json
import os
import pickle
import struct
import subprocess
import sys
import time
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from msmigrate import converter, out_files
from msmigrate.cli import main
from msmigrate.weights import UnsafeWeightsError, WeightsError, read_torch_weights
from tests.treeutil import tree_digest

torch = pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[1]
OK_PY = "import torch\nimport torch.nn as nn\n\nlayer = nn.Linear(2, 3)\n"


def _run(capsys, *argv):
    capsys.readouterr()
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    return rc, out, err


def _one_line_weights_error(capsys, path, tmp_path, *extra):
    """`msmigrate weights PATH -o ...`: exit 2, one line, input unchanged, nothing written."""
    before = Path(path).read_bytes()
    out = tmp_path / "out.ckpt"
    rc, _, err = _run(capsys, "weights", path, "-o", out, *extra)
    assert rc == 2, (rc, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("msmigrate weights: error:"), err
    assert Path(path).read_bytes() == before
    assert not out.exists()
    return lines[0]


# ------------------------------------------------------------------------------------------ weights: pickles

def test_many_dimensions_refused_before_numpy(tmp_path):
    """A genuine torch.save of a 72-dimensional tensor crashed NumPy 1.x (32-slot shape arrays). Run in a
    child process (a regression would be a segmentation fault), through `python -m msmigrate`."""
    many = tmp_path / "dims72.pth"
    torch.save({"w": torch.zeros([1] * 72)}, many)
    st = tmp_path / "dims40.safetensors"
    header = json.dumps({"w": {"dtype": "F32", "shape": [1] * 40, "data_offsets": [0, 4]}}).encode()
    st.write_bytes(struct.pack("<Q", len(header)) + header + b"\0\0\0\0")
    before = tree_digest(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for f in (many, st):
        r = subprocess.run([sys.executable, "-m", "msmigrate", "weights", str(f), "-o", str(tmp_path / "x.ckpt")],
                           capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1 and "at most 32" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    assert tree_digest(tmp_path) == before
    r = subprocess.run([sys.executable, "-m", "msmigrate", "--help"], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0 and "weights IN -o OUT.ckpt" in r.stdout


def test_expanded_tensor_is_bounded_by_the_file_size(tmp_path, capsys, monkeypatch):
    """torch.zeros(1).expand(2**28) saves 4 bytes of storage and asks for 1 GiB."""
    big = tmp_path / "expand.pth"
    torch.save({"w": torch.zeros(1).expand(2 ** 28)}, big)
    assert big.stat().st_size < 4096
    msg = _one_line_weights_error(capsys, big, tmp_path)
    assert "MSMIGRATE_MAX_EXPANSION" in msg and "1073741824 bytes" in msg
    # a small expanded tensor is genuine: read with its values
    small = tmp_path / "small.pth"
    torch.save({"w": torch.arange(3.0).reshape(3, 1).expand(3, 5)}, small)
    np.testing.assert_array_equal(read_torch_weights(small)["w"], np.repeat(np.arange(3.0, dtype=np.float32)[:, None],
                                                                             5, axis=1))
    # past the default limit, and read once the limit is raised (a genuine file)
    mid = tmp_path / "mid.pth"
    torch.save({"w": torch.ones(1).expand(2 ** 23)}, mid)
    assert "MSMIGRATE_MAX_EXPANSION" in _one_line_weights_error(capsys, mid, tmp_path)
    monkeypatch.setenv("MSMIGRATE_MAX_EXPANSION", "100000")
    got = read_torch_weights(mid)["w"]
    assert got.shape == (2 ** 23,) and got.min() == got.max() == 1.0


def _dag_key_pickle(levels=64):
    """A dict whose key is a tuple (x, x) nested `levels` deep with shared items: 2**levels leaves, a few
    hundred bytes. Hashing it (to store the key) never ends."""
    p = bytearray(b"\x80\x02}q\x00K\x01")
    for _ in range(levels):
        p += b"q\x010h\x01h\x01\x86"        # memoize, pop, push twice, TUPLE2
    return bytes(p + b"K\x02s.")


def test_exponential_pickle_key_is_refused_fast(tmp_path, capsys):
    dag = tmp_path / "dag.pth"
    dag.write_bytes(_dag_key_pickle())
    assert dag.stat().st_size < 653
    t = time.perf_counter()
    msg = _one_line_weights_error(capsys, dag, tmp_path)
    assert time.perf_counter() - t < 10 and "nested items" in msg


def test_sets_and_nested_tuples_of_genuine_files_still_read(tmp_path):
    path = tmp_path / "mixed.pth"
    torch.save({"tags": {"a", "b"}, "frozen": frozenset({(1, 2)}), "w": torch.ones(2),
                "nested": ((), ((), (1,)), tuple(range(100)))}, path)
    assert list(read_torch_weights(path)) == ["w"]


def test_short_pickle_with_a_huge_length_reads_nothing_big(tmp_path):
    """8 bytes that declare a 3 GiB string: the reader must not allocate what the file does not hold."""
    p = tmp_path / "nine.pth"
    p.write_bytes(b"\x80\x02X\x00\x00\x00\xc0.")
    tracemalloc.start()
    try:
        with pytest.raises(WeightsError) as ei:
            read_torch_weights(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2 ** 20, peak
    assert "\n" not in str(ei.value)


def _rezip(src: Path, dst: Path, replace: dict):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            name = info.filename
            data = replace.get(name.split("/", 1)[1], zin.read(name))
            zout.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=1)


def test_compressed_zip_entries_do_not_inflate_without_limit(tmp_path, capsys):
    base = tmp_path / "base.pth"
    torch.save({"w": torch.zeros(2 ** 23)}, base)            # 32 MiB of zeros
    bomb = tmp_path / "bomb.pth"
    _rezip(base, bomb, {})
    base.unlink()
    assert bomb.stat().st_size < 2 ** 20
    msg = _one_line_weights_error(capsys, bomb, tmp_path)
    assert "MSMIGRATE_MAX_EXPANSION" in msg
    # a data.pkl that inflates to 32 MiB
    small = tmp_path / "small.pth"
    torch.save({"w": torch.zeros(2)}, small)
    pkl_bomb = tmp_path / "pkl_bomb.pth"
    _rezip(small, pkl_bomb, {"data.pkl": b"\x80\x02X" + struct.pack("<I", 2 ** 25) + b"\0" * 2 ** 25 + b"."})
    msg = _one_line_weights_error(capsys, pkl_bomb, tmp_path)
    assert "data.pkl" in msg and "MSMIGRATE_MAX_EXPANSION" in msg


def test_pickle_cannot_replace_methods_of_what_it_returns(tmp_path, capsys):
    """BUILD on the OrderedDict would set instance attributes (items, keys...) to allowed objects, which the
    reader then calls; SETITEM on anything but a dict calls that object's __setitem__."""
    marker = tmp_path / "PWNED"
    build = (b"\x80\x02ccollections\nOrderedDict\n)R}X\x05\x00\x00\x00itemsctorch._utils\n_rebuild_tensor\nsb.")
    setitem = b"\x80\x02ctorch\nfloat32\nX\x01\x00\x00\x00aK\x01s."
    for i, blob in enumerate((build, setitem)):
        p = tmp_path / f"trick{i}.pth"
        p.write_bytes(blob)
        _one_line_weights_error(capsys, p, tmp_path)
        with pytest.raises(UnsafeWeightsError):
            read_torch_weights(p)
    assert not marker.exists()
    # torch's own state_dict carries _metadata through BUILD: still read
    lin = torch.nn.Linear(2, 2)
    good = tmp_path / "good.pth"
    torch.save(lin.state_dict(), good)
    assert set(read_torch_weights(good)) == {"weight", "bias"}


def test_code_reaching_pickles_are_refused_by_name(tmp_path, capsys):
    """Payloads that reach os.system without naming it: getattr(__import__('os'), 'system') and eval;
    a protocol-0 (text) pickle too. Each is refused at its first global, before anything runs."""
    marker = tmp_path / "PWNED"
    cmd = f"touch {marker}".encode()
    chain = (b"\x80\x02cbuiltins\ngetattr\ncbuiltins\n__import__\nX\x02\x00\x00\x00os\x85RX\x06\x00\x00\x00system"
             b"\x86RX" + struct.pack("<I", len(cmd)) + cmd + b"\x85R.")
    text = b"c__builtin__\neval\n(V__import__('os').system('" + cmd + b"')\ntR."
    for i, blob in enumerate((chain, text)):
        p = tmp_path / f"reach{i}.pth"
        p.write_bytes(blob)
        msg = _one_line_weights_error(capsys, p, tmp_path)
        assert ("refusing to load" if i == 0 else "unrecognised weights format") in msg, msg
    assert not marker.exists()


def test_float8_tensors_read_exactly(tmp_path):
    bits = torch.arange(256, dtype=torch.uint8)
    sd = {name: bits.view(dt) for name, dt in (("e4m3", torch.float8_e4m3fn), ("e5m2", torch.float8_e5m2))}
    path = tmp_path / "f8.pth"
    torch.save(sd, path)
    got = read_torch_weights(path)
    for name, t in sd.items():
        want = t.float().numpy()
        assert got[name].dtype == np.float32
        np.testing.assert_array_equal(got[name], want)    # NaN where torch has NaN
    assert any("2 float8 tensors as float32" in n for n in got.notes), got.notes
    fnuz = tmp_path / "fnuz.pth"
    torch.save({"w": torch.zeros(2, dtype=torch.float8_e4m3fnuz)}, fnuz)
    with pytest.raises(UnsafeWeightsError, match="float8_e4m3fnuz"):
        read_torch_weights(fnuz)


def test_emitted_runtime_uses_the_same_reader(tmp_path):
    """The converted program's load() refuses the same files (it is the same unpickler)."""
    pytest.importorskip("mindspore")
    compat = _emitted_compat(tmp_path)
    cases = {"dims.pth": None, "dag.pth": _dag_key_pickle(),
             "trick.pth": b"\x80\x02ccollections\nOrderedDict\n)R}X\x04\x00\x00\x00keysK\x01sb."}
    torch.save({"w": torch.zeros([1] * 40)}, tmp_path / "dims.pth")
    for name, blob in cases.items():
        if blob is not None:
            (tmp_path / name).write_bytes(blob)
        with pytest.raises(pickle.UnpicklingError):
            compat.load(str(tmp_path / name))
    assert converter.compat_source().count("class _TorchUnpickler(") == 1, "one unpickler in the runtime"
    # its CIFAR10 dataset reads batches with the same restricted unpickler: a payload never runs
    marker, batches = tmp_path / "PWNED", tmp_path / "cifar" / "cifar-10-batches-py"
    batches.mkdir(parents=True)
    for name in ("data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4", "data_batch_5", "test_batch"):
        (batches / name).write_bytes(b"cposix\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR.")
    with pytest.raises(pickle.UnpicklingError, match="posix.system"):
        compat.datasets.CIFAR10(str(tmp_path / "cifar"))
    assert not marker.exists()
    assert "class _TorchUnpickler(" not in (ROOT / "msmigrate" / "weights.py").read_text(), "and none in weights.py"
    ok = tmp_path / "ok.pth"
    torch.save({"w": torch.arange(4.0).bfloat16()}, ok)
    got = compat.load(str(ok))
    import mindspore as ms

    assert got["w"].dtype == ms.bfloat16 and got["w"].astype(ms.float32).asnumpy().tolist() == [0, 1, 2, 3]


def _emitted_compat(tmp_path):
    """The converted program's runtime (_ms_compat), as converter.compat_source() writes it."""
    helper = tmp_path / "helper"
    helper.mkdir()
    (helper / "_ms_compat.py").write_text(converter.compat_source(), encoding="utf-8")
    sys.path.insert(0, str(helper))
    try:
        sys.modules.pop("_ms_compat", None)
        return importlib.import_module("_ms_compat")
    finally:
        sys.path.remove(str(helper))
        sys.modules.pop("_ms_compat", None)


def test_torch_saved_numpy_arrays_load_and_payloads_never_run(tmp_path, capsys):
    """pytorch/examples time_sequence_prediction: `torch.save(np_array, f)`, then `torch.load(f)`. The one
    restricted unpickler reads NumPy's array records (what torch.load(weights_only=True) reads with numpy's
    _reconstruct, ndarray, dtype and dtype classes allowed) as torch does, in the converted program and in
    `msmigrate weights`; a payload that would run code, an object array, or a call of an allowed NumPy name
    is still refused and nothing of it runs."""
    pytest.importorskip("mindspore")
    compat = _emitted_compat(tmp_path)
    rng = np.random.default_rng(0)
    genuine = {
        "wave": np.sin(rng.standard_normal((4, 6))),                       # float64, as generate_sine_wave.py
        "big_endian": np.arange(6, dtype=">f4").reshape(2, 3), "fortran": np.asfortranarray(np.eye(2, 3)),
        "ids": rng.integers(0, 9, 5), "scalar": np.float32(2.5), "kind": type(np.dtype("f8")),
        "w": torch.arange(3.0)}
    path = tmp_path / "traindata.pt"
    torch.save(genuine, path)
    want = torch.load(path, weights_only=False)
    got = compat.load(str(path))
    assert got.keys() == want.keys()
    for k in ("wave", "big_endian", "fortran", "ids"):
        assert isinstance(got[k], np.ndarray) and got[k].dtype == want[k].dtype.newbyteorder("="), k
        np.testing.assert_array_equal(got[k], want[k])
    assert got["scalar"] == want["scalar"] and got["scalar"].dtype == np.float32
    assert got["kind"] is want["kind"]
    assert got["w"].asnumpy().tolist() == [0.0, 1.0, 2.0]
    torch.save(genuine["wave"], path)       # the array itself, as the example saves it
    np.testing.assert_array_equal(compat.load(str(path)), genuine["wave"])
    torch.save({"fc.weight": torch.ones(2, 3), "fc.bias": np.arange(2, dtype=np.float32)}, path)
    weights = read_torch_weights(path)        # `msmigrate weights` reads the same records
    np.testing.assert_array_equal(weights["fc.bias"], [0, 1])
    assert weights["fc.weight"].shape == (2, 3)

    marker = tmp_path / "PWNED"

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {marker}",)

    class CallsDtypeClass:      # an allowed name called by the pickle
        def __reduce__(self):
            return type(np.dtype("f8")), ()

    class CallsReconstruct:     # _reconstruct of an allowed class other than ndarray
        def __reduce__(self):
            return np.core.multiarray._reconstruct, (np.dtype, (0,), b"b")

    for i, obj in enumerate((Payload(), {"x": np.zeros(2), "y": Payload()}, np.array([Payload()], dtype=object),
                             CallsDtypeClass(), CallsReconstruct())):
        p = tmp_path / f"hostile{i}.pt"
        torch.save(obj, p)
        blob = p.read_bytes()
        with pytest.raises(pickle.UnpicklingError) as e:
            compat.load(str(p))
        assert "\n" not in str(e.value)
        with pytest.raises(WeightsError):
            read_torch_weights(p)
        assert p.read_bytes() == blob
    assert not marker.exists()


def _py2_cifar_batch(data: np.ndarray, labels) -> bytes:
    """The bytes Python 2's cPickle (protocol 2) writes for CIFAR's {'data': uint8 array, 'labels': [...]}:
    the array's bytes are a Python 2 str (BINSTRING), its dtype numpy.dtype('u1', 0, 1) plus its state."""
    rows, cols = data.shape
    dtype = (b"cnumpy\ndtype\nU\x02u1K\x00K\x01\x87R(K\x03U\x01|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb")
    array = (b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85U\x01b\x87R"
             b"(K\x01M" + struct.pack("<H", rows) + b"M" + struct.pack("<H", cols) + b"\x86" + dtype + b"\x89"
             b"T" + struct.pack("<I", data.nbytes) + data.tobytes() + b"tb")
    label_list = b"](" + b"".join(b"K" + bytes([v]) for v in labels) + b"e"
    return b"\x80\x02}(U\x04data" + array + b"U\x06labels" + label_list + b"u."


def test_cifar_batches_are_read_by_the_restricted_unpickler(tmp_path):
    """The emitted CIFAR10/CIFAR100 datasets read their "python version" batches with the runtime's one
    restricted unpickler: genuine batches (Python 2's cPickle, pickle.dump at protocols 0-4) read as
    pickle.load reads them; a payload that would call os.system, or an object array, is refused."""
    from msmigrate.weights import _tf

    rng = np.random.default_rng(0)
    data, labels = rng.integers(0, 256, (3, 3072), dtype=np.uint8), [3, 1, 9]
    py2 = tmp_path / "data_batch_1"
    py2.write_bytes(_py2_cifar_batch(data, labels))
    got = _tf.read_numpy_pickle(py2)
    assert got["labels"] == labels and got["data"].dtype == np.uint8
    np.testing.assert_array_equal(got["data"], data)
    np.testing.assert_array_equal(pickle.loads(py2.read_bytes(), encoding="latin1")["data"], data)
    entry = {"batch_label": "training batch 1 of 5", "labels": labels, "data": data, "filenames": ["a.png"],
             "big_endian": np.arange(6, dtype=">f4").reshape(2, 3), "fortran": np.asfortranarray(np.eye(2, 3)),
             "scalar": np.int64(7), "raw": b"\x00\xff"}
    for protocol in range(5):
        blob = tmp_path / f"p{protocol}"
        blob.write_bytes(pickle.dumps(entry, protocol=protocol))
        got, want = _tf.read_numpy_pickle(blob), pickle.loads(blob.read_bytes(), encoding="latin1")
        assert got.keys() == want.keys()
        for k, v in want.items():
            if isinstance(v, np.ndarray):
                np.testing.assert_array_equal(got[k], v)
            else:
                assert got[k] == v and type(got[k]) is type(v), (protocol, k)
    marker = tmp_path / "PWNED"

    class Payload:
        def __reduce__(self):
            return os.system, (f"touch {marker}",)

    hostile = [pickle.dumps({"data": Payload(), "labels": []}, protocol=p) for p in (0, 2, 4)]
    hostile += [pickle.dumps({"data": np.array([Payload()], dtype=object)}, protocol=2),   # object array
                b"\x80\x02cnumpy\nndarray\n)R.",                       # calling the array type itself
                b"\x80\x02cnumpy\ndtype\nU\x02u1\x85R}b."]               # a dtype given a dict as state
    for i, blob in enumerate(hostile):
        p = tmp_path / f"hostile{i}"
        p.write_bytes(blob)
        with pytest.raises(pickle.UnpicklingError) as e:
            _tf.read_numpy_pickle(p)
        assert "\n" not in str(e.value)
        assert p.read_bytes() == blob
    assert not marker.exists()
    source = converter.compat_source()
    assert "pickle.load(" not in source and "pickle.loads(" not in source and "read_numpy_pickle(meta)" in source


# ------------------------------------------------------------------------------------------ weights: safetensors

def _st(entries, data: bytes, raw_header: bytes = None) -> bytes:
    header = raw_header if raw_header is not None else json.dumps(entries).encode()
    return struct.pack("<Q", len(header)) + header + data


def test_safetensors_as_strict_as_the_library(tmp_path, capsys):
    from safetensors.numpy import load as library_load

    f32 = np.arange(4, dtype=np.float32).tobytes()
    bad = {
        "overlap": _st({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                        "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}, f32),
        "gap": _st({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                    "b": {"dtype": "F32", "shape": [1], "data_offsets": [12, 16]}}, f32),
        "trailing": _st({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, f32),
        "duplicate": _st(None, f32, b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
                                    b'"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}'),
        "size": _st({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}}, f32),
    }
    for name, blob in bad.items():
        with pytest.raises(Exception):
            library_load(blob)                      # the library refuses it
        p = tmp_path / f"{name}.safetensors"
        p.write_bytes(blob)
        msg = _one_line_weights_error(capsys, p, tmp_path)
        assert "not a valid safetensors file" in msg, (name, msg)
    # a name given twice is refused even where the library keeps the last one (which one was meant?)
    twice = tmp_path / "twice.safetensors"
    twice.write_bytes(_st(None, f32, b'{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},'
                                     b'"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}'))
    assert "duplicate" in _one_line_weights_error(capsys, twice, tmp_path)
    good = _st({"a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}, f32)
    (tmp_path / "good.safetensors").write_bytes(good)
    np.testing.assert_array_equal(read_torch_weights(tmp_path / "good.safetensors")["a"], library_load(good)["a"])


# ------------------------------------------------------------------------------------------ weights: writing

def test_output_equal_to_input_is_refused(tmp_path, capsys):
    ck = tmp_path / "x.ckpt"                             # a Lightning-style torch .ckpt
    torch.save({"state_dict": {"w": torch.ones(2)}}, ck)
    (tmp_path / "link.ckpt").symlink_to(ck)
    os.link(ck, tmp_path / "hard.ckpt")
    pth = tmp_path / "w.pth"
    torch.save({"w": torch.ones(2)}, pth)
    os.link(pth, tmp_path / "w.pth.ckpt")                # MindSpore appends .ckpt to other names
    for out in (ck, tmp_path / "link.ckpt", tmp_path / "hard.ckpt"):
        before = ck.read_bytes()
        rc, _, err = _run(capsys, "weights", ck, "-o", out)
        assert rc == 2 and len(err.strip().splitlines()) == 1 and "is the input file" in err, err
        assert ck.read_bytes() == before
    before = pth.read_bytes()
    rc, _, err = _run(capsys, "weights", pth, "-o", tmp_path / "w.pth")
    assert rc == 2 and "is the input file" in err and pth.read_bytes() == before


def test_unusable_weights_output_is_one_line(tmp_path, capsys):
    pth = tmp_path / "w.pth"
    torch.save({"w": torch.ones(2)}, pth)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    (tmp_path / "folder.ckpt").mkdir()
    for out in (a_file / "x.ckpt", a_file / "sub" / "x.ckpt", tmp_path / "folder.ckpt"):
        rc, _, err = _run(capsys, "weights", pth, "-o", out)
        assert rc == 2 and len(err.strip().splitlines()) == 1 and err.startswith("msmigrate weights: error:"), err
    assert a_file.read_text() == "x"


def test_net_factory_that_exits_is_an_error(tmp_path, capsys):
    pytest.importorskip("mindspore")
    st = tmp_path / "w.safetensors"
    st.write_bytes(_st({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0\0\0\0"))
    mod = f"exiting_{os.getpid()}"
    (tmp_path / f"{mod}.py").write_text("import sys\n\ndef make():\n    sys.exit(0)\n\nif False:\n    pass\n")
    (tmp_path / f"{mod}_import.py").write_text("import sys\nsys.exit(0)\n")
    for spec in (f"{mod}:make", f"{mod}_import:make"):
        msg = _one_line_weights_error(capsys, st, tmp_path, "--net", spec, "--path", tmp_path)
        assert "sys.exit(0)" in msg, msg
    # os._exit ends a process without unwinding: the factory runs in a child process (user_process.py);
    # the payload also writes a marker after its exit, which must never exist
    marker = tmp_path / "AFTER_EXIT"
    (tmp_path / f"{mod}_os.py").write_text(f"import os\n\ndef make():\n    os._exit(0)\n    open({str(marker)!r}, 'w')\n")
    (tmp_path / f"{mod}_os_import.py").write_text(f"import os\nos._exit(0)\nopen({str(marker)!r}, 'w')\n")
    for spec in (f"{mod}_os:make", f"{mod}_os_import:make"):
        msg = _one_line_weights_error(capsys, st, tmp_path, "--net", spec, "--path", tmp_path)
        assert "ended the process (exit status 0)" in msg and "Traceback" not in msg, msg
    assert not marker.exists()


def test_trace_and_keras_factory_that_exits_is_an_error(tmp_path, capsys):
    """`trace` and `keras MODULE:CALLABLE` call the user's factory in a child process (cli.USER_CODE_COMMANDS):
    sys.exit(0) or os._exit(0) there is a one-line error and exit 2, never msmigrate exiting 0 with nothing
    written; the payload's marker, written after its exit, never exists."""
    pytest.importorskip("torch")
    marker = tmp_path / "AFTER_EXIT"
    mod = f"exiting_user_{os.getpid()}"
    (tmp_path / f"{mod}.py").write_text(
        f"import os, sys\n\ndef hard():\n    os._exit(0)\n    open({str(marker)!r}, 'w')\n\n"
        f"def soft():\n    sys.exit(0)\n")
    cases = [("trace", f"{mod}:hard", "ended the process (exit status 0)", ["--input", "1,3"]),
             ("keras", f"{mod}:soft", "called sys.exit(0)", [])]
    for cmd, spec, said, extra in cases:
        out = tmp_path / f"out_{cmd}"
        rc = main([cmd, spec if cmd == "keras" else "--torch", *([] if cmd == "keras" else [spec]),
                   "--path", str(tmp_path), *extra, "-o", str(out)])
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2, (cmd, err)
        assert err[-1].startswith(f"msmigrate {cmd}: error: the user's code {said}"), (cmd, err)
        assert not out.exists()
    assert not marker.exists()


# ------------------------------------------------------------------------------------------ convert: sources

DEEP = {
    "and_chain.py": "import torch\nx = " + " and ".join(f"a{i}" for i in range(10_000)) + "\n",
    "long_sum.py": "import torch\nx = " + " + ".join(f"a{i}" for i in range(3_000)) + "\n",
    "nested_not.py": "import torch\nx = " + "not " * 10_000 + "a\n",
    "paren_chain.py": "import torch\nx = (" + " or\n     ".join(f"a{i}" for i in range(10_000)) + ")\n",
    "literal.py": "import torch\nx = [" + ", ".join(str(i) for i in range(60_000)) + "]\n",
}


def test_deep_or_long_expressions_are_copied_unchanged(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    for name, text in DEEP.items():
        (src / name).write_text(text)
    (src / "ok.py").write_text(OK_PY)
    before = tree_digest(src)
    out = tmp_path / "out"
    t = time.perf_counter()
    rc, _, err = _run(capsys, "convert", src, "-o", out, "-j", "1")
    assert time.perf_counter() - t < 60
    assert rc == 1 and tree_digest(src) == before
    files = {f["file"]: f for f in json.loads((out / "msmigrate-report.json").read_text())["files"]}
    assert files["ok.py"]["status"] == "converted"
    for name in DEEP:
        assert files[name]["status"] == "failed", files[name]
        assert ("levels deep" in files[name]["reason"]) != (name == "literal.py"), files[name]
        assert (out / name).read_bytes() == (src / name).read_bytes()
        assert sum(ln.startswith(f"msmigrate: warning: {name}:") for ln in err.splitlines()) == 1, err
    assert "MSMIGRATE_MAX_STATEMENT_TOKENS" in files["literal.py"]["reason"]
    for argv in (["scan", src, "-j", "1"], ["convert", src, "--check", "-j", "1"],
                 ["convert", src, "--diff", "-j", "1", "-q"]):
        rc, _, _ = _run(capsys, *argv)
        assert rc in (0, 1), argv
    assert tree_digest(src) == before


def test_the_depth_scan_itself_is_linear_on_crafted_quotes():
    from msmigrate.source_limits import source_problem

    for text in ("rb'''" + "\\'" * 300_000, "'" + "\\'" * 300_000, "x = '''" + "a" * 600_000):
        t = time.perf_counter()
        source_problem("import torch\n" + text)
        assert time.perf_counter() - t < 10


def test_project_prepass_survives_deep_nesting():
    from msmigrate.project_index import ProjectIndex

    texts = {Path("deep.py"): "x = " + "not " * 10_000 + "a\n", Path("sum.py"): "x = " + "+".join(["a"] * 3000)}
    index = ProjectIndex(Path("."), list(texts), texts)
    assert index.by_path[Path("deep.py")].parse_error


_REAL_CONVERT_ONE = converter._convert_one


def _crash_on_m3(args):
    """converter._convert_one, but a real crash in native code on m3.py, as libcst's stack overflow was
    (module level: the pool pickles it by name; forked workers see the patched module)."""
    if Path(args[0]).name == "m3.py":
        faulthandler.disable()      # pytest's fault handler would print the crash of this worker
        ctypes.string_at(0)
    return _REAL_CONVERT_ONE(args)


def test_a_crashing_worker_fails_only_its_file(tmp_path, capsys, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    for i in range(9):   # just past the parallel pool's threshold (more than 8 files and 4,000 lines)
        (src / f"m{i}.py").write_text(OK_PY + "y = 1\n" * 446)
    monkeypatch.setattr(converter, "_convert_one", _crash_on_m3)
    out = tmp_path / "out"
    rc, _, err = _run(capsys, "convert", src, "-o", out, "-j", "2")
    assert rc == 1
    files = {f["file"]: f for f in json.loads((out / "msmigrate-report.json").read_text())["files"]}
    assert files["m3.py"]["status"] == "failed" and "crashed" in files["m3.py"]["reason"]
    assert all(files[f"m{i}.py"]["status"] == "converted" for i in range(9) if i != 3)
    assert (out / "m3.py").read_bytes() == (src / "m3.py").read_bytes()


def test_a_crash_in_serial_mode_fails_only_its_file(tmp_path, capsys, monkeypatch):
    """-j 1 and small trees (no parallel pool) convert in one worker process all the same."""
    src = tmp_path / "src"
    src.mkdir()
    for i in (1, 3):
        (src / f"m{i}.py").write_text(OK_PY)
    monkeypatch.setattr(converter, "_convert_one", _crash_on_m3)
    out = tmp_path / "out"
    rc, _, err = _run(capsys, "convert", src, "-o", out, "-j", "1")
    assert rc == 1, err
    files = {f["file"]: f for f in json.loads((out / "msmigrate-report.json").read_text())["files"]}
    assert files["m3.py"]["status"] == "failed" and "crashed" in files["m3.py"]["reason"]
    assert files["m1.py"]["status"] == "converted" and "nn.Dense" in (out / "m1.py").read_text()
    assert (out / "m3.py").read_bytes() == (src / "m3.py").read_bytes()


# ------------------------------------------------------------------------------------------ convert: OUT

def test_force_never_writes_through_links_in_out(tmp_path, capsys):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "ok.py").write_text(OK_PY)
    (src / "notes.txt").write_text("notes\n")
    (src / "pkg" / "m.py").write_text(OK_PY)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "ok.py").symlink_to(src / "ok.py")                  # would rewrite a source file
    (out / "notes.txt").symlink_to(outside / "precious.txt")   # would overwrite a file outside OUT
    (out / "pkg").symlink_to(outside, target_is_directory=True)
    (out / "msmigrate-report.md").symlink_to(outside / "precious.txt")
    os.link(src / "pkg" / "m.py", outside / "m_hard.py")
    before_src, before_outside = tree_digest(src), tree_digest(outside)
    rc, _, err = _run(capsys, "convert", src, "-o", out, "--force", "-q")
    assert rc == 0, err
    assert tree_digest(src) == before_src and tree_digest(outside) == before_outside
    assert not any(p.is_symlink() for p in out.rglob("*"))
    assert "nn.Dense" in (out / "ok.py").read_text() and "nn.Dense" in (out / "pkg" / "m.py").read_text()
    assert not (out / out_files.INCOMPLETE_MARK).exists()


def test_single_file_outputs_are_not_overwritten_without_force(tmp_path, capsys):
    src = tmp_path / "a.py"
    src.write_text(OK_PY)
    target = tmp_path / "o" / "a_ms.py"
    target.parent.mkdir()
    target.write_text("mine\n")
    rc, _, err = _run(capsys, "convert", src, "-o", target)
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "--force" in err
    assert target.read_text() == "mine\n"
    target.unlink()
    (target.parent / "msmigrate-report.md").write_text("my report\n")
    rc, _, err = _run(capsys, "convert", src, "-o", target)
    assert rc == 2 and "msmigrate-report.md" in err and not target.exists()
    rc, _, err = _run(capsys, "convert", src, "-o", target, "--force", "-q")
    assert rc == 0 and "nn.Dense" in target.read_text() and src.read_text() == OK_PY


def test_single_file_mode_does_not_fill_the_source_folder_without_force(tmp_path, capsys):
    src = tmp_path / "proj" / "a.py"
    src.parent.mkdir()
    src.write_text(OK_PY)
    (src.parent / "other.py").write_text("x = 1\n")
    before = tree_digest(src.parent)
    rc, _, err = _run(capsys, "convert", src, "-o", src.parent / "a_ms.py")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "folder of" in err and "--force" in err, err
    assert tree_digest(src.parent) == before
    # a helper runtime or requirements file already in OUT's folder is not overwritten either
    out = tmp_path / "o" / "a_ms.py"
    out.parent.mkdir()
    (out.parent / "requirements-mindspore.txt").write_text("mine\n")
    rc, _, err = _run(capsys, "convert", src, "-o", out)
    assert rc == 2 and "requirements-mindspore.txt exists" in err and not out.exists(), err
    assert (out.parent / "requirements-mindspore.txt").read_text() == "mine\n"
    rc, _, err = _run(capsys, "convert", src, "-o", src.parent / "a_ms.py", "--force", "-q")
    assert rc == 0 and "nn.Dense" in (src.parent / "a_ms.py").read_text() and src.read_text() == OK_PY, err


def test_unusable_out_is_one_line(tmp_path, capsys, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "ok.py").write_text(OK_PY)
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for out in (a_file, a_file / "sub", a_file / "sub" / "x.py"):
        for s in (src, src / "ok.py"):
            rc, _, err = _run(capsys, "convert", s, "-o", out)
            assert rc == 2 and len(err.strip().splitlines()) == 1 and err.startswith("msmigrate: error:"), err
    assert a_file.read_text() == "x"
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o555)
    if hasattr(os, "geteuid") and os.geteuid() == 0:   # root may write anyway: ask as a user would be answered
        real_access = os.access
        monkeypatch.setattr(out_files.os, "access",
                            lambda p, mode: False if Path(p) == locked else real_access(p, mode))
    try:
        for out in (locked / "out", locked / "x.py"):
            for s in (src, src / "ok.py"):
                rc, _, err = _run(capsys, "convert", s, "-o", out)
                assert rc == 2 and len(err.strip().splitlines()) == 1 and "permission" in err, err
    finally:
        os.chmod(locked, 0o755)


def test_interrupted_copy_leaves_no_partial_out(tmp_path, capsys, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    (src / "ok.py").write_text(OK_PY)
    for i in range(30):
        (src / f"data{i}.txt").write_text(f"{i}\n")
    real, calls = out_files.copy_file, []

    def copy_then_interrupt(root, s, d):
        calls.append(d)
        if len(calls) == 10:
            raise KeyboardInterrupt
        real(root, s, d)

    monkeypatch.setattr(converter, "copy_file", copy_then_interrupt)
    out = tmp_path / "out"
    rc, _, err = _run(capsys, "convert", src, "-o", out, "-j", "1")
    assert rc == 130 and len(err.strip().splitlines()) == 1 and "interrupted" in err and "not written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"], "no OUT and no hidden partial folder"
    # into an existing OUT (--force): the marker says it is incomplete
    out.mkdir()
    calls.clear()
    rc, _, err = _run(capsys, "convert", src, "-o", out, "--force", "-j", "1")
    assert rc == 130 and "incomplete" in err and (out / out_files.INCOMPLETE_MARK).exists()
    monkeypatch.setattr(converter, "copy_file", real)
    rc, _, err = _run(capsys, "convert", src, "-o", out, "--force", "-j", "1", "-q")
    assert rc == 0 and not (out / out_files.INCOMPLETE_MARK).exists() and (out / "data29.txt").exists()


def test_verify_input_shapes_are_bounded(capsys, monkeypatch):
    for shape, words in (("1000000000", "MSMIGRATE_MAX_INPUT_ELEMENTS"), (",".join(["1"] * 40), "at most 32")):
        rc, _, err = _run(capsys, "verify", "--torch", "a:b", "--ms", "c:d", "--input", shape)
        assert rc == 2 and len(err.strip().splitlines()) == 1 and words in err, err
    from msmigrate.verify import parse_input_spec

    monkeypatch.setenv("MSMIGRATE_MAX_INPUT_ELEMENTS", str(10 ** 9))
    assert parse_input_spec("1000000000").shape == (10 ** 9,)


def test_many_tensors_read_in_linear_time(tmp_path):
    """The bounds above cost little: 3000 tensors (zip and legacy format) read in seconds."""
    sd = {f"layer{i}.weight": torch.full((2, 2), float(i)) for i in range(3000)}
    for kw in ({}, {"_use_new_zipfile_serialization": False}):
        path = tmp_path / "many.pth"
        torch.save(sd, path, **kw)
        t = time.perf_counter()
        got = read_torch_weights(path)
        assert time.perf_counter() - t < 30
        assert len(got) == 3000 and got["layer2999.weight"][1, 1] == 2999.0
