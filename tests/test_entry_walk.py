"""The entry walk (``walk_entries``) that ``verify-crc`` runs over sound stretches of a segment.

Two differentials: the compiled twin agrees with the pure reference on every input (whole result and
the index rows), and ``verify-crc`` with the walk reports exactly what it reports with the walk
turned off (every entry then read the slow way, by the segment reader): every problem, its position,
the counts. Shallow on v0/v1 compressed wrappers differs by design (README "verify-crc": the header
holds only the last offset), so there it may only report less, never something else.
"""

from __future__ import annotations

import itertools
import os
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafka_dump.wire as twins
from kafka_dump.analysis.verify import FileReport, VerifyOptions, verify_file
from kafka_dump.model import Compression, Problem
from kafka_dump.wire import _walk_pure
from kafka_dump.wire.checksum import crc32c
from kafka_dump.wire.codecs import decompress

from .batches import (
    GZIP,
    LZ4,
    SNAPPY,
    default_records,
    legacy_messages,
    legacy_records,
    raw_record,
    raw_v2_batch,
    v2_batch,
)
from .conftest import FIXTURES, SHARED_REAL, reference_module

walk_c = pytest.importorskip("kafka_dump.native._native")
_walk_pure = reference_module(_walk_pure)

NAME = "00000000000000000000.log"


def _unpack(codec: int, payload: memoryview) -> bytes:
    return decompress(Compression(codec), payload, 1 << 20)


def _both(data: bytes, *, deep: bool, last: int | None = None, damage: bool = False, max_records: int = 1000,
          limit: int = 1 << 22, pos: int = 0, end: int | None = None, file_end: int | None = None,
          trust: bool = False) -> tuple[object, list[tuple[int, ...]]]:  # fmt: skip
    out = []
    for twin in (_walk_pure, walk_c):
        rows: list[tuple[int, ...]] = []
        got = twin.walk_entries(
            data,
            pos,
            len(data) if end is None else end,
            100,
            deep,
            last,
            damage,
            max_records,
            limit,
            None if trust else crc32c,
            None if trust else zlib.crc32,
            _unpack,
            rows,
            file_end,
        )
        out.append((got, rows))
    assert out[0] == out[1]
    return out[0]


def _marker() -> bytes:
    import struct

    return raw_record(key=struct.pack(">hh", 0, 1), value=struct.pack(">hi", 0, 3))


def mixed_segment() -> bytes:
    """Every kind of entry the walk takes or declines, back to back, offsets increasing."""
    parts = [
        v2_batch(default_records(3, seed=1), base_offset=0),
        v2_batch(default_records(3, seed=2, compressible=True), codec=LZ4, base_offset=3),
        v2_batch(default_records(2, seed=3, compressible=True), codec=SNAPPY, base_offset=10),  # a gap
        raw_v2_batch(_marker(), 1, attributes=0x30, base_offset=12),  # a control batch
        legacy_messages(legacy_records(2), magic=1, base_offset=13),
        legacy_messages(legacy_records(3, seed=1), magic=1, codec=GZIP, base_offset=15),
        legacy_messages(legacy_records(2, seed=2), magic=0, codec=SNAPPY, base_offset=18),
        legacy_messages(legacy_records(2, seed=3), magic=0, base_offset=25),
    ]
    return b"".join(parts)


SEGMENTS = {
    "mixed": mixed_segment,
    "v2": lambda: b"".join(v2_batch(default_records(3, seed=i), base_offset=3 * i) for i in range(3)),
    "v1-gzip": lambda: b"".join(
        legacy_messages(legacy_records(3, seed=i), magic=1, codec=GZIP, base_offset=3 * i) for i in range(3)
    ),
}


# --- the twins ---------------------------------------------------------------------------------------------------


def _no_crc(_data: memoryview) -> int:
    raise AssertionError("a walk of headers computes no CRC")


