"""Inflate ahead (``log/ahead.py``): payloads decompressed on the compiled engine's thread for the readers.

The spans the framing scan finds (``compressed_spans`` below, the reference of the engine's scan) are
exactly the payloads the walk asks for (both twins, in order, on clean, flipped and cut segments);
``verify-crc --deep`` reports the same with and without inflating ahead, on the fixtures and damaged
segments, read in small windows so that the windows and hand-overs are many; the thread's life: none
left after a closed generator or an interrupt. Last, the same differential for the readers that take
the ``Inflating`` plug: ``read_segment`` (dump, the decoder), the stats walk and convert's reader,
``Ahead`` against ``Inline``. Without the compiled engine (``KDUMP_PURE``) ``Ahead`` is ``Inline``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import zlib
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_dump import native
from kafka_dump.analysis.verify import VerifyOptions, verify_file
from kafka_dump.errors import KafkaDumpError
from kafka_dump.log import ahead as ahead_mod
from kafka_dump.model import Compression
from kafka_dump.wire import _walk_pure
from kafka_dump.wire import layout as L
from kafka_dump.wire.checksum import crc32c
from kafka_dump.wire.codecs import decompress

from .batches import GZIP, default_records, legacy_messages, legacy_records, v2_batch
from .conftest import FIXTURES, reference_module
from .test_entry_walk import SEGMENTS, _fixture_logs

_walk_pure = reference_module(_walk_pure)
try:
    from kafka_dump.native import _native as walk_c

    WALKS = [_walk_pure, walk_c]
except ImportError:  # the compiled twin is optional
    WALKS = [_walk_pure]

NAME = "00000000000000000000.log"


def _unpack(codec: int, payload: memoryview) -> bytes:
    return decompress(Compression(codec), payload, 1 << 20)


COMPILED = native.ACTIVE == "compiled"
needs_engine = pytest.mark.skipif(not COMPILED, reason="the compiled engine is not built or KDUMP_PURE")


def _os_threads() -> int:
    """The process's OS threads: the compiled engine's thread is not a ``threading.Thread``."""
    return len(os.listdir("/proc/self/task"))


def _settled() -> int:
    """The OS threads once earlier tests' threads have left /proc (they leave just after their
    join): the Python threads' count, or whatever it is after 2 seconds."""
    _os_threads_back_to(len(threading.enumerate()))
    return _os_threads()


def _os_threads_back_to(before: int) -> bool:
    """Whether the OS threads are back to ``before``: at once after the engine's join, within a
    moment after a Python thread's (its join returns just before the OS thread ends)."""
    deadline = time.monotonic() + 2
    while _os_threads() != before and time.monotonic() < deadline:
        time.sleep(0.001)
    return _os_threads() == before


# --- the scan finds what the walk asks for ------------------------------------------------------------------------

_PREFIX = L.MAGIC_OFFSET + 1
_V2_CODECS = 4  # the highest codec id of a v2 batch (zstd)
_LEGACY_CODECS = 3  # and of a v0/v1 wrapper (lz4)
_QUIET_ENTRIES = 64  # entries in a row without a compressed payload: the scan gives up
_KEY_AT = (L.LEGACY_HEADER_SIZE, L.LEGACY_HEADER_SIZE + L.INT64.size)  # by magic: v1 has a timestamp


