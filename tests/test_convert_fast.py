"""convert's fast path (``analysis/convert_fast.py``): v1 CreateTime wrappers to v2 without Records.

What it must hold: the twins of ``v1_inner_to_v2`` and ``same_as_v1_inner`` agree; what the
transcoder gives is what the decoder's Records give through the encoder (the slow path), and it
takes only what the decoder reads with no problem; the items the fast reader yields are the
segment reader's, item for item; a conversion writes the same bytes and report with the fast path
as without, on every fixture, the bad corpus included; and a fast-path batch that does not hold
its wrapper's records is caught by the verification.
"""

from __future__ import annotations

import os
import shutil
import struct
import zlib
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_dump.analysis import convert_fast, convert_run
from kafka_dump.analysis.convert import Converter, ConvertOptions
from kafka_dump.analysis.convert_fast import TranscodedRun, read_input
from kafka_dump.analysis.convert_run import convert_segment
from kafka_dump.errors import CompressionError, KafkaDumpError
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Compression, Problem
from kafka_dump.wire import codecs
from kafka_dump.wire import decode as _pure
from kafka_dump.wire import encoder as _pure_encoder
from kafka_dump.wire import recheck as _recheck_pure
from kafka_dump.wire import transcode as _transcode_pure
from kafka_dump.wire.checksum import crc32c
from kafka_dump.wire.codecs import (
    DEFAULT_MAX_BATCH_BYTES,
    DEFAULT_MAX_RECORDS_PER_BATCH,
    compress,
    decompress,
)
from tests.conftest import FIXTURES, reference_module

try:
    from kafka_dump.native import _native as _encoder
except ImportError:  # no compiler: only the references can be checked
    _encoder = None  # type: ignore[assignment]
_recheck = _transcode = _encoder
# The pure modules' own functions (their names hold the compiled ones where those are in use).
_pure, _pure_encoder, _recheck_pure = map(reference_module, (_pure, _pure_encoder, _recheck_pure))

TRANSCODERS = [_pure_encoder.v1_inner_to_v2] + ([] if _encoder is None else [_encoder.v1_inner_to_v2])
COMPARERS = [_recheck_pure.same_as_v1_inner] + ([] if _recheck is None else [_recheck.same_as_v1_inner])
RUN_TWINS = [reference_module(_transcode_pure)] + ([] if _transcode is None else [_transcode])

_PAYLOAD = st.none() | st.just(b"") | st.binary(min_size=1, max_size=30)
_MESSAGE = st.tuples(st.integers(0, 3), st.integers(-(2**40), 2**40), _PAYLOAD, _PAYLOAD)
TS = 1_700_000_000_000
LIMITS = {"max_batch_bytes": DEFAULT_MAX_BATCH_BYTES, "max_records_per_batch": DEFAULT_MAX_RECORDS_PER_BATCH}


def inner_set(specs: list[tuple[int, int, bytes | None, bytes | None]]) -> bytes:
    """Uncompressed v1 messages with relative offsets (gaps allowed), as kafka-python writes them."""
    builder = LegacyRecordBatchBuilder(1, 0, batch_size=1 << 30)
    offset = -1
    for gap, ts, key, value in specs:
        offset += 1 + gap
        builder.append(offset, timestamp=TS + ts, key=key, value=value)
    return bytes(builder.build())


def reference(data: bytes, wrapper_offset: int) -> tuple[bytes, int, int, int, int, int] | None:
    """The slow path: the decoder's Records, then the encoder's v2 records (None when it reports)."""
    records, error = _pure.decode_legacy_inner(data, 1, wrapper_offset, None)
    if error is not None or not records or not all(r.crcValid for r in records):
        return None
    first = records[0]
    body = _pure_encoder.encode_v2_records(records, first.offset, first.timestamp, False)
    times = [r.timestamp for r in records]
    return body, len(records), first.offset, records[-1].offset, first.timestamp, max(times)


def transcode(data: bytes, wrapper_offset: int, max_records: int = 1000) -> Any:
    answers = [fn(data, wrapper_offset, max_records) for fn in TRANSCODERS]
    assert all(a == answers[0] for a in answers), answers
    return answers[0]


