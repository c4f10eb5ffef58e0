"""The one read window over a segment file, which every command's reader takes its entries through.

A window holds ``read_size`` bytes of the file from some position (or one larger span, whole), so
memory holds one window whatever the file's size. ``span`` slices what is asked out of the window,
reading it afresh when the span is not all in it; ``fill`` reads it afresh from a position. With
``reuse`` it reads into one ``bytearray`` of its own, for walks that keep nothing past the next read.

``size`` is the file's size when it was opened, and no read goes past it: a segment a broker appends
to while it is read gives the bytes it held at open. A file that shrank since (retention, truncation)
ends a ``span`` with ``FileShrankError``, which the readers report as the file's tail.

``MappedWindow`` maps its window instead of reading it, for walks that touch only the headers.
"""

from __future__ import annotations

import errno
import io
import mmap
import os
import stat
from typing import BinaryIO, Generic, Literal, TypeVar, overload

from kafka_dump.errors import KafkaDumpError, NotASegmentError
from kafka_dump.model import Check, Problem, ProblemKind

CHUNK_SIZE = 4 * 1024 * 1024
B = TypeVar("B", bytes, bytearray)


class FileShrankError(NotASegmentError):
    """The file now ends at ``end``, before the size it had when it was opened."""

    def __init__(self, position: int, end: int, size: int) -> None:
        super().__init__(f"file shrank while it was being read: it now ends at byte {end}", position=position)
        self.end = end
        self.size = size


def shrank_tail(name: str, pos: int, error: FileShrankError) -> Problem:
    """The tail a reader reports when the file shrank under it: from the entry it was reading (``pos``)
    to the size the file had when opened, a partial tail as an unclean shutdown leaves."""
    n = error.size - pos
    reason = (
        f"file changed while read: it now ends at byte {error.end}, not at {error.size} as when opened; "
        f"the {n} bytes from here are a partial tail"
    )
    return Problem(name, pos, n, ProblemKind.PARTIAL_TAIL, reason, None, Check.PARTIAL_TAIL)


class Window(Generic[B]):
    """``buf[0:end]`` is ``file[start:start + end]``; ``size`` is the file's size."""

    __slots__ = ("_f", "_spare", "buf", "end", "read_size", "size", "start")

    @overload
    def __init__(
        self: Window[bytes], f: BinaryIO, size: int, read_size: int, *, reuse: Literal[False] = False
    ) -> None: ...
    @overload
    def __init__(
        self: Window[bytearray], f: BinaryIO, size: int, read_size: int, *, reuse: Literal[True]
    ) -> None: ...
    def __init__(self, f: BinaryIO, size: int, read_size: int, *, reuse: bool = False) -> None:
        self._f = f
        self.size = size
        self.read_size = read_size
        self._spare = bytearray(min(read_size, max(size, 1))) if reuse else None
        self.buf: B = bytearray() if reuse else b""  # type: ignore[assignment]
        self.start = 0
        self.end = 0

    def span(self, pos: int, n: int) -> tuple[B, int]:
        """Return (buffer, index) such that buffer[index:index+n] is file[pos:pos+n]; n is in-file."""
        start = self.start
        if start <= pos and pos + n <= start + self.end:
            return self.buf, pos - start
        if (got := self.fill(pos, n)) < n:
            raise FileShrankError(pos, pos + got, self.size)
        return self.buf, 0

    def fill(self, pos: int, n: int = 0) -> int:
        """Read the window afresh from ``pos``: ``read_size`` bytes, or ``n`` if more, but none past
        ``size``; the bytes read (fewer where the file shrank). Read at the position (``pread``): the
        file's own position is neither used nor moved."""
        fd = self._f.fileno()
        want = max(0, min(max(n, self.read_size), self.size - pos))
        spare = self._spare
        if spare is not None:
            self.buf = spare if want <= len(spare) else bytearray(want)  # type: ignore[assignment]
            with memoryview(self.buf) as whole:
                got = 0
                while got < want and (k := os.preadv(fd, [whole[got:want]], pos + got)):
                    got += k  # a short read before the end (a signal, a network file system): read on
            self.end = got
        else:
            data = os.pread(fd, want, pos)
            if 0 < (got := len(data)) < want:  # a short read before the end: read on, as above
                parts = [data]
                while got < want and (more := os.pread(fd, want - got, pos + got)):
                    parts.append(more)
                    got += len(more)
                data = b"".join(parts)
            self.buf = data  # type: ignore[assignment]
            self.end = len(data)
        self.start = pos
        return self.end

    def next_data(self, pos: int) -> int:
        """The first position at or after ``pos`` that is not in a hole of a sparse file (else ``pos``)."""
        try:
            return min(os.lseek(self._f.fileno(), pos, os.SEEK_DATA), self.size)
        except OSError as exc:
            return self.size if exc.errno == errno.ENXIO else pos  # ENXIO: only a hole follows
        except (AttributeError, ValueError, io.UnsupportedOperation):
            return pos  # no SEEK_DATA here, or no file descriptor

    def all_zero(self, pos: int) -> bool:
        while (pos := self.next_data(pos)) < self.size:
            n = min(CHUNK_SIZE, self.size - pos)
            buf, i = self.span(pos, n)
            if buf[i : i + n].count(0) != n:
                return False
            pos += n
        return True


