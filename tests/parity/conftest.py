import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _seeded():
    """Statistical checks (initialisers, random ops) are deterministic run to run."""
    import mindspore as ms
    ms.set_seed(0)
    np.random.seed(0)
    yield
