"""Pure functions over bytes: the wire formats, codecs, varints and checksums.

The names below (hot loops that bind their compiled twins, and the encoder built on them) are read
here at call time by the segment reader, ``v2.py``, ``legacy.py`` and the walks, so that a test can
swap them; each module is imported when one of its names is first read."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kafka_dump import lazy_attribute

if TYPE_CHECKING:
    from kafka_dump.wire._walk_pure import walk_entries, walk_v2_records
    from kafka_dump.wire.decode import (
        decode_legacy_inner,
        decode_legacy_run,
        decode_legacy_wrapper,
        decode_v2_records,
    )
    from kafka_dump.wire.encode import encode_entry, encode_refusals, entry_size, new_batch
    from kafka_dump.wire.encoder import (
        encode_legacy_messages,
        encode_v2_entry,
        encode_v2_records,
        legacy_messages_size,
        v1_inner_to_v2,
        v2_records_size,
    )

# Each name -> the module (below this package) that defines it.
_HOMES = {
    **dict.fromkeys(("decode_v2_records", "decode_legacy_inner", "decode_legacy_run", "decode_legacy_wrapper"), "decode"),
    **dict.fromkeys(("walk_v2_records", "walk_entries"), "_walk_pure"),
    **dict.fromkeys(
        ("encode_v2_records", "encode_v2_entry", "v2_records_size", "encode_legacy_messages", "legacy_messages_size",
         "v1_inner_to_v2"),
        "encoder",
    ),
    **dict.fromkeys(("encode_entry", "encode_refusals", "entry_size", "new_batch"), "encode"),
}  # fmt: skip


if not TYPE_CHECKING:  # hidden from mypy, which would otherwise let any name pass as this module's

    def __getattr__(name: str) -> Any:
        return lazy_attribute(__name__, _HOMES, name, globals())


__all__ = [
    "decode_legacy_inner",
    "decode_legacy_run",
    "decode_legacy_wrapper",
    "decode_v2_records",
    "encode_entry",
    "encode_legacy_messages",
    "encode_refusals",
    "encode_v2_entry",
    "encode_v2_records",
    "entry_size",
    "legacy_messages_size",
    "new_batch",
    "v1_inner_to_v2",
    "v2_records_size",
    "walk_entries",
    "walk_v2_records",
]