def compare(records: bytes, found: Any, data: bytes, wrapper_offset: int) -> tuple[int, int, int, int]:
    args = (records, 0, len(records), found[2], found[4], data, wrapper_offset)
    answers = [fn(*args) for fn in COMPARERS]
    assert all(a == answers[0] for a in answers), answers
    return answers[0]  # type: ignore[no-any-return]


@settings(max_examples=80, deadline=None)
@given(st.lists(_MESSAGE, min_size=1, max_size=10), st.sampled_from(["zero", "last", "above"]))
def test_the_transcoder_writes_what_the_decoder_and_encoder_write(specs: list, where: str) -> None:  # type: ignore[type-arg]
    data = inner_set(specs)
    last = sum(1 + gap for gap, *_ in specs) - 1
    wrapper_offset = {"zero": 0, "last": last, "above": last + 1000}[where]
    found = transcode(data, wrapper_offset)
    assert found is not None and found == reference(data, wrapper_offset)
    assert compare(found[0], found, data, wrapper_offset) == (-1, found[1], found[5], found[3])


@settings(max_examples=150, deadline=None)
@given(st.lists(_MESSAGE, min_size=1, max_size=6), st.data())
def test_damaged_inner_messages_are_taken_only_when_the_decoder_reads_them_soundly(
    specs: list,  # type: ignore[type-arg]
    data: st.DataObject,
) -> None:
    raw = bytearray(inner_set(specs))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        del raw[data.draw(st.integers(0, len(raw) - 1)) :]
    damaged = bytes(raw)
    wrapper_offset = data.draw(st.sampled_from([0, 5, 2**40]))
    found = transcode(damaged, wrapper_offset)
    if found is not None:  # a fast path never takes what the slow path would report or refuse
        assert found == reference(damaged, wrapper_offset)
        assert compare(found[0], found, damaged, wrapper_offset) == (-1, found[1], found[5], found[3])


def test_inner_crcs_of_long_messages_are_checked_at_every_length_and_byte() -> None:
    """The compiled twin folds a message's CRC-32 16 bytes at a time (``_wire.h``'s crc32_ieee):
    every length up to a few lanes past that, sound and with one byte changed anywhere, is taken or
    refused as the decoder reads it."""
    for n in range(90, 420, 7):
        value = bytes((i * 7 + n) & 0xFF for i in range(n))
        data = inner_set([(0, 0, None, value), (0, 1, b"key", value[::-1])])
        assert transcode(data, 1) is not None
        for at in range(16, len(data), 11):  # a byte the inner CRC covers (past offset, size and crc)
            damaged = bytearray(data)
            damaged[at] ^= 0x20
            assert transcode(bytes(damaged), 1) == reference(bytes(damaged), 1)


def test_what_one_wrapper_cannot_hold_is_left_to_the_slow_path() -> None:
    data = inner_set([(0, 0, b"k", b"v")] * 5)
    assert transcode(data, 4, max_records=4) is None  # more than --max-records-per-batch
    assert transcode(data, 3) is None  # wrapper offset below the last inner one
    assert transcode(b"", 0) is None
    assert transcode(data, 4) is not None and transcode(data, 4, max_records=5) is not None
    huge_gap = inner_set([(0, 0, None, b"a"), (2**31, 0, None, b"b")])
    assert transcode(huge_gap, 2**31 + 1) is None  # offset delta past int32: the converter splits
    assert transcode(inner_set([(0, 0, None, b"a")] * 3), 2) is not None
    again = LegacyRecordBatchBuilder(1, 0, batch_size=1 << 30)
    for offset in (0, 1, 1):  # offsets that do not grow: verify-crc's walk would refuse the batch
        again.append(offset, timestamp=TS, key=None, value=b"a")
    assert transcode(bytes(again.build()), 1) is None
    compressed = bytearray(data)
    compressed[17] = 1  # an inner message that is itself compressed (its CRC then fails too)
    assert transcode(bytes(compressed), 4) is None


@settings(max_examples=100, deadline=None)
@given(st.lists(_MESSAGE, min_size=1, max_size=6), st.data())
def test_the_comparers_agree_on_damaged_records(specs: list, data: st.DataObject) -> None:  # type: ignore[type-arg]
    inner = inner_set(specs)
    found = transcode(inner, 0)
    records = bytearray(found[0])
    at = data.draw(st.integers(0, len(records) - 1))
    records[at] = data.draw(st.integers(0, 255))
    compare(bytes(records), found, inner, 0)  # the same answer (a length of -2 is a null too)


