"""Inflate ahead (``format/ahead.py``): payloads decompressed on a worker thread for the entry walk.

Three differentials: the spans the framing scan finds are exactly the payloads the walk asks for
(both twins, in order, on clean, flipped and cut segments); ``take`` gives what the wrapped function
gives (the same bytes, or an exception of the same type and text) whatever the chunking, budget and
where the reader stops; and ``verify-crc --deep`` reports the same with and without it, on the
fixtures, the bad corpus and damaged segments, read in small windows so that the windows, chunks
and hand-overs are many. Then the thread's life: none without compressed entries, none left after
a closed generator or an interrupt. Last, the same differential for the readers that take the
``Inflating`` plug: ``read_segment`` (dump, the decoder) and the stats walk, ``Ahead`` against ``Inline``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_dump import native
from kafka_dump.analysis.verify import VerifyOptions, verify_file
from kafka_dump.errors import KafkaDumpError
from kafka_dump.log import ahead as ahead_mod
from kafka_dump.log.ahead import InflateAhead, compressed_spans
from kafka_dump.model import Compression, Problem
from kafka_dump.wire import _walk_pure
from kafka_dump.wire.checksum import crc32c
from kafka_dump.wire.codecs import compress, decompress

from .batches import GZIP, LZ4, SNAPPY, default_records, legacy_messages, legacy_records, v2_batch
from .conftest import FIXTURES, reference_module
from .test_entry_walk import SEGMENTS, _fixture_logs

_walk_pure = reference_module(_walk_pure)
try:
    from kafka_dump.native import _native as walk_c

    WALKS = [_walk_pure, walk_c]
except ImportError:  # the compiled twin is optional
    WALKS = [_walk_pure]

NAME = "00000000000000000000.log"
THREAD = "kdump-inflate-ahead"


def _unpack(codec: int, payload: memoryview) -> bytes:
    return decompress(Compression(codec), payload, 1 << 20)


def _threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD]


# The segment reader's and stats' engines: InflateAhead, and the compiled one when it is active.
ENGINES = ["pure"] if native.ACTIVE == "pure-python" else ["pure", "compiled"]


def _no_engine(m: pytest.MonkeyPatch) -> None:
    """Every inflate-ahead source made meanwhile is the pure one (``InflateAhead``)."""
    m.setattr(ahead_mod, "_engine", lambda *args: None)


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


# --- take gives what the wrapped function gives -----------------------------------------------------------------

_GOOD = [compress(Compression.GZIP, bytes([i]) * (50 + 37 * i)) for i in range(6)]
_PAYLOADS = st.lists(
    st.one_of(
        st.sampled_from(_GOOD), st.binary(max_size=30), st.just(compress(Compression.GZIP, b"x" * 5000))
    ),
    max_size=12,
)


def _direct(codec: int, payload: bytes) -> tuple[str, object]:
    try:
        return ("ok", _unpack(codec, memoryview(payload)))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def _via(ahead: InflateAhead, codec: int, payload: memoryview) -> tuple[str, object]:
    try:
        return ("ok", ahead.take(codec, payload))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


@settings(max_examples=150, deadline=None)
@given(
    _PAYLOADS,
    st.integers(min_value=1, max_value=3000),
    st.integers(min_value=0, max_value=3),
    st.integers(min_value=1, max_value=20000),
    st.integers(min_value=0, max_value=12),
    st.booleans(),
    st.frozensets(st.sampled_from([GZIP, LZ4])),
)
def test_take_gives_what_decompress_gives(
    payloads: list[bytes],
    chunk: int,
    ahead_chunks: int,
    budget: int,
    stop: int,
    strange: bool,
    codecs: frozenset[int],
) -> None:
    data = b"".join(payloads)
    spans: list[tuple[int, int, int]] = []
    at = 0
    for k, p in enumerate(payloads):
        spans.append((LZ4 if k % 3 == 1 else GZIP, at, len(p)))  # an lz4 span fails, or is ahead or not
        at += len(p)
    view = memoryview(data)
    with InflateAhead(
        _unpack, chunk_bytes=chunk, ahead_chunks=ahead_chunks, budget=budget, codecs=codecs
    ) as ahead:
        for window in range(2):  # the second window after the reader stopped early in the first
            ahead.start(data, iter(spans))
            for k, (codec, start, n) in enumerate(spans[: stop if window == 0 else None]):
                if strange and k == 2:  # a payload the scan did not foresee: decompressed where asked
                    other = _GOOD[0]
                    assert _via(ahead, codec, memoryview(other)) == _direct(codec, other)
                    continue
                assert _via(ahead, codec, view[start : start + n]) == _direct(codec, data[start : start + n])
            ahead.finish()
    assert not _threads()


def test_a_failed_decompression_is_raised_as_the_same_exception() -> None:
    bad = b"\x1f\x8b\x08\x00garbage"
    data = _GOOD[0] + bad
    with InflateAhead(_unpack, chunk_bytes=1) as ahead:
        ahead.start(data, iter([(GZIP, 0, len(_GOOD[0])), (GZIP, len(_GOOD[0]), len(bad))]))
        assert ahead.take(GZIP, memoryview(data)[: len(_GOOD[0])]) == _unpack(GZIP, memoryview(_GOOD[0]))
        with pytest.raises(Exception) as got:
            ahead.take(GZIP, memoryview(data)[len(_GOOD[0]) :])
        with pytest.raises(Exception) as want:
            _unpack(GZIP, memoryview(bad))
        assert type(got.value) is type(want.value) and str(got.value) == str(want.value)


# --- verify-crc --deep with and without it ----------------------------------------------------------------------


def _verify(
    path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    ahead: bool,
    window: int,
    codecs: frozenset[int],
    engine: str = "pure",
) -> list[object]:
    with monkeypatch.context() as m:
        if engine == "pure":
            _no_engine(m)
        m.setattr(ahead_mod, "AHEAD_CODECS", codecs)  # the pure engine's: the compiled one takes gzip
        # Judged at every chunk: never stopped with the default codecs, stopped at once with all.
        m.setattr(ahead_mod, "_SAMPLE", 0.0)
        m.setattr(ahead_mod, "_MIN_OVERLAP", 0.0 if codecs == ahead_mod.AHEAD_CODECS else 1e9)
        m.setattr("kafka_dump.analysis.verify._WINDOW", window)
        m.setattr("kafka_dump.analysis.verify._RESUME_AFTER", 0)
        m.setattr(ahead_mod, "CHUNK_BYTES", 1)  # one payload a chunk: the most hand-overs
        m.setattr(ahead_mod, "AHEAD_CHUNKS", 2)
        m.setattr(ahead_mod, "BUDGET", 2000)
        options = VerifyOptions(deep=True, index=True, max_batch_bytes=1 << 20, inflate_ahead=ahead)
        events = list(verify_file(path, options))
    assert not _threads()
    return events


def _same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for window, codecs in ((1 << 20, ahead_mod.AHEAD_CODECS), (700, frozenset({GZIP, SNAPPY, LZ4, 4}))):
        without = _verify(path, monkeypatch, ahead=False, window=window, codecs=codecs)
        for engine in ENGINES:
            got = _verify(path, monkeypatch, ahead=True, window=window, codecs=codecs, engine=engine)
            assert got == without, (path, window, engine)


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


def test_verify_with_and_without_inflating_ahead_on_flipped_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / NAME
    for _ in _flipped_wrappers(path):
        _same(path, monkeypatch)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=120), st.integers(min_value=0, max_value=30))
def test_verify_with_and_without_inflating_ahead_on_arbitrary_tails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: bytes, cut: int
) -> None:
    path = tmp_path / NAME
    path.write_bytes(_wrappers(4)[: cut * 60] + tail + SEGMENTS["mixed"]())
    _same(path, monkeypatch)


# --- the thread's life ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "started"), [("v1-none.log", 0), ("v2-lz4.log", 0), ("v1-gzip.log", 1)])
def test_a_thread_only_for_gzip_entries(name: str, started: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only gzip is inflated ahead (lz4 and snappy cost less than the hand-over), in one thread."""
    starts: list[str] = []

    class Counted(threading.Thread):
        def start(self) -> None:
            starts.append(self.name)
            super().start()

    monkeypatch.setattr(ahead_mod.threading, "Thread", Counted)
    _no_engine(
        monkeypatch
    )  # the compiled engine's thread: test_the_reader_uses_what_the_compiled_engine_inflated
    events = list(verify_file(FIXTURES / name, VerifyOptions()))
    assert starts == [THREAD] * started and not _threads()
    assert not [e for e in events if isinstance(e, Problem)]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_closed_generator_leaves_no_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    path = tmp_path / NAME
    path.write_bytes(_wrappers(30))
    if engine == "pure":
        _no_engine(monkeypatch)
    switch, before = sys.getswitchinterval(), _settled()
    monkeypatch.setattr("kafka_dump.analysis.verify._WINDOW", 2000)
    monkeypatch.setattr("kafka_dump.analysis.verify._PROGRESS_EVERY", 1)
    events = verify_file(path, VerifyOptions())
    next(events)  # a progress event after the first window: the worker has run
    assert _os_threads() == before + 1
    events.close()
    assert not _threads() and sys.getswitchinterval() == switch and _os_threads_back_to(before)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_interrupt_leaves_no_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    """Ctrl-C while the walk asks for its third payload (the worker busy meanwhile)."""
    import kafka_dump.wire as twins

    if engine == "pure":
        _no_engine(monkeypatch)
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
    monkeypatch.setattr(ahead_mod, "CHUNK_BYTES", 1)
    switch = sys.getswitchinterval()
    with pytest.raises(KeyboardInterrupt):
        list(verify_file(path, VerifyOptions()))
    assert len(asked) == 3 and not _threads() and sys.getswitchinterval() == switch
    assert _os_threads_back_to(before)


