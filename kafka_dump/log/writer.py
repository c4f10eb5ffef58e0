"""Writing a segment and its ``.index`` and ``.timeindex`` safely, as a Kafka broker would lay them out.

Every file is written to a temporary file in the output's directory, fsynced, then renamed into
place (the ``.log`` first: Kafka rebuilds a segment's missing indexes), and the directory fsynced. An
existing path is replaced only when asked, and never when it is a file being read (the same inode).
An aborted write leaves nothing behind, nor does a write that fails (a full disk) or a SIGTERM or SIGHUP
that ends the process. Only a regular file is ever replaced, never a device, FIFO or symbolic link.

Indexes hold the entries Kafka's ``LogSegment.recover`` builds: an offset index entry (relative
lastOffset, position) when more than ``index.interval.bytes`` were written since the last one, with
a time index entry (max timestamp so far, its batch's relative lastOffset) if that timestamp grew;
a closed segment's time index ends with the largest timestamp seen, if it is not there yet.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, BinaryIO

from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.index import OFFSET_ENTRY, TIME_ENTRY
from kafka_dump.log.names import segment_base_offset
from kafka_dump.model import Batch, Compression, TimestampType
from kafka_dump.wire import encode_entry
from kafka_dump.wire import layout as L

INDEX_INTERVAL_BYTES = 4096  # Kafka's index.interval.bytes default
NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP: what an empty time index's last entry holds
MAX_SEGMENT_BYTES = 2**31 - 1  # positions are int32 in the offset index


class IndexBuilder:
    """The ``.index`` and ``.timeindex`` entries for entries appended one at a time (no I/O)."""

    def __init__(self, base_offset: int, interval_bytes: int = INDEX_INTERVAL_BYTES) -> None:
        self.base_offset = base_offset
        self.interval_bytes = interval_bytes
        self.position = 0  # bytes appended so far: the next entry's position
        self._last_indexed_position = 0
        self._last_offset: int | None = None
        self._max_timestamp = NO_TIMESTAMP
        self._offset_of_max = base_offset
        self._last_time_entry = (NO_TIMESTAMP, base_offset)
        self.offset_entries: list[tuple[int, int]] = []  # (relative offset, position)
        self.time_entries: list[tuple[int, int]] = []  # (timestamp, relative offset)

    def _relative(self, offset: int) -> int:
        relative = offset - self.base_offset
        if not 0 <= relative <= L.INT32_MAX:
            raise KafkaDumpError(
                f"offset {offset} does not fit a segment with base offset {self.base_offset}"
                " (Kafka's indexes hold 0..2^31-1 past it)"
            )
        return relative

    def add(self, size: int, first_offset: int, last_offset: int, max_timestamp: int) -> None:
        """One log entry of ``size`` bytes, holding offsets ``first_offset..last_offset``, appended at
        ``self.position``."""
        relative = self._relative(last_offset)
        if last_offset < first_offset or (
            self._last_offset is not None and first_offset <= self._last_offset
        ):
            after = "" if self._last_offset is None else f" after offset {self._last_offset}"
            raise KafkaDumpError(f"offsets {first_offset}..{last_offset}{after}: offsets must grow")
        if self.position + size > MAX_SEGMENT_BYTES:
            raise KafkaDumpError("a segment cannot pass 2 GiB (its positions are 32-bit)")
        self._last_offset = last_offset
        if max_timestamp > self._max_timestamp:
            self._max_timestamp, self._offset_of_max = max_timestamp, last_offset
        if self.position - self._last_indexed_position > self.interval_bytes:
            self.offset_entries.append((relative, self.position))
            self._maybe_append_time()
            self._last_indexed_position = self.position
        self.position += size

    def _maybe_append_time(self) -> None:
        """``TimeIndex.maybeAppend``: only a timestamp larger than the last entry's."""
        if self._max_timestamp > self._last_time_entry[0]:
            self._last_time_entry = (self._max_timestamp, self._offset_of_max)
            self.time_entries.append((self._max_timestamp, self._relative(self._offset_of_max)))

    def close(self) -> None:
        """A closed segment's time index ends with the largest timestamp seen (``onBecomeInactiveSegment``)."""
        self._maybe_append_time()

    def index_bytes(self) -> bytes:
        return b"".join(OFFSET_ENTRY.pack(*e) for e in self.offset_entries)

    def timeindex_bytes(self) -> bytes:
        return b"".join(TIME_ENTRY.pack(*e) for e in self.time_entries)


@dataclass(frozen=True)
class WrittenSegment:
    """What ``SegmentWriter.commit`` wrote."""

    log: Path
    index: Path | None
    timeindex: Path | None
    base_offset: int
    entries: int
    size: int
    index_entries: int
    time_index_entries: int


def _entries_of(batch: Batch) -> list[Batch]:
    """The log entries a batch becomes: an uncompressed v0/v1 batch is one message per record."""
    if batch.magic < 2 and batch.compression is Compression.NONE and batch.records and len(batch.records) > 1:
        return [
            batch._replace(
                baseOffset=r.offset,
                lastOffset=r.offset,
                baseTimestamp=r.timestamp,
                maxTimestamp=r.timestamp,
                recordCount=1,
                records=(r,),
            )
            for r in batch.records
        ]
    return [batch]