def test_a_changed_value_byte_is_found_at_its_record() -> None:
    inner = inner_set([(0, i, b"k", b"value-%d" % i) for i in range(5)])
    found = transcode(inner, 0)
    at = found[0].index(b"value-3") + 2
    records = found[0][:at] + b"X" + found[0][at + 1 :]
    assert compare(records, found, inner, 0)[:2] == (3, 3)
    assert compare(found[0] + b"\0", found, inner, 0)[0] == 5  # bytes after the last record


# -- the fast reader and the conversion ------------------------------------------------------------


def _wrapper_segment(path: Path, codec: int = 1, n: int = 30, per: int = 7) -> Path:
    """v1 wrappers of ``per`` messages each (kafka-python's builder), offsets 100.. with a gap."""
    out = bytearray()
    offset = 100
    for w in range(n):
        builder = LegacyRecordBatchBuilder(1, codec, batch_size=1 << 20)
        for i in range(per):
            builder.append(
                i, timestamp=TS + 10 * w + (i * 7) % 5, key=None if i % 3 else b"k%d" % i, value=b"v" * i
            )
        entry = bytearray(builder.build())
        offset += per + (5 if w == n // 2 else 0)
        struct.pack_into(">q", entry, 0, offset - 1)
        out += entry
    path.write_bytes(bytes(out))
    return path


def _segments(tmp_path: Path) -> list[Path]:
    made = [_wrapper_segment(tmp_path / f"w{codec}.log", codec) for codec in (1, 2, 3)]
    return [*made, *sorted(FIXTURES.glob("*.log")), *sorted((FIXTURES / "bad").glob("*.log"))]


class _Taken(NamedTuple):
    position: int
    size: int
    records: bytes
    baseOffset: int
    lastOffset: int
    count: int


def _flat(items: list[Any]) -> list[Any]:
    """The reader's items with each run of wrappers one item per wrapper: (position, size, records,
    baseOffset, lastOffset, record count)."""
    out: list[Any] = []
    for item in items:
        if isinstance(item, TranscodedRun):
            assert item.sizeInBytes == sum(w[1] for w in item.wrappers)
            assert item.recordCount == sum(w[5] for w in item.wrappers)
            at = item.position
            for pos, size, _, _, records, count, first, last, _, _ in item.wrappers:
                assert pos == at  # the run's wrappers follow each other
                at += size
                out.append(_Taken(pos, size, records, first, last, count))
        else:
            out.append(item)
    return out


@pytest.mark.parametrize(
    ("twin", "window"),
    [(RUN_TWINS[-1], 1 << 20), (RUN_TWINS[0], 200)],
    ids=["chosen", "pure-small-window"],
)
def test_the_fast_reader_yields_the_segment_readers_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, twin: Any, window: int
) -> None:
    """Item for item, a run of wrappers standing for their Batches; with a window smaller than an
    entry too (each then read whole)."""
    monkeypatch.setattr(convert_fast, "read_wrappers", twin.read_wrappers)
    monkeypatch.setattr(convert_fast, "_WINDOW", window)
    monkeypatch.setattr(convert_fast, "_RUN", min(window, convert_fast._RUN))
    taken = 0
    segments = _segments(tmp_path)
    if window < convert_fast._WINDOW:  # the small window: the made segments and the fixtures suffice
        segments = [p for p in segments if p.parent.name != "bad"]
    for path in segments:
        try:
            want = list(read_segment(path))
        except KafkaDumpError as exc:
            with pytest.raises(type(exc)):
                list(read_input(path, fast=True, **LIMITS))
            continue
        got = _flat(list(read_input(path, fast=True, **LIMITS)))
        assert len(got) == len(want), path
        for g, w in zip(got, want, strict=True):
            if isinstance(g, _Taken):
                taken += 1
                assert isinstance(w, Batch) and w.records and w.magic == 1, path
                assert (g[0], g[1], g[5]) == (w.position, w.sizeInBytes, len(w.records))
                first = w.records[0]
                body = _pure_encoder.encode_v2_records(w.records, first.offset, first.timestamp, False)
                assert g[2:5] == (body, first.offset, w.records[-1].offset), path
            else:
                assert g == w, path
    assert taken >= 90  # the made segments, and the v1 fixtures' wrappers


