"""Convert's fast path, a run of v1 wrappers per call: ``read_wrappers`` and ``write_wrappers`` (and
``gunzip``, ``lz4_frame`` and ``unlz4_frame``: the gzip and LZ4 codec work of the fast path without
Python between, used by ``convert_fast.inflater`` and ``convert_run``). Two
twins behind ``twins.TranscodeTwin``: ``_transcode_pure`` (the reference) and the compiled
``_transcode.c``; the choice is made once, here (the fast path has no other user), ``KDUMP_PURE=1``
forcing the pure one.
"""

from __future__ import annotations

from kafka_dump.wire import _transcode_pure
from kafka_dump.wire.twins import TranscodeTwin, pure_requested

transcoder: TranscodeTwin = _transcode_pure
TRANSCODE_TWIN = "pure-python"

if not pure_requested():
    try:
        from kafka_dump.native import _transcode
    except ImportError:
        pass
    else:
        transcoder = _transcode
        TRANSCODE_TWIN = "compiled"

gunzip = transcoder.gunzip
lz4_frame = transcoder.lz4_frame
unlz4_frame = transcoder.unlz4_frame
read_wrappers = transcoder.read_wrappers
write_wrappers = transcoder.write_wrappers

__all__ = [
    "TRANSCODE_TWIN",
    "gunzip",
    "lz4_frame",
    "read_wrappers",
    "transcoder",
    "unlz4_frame",
    "write_wrappers",
]
