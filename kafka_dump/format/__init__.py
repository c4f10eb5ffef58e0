"""Pure functions over bytes: the wire formats, codecs, varints and checksums.

The hot loops (``decode_v2_records``, ``decode_legacy_inner``, ``decode_legacy_run``, ``walk_v2_records``
(in its own module, ``_walk``), and the JSON writer that
``render/jsonl.py`` takes from ``compiled``) have two twins: the compiled ``_speedups`` when it was
built and loads, else the pure-Python reference ``_pure``. ``KDUMP_PURE=1`` forces the pure one. The
choice is made once, here, and ``ACTIVE_TWIN`` names it. The encoder's loops (``encode_v2_records``,
``encode_v2_entry``, ``encode_legacy_messages`` and their sizes) likewise come from ``_encoder`` or
``_pure_encoder``, named by ``ENCODER_TWIN``.
"""

from __future__ import annotations

import os
from types import ModuleType

from kafka_dump.format import _pure, _pure_encoder, _walk_pure

decode_v2_records = _pure.decode_v2_records
walk_v2_records = _walk_pure.walk_v2_records
WALK_TWIN = "pure-python"
decode_legacy_inner = _pure.decode_legacy_inner
decode_legacy_run = _pure.decode_legacy_run
ACTIVE_TWIN = "pure-python"
compiled: ModuleType | None = None  # the compiled twin's module, for other layers' hot loops

# The encoder's twins: the compiled ``_encoder`` when it was built, else ``_pure_encoder``.
encode_v2_records = _pure_encoder.encode_v2_records
encode_v2_entry = _pure_encoder.encode_v2_entry
v2_records_size = _pure_encoder.v2_records_size
encode_legacy_messages = _pure_encoder.encode_legacy_messages
legacy_messages_size = _pure_encoder.legacy_messages_size
ENCODER_TWIN = "pure-python"

if os.environ.get("KDUMP_PURE", "") not in ("1", "true", "yes"):
    try:
        from kafka_dump.format import _speedups  # type: ignore[attr-defined]
    except ImportError:
        pass
    else:
        decode_v2_records = _speedups.decode_v2_records
        decode_legacy_inner = _speedups.decode_legacy_inner
        decode_legacy_run = _speedups.decode_legacy_run
        ACTIVE_TWIN = "compiled"
        compiled = _speedups
    try:
        from kafka_dump.format import _encoder  # type: ignore[attr-defined]
    except ImportError:
        pass
    else:
        encode_v2_records = _encoder.encode_v2_records
        encode_v2_entry = _encoder.encode_v2_entry
        v2_records_size = _encoder.v2_records_size
        encode_legacy_messages = _encoder.encode_legacy_messages
        legacy_messages_size = _encoder.legacy_messages_size
        ENCODER_TWIN = "compiled"
    try:
        from kafka_dump.format import _walk  # type: ignore[attr-defined]
    except ImportError:
        pass
    else:
        walk_v2_records = _walk.walk_v2_records
        WALK_TWIN = "compiled"

# After the twins: the encoders look them up through this module.
from kafka_dump.format.encode import encode_entry, encode_refusals, entry_size, new_batch  # noqa: E402

__all__ = [
    "ACTIVE_TWIN",
    "ENCODER_TWIN",
    "WALK_TWIN",
    "compiled",
    "decode_legacy_inner",
    "decode_legacy_run",
    "decode_v2_records",
    "encode_entry",
    "encode_legacy_messages",
    "encode_refusals",
    "encode_v2_entry",
    "encode_v2_records",
    "entry_size",
    "legacy_messages_size",
    "new_batch",
    "v2_records_size",
    "walk_v2_records",
]