@pytest.mark.parametrize("name", sorted(SEGMENTS))
def test_twins_agree_reading_headers_only(name: str) -> None:
    """Headers only (``ls``): every entry is taken from its header alone, each row says what the
    shallow walk's row says, and a window cut anywhere stops the walk where a header is cut."""
    data = SEGMENTS[name]()
    shallow, shallow_rows = _both(data, deep=False)
    whole, rows = _both(data, deep=True, file_end=len(data))
    assert whole == shallow and rows == shallow_rows
    for cut in range(len(data) + 1):
        (used, batches, *_), got = _both(data, deep=False, end=cut, file_end=len(data))  # type: ignore[misc]
        assert got == rows[:batches]
        assert batches == len(rows) or cut - used < (61 if data[used + 16] == 2 else 34)
        # The window's buffer itself ends at the cut (a short read): the same, and no byte past it read.
        assert _both(data[:cut], deep=False, file_end=len(data))[1] == got
    for end in range(len(data)):  # a file cut short: the last entry is not taken
        (_, batches, *_), _rows = _both(data[:end], deep=False, file_end=end)  # type: ignore[misc]
        assert batches == sum(r[0] - 100 + r[4] <= end for r in rows)
    for twin in (_walk_pure, walk_c):
        assert twin.walk_entries(
            data,
            0,
            len(data),
            0,
            False,
            None,
            False,
            1000,
            1 << 22,
            _no_crc,
            _no_crc,
            _unpack,
            None,
            len(data),
        )[1] == len(rows)


def _large_and_small() -> bytes:
    """Past the window a read takes (256 KiB): small entries (read by the window) and large ones (one
    header read each, once a large one is taken), v2 and v0/v1, in turns."""
    big = [(b"k", bytes(range(250)) * 96, [])]
    parts = []
    for i in range(8):
        parts.append(v2_batch(default_records(2, seed=i), base_offset=10 * i))
        parts.append(v2_batch(big, base_offset=10 * i + 2))
        parts.append(legacy_messages([(b"k", bytes(20_000))], magic=1, base_offset=10 * i + 3))
        parts.append(legacy_messages(legacy_records(2, seed=i), magic=i % 2, base_offset=10 * i + 4))
        parts.append(legacy_messages([(b"k", bytes(7000))], magic=0, codec=GZIP, base_offset=10 * i + 6))
    return b"".join(parts)


def _from_file(path: Path, data: bytes, *, size: int | None = None, pos: int = 0, last: int | None = None,
               max_entries: int | None = None) -> tuple[object, list[tuple[int, ...]]]:  # fmt: skip
    """Both twins' walk of ``data`` written to ``path`` and read by its descriptor, as ``ls`` does:
    from ``pos`` to ``size`` (the file's size when opened; by default its size now)."""
    path.write_bytes(data)
    end = len(data) if size is None else size
    fd = os.open(path, os.O_RDONLY)
    try:
        out = []
        for twin in (_walk_pure, walk_c):
            rows: list[tuple[int, ...]] = []
            got = twin.walk_entries(
                fd, pos, end, 100, False, last, False, 1000, 1 << 22, _no_crc, _no_crc, _unpack, rows, end,
                max_entries,
            )  # fmt: skip
            out.append((got, rows))
    finally:
        os.close(fd)
    assert out[0] == out[1]
    return out[0]


