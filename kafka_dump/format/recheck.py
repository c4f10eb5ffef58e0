"""The check ``kdump convert`` runs on every v2 batch it writes: its records, read back, are the Records
it was built from. Two twins: ``_recheck_pure`` (the reference) and the compiled ``_recheck.c``; the
choice is made once, here (this check has no other user), ``KDUMP_PURE=1`` forcing the pure one.
"""

from __future__ import annotations

from collections.abc import Callable

from kafka_dump.format import _recheck_pure
from kafka_dump.format.twins import pure_requested
from kafka_dump.model import Record

SameRecords = Callable[[bytes, int, int, int, int, "int | None", "tuple[Record, ...]"], int]

same_v2_records: SameRecords = _recheck_pure.same_v2_records
RECHECK_TWIN = "pure-python"

if not pure_requested():
    try:
        from kafka_dump.format import _recheck
    except ImportError:
        pass
    else:
        same_v2_records = _recheck.same_v2_records
        RECHECK_TWIN = "compiled"

__all__ = ["RECHECK_TWIN", "same_v2_records"]
