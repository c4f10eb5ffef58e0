"""``__consumer_offsets``: committed offsets and group metadata (``--decode offsets``).

Record types: 0 and 1 offset commit (OffsetCommitKey/Value), 2 classic group metadata
(GroupMetadataKey/Value), 3-8 the consumer group records of KIP-848, 9-15 share groups: each key
schema's ``validVersions``. A ``consumer`` classic group's member subscriptions and assignments
(consumer protocol bytes) are shown decoded, or as bytes when they do not parse, as Kafka's tool does.
"""

from __future__ import annotations

import struct
from typing import Any

from kafka_dump.internal_topics import Decoded, _coordinator
from kafka_dump.model import Record
from kafka_dump.wire.kmessage import KMessageError, parse_versions, schema
from kafka_dump.wire.kschemas import MESSAGES

_GROUP_PREFIXES = ("OffsetCommit", "GroupMetadata", "ConsumerGroup", "ShareGroup")
_I16 = struct.Struct(">h")


def _record_types() -> dict[int, tuple[str, str]]:
    types: dict[int, tuple[str, str]] = {}
    for name, spec in MESSAGES.items():
        if name.endswith("Key") and name.startswith(_GROUP_PREFIXES):
            value = name[:-3] + "Value"
            lo, hi = parse_versions(spec[0])
            for t in range(lo, hi + 1):
                types[t] = (name, value)
    return types


RECORD_TYPES = _record_types()


def decode(r: Record) -> Decoded:
    """Decode one ``__consumer_offsets`` record."""
    return _coordinator.decode("offsets", RECORD_TYPES, r, _refine)


def _refine(name: str, data: dict[str, Any]) -> dict[str, Any]:
    if name != "GroupMetadataValue" or data.get("protocolType") != "consumer":
        return data
    for member in data.get("members") or ():
        for field, schema_name in (
            ("subscription", "ConsumerProtocolSubscription"),
            ("assignment", "ConsumerProtocolAssignment"),
        ):
            decoded = consumer_protocol(schema_name, member.get(field))
            if decoded is not None:
                member[field] = decoded
    return data


def consumer_protocol(name: str, raw: bytes | None) -> dict[str, Any] | None:
    """A member's subscription or assignment bytes decoded, or None when they do not parse."""
    if raw is None or len(raw) < 2:
        return None
    version = _I16.unpack_from(raw)[0]
    s = schema(name)
    if not s.valid[0] <= version <= s.valid[1]:
        return None
    try:
        # Older clients may leave bytes after the fields a version defines; Kafka ignores them too.
        return s.read(raw, version, 2)[0]
    except KMessageError:
        return None
