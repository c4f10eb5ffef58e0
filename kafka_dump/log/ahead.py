"""Inflate ahead: the payloads a reader will ask for next, decompressed on a second core meanwhile.

``verify-crc --deep`` spends about two thirds of its time inflating v0/v1 gzip wrappers, and zlib
(like lz4 and zstd) releases the GIL while it inflates. So while the reader (the entry walk) checks
one stretch of a read window, a worker thread decompresses the payloads after it, and when the
worker is behind, the reader inflates the next waiting chunk itself instead of idling: both cores
inflate, and the reader also checks.

The reader asks in file order through ``InflateAhead.take``, a drop-in for the decompress function
it wraps: the same bytes, or the same exception, as calling that function on the payload it is
given. The spans to inflate come from ``compressed_spans`` (a framing scan of the window, read only
as far as the reader gets plus a few chunks), in the order the reader meets them; each asked payload
is checked against its span (codec and bytes: a copy and a compare, about 1 us for a v1 wrapper),
and anything not ready, not matching, or past the spans is decompressed where it is asked, as before. Memory stays flat: at most ``budget`` bytes of
inflated payloads wait (plus the one being made), and the window's buffer is not touched once
``finish`` has returned, so the caller may read the next window into it.

The thread starts with the first chunk to inflate, so a file without compressed entries never
starts one; ``close`` (also on an exception, Ctrl-C or a closed generator) stops and joins it. It
also stops, for good, when the two threads do not get more than one core between them (a busy
machine): then the worker only adds hand-overs.

That is the pure reference. With the compiled module, ``Ahead`` (the segment reader's plug) and
``inflate_ahead`` (verify's and convert's) use its ``InflateEngine`` (``native/_ahead.c``) instead:
the same contract, the scan in C, and a POSIX thread that inflates gzip into bytes made for it
without ever taking the GIL, which the Python worker above must take between payloads while the
decoder holds it.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Container, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from kafka_dump.model import Compression
from kafka_dump.native import native
from kafka_dump.wire import layout as L
from kafka_dump.wire.codecs import decompress

if TYPE_CHECKING:
    from kafka_dump.native._native import InflateEngine

# codec id, payload -> decompressed bytes (raises on a payload that does not decompress).
Decompress = Callable[[int, memoryview], bytes]
# codec id, start of the payload in the buffer, its length.
Span = tuple[int, int, int]
# codecs.decompress's shape, as the decoder calls it: codec, payload, limit -> decompressed bytes.
Unpack = Callable[[Compression, bytes | memoryview, int], bytes]

CHUNK_BYTES = 64 * 1024  # compressed bytes handed over at a time: a handoff costs about 20 us
# The segment reader's chunks (``Ahead``): its 256 KiB windows start the worker afresh, and the reader
# inflates a window's first chunk itself, so a smaller one leaves it less (about 2 wrappers of 100 messages).
READER_CHUNK_BYTES = 16 * 1024
AHEAD_CHUNKS = 8  # chunks scanned and queued beyond the one the reader is in
BUDGET = 8 * 1024 * 1024  # inflated bytes that may wait for the reader
_SWITCH_INTERVAL = 0.0002  # seconds: how soon a thread that waits for the GIL gets it
_NAP = 0.005  # seconds: a wait on the condition is rechecked at least this often
_SAMPLE = 0.05  # seconds of wall time over which the worker is judged
_MIN_OVERLAP = 1.1  # CPU seconds a second that the two threads must get together, or the worker stops

_PENDING, _WORKER, _READER, _DONE = range(4)

_PREFIX = L.MAGIC_OFFSET + 1
_V2_CODEC_AT = L.V2_ATTRIBUTES_OFFSET + 1  # the low byte of the int16 attributes
_LEGACY_CODEC_AT = L.MAGIC_OFFSET + 1
_V2_CODECS = 4  # the highest codec id of a v2 batch (zstd)
_LEGACY_CODECS = 3  # and of a v0/v1 wrapper (lz4)
AHEAD_CODECS = frozenset({1})  # gzip: the slow inflate, and zlib releases the GIL while inflating
_QUIET_ENTRIES = 64  # entries in a row without a compressed payload: the scan gives up
_SMALLEST = L.LOG_OVERHEAD + L.LEGACY_V0_MIN_SIZE
_LEGACY_MIN = L.LEGACY_MIN_SIZE
_INT = L.INT32.size
_KEY_AT = (L.LEGACY_HEADER_SIZE, L.LEGACY_HEADER_SIZE + L.INT64.size)  # by magic: v1 has a timestamp


def compressed_spans(
    data: bytes | bytearray, pos: int, end: int, wanted: Container[int] | None = None
) -> Iterator[Span]:
    """The compressed payloads of the entries from ``data[pos]`` on, in file order, as the entry walk
    meets them: each v0/v1 wrapper's value and each v2 batch's records (all of them, so that the
    reader's n-th payload is the n-th span; those of a codec not ``wanted`` count as quiet).

    The scan steps from entry to entry by their size fields, as the walk does, and stops where an
    entry is not whole in ``data[pos:end]`` or does not frame (the walk stops there too), or after
    ``_QUIET_ENTRIES`` entries in a row with nothing to inflate, or where the walk stops for sure
    (a control batch, a codec it does not take). Only framing is read, no CRC: a span the walk never
    asks for (it stopped before, at damage) is inflated for nothing and dropped.
    """
    if wanted is None:
        wanted = AHEAD_CODECS
    int32 = L.INT32.unpack_from
    size_at, magic_at, overhead, smallest = L.LOG_ENTRY_SIZE_OFFSET, L.MAGIC_OFFSET, L.LOG_OVERHEAD, _SMALLEST
    v2_header, v2_codec_at, legacy_codec_at = L.V2_HEADER_SIZE, _V2_CODEC_AT, _LEGACY_CODEC_AT
    mask, control = L.COMPRESSION_MASK, L.CONTROL_BIT
    quiet = 0
    while end - pos >= _PREFIX and quiet < _QUIET_ENTRIES:
        entry = overhead + int32(data, pos + size_at)[0]
        if entry < smallest or entry > end - pos:
            return
        magic = data[pos + magic_at]
        if magic == 2:
            if entry < v2_header:
                return
            attributes = data[pos + v2_codec_at]
            codec = attributes & mask
            if attributes & control or codec > _V2_CODECS:
                return  # the deep walk stops at a control batch and at an unknown codec
            if codec:
                quiet = 0 if codec in wanted else quiet + 1
                yield codec, pos + v2_header, entry - v2_header
            else:
                quiet += 1
        elif magic < 2:
            codec = data[pos + legacy_codec_at] & mask
            if codec > _LEGACY_CODECS:
                return  # zstd or an unknown codec in a wrapper: the walk stops there
            if codec:
                # The key, then the value, which must end the message (as the walk frames it).
                if entry - overhead < _LEGACY_MIN[magic]:
                    return
                p = pos + _KEY_AT[magic]
                key = int32(data, p)[0]
                p += _INT + (key if key > 0 else 0)
                if p + _INT > pos + entry:
                    return
                value = int32(data, p)[0]
                p += _INT
                if value < 0 or p + value != pos + entry:
                    return
                quiet = 0 if codec in wanted else quiet + 1
                yield codec, p, value
            else:
                quiet += 1
        else:
            return
        pos += entry


class _Failed:
    """A decompression that raised: the reader raises the same exception when it asks."""

    __slots__ = ("exc",)

    def __init__(self, exc: Exception) -> None:
        self.exc = exc


class _Chunk:
    __slots__ = ("end", "first", "index", "state")

    def __init__(self, index: int, first: int, end: int) -> None:
        self.index = index  # in the window's chunks
        self.first = first  # spans[first:end]
        self.end = end
        self.state = _PENDING


class InflateAhead:
    """Decompresses a window's spans ahead of a reader that asks for them in order (see the module).

    Per window: ``start(data, spans)``, then ``take`` for each payload the reader decompresses, then
    ``finish()`` before ``data`` changes. ``close()`` at the end (or use it as a context manager).
    """

    def __init__(
        self,
        decompress: Decompress,
        *,
        chunk_bytes: int | None = None,
        ahead_chunks: int | None = None,
        budget: int | None = None,
        codecs: Container[int] | None = None,
    ) -> None:
        self._decompress = decompress
        self._codecs = AHEAD_CODECS if codecs is None else codecs  # the others: decompressed when asked
        self._chunk_bytes = CHUNK_BYTES if chunk_bytes is None else chunk_bytes
        self._ahead = AHEAD_CHUNKS if ahead_chunks is None else ahead_chunks
        self._budget = BUDGET if budget is None else budget
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None
        self._switch: float | None = None  # the interpreter's switch interval, while lowered
        self._closed = False
        self._worker_cpu = 0.0  # seconds of CPU the worker spent inflating (written by the worker alone)
        # Wall time, the reader's CPU and the worker's at the last judgement (None: not running).
        self._since: tuple[float, float, float] | None = None
        self._working = False  # the worker is inflating a chunk of this window
        self._generation = 0  # bumped by finish(): a chunk of an older window is dropped
        self._view: memoryview | None = None
        self._source: Iterator[Span] | None = None
        self._spans: list[Span] = []
        self._results: list[bytes | _Failed | None] = []
        self._chunk_of: list[_Chunk | None] = []  # span index -> its chunk (None: inflated when asked)
        self._chunks: list[_Chunk] = []
        self._queue: deque[_Chunk] = deque()  # chunks nobody has taken, in file order
        self._next = 0  # the span the reader asks for next
        self._chunk = -1  # the chunk the reader is in
        self._made = 0  # bytes inflated into the results (under the lock)
        self._used = 0  # of them, bytes taken by the reader (by the reader alone)
        self._reader_waits = False  # the reader waits on the condition (set under the lock)
        self._worker_waits = False  # so does the worker

    def __enter__(self) -> InflateAhead:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def start(self, data: bytes | bytearray, spans: Iterator[Span]) -> None:
        """Begin a window: ``spans`` (lazily read) are the payloads of ``data`` the reader will ask for."""
        self.finish()
        if self._closed:
            return  # stopped (``close``, or the worker did not pay): each payload inflated where asked
        self._view = memoryview(data)
        self._source = spans
        self._extend(0)

    def start_window(self, data: bytes | bytearray, pos: int, end: int) -> None:
        """Begin a window with the payloads ``compressed_spans`` finds in ``data[pos:end]``."""
        self.start(data, compressed_spans(data, pos, end))

    def finish(self) -> None:
        """End the window: drop what is queued or waiting, and wait for the worker to leave ``data``."""
        with self._lock:
            self._generation += 1
            self._queue.clear()
            while self._working:
                self._cond.wait(_NAP)
            self._made = self._used = 0
        self._view = None
        self._source = None
        self._spans = []
        self._results = []
        self._chunk_of = []
        self._chunks = []
        self._next = 0
        self._chunk = -1

    @property
    def queued(self) -> bool:
        """Whether this window has chunks to inflate ahead (else ``take`` only decompresses where asked)."""
        return bool(self._chunks)

    def _judge(self) -> None:
        """Stop the worker when, since the last judgement (``_SAMPLE`` seconds or more ago: judged as
        the reader enters a chunk), the two threads together got less than ``_MIN_OVERLAP`` seconds
        of CPU a second: no core was free for the worker (other processes hold them), and two
        threads taking turns at the GIL on one core only cost more than one."""
        assert self._since is not None
        wall0, main0, worker0 = self._since
        wall = time.perf_counter() - wall0
        overlap = (time.thread_time() - main0 + self._worker_cpu - worker0) / wall
        if overlap < _MIN_OVERLAP:
            self._stop()
        else:
            self._since = (time.perf_counter(), time.thread_time(), self._worker_cpu)

    def close(self) -> None:
        """Stop the worker (after the payload it is on) and join it; restore the switch interval."""
        self.finish()
        self._stop()

    def _stop(self) -> None:
        self._since = None
        with self._lock:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._switch is not None:
            sys.setswitchinterval(self._switch)
            self._switch = None

    def take(self, codec: int, payload: memoryview) -> bytes:
        """``decompress(codec, payload)`` for the next payload the reader meets: inflated ahead, when
        it is the next span's, else here."""
        i = self._next
        spans = self._spans
        if i >= len(spans):
            if self._source is None:
                return self._decompress(codec, payload)
            self._extend(len(self._chunks))
            if i >= len(spans):
                self._source = None
                return self._decompress(codec, payload)
        want, start, length = spans[i]
        view = self._view
        assert view is not None
        if (
            want != codec
            or length != len(payload)
            or view[start : start + length].tobytes() != payload.tobytes()
        ):
            self._source = None  # not the payload the scan foresaw: the rest is decompressed where asked
            self._next = len(spans)
            return self._decompress(codec, payload)
        self._next = i + 1
        chunk = self._chunk_of[i]
        if chunk is None:
            return self._decompress(codec, payload)
        if chunk.index != self._chunk:
            self._chunk = chunk.index  # the reader enters a chunk: scan and queue one more
            if self._since is not None and time.perf_counter() - self._since[0] >= _SAMPLE:
                self._judge()
            self._extend(chunk.index)
        results = self._results
        found = results[i]
        if found is None:
            found = self._wait(i, chunk)
            if found is None:
                return self._decompress(codec, payload)
        results[i] = None
        if type(found) is _Failed:
            raise found.exc
        assert type(found) is bytes
        self._used += len(found)
        if self._worker_waits:
            with self._lock:
                self._cond.notify()
        return found

    def _wait(self, i: int, chunk: _Chunk) -> bytes | _Failed | None:
        """Span ``i``'s result once the worker has it; None when the reader is to inflate it itself.
        While the worker is on ``i``'s chunk, the reader inflates the next queued chunk meanwhile."""
        lock, results = self._lock, self._results
        with lock:
            while True:
                found = results[i]
                if found is not None:
                    return found
                if chunk.state == _PENDING:
                    self._queue.remove(chunk)
                    chunk.state = _READER  # the reader is here first: this chunk is inflated as asked
                if chunk.state != _WORKER:
                    return None
                if self._queue and self._made - self._used < self._budget:
                    other = self._queue.popleft()
                    other.state = _READER
                    generation = self._generation
                    lock.release()
                    try:
                        self._inflate(other, generation)
                    finally:
                        lock.acquire()
                else:
                    self._reader_waits = True
                    self._cond.wait(_NAP)
                    self._reader_waits = False

    def _extend(self, here: int) -> None:
        """Scan and queue chunks until ``ahead_chunks`` lie beyond chunk ``here`` (the reader's)."""
        source = self._source
        if source is None:
            return
        spans, chunks = self._spans, self._chunks
        added: list[_Chunk] = []
        wanted, chunk_of, results = self._codecs, self._chunk_of, self._results
        while len(chunks) + len(added) - here <= self._ahead:
            first = len(spans)
            size = count = 0
            for span in source:
                spans.append(span)
                results.append(None)
                if span[0] in wanted:
                    size += span[2]
                    count += 1
                    if size >= self._chunk_bytes:
                        break
            if count == 0:
                self._source = None
                chunk_of.extend([None] * (len(spans) - first))
                break
            chunk = _Chunk(len(chunks) + len(added), first, len(spans))
            added.append(chunk)
            chunk_of.extend(chunk if span[0] in wanted else None for span in spans[first:])
        if not added:
            return
        chunks.extend(added)
        with self._lock:
            self._queue.extend(added)
            if self._worker_waits:
                self._cond.notify()
        if self._thread is None and not self._closed:
            self._switch = sys.getswitchinterval()
            sys.setswitchinterval(min(self._switch, _SWITCH_INTERVAL))
            self._thread = threading.Thread(target=self._work, name="kdump-inflate-ahead", daemon=True)
            self._thread.start()
            self._since = (time.perf_counter(), time.thread_time(), self._worker_cpu)

    def _work(self) -> None:
        lock, cond = self._lock, self._cond
        while True:
            with lock:
                while not self._closed and not (self._queue and self._made - self._used < self._budget):
                    self._worker_waits = True
                    cond.wait(_NAP)
                    self._worker_waits = False
                if self._closed:
                    return
                chunk = self._queue.popleft()
                chunk.state = _WORKER
                self._working = True
                generation = self._generation
            began = time.thread_time()
            try:
                self._inflate(chunk, generation)
            finally:
                self._worker_cpu += time.thread_time() - began
                with lock:
                    self._working = False
                    cond.notify_all()

    def _inflate(self, chunk: _Chunk, generation: int) -> None:
        """Inflate ``chunk``'s spans into the results (by the worker, or the reader while it would
        wait); stop early past the budget: the rest is then inflated when asked."""
        view, spans, results = self._view, self._spans, self._results
        decompress, wanted = self._decompress, self._codecs
        lock = self._lock
        assert view is not None
        try:
            for i in range(chunk.first, chunk.end):
                codec, start, length = spans[i]
                if codec not in wanted:
                    continue
                found: bytes | _Failed
                try:
                    found = decompress(codec, view[start : start + length])
                except Exception as exc:  # the reader raises it when it asks
                    found = _Failed(exc)
                with lock:
                    if generation != self._generation:
                        return
                    results[i] = found
                    if type(found) is bytes:
                        self._made += len(found)
                    if self._reader_waits:
                        self._cond.notify()
                    if self._made - self._used >= self._budget:
                        return
        finally:
            with lock:
                chunk.state = _DONE
                if self._reader_waits:
                    self._cond.notify()


_CODECS = tuple(Compression(i) for i in range(8))  # ids 5-7 are UNKNOWN


class Inflating(Protocol):
    """What the segment reader asks of a source of decompressed payloads, per read window: ``start``
    gives the function (``codecs.decompress``'s) the window's entries from ``pos`` on are decoded
    with, asked in file order; ``close`` at the end of the file (also on an exception)."""

    def start(self, window: bytes, pos: int) -> Unpack: ...

    def close(self) -> None: ...


class Inline:
    """Each payload decompressed where it is asked (``codecs.decompress``): no thread."""

    def start(self, window: bytes, pos: int) -> Unpack:
        return decompress

    def close(self) -> None:
        pass


class Ahead:
    """The window's gzip payloads inflated ahead on a second thread while the decoder reads the
    entries before them. Each payload asked for is checked against the one inflated, so the bytes (or
    the exception) are ``codecs.decompress``'s either way; a payload asked with another limit than
    ``limit`` is decompressed where it is asked. No thread without gzip.

    With the compiled module (not ``KDUMP_PURE``) the work is its ``InflateEngine``'s: a thread
    that inflates into bytes made for it and never takes the GIL. Otherwise, or with ``compiled``
    false, ``InflateAhead``'s."""

    def __init__(self, limit: int, *, compiled: bool = True) -> None:
        self._limit = limit
        self._engine = _engine(limit) if compiled else None
        self._ahead = InflateAhead(self._inflate, chunk_bytes=READER_CHUNK_BYTES)  # no thread till started
        self._take = self._ahead.take

    def _inflate(self, codec: int, payload: memoryview) -> bytes:
        return decompress(_CODECS[codec], payload, self._limit)

    def start(self, window: bytes, pos: int) -> Unpack:
        engine = self._engine
        if engine is not None:
            return engine.take if engine.scan(window, pos, len(window)) else decompress
        self._ahead.start(window, compressed_spans(window, pos, len(window)))
        # Nothing queued (no gzip near the window's start, or the worker stopped): no check per payload.
        return self.unpack if self._ahead.queued else decompress

    def unpack(self, codec: Compression, payload: bytes | memoryview, limit: int) -> bytes:
        if limit != self._limit:
            return decompress(codec, payload, limit)
        return self._take(codec, payload if type(payload) is memoryview else memoryview(payload))

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()
        self._ahead.close()


def _engine(limit: int, fallback: Unpack | Decompress = decompress) -> InflateEngine | None:
    """The compiled engine (payloads it does not inflate go to ``fallback``), where the compiled
    module is in use."""
    return native.InflateEngine(fallback, limit, BUDGET) if native else None


class CompiledAhead:
    """``InflateAhead``'s interface over the compiled engine, for readers that hand it a
    ``Decompress`` function (codec and payload: ``codecs.decompress`` with the engine's limit)."""

    def __init__(self, engine: InflateEngine) -> None:
        self._engine = engine
        self.take: Decompress = engine.take

    def start_window(self, data: bytes | bytearray, pos: int, end: int) -> None:
        """Begin a window with the payloads the engine's scan (``compressed_spans``' in C) finds."""
        self._engine.scan(data, pos, end)

    def finish(self) -> None:
        self._engine.finish()

    def close(self) -> None:
        self._engine.close()


def inflate_ahead(fn: Decompress, limit: int) -> InflateAhead | CompiledAhead:
    """An inflate-ahead source for ``fn``, which must give ``codecs.decompress(codec, payload,
    limit)`` for gzip: the compiled engine with the compiled module, else ``InflateAhead``."""
    engine = _engine(limit, fn)
    return InflateAhead(fn) if engine is None else CompiledAhead(engine)
