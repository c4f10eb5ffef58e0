"""kdump: inspect, verify and convert Apache Kafka log segments.

The library's public face: ``from kafka_dump import read_segment, encode_entry, Batch, Record, Header,
Problem, Compression``. Each name is imported where it lives on first use, so that the command line's
start-up pays for none of them and the names stay put whatever moves inside.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_HOMES = {
    "read_segment": "kafka_dump.log.segment",
    "encode_entry": "kafka_dump.wire.encode",
    **dict.fromkeys(("Batch", "Record", "Header", "Problem", "Compression"), "kafka_dump.model"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = [
    "Batch",
    "Compression",
    "Header",
    "Problem",
    "Record",
    "__version__",
    "encode_entry",
    "read_segment",
]
