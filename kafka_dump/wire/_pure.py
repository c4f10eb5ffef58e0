"""The pure-Python twin of the decoder's hot loops: the records of one v2 batch, the inner messages of
a v0/v1 wrapper, a sound compressed wrapper whole, and runs of plain v0/v1 messages.

This is the reference implementation. The compiled twin (``_speedups.c``) implements the same
functions (``twins.DecoderTwin``) with the same results, errors and positions; ``kafka_dump.wire``
picks one of them once.

v2 record (``DefaultRecord``), every integer a zigzag varint unless noted:

    length            varint   bytes after this field
    attributes        int8     unused
    timestampDelta    varlong
    offsetDelta       varint
    keyLength         varint   negative = null key
    key
    valueLength       varint   negative = null value
    value
    headerCount       varint
    headers           [keyLength varint, key, valueLength varint (negative = null), value]...
"""

from __future__ import annotations

from collections.abc import Callable

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Batch, Compression, Header, Record, TimestampType, new_header, new_record
from kafka_dump.native import bind, native
from kafka_dump.wire import layout as L
from kafka_dump.wire.message import Message
from kafka_dump.wire.varint import read_zigzag as _varint

_EMPTY: tuple[Header, ...] = ()
_SEQUENCE_WRAP = L.INT32_MAX + 1


