"""The compiled inflate-ahead engine (``native/ahead.c``) against ``codecs.decompress``.

``take`` must give, for every payload, what ``codecs.decompress`` gives: the same bytes, or an
exception of the same type and text. The payloads here are the members the engine inflates itself
and every kind it must hand back: header flags, an empty member, two members, trailing bytes, a bad
CRC or ISIZE, flipped and cut bytes, bombs past the limit, and bytes that are no gzip at all; taken in
order, past the reader's stopping point, with an unforeseen payload or another limit in between.
Then the counts show the work was done ahead (a differential alone cannot fail when nothing is),
and the thread's life: one OS thread while reading, none after ``close`` or when dropped.
"""

from __future__ import annotations

import gc
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_dump.model import Compression
from kafka_dump.wire.codecs import decompress

from .batches import GZIP as GZIP_ID
from .batches import LZ4 as LZ4_ID
from .batches import SNAPPY, default_records, legacy_messages, legacy_records, v2_batch
from .test_ahead import _os_threads, _os_threads_back_to, _settled, compressed_spans
from .test_entry_walk import _fixture_logs

engine_mod = pytest.importorskip("kafka_dump.native._native", reason="the compiled engine is not built")
InflateEngine = engine_mod.InflateEngine

GZIP, LZ4 = GZIP_ID, LZ4_ID
LIMIT = 1 << 20


def _member(data: bytes, flags: int = 0, level: int = 6) -> bytes:
    """A gzip member with the header fields ``flags`` asks for (FTEXT 1, FHCRC 2, FEXTRA 4, FNAME 8,
    FCOMMENT 16, and the reserved bits), its header CRC right."""
    head = bytes([0x1F, 0x8B, 8, flags]) + struct.pack("<I", 0) + b"\x00\xff"
    if flags & 4:
        head += struct.pack("<H", 3) + b"abc"
    if flags & 8:
        head += b"name\x00"
    if flags & 16:
        head += b"comment\x00"
    if flags & 2:
        head += struct.pack("<H", zlib.crc32(head) & 0xFFFF)
    body = zlib.compressobj(level, zlib.DEFLATED, -15)
    raw = body.compress(data) + body.flush()
    return head + raw + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def _trailer(member: bytes, crc_delta: int = 0, size_delta: int = 0) -> bytes:
    crc, size = struct.unpack("<II", member[-8:])
    return member[:-8] + struct.pack("<II", (crc + crc_delta) & 0xFFFFFFFF, (size + size_delta) & 0xFFFFFFFF)


_DATA = st.one_of(
    st.binary(min_size=1, max_size=3000),
    st.integers(min_value=1, max_value=40000).map(
        lambda n: bytes(range(256)) * (n // 256) + b"z" * (n % 256)
    ),
)


@st.composite
def _payload(draw: st.DrawFn) -> bytes:
    data = draw(_DATA)
    kind = draw(st.sampled_from(
        ["plain", "plain", "flags", "empty", "two", "trailing", "crc", "size", "flip", "cut", "bomb", "junk"]
    ))  # fmt: skip
    member = _member(data, level=draw(st.sampled_from([1, 6, 9])))
    if kind == "flags":
        return _member(data, flags=draw(st.sampled_from([1, 2, 4, 8, 16, 28, 32, 64, 128])))
    if kind == "empty":
        return _member(b"")
    if kind == "two":
        return member + _member(data[::-1])
    if kind == "trailing":
        return member + draw(st.binary(min_size=1, max_size=5))
    if kind == "crc":
        return _trailer(member, crc_delta=draw(st.integers(1, 5)))
    if kind == "size":
        return _trailer(member, size_delta=draw(st.sampled_from([-1, 1, 1 << 31])))
    if kind == "flip":
        at = draw(st.integers(0, len(member) - 1))
        return member[:at] + bytes([member[at] ^ draw(st.integers(1, 255))]) + member[at + 1 :]
    if kind == "cut":
        return member[: draw(st.integers(0, len(member) - 1))]
    if kind == "bomb":
        return _member(b"\0" * draw(st.integers(LIMIT - 2, LIMIT + 3000)), level=9)
    return draw(st.binary(max_size=40))


def _direct(codec: int, payload: bytes | memoryview, limit: int) -> tuple[str, object]:
    try:
        return ("ok", decompress(Compression(codec), payload, limit))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def _taken(engine: object, codec: int, payload: bytes | memoryview, limit: int | None) -> tuple[str, object]:
    """``take`` as the segment reader calls it (with a limit), or as verify and convert do (without)."""
    try:
        if limit is None:
            return ("ok", engine.take(codec, payload))  # type: ignore[attr-defined]
        return ("ok", engine.take(Compression(codec), payload, limit))  # type: ignore[attr-defined]
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def _two_args(codec: int, payload: memoryview) -> bytes:
    return decompress(Compression(codec), payload, LIMIT)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_payload(), max_size=10),
    st.integers(min_value=0, max_value=200_000),
    st.integers(min_value=0, max_value=10),
    st.integers(min_value=-1, max_value=10),
    st.integers(min_value=-1, max_value=10),
    st.booleans(),
    st.booleans(),
)
def test_take_gives_what_decompress_gives(
    payloads: list[bytes],
    budget: int,
    stop: int,
    strange: int,
    other_limit: int,
    copies: bool,
    two_args: bool,
) -> None:
    data = b"".join(payloads)
    spans: list[tuple[int, int, int]] = []
    at = 0
    for k, p in enumerate(payloads):
        spans.append((LZ4 if k % 4 == 3 else GZIP, at, len(p)))  # an lz4 span: never inflated here
        at += len(p)
    view = memoryview(data)
    engine = InflateEngine(_two_args if two_args else decompress, LIMIT, budget)
    try:
        for window in range(2):  # the second window after the reader stopped early in the first
            engine.start(data, list(spans))
            for k, (codec, start, n) in enumerate(spans[: stop if window == 0 else None]):
                payload: bytes | memoryview = view[start : start + n]
                if copies:
                    payload = bytes(payload)  # the same bytes, not a view of the window
                if k == strange:  # a payload the scan did not foresee: decompressed where asked
                    payload = _member(b"unforeseen")
                limit = 100 if k == other_limit and not two_args else LIMIT
                got = _taken(engine, codec, payload, None if two_args else limit)
                assert got == _direct(codec, payload, limit), (k, window)
    finally:
        engine.close()