def test_the_run_twins_agree_on_every_segment(tmp_path: Path) -> None:
    """read_wrappers and write_wrappers, pure and compiled, at every entry start of every segment
    (the bad corpus included) and with the window cut short, then written to every codec."""
    if len(RUN_TWINS) < 2:
        pytest.skip("no compiled twin")
    inflate = convert_fast.inflater(DEFAULT_MAX_BATCH_BYTES)
    compared = 0
    for path in _segments(tmp_path):
        data = path.read_bytes()
        try:
            starts = {i.position for i in read_segment(path)}
        except KafkaDumpError:
            starts = set()
        for pos in sorted({0, *starts, *(p + 1 for p in starts), *range(0, min(len(data), 200), 13)}):
            for end, run in ((len(data), 1 << 30), (min(len(data), pos + 150), 1 << 30), (len(data), 1)):
                answers = []
                for twin in RUN_TWINS:
                    try:
                        answers.append(
                            twin.read_wrappers(
                                data, pos, end, 7, 1 << 20, 1000, run, inflate, _pure_encoder.v1_inner_to_v2
                            )
                        )
                    except Exception as exc:  # the same exception from both, if any
                        answers.append(type(exc))
                assert answers[0] == answers[1], (path, pos, end, run)
                if isinstance(answers[0], tuple) and answers[0][3]:
                    compared += 1
                    items = answers[0][3]
                    for codec in (0, 1, 2, 3, 4) if compared < 40 else (0, 3):
                        squeeze = convert_run.compressor(Compression(codec))
                        written = [
                            twin.write_wrappers(
                                items, codec, squeeze, inflate, crc32c, _recheck_pure.same_as_v1_inner, last
                            )
                            for twin in RUN_TWINS
                            for last in (None, items[0][6] - 1, items[0][6])
                        ]
                        assert written[:3] == written[3:], (path, pos, codec)
                        assert written[0][3] is None and written[1][3] is None
                        assert written[2][3] is not None and written[2][3][:2] == (0, 0)  # not after itself
    assert compared >= 50


def _convert(src: Path, dst: Path, options: ConvertOptions, **kw: Any) -> tuple[str, Any]:
    try:
        report = convert_segment(src, dst, options, **kw)
    except KafkaDumpError as exc:
        return "error", (type(exc).__name__, str(exc).replace(str(dst), "OUT"))
    files = sorted(p.name for p in dst.parent.iterdir())
    data = {name: (dst.parent / name).read_bytes() for name in files}
    return "ok", (report.before, report.after, report.changes, report.skipped, report.tail, data)


def _old(path: Path) -> bool:
    """Does the segment start with a v0/v1 entry, or hold one (the fast path's ground)?"""
    head = path.read_bytes()[:17]
    return (len(head) == 17 and head[16] < 2) or any(
        isinstance(b, Batch) and b.magic < 2 for b in read_segment(path) if not isinstance(b, Problem)
    )


@pytest.mark.parametrize(
    "options",
    [ConvertOptions(compression=Compression.LZ4), ConvertOptions(compression=Compression.NONE, timestamp=7)],
)
def test_a_conversion_is_the_same_with_the_fast_path_as_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: ConvertOptions
) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # the same bytes either way; durability aside
    segments = []
    for src in _segments(tmp_path):
        try:
            if _old(src):
                segments.append(src)
        except KafkaDumpError:
            segments.append(src)
    assert len(segments) >= 20
    for i, src in enumerate(segments):
        for skip in (False, True):
            outcomes = []
            for fast in (True, False):
                monkeypatch.setattr(Converter, "transcodes", property(lambda self, fast=fast: fast))
                out = tmp_path / f"out-{i}-{skip}-{fast}"
                out.mkdir()
                outcomes.append(_convert(src, out / "00000000000000000000.log", options, skip_corrupt=skip))
            assert outcomes[0] == outcomes[1], src


def _tampered_run(src: Path, tmp_path: Path) -> Any:
    from click.testing import CliRunner

    from kafka_dump.cli import main

    out = tmp_path / "out"
    out.mkdir()
    result = CliRunner().invoke(main, ["convert", str(src), "-o", str(out / "x.log"), "--compression", "lz4"])
    return result, out


