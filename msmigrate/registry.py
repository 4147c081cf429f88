"""The one place that answers "what does torch API X become, and why": the loaded knowledge.

Most mappings are declarative `Mapping` records (msmigrate/records.py); hard cases attach a small
rule function. Importing this module loads every record (msmigrate/mappings/); the converter, the
report and `msmigrate api` all read them here.
"""
from __future__ import annotations

from .records import (ADAPTERS, CONSTRUCT_NOTES, CONVERTED, DIFFERENCE, REGISTRY, TODO, TYPE_TARGETS,  # noqa: F401
                      Mapping, Registry, canonical, lookup, mapping, rule)
from . import mappings  # noqa: F401,E402  (registers every record)


def all_mappings() -> Registry:
    return REGISTRY
