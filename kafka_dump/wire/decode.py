"""The decoder's hot loops (the reference twin of ``native/decode.c``, same results, errors and positions):
the records of one v2 batch, the inner messages of a v0/v1 wrapper, a sound compressed wrapper
whole, and runs of plain v0/v1 messages."""

from __future__ import annotations

from collections.abc import Callable
from itertools import islice

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Batch, Check, Compression, Record, TimestampType, new_record
from kafka_dump.native import bind, native
from kafka_dump.wire import layout as L
from kafka_dump.wire.match import RecordMatch, matching, record_matches
from kafka_dump.wire.message import Message, inner_base, inner_messages, sound_wrapper
from kafka_dump.wire.records import check_offset_delta, check_timestamp, past_int64, v2_records

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
    last_offset_delta: int = L.INT64_MAX,
    match: RecordMatch | None = None,
    /,
) -> tuple[list[Record], CorruptRecordError | None]:
    """The ``count`` records in ``data[pos:end]`` (``end <= len(data)``) and the first error, if any,
    with its position in ``data`` (the records before it are kept). A record's offset delta past the
    batch's ``last_offset_delta``, or an offset or timestamp past int64, is an error. With ``match``,
    only the records it keeps are built; every record is still checked."""
    records: list[Record] = []
    append = records.append
    make = new_record
    budget = L.MAX_DECODED_PER_BATCH  # records and headers yet to build
    try:
        for i, (start, body_end, _, ts_delta, offset_delta, key, value, headers) in enumerate(
            v2_records(data, pos, end, count)
        ):
            check_offset_delta(start, offset_delta, last_offset_delta)
            if not L.INT64_MIN <= base_offset + offset_delta <= L.INT64_MAX:
                raise past_int64("offset", offset_delta, "baseOffset", base_offset, start, Check.OFFSET_DELTA)
            budget -= 1 + len(headers)
            if budget < 0:
                raise _past_budget(base_offset + offset_delta, count - i, count, start)
            check_timestamp(start, base_timestamp, ts_delta)
            if match is not None and not record_matches(match, key, value, headers):
                continue
            if base_sequence >= 0:
                sequence = base_sequence + offset_delta
                if sequence >= _SEQUENCE_WRAP:
                    sequence -= _SEQUENCE_WRAP
            else:
                sequence = -1
            if log_append_time is None:
                append(make(
                    base_offset + offset_delta, base_timestamp + ts_delta, key, value, headers, sequence,
                    body_end - start,
                ))  # fmt: skip
            else:
                append(make(
                    base_offset + offset_delta, log_append_time, key, value, headers, sequence, body_end - start,
                    stored_timestamp=base_timestamp + ts_delta,
                ))  # fmt: skip
    except CorruptRecordError as err:
        return records, err
    return records, None


def _past_budget(offset: int, left: int, count: int, at: int) -> CorruptRecordError:
    """The batch's records from ``offset`` on are not built: with them, the batch's decoded form would
    pass ``MAX_DECODED_PER_BATCH`` records and headers (the bound of its memory in every command)."""
    return CorruptRecordError(
        f"the batch holds more records and headers than kdump decodes in one batch ({L.MAX_DECODED_PER_BATCH}):"
        f" its records from offset {offset} on ({left} of {count}) are not decoded",
        position=at, check=Check.TOO_LARGE, expected=L.MAX_DECODED_PER_BATCH,
    )  # fmt: skip


def decode_legacy_inner(
    data: bytes, wrapper_magic: int, wrapper_offset: int, log_append_time: int | None, /
) -> tuple[list[Record], CorruptRecordError | None]:
    """The inner message set of a decompressed v0/v1 wrapper (Kafka's ``DeepRecordsIterator``), placed
    by ``message.inner_base``. Returns the records and the first error, if any."""
    inner: list[Message] = []
    past: list[Message] = []  # the first and the last message past MAX_DECODED_PER_BATCH
    walked = 0  # messages past it
    error: CorruptRecordError | None = None
    messages = inner_messages(data, wrapper_magic)
    try:
        inner.extend(islice(messages, L.MAX_DECODED_PER_BATCH))  # the messages before an error stay
        for walked, msg in enumerate(messages, 1):  # checked, and the last offset learnt, not kept
            past[walked > 1 :] = [msg]
    except CorruptRecordError as exc:
        error = exc
    if not inner:
        return [], error or CorruptRecordError(
            "compressed wrapper message holds no inner messages", check=Check.WRAPPER
        )
    if error is not None and wrapper_magic > 0 and wrapper_offset != 0:
        # v1 offsets are relative to the last inner message; without it none can be placed.
        return [], error.restated(
            f"{error.reason}; the {len(inner) + walked} inner messages before it have unknown offsets"
        )
    last = (past or inner)[-1].offset
    base, sound = inner_base(wrapper_magic, wrapper_offset, last)
    if error is None and not sound:
        error = CorruptRecordError(
            f"wrapper offset {wrapper_offset} is below its last inner offset {last}", check=Check.INNER_OFFSET,
            expected=last, found=wrapper_offset,
        )  # fmt: skip
    if error is None and walked:
        error = CorruptRecordError(
            f"the wrapper holds {len(inner) + walked} inner messages, more than kdump decodes in one batch"
            f" ({L.MAX_DECODED_PER_BATCH}): the {walked} from offset {base + past[0].offset} on are not decoded",
            check=Check.TOO_LARGE, expected=L.MAX_DECODED_PER_BATCH,
        )  # fmt: skip
    if log_append_time is None:
        return [m.record(base + m.offset, m.timestamp) for m in inner], error
    return [m.record(base + m.offset, log_append_time, m.timestamp) for m in inner], error


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
    match: RecordMatch | None = None,
    /,
) -> Batch | None:
    """The compressed v0/v1 wrapper entry ``buf[pos:end]`` as a Batch with its inner records when it and
    they are sound (``message.sound_wrapper``); None for the long way of ``legacy.decode_message``.
    With ``match``, the batch holds only the records it keeps (the compiled twin builds no other)."""
    if end - pos < L.LEGACY_MIN_ENTRY or buf[pos + L.LEGACY_ATTRIBUTES_OFFSET] & L.COMPRESSION_MASK == 0:
        return None
    found = sound_wrapper(buf, pos, end, max_batch_bytes, decompress)
    if found is None:
        return None
    msg, data = found
    if len(data) // L.LEGACY_MIN_ENTRY > max_records:
        return None  # more inner messages than allowed might fit: the long way counts them
    log_append = msg.timestamp if msg.timestamp_type is TimestampType.LOG_APPEND_TIME else None
    records, error = decode_legacy_inner(data, msg.magic, msg.offset, log_append)
    if error is not None or not records:
        return None
    kept = tuple(records) if match is None else matching(match, records)
    return msg.batch(file, file_pos, records[0].offset, kept if with_records else None, len(records))


def decode_legacy_run(
    file: str, buf: bytes, pos: int, end: int, file_pos: int, with_records: bool, /
) -> tuple[list[Batch], int]:
    """The batches of the run of plain v0/v1 messages (uncompressed, whole, a valid CRC) at ``buf[pos]``
    (file position ``file_pos``), and the bytes they took; anything else is left for the slow way."""
    batches: list[Batch] = []
    start = pos
    header = L.LEGACY_HEADER
    while end - pos >= L.LEGACY_MIN_ENTRY:
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
