"""torch.hub's download cache for pretrained weights: load_state_dict_from_url (also torch.utils.model_zoo.load_url),
download_url_to_file and get_dir, with torch's cache directory ($TORCH_HOME, else $XDG_CACHE_HOME/torch, else
~/.cache/torch, then hub/checkpoints), so files torch downloaded before are reused. The file is read by load()
(checkpoints section): torch's format without torch, no pickled code run."""
import hashlib
import re
import shutil
import sys
import tempfile
import urllib.request
import zipfile
from urllib.parse import urlparse

_hub_dir = None
_HASH_IN_NAME = re.compile(r"-([a-f0-9]*)\.")   # torch.hub: resnet18-f37072fd.pth holds a sha256 prefix


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def get_dir():
    """torch.hub.get_dir(): where hub files are cached."""
    if _hub_dir is not None:
        return _hub_dir
    home = os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch"))
    return os.path.join(os.path.expanduser(home), "hub")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """torch.hub.download_url_to_file: downloads next to `dst`, checks the sha256 prefix, then moves it in place."""
    dst = os.path.expanduser(dst)
    folder = os.path.dirname(os.path.abspath(dst))
    request = urllib.request.Request(url, headers={"User-Agent": "torch.hub"})
    tmp = tempfile.NamedTemporaryFile(delete=False, dir=folder)
    try:
        digest = hashlib.sha256()
        with urllib.request.urlopen(request) as response:
            while True:
                block = response.read(8192)
                if not block:
                    break
                tmp.write(block)
                digest.update(block)
        tmp.close()
        if hash_prefix is not None and not digest.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest.hexdigest()}")')
        shutil.move(tmp.name, dst)
    finally:
        tmp.close()
        if os.path.exists(tmp.name):
            os.remove(tmp.name)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """torch.hub.load_state_dict_from_url: the cached file, downloaded first when missing, read by load()."""
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stderr.write(f'Downloading: "{url}" to {cached_file}\n')
        found = _HASH_IN_NAME.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, found.group(1) if found else None, progress=progress)
    if zipfile.is_zipfile(cached_file):
        with zipfile.ZipFile(cached_file) as archive:
            members = archive.infolist()
            if len(members) == 1 and not members[0].is_dir():
                # the legacy layout: a zip holding one checkpoint file, extracted beside it as torch does
                archive.extractall(model_dir)
                cached_file = os.path.join(model_dir, members[0].filename)
    return load(cached_file)
