"""The checks ``kdump convert`` runs on every v2 batch it writes: its records, read back, are the
Records it was built from (``same_v2_records``), or the v1 inner messages it was transcoded from
(``same_as_v1_inner``). Two twins behind ``twins.RecheckTwin``: ``_recheck_pure`` (the reference) and
the compiled ``_recheck.c``; the choice is made once, here (these checks have no other user),
``KDUMP_PURE=1`` forcing the pure one.
"""

from __future__ import annotations

from kafka_dump.wire import _recheck_pure
from kafka_dump.wire.twins import RecheckTwin, pure_requested

recheck: RecheckTwin = _recheck_pure
RECHECK_TWIN = "pure-python"

if not pure_requested():
    try:
        from kafka_dump.native import _recheck
    except ImportError:
        pass
    else:
        recheck = _recheck
        RECHECK_TWIN = "compiled"

same_v2_records = recheck.same_v2_records
same_as_v1_inner = recheck.same_as_v1_inner

__all__ = ["RECHECK_TWIN", "recheck", "same_as_v1_inner", "same_v2_records"]