def compressed_spans(
    data: bytes | bytearray, pos: int, end: int, wanted: Container[int] = frozenset({GZIP})
) -> Iterator[tuple[int, int, int]]:
    """(codec, start, length) of the compressed payloads of the entries from ``data[pos]`` on, in file
    order, as the entry walk meets them: each v0/v1 wrapper's value and each v2 batch's records (those
    of a codec not ``wanted`` count as quiet). The scan steps by the entries' size fields and stops
    where an entry is not whole in ``data[pos:end]`` or does not frame, after ``_QUIET_ENTRIES``
    entries in a row with nothing to inflate, or where the walk stops for sure (a control batch, a
    codec it does not take). Only framing is read, no CRC."""
    int32 = L.INT32.unpack_from
    quiet = 0
    while end - pos >= _PREFIX and quiet < _QUIET_ENTRIES:
        entry = L.LOG_OVERHEAD + int32(data, pos + L.LOG_ENTRY_SIZE_OFFSET)[0]
        if entry < L.LOG_OVERHEAD + L.LEGACY_V0_MIN_SIZE or entry > end - pos:
            return
        magic = data[pos + L.MAGIC_OFFSET]
        if magic == 2:
            if entry < L.V2_HEADER_SIZE:
                return
            attributes = data[pos + L.V2_ATTRIBUTES_OFFSET + 1]
            codec = attributes & L.COMPRESSION_MASK
            if attributes & L.CONTROL_BIT or codec > _V2_CODECS:
                return
            if codec:
                quiet = 0 if codec in wanted else quiet + 1
                yield codec, pos + L.V2_HEADER_SIZE, entry - L.V2_HEADER_SIZE
            else:
                quiet += 1
        elif magic < 2:
            codec = data[pos + L.MAGIC_OFFSET + 1] & L.COMPRESSION_MASK
            if codec > _LEGACY_CODECS:
                return
            if codec:
                if entry - L.LOG_OVERHEAD < L.LEGACY_MIN_SIZE[magic]:
                    return
                p = pos + _KEY_AT[magic]
                key = int32(data, p)[0]
                p += L.INT32.size + (key if key > 0 else 0)
                if p + L.INT32.size > pos + entry:
                    return
                value = int32(data, p)[0]
                p += L.INT32.size
                if value < 0 or p + value != pos + entry:
                    return
                quiet = 0 if codec in wanted else quiet + 1
                yield codec, p, value
            else:
                quiet += 1
        else:
            return
        pos += entry


def _asked(walk: object, data: bytes) -> list[tuple[int, bytes]]:
    asked: list[tuple[int, bytes]] = []

    def recording(codec: int, payload: memoryview) -> bytes:
        asked.append((codec, bytes(payload)))
        return _unpack(codec, payload)

    walk.walk_entries(  # type: ignore[attr-defined]
        data, 0, len(data), 0, True, None, False, 1000, 1 << 22, crc32c, zlib.crc32, recording, None
    )
    return asked


def _scan_matches_walk(data: bytes) -> None:
    spans = [(codec, data[start : start + n]) for codec, start, n in compressed_spans(data, 0, len(data))]
    for walk in WALKS:
        asked = _asked(walk, data)
        k = min(len(asked), len(spans))
        assert asked[:k] == spans[:k]


@pytest.mark.parametrize("name", SEGMENTS)
def test_the_scan_finds_the_payloads_the_walk_asks_for(name: str) -> None:
    data = SEGMENTS[name]()
    _scan_matches_walk(data)
    assert len(list(compressed_spans(data, 0, len(data)))) == len(_asked(_walk_pure, data)) or name == "mixed"
    for at in range(len(data)):
        damaged = bytearray(data)
        damaged[at] ^= 0x11 if at % 2 else 0x80
        _scan_matches_walk(bytes(damaged))
    for cut in range(0, len(data), 5):
        _scan_matches_walk(data[:cut])


@pytest.mark.parametrize("path", _fixture_logs(), ids=lambda p: p.name)
def test_the_scan_finds_the_payloads_the_walk_asks_for_in_fixtures(path: Path) -> None:
    _scan_matches_walk(path.read_bytes())


def test_the_scan_gives_up_after_a_run_of_uncompressed_entries() -> None:
    plain = [legacy_messages(legacy_records(1, seed=i), magic=1, base_offset=i) for i in range(70)]
    wrapper = legacy_messages(legacy_records(2), magic=1, codec=GZIP, base_offset=80)
    for data, found in [
        (wrapper + b"".join(plain), 1),
        (b"".join(plain[:63]) + wrapper, 1),
        (b"".join(plain[:64]) + wrapper, 0),
    ]:
        assert len(list(compressed_spans(data, 0, len(data)))) == found


# --- verify-crc --deep with and without it ----------------------------------------------------------------------


