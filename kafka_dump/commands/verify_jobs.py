"""``verify-crc -j N``: the files of a check shared out between this process and worker processes, the
events what one process yields, in the same order.

The files go in tasks (runs of files, ``tasks``) to this process and ``N - 1`` workers in turn: this
process checks every N-th task itself, streaming its events, and takes a worker's answer (a task's
events, whole) when that task's turn comes. Each worker sends its answers down a pipe of its own and
waits while the pipe is full, so that few answers wait in memory; this process runs no thread to
feed or drain them, which would compete with its own share for the interpreter. By default as many
processes as pay for themselves: a worker is worth its start for 16 MiB of files or 1,024 files.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafka_dump.analysis.verify import FileProgress, VerifyEvent, VerifyOptions, verify_file
from kafka_dump.log.copies import release, release_all
from kafka_dump.render.progress import file_size  # an object's listed size: a look-up never fetches

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

    from kafka_dump.log.sources import Source

# Files a task takes at most: many small segments go in few tasks (a task's answer is a round trip
# between processes), large ones one a task (so the cores stay busy to the end).
TASK_FILES = 512
TASK_BYTES = 16 << 20
WORKER_FILES = 1024  # small files a process at least: fewer are checked here before a worker has started
SAMPLED = 64  # files whose sizes tell the default number of processes


def share(files: list[Source], jobs: int | None, *, progress: bool) -> tuple[int, list[int] | None]:
    """How many processes check ``files`` (``jobs``, else the cores that pay), and each file's size
    where it is wanted: for a progress bar, and to share out files that hold data (None: small files
    go by count, without a look-up of each)."""
    workers = min(jobs or os.cpu_count() or 1, max(len(files), 1))
    estimate = _estimated_bytes(files) if workers > 1 else 0
    if jobs is None:
        workers = min(workers, max(-(-estimate // TASK_BYTES), len(files) // WORKER_FILES) or 1)
    wanted = progress or (workers > 1 and estimate >= TASK_BYTES)
    return workers, list(map(file_size, files)) if wanted else None


def _estimated_bytes(files: list[Source]) -> int:
    """The bytes of ``files``, from the sizes of at most ``SAMPLED`` of them spread evenly: a look-up
    of each costs as much as the check of a one-batch segment (a wrong guess costs time, not results)."""
    sample = files[:: -(-len(files) // SAMPLED) or 1]
    return sum(map(file_size, sample)) * len(files) // max(len(sample), 1)


def checked(
    files: list[Source],
    sizes: list[int] | None,
    options: VerifyOptions,
    workers: int,
    dask: str | None = None,
) -> Iterator[VerifyEvent]:
    """Every file's events, in file order, checked by ``workers`` processes (this one included), or
    on the Dask cluster at ``dask``, a task a file."""
    if dask is not None:
        from kafka_dump.analysis.cluster import on_dask

        for events in on_dask(dask, events_of, files, options):
            yield from events
        return
    if workers <= 1:
        for f in files:
            yield from verify_file(f, options)
        return
    import multiprocessing
    import signal

    shares = list(tasks(files, sizes))
    # Forked where the system can (a worker starts with what this process has loaded, nothing sent);
    # spawned elsewhere, with the options and its tasks sent.
    context = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    )
    started: list[tuple[BaseProcess, Connection]] = []
    try:
        for k in range(1, workers):
            answers, end = context.Pipe(duplex=False)
            # A forked worker holds copies of the ends this process reads: it closes them, so that its
            # writes fail (and it ends) once this process is gone.
            ours = [a for _, a in started] + [answers]
            worker = context.Process(
                target=_worker, args=(end, ours, shares[k::workers], options), daemon=True
            )
            # Ctrl-C is this process's to handle: held back until the worker has left it aside.
            held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                worker.start()
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
            end.close()  # the worker's end: this process only reads
            started.append((worker, answers))
        for i, task in enumerate(shares):
            if i % workers:
                yield from _answer(started[i % workers - 1][1])
            else:
                for f in task:
                    yield from verify_file(f, options)
    finally:
        for process, answers in started:
            answers.close()
            if process.is_alive():
                process.terminate()  # stopped early (Ctrl-C, a closed pipe): its answers are not wanted
            process.join()


def events_of(source: Source, options: VerifyOptions) -> list[VerifyEvent]:
    """One file's events, whole: a task of a Dask worker (the object's local copy removed after)."""
    try:
        return list(verify_file(source, options))
    finally:
        release([source])


def tasks(files: list[Source], sizes: list[int] | None) -> Iterator[list[Source]]:
    """The files in order, in runs of at most TASK_FILES files or about TASK_BYTES bytes (``sizes``:
    each file's; None: small files, runs of TASK_FILES)."""
    task: list[Source] = []
    size = 0
    for f, n in zip(files, [0] * len(files) if sizes is None else sizes, strict=True):
        task.append(f)
        size += n
        if len(task) >= TASK_FILES or size >= TASK_BYTES:
            yield task
            task, size = [], 0
    if task:
        yield task


def _answer(answers: Connection) -> list[VerifyEvent]:
    """A worker's next answer; its failure raised here."""
    try:
        kind, answer = answers.recv()
    except EOFError:
        raise RuntimeError("a verify-crc worker process ended before its answer") from None
    if kind == "error":
        raise RuntimeError(f"a verify-crc worker process failed:\n{answer}")
    return answer  # type: ignore[no-any-return]


def _worker(
    answers: Connection, ours: list[Connection], shares: list[list[Source]], options: VerifyOptions
) -> None:
    """A worker process: each task's events in order (progress events left out: the file is the step).
    It leaves Ctrl-C to the command, which stops it, and dies of the signals that end a process.
    ``ours``: the ends the command reads, to close here."""
    import signal

    for end in ours:
        end.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        for task in shares:
            events = [e for f in task for e in verify_file(f, options) if not isinstance(e, FileProgress)]
            answers.send(("events", events))
    except OSError:
        pass  # the command stopped reading (a closed pipe): it needs no more
    except BaseException:
        import traceback

        with contextlib.suppress(OSError):
            answers.send(("error", traceback.format_exc()))
    finally:
        release_all()  # the local copies of objects: a worker ends without its exit handlers
        answers.close()
