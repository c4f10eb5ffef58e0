"""kdump: inspect, verify and convert Apache Kafka log segments.

The library's public face: ``from kafka_dump import read_segment, encode_entry, Batch, Record, Header,
Problem, Compression``, each imported on first use (start-up pays for none, and the names stay put).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"
_HOMES = {
    "read_segment": "log.segment",
    "encode_entry": "wire.encode",
    **dict.fromkeys(("Batch", "Record", "Header", "Problem", "Compression"), "model"),
}
__all__ = sorted(["__version__", *_HOMES])


def lazy_attribute(package: str, homes: dict[str, str], name: str, names: dict[str, Any]) -> Any:
    """``name`` from the module of ``package`` that ``homes`` says defines it, bound in ``names`` (the
    package's globals) so that later reads are plain module attributes."""
    home = homes.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = names[name] = getattr(importlib.import_module(f"{package}.{home}"), name)
    return value


def __getattr__(name: str) -> Any:
    return lazy_attribute(__name__, _HOMES, name, globals())
