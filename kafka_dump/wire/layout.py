"""Fixed-size headers of Kafka's log formats, each declared once as a table of named fields.

Every offset, size and ``struct.Struct`` the decoders use derives from these tables (``gen_layout_h.py``
writes them into ``_layout.h``), named after Kafka's Java constants (``DefaultRecordBatch.CRC_OFFSET``
is ``V2_CRC_OFFSET``), offsets from the log entry's start. The v2 record's layout is in ``records.py``.
"""

from __future__ import annotations

import re
import struct
from typing import NamedTuple


class Field(NamedTuple):
    """One fixed-size field: its Kafka name, its ``struct`` code (big-endian) and what it holds."""

    name: str
    code: str
    doc: str


class Layout:
    """A header declared as fields; its Struct, size and each field's offset derive from them."""

    def __init__(
        self,
        prefix: str,
        java: str,
        title: str,
        fields: tuple[Field, ...],
        size_name: str = "",
        extends: Layout | None = None,
    ) -> None:
        self.prefix = prefix  # the constants' prefix, in Python and in _layout.h
        self.size_name = size_name or f"{prefix}_HEADER_SIZE"  # the name of the whole header's size
        self.java = java  # the Kafka class that declares it
        self.title = title
        self.own_fields = fields  # the fields after those of the layout it extends
        self.fields: tuple[Field, ...] = (extends.fields if extends else ()) + fields
        self.struct = struct.Struct(">" + "".join(f.code for f in self.fields))
        self.size: int = self.struct.size
        self.offsets: dict[str, int] = {}
        self.lengths: dict[str, int] = {}
        at = 0
        for f in self.fields:
            self.offsets[f.name] = at
            self.lengths[f.name] = struct.calcsize(">" + f.code)
            at += self.lengths[f.name]

    def constant(self, field: str) -> str:
        """The C/Python name stem of a field: ``lastOffsetDelta`` -> ``V2_LAST_OFFSET_DELTA``."""
        return f"{self.prefix}_{re.sub(r'(?<!^)(?=[A-Z])', '_', field).upper()}"


_LOG_ENTRY_FIELDS = (
    Field("offset", "q", "the message's offset (v0/v1) or the batch's baseOffset (v2)"),
    Field("size", "i", "bytes that follow this field"),
)

# Every log entry, whatever its magic, starts with these 12 bytes (Records.LOG_OVERHEAD).
LOG_ENTRY_LAYOUT = Layout(
    "LOG_ENTRY", "Records", "the start of every log entry", _LOG_ENTRY_FIELDS, size_name="LOG_OVERHEAD"
)

V2_LAYOUT = Layout(
    "V2",
    "DefaultRecordBatch",
    "v2 RecordBatch header (magic 2); the records follow it",
    (
        Field("baseOffset", "q", "the first record's offset"),
        Field("batchLength", "i", "bytes after this field"),
        Field("partitionLeaderEpoch", "i", "the leader epoch of the broker that appended the batch"),
        Field("magic", "b", "2"),
        Field("crc", "I", "CRC-32C of the bytes from attributes to the end of the batch"),
        Field(
            "attributes",
            "h",
            "bits 0-2 codec, 3 timestamp type, 4 transactional, 5 control, 6 delete horizon",
        ),
        Field("lastOffsetDelta", "i", "the last record's offset minus baseOffset"),
        Field(
            "baseTimestamp", "q", "the first record's timestamp (deleteHorizonMs when attribute bit 6 is set)"
        ),
        Field("maxTimestamp", "q", "the largest timestamp (the append time under LogAppendTime)"),
        Field("producerId", "q", "-1 without an idempotent or transactional producer"),
        Field("producerEpoch", "h", "-1 without a producer id"),
        Field("baseSequence", "i", "the first record's producer sequence, -1 without one"),
        Field("recordCount", "i", "records that follow the header"),
    ),
)

LEGACY_LAYOUT = Layout(
    "LEGACY",
    "LegacyRecord",
    "v0/v1 message header (magic 0 and 1); a v1 timestamp, then the key and value follow",
    (
        *_LOG_ENTRY_FIELDS,
        Field("crc", "I", "CRC-32 of the bytes from magic to the end of the message"),
        Field("magic", "b", "0 or 1"),
        Field("attributes", "b", "bits 0-2 codec, bit 3 timestamp type (v1)"),
    ),
)

LEGACY_V1_LAYOUT = Layout(
    "LEGACY_V1",
    "LegacyRecord",
    "v1 message header: the v0 header and a timestamp",
    (Field("timestamp", "q", "create or append time, -1 for none"),),
    extends=LEGACY_LAYOUT,
)

CONTROL_KEY_LAYOUT = Layout(
    "CONTROL_KEY",
    "ControlRecordType",
    "the key of a control record",
    (Field("version", "h", "the key's schema version, >= 0"), Field("type", "h", "a ControlRecordType id")),
    size_name="CONTROL_KEY_SIZE",
)

END_TXN_MARKER_LAYOUT = Layout(
    "END_TXN_MARKER",
    "EndTransactionMarker",
    "the value of an ABORT or COMMIT control record",
    (
        Field("version", "h", "the value's schema version, >= 0"),
        Field("coordinatorEpoch", "i", "the epoch of the transaction coordinator that wrote it"),
    ),
    size_name="END_TXN_MARKER_SIZE",
)

