/* Generated from kafka_dump/wire/layout.py by `python -m tools.gen_layout_h`: do not edit.
 * Offsets count from the start of each header (the log entry's, for the first four);
 * every integer is big-endian on the wire. */
#ifndef KDUMP_LAYOUT_H
#define KDUMP_LAYOUT_H

/* the start of every log entry (Kafka's Records) */
#define LOG_ENTRY_OFFSET_OFFSET 0 /* int64 offset: the message's offset (v0/v1) or the batch's baseOffset (v2) */
#define LOG_ENTRY_OFFSET_LENGTH 8
#define LOG_ENTRY_SIZE_OFFSET 8 /* int32 size: bytes that follow this field */
#define LOG_ENTRY_SIZE_LENGTH 4
#define LOG_OVERHEAD 12

/* v2 RecordBatch header (magic 2); the records follow it (Kafka's DefaultRecordBatch) */
#define V2_BASE_OFFSET_OFFSET 0 /* int64 baseOffset: the first record's offset */
#define V2_BASE_OFFSET_LENGTH 8
#define V2_BATCH_LENGTH_OFFSET 8 /* int32 batchLength: bytes after this field */
#define V2_BATCH_LENGTH_LENGTH 4
#define V2_PARTITION_LEADER_EPOCH_OFFSET 12 /* int32 partitionLeaderEpoch: the leader epoch of the broker that appended the batch */
#define V2_PARTITION_LEADER_EPOCH_LENGTH 4
#define V2_MAGIC_OFFSET 16 /* int8 magic: 2 */
#define V2_MAGIC_LENGTH 1
#define V2_CRC_OFFSET 17 /* uint32 crc: CRC-32C of the bytes from attributes to the end of the batch */
#define V2_CRC_LENGTH 4
#define V2_ATTRIBUTES_OFFSET 21 /* int16 attributes: bits 0-2 codec, 3 timestamp type, 4 transactional, 5 control, 6 delete horizon */
#define V2_ATTRIBUTES_LENGTH 2
#define V2_LAST_OFFSET_DELTA_OFFSET 23 /* int32 lastOffsetDelta: the last record's offset minus baseOffset */
#define V2_LAST_OFFSET_DELTA_LENGTH 4
#define V2_BASE_TIMESTAMP_OFFSET 27 /* int64 baseTimestamp: the first record's timestamp (deleteHorizonMs when attribute bit 6 is set) */
#define V2_BASE_TIMESTAMP_LENGTH 8
#define V2_MAX_TIMESTAMP_OFFSET 35 /* int64 maxTimestamp: the largest timestamp (the append time under LogAppendTime) */
#define V2_MAX_TIMESTAMP_LENGTH 8
#define V2_PRODUCER_ID_OFFSET 43 /* int64 producerId: -1 without an idempotent or transactional producer */
#define V2_PRODUCER_ID_LENGTH 8
#define V2_PRODUCER_EPOCH_OFFSET 51 /* int16 producerEpoch: -1 without a producer id */
#define V2_PRODUCER_EPOCH_LENGTH 2
#define V2_BASE_SEQUENCE_OFFSET 53 /* int32 baseSequence: the first record's producer sequence, -1 without one */
#define V2_BASE_SEQUENCE_LENGTH 4
#define V2_RECORD_COUNT_OFFSET 57 /* int32 recordCount: records that follow the header */
#define V2_RECORD_COUNT_LENGTH 4
#define V2_HEADER_SIZE 61

/* v0/v1 message header (magic 0 and 1); a v1 timestamp, then the key and value follow (Kafka's LegacyRecord) */
#define LEGACY_OFFSET_OFFSET 0 /* int64 offset: the message's offset (v0/v1) or the batch's baseOffset (v2) */
#define LEGACY_OFFSET_LENGTH 8
#define LEGACY_SIZE_OFFSET 8 /* int32 size: bytes that follow this field */
#define LEGACY_SIZE_LENGTH 4
#define LEGACY_CRC_OFFSET 12 /* uint32 crc: CRC-32 of the bytes from magic to the end of the message */
#define LEGACY_CRC_LENGTH 4
#define LEGACY_MAGIC_OFFSET 16 /* int8 magic: 0 or 1 */
#define LEGACY_MAGIC_LENGTH 1
#define LEGACY_ATTRIBUTES_OFFSET 17 /* int8 attributes: bits 0-2 codec, bit 3 timestamp type (v1) */
#define LEGACY_ATTRIBUTES_LENGTH 1
#define LEGACY_HEADER_SIZE 18

/* v1 message header: the v0 header and a timestamp (Kafka's LegacyRecord) */
#define LEGACY_V1_TIMESTAMP_OFFSET 18 /* int64 timestamp: create or append time, -1 for none */
#define LEGACY_V1_TIMESTAMP_LENGTH 8
#define LEGACY_V1_HEADER_SIZE 26

/* the key of a control record (Kafka's ControlRecordType) */
#define CONTROL_KEY_VERSION_OFFSET 0 /* int16 version: the key's schema version, >= 0 */
#define CONTROL_KEY_VERSION_LENGTH 2
#define CONTROL_KEY_TYPE_OFFSET 2 /* int16 type: a ControlRecordType id */
#define CONTROL_KEY_TYPE_LENGTH 2
#define CONTROL_KEY_SIZE 4

/* the value of an ABORT or COMMIT control record (Kafka's EndTransactionMarker) */
#define END_TXN_MARKER_VERSION_OFFSET 0 /* int16 version: the value's schema version, >= 0 */
#define END_TXN_MARKER_VERSION_LENGTH 2
#define END_TXN_MARKER_COORDINATOR_EPOCH_OFFSET 2 /* int32 coordinatorEpoch: the epoch of the transaction coordinator that wrote it */
#define END_TXN_MARKER_COORDINATOR_EPOCH_LENGTH 4
#define END_TXN_MARKER_SIZE 6

/* Sizes, limits and attribute bits */
#define MAGIC_OFFSET 16
#define V2_MIN_BATCH_LENGTH 49
#define LEGACY_V0_MIN_SIZE 14
#define LEGACY_V1_MIN_SIZE 22
#define V2_RECORD_MIN_LENGTH 6
#define VARINT_MAX_BYTES 5
#define VARLONG_MAX_BYTES 10
#define COMPRESSION_MASK 0x07
#define TIMESTAMP_TYPE_BIT 0x08
#define TRANSACTIONAL_BIT 0x10
#define CONTROL_BIT 0x20
#define DELETE_HORIZON_BIT 0x40
#define NO_SEQUENCE (-1)
#define MAX_DECODED_PER_BATCH 250000

#endif
