"""The values of KRaft control records: LeaderChange, SnapshotHeader/Footer, KRaftVersion, KRaftVoters.

Each value is a flexible message led by an int16 ``version`` (``ControlRecordUtils``), read at that
version, or the schema's nearest; ABORT/COMMIT markers are decoded in ``wire/v2.py`` already.
"""

from __future__ import annotations

import struct

from kafka_dump.internal_topics import Decoded, Part
from kafka_dump.internal_topics._coordinator import read_whole
from kafka_dump.model import ControlType, Record
from kafka_dump.wire.kmessage import KMessageError, schema

SCHEMAS = {
    ControlType.LEADER_CHANGE: "LeaderChangeMessage",
    ControlType.SNAPSHOT_HEADER: "SnapshotHeaderRecord",
    ControlType.SNAPSHOT_FOOTER: "SnapshotFooterRecord",
    ControlType.KRAFT_VERSION: "KRaftVersionRecord",
    ControlType.KRAFT_VOTERS: "VotersRecord",
}
_I16 = struct.Struct(">h")


def decode(r: Record) -> Decoded | None:
    """Decode a KRaft control record's value; None for other records (and ABORT/COMMIT markers)."""
    c = r.control
    name = SCHEMAS.get(c.type) if c is not None else None  # type: ignore[call-overload]
    if name is None:
        return None
    v = r.value
    if v is None or len(v) < 2:
        return Decoded("control", None, Part(name, None, None, {}, None if v is None else v.hex()), False,
                       "the value is too short for a version")  # fmt: skip
    s = schema(name)
    version = max(s.valid[0], min(_I16.unpack_from(v)[0], s.valid[1]))
    try:
        data = read_whole(name, v, version, 0)
    except KMessageError as exc:
        return Decoded("control", None, Part(name, version, None, {}, v.hex()), False, str(exc))
    return Decoded("control", None, Part(name, version, data, {}), False, None)
