"""Convert's fast path, a run of v1 wrappers per call: ``read_wrappers`` and ``write_wrappers`` (and
``gunzip``, the compiled twin's faster way to inflate a gzip wrapper, used by ``convert_fast.inflater``). Two
twins behind ``twins.TranscodeTwin``: ``_transcode_pure`` (the reference) and the compiled
``_transcode.c``; the choice is made once, here (the fast path has no other user), ``KDUMP_PURE=1``
forcing the pure one.
"""

from __future__ import annotations

from kafka_dump.format import _transcode_pure
from kafka_dump.format.twins import TranscodeTwin, pure_requested

transcoder: TranscodeTwin = _transcode_pure
TRANSCODE_TWIN = "pure-python"

if not pure_requested():
    try:
        from kafka_dump.format import _transcode
    except ImportError:
        pass
    else:
        transcoder = _transcode
        TRANSCODE_TWIN = "compiled"

gunzip = transcoder.gunzip
read_wrappers = transcoder.read_wrappers
write_wrappers = transcoder.write_wrappers

__all__ = ["TRANSCODE_TWIN", "gunzip", "read_wrappers", "transcoder", "write_wrappers"]
