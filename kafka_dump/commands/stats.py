"""``kdump stats``: what segments hold, and (``--compare``) their exact size in every format and codec."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator

import click

from kafka_dump.analysis.stats import BatchSeen, FileStart, SegmentStats, StatsEvent, iter_stats, stats_files
from kafka_dump.errors import KafkaDumpError
from kafka_dump.format.codecs import DEFAULT_MAX_BATCH_BYTES
from kafka_dump.model import Problem

EXIT_OK, EXIT_BAD_INPUT = 0, 2


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
    help="table: Rich tables and charts; json: one JSON object per file, then one for the total.",
)  # fmt: skip
@click.option("--no-charts", is_flag=True, help="Leave out the record-size histogram and the sparkline.")
@click.option("--max-batch-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BATCH_BYTES, show_default=True,
              help="A batch that decompresses past this size is reported as a problem.")  # fmt: skip
@click.option("--traceback", is_flag=True, help="On an error, show the Python traceback instead of one line.")
def stats(paths: tuple[str, ...], fmt: str, no_charts: bool, max_batch_bytes: int, traceback: bool) -> None:
    """Count what segments hold: layout, batches, records, overhead per record.

    PATH is a segment, a partition directory or a log dir (a directory of partition
    directories). Each file gets a section, then the total (tables: when there are several
    files; JSON: always, as the last object). Corrupt batches are reported
    on stderr, counted and skipped.

    \b
    Examples:
      kdump stats 00000000000000000000.log
      kdump stats --format json /var/lib/kafka/data/my-topic-0/ | jq .
    """
    try:
        files = stats_files(paths)
        events = iter_stats(files, max_batch_bytes=max_batch_bytes)
        if _progress_wanted():
            events = _with_progress(events)
        _render(events, fmt, charts=not no_charts)
        sys.stdout.flush()
    except KafkaDumpError as exc:
        if traceback:
            import traceback as tb

            tb.print_exc()
        click.echo(f"kdump: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    sys.exit(EXIT_OK)


def _render(events: Iterable[StatsEvent], fmt: str, *, charts: bool) -> None:
    from kafka_dump.render.stats import STATS_THEME, stats_json, stats_renderables

    total: SegmentStats | None = None
    console = None
    if fmt == "table":
        from rich.console import Console

        width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "120"))
        console = Console(file=sys.stdout, width=width, theme=STATS_THEME)
    for event in events:
        if isinstance(event, Problem):
            sys.stderr.write(f"kdump: {event}\n")
        elif isinstance(event, SegmentStats):
            if console is None:
                sys.stdout.write(json.dumps(stats_json(event), separators=(",", ":")) + "\n")
            else:
                for renderable in stats_renderables(event, charts=charts):
                    console.print(renderable)
                console.print()
            if total is None:
                total = SegmentStats("total", files=0)
            total.merge(event)
    if total is None or (console is not None and total.files < 2):
        return  # a table of one file needs no total
    if console is None:
        sys.stdout.write(json.dumps(stats_json(total, total=True), separators=(",", ":")) + "\n")
    else:
        for renderable in stats_renderables(total, total=True, charts=charts):
            console.print(renderable)


def _progress_wanted() -> bool:
    return sys.stderr.isatty() and not sys.stdout.isatty()


def _with_progress(events: Iterable[StatsEvent]) -> Iterator[StatsEvent]:
    """A per-file progress bar on stderr, advanced by where the batches end."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = None
        for n, event in enumerate(events):
            if isinstance(event, FileStart):
                task = progress.add_task(os.path.basename(event.path), total=event.size)
            elif isinstance(event, BatchSeen) and task is not None and n % 256 == 0:
                progress.update(task, completed=event.end)
            yield event
