"""Pretrained weights through torch.hub's cache: load_state_dict_from_url / model_zoo.load_url /
download_url_to_file / get_dir against torch's own, both served the same files by a local HTTP server (CI
has no network). Each side gets its own TORCH_HOME: the converted side must download into torch's layout
($TORCH_HOME/hub/checkpoints/NAME), check a file name's sha256 prefix as torch does, unpack the legacy
one-file zip, and give the same tensors (values, shapes, dtypes)."""
from __future__ import annotations

import hashlib
import http.server
import io
import os
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from tests.parity.harness import load_converted, load_torch

SRC = '''
import torch
import torch.hub
from torch.utils import model_zoo


def fetch(url, name=None, check=False):
    return torch.hub.load_state_dict_from_url(url, map_location="cpu", check_hash=check, file_name=name)


def fetch_zoo(url):
    return model_zoo.load_url(url, progress=False)


def fetch_file(url, dst, prefix=None):
    torch.hub.download_url_to_file(url, dst, prefix, progress=False)
    return torch.load(dst)


def cache_dir():
    return torch.hub.get_dir()


def build_and_load(url):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    model.load_state_dict(torch.hub.load_state_dict_from_url(url))
    model.eval()
    return model(torch.arange(6.0).reshape(2, 3) / 5)
'''


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    import torch
    root = tmp_path_factory.mktemp("served")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    sd = model.state_dict()
    buf = io.BytesIO()
    torch.save(sd, buf)
    data = buf.getvalue()
    digest = hashlib.sha256(data).hexdigest()
    (root / "weights.pth").write_bytes(data)
    (root / f"hashed-{digest[:8]}.pth").write_bytes(data)
    (root / "badhash-deadbeef.pth").write_bytes(data)
    with zipfile.ZipFile(root / "legacy.zip", "w") as z:   # torch.hub's legacy layout: one file in a zip
        z.writestr("inner.pth", data)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(root), **k)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", digest
    server.shutdown()


def _same(ms_sd, t_sd):
    assert list(ms_sd) == list(t_sd)
    for k in t_sd:
        got = ms_sd[k].asnumpy()
        assert got.dtype == t_sd[k].numpy().dtype and got.shape == tuple(t_sd[k].shape), k
        np.testing.assert_array_equal(got, t_sd[k].numpy(), err_msg=k)


def test_load_state_dict_from_url(served, tmp_path, monkeypatch):
    base, digest = served
    ns = load_torch(SRC)
    mod, code, _ = load_converted(SRC)
    assert "msmigrate: TODO" not in code, code
    for side in ("torch", "ms"):
        monkeypatch.setenv("TORCH_HOME", str(tmp_path / side))
        fns = ns if side == "torch" else vars(mod)
        assert fns["cache_dir"]() == str(tmp_path / side / "hub")
        sd = fns["fetch"](f"{base}/weights.pth")
        assert (tmp_path / side / "hub" / "checkpoints" / "weights.pth").exists()
        again = fns["fetch"](f"{base}/weights.pth")       # from the cache
        hashed = fns["fetch"](f"{base}/hashed-{digest[:8]}.pth", check=True)
        with pytest.raises(RuntimeError, match="invalid hash value"):
            fns["fetch"](f"{base}/badhash-deadbeef.pth", check=True)
        assert not (tmp_path / side / "hub" / "checkpoints" / "badhash-deadbeef.pth").exists()
        named = fns["fetch"](f"{base}/weights.pth", name="renamed.pth")
        assert (tmp_path / side / "hub" / "checkpoints" / "renamed.pth").exists()
        legacy = fns["fetch_zoo"](f"{base}/legacy.zip")
        assert (tmp_path / side / "hub" / "checkpoints" / "inner.pth").exists()
        out = fns["build_and_load"](f"{base}/weights.pth")
        if side == "torch":
            t = (sd, again, hashed, named, legacy, out.detach().numpy())
        else:
            for m_sd, t_sd in zip((sd, again, hashed, named, legacy), t[:5]):
                _same(m_sd, t_sd)
            np.testing.assert_allclose(out.asnumpy(), t[5], rtol=1e-6, atol=1e-6)


def test_download_url_to_file(served, tmp_path):
    base, digest = served
    ns = load_torch(SRC)
    mod, _, _ = load_converted(SRC)
    t_sd = ns["fetch_file"](f"{base}/weights.pth", str(tmp_path / "t.pth"), digest[:10])
    m_sd = mod.fetch_file(f"{base}/weights.pth", str(tmp_path / "m.pth"), digest[:10])
    _same(m_sd, t_sd)
    assert (tmp_path / "t.pth").read_bytes() == (tmp_path / "m.pth").read_bytes()
    for fn, dst in ((ns["fetch_file"], "t2.pth"), (mod.fetch_file, "m2.pth")):
        with pytest.raises(RuntimeError, match="invalid hash value"):
            fn(f"{base}/weights.pth", str(tmp_path / dst), "0000")
        assert not (tmp_path / dst).exists() and not [p for p in os.listdir(tmp_path) if p.startswith("tmp")]