def _max_timestamp(batch: Batch) -> int:
    """The entry's max timestamp as Kafka reads it (none for v0)."""
    if batch.magic == 0 or batch.timestampType is TimestampType.NO_TIMESTAMP_TYPE:
        return NO_TIMESTAMP
    if batch.magic < 2 and batch.compression is Compression.NONE and batch.records:
        return batch.records[0].timestamp
    return batch.maxTimestamp


class SegmentWriter:
    """Write a segment (and by default its indexes) entry by entry, then ``commit`` or ``abort`` (as
    a context manager: on success, on an exception). ``base_offset`` defaults to the file name's, else
    the first batch's (the rule of ``index.index_base_offset``, which every reader follows). ``sources`` are the files being read: none of them is ever written over."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        base_offset: int | None = None,
        overwrite: bool = False,
        sources: Sequence[str | os.PathLike[str]] = (),
        indexes: bool = True,
        index_interval_bytes: int = INDEX_INTERVAL_BYTES,
    ) -> None:
        self.path = Path(path)
        self._targets = [self.path]
        if indexes:
            self._targets += [self.path.with_suffix(".index"), self.path.with_suffix(".timeindex")]
        self._overwrite = overwrite
        self._check_targets(sources)
        self._base = base_offset if base_offset is not None else segment_base_offset(self.path)
        self._interval = index_interval_bytes
        self._index: IndexBuilder | None = None
        self._indexes = indexes
        self._entries = 0
        self._tmp: list[Path] = []
        self._open: list[BinaryIO] = []
        self._log = self._temp(self.path)
        self._done = False

    def _check_targets(self, sources: Sequence[str | os.PathLike[str]]) -> None:
        # A segment is read with its indexes (to seek): they count as being read too.
        read = [Path(s) for s in sources]
        read += [p.with_suffix(x) for p in read if p.suffix == ".log" for x in (".index", ".timeindex")]
        for target in self._targets:
            check_output(target)
            if not target.exists():
                continue
            source = next((s for s in read if same_file(target, s)), None)
            if source is not None:
                raise KafkaDumpError(
                    f"refusing to write over {source}, which is being read", file=str(target)
                )
            if not self._overwrite:
                raise KafkaDumpError("already exists (not overwritten unless asked)", file=str(target))
        if not self.path.parent.is_dir():
            raise KafkaDumpError("no such directory for the output", file=str(self.path.parent))

    def _temp(self, target: Path) -> BinaryIO:
        try:
            name, fd = temporary(target)
        except OSError as exc:
            reason = f"cannot create a temporary file: {exc.strerror}"
            raise KafkaDumpError(reason, file=str(target)) from None
        self._tmp.append(name)
        f = os.fdopen(fd, "wb")
        self._open.append(f)
        return f

    def append(self, batch: Batch, entry: bytes | None = None) -> None:
        """Append a batch: its ``entry`` bytes when given (already encoded), else ``encode_entry(batch)``."""
        if self._done:
            raise KafkaDumpError("the segment was already committed or aborted", file=str(self.path))
        parts = [(batch, entry)] if entry is not None else [(b, encode_entry(b)) for b in _entries_of(batch)]
        for b, data in parts:
            if self._index is None:
                self._index = IndexBuilder(b.baseOffset if self._base is None else self._base, self._interval)
            self._index.add(len(data), b.baseOffset, b.lastOffset, _max_timestamp(b))
            self._log.write(data)
            self._entries += 1

    def commit(self) -> WrittenSegment:
        """Flush, fsync and rename every file into place; return what was written."""
        if self._done:
            raise KafkaDumpError("the segment was already committed or aborted", file=str(self.path))
        index = self._index or IndexBuilder(self._base or 0, self._interval)
        index.close()
        try:
            files = [self._log]
            if self._indexes:
                datas = (index.index_bytes(), index.timeindex_bytes())
                for target, data in zip(self._targets[1:], datas, strict=True):
                    f = self._temp(target)
                    f.write(data)
                    files.append(f)
            for f in files:
                sync_close(f)
            place_all(zip(self._tmp, self._targets, strict=True), self._place, self._overwrite)
        except BaseException:
            self.abort()
            raise
        self._done = True
        index_path, timeindex_path = self._targets[1:] if self._indexes else (None, None)
        counts = (self._entries, index.position, len(index.offset_entries), len(index.time_entries))
        return WrittenSegment(self.path, index_path, timeindex_path, index.base_offset, *counts)

    def _place(self, tmp: Path, target: Path) -> None:
        exists = KafkaDumpError("already exists (not overwritten unless asked)", file=str(target))
        try:
            place(tmp, target, self._overwrite, exists)
        except OSError as exc:
            raise KafkaDumpError(f"cannot write: {exc.strerror}", file=str(target)) from None

    def abort(self) -> None:
        """Remove the temporary files; nothing is renamed into place."""
        self._done = True
        discard(self._open, self._tmp)

    def __enter__(self) -> SegmentWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._done:
            return
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def _umask() -> int:
    """The process's umask (read by setting it, and setting it back at once)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def check_writable(directory: Path) -> None:
    """Fail now when no file can be made in ``directory`` (or the nearest existing one above it): a
    real attempt, so that read-only file systems, permissions and root's exemptions answer truly."""
    existing = directory
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    if not existing.is_dir():
        raise KafkaDumpError("not a directory", file=str(existing))
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise KafkaDumpError(f"cannot write here ({exc.strerror or exc})", file=str(existing)) from None


