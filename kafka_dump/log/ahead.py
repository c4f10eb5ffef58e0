"""Inflate ahead: the gzip payloads a reader will ask for next, inflated on a second core meanwhile.

Inflating gzip is most of the work of reading a gzip segment, and zlib needs no interpreter while it
inflates. So while a reader (the segment reader, the entry walk, convert's transcoder) works through
a read window, ``native/ahead.c``'s ``InflateEngine`` scans it for the compressed payloads the reader
will meet and a POSIX thread inflates the gzip ones in file order; when the thread is behind, the
reader inflates the next one itself. The engine's ``take`` is a drop-in for the function it wraps (the
same bytes, or the same exception); a payload not ready, not matching the span scanned, or past the
spans is decompressed where it is asked. At most ``BUDGET`` inflated bytes wait, and the window's
buffer is not touched once ``finish`` has returned.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from kafka_dump.model import Compression
from kafka_dump.native import native
from kafka_dump.wire.codecs import decompress

if TYPE_CHECKING:
    from kafka_dump.native._native import InflateEngine

# codecs.decompress's shape, as the decoder calls it: codec, payload, limit -> decompressed bytes.
Unpack = Callable[[Compression, bytes | memoryview, int], bytes]
# Either, as a source gives back the function it was made with (or the engine's take, of its shape).
Inflate = Callable[..., bytes]

BUDGET = 8 * 1024 * 1024  # inflated bytes that may wait for the reader
AHEAD_FROM = 64 * 1024  # a smaller file is inflated where it is read: an engine costs more than it saves


class Inflating(Protocol):
    """A source of decompressed payloads: ``start`` gives the function for a window's payloads from
    ``pos`` (to ``end``, by default the window's end), asked in file order; ``finish`` comes before the
    buffer is read into again; ``close`` at the end of the file (also on an exception)."""

    def start(self, window: bytes | bytearray, pos: int, end: int | None = None) -> Inflate: ...

    def finish(self) -> None: ...

    def close(self) -> None: ...


class Inline:
    """Each payload decompressed where it is asked, by ``fallback`` (``codecs.decompress`` by
    default, or a reader's own function of the same bytes): no thread."""

    def __init__(self, fallback: Inflate = decompress) -> None:
        self._fallback = fallback

    def start(self, window: bytes | bytearray, pos: int, end: int | None = None) -> Inflate:
        return self._fallback

    def finish(self) -> None:
        pass

    def close(self) -> None:
        pass


class Ahead(Inline):
    """The window's gzip payloads inflated ahead on a second thread while the reader works through
    the entries before them (the compiled engine; ``Inline`` where it is not built or ``KDUMP_PURE``).
    The bytes, or the exception, are ``fallback``'s either way; a payload asked with another limit
    than ``limit`` is decompressed where it is asked. No thread without gzip."""

    def __init__(self, limit: int, fallback: Inflate = decompress) -> None:
        super().__init__(fallback)
        self._engine: InflateEngine | None = native.InflateEngine(fallback, limit, BUDGET) if native else None

    def start(self, window: bytes | bytearray, pos: int, end: int | None = None) -> Inflate:
        engine = self._engine
        if engine is not None and engine.scan(window, pos, len(window) if end is None else end):
            return engine.take
        return self._fallback

    def finish(self) -> None:
        if self._engine is not None:
            self._engine.finish()

    def close(self) -> None:
        if self._engine is not None:
            self._engine.close()


def inflating_for(size: int, limit: int, fallback: Inflate = decompress, *, ahead: bool = True) -> Inflating:
    """The source for a file of ``size`` bytes: ``Ahead`` when asked for (``ahead``) and the file is
    large enough to pay for it, else ``Inline`` (a partition of small segments makes one per file)."""
    if ahead and size >= AHEAD_FROM:
        return Ahead(limit, fallback)
    return Inline(fallback)
