"""The check ``kdump convert`` runs on every v2 batch it writes: its records, read back, are the Records
it was built from. Two twins: ``_recheck_pure`` (the reference) and the compiled ``_recheck.c``; the
choice is made once, here (this check has no other user), ``KDUMP_PURE=1`` forcing the pure one.
"""

from __future__ import annotations

import os

from kafka_dump.format import _recheck_pure

same_v2_records = _recheck_pure.same_v2_records
RECHECK_TWIN = "pure-python"

if os.environ.get("KDUMP_PURE", "") not in ("1", "true", "yes"):
    try:
        from kafka_dump.format import _recheck  # type: ignore[attr-defined]
    except ImportError:
        pass
    else:
        same_v2_records = _recheck.same_v2_records
        RECHECK_TWIN = "compiled"

__all__ = ["RECHECK_TWIN", "same_v2_records"]
