# importlib.util.find_spec / importlib.metadata.version in converted code (msmigrate/package_probes.py):
# asked for torch or torchvision, the converted program answers for itself (its torch code is MindSpore
# code following that API version), so libraries that choose a backend at import time keep their torch
# branch. A package found outside the converted tree whose distribution requires torch (accelerate,
# peft...) is not found: importing it would import torch, which the converted program runs without,
# so the library takes the branch it has for that package missing. Any other name is probed as written.
import importlib.machinery as _importlib_machinery
import importlib.metadata as _importlib_metadata
import importlib.util as _importlib_util
import re as _re



def _converted_version(name):
    """The API version converted code follows for package `name`, or None for any other package."""
    return {"torch": TORCH_API_VERSION, "torchvision": TORCHVISION_API_VERSION}.get(name)


_REQUIRES_TORCH = {}


def _requires_torch(top):
    """Whether the installed distribution providing top-level package `top` requires torch (extras aside)."""
    if top not in _REQUIRES_TORCH:
        try:
            dists = [top] if _importlib_metadata.requires(top) is not None else []
        except _importlib_metadata.PackageNotFoundError:
            dists = _importlib_metadata.packages_distributions().get(top, [])
        found = False
        for dist in dists:
            for req in _importlib_metadata.requires(dist) or ():
                head, _, marker = req.partition(";")
                word = _re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", head)
                if word and word.group(1).lower() == "torch" and "extra" not in marker:
                    found = True
        _REQUIRES_TORCH[top] = found
    return _REQUIRES_TORCH[top]


def find_spec(name, package=None):
    """importlib.util.find_spec; torch and torchvision modules are found (converted), with no loader:
    importing them by name (importlib.import_module) still fails as torch is not installed. A package
    outside the converted tree that requires torch is not found."""
    top = name.split(".", 1)[0] if isinstance(name, str) else None
    if top is not None and _converted_version(top) is not None:
        return _importlib_machinery.ModuleSpec(name, None, origin="converted to MindSpore by msmigrate")
    spec = _importlib_util.find_spec(name, package)
    if spec is not None and top and not name.startswith(".") and _requires_torch(top):
        origin = os.path.abspath(spec.origin or next(iter(spec.submodule_search_locations or ()), ""))
        if not origin.startswith(os.path.dirname(os.path.abspath(__file__)) + os.sep):
            return None   # an installed torch library, not converted: importing it would import torch
    return spec


def package_version(distribution_name):
    """importlib.metadata.version; torch's and torchvision's are the API versions the conversion follows."""
    version = _converted_version(distribution_name)
    if version is not None:
        return version
    return _importlib_metadata.version(distribution_name)