def test_a_fast_batch_that_does_not_hold_its_wrappers_records_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _wrapper_segment(tmp_path / "in.log")
    real = convert_run._squeezer

    def tampered(codec: Compression, level: int | None) -> Any:
        """One byte of the last record's value changed before compression: CRC valid, record wrong."""
        squeeze = real(codec, level)
        return lambda data: squeeze(data[:-2] + bytes([data[-2] ^ 1]) + data[-1:])

    monkeypatch.setattr(convert_run, "_squeezer", tampered)
    result, out = _tampered_run(src, tmp_path)
    assert result.exit_code == 1, result.output
    assert "verification failed" in result.stderr and "differs" in result.stderr
    assert os.listdir(out) == []


@pytest.mark.parametrize("lie", ["max_timestamp", "last_offset", "count"])
def test_a_transcoder_that_lies_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lie: str) -> None:
    src = _wrapper_segment(tmp_path / "in.log")
    real = convert_fast._twins.v1_inner_to_v2

    def lying(data: bytes, wrapper_offset: int, max_records: int) -> Any:
        found = real(data, wrapper_offset, max_records)
        if found is None:
            return None
        records, count, first, last, base_ts, max_ts = found
        if lie == "max_timestamp":
            return records, count, first, last, base_ts, max_ts - 1
        if lie == "last_offset":
            return records, count, first, last + 1, base_ts, max_ts
        return records, count - 1, first, last, base_ts, max_ts

    monkeypatch.setattr(convert_fast._twins, "v1_inner_to_v2", lying)
    result, out = _tampered_run(src, tmp_path)
    assert result.exit_code == 1, result.output
    assert "verification failed" in result.stderr
    assert os.listdir(out) == []


def test_a_pipe_input_is_read_the_slow_way(tmp_path: Path) -> None:
    src = _wrapper_segment(tmp_path / "in.log")
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    import threading

    writer = threading.Thread(target=lambda: fifo.write_bytes(src.read_bytes()))
    writer.start()
    got = list(read_input(fifo, fast=True, **LIMITS))
    writer.join()
    assert [i._replace(file="") for i in got] == [i._replace(file="") for i in read_segment(src)]


def test_gzip_wrappers_of_the_fixture_are_taken(tmp_path: Path) -> None:
    src = tmp_path / "00000000000000000000.log"
    shutil.copy(FIXTURES / "v1-gzip.log", src)
    items = list(read_input(src, fast=True, **LIMITS))
    assert any(isinstance(i, TranscodedRun) for i in items)


def test_record_offsets_that_do_not_grow_fail_the_verification(tmp_path: Path) -> None:
    """Plain v1 messages at offsets 0, 0, 1 group into one v2 batch that verify-crc refuses."""
    out = bytearray()
    for offset in (0, 0, 1):
        builder = LegacyRecordBatchBuilder(1, 0, batch_size=1 << 20)
        builder.append(offset, timestamp=TS, key=None, value=b"v")
        out += builder.build()
    src = tmp_path / "in.log"
    src.write_bytes(bytes(out))
    dst = tmp_path / "out" / "00000000000000000000.log"
    dst.parent.mkdir()
    with pytest.raises(convert_run.VerificationError, match="do not grow"):
        convert_segment(src, dst, ConvertOptions(), index=False)
    assert os.listdir(dst.parent) == []


def _gunzip_or_error(payload: bytes, limit: int) -> Any:
    """codecs' own gzip reader, which the compiled gunzip stands in front of."""
    try:
        return codecs._gunzip(payload, limit)
    except (KafkaDumpError, zlib.error, EOFError) as exc:
        return type(exc), str(exc)


