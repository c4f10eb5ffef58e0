"""The statistics walk over v2 records, for ``kdump stats``: the compiled ``_gather`` when it was
built and loads, else the pure-Python reference ``_gather_pure``; ``KDUMP_PURE=1`` forces the pure
one. Chosen once, here (as ``format/__init__.py`` chooses the decoder's twins).
"""

from __future__ import annotations

import os

from kafka_dump.format import _gather_pure
from kafka_dump.format._gather_pure import (
    COUNT,
    MAX,
    MIN,
    NBUCKETS,
    SLOTS,
    TOTAL,
    Gathered,
    GatheredLegacy,
    bucket_of,
    new_histogram,
)

gather_v2_records = _gather_pure.gather_v2_records
gather_legacy_inner = _gather_pure.gather_legacy_inner
GATHER_TWIN = "pure-python"

if os.environ.get("KDUMP_PURE", "") not in ("1", "true", "yes"):
    try:
        from kafka_dump.format import _gather  # type: ignore[attr-defined]
    except ImportError:
        pass
    else:
        if (_gather.NBUCKETS, _gather.SLOTS) == (NBUCKETS, SLOTS):
            gather_v2_records = _gather.gather_v2_records
            gather_legacy_inner = _gather.gather_legacy_inner
            GATHER_TWIN = "compiled"

__all__ = [
    "COUNT", "GATHER_TWIN", "MAX", "MIN", "NBUCKETS", "SLOTS", "TOTAL", "Gathered", "GatheredLegacy",
    "bucket_of", "gather_legacy_inner", "gather_v2_records", "new_histogram",
]  # fmt: skip