def decode_v2_records(
    data: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    base_sequence: int,
    /,
) -> tuple[list[Record], CorruptRecordError | None]:
    """Decode ``count`` records from ``data[pos:end]`` (``end <= len(data)``).

    Returns the records decoded and, if the data is corrupt, the error with its position in ``data``
    (the records before it are kept). Extra bytes after the last record are an error too.
    Every read is bounded by the record's own length, itself bounded by ``end``.
    """
    records: list[Record] = []
    append = records.append
    empty = _EMPTY
    make = new_record
    varint = _varint
    first = pos
    min_length = L.V2_RECORD_MIN_LENGTH
    int_bytes = L.VARINT_MAX_BYTES
    for i in range(count):
        if pos >= end:
            # Reported at the start of the records: the batch's count is what is wrong.
            error = CorruptRecordError(f"batch declares {count} records but holds {i}", position=first)
            return records, error
        start = pos
        try:
            # One- and two-byte varints take the fast path; every read stays below its limit.
            b = data[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                length = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                length, pos = varint(data, pos, end, int_bytes)
            body_end = pos + length
            if length < min_length or body_end > end:
                raise CorruptRecordError(f"record length {length} does not fit the batch", position=start)
            pos += 1  # attributes: unused
            b = data[pos]
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < body_end and data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                ts_delta = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                ts_delta, pos = varint(data, pos, body_end, L.VARLONG_MAX_BYTES)
            b = data[pos] if pos < body_end else 0x80
            if b < 0x80:
                offset_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < body_end and data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                offset_delta = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                offset_delta, pos = varint(data, pos, body_end, int_bytes)
            b = data[pos] if pos < body_end else 0x80
            if b < 0x80:
                n = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < body_end and data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                n = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                n, pos = varint(data, pos, body_end, int_bytes)
            if n < 0:
                key = None
            else:
                if n > body_end - pos:
                    raise CorruptRecordError(f"key length {n} runs past the record", position=start)
                key = data[pos : pos + n]
                pos += n
            b = data[pos] if pos < body_end else 0x80
            if b < 0x80:
                n = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < body_end and data[pos + 1] < 0x80:
                u = (b & 0x7F) | (data[pos + 1] << 7)
                n = (u >> 1) ^ -(u & 1)
                pos += 2
            else:
                n, pos = varint(data, pos, body_end, int_bytes)
            if n < 0:
                value = None
            else:
                if n > body_end - pos:
                    raise CorruptRecordError(f"value length {n} runs past the record", position=start)
                value = data[pos : pos + n]
                pos += n
            if pos < body_end and data[pos] == 0:
                headers = empty
                pos += 1
            else:
                headers, pos = _decode_headers(data, pos, body_end, start)
            if pos != body_end:
                raise CorruptRecordError(
                    f"record declares {length} bytes but its fields take {length + pos - body_end}",
                    position=start,
                )
            if base_sequence >= 0:
                sequence = base_sequence + offset_delta
                if sequence >= _SEQUENCE_WRAP:
                    sequence -= _SEQUENCE_WRAP
            else:
                sequence = -1
            if log_append_time is None:
                record = make(
                    base_offset + offset_delta, base_timestamp + ts_delta, key, value, headers, sequence,
                    body_end - start,
                )  # fmt: skip
            else:
                record = make(
                    base_offset + offset_delta, log_append_time, key, value, headers, sequence, body_end - start,
                    stored_timestamp=base_timestamp + ts_delta,
                )  # fmt: skip
            append(record)
        except CorruptRecordError as err:
            # Every error inside a record is reported at the record's start.
            return records, CorruptRecordError(err.reason, position=start)
    if pos != end:
        return records, CorruptRecordError(
            f"{end - pos} bytes remain after the batch's {count} declared records", position=pos
        )
    return records, None


def _decode_headers(data: bytes, pos: int, body_end: int, start: int) -> tuple[tuple[Header, ...], int]:
    count, pos = _varint(data, pos, body_end, L.VARINT_MAX_BYTES)
    if count < 0 or count > body_end - pos:
        raise CorruptRecordError(f"invalid header count {count}", position=start)
    headers = []
    for _ in range(count):
        n, pos = _varint(data, pos, body_end, L.VARINT_MAX_BYTES)
        if n < 0:
            raise CorruptRecordError("header key is null", position=start)
        if n > body_end - pos:
            raise CorruptRecordError(f"header key length {n} runs past the record", position=start)
        key = data[pos : pos + n]
        pos += n
        n, pos = _varint(data, pos, body_end, L.VARINT_MAX_BYTES)
        if n < 0:
            value = None
        else:
            if n > body_end - pos:
                raise CorruptRecordError(f"header value length {n} runs past the record", position=start)
            value = data[pos : pos + n]
            pos += n
        headers.append(new_header(key, value))
    return tuple(headers), pos


def decode_legacy_inner(
    data: bytes, wrapper_magic: int, wrapper_offset: int, log_append_time: int | None, /
) -> tuple[list[Record], CorruptRecordError | None]:
    """The inner message set of a decompressed v0/v1 wrapper (Kafka's ``DeepRecordsIterator``).

    Inner messages must be uncompressed and of the wrapper's magic. v0 inner offsets are absolute;
    v1 ones are relative and the wrapper's offset is the last one's absolute offset, except that a
    wrapper offset of 0 means base 0. Returns the records and the first error, if any.
    """
    inner: list[Message] = []
    error: CorruptRecordError | None = None
    pos = 0
    size_all = len(data)
    while pos < size_all:
        if size_all - pos < L.LOG_OVERHEAD:
            error = CorruptRecordError(f"{size_all - pos} stray bytes after the last inner message")
            break
        (_, size) = L.LOG_ENTRY.unpack_from(data, pos)
        end = pos + L.LOG_OVERHEAD + size
        if size < 0 or end > size_all:
            error = CorruptRecordError(f"inner message at byte {pos} of the payload runs past its end")
            break
        try:
            msg = Message(data, pos, end)
        except CorruptRecordError as exc:
            error = CorruptRecordError(f"inner message at byte {pos} of the payload: {exc.reason}")
            break
        if msg.magic != wrapper_magic:
            error = CorruptRecordError(f"inner message has magic {msg.magic} in a v{wrapper_magic} wrapper")
            break
        if msg.attributes & L.COMPRESSION_MASK != Compression.NONE:
            error = CorruptRecordError("inner message is itself compressed")
            break
        inner.append(msg)
        pos = end
    if not inner:
        return [], error or CorruptRecordError("compressed wrapper message holds no inner messages")
    relative = wrapper_magic > 0 and wrapper_offset != 0
    if error is not None and relative:
        # v1 offsets are relative to the last inner message; without it none can be placed.
        return [], CorruptRecordError(
            f"{error.reason}; the {len(inner)} inner messages before it have unknown offsets"
        )
    last = inner[-1].offset
    if error is None and relative and wrapper_offset < last:
        error = CorruptRecordError(f"wrapper offset {wrapper_offset} is below its last inner offset {last}")
    # Kafka rejects a wrapper offset below the last inner offset; kdump still shows the records from 0.
    base = max(0, wrapper_offset - last) if relative else 0
    if log_append_time is None:
        return [m.record(base + m.offset, m.timestamp) for m in inner], error
    return [m.record(base + m.offset, log_append_time, m.timestamp) for m in inner], error


# The codecs a v0/v1 wrapper may use.
_WRAPPER_CODECS = (Compression.GZIP, Compression.SNAPPY, Compression.LZ4)
_SMALLEST_MESSAGE = L.LOG_OVERHEAD + L.LEGACY_V0_MIN_SIZE


def decode_legacy_wrapper(
    file: str,
    buf: bytes,
    pos: int,
    end: int,
    file_pos: int,
    with_records: bool,
    max_batch_bytes: int,
    max_records: int,
    decompress: Callable[[Compression, bytes, int], bytes],
    /,
) -> Batch | None:
    """The compressed v0/v1 wrapper entry ``buf[pos:end]`` as a Batch with its inner records, when every
    check passes: it parses, its CRC holds, its codec is one a wrapper may use, its value decompresses
    (through ``decompress``, the codecs module's), and its inner message set is sound.

    Anything else gives None, and ``legacy.decode_message`` takes the long way, which reports it: the
    common case, a sound wrapper, is decoded in one call (the compiled twin's saves most of the Python
    a wrapper otherwise costs).
    """
    if end - pos < _SMALLEST_MESSAGE or buf[pos + L.LEGACY_ATTRIBUTES_OFFSET] & L.COMPRESSION_MASK == 0:
        return None
    try:
        msg = Message(buf, pos, end)
    except CorruptRecordError:
        return None
    if not msg.crc_valid or msg.value is None or msg.compression not in _WRAPPER_CODECS:
        return None
    try:
        data = decompress(msg.compression, msg.value, max_batch_bytes)
    except CorruptRecordError:
        return None
    if len(data) // _SMALLEST_MESSAGE > max_records:
        return None  # more inner messages than allowed might fit: the long way counts them
    log_append = msg.timestamp if msg.timestamp_type is TimestampType.LOG_APPEND_TIME else None
    records, error = decode_legacy_inner(data, msg.magic, msg.offset, log_append)
    if error is not None or not records:
        return None
    return msg.batch(
        file, file_pos, records[0].offset, tuple(records) if with_records else None, len(records)
    )


def decode_legacy_run(
    file: str, buf: bytes, pos: int, end: int, file_pos: int, with_records: bool, /
) -> tuple[list[Batch], int]:
    """Decode the run of plain v0/v1 messages that starts at ``buf[pos]`` (file position ``file_pos``).

    A plain message is uncompressed, whole within ``buf[pos:end]``, decodes, and has a valid CRC:
    the common case of an old segment, one log entry per record. The run stops before the first
    entry that is anything else, which the segment reader then decodes (and reports) the slow way.
    Returns the batches and the bytes they took.
    """
    batches: list[Batch] = []
    start = pos
    header = L.LEGACY_HEADER
    smallest = L.LOG_OVERHEAD + L.LEGACY_V0_MIN_SIZE
    while end - pos >= smallest:
        (_, size, _, magic, attributes) = header.unpack_from(buf, pos)
        if (
            magic not in (0, 1)
            or attributes & L.COMPRESSION_MASK
            or size < 0
            or size > end - pos - L.LOG_OVERHEAD
        ):
            break
        entry_end = pos + L.LOG_OVERHEAD + size
        try:
            msg = Message(buf, pos, entry_end)
        except CorruptRecordError:
            break
        if not msg.crc_valid:
            break
        record = msg.record(msg.offset, msg.timestamp)
        batches.append(
            msg.batch(file, file_pos + pos - start, msg.offset, (record,) if with_records else None, 1)
        )
        pos = entry_end
    return batches, pos - start


decode_v2_records = bind(decode_v2_records)(native.decode_v2_records if native else None)
decode_legacy_inner = bind(decode_legacy_inner)(native.decode_legacy_inner if native else None)
decode_legacy_wrapper = bind(decode_legacy_wrapper)(native.decode_legacy_wrapper if native else None)
decode_legacy_run = bind(decode_legacy_run)(native.decode_legacy_run if native else None)