# --- convert's fast reader with and without it --------------------------------------------------------------------


def _read(path: Path, monkeypatch: pytest.MonkeyPatch, *, ahead: bool, engine: str = "pure") -> list[object]:
    from kafka_dump.analysis import convert_fast

    with monkeypatch.context() as m:
        if engine == "pure":
            _no_engine(m)
        m.setattr(convert_fast, "_WINDOW", 900)  # many windows, each entry whole
        m.setattr(convert_fast, "_RUN", 300)  # and several runs a window
        m.setattr(ahead_mod, "CHUNK_BYTES", 1)
        m.setattr(ahead_mod, "AHEAD_CHUNKS", 2)
        limit = 1 << 20
        source = convert_fast.Ahead(limit) if ahead else convert_fast.Inline(limit)
        items = list(
            convert_fast.read_input(
                path, fast=True, max_batch_bytes=limit, max_records_per_batch=1000, inflating=source
            )
        )
    assert not _threads()
    return items


@pytest.mark.parametrize("engine", ENGINES)
def test_convert_reads_the_same_items_inflating_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    for fixture in ("v1-gzip.log", "v0-gzip.log", "mixed-magic.log"):
        assert _read(FIXTURES / fixture, monkeypatch, ahead=True, engine=engine) == _read(
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
        assert _read(path, monkeypatch, ahead=True, engine=engine) == _read(path, monkeypatch, ahead=False), (
            at
        )


def test_the_worker_stops_when_it_gets_no_core_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judged as never overlapping enough, the worker is stopped at the first judgement and not
    started again; what it inflated before is still used, the rest is inflated where asked."""
    monkeypatch.setattr(ahead_mod, "_SAMPLE", 0.0)
    monkeypatch.setattr(ahead_mod, "_MIN_OVERLAP", 1e9)
    data = _wrappers(5)
    spans = list(compressed_spans(data, 0, len(data)))
    view = memoryview(data)
    with InflateAhead(_unpack, chunk_bytes=1, ahead_chunks=2) as ahead:
        for _window in range(2):
            ahead.start(data, iter(spans))
            for codec, start, n in spans:
                assert ahead.take(codec, view[start : start + n]) == _unpack(codec, view[start : start + n])
                assert not _threads() or _window == 0
            ahead.finish()
        assert ahead._closed and ahead._thread is None


# --- the segment reader (dump, the decoder) and stats with and without it -----------------------------------------


def _forced(m: pytest.MonkeyPatch, engine: str = "pure") -> None:
    """Small windows, one payload a chunk, judged at every chunk and never stopped: the most windows
    and hand-overs, so that a payload inflated ahead is used wherever the reader can use one.
    ``engine``: which does the work, ``InflateAhead`` (pure) or ``_ahead.InflateEngine`` (compiled)."""
    import kafka_dump.log.segment as segment

    if engine == "pure":
        _no_engine(m)

    m.setattr(segment, "_READ_SIZE", 700)
    m.setattr(segment, "_RUN_BYTES", 300)
    m.setattr(ahead_mod, "READER_CHUNK_BYTES", 1)
    m.setattr(ahead_mod, "AHEAD_CHUNKS", 2)
    m.setattr(ahead_mod, "BUDGET", 2000)
    m.setattr(ahead_mod, "_SAMPLE", 0.0)
    m.setattr(ahead_mod, "_MIN_OVERLAP", 0.0)


def _until_raised(items: Iterator[object]) -> list[object]:
    """The items, and what ended them if it was an error (a file that is no segment)."""
    out: list[object] = []
    try:
        out.extend(items)
    except KafkaDumpError as exc:
        out.append((type(exc).__name__, str(exc)))
    return out


def _segment_items(
    path: Path, monkeypatch: pytest.MonkeyPatch, *, ahead: bool, engine: str = "pure", **kw: object
) -> list[object]:
    from kafka_dump.log.segment import read_segment

    with monkeypatch.context() as m:
        _forced(m, engine)
        source = ahead_mod.Ahead(1 << 20) if ahead else ahead_mod.Inline()
        items = _until_raised(read_segment(path, max_batch_bytes=1 << 20, inflating=source, **kw))  # type: ignore[arg-type]
    assert not _threads()
    return items


def _stats(path: Path, monkeypatch: pytest.MonkeyPatch, *, ahead: bool, engine: str = "pure") -> list[object]:
    from kafka_dump.analysis import stats_walk

    with monkeypatch.context() as m:
        _forced(m, engine)
        m.setattr(stats_walk, "CHUNK_SIZE", 900)
        events = _until_raised(stats_walk.iter_stats([path], max_batch_bytes=1 << 20, inflate_ahead=ahead))
    assert not _threads()
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
    for engine in ENGINES:
        assert _segment_items(path, monkeypatch, ahead=True, engine=engine) == items, (path, engine)
        assert _stats(path, monkeypatch, ahead=True, engine=engine) == stats, (path, engine)


@pytest.mark.parametrize("path", _fixture_logs(), ids=lambda p: p.name)
def test_the_reader_and_stats_give_the_same_inflating_ahead_on_fixtures(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _reads_the_same(path, monkeypatch)


def test_the_reader_and_stats_give_the_same_inflating_ahead_on_flipped_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / NAME
    for _ in _flipped_wrappers(path):
        _reads_the_same(path, monkeypatch)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=120), st.integers(min_value=0, max_value=30))
def test_the_reader_and_stats_give_the_same_inflating_ahead_on_arbitrary_tails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: bytes, cut: int
) -> None:
    path = tmp_path / NAME
    path.write_bytes(_wrappers(4)[: cut * 60] + tail + SEGMENTS["mixed"]() + _wrappers(3))
    _reads_the_same(path, monkeypatch)


def test_the_reader_uses_what_was_inflated_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not a differential that cannot fail: the worker inflated payloads, and the reader took them."""
    path = tmp_path / NAME
    path.write_bytes(_wrappers(40))
    taken: list[int] = []
    real = InflateAhead.take

    def counting(self: InflateAhead, codec: int, payload: memoryview) -> bytes:
        out = real(self, codec, payload)
        taken.append(self._next)
        return out

    monkeypatch.setattr(InflateAhead, "take", counting)
    worker: list[float] = []
    real_close = InflateAhead.close

    def closing(self: InflateAhead) -> None:
        real_close(self)
        worker.append(self._worker_cpu)

    monkeypatch.setattr(InflateAhead, "close", closing)
    from kafka_dump.log.segment import read_segment

    records = 0
    with monkeypatch.context() as m:
        _forced(m, "pure")
        m.setattr("kafka_dump.log.segment._READ_SIZE", 1 << 20)  # one window: the worker is never stopped
        for batch in read_segment(path, max_batch_bytes=1 << 20, inflating=ahead_mod.Ahead(1 << 20)):
            records += len(batch.records)  # type: ignore[union-attr,arg-type]
            time.sleep(0.002)  # a slow consumer: the worker runs meanwhile
    assert records == 123 and not _threads()
    assert taken == list(range(1, 42))  # each payload matched its span, in order
    assert worker[0] > 0


@pytest.mark.parametrize(("name", "started"), [("v1-none.log", 0), ("v2-lz4.log", 0), ("v1-gzip.log", 1)])
def test_the_reader_starts_a_thread_only_for_gzip_entries(
    name: str, started: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kafka_dump.log.segment import read_segment

    starts: list[str] = []

    class Counted(threading.Thread):
        def start(self) -> None:
            starts.append(self.name)
            super().start()

    monkeypatch.setattr(ahead_mod.threading, "Thread", Counted)
    monkeypatch.setattr(ahead_mod, "_engine", lambda limit: None)  # the pure engine's thread
    list(read_segment(FIXTURES / name))
    list(read_segment(FIXTURES / name, with_records=False))  # headers only: inflated where asked
    assert starts == [THREAD] * started and not _threads()


def test_a_closed_or_dropped_reader_leaves_no_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kafka_dump.log.segment import read_segment, read_segment_runs

    path = tmp_path / NAME
    path.write_bytes(_wrappers(30))
    switch = sys.getswitchinterval()
    with monkeypatch.context() as m:
        _forced(m, "pure")
        runs = read_segment_runs(path)
        next(runs)
        next(runs)
        assert _threads()
        runs.close()
        assert not _threads() and sys.getswitchinterval() == switch
        items = read_segment(path)
        next(items)
        next(items)
        assert _threads()
        del items  # the chain drops its generator, which closes the plug
    assert not _threads() and sys.getswitchinterval() == switch


@pytest.mark.skipif("compiled" not in ENGINES, reason="the compiled engine is not built")
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

    def keep(limit: int) -> ahead_mod.Ahead:
        made.append(real(limit))
        return made[-1]

    before = _settled()
    with monkeypatch.context() as m:
        m.setattr("kafka_dump.log.segment._READ_SIZE", 1 << 20)
        m.setattr(ahead_mod, "Ahead", keep)
        records = 0
        for batch in read_segment(path, max_batch_bytes=1 << 20):
            records += len(batch.records)  # type: ignore[union-attr,arg-type]
            time.sleep(0.002)  # a slow consumer: the thread runs meanwhile
        assert records == 123 and _os_threads_back_to(before)
        engine = made[0]._engine
        assert engine is not None
        counts = engine.counts()
        assert counts["worker"] + counts["reader"] == 41 and counts["worker"] > 0
        assert counts["declined"] == 0 and counts["fallbacks"] == 0
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


def test_the_compiled_engine_is_active_when_expected() -> None:
    """CI sets KDUMP_EXPECT_COMPILED=1 on the compiled run: a silent fallback must fail there."""
    ahead = ahead_mod.Ahead(1)
    if os.environ.get("KDUMP_EXPECT_COMPILED") == "1":
        assert ahead._engine is not None
    if os.environ.get("KDUMP_PURE") == "1":
        assert ahead._engine is None
    ahead.close()
