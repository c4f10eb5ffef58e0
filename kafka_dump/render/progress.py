"""A progress bar on stderr for long reads, shown only when stderr is a terminal and stdout is not."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from kafka_dump.analysis.dump import BatchEvent, FileStart
from kafka_dump.model import Problem

T = TypeVar("T")
_EVERY = 256  # events between updates: a redraw costs more than decoding a small batch


def wanted() -> bool:
    """A bar helps on a terminal; under a pipe to a terminal it would mix with the data."""
    return sys.stderr.isatty() and not sys.stdout.isatty()


def with_progress(events: Iterable[T]) -> Iterator[T]:
    """Yield ``events`` unchanged, advancing a per-file bar by the byte position they report."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = None
        for n, event in enumerate(events):
            if isinstance(event, FileStart):
                size = os.path.getsize(event.path)
                task = progress.add_task(os.path.basename(event.path), total=size)
            elif task is not None and n % _EVERY == 0:
                if isinstance(event, BatchEvent):
                    progress.update(task, completed=event.batch.position + event.batch.sizeInBytes)
                elif isinstance(event, Problem):
                    progress.update(task, completed=event.position + event.length)
            yield event