_HEADER = {0: 26, 1: 34, 2: 61}  # the bytes of a header of each magic, the log entry's included
FILES = {**SEGMENTS, "large-and-small": _large_and_small, "long-messages": lambda: _long_messages()}


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_walk_of_a_file_takes_what_a_walk_of_its_bytes_takes(name: str, tmp_path: Path) -> None:
    """Given a file descriptor, each twin reads the file itself (a window, or one header after a large
    entry) and takes exactly the entries the headers-only walk of the file's bytes takes: the file
    whole, each byte flipped, the file cut short (and its size as cut), the file shrunk under the walk
    (its size as it was opened), a walk from a later entry, and a walk of at most N entries."""
    data = FILES[name]()
    path = tmp_path / NAME
    whole = _both(data, deep=False, file_end=len(data))
    assert _from_file(path, data) == whole and whole[0][0] == len(data)  # type: ignore[index]
    rows = whole[1]
    step = max(1, len(data) // 1500)
    headers = {
        r[0] - 100 + i for r in rows for i in range(_HEADER[r[5]] + 1)
    }  # each header's bytes, and one past
    for at in sorted(headers.union(range(0, len(data), step)) - {len(data)}):
        damaged = bytearray(data)
        damaged[at] ^= 0x11 if at % 2 else 0x80
        assert _from_file(path, bytes(damaged)) == _both(bytes(damaged), deep=False, file_end=len(data))
    for cut in sorted(headers.union(range(0, len(data), step))):
        assert _from_file(path, data[:cut]) == _both(data[:cut], deep=False, file_end=cut)
        shrunk = _from_file(path, data[:cut], size=len(data))
        assert shrunk == _both(data[:cut], deep=False, file_end=len(data))
        assert shrunk[1] == [r for r in rows if r[0] - 100 + _HEADER[r[5]] <= cut]  # each header read whole
    for i, row in enumerate(rows):
        (used, batches, *_), later = _from_file(
            path, data, pos=row[0] - 100, last=rows[i - 1][2] if i else None
        )  # type: ignore[misc]
        assert later == rows[i:] and used == len(data) - (row[0] - 100) and batches == len(rows) - i
    for k in range(len(rows) + 1):
        (used, batches, *_), first = _from_file(path, data, max_entries=k)  # type: ignore[misc]
        assert first == rows[:k] and batches == k and used == sum(r[4] for r in rows[:k])
        assert _both(data, deep=False, file_end=len(data))[1][:k] == first


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.binary(max_size=200),
    st.integers(min_value=0, max_value=40),
    st.integers(min_value=-100, max_value=100),
    st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1)),
)
def test_twins_agree_on_arbitrary_files(
    tmp_path: Path, tail: bytes, cut: int, grown: int, last: int | None
) -> None:
    """Any bytes, read from a file whose size when opened was ``grown`` bytes off its size now (it
    shrank, or grew)."""
    data = SEGMENTS["mixed"]()[: cut * 40] + tail
    size = max(0, len(data) + grown)
    got = _from_file(tmp_path / NAME, data, size=size, last=last)
    assert got == _both(data[:size], deep=False, last=last, file_end=size)  # nothing read past size


@pytest.mark.parametrize("deep", [True, False], ids=["deep", "shallow"])
def test_at_most_max_entries_are_taken_from_a_buffer(deep: bool) -> None:
    data = mixed_segment()
    _, rows = _both(data, deep=deep)
    for k in range(len(rows) + 1):
        out = []
        for twin in (_walk_pure, walk_c):
            got: list[tuple[int, ...]] = []
            args = (
                data,
                0,
                len(data),
                100,
                deep,
                None,
                False,
                1000,
                1 << 22,
                crc32c,
                zlib.crc32,
                _unpack,
                got,
            )
            out.append((twin.walk_entries(*args, None, k), got))
        assert out[0] == out[1] and out[0][1] == rows[:k] and out[0][0][1] == k


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="no /proc/self/io here")
def test_a_walk_of_a_file_of_large_entries_reads_their_headers_alone(tmp_path: Path) -> None:
    big = [(b"k", bytes(range(250)) * 200, [])]
    data = b"".join(v2_batch(big, base_offset=i) for i in range(100))
    path = tmp_path / NAME
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        for twin in (_walk_pure, walk_c):
            before = _rchar()
            used, batches, *_ = twin.walk_entries(
                fd, 0, len(data), 0, False, None, False, 1000, 1 << 22, None, None, _unpack, None, len(data)
            )
            read = _rchar() - before
            assert (used, batches) == (len(data), 100) and read < 0.02 * len(data), twin
    finally:
        os.close(fd)


def _rchar() -> int:
    """Bytes this process has read through system calls (``/proc/self/io``)."""
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["rchar"])