@pytest.mark.skipif(_transcode is None, reason="no compiled twin")
def test_the_compiled_gunzip_gives_codecs_bytes_or_declines() -> None:
    """Sound single members (Java's header, Python's gzip module's, with bytes trailing) come out as
    codecs inflates them; anything it cannot vouch for (a cut, a changed byte, a further member, a
    header CRC) is None, left to codecs, never other bytes; a member past the limit is False."""
    import gzip as gz
    import random

    rnd = random.Random(5)
    taken = refused = 0
    for n in (0, 1, 100, 4000, 70_000):
        data = bytes(rnd.getrandbits(8) for _ in range(n // 2)) + b"abc" * (n // 6)
        java = compress(Compression.GZIP, data)
        named = gz.compress(data, mtime=0)
        hcrc = bytearray(java)
        hcrc[3] |= 0x02
        payloads = [java, named, java + b"\x00junk", java + java, java + b"\x1f", bytes(hcrc)]
        payloads += [java[:cut] for cut in range(0, len(java), max(1, len(java) // 40))]
        for _ in range(30):
            flipped = bytearray(java)
            flipped[rnd.randrange(len(flipped))] ^= 1 << rnd.randrange(8)
            payloads.append(bytes(flipped))
        for payload in payloads:
            for limit in (len(data), len(data) - 1, 1 << 20):
                if limit < 0:
                    continue
                got = _transcode.gunzip(memoryview(payload), limit)
                want = _gunzip_or_error(payload, limit)
                if got is False:  # past the limit: codecs says so without a second pass
                    refused += 1
                    assert want == (CompressionError, str(codecs._too_big(limit)))
                elif got is not None:
                    taken += 1
                    assert got == want
        for payload in (java, named, java + b"\x00junk"):
            assert _transcode.gunzip(payload, 1 << 20) == data
    assert taken > 15 and refused > 5


class _Recording(convert_fast.Inline):
    """The plain source, noting the calls: a window's start, its finish, and the close."""

    def __init__(self) -> None:
        super().__init__(DEFAULT_MAX_BATCH_BYTES)
        self.calls: list[str] = []

    def start(self, window: bytearray, pos: int, end: int) -> Any:
        assert not self.calls or self.calls[-1] == "finish"
        self.calls.append("start")
        inflate = super().start(window, pos, end)

        def noted(codec: int, payload: memoryview) -> bytes:
            self.calls.append("inflate")
            return inflate(codec, payload)

        return noted

    def finish(self) -> None:
        self.calls.append("finish")

    def close(self) -> None:
        self.calls.append("close")


def test_a_source_of_inflated_wrappers_sees_each_window_start_and_finish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plug for a source that inflates ahead: every wrapper inflated through it, each window
    started and finished before the next, closed at the end (also when the reading stops early)."""
    monkeypatch.setattr(convert_fast, "_WINDOW", 1000)
    monkeypatch.setattr(convert_fast, "_RUN", 300)
    src = _wrapper_segment(tmp_path / "in.log", n=20)
    source = _Recording()
    got = list(read_input(src, fast=True, inflating=source, **LIMITS))
    assert got == list(read_input(src, fast=True, **LIMITS))
    assert source.calls.count("inflate") == 20 and source.calls[-2:] == ["finish", "close"]
    assert source.calls.count("start") == source.calls.count("finish") > 2
    early = _Recording()
    items = read_input(src, fast=True, inflating=early, **LIMITS)
    next(items)
    items.close()
    assert early.calls[-2:] == ["finish", "close"]


@pytest.mark.parametrize("twin", RUN_TWINS, ids=lambda m: m.__name__)
def test_the_lz4_frame_twins_are_codecs_frames(twin: Any) -> None:
    """lz4_frame writes codecs' bytes at every size (one block or several, raw where lz4 does not
    shrink it); unlz4_frame reads a one-block frame as codecs does, and gives None, never other
    bytes, for anything else (several blocks, a cut, a changed byte, a small limit)."""
    import random

    from kafka_dump.wire import codecs

    rnd = random.Random(3)
    header = codecs.lz4_frame_header(2)
    read = 0
    for n in (0, 1, 15, 300, 65_535, 65_536, 65_537, 140_000):
        for data in (bytes(rnd.getrandbits(8) for _ in range(n)), b"kafka" * (n // 5)):
            frame = twin.lz4_frame(header, data)
            assert frame == codecs.compress(Compression.LZ4, data)
            payloads = [frame, frame[:-1], frame[: len(frame) // 2]]
            for _ in range(10):
                if len(frame) > 12:
                    changed = bytearray(frame)
                    changed[rnd.randrange(7, len(frame))] ^= 1 << rnd.randrange(8)
                    payloads.append(bytes(changed))
            for payload in payloads:
                for limit in (1 << 20, 65_536, 1000):
                    got = twin.unlz4_frame(header, memoryview(payload), limit)
                    if got is not None:
                        read += 1
                        assert got == decompress(Compression.LZ4, payload, limit)
    assert read >= 10