class MappedWindow:
    """A read-only memory map of a window of a file: ``buf[0:end]`` is ``file[start:start + end]``.

    For walks that touch only some bytes of what they are given (the headers of large entries): only
    the pages that hold them are read from the page cache, never copied. One window is mapped at a
    time (its pages leave the process with it), so memory does not grow with the file.
    """

    def __init__(self, f: BinaryIO, size: int, map_size: int) -> None:
        self._f = f
        self.size = size
        self.map_size = map_size
        self.buf: mmap.mmap | bytes = b""
        self.start = self.end = 0

    def fill(self, pos: int, n: int = 0) -> int:
        """Map the file from ``pos`` (``map_size`` bytes, or ``n`` if more, none past its size); the bytes
        mapped from ``pos``."""
        self.close()
        start = pos - pos % mmap.ALLOCATIONGRANULARITY
        # Never map past the file's size now: a page past the end of a file that shrank (a live
        # segment truncated) would kill the process with SIGBUS when touched.
        self.size = min(self.size, os.fstat(self._f.fileno()).st_size)
        length = min(self.size - start, max(self.map_size, n + (pos - start)))
        if length <= 0:
            self.buf, self.start, self.end = b"", pos, 0
            return 0
        self.buf = mmap.mmap(self._f.fileno(), length, access=mmap.ACCESS_READ, offset=start)
        self.start, self.end = start, length
        return length - (pos - start)

    def close(self) -> None:
        if isinstance(self.buf, mmap.mmap):
            self.buf.close()
        self.buf = b""

    def __enter__(self) -> MappedWindow:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_segment(path: str | os.PathLike[str]) -> tuple[BinaryIO, int]:
    """Open a segment for reading, turning OS errors into one-line NotASegmentError."""
    try:
        # Unbuffered: the windows read at positions themselves (``Window.fill``), and a buffer would
        # cost a copy, a seek and a terminal check at each open (a share of a check of many small files).
        f = open(path, "rb", buffering=0)  # noqa: SIM115 (closed by the caller)
        st = os.fstat(f.fileno())
        if stat.S_ISFIFO(st.st_mode):
            return _spool(f)
        size = st.st_size
    except OSError as exc:
        raise NotASegmentError(exc.strerror or str(exc), file=str(path)) from None
    return f, size


def unreadable(path: str | os.PathLike[str], st: os.stat_result | None = None) -> Problem | None:
    """A regular file that cannot be opened for reading, as a problem of its own (at byte 0, with the
    system's reason), for a scan of several files that goes on without it; else None. Only regular
    files are tried: opening a pipe to test it would take its writer's data. ``st``: its ``os.stat``,
    when the caller has it. An object in a store is fetched here (``sources.Source``): one that
    cannot be, or cannot be restored from its chunks, is such a problem too."""
    try:
        if not stat.S_ISREG((os.stat(path) if st is None else st).st_mode):
            return None
        os.close(os.open(path, os.O_RDONLY))
    except OSError as exc:
        reason = f"cannot read the file ({exc.strerror or exc})"
        return Problem(str(path), 0, 0, ProblemKind.CORRUPT, reason, None, Check.UNREADABLE)
    except KafkaDumpError as exc:  # the reason names its file where that is another (a manifest)
        reason = exc.reason if exc.file in (None, str(path)) else str(exc)
        return Problem(str(path), 0, 0, ProblemKind.CORRUPT, reason, None, Check.UNREADABLE)
    return None


def _spool(stream: BinaryIO) -> tuple[BinaryIO, int]:
    """A pipe cannot seek: copy it to an unnamed temporary file (disk, not memory) and read that."""
    import tempfile  # only for a pipe: its import is a share of a short check's start-up

    with stream:
        tmp = tempfile.TemporaryFile()  # noqa: SIM115 (returned to the caller, who closes it)
        # The stream is unbuffered: each read is one read of what the pipe holds now (a buffered read
        # would wait for a whole chunk, reading on past a signal's handler), so Ctrl-C is seen between two.
        while chunk := stream.read(CHUNK_SIZE):
            tmp.write(chunk)
        size = tmp.tell()
        tmp.seek(0)
    return tmp, size