LAYOUTS = (
    LOG_ENTRY_LAYOUT,
    V2_LAYOUT,
    LEGACY_LAYOUT,
    LEGACY_V1_LAYOUT,
    CONTROL_KEY_LAYOUT,
    END_TXN_MARKER_LAYOUT,
)

# The Structs and offsets the decoders use, all derived from the tables above.
LOG_ENTRY = LOG_ENTRY_LAYOUT.struct
LOG_OVERHEAD = LOG_ENTRY_LAYOUT.size  # 12
LOG_ENTRY_SIZE_OFFSET = LOG_ENTRY_LAYOUT.offsets["size"]  # 8
MAGIC_OFFSET = V2_LAYOUT.offsets["magic"]  # 16: the magic byte, in every version
if LEGACY_LAYOUT.offsets["magic"] != MAGIC_OFFSET:
    raise ImportError("the magic byte must be at the same offset in every version")

V2_HEADER = V2_LAYOUT.struct
V2_HEADER_SIZE = V2_LAYOUT.size  # 61 (DefaultRecordBatch.RECORD_BATCH_OVERHEAD)
V2_CRC_OFFSET = V2_LAYOUT.offsets["crc"]  # 17
V2_ATTRIBUTES_OFFSET = V2_LAYOUT.offsets["attributes"]  # 21: the CRC-32C covers from here to the end
V2_LAST_OFFSET_DELTA_OFFSET = V2_LAYOUT.offsets["lastOffsetDelta"]  # 23
V2_MAX_TIMESTAMP_OFFSET = V2_LAYOUT.offsets["maxTimestamp"]  # 35
V2_RECORD_COUNT_OFFSET = V2_LAYOUT.offsets["recordCount"]  # 57
V2_MIN_BATCH_LENGTH = V2_HEADER_SIZE - LOG_OVERHEAD  # 49

LEGACY_HEADER = LEGACY_LAYOUT.struct  # offset, size, crc, magic, attributes
LEGACY_HEADER_SIZE = LEGACY_LAYOUT.size  # 18
LEGACY_CRC_OFFSET = LEGACY_LAYOUT.offsets["crc"]  # 12
LEGACY_ATTRIBUTES_OFFSET = LEGACY_LAYOUT.offsets["attributes"]  # 17
LEGACY_V1_TIMESTAMP_OFFSET = LEGACY_V1_LAYOUT.offsets["timestamp"]  # 18

INT64 = struct.Struct(">q")
INT32 = struct.Struct(">i")
UINT32 = struct.Struct(">I")
CONTROL_KEY = CONTROL_KEY_LAYOUT.struct  # version, type
END_TXN_MARKER = END_TXN_MARKER_LAYOUT.struct  # version, coordinatorEpoch

# Message size (after the log overhead) of an empty message: crc, magic, attributes, [timestamp],
# key length, value length (LegacyRecord.RECORD_OVERHEAD_V0/V1).
LEGACY_V0_MIN_SIZE = LEGACY_HEADER_SIZE - LOG_OVERHEAD + 2 * INT32.size  # 14
LEGACY_V1_MIN_SIZE = LEGACY_V1_LAYOUT.size - LOG_OVERHEAD + 2 * INT32.size  # 22
LEGACY_MIN_SIZE = {0: LEGACY_V0_MIN_SIZE, 1: LEGACY_V1_MIN_SIZE}
LEGACY_MIN_ENTRY = LOG_OVERHEAD + LEGACY_V0_MIN_SIZE  # 26: the smallest v0/v1 log entry

# The smallest v2 record body after its length: attributes and five one-byte varints
# (timestampDelta, offsetDelta, keyLength, valueLength, headerCount).
V2_RECORD_MIN_LENGTH = 6
VARINT_MAX_BYTES = 5  # ByteUtils.readVarint: an int32
VARLONG_MAX_BYTES = 10  # ByteUtils.readVarlong: an int64

# Attribute bits.
COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40

NO_SEQUENCE = -1
INT32_MAX = 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# The most records and headers the decoder builds for one batch (and so the most headers one record may
# have): what a batch's decoded form may hold for every renderer to stay within a few hundred MB.
MAX_DECODED_PER_BATCH = 250_000

# The scalar constants _layout.h carries besides each layout's size and its fields' offsets and lengths.
C_CONSTANTS = (
    "MAGIC_OFFSET",
    "V2_MIN_BATCH_LENGTH",
    "LEGACY_V0_MIN_SIZE",
    "LEGACY_V1_MIN_SIZE",
    "V2_RECORD_MIN_LENGTH",
    "VARINT_MAX_BYTES",
    "VARLONG_MAX_BYTES",
    "COMPRESSION_MASK",
    "TIMESTAMP_TYPE_BIT",
    "TRANSACTIONAL_BIT",
    "CONTROL_BIT",
    "DELETE_HORIZON_BIT",
    "NO_SEQUENCE",
    "MAX_DECODED_PER_BATCH",
)
