"""Contract: kdump and kafka-python's reader see the same batches and records in every segment we have.

kafka-python (``kafka.record.MemoryRecords``) is an independent decoder. Each file is read by both,
each side is rendered as one line per batch and one per record in kafka-python's vocabulary, and the
two lists of lines are compared, so a failure shows a diff. Inputs:

* every ``.log`` and ``.checkpoint`` under ``../shared/fixtures-real/`` (real brokers, Kafka's own
  Java classes; a KRaft ``.checkpoint`` is a sequence of v2 batches like a segment);
* every ``fixtures/*.log`` of the project (written with kafka-python's builders by
  ``fixtures/make_fixtures.py``), whatever exists when the tests are collected.

Where the two libraries legitimately differ, the mapping is done in one place (``kdump_view``) and
says which Kafka rule it follows:

1. v0 has no timestamp: kafka-python says ``None`` (both for the timestamp and the timestamp type);
   kdump says ``-1`` / NO_TIMESTAMP_TYPE, Kafka's ``RecordBatch.NO_TIMESTAMP`` and
   ``TimestampType.NO_TIMESTAMP_TYPE`` (``LegacyRecord.timestamp()``).
2. A v0/v1 compressed wrapper is one batch in both, and both iterate its inner messages. kafka-python's
   ``base_offset`` is the wrapper message's own offset field, which Kafka defines as the *last* inner
   offset (``AbstractLegacyRecordBatch.lastOffset()``, ``MemoryRecordsBuilder.toInnerOffset``); kdump's
   ``baseOffset`` is the first inner offset, as Kafka's ``AbstractLegacyRecordBatch.baseOffset()``
   returns. So a legacy batch's offset field is compared with kdump's ``lastOffset``. (For a single
   uncompressed message both are the same.)
3. kafka-python's v2 ``DefaultRecord.size_in_bytes`` is the record's length *field* (bytes after the
   length varint); Kafka's ``DefaultRecord.sizeInBytes()`` (kdump's ``sizeInBytes``) includes the varint
   itself: ``ByteUtils.sizeOfVarint(sizeInBytes) + sizeInBytes``. We add the varint's size on the
   kafka-python side.
4. A v2 record has no checksum of its own: kafka-python's ``checksum`` is None and ``validate_crc()`` is
   True, as Kafka's ``DefaultRecord.isValid()`` always returns true. kdump's ``crc``/``crcValid`` are
   None for v2 records; None is compared as "no CRC", True as "valid".
5. kafka-python header keys are ``str`` (it decodes them as UTF-8, as Kafka's ``Header.key()`` is a
   String); kdump keeps bytes. We decode kdump's keys.
6. kafka-python's v1 wrapper handling lacks Kafka's "wrapper offset 0 means base 0" rule
   (``DeepRecordsIterator``): it computes ``wrapper - lastInner``, and only when that is negative does
   it leave the inner (relative) offsets as they are, which for a wrapper offset of 0 coincides with
   Kafka's rule. So no mapping is needed; ``fixtures/v1-wrapper-offset0.log`` checks that both agree.

Where kafka-python cannot read on (``_kafka_python_read``):

7. A partial entry at the end (unclean shutdown, a fetch cut at max-bytes): kafka-python stops
   silently, as Kafka's ``FileLogInputStream.nextBatch`` does ("a batch cut off at end of file just
   ends iteration"). kdump yields a PARTIAL_TAIL Problem covering exactly the bytes kafka-python left.
8. A zero-filled tail (preallocated segment): kafka-python raises "Record size is less than the
   minimum record overhead", as Kafka's ``FileLogInputStream`` does ("Found record size 0 smaller than
   minimum record overhead"). kdump, by design (DESIGN.md, "The tail is a fact"), yields a ZERO_TAIL
   Problem there. We assert kafka-python failed exactly where kdump's zero tail starts. If the zero tail
   is under 12 bytes, kafka-python stops silently instead (case 7's path).
9. A checksum mismatch: kafka-python does not raise, it answers ``validate_crc()`` False; kdump yields
   the batch with ``crcValid=False`` and a CORRUPT Problem at its position. The verdicts are compared.
10. Any other failure of kafka-python: the batches before it must agree, and kdump must report a
    CORRUPT Problem at the entry where kafka-python failed. What kdump does after that (it resyncs)
    has no kafka-python counterpart.
"""

from __future__ import annotations

import gzip
import hashlib
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import snappy
import zstandard
from kafka.errors import KafkaError
from kafka.record import MemoryRecords

from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Problem, ProblemKind

