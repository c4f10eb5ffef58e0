"""``kdump stats``: what segments hold, and (``--compare``) their exact size in every format and codec."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console

if TYPE_CHECKING:
    from kafka_dump.analysis.compare import Comparison
from kafka_dump.analysis.stats import BatchSeen, FileStart, SegmentStats, StatsEvent, iter_stats, stats_files
from kafka_dump.errors import KafkaDumpError
from kafka_dump.format.codecs import DEFAULT_MAX_BATCH_BYTES
from kafka_dump.model import Compression, Problem

EXIT_OK, EXIT_BAD_INPUT = 0, 2
CODECS = (Compression.NONE, Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD)


def _codecs_option(ctx: click.Context, param: click.Parameter, value: str) -> tuple[Compression, ...]:
    names = {c.label: c for c in CODECS}
    chosen = []
    for part in value.split(","):
        name = part.strip().lower()
        if name not in names:
            raise click.BadParameter(f"{part!r} is not one of {', '.join(names)}")
        chosen.append(names[name])
    return tuple(c for c in CODECS if c in chosen)


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
    help="table: Rich tables and charts; json: one JSON object per file, then one for the total.",
)  # fmt: skip
@click.option("--no-charts", is_flag=True, help="Leave out the record-size histogram and the sparkline.")
@click.option("--max-batch-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BATCH_BYTES, show_default=True,
              help="A batch that decompresses past this size is reported as a problem.")  # fmt: skip
@click.option(
    "--compare",
    is_flag=True,
    help="Also encode the records in V0, V1 and V2 with every codec and report the exact sizes.",
)
@click.option(
    "--batch-records",
    type=click.IntRange(min=1),
    help="--compare: group plain v0/v1 messages into batches of at most N records.",
)
@click.option(
    "--batch-bytes",
    type=click.IntRange(min=1),
    help="--compare: group plain v0/v1 messages into batches of at most N bytes (as V2). "
    "Default 16384 when --batch-records is not given.",
)
@click.option(
    "--codecs",
    callback=_codecs_option,
    default=",".join(c.label for c in CODECS),
    show_default=True,
    help="--compare: the codecs to compare, comma-separated (V1 none is always shown).",
)
@click.option("--level", type=int, help="--compare: the compression level (each codec's default otherwise).")
@click.option(
    "--sample",
    type=click.IntRange(min=1),
    help="--compare: encode only N batches spread over each file (the figures say so).",
)
@click.option("--traceback", is_flag=True, help="On an error, show the Python traceback instead of one line.")
def stats(
    paths: tuple[str, ...],
    fmt: str,
    no_charts: bool,
    max_batch_bytes: int,
    compare: bool,
    batch_records: int | None,
    batch_bytes: int | None,
    codecs: tuple[Compression, ...],
    level: int | None,
    sample: int | None,
    traceback: bool,
) -> None:
    """Count what segments hold: layout, batches, records, overhead per record.

    PATH is a segment, a partition directory or a log dir (a directory of partition
    directories). Each file gets a section, then the total (tables: when there are several
    files; JSON: always, as the last object). Corrupt batches are reported
    on stderr, counted and skipped.

    With --compare, the same records (same offsets, timestamps, keys, values, headers and batch
    boundaries) are encoded again in V0/V1 (none, gzip, snappy, lz4) and V2 (none, gzip, snappy,
    lz4, zstd), and the table gives the exact size of each.

    \b
    Examples:
      kdump stats 00000000000000000000.log
      kdump stats --format json /var/lib/kafka/data/my-topic-0/ | jq .
      kdump stats --compare --batch-records 1000 00000000000000000000.log
      kdump stats --compare --codecs lz4,zstd --sample 200 big-topic-0/
    """
    if not compare and (batch_records or batch_bytes or sample or level is not None):
        raise click.UsageError("--batch-records, --batch-bytes, --level and --sample need --compare")
    try:
        options = None
        if compare:
            from kafka_dump.analysis.compare import CompareOptions

            options = CompareOptions(codecs, level, batch_records, batch_bytes, sample)
        files = stats_files(paths)
        comparisons: dict[str, Comparison] = {}

        def listener(path: Path) -> Comparison | None:
            if options is None:
                return None
            from kafka_dump.analysis.compare import Comparison

            c = comparisons[str(path)] = Comparison(options, file_bytes=os.path.getsize(path))
            return c

        events = iter_stats(files, max_batch_bytes=max_batch_bytes, listener=listener)
        if _progress_wanted():
            events = _with_progress(events)
        _render(events, fmt, charts=not no_charts, comparisons=comparisons)
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


def _render(
    events: Iterable[StatsEvent], fmt: str, *, charts: bool, comparisons: dict[str, Comparison]
) -> None:
    from kafka_dump.render.stats import STATS_THEME

    total: SegmentStats | None = None
    total_cmp: Comparison | None = None
    console = None
    if fmt == "table":
        width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "120"))
        console = Console(file=sys.stdout, width=width, theme=STATS_THEME)
    for event in events:
        if isinstance(event, Problem):
            sys.stderr.write(f"kdump: {event}\n")
        elif isinstance(event, SegmentStats):
            cmp = comparisons.pop(event.path, None)
            _show(console, event, cmp.finish() if cmp else None, total=False, charts=charts)
            if total is None:
                total = SegmentStats("total", files=0)
            total.merge(event)
            if cmp is not None:
                if total_cmp is None:
                    total_cmp = type(cmp)(cmp.options, files=0)
                total_cmp.merge(cmp)
    if total is None or (console is not None and total.files < 2):
        return  # a table of one file needs no total
    _show(console, total, total_cmp, total=True, charts=charts)


def _show(
    console: Console | None, s: SegmentStats, cmp: Comparison | None, *, total: bool, charts: bool
) -> None:
    from kafka_dump.render.stats import stats_json, stats_renderables

    if cmp is not None:
        from kafka_dump.analysis.compare import downgrade_losses
        from kafka_dump.render.compare import compare_json, compare_renderables

        losses = downgrade_losses(s)
    if console is None:
        obj = stats_json(s, total=total)
        if cmp is not None:
            obj["compare"] = compare_json(cmp, losses)
        sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
        return
    for renderable in stats_renderables(s, total=total, charts=charts):
        console.print(renderable)
    if cmp is not None:
        for renderable in compare_renderables(cmp, losses):
            console.print(renderable)
    if not total:
        console.print()


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