def _verify(path: Path, monkeypatch: pytest.MonkeyPatch, *, ahead: bool, window: int) -> list[object]:
    with monkeypatch.context() as m:
        m.setattr("kafka_dump.analysis.verify._WINDOW", window)
        m.setattr("kafka_dump.analysis.verify._RESUME_AFTER", 0)
        m.setattr("kafka_dump.log.ahead.AHEAD_FROM", 0)  # the fixtures are small files
        m.setattr(ahead_mod, "BUDGET", 2000)
        options = VerifyOptions(deep=True, index=True, max_batch_bytes=1 << 20, inflate_ahead=ahead)
        return list(verify_file(path, options))


def _same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for window in (1 << 20, 700):
        without = _verify(path, monkeypatch, ahead=False, window=window)
        assert _verify(path, monkeypatch, ahead=True, window=window) == without, (path, window)


@needs_engine
@pytest.mark.parametrize("path", _fixture_logs(), ids=lambda p: p.name)
def test_verify_with_and_without_inflating_ahead_on_fixtures(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _same(path, monkeypatch)


def _wrappers(n: int) -> bytes:
    return b"".join(
        legacy_messages(legacy_records(3, seed=i), magic=1, codec=GZIP, base_offset=3 * i) for i in range(n)
    ) + v2_batch(default_records(3, seed=1, compressible=True), codec=GZIP, base_offset=3 * n)


def _flipped_wrappers(path: Path) -> Iterator[int]:
    """Write ``_wrappers(6)`` to ``path`` with one byte in every 7 changed in turn, yielding its position."""
    data = _wrappers(6)
    for at in range(0, len(data), 7):
        damaged = bytearray(data)
        damaged[at] ^= 0x24
        path.write_bytes(bytes(damaged))
        yield at


@needs_engine
def test_verify_with_and_without_inflating_ahead_on_flipped_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / NAME
    for _ in _flipped_wrappers(path):
        _same(path, monkeypatch)


@needs_engine
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=120), st.integers(min_value=0, max_value=30))
def test_verify_with_and_without_inflating_ahead_on_arbitrary_tails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: bytes, cut: int
) -> None:
    path = tmp_path / NAME
    path.write_bytes(_wrappers(4)[: cut * 60] + tail + SEGMENTS["mixed"]())
    _same(path, monkeypatch)


# --- the thread's life ------------------------------------------------------------------------------------------


@needs_engine
def test_a_closed_generator_leaves_no_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / NAME
    path.write_bytes(_wrappers(30))
    switch, before = sys.getswitchinterval(), _settled()
    monkeypatch.setattr("kafka_dump.analysis.verify._WINDOW", 2000)
    monkeypatch.setattr("kafka_dump.analysis.verify._PROGRESS_EVERY", 1)
    monkeypatch.setattr("kafka_dump.log.ahead.AHEAD_FROM", 0)
    events = verify_file(path, VerifyOptions())
    next(events)  # a progress event after the first window: the worker has run
    assert _os_threads() == before + 1
    events.close()
    assert sys.getswitchinterval() == switch and _os_threads_back_to(before)