PROJECT = Path(__file__).resolve().parents[1]
REAL = PROJECT.parent / "shared" / "fixtures-real"
OURS = PROJECT / "fixtures"

REAL_FILES = (
    sorted(p for p in REAL.rglob("*") if p.suffix in (".log", ".checkpoint") and p.is_file())
    if REAL.is_dir()
    else []
)
OUR_FILES = sorted(OURS.glob("*.log"))
FILES = [(f"real/{p.relative_to(REAL)}", p) for p in REAL_FILES] + [
    (f"fixtures/{p.name}", p) for p in OUR_FILES
]

LOG_OVERHEAD = 12  # offset int64 + size int32, every magic (Kafka's Records.LOG_OVERHEAD)

# What kafka-python raises on bad input, listed rather than caught as Exception so that a bug in
# this test (a NameError, a TypeError) is not mistaken for a kafka-python verdict: its own errors
# (CorruptRecordError, UnsupportedCodecError...); ValueError, IndexError and struct.error from parsing
# short or garbled buffers; AssertionError from LegacyRecordBatch's sanity asserts ("appears
# double-compressed"); and the codec libraries' errors: gzip (OSError, EOFError, zlib.error),
# lz4 (RuntimeError), snappy (UncompressError), zstd (ZstdError).
_KP_FAILURES: tuple[type[BaseException], ...] = (
    KafkaError, AssertionError, ValueError, IndexError, struct.error,
    OSError, EOFError, zlib.error, RuntimeError, snappy.UncompressError, zstandard.ZstdError,
)  # fmt: skip


# --- reading with kafka-python ---------------------------------------------------------------------


@dataclass
class KpRead:
    """What kafka-python read: (position, batch, crc verdict, records) per batch, and where it stopped."""

    batches: list[tuple[int, Any, bool, list[Any]]] = field(default_factory=list)
    consumed: int = 0  # bytes framed as whole entries
    error: str | None = None
    error_at: int | None = None  # position of the entry kafka-python failed on


def _kafka_python_read(data: bytes) -> KpRead:
    out = KpRead()
    records = MemoryRecords(data)
    while True:
        try:
            batch = records.next_batch()
        except _KP_FAILURES as exc:
            out.error, out.error_at = f"{type(exc).__name__}: {exc}", out.consumed
            return out
        if batch is None:
            return out
        crc_ok = batch.validate_crc()  # must be asked before iteration decompresses a v2 batch
        found: list[Any] = []
        out.batches.append((out.consumed, batch, crc_ok, found))
        try:
            found.extend(batch)
        except _KP_FAILURES as exc:
            out.error, out.error_at = f"{type(exc).__name__}: {exc}", out.consumed
            return out
        out.consumed += batch.size_in_bytes


# --- one vocabulary for both sides -----------------------------------------------------------------


def _blob(data: bytes | None) -> str:
    if data is None:
        return "null"
    return f"{len(data)}:{hashlib.sha1(data).hexdigest()[:16]}"


def _varint_size(n: int) -> int:
    """Bytes of Kafka's zigzag varint for an int32 (ByteUtils.sizeOfVarint), written out here so the
    test does not lean on kdump's own varint code."""
    z = ((n << 1) ^ (n >> 31)) & 0xFFFFFFFF
    size = 1
    while z >= 0x80:
        z >>= 7
        size += 1
    return size


def _batch_line(
    pos: int,
    magic: int,
    offset: int,
    size: int,
    codec: int,
    ts_type: int | None,
    crc_ok: bool,
    v2: tuple[Any, ...] | None,
) -> str:
    line = f"batch @{pos} magic={magic} offset={offset} size={size} codec={codec} tsType={ts_type} crcOk={crc_ok}"
    if v2 is not None:
        names = (
            "leaderEpoch attributes lastOffset firstTs maxTs pid epoch baseSeq lastSeq count txn control crc"
        )
        line += " " + " ".join(f"{n}={v}" for n, v in zip(names.split(), v2, strict=True))
    return line


def _record_line(
    offset: int,
    ts: int | None,
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]],
    size: int,
    crc: int | None,
    crc_ok: bool,
    control: tuple[int, int] | None,
) -> str:
    hs = ",".join(f"{k!r}={_blob(v)}" for k, v in headers)
    line = (
        f"  record offset={offset} ts={ts} key={_blob(key)} value={_blob(value)} headers=[{hs}]"
        f" size={size} crc={crc} crcOk={crc_ok}"
    )
    return line + (f" control(version,type)={control}" if control is not None else "")


