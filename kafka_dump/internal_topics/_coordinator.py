"""Records of Kafka's coordinators (``__consumer_offsets``, ``__transaction_state``, ``__share_group_state``).

    key   = int16 recordType, then the key message (its fields are read whatever the type number)
    value = int16 version, then the value message at that version; a null value is a tombstone

(``CoordinatorRecordSerde``). Each record type names a key and a value schema
(``COORDINATOR_TYPES``). Where an older release wrote another layout under the same version
(``OLDER_LAYOUTS``: share groups, early access in 4.0), the newest layout that the bytes fill
exactly is taken, and the value's ``extra`` says ``layout``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import Any

from kafka_dump.internal_topics import Decoded, Part
from kafka_dump.model import Record
from kafka_dump.wire.kmessage import KMessageError, schema
from kafka_dump.wire.kschemas import OLDER_LAYOUTS

_I16 = struct.Struct(">h")
# Turns a decoded value's fields into their shown form (e.g. consumer protocol bytes decoded).
Refine = Callable[[str, dict[str, Any]], dict[str, Any]]
UNKNOWN_TYPE = "unknown record type"  # how an error about the key's type number starts
UNKNOWN_VERSION = "unknown record version"  # how an error about the value's version starts


def read_whole(name: str, data: bytes, version: int, pos: int = 2) -> dict[str, Any]:
    """The fields of the message ``name`` at ``version`` from ``data[pos:]``, which it must fill."""
    fields, end = schema(name).read(data, version, pos)
    if end != len(data):
        raise KMessageError(f"{len(data) - end} bytes left after {name} v{version}", end)
    return fields


def _read_value(name: str, data: bytes, version: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """(fields, extra) of a value: its schema's layout, else an older one the bytes fill exactly."""
    try:
        return read_whole(name, data, version), {}
    except KMessageError as exc:
        for older in OLDER_LAYOUTS.get(name, ()):
            try:
                return read_whole(older, data, version), {"layout": older.partition("@")[2]}
            except KMessageError:
                continue
        raise exc from None


def decode(
    decoder: str, types: Mapping[int, tuple[str, str]], r: Record, refine: Refine | None = None
) -> Decoded:
    """Decode a coordinator record's key and value by the record type its key starts with."""
    tomb = r.value is None
    if r.key is None or len(r.key) < 2:
        return Decoded(decoder, _raw(r.key), _raw(r.value), tomb, "the key has no record type")
    rtype = _I16.unpack_from(r.key)[0]
    names = types.get(rtype)
    if names is None:
        return Decoded(decoder, _raw(r.key, rtype), _raw(r.value), tomb, f"{UNKNOWN_TYPE} {rtype}")
    key_name, value_name = names
    try:
        key = Part(key_name, rtype, read_whole(key_name, r.key, 0), {})
    except KMessageError as exc:
        return Decoded(decoder, _raw(r.key, rtype, key_name), _raw(r.value), tomb, f"key: {exc}")
    if r.value is None:
        return Decoded(decoder, key, None, True, None)
    if len(r.value) < 2:
        return Decoded(decoder, key, _raw(r.value), False, "the value has no version")
    version = _I16.unpack_from(r.value)[0]
    s = schema(value_name)
    if not s.valid[0] <= version <= s.valid[1]:
        why = f"{UNKNOWN_VERSION} {version} for type {rtype} ({value_name})"
        return Decoded(decoder, key, _raw(r.value, version, value_name), False, why)
    try:
        data, extra = _read_value(value_name, r.value, version)
    except KMessageError as exc:
        return Decoded(decoder, key, _raw(r.value, version, value_name), False, f"value: {exc}")
    if refine is not None:
        data = refine(value_name, data)
    return Decoded(decoder, key, Part(value_name, version, data, extra), False, None)


def _raw(data: bytes | None, version: int | None = None, name: str | None = None) -> Part | None:
    return None if data is None else Part(name, version, None, {}, data.hex())
