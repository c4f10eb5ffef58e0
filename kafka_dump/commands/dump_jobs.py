"""``dump -j N``: the files of a dump read by N processes at once, the output what one process writes,
in the same order.

Each worker dumps one file alone (``write_dump``) into two files of its own in a private temporary
directory, its stdout and its stderr, written as the command's output would write them
(``Output.like``). This process streams each file's share as soon as it is ready, in file order, and
deletes it; only a few files are handed out beyond the one being streamed, so neither memory nor the
disk holds more than their output. The directory is removed on every exit: the end, an error, Ctrl-C,
SIGTERM or SIGHUP (the workers are stopped first).
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from types import FrameType
from typing import Any, NamedTuple

from kafka_dump.analysis.dump import Summary, merged
from kafka_dump.commands.dump import DumpWork, write_dump
from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.copies import release
from kafka_dump.log.sources import Source
from kafka_dump.render.output import Look, Output
from kafka_dump.render.progress import file_size

_AHEAD = 2  # files handed out per worker beyond the one it reads
_COPY = 1 << 20  # bytes of a share copied to stdout at a time
_ENDING = (signal.SIGTERM, signal.SIGHUP)  # signals that end the command: the directory goes first


class _Share(NamedTuple):
    """One file's share of the dump: where its output and its stderr wait, its summary, and the error
    that ended it (raised here in its turn, after what it wrote)."""

    file: str
    size: int
    out: str
    err: str
    summary: Summary
    error: KafkaDumpError | None


class _Ended(BaseException):
    """A signal that ends the command arrived: unwind, clean up, then die of it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def dump_in_parallel(files: list[Source], out: Output, work: DumpWork, jobs: int) -> Summary:
    """Dump ``files`` (two or more) by ``jobs`` processes; the summary of them all."""
    workers = min(jobs, len(files))
    handlers = _catch_ending()
    tmp: str | None = None
    pool: ProcessPoolExecutor | None = None
    done = False
    ending: int | None = None
    try:
        tmp = tempfile.mkdtemp(prefix="kdump-dump-")
        pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_start)
        shares = _shares(pool, files, work, out.look(), tmp, workers)
        total = sum(map(file_size, files)) if out.progress else None
        summary = Summary()
        for share in out.track(shares, lambda s: (s.file, s.size), total):
            _stream(share, out)
            summary = merged(summary, share.summary)
            if share.error is not None:
                raise share.error
            if work.count_only and out.closed:
                summary = Summary()  # as in one process: --count stops when stdout's reader leaves
                break
        done = True
        return summary
    except _Ended as exc:
        ending = exc.signum
        raise
    finally:
        # Held back while the workers stop and their files go: a signal then would leave them behind.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, *_ENDING})
        try:
            if pool is not None:
                _stop(pool, at_once=not done)
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
            if ending is not None:  # die of it, as with no handler (once unblocked)
                signal.signal(ending, signal.SIG_DFL)
                os.kill(os.getpid(), ending)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _shares(
    pool: ProcessPoolExecutor, files: list[Source], work: DumpWork, look: Look, tmp: str, workers: int
) -> Iterator[_Share]:
    """Each file's share in file order, as its worker finishes it; a few files handed out ahead."""
    todo = iter(files)
    pending: deque[Future[_Share]] = deque()
    while True:
        while len(pending) < workers * (1 + _AHEAD) and (f := next(todo, None)) is not None:
            pending.append(pool.submit(_dump_one, f, work, look, tmp))
        if not pending:
            return
        yield pending.popleft().result()


def _dump_one(file: Source, work: DumpWork, look: Look, tmp: str) -> _Share:
    """A worker's task: dump ``file`` alone into two new files in ``tmp``."""
    out_fd, out_name = tempfile.mkstemp(dir=tmp, suffix=".out")
    err_fd, err_name = tempfile.mkstemp(dir=tmp, suffix=".err")
    summary, error = Summary(), None
    with (
        open(out_fd, "w", encoding=look.encoding, errors=look.errors) as stdout,
        open(err_fd, "w", encoding="utf-8", errors="surrogateescape") as stderr,
    ):
        out = Output.like(look, stdout, stderr)
        try:
            summary = write_dump([file], out, work, several=True)
        except KafkaDumpError as exc:
            error = exc
        finally:
            release([file])  # the object's local copy: a worker ends without its exit handlers
        out.flush()
    return _Share(file.name, file_size(file), out_name, err_name, summary, error)


def _stream(share: _Share, out: Output) -> None:
    """A share's output to stdout, then its lines to stderr; its files deleted."""
    with open(share.out, "rb") as f:
        while chunk := f.read(_COPY):
            out.write_bytes(chunk)
    os.unlink(share.out)
    with open(share.err, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            out.write_err(line)
    os.unlink(share.err)


def _worker_start() -> None:
    """A worker leaves Ctrl-C to the command (which stops it) and dies of the signals that end it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in _ENDING:
        signal.signal(signum, signal.SIG_DFL)


def _catch_ending() -> dict[int, Any]:
    """Turn the ending signals into ``_Ended`` while the workers run (where nothing else handles them);
    the handlers they had, to put back."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    handlers: dict[int, Any] = {}
    for signum in _ENDING:
        if signal.getsignal(signum) is signal.SIG_DFL:
            handlers[signum] = signal.signal(signum, _raise_ended)
    return handlers


def _raise_ended(signum: int, _frame: FrameType | None) -> None:
    raise _Ended(signum)


def _stop(pool: ProcessPoolExecutor, *, at_once: bool) -> None:
    """Shut the pool down; ``at_once``: the workers still at a file are stopped, not waited for."""
    if at_once:
        processes = list((pool._processes or {}).values())  # the pool has no public way to stop them
        manager: threading.Thread | None = pool._executor_manager_thread  # type: ignore[assignment]
        pool.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            if p.is_alive():
                p.terminate()
        for p in processes:
            p.join()
        # Its thread is let go by a shutdown that does not wait: joined here, or Python's exit wakes it
        # while it closes its pipe ("Exception ignored ... Bad file descriptor", a race of 3.11's).
        if manager is not None:
            manager.join()
    pool.shutdown(wait=True)
