# importlib.util.find_spec / importlib.metadata.version in converted code (msmigrate/package_probes.py):
# asked for torch or torchvision, the converted program answers for itself (its torch code is MindSpore
# code following that API version), so libraries that choose a backend at import time keep their torch
# branch; any other name is probed as written.
import importlib.machinery as _importlib_machinery
import importlib.metadata as _importlib_metadata
import importlib.util as _importlib_util



def _converted_version(name):
    """The API version converted code follows for package `name`, or None for any other package."""
    return {"torch": TORCH_API_VERSION, "torchvision": TORCHVISION_API_VERSION}.get(name)


def find_spec(name, package=None):
    """importlib.util.find_spec; torch and torchvision modules are found (converted), with no loader:
    importing them by name (importlib.import_module) still fails as torch is not installed."""
    if isinstance(name, str) and _converted_version(name.split(".", 1)[0]) is not None:
        return _importlib_machinery.ModuleSpec(name, None, origin="converted to MindSpore by msmigrate")
    return _importlib_util.find_spec(name, package)


def package_version(distribution_name):
    """importlib.metadata.version; torch's and torchvision's are the API versions the conversion follows."""
    version = _converted_version(distribution_name)
    if version is not None:
        return version
    return _importlib_metadata.version(distribution_name)
