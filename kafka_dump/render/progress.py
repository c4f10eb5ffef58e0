"""A progress bar on stderr for long reads, shown only when stderr is a terminal and stdout is not.

The caller says where each event stands, ``(file, bytes done)``, so this module knows no event type.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from rich.console import Console

T = TypeVar("T")
_EVERY = 256  # events between updates: a redraw costs more than decoding a small batch


def wanted() -> bool:
    """A bar helps on a terminal; under a pipe to a terminal it would mix with the data."""
    return sys.stderr.isatty() and not sys.stdout.isatty()


def _size(path: str) -> int | None:
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def with_progress(
    events: Iterable[T], where: Callable[[T], tuple[str, int] | None], console: Console | None = None
) -> Iterator[T]:
    """Yield ``events`` unchanged, advancing one bar per file by the position ``where`` reports."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

    from kafka_dump.render.payload import printable

    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
    )
    bar = Progress(*columns, console=console or Console(stderr=True), transient=True)
    with bar:
        task: TaskID | None = None
        current = ""
        for n, event in enumerate(events):
            if n % _EVERY == 0 and (at := where(event)) is not None:
                path, done = at
                if path != current or task is None:
                    if task is not None:
                        bar.update(task, visible=False)
                    current = path
                    # A file name is data: control characters escaped, and never parsed as markup.
                    task = bar.add_task(printable(os.path.basename(path)), total=_size(path))
                bar.update(task, completed=done)
            yield event