def check_output(target: Path) -> None:
    """Refuse an output path that names anything but a regular file or nothing: a device, a FIFO, a
    socket, a directory or a symbolic link is never replaced, whatever ``--force`` says."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise KafkaDumpError(f"cannot check the output: {exc.strerror}", file=str(target)) from None
    if not stat.S_ISREG(mode):
        what = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise KafkaDumpError(f"the output is {what}: only a regular file is ever replaced", file=str(target))


_KINDS = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFDIR: "a directory",
}

# Temporary files not yet renamed into place: removed if a signal ends the process before then.
_LIVE: set[str] = set()
_CLEANUP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def temporary(target: Path, suffix: str = ".tmp") -> tuple[Path, int]:
    """A new temporary file beside ``target`` (its path and an open descriptor), with the mode any new
    file gets under the umask (``mkstemp`` makes it 0600), since it is renamed into place as the
    output; removed if SIGTERM or SIGHUP ends the process before it is renamed (``place``) or
    discarded (``discard``)."""
    _remove_on_signals()
    # Held back while the file is made and not yet listed: it would be left behind.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _CLEANUP_SIGNALS)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
        _LIVE.add(name)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
    except BaseException:
        discard([os.fdopen(fd, "wb")], [Path(name)])
        raise
    return Path(name), fd


def discard(files: Iterable[BinaryIO], temporaries: Iterable[Path]) -> None:
    """Close ``files`` (a failed flush, as on a full disk, is no reason to keep anything) and remove
    ``temporaries``."""
    for f in files:
        with contextlib.suppress(OSError):
            f.close()
    for tmp in temporaries:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        _LIVE.discard(str(tmp))


def _remove_on_signals() -> None:
    """Install the handler for the signals that end the process by default (not one ignored or
    handled by someone else, and only where Python can install one: the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in _CLEANUP_SIGNALS:
        if signal.getsignal(signum) is signal.SIG_DFL:
            signal.signal(signum, _end_by_signal)


def _end_by_signal(signum: int, _frame: object) -> None:
    """Remove the live temporary files, then die of the signal as if there were no handler."""
    for name in list(_LIVE):
        with contextlib.suppress(OSError):
            os.unlink(name)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def same_file(a: Path, b: Path) -> bool:
    """Do ``a`` and ``b`` name one file (the same inode)? False when either cannot be read."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def sync_close(f: BinaryIO) -> None:
    f.flush()
    os.fsync(f.fileno())
    f.close()


def place(tmp: Path, target: Path, overwrite: bool, exists: KafkaDumpError) -> None:
    """Rename ``tmp`` to ``target``; without ``overwrite``, never over a file that exists (``exists`` is
    raised then)."""
    if overwrite:
        check_output(target)  # again, just before: it may have changed since the first check
        os.replace(tmp, target)
        _LIVE.discard(str(tmp))
        return
    try:
        os.link(tmp, target)  # fails if the target exists: never clobbered
    except FileExistsError:
        raise exists from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        if target.exists():  # a file system without hard links: check, then rename
            raise exists from None
        os.rename(tmp, target)
        _LIVE.discard(str(tmp))
        return
    os.unlink(tmp)
    _LIVE.discard(str(tmp))


def place_all(moves: Iterable[tuple[Path, Path]], put: Callable[[Path, Path], None], overwrite: bool) -> None:
    """``put`` each temporary file in place, in order, then sync their directory. On a failure,
    without ``overwrite``, the targets placed are removed: half an output is none at all."""
    placed: list[Path] = []
    try:
        for tmp, target in moves:
            put(tmp, target)
            placed.append(target)
        if placed:
            fsync_dir(placed[0].parent)
    except BaseException:
        if not overwrite:
            for target in placed:
                with contextlib.suppress(OSError):
                    os.unlink(target)
        raise


def fsync_dir(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):  # some file systems cannot fsync a directory
            os.fsync(fd)
    finally:
        os.close(fd)


def write_segment(path: str | os.PathLike[str], batches: Iterable[Batch], **options: Any) -> WrittenSegment:
    """Encode ``batches`` (each in its own magic and codec) into a new segment at ``path`` by a
    ``SegmentWriter(path, **options)``. No batches give a valid empty segment (and empty indexes)."""
    with SegmentWriter(path, **options) as w:
        for batch in batches:
            w.append(batch)
        return w.commit()