@needs_engine
def test_an_interrupt_leaves_no_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the walk asks for its third payload (the worker busy meanwhile)."""
    import kafka_dump.wire as twins

    before = _settled()
    path = tmp_path / NAME
    path.write_bytes(_wrappers(30))
    real = twins.walk_entries
    asked = []

    def walk(*args: object) -> object:
        fn = args[11]

        def interrupted(codec: int, payload: memoryview) -> bytes:
            asked.append(codec)
            if len(asked) == 3:
                raise KeyboardInterrupt
            return fn(codec, payload)  # type: ignore[operator,no-any-return]

        return real(*args[:11], interrupted, *args[12:])  # type: ignore[arg-type]

    monkeypatch.setattr(twins, "walk_entries", walk)
    monkeypatch.setattr("kafka_dump.log.ahead.AHEAD_FROM", 0)
    switch = sys.getswitchinterval()
    with pytest.raises(KeyboardInterrupt):
        list(verify_file(path, VerifyOptions()))
    assert len(asked) == 3 and sys.getswitchinterval() == switch
    assert _os_threads_back_to(before)


# --- convert's fast reader with and without it --------------------------------------------------------------------


def _read(path: Path, monkeypatch: pytest.MonkeyPatch, *, ahead: bool) -> list[object]:
    from kafka_dump.analysis import convert_fast

    with monkeypatch.context() as m:
        m.setattr(convert_fast, "_WINDOW", 900)  # many windows, each entry whole
        m.setattr(convert_fast, "_RUN", 300)  # and several runs a window
        m.setattr(ahead_mod, "BUDGET", 2000)
        limit = 1 << 20
        source = convert_fast.Ahead(limit) if ahead else convert_fast.Inline(limit)
        items = list(
            convert_fast.read_input(
                path, fast=True, max_batch_bytes=limit, max_records_per_batch=1000, inflating=source
            )
        )
    return items


@needs_engine
def test_convert_reads_the_same_items_inflating_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for fixture in ("v1-gzip.log", "v0-gzip.log", "mixed-magic.log"):
        assert _read(FIXTURES / fixture, monkeypatch, ahead=True) == _read(
            FIXTURES / fixture, monkeypatch, ahead=False
        )
    data = b"".join(
        legacy_messages(legacy_records(3, seed=i), magic=1, codec=GZIP, base_offset=3 * i) for i in range(8)
    )
    path = tmp_path / NAME
    for at in [None, *range(0, len(data), 11)]:
        damaged = bytearray(data)
        if at is not None:
            damaged[at] ^= 0x24
        path.write_bytes(bytes(damaged))
        assert _read(path, monkeypatch, ahead=True) == _read(path, monkeypatch, ahead=False), at


# --- the segment reader (dump, the decoder) and stats with and without it -----------------------------------------


def _forced(m: pytest.MonkeyPatch) -> None:
    """Small windows and budget: the most windows and hand-overs, so that a payload inflated ahead
    is used wherever the reader can use one (the fixtures are small files: inflated ahead all the same)."""
    import kafka_dump.log.segment as segment

    m.setattr(segment, "_READ_SIZE", 700)
    m.setattr(segment, "_RUN_BYTES", 300)
    m.setattr(ahead_mod, "BUDGET", 2000)
    m.setattr(ahead_mod, "AHEAD_FROM", 0)


def _until_raised(items: Iterator[object]) -> list[object]:
    """The items, and what ended them if it was an error (a file that is no segment)."""
    out: list[object] = []
    try:
        out.extend(items)
    except KafkaDumpError as exc:
        out.append((type(exc).__name__, str(exc)))
    return out


def _segment_items(path: Path, monkeypatch: pytest.MonkeyPatch, *, ahead: bool) -> list[object]:
    from kafka_dump.log.segment import read_segment

    with monkeypatch.context() as m:
        _forced(m)
        source = ahead_mod.Ahead(1 << 20) if ahead else ahead_mod.Inline()
        return _until_raised(read_segment(path, max_batch_bytes=1 << 20, inflating=source))


def _stats(path: Path, monkeypatch: pytest.MonkeyPatch, *, ahead: bool) -> list[object]:
    from kafka_dump.analysis import stats_walk

    with monkeypatch.context() as m:
        _forced(m)
        m.setattr(stats_walk, "CHUNK_SIZE", 900)
        events = _until_raised(stats_walk.iter_stats([path], max_batch_bytes=1 << 20, inflate_ahead=ahead))
    return [_plain(e) for e in events]


def _plain(value: object) -> object:
    """A stats event as plain values: its histograms (slotted objects that compare by identity) as
    their slots' values, recursively."""
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name != "listener"
        }
    slots = getattr(type(value), "__slots__", None)
    if slots and not isinstance(value, tuple):
        return {name: _plain(getattr(value, name)) for name in slots}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def _reads_the_same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    items, stats = _segment_items(path, monkeypatch, ahead=False), _stats(path, monkeypatch, ahead=False)
    assert _segment_items(path, monkeypatch, ahead=True) == items, path
    assert _stats(path, monkeypatch, ahead=True) == stats, path