def kafka_python_view(kp: KpRead) -> list[str]:
    lines = []
    for pos, b, crc_ok, records in kp.batches:
        v2 = None
        if b.magic == 2:
            v2 = (
                b.leader_epoch, b.attributes, b.last_offset, b.first_timestamp, b.max_timestamp,
                b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence, b.records_count,
                b.is_transactional, b.is_control_batch, b.crc,
            )  # fmt: skip
        lines.append(
            _batch_line(
                pos, b.magic, b.base_offset, b.size_in_bytes, b.compression_type, b.timestamp_type, crc_ok, v2
            )
        )
        for r in records:
            # Case 3: kafka-python's v2 size is the length field; Kafka's sizeInBytes adds its varint.
            size = r.size_in_bytes + _varint_size(r.size_in_bytes) if b.magic == 2 else r.size_in_bytes
            control = (r.version, r.type) if b.magic == 2 and b.is_control_batch else None
            lines.append(
                _record_line(
                    r.offset,
                    r.timestamp,
                    r.key,
                    r.value,
                    list(r.headers),
                    size,
                    r.checksum,
                    r.validate_crc(),
                    control,
                )
            )
    return lines


def kdump_view(batches: list[Batch]) -> list[str]:
    lines = []
    for b in batches:
        legacy = b.magic < 2
        v2 = None
        if not legacy:
            v2 = (
                b.partitionLeaderEpoch, b.attributes, b.lastOffset, b.baseTimestamp, b.maxTimestamp,
                b.producerId, b.producerEpoch, b.baseSequence, b.lastSequence, b.recordCount,
                b.isTransactional, b.isControl, b.crc,
            )  # fmt: skip
        lines.append(
            _batch_line(
                b.position,
                b.magic,
                b.lastOffset if legacy else b.baseOffset,  # case 2
                b.sizeInBytes,
                int(b.compression),
                None if b.magic == 0 else int(b.timestampType),  # case 1
                b.crcValid,
                v2,
            )
        )
        for r in b.records or ():
            lines.append(
                _record_line(
                    r.offset,
                    None if b.magic == 0 else r.timestamp,  # case 1
                    r.key,
                    r.value,
                    [(h.key.decode("utf-8", "backslashreplace"), h.value) for h in r.headers],  # case 5
                    r.sizeInBytes,
                    r.crc,  # case 4: None for v2 on both sides
                    True if r.crcValid is None else r.crcValid,  # case 4
                    (r.control.version, r.control.type) if r.control is not None else None,
                )
            )
    return lines


# --- the test --------------------------------------------------------------------------------------


def test_there_are_files_to_compare() -> None:
    if not FILES:
        pytest.skip("neither ../shared/fixtures-real/ nor fixtures/*.log is present")
    assert all(p.is_file() for _, p in FILES)


@pytest.mark.parametrize("path", [p for _, p in FILES], ids=[name for name, _ in FILES])
def test_kdump_agrees_with_kafka_python(path: Path) -> None:
    data = path.read_bytes()
    kp = _kafka_python_read(data)
    items = list(read_segment(path))
    batches = [x for x in items if isinstance(x, Batch)]
    problems = [x for x in items if isinstance(x, Problem)]
    tails = [p for p in problems if p.kind in (ProblemKind.PARTIAL_TAIL, ProblemKind.ZERO_TAIL)]
    corrupt = [p for p in problems if p.kind is ProblemKind.CORRUPT]

    if kp.error is None:
        # Everything kafka-python read, batch for batch and record for record.
        assert kdump_view(batches) == kafka_python_view(kp)
        # Case 7: kafka-python stopped silently; whatever it left is kdump's tail, all of it.
        leftover = len(data) - kp.consumed
        assert [(p.position, p.length) for p in tails] == ([(kp.consumed, leftover)] if leftover else [])
        # Case 9: kdump's only CORRUPT Problems are the CRC mismatches kafka-python sees too.
        bad_crc_at = {pos for pos, _, crc_ok, _ in kp.batches if not crc_ok}
        assert [p for p in corrupt if p.position not in bad_crc_at] == []
        return

    # kafka-python failed at the entry at byte kp.error_at: in next_batch() (no batch for it), or
    # while iterating a batch it had framed (the last one in kp.batches, maybe with a few records).
    error_at = kp.error_at
    assert error_at is not None
    failed_inside = bool(kp.batches) and kp.batches[-1][0] == error_at
    failed_size = kp.batches[-1][1].size_in_bytes if failed_inside else 1
    if failed_inside and all(b.position != error_at for b in batches):
        # kafka-python frames an entry before it parses the message inside, so it can show a batch it
        # then fails to read; kdump parses first and makes an unreadable entry a CORRUPT Problem, not
        # a Batch. Only the batches before it are compared then (the Problem is checked below).
        kp.batches.pop()
    # Case 10: the batches (and records) kafka-python read before failing agree; kdump reads on.
    kp_lines = kafka_python_view(kp)
    assert kdump_view([b for b in batches if b.position <= error_at])[: len(kp_lines)] == kp_lines

    if any(p.kind is ProblemKind.ZERO_TAIL and p.position == error_at for p in tails):
        # Case 8: kafka-python rejects the all-zero "entry"; kdump calls it preallocated space.
        assert "less than the minimum" in kp.error, kp.error
    else:
        # Case 10: kdump reports corruption in the entry kafka-python failed on (kdump places a
        # record's error at the record when the batch is not compressed).
        assert any(error_at <= p.position < error_at + failed_size for p in corrupt), (
            f"kafka-python failed at byte {error_at} ({kp.error}); kdump problems: {problems}"
        )
    # Case 9, on the part both read: CORRUPT Problems before the failure are CRC mismatches.
    bad_crc_at = {pos for pos, _, crc_ok, _ in kp.batches if not crc_ok}
    assert [p for p in corrupt if p.position < error_at and p.position not in bad_crc_at] == []