@pytest.mark.parametrize("budget", [1 << 30, 150_000])  # all made at once, or a few at a time
def test_every_sound_member_is_inflated_ahead_and_none_declined(budget: int) -> None:
    members = [_member(bytes([i]) * (100 + 997 * i), flags=(0, 8, 16, 4, 1)[i % 5]) for i in range(60)]
    data = b"".join(members)
    spans, at = [], 0
    for m in members:
        spans.append((GZIP, at, len(m)))
        at += len(m)
    engine = InflateEngine(decompress, LIMIT, budget)
    try:
        assert engine.start(data, spans) is True
        view = memoryview(data)
        for (_codec, start, n), m in zip(spans, members, strict=True):
            assert engine.take(Compression.GZIP, view[start : start + n], LIMIT) == zlib.decompress(m, 31)
        counts = engine.counts()
    finally:
        engine.close()
    assert counts["worker"] + counts["reader"] == 60
    assert counts["declined"] == 0 and counts["fallbacks"] == counts["late"]  # late: a descheduled worker


def test_what_the_engine_does_not_vouch_for_goes_to_decompress() -> None:
    sound = _member(b"x" * 500)
    cases = [
        _member(b"x" * 500, flags=2),  # a header CRC: left to codecs
        _member(b""),  # ISIZE 0
        _trailer(sound, crc_delta=1),  # a bad CRC: codecs words the error
        sound + _member(b"second"),  # two members
    ]
    data = b"".join(cases)
    spans, at = [], 0
    for c in cases:
        spans.append((GZIP, at, len(c)))
        at += len(c)
    engine = InflateEngine(decompress, LIMIT, 1 << 30)
    try:
        engine.start(data, spans)
        view = memoryview(data)
        for codec, start, n in spans:
            payload = view[start : start + n]
            assert _taken(engine, codec, payload, LIMIT) == _direct(codec, payload, LIMIT)
        counts = engine.counts()
    finally:
        engine.close()
    assert counts["fallbacks"] == 4  # each answered by codecs.decompress
    assert counts["declined"] == 2  # the bad CRC and the two members were tried and declined


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts OS threads through /proc")
def test_one_thread_while_reading_none_after_close_or_drop() -> None:
    member = _member(b"y" * 2000)
    before = _settled()
    engine = InflateEngine(decompress, LIMIT, 1 << 30)
    assert engine.start(member * 3, [(GZIP, 0, len(member))]) is True
    assert _os_threads() == before + 1
    engine.close()
    assert _os_threads_back_to(before)
    assert engine.start(member, [(GZIP, 0, len(member))]) is False  # closed: nothing ahead
    assert engine.take(Compression.GZIP, member, LIMIT) == b"y" * 2000
    dropped = InflateEngine(decompress, LIMIT, 1 << 30)
    dropped.start(member, [(GZIP, 0, len(member))])
    assert _os_threads() == before + 1
    del dropped
    gc.collect()
    assert _os_threads_back_to(before)


