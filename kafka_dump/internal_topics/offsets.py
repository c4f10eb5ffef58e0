"""``__consumer_offsets``: committed offsets and group metadata (``--decode offsets``).

Record types (``COORDINATOR_TYPES["group"]``): 0 and 1 offset commit (LegacyOffsetCommit*,
OffsetCommit*), 2 classic group metadata, 3-8 and 16 KIP-848 consumer groups, 10-15 share groups, 17
and 19-23 streams groups; 9 and 18 are unknown, as in Kafka 4.1 on. A ``consumer`` classic group's
member subscriptions and assignments (consumer protocol bytes) are shown decoded, or as bytes when
they do not parse, as Kafka's tool does.
"""

from __future__ import annotations

import struct
from typing import Any

from kafka_dump.internal_topics import Decoded, _coordinator
from kafka_dump.model import Record
from kafka_dump.wire.kmessage import KMessageError, schema
from kafka_dump.wire.kschemas import COORDINATOR_TYPES

_I16 = struct.Struct(">h")
RECORD_TYPES = COORDINATOR_TYPES["group"]


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
