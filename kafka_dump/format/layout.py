"""Fixed-size headers of Kafka's log formats, declared once as struct layouts.

Every log entry, whatever its magic, starts with the same 12 bytes (``Records.LOG_OVERHEAD``):

    offset        int64   the message offset (v0/v1) or the batch's baseOffset (v2)
    size          int32   bytes that follow this field
    ...           the magic byte is always at entry byte 16

v2 RecordBatch header, 61 bytes (``DefaultRecordBatch``):

    baseOffset            int64   @0
    batchLength           int32   @8   bytes after this field
    partitionLeaderEpoch  int32   @12
    magic                 int8    @16  = 2
    crc                   uint32  @17  CRC-32C of bytes @21..end
    attributes            int16   @21  bits 0-2 codec, 3 timestamp type, 4 transactional, 5 control,
                                        6 delete horizon
    lastOffsetDelta       int32   @23
    baseTimestamp         int64   @27  (deleteHorizonMs when attribute bit 6 is set)
    maxTimestamp          int64   @35
    producerId            int64   @43
    producerEpoch         int16   @51
    baseSequence          int32   @53
    recordCount           int32   @57
    records               @61

v0/v1 message (``LegacyRecord``), after the 12-byte log overhead:

    crc          uint32  @12  CRC-32 of bytes @16..end
    magic        int8    @16
    attributes   int8    @17  bits 0-2 codec, bit 3 timestamp type (v1)
    timestamp    int64   @18  v1 only
    keyLength    int32        -1 = null, then the key
    valueLength  int32        -1 = null, then the value
"""

from __future__ import annotations

import struct

LOG_ENTRY = struct.Struct(">qi")  # offset / baseOffset, size
LOG_OVERHEAD = LOG_ENTRY.size  # 12
MAGIC_OFFSET = 16  # the magic byte, in every version

V2_HEADER = struct.Struct(">qiibIhiqqqhii")
V2_HEADER_SIZE = V2_HEADER.size  # 61
V2_CRC_OFFSET = 17
V2_ATTRIBUTES_OFFSET = 21  # the CRC-32C covers from here to the end of the batch
V2_LAST_OFFSET_DELTA_OFFSET = 23
V2_MAX_TIMESTAMP_OFFSET = 35
V2_MIN_BATCH_LENGTH = V2_HEADER_SIZE - LOG_OVERHEAD  # 49

LEGACY_HEADER = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
LEGACY_TIMESTAMP = struct.Struct(">q")
INT32 = struct.Struct(">i")
UINT32 = struct.Struct(">I")
INT16_PAIR = struct.Struct(">hh")  # control record key: version, type
END_TXN_MARKER = struct.Struct(">hi")  # version, coordinatorEpoch

# Message size (after the log overhead) of an empty message: crc, magic, attributes, [timestamp],
# key length, value length (``LegacyRecord.RECORD_OVERHEAD_V0/V1``).
LEGACY_MIN_SIZE = {0: 4 + 1 + 1 + 4 + 4, 1: 4 + 1 + 1 + 8 + 4 + 4}

# Attribute bits.
COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_BIT = 0x08
TRANSACTIONAL_BIT = 0x10
CONTROL_BIT = 0x20
DELETE_HORIZON_BIT = 0x40

NO_SEQUENCE = -1
INT32_MAX = 2**31 - 1
