"""The statistics walk over records, for ``kdump stats``, with the layout of its histograms: what
``stats`` needs of ``_gather_pure`` (which binds the compiled walk) and of ``_gather_layout.py``."""

from __future__ import annotations

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
from kafka_dump.wire._gather_pure import gather_legacy_inner, gather_legacy_wrappers, gather_v2_records

__all__ = [
    "COUNT", "MAX", "MIN", "NBUCKETS", "SLOTS", "TOTAL", "FormatFigures", "Gathered", "GatheredLegacy",
    "GatheredWrappers", "Histograms", "WrapperHistograms", "bucket_of", "gather_legacy_inner",
    "gather_legacy_wrappers", "gather_v2_records", "new_histogram",
]  # fmt: skip
