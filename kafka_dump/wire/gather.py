"""The statistics walk over records, for ``kdump stats``, with the layout of its histograms.

The walk's twins (the compiled ``_gather`` when it was built and loads, else the pure-Python
reference ``_gather_pure``; ``KDUMP_PURE=1`` forces the pure one) are chosen once, in
``wire/__init__.py``, as the decoder's are; this module gathers what ``stats`` needs of them and
of their shared layout (``_gather_layout.py``).
"""

from __future__ import annotations

from kafka_dump.wire import GATHER_TWIN, gather_legacy_inner, gather_v2_records, gatherer
from kafka_dump.wire._gather_layout import (
    COUNT,
    MAX,
    MIN,
    NBUCKETS,
    SLOTS,
    TOTAL,
    FormatFigures,
    Gathered,
    GatheredLegacy,
    GatheredWrappers,
    Histograms,
    WrapperHistograms,
    bucket_of,
    new_histogram,
)

gather_legacy_wrappers = gatherer.gather_legacy_wrappers

__all__ = [
    "COUNT", "GATHER_TWIN", "MAX", "MIN", "NBUCKETS", "SLOTS", "TOTAL", "FormatFigures", "Gathered",
    "GatheredLegacy", "GatheredWrappers", "Histograms", "WrapperHistograms", "bucket_of",
    "gather_legacy_inner", "gather_legacy_wrappers", "gather_v2_records", "new_histogram",
]  # fmt: skip
