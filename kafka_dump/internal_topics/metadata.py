"""KRaft ``__cluster_metadata`` records and snapshots (``--decode metadata``).

A metadata record's value is framed as (``MetadataRecordSerde``)

    unsigned varint frameVersion (1), unsigned varint apiKey, unsigned varint version,
    then the record's message at that version (every metadata record is flexible: tagged fields)

and its key is null. ``METADATA_TYPES`` maps the apiKey to the schema (``TopicRecord``, type name
``TOPIC_RECORD``); an unknown apiKey or version gives the frame and the value's hex, not an error.
"""

from __future__ import annotations

import re

from kafka_dump.internal_topics import Decoded, Part
from kafka_dump.internal_topics._coordinator import read_whole
from kafka_dump.model import Record
from kafka_dump.wire.kmessage import KMessageError, schema
from kafka_dump.wire.kschemas import METADATA_TYPES

FRAME_VERSION = 1


def type_name(api_key: int) -> str:
    """Kafka's ``MetadataRecordType`` name of an apiKey (``TOPIC_RECORD``), or ``UNKNOWN(n)``."""
    name = METADATA_TYPES.get(api_key)
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
    v = r.value
    if v is None:
        return Decoded("metadata", None, None, False, "the record has no value")
    try:
        frame, pos = _uvarint(v, 0)
        api_key, pos = _uvarint(v, pos)
        version, pos = _uvarint(v, pos)
    except KMessageError as exc:
        return Decoded("metadata", None, Part(None, None, None, {}, v.hex()), False, str(exc))
    extra = {"frameVersion": frame, "apiKey": api_key, "type": type_name(api_key)}
    name = METADATA_TYPES.get(api_key)
    if frame != FRAME_VERSION or name is None:
        why = f"unknown frame version {frame}" if frame != FRAME_VERSION else f"unknown apiKey {api_key}"
    elif not schema(name).valid[0] <= version <= schema(name).valid[1]:
        why = f"unknown {name} version {version}"
    else:
        try:
            data = read_whole(name, v, version, pos)
            return Decoded("metadata", None, Part(name, version, data, extra), False, None)
        except KMessageError as exc:
            why = str(exc)
    return Decoded("metadata", None, Part(name, version, None, extra, v.hex()), False, why)