def test_a_walk_of_a_file_needs_its_end(tmp_path: Path) -> None:
    path = tmp_path / NAME
    path.write_bytes(mixed_segment())
    fd = os.open(path, os.O_RDONLY)
    try:
        for twin in (_walk_pure, walk_c):
            for bad in ((fd, 0, 10, None), (-1, 0, 10, 10), (fd, 5, 4, 10), (fd, -1, 4, 10)):
                f, pos, end, file_end = bad
                with pytest.raises(ValueError, match="a walk of a file"):
                    twin.walk_entries(
                        f, pos, end, 0, False, None, False, 1, 1, None, None, _unpack, None, file_end
                    )
    finally:
        os.close(fd)
    for twin in (_walk_pure, walk_c):  # a closed descriptor: the system's error
        with pytest.raises(OSError):
            twin.walk_entries(fd, 0, 10, 0, False, None, False, 1, 1 << 20, None, None, _unpack, None, 10)


def test_rows_say_what_the_headers_say() -> None:
    _, rows = _both(mixed_segment(), deep=False, file_end=len(mixed_segment()))
    # (position, base, last, maxTimestamp, size, magic, attributes, first timestamp, records, producerId)
    magics = [r[5] for r in rows]
    assert magics == [2, 2, 2, 2, 1, 1, 1, 0, 0, 0]
    assert [r[6] & 7 for r in rows] == [0, LZ4, SNAPPY, 0, 0, 0, GZIP, SNAPPY, 0, 0]
    assert rows[3][6] & 0x30 == 0x30  # the control batch: transactional and control
    assert [r[8] for r in rows] == [3, 3, 2, 1, 1, 1, -1, -1, 1, 1]  # a wrapper's count is in its payload
    assert all(r[4] > 0 for r in rows) and sum(r[4] for r in rows) == len(mixed_segment())


@pytest.mark.parametrize("deep", [True, False], ids=["deep", "shallow"])
def test_twins_agree_on_a_mixed_segment(deep: bool) -> None:
    data = mixed_segment()
    (used, batches, records, gaps, last, _damage), rows = _both(data, deep=deep)  # type: ignore[misc]
    if deep:  # stops at the control batch, whose record is decoded the slow way
        assert (batches, records, gaps, last) == (3, 8, 1, 11)
    else:
        assert (used, batches, gaps, last) == (len(data), 10, 2, 26)  # 3..10, and 19..25
        assert records == 3 + 3 + 2 + 1 + 2 + 0 + 0 + 2  # a wrapper's records are not counted shallow
    assert len(rows) == batches and rows[0][:4] == (100, 0, 2, 1_700_000_000_002)
    assert all(a[0] < b[0] and a[2] < b[2] for a, b in itertools.pairwise(rows))


@pytest.mark.parametrize("name", SEGMENTS)
@pytest.mark.parametrize("deep", [True, False], ids=["deep", "shallow"])
def test_twins_agree_on_every_flipped_byte_and_cut(name: str, deep: bool) -> None:
    data = SEGMENTS[name]()
    for at in range(len(data)):
        damaged = bytearray(data)
        damaged[at] ^= 0x11 if at % 2 else 0x80
        _both(bytes(damaged), deep=deep)
    for cut in range(0, len(data), 7):
        _both(data[:cut], deep=deep, last=5, damage=True, max_records=2)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.binary(max_size=200),
    st.booleans(),
    st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1)),
    st.integers(min_value=0, max_value=40),
)
def test_twins_agree_on_arbitrary_bytes(tail: bytes, deep: bool, last: int | None, cut: int) -> None:
    data = SEGMENTS["mixed"]()[: cut * 40] + tail
    _both(data, deep=deep, last=last)