def test_an_engine_never_initialised_refuses_cleanly() -> None:
    raw = InflateEngine.__new__(InflateEngine)
    with pytest.raises(RuntimeError, match="not initialised"):
        raw.take(Compression.GZIP, b"x", LIMIT)
    with pytest.raises(RuntimeError, match="not initialised"):
        raw.scan(b"x", 0, 1)
    raw.close()  # nothing to stop
    del raw


def test_bad_spans_are_refused() -> None:
    engine = InflateEngine(decompress, LIMIT, 1 << 30)
    try:
        with pytest.raises(ValueError, match="outside the window"):
            engine.start(b"abc", [(GZIP, 2, 5)])
        with pytest.raises(TypeError):
            engine.start(b"abc", [(GZIP, 0)])
        assert engine.start(b"abc", []) is False
    finally:
        engine.close()


# --- the engine's scan is ahead.py's compressed_spans ----------------------------------------------------------------


def _same_spans(data: bytes) -> None:
    for pos, end in ((0, len(data)), (0, len(data) // 2), (min(7, len(data)), len(data))):
        assert engine_mod.compressed_spans(data, pos, end) == list(compressed_spans(data, pos, end)), (
            pos,
            end,
        )


@pytest.mark.parametrize("path", _fixture_logs(), ids=lambda p: p.name)
def test_the_scan_finds_what_the_pure_scan_finds_in_fixtures(path: Path) -> None:
    data = path.read_bytes()
    _same_spans(data)
    for at in range(0, min(len(data), 4000), 13):  # a byte changed: sizes, magics, codecs, keys
        damaged = bytearray(data)
        damaged[at] ^= 0x5A
        _same_spans(bytes(damaged))


def _any_segment() -> st.SearchStrategy[bytes]:
    entries = st.lists(
        st.one_of(
            st.builds(
                lambda n, codec, magic, seed: legacy_messages(
                    legacy_records(n, seed=seed), magic=magic, codec=codec, base_offset=seed
                ),
                st.integers(1, 4),
                st.sampled_from([0, GZIP, SNAPPY, LZ4]),
                st.sampled_from([0, 1]),
                st.integers(0, 50),
            ),
            st.builds(
                lambda n, codec, seed: v2_batch(
                    default_records(n, seed=seed, compressible=True), codec=codec, base_offset=seed
                ),
                st.integers(1, 4),
                st.sampled_from([0, GZIP, SNAPPY, LZ4, 4]),
                st.integers(0, 50),
            ),
            st.binary(max_size=30),
        ),
        max_size=8,
    )
    return entries.map(b"".join)


@settings(max_examples=200, deadline=None)
@given(_any_segment(), st.integers(0, 1 << 16), st.integers(0, 255))
def test_the_scan_finds_what_the_pure_scan_finds(data: bytes, at: int, xor: int) -> None:
    _same_spans(data)
    if data:
        damaged = bytearray(data)
        damaged[at % len(data)] ^= xor
        _same_spans(bytes(damaged))


def test_the_scan_stops_after_a_run_of_entries_without_gzip() -> None:
    plain = [legacy_messages(legacy_records(1, seed=i), magic=1, base_offset=i) for i in range(70)]
    wrapper = legacy_messages(legacy_records(2), magic=1, codec=GZIP, base_offset=80)
    for data, found in [(b"".join(plain[:63]) + wrapper, 1), (b"".join(plain[:64]) + wrapper, 0)]:
        assert len(engine_mod.compressed_spans(data, 0, len(data))) == found
    with pytest.raises(ValueError):
        engine_mod.compressed_spans(b"abc", 2, 1)


@pytest.mark.parametrize("key_length", [2**31 - 1, 2**31 - 4, 2**31 - 5, -(2**31), -2, 2**30])
def test_a_key_length_near_the_int32_limits_ends_the_scan(key_length: int) -> None:
    """A wrapper's key length read as it is: 4 plus 2^31 - 1 must not wrap to a position before the key
    (it did, and the scan read outside the buffer)."""
    wrapper = bytearray(legacy_messages(legacy_records(2), magic=1, codec=GZIP, base_offset=10))
    wrapper[26:30] = struct.pack(">i", key_length)  # v1: the key length follows the 26-byte header
    data = bytes(wrapper) + legacy_messages(legacy_records(1, seed=3), magic=1, codec=GZIP, base_offset=12)
    _same_spans(data)
