"""Local copies of objects: a source in a store, or a tiered-storage object, fetched (and restored
through its manifest) into a temporary file when first opened (``Source.__fspath__``), so that every
reader reads it as a file. A few are kept at once, all removed at exit; what restoring met (chunks
that failed, the manifest's offsets) is kept for the checks that report it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING

from kafka_dump.errors import NotASegmentError
from kafka_dump.log import aiven, remote
from kafka_dump.log.remote import Store, is_url
from kafka_dump.model import Problem

if TYPE_CHECKING:
    from kafka_dump.log.sources import Source

# Objects' local copies by URL, the newest last, each with the thread that made it: a Dask worker
# runs tasks on several threads, and a thread evicts and releases only its own copies.
_LOCAL: dict[str, tuple[str, int]] = {}
_LOCK = threading.Lock()
_RESTORED: dict[str, aiven.Restored] = {}  # what restoring a tiered object met, by its path
_KEPT = 4  # local copies a thread keeps at once: a command reads its sources in turn

# (object's name, bytes done, bytes in all, what: "3 of 17 chunks" or "") while a copy is made
Watcher = Callable[[str, int, int, str], None]
_WATCHER: tuple[Watcher, int] | None = None  # the watcher and its thread: only that thread's copies


def watch(watcher: Watcher | None) -> None:
    """Tell ``watcher`` how the copies this thread makes from now on go (a progress bar), or stop."""
    global _WATCHER
    _WATCHER = None if watcher is None else (watcher, threading.get_ident())


def _watcher(name: str) -> Callable[[int, int, str], None] | None:
    held = _WATCHER
    if held is None or held[1] != threading.get_ident():
        return None
    watcher = held[0]
    return lambda done, total, what: watcher(name, done, total, what)


def local(source: Source) -> str:
    """The local copy of a source in a store, fetched on first use by byte ranges; the thread's
    oldest copy goes when it holds more than ``_KEPT`` (a reader that has it open keeps reading it)."""
    me = threading.get_ident()
    with _LOCK:
        held = _LOCAL.pop(source.path, None)
        if held is not None:
            _LOCAL[source.path] = held  # the newest now
            return held[0]
    import tempfile

    assert source.store is not None
    where = tempfile.mkdtemp(prefix="kdump-object-")
    base = source.base_offset
    name = f"{base:020d}.log" if source.manifest and base is not None else source.path.rsplit("/", 1)[-1]
    path = os.path.join(where, name or "object")  # Kafka's name kept: its base offset
    seen = _watcher(source.name)
    try:
        with open(path, "wb") as out:
            if source.manifest is not None:
                _RESTORED[source.path] = _restore(source, source.store, source.manifest, out, seen)
            else:
                remote.fetch(source.store, source.path, out, seen=seen)
    except BaseException:
        _remove(path)
        raise
    with _LOCK:
        if (won := _LOCAL.get(source.path)) is not None:  # another thread fetched it meanwhile
            _remove(path)
            return won[0]
        mine = [url for url, (_, owner) in _LOCAL.items() if owner == me]
        for url in mine[: max(0, len(mine) - _KEPT + 1)]:
            _remove(_LOCAL.pop(url)[0])
        _LOCAL[source.path] = (path, me)
    return path


def _restore(
    source: Source, store: Store, manifest: str, out: IO[bytes], seen: aiven.Seen | None
) -> aiven.Restored:
    """Write the segment a tiered-storage ``.log`` object holds, through its manifest, and the
    indexes of the ``.indexes`` object beside it next to the copy (log/aiven.py)."""
    keys = aiven.Keys(store.rsa_keys)
    stem = os.fspath(out.name)[: -len(".log")] if str(out.name).endswith(".log") else None
    indexes_name = source.path[: -len(".log")] + aiven.INDEXES
    missing = NotASegmentError(
        f"the tiered-storage plugin's manifest ({os.path.basename(manifest)}) is missing beside it",
        file=source.name,
    )
    if is_url(source.path):
        size = remote.size(store, source.path)
        if not remote.exists(store, manifest):
            raise missing
        data = remote.read(store, manifest, 0, min(remote.size(store, manifest), aiven.MAX_MANIFEST))
        indexes = None
        if stem is not None and remote.exists(store, indexes_name):
            indexes = aiven.Indexes(indexes_name, remote.size(store, indexes_name),
                                    lambda a, b: remote.read(store, indexes_name, a, b), stem)  # fmt: skip
        return aiven.restore(
            source.name,
            lambda ranges: remote.read_ranges(store, source.path, ranges),
            size,
            data,
            manifest,
            keys,
            out,
            indexes,
            seen,
        )
    try:
        with open(manifest, "rb") as m:
            data = m.read(aiven.MAX_MANIFEST)
    except FileNotFoundError:
        raise missing from None
    except OSError as exc:
        raise NotASegmentError(exc.strerror or str(exc), file=manifest) from None
    try:
        with open(source.path, "rb", buffering=0) as f, contextlib.ExitStack() as held:
            size = os.fstat(f.fileno()).st_size
            fd = f.fileno()
            indexes = None
            if stem is not None and os.path.isfile(indexes_name):
                ix = held.enter_context(open(indexes_name, "rb", buffering=0))
                ix_fd = ix.fileno()
                indexes = aiven.Indexes(indexes_name, os.fstat(ix_fd).st_size,
                                        lambda a, b: os.pread(ix_fd, b - a, a), stem)  # fmt: skip
            return aiven.restore(
                source.name, lambda ranges: [os.pread(fd, b - a, a) for a, b in ranges], size, data, manifest,
                keys, out, indexes, seen,
            )  # fmt: skip
    except OSError as exc:
        raise NotASegmentError(exc.strerror or str(exc), file=exc.filename or source.path) from None


def opening_problems(source: object) -> list[Problem]:
    """The problems met while a tiered-storage object was restored to be read (chunks that failed);
    none for any other source (a path, a Source of a file)."""
    path, manifest = getattr(source, "path", None), getattr(source, "manifest", None)
    if manifest is None or not isinstance(source, os.PathLike):
        return []
    os.fspath(source)  # restored now, if not yet
    restored = _RESTORED.get(str(path))
    return [] if restored is None else restored.problems


def tiered_offsets(source: object) -> tuple[int | None, int | None] | None:
    """(start, end offset) a tiered object's manifest gives its segment, once restored; else None."""
    restored = _RESTORED.get(getattr(source, "path", "")) if getattr(source, "manifest", None) else None
    return None if restored is None else (restored.start_offset, restored.end_offset)


def _remove(path: str) -> None:
    import shutil

    shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def release(sources: Iterable[object]) -> None:
    """Remove the local copies of these sources now: at the end of a worker's task (a worker process
    ends without running exit handlers; a Dask worker's other threads keep theirs)."""
    with _LOCK:
        for source in sources:
            held = _LOCAL.pop(str(getattr(source, "path", "")), None)
            if held is not None:
                _remove(held[0])


@atexit.register
def release_all() -> None:
    """Remove every local copy: at exit, and at the end of a worker process."""
    with _LOCK:
        for path, _ in _LOCAL.values():
            _remove(path)
        _LOCAL.clear()
