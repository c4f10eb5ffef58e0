"""KRaft ``__cluster_metadata`` records and snapshots (``--decode metadata``).

A metadata record's value is framed as (``MetadataRecordSerde``)

    unsigned varint frameVersion (1), unsigned varint apiKey, unsigned varint version,
    then the record's message at that version (every metadata record is flexible: tagged fields)

and its key is null. ``METADATA_TYPES`` maps the apiKey to the schema (``TopicRecord``, type name
``TOPIC_RECORD``); an unknown apiKey or version gives the frame and the value's hex, not an error.
``__remote_log_metadata`` (``remote_log.py``) uses the same frame with apiKeys of its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from kafka_dump.internal_topics import Decoded, Part
from kafka_dump.internal_topics._coordinator import read_whole
from kafka_dump.model import Record
from kafka_dump.wire.kmessage import KMessageError, schema
from kafka_dump.wire.kschemas import METADATA_TYPES

FRAME_VERSION = 1


def type_name(api_key: int, types: Mapping[int, str] = METADATA_TYPES) -> str:
    """Kafka's ``MetadataRecordType`` name of an apiKey (``TOPIC_RECORD``), or ``UNKNOWN(n)``."""
    name = types.get(api_key)
    if name is None:
        return f"UNKNOWN({api_key})"
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    for i in range(pos, min(pos + 5, len(data))):
        b = data[i]
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i + 1
        shift += 7
    raise KMessageError("frame: bad unsigned varint", pos)


def decode(r: Record) -> Decoded:
    """Decode one metadata record's frame and, where its schema is known, its fields."""
    return decode_framed("metadata", METADATA_TYPES, r)


def decode_framed(decoder: str, types: Mapping[int, str], r: Record) -> Decoded:
    """Decode a framed record (frame version, apiKey, version) by the apiKey table ``types``."""
    v = r.value
    if v is None:
        return Decoded(decoder, None, None, False, "the record has no value")
    try:
        frame, pos = _uvarint(v, 0)
        api_key, pos = _uvarint(v, pos)
        version, pos = _uvarint(v, pos)
    except KMessageError as exc:
        return Decoded(decoder, None, Part(None, None, None, {}, v.hex()), False, str(exc))
    extra = {"frameVersion": frame, "apiKey": api_key, "type": type_name(api_key, types)}
    name = types.get(api_key)
    if frame != FRAME_VERSION or name is None:
        why = f"unknown frame version {frame}" if frame != FRAME_VERSION else f"unknown apiKey {api_key}"
    elif not schema(name).valid[0] <= version <= schema(name).valid[1]:
        why = f"unknown {name} version {version}"
    else:
        try:
            data = read_whole(name, v, version, pos)
            return Decoded(decoder, None, Part(name, version, data, extra), False, None)
        except KMessageError as exc:
            why = str(exc)
    return Decoded(decoder, None, Part(name, version, None, extra, v.hex()), False, why)
