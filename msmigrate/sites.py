"""What the converter records about each torch API site it meets."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Site:
    line: int
    api: str          # the torch API ("torch.nn.Conv2d", "Tensor.view", "Module.eval")
    target: str       # what it became (rendered code of the callee, or "" for a TODO)
    status: str       # registry.CONVERTED / DIFFERENCE / TODO
    note: str = ""
    code: str = ""    # the original source of the site, shortened
    test: str = ""    # the parity test that proves the mapping used here

    def to_json(self) -> dict:
        return asdict(self)


def shorten(code: str, limit: int = 120) -> str:
    flat = " ".join(code.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