def _long_messages() -> bytes:
    """v0/v1 entries whose CRC-32 covers many KiB (the compiled walk folds them; zlib or tables without
    PCLMULQDQ): plain messages and wrappers of incompressible values, around the old 4 KiB threshold."""
    import random

    rnd = random.Random(7)
    parts = []
    offset = 0
    for size in (4000, 4095, 4096, 4097, 9000, 20_001):
        value = rnd.randbytes(size)
        parts.append(legacy_messages([(b"k", value)], magic=1, base_offset=offset))
        parts.append(legacy_messages([(None, value[:size // 2]), (b"k", value)], magic=0, codec=GZIP,
                                     base_offset=offset + 1))  # fmt: skip
        offset += 3
    return b"".join(parts)


@pytest.mark.parametrize("deep", [True, False], ids=["deep", "shallow"])
def test_twins_agree_on_long_messages_and_find_each_flipped_byte(deep: bool) -> None:
    data = _long_messages()
    (used, batches, *_), _rows = _both(data, deep=deep, max_records=10**6)  # type: ignore[misc]
    assert (used, batches) == (len(data), 12)
    step = len(data) // 61
    for at in range(40, len(data), step):
        damaged = bytearray(data)
        damaged[at] ^= 0x04
        (used, *_), _rows = _both(bytes(damaged), deep=deep, max_records=10**6)  # type: ignore[misc]
        assert used <= at  # the walk stops before the entry whose CRC the flip breaks


def test_rows_hold_each_entry_header_and_trusted_crcs_are_not_computed() -> None:
    data = mixed_segment()
    _, rows = _both(data, deep=False)
    first, legacy = rows[0], rows[4]
    size = len(v2_batch(default_records(3, seed=1), base_offset=0))
    # size, magic, attributes, baseTimestamp, count, producer id; stored CRC, leader epoch, producer
    # epoch and sequence
    assert first[4:10] == (size, 2, 0, 1_700_000_000_000, 3, -1) and first[11:] == (0, -1, -1)
    assert first[10] == int.from_bytes(data[17:21], "big")
    assert legacy[5:7] == (1, 0) and legacy[8:10] == (1, -1) and legacy[11:] == (-1, -1, -1)
    flipped = bytearray(data)
    flipped[size - 1] ^= 0x01  # the last byte of the first batch's records: only its CRC sees it
    (used, *_), _ = _both(bytes(flipped), deep=False)  # type: ignore[misc]
    assert used == 0
    (used, *_), trusted = _both(bytes(flipped), deep=False, trust=True)  # type: ignore[misc]
    assert used == len(data) and trusted == rows


@pytest.mark.parametrize("name", SEGMENTS)
def test_twins_agree_with_trusted_crcs_on_every_flipped_byte(name: str) -> None:
    data = SEGMENTS[name]()
    for at in range(len(data)):
        damaged = bytearray(data)
        damaged[at] ^= 0x11 if at % 2 else 0x80
        _both(bytes(damaged), deep=False, trust=True)
        _both(bytes(damaged), deep=True, trust=True)


def test_bad_arguments_raise_alike() -> None:
    for twin in (_walk_pure, walk_c):
        with pytest.raises(ValueError, match="0 <= pos <= end"):
            twin.walk_entries(b"abc", 0, 4, 0, True, None, False, 1, 1, crc32c, zlib.crc32, _unpack, None)


# --- verify-crc with and without the walk ------------------------------------------------------------------------


def _declined(data: object, pos: int, end: int, file_pos: int, deep: bool, last: int | None, damage: bool,
              *rest: object) -> tuple[int, int, int, int, int | None, bool]:  # fmt: skip
    return (0, 0, 0, 0, last, damage)


def _events(
    path: Path, monkeypatch: pytest.MonkeyPatch, *, walk: bool, deep: bool, resume: int = 0
) -> list[object]:
    with monkeypatch.context() as m:
        if not walk:
            m.setattr(twins, "walk_entries", _declined)
        # After damage the segment reader hands back to the walk after `resume` sound bytes: 0 here,
        # so that the hand-overs are many even in these small files.
        m.setattr("kafka_dump.analysis.verify._RESUME_AFTER", resume)
        return list(verify_file(path, VerifyOptions(deep=deep, index=True)))


def _same(path: Path, monkeypatch: pytest.MonkeyPatch, *, deep: bool, wrappers: bool) -> None:
    fast = _events(path, monkeypatch, walk=True, deep=deep)
    _agree(fast, _events(path, monkeypatch, walk=True, deep=deep, resume=1 << 62), path, deep, wrappers)
    _agree(fast, _events(path, monkeypatch, walk=False, deep=deep, resume=1 << 62), path, deep, wrappers)


def _agree(fast: list[object], slow: list[object], path: Path, deep: bool, wrappers: bool) -> None:
    if deep or not wrappers:
        assert fast == slow, path
        return
    # Shallow over wrappers: no problem the slow way lacks; the same CRC failures and bad regions.
    fast_p = [e for e in fast if isinstance(e, Problem)]
    slow_p = [e for e in slow if isinstance(e, Problem)]
    assert set(fast_p) <= set(slow_p), path
    f, s = fast[-1], slow[-1]
    assert isinstance(f, FileReport) and isinstance(s, FileReport)
    assert (f.batches, f.records, f.crcErrors, f.badRegions, f.tail, f.error) == (
        s.batches, s.records, s.crcErrors, s.badRegions, s.tail, s.error), path  # fmt: skip


@pytest.mark.parametrize("name", SEGMENTS)
@pytest.mark.parametrize("deep", [True, False], ids=["deep", "shallow"])
def test_verify_with_and_without_the_walk_on_flipped_bytes(
    name: str, deep: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = SEGMENTS[name]()
    path = tmp_path / NAME
    for at in range(0, len(data), 5):
        damaged = bytearray(data)
        damaged[at] ^= 0x24
        path.write_bytes(bytes(damaged) + (b"\x00" * 20 if at % 3 == 0 else b""))
        _same(path, monkeypatch, deep=deep, wrappers=name != "v2")


def _fixture_logs() -> list[Path]:
    logs = sorted(FIXTURES.glob("*.log")) + sorted((FIXTURES / "bad").glob("*.log"))
    if SHARED_REAL.is_dir():
        logs += sorted(p for p in SHARED_REAL.rglob("*") if p.suffix in (".log", ".checkpoint"))
    return logs


@pytest.mark.parametrize("path", _fixture_logs(), ids=lambda p: p.name)
@pytest.mark.parametrize("deep", [True, False], ids=["deep", "shallow"])
def test_verify_with_and_without_the_walk_on_fixtures(
    path: Path, deep: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    _same(path, monkeypatch, deep=deep, wrappers=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=120), st.integers(min_value=0, max_value=30), st.booleans())
def test_verify_with_and_without_the_walk_on_arbitrary_tails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: bytes, cut: int, deep: bool
) -> None:
    path = tmp_path / NAME
    path.write_bytes(SEGMENTS["mixed"]()[: cut * 50] + tail)
    _same(path, monkeypatch, deep=deep, wrappers=True)


def test_a_wrapper_out_of_order_is_found_shallow(tmp_path: Path) -> None:
    """Shallow still checks a wrapper's last offset (its header's) against the entry before it."""
    data = v2_batch(default_records(3), base_offset=10) + legacy_messages(
        legacy_records(3), magic=1, codec=GZIP, base_offset=5
    )
    path = tmp_path / NAME
    path.write_bytes(data)
    problems = [e for e in verify_file(path, VerifyOptions(deep=False)) if isinstance(e, Problem)]
    assert [p.check for p in problems] == ["offset-order"]


def test_shallow_decompresses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A sound segment of wrappers and compressed batches is checked shallow without one decompression
    (README "verify-crc": what shallow leaves out); deep decompresses every one."""
    import kafka_dump.wire.codecs as codecs

    calls: list[int] = []
    real = codecs.decompress

    def counting(codec: Compression, data: bytes | memoryview, limit: int) -> bytes:
        calls.append(int(codec))
        return real(codec, data, limit)

    monkeypatch.setattr(codecs, "decompress", counting)
    monkeypatch.setattr("kafka_dump.analysis.verify.decompress", counting)
    path = tmp_path / NAME
    path.write_bytes(mixed_segment())
    shallow = list(verify_file(path, VerifyOptions(deep=False)))
    assert calls == [] and not any(isinstance(e, Problem) for e in shallow)
    # Inline: inflated ahead, the gzip payload would come from the compiled engine, not through codecs.
    deep = list(verify_file(path, VerifyOptions(deep=True, inflate_ahead=False)))
    assert sorted(calls) == [GZIP, SNAPPY, SNAPPY, LZ4] and not any(isinstance(e, Problem) for e in deep)
    report = deep[-1]
    assert isinstance(report, FileReport) and report.records == 3 + 3 + 2 + 1 + 2 + 3 + 2 + 2