@needs_engine
@pytest.mark.parametrize("path", _fixture_logs(), ids=lambda p: p.name)
def test_the_reader_and_stats_give_the_same_inflating_ahead_on_fixtures(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _reads_the_same(path, monkeypatch)


@needs_engine
def test_the_reader_and_stats_give_the_same_inflating_ahead_on_flipped_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / NAME
    for _ in _flipped_wrappers(path):
        _reads_the_same(path, monkeypatch)


@needs_engine
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=120), st.integers(min_value=0, max_value=30))
def test_the_reader_and_stats_give_the_same_inflating_ahead_on_arbitrary_tails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: bytes, cut: int
) -> None:
    path = tmp_path / NAME
    path.write_bytes(_wrappers(4)[: cut * 60] + tail + SEGMENTS["mixed"]() + _wrappers(3))
    _reads_the_same(path, monkeypatch)


@needs_engine
def test_the_reader_uses_what_the_compiled_engine_inflated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every payload of 40 wrappers in one window inflated by the engine's thread or by the reader
    while it would wait, none declined, none handed to codecs; and the thread's life."""
    from kafka_dump.log.segment import read_segment, read_segment_runs

    path = tmp_path / NAME
    path.write_bytes(_wrappers(40))
    made: list[ahead_mod.Ahead] = []
    real = ahead_mod.Ahead

    def keep(limit: int, *rest: Any) -> ahead_mod.Ahead:
        made.append(real(limit, *rest))
        return made[-1]

    before = _settled()
    with monkeypatch.context() as m:
        m.setattr("kafka_dump.log.segment._READ_SIZE", 1 << 20)
        m.setattr(ahead_mod, "Ahead", keep)
        m.setattr(ahead_mod, "AHEAD_FROM", 0)  # a small file: inflated ahead all the same
        records = 0
        for batch in read_segment(path, max_batch_bytes=1 << 20):
            records += len(batch.records)  # type: ignore[union-attr,arg-type]
            time.sleep(0.002)  # a slow consumer: the thread runs meanwhile
        assert records == 123 and _os_threads_back_to(before)
        engine = made[0]._engine
        assert engine is not None
        counts = engine.counts()
        assert counts["worker"] + counts["reader"] == 41 and counts["worker"] > 0
        assert counts["declined"] == 0 and counts["fallbacks"] == counts["late"]  # late: a descheduled worker
        runs = read_segment_runs(path)
        next(runs)
        assert _os_threads() == before + 1
        runs.close()
        assert _os_threads_back_to(before)
        items = read_segment(path)
        next(items)
        assert _os_threads() == before + 1
        del items
        assert _os_threads_back_to(before)
        for name in ("v1-none.log", "v2-lz4.log"):  # no gzip: no thread
            made.clear()
            list(read_segment(FIXTURES / name))
            assert made and made[0]._engine is not None and made[0]._engine.counts()["worker"] == 0


@needs_engine
def test_a_small_file_is_inflated_where_it_is_read(tmp_path: Path) -> None:
    """Under ``AHEAD_FROM`` no engine (nor thread) is made: a partition of small gzip segments pays
    none per file, in every reader."""
    from kafka_dump.analysis import stats_walk
    from kafka_dump.log.segment import read_segment

    path = tmp_path / NAME
    path.write_bytes(_wrappers(30))
    assert path.stat().st_size < ahead_mod.AHEAD_FROM
    before = _settled()
    for items in (
        read_segment(path, max_batch_bytes=1 << 20),
        verify_file(path, VerifyOptions()),
        stats_walk.iter_stats([path], max_batch_bytes=1 << 20, inflate_ahead=True),
    ):
        next(iter(items))
        assert _os_threads() == before
        list(items)
    assert isinstance(ahead_mod.inflating_for(path.stat().st_size, 1 << 20), ahead_mod.Inline)
    assert isinstance(ahead_mod.inflating_for(ahead_mod.AHEAD_FROM, 1 << 20), ahead_mod.Ahead)


def test_the_compiled_engine_is_active_when_expected() -> None:
    """CI sets KDUMP_EXPECT_COMPILED=1 on the compiled run: a silent fallback must fail there."""
    ahead = ahead_mod.Ahead(1)
    if os.environ.get("KDUMP_EXPECT_COMPILED") == "1":
        assert ahead._engine is not None
    if os.environ.get("KDUMP_PURE") == "1":
        assert ahead._engine is None
    ahead.close()