# --- a damaged v1 wrapper: kafka-python's reading of the intact one is the oracle -------------------

_V1_WRAPPER = struct.Struct(">qiIbbq")  # offset, size, crc, magic, attributes, timestamp (LegacyRecord v1)


def _damage_v1_gzip_wrapper(entry: bytes, damaged_inner: int) -> bytes:
    """Rebuild a v1 gzip wrapper entry with inner message ``damaged_inner`` given an impossible key
    length, so its inner message set can be read only up to that message. Written with struct, gzip
    and zlib here, not with kdump's encoder; the wrapper's CRC-32 is recomputed, so the only damage is
    inside the compressed set."""
    offset, _, _, magic, attributes, timestamp = _V1_WRAPPER.unpack_from(entry)
    assert magic == 1 and attributes & 0x07 == 1, "expects a v1 gzip wrapper"
    at = _V1_WRAPPER.size
    (key_len,) = struct.unpack_from(">i", entry, at)
    assert key_len == -1, "a wrapper has a null key"
    (value_len,) = struct.unpack_from(">i", entry, at + 4)
    inner = bytearray(gzip.decompress(entry[at + 8 : at + 8 + value_len]))
    pos = 0
    for _ in range(damaged_inner):  # walk offset:int64, size:int32 framing to the damaged message
        pos += LOG_OVERHEAD + struct.unpack_from(">i", inner, pos + 8)[0]
    struct.pack_into(">i", inner, pos + _V1_WRAPPER.size, 0x7FFF0000)  # its key length
    value = gzip.compress(bytes(inner), mtime=0)
    body = struct.pack(">bbq", magic, attributes, timestamp) + struct.pack(">ii", -1, len(value)) + value
    crc = zlib.crc32(body)
    return struct.pack(">qiI", offset, 4 + len(body), crc) + body


def test_damaged_v1_wrapper_keeps_the_offsets_of_its_readable_messages(tmp_path: Path) -> None:
    """Kafka's DeepRecordsIterator reads a v1 wrapper's whole inner set before it can make offsets
    absolute (absolute = wrapperOffset - lastInnerOffset + innerOffset), and throws if it cannot. kdump
    may show the readable prefix (messages 0..6 here), but each record it shows must carry its true
    offset: the one kafka-python gives the same message in the intact wrapper."""
    source = REAL / "kafka-3.8.0-java" / "v1_gzip.log"
    if not source.is_file():
        pytest.skip(f"{source} is absent")
    data = source.read_bytes()
    size = LOG_OVERHEAD + struct.unpack_from(">i", data, 8)[0]
    intact = [(r.offset, r.key, r.value) for r in MemoryRecords(data[:size]).next_batch()]
    assert len(intact) == 10

    damaged = tmp_path / "v1-damaged-wrapper.log"
    damaged.write_bytes(_damage_v1_gzip_wrapper(data[:size], damaged_inner=7))
    items = list(read_segment(damaged))
    assert any(isinstance(x, Problem) and x.kind is ProblemKind.CORRUPT for x in items)
    shown = [(r.offset, r.key, r.value) for x in items if isinstance(x, Batch) for r in x.records or ()]
    assert shown == intact[: len(shown)]
