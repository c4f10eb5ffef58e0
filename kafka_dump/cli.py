"""The thin command-line layer: options -> library -> renderer; errors -> one line and an exit code.

Exit codes: 0 all good; 1 corrupt data was found (and reported in place); 2 the input could not be
read at all (missing file, not a segment, bad option).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, TextIO, TypeVar

import click

from kafka_dump import __version__
from kafka_dump.analysis.dump import BatchEvent, FileEnd, FileStart, RangeFilter, Summary, iter_dump
from kafka_dump.commands.stats import stats
from kafka_dump.errors import KafkaDumpError
from kafka_dump.format import ACTIVE_TWIN
from kafka_dump.format.codecs import DEFAULT_MAX_BATCH_BYTES
from kafka_dump.model import Problem, ProblemKind
from kafka_dump.render import Renderer, progress
from kafka_dump.render.jsonl import JsonRenderer
from kafka_dump.render.kafka_text import KafkaTextRenderer
from kafka_dump.render.payload import PayloadEncoding

EXIT_OK, EXIT_CORRUPT, EXIT_BAD_INPUT = 0, 1, 2
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class _DefaultToDump(click.Group):
    """``kdump FILE`` means ``kdump dump FILE``: a first argument that is no command is a path."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = next((a for a in args if not a.startswith("-")), None)
        wants_help = any(a in ("--help", "-h", "--version") for a in args)
        if not wants_help and args and (first is None or first not in self.commands):
            args = ["dump", *args]
        return super().parse_args(ctx, args)


def _traceback_option(f: F) -> F:
    return click.option(
        "--traceback", is_flag=True, help="On an error, show the Python traceback instead of one line."
    )(f)


@click.group(cls=_DefaultToDump, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, message=f"kdump %(version)s (decoder: {ACTIVE_TWIN})")
def main() -> None:
    """Inspect Apache Kafka log segments: every message format (v0, v1, v2) and codec.

    \b
    Example:
      kdump 00000000000000000000.log            # same as: kdump dump FILE
      kdump dump --format json my-topic-0/ | jq .
    """


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MS = timedelta(milliseconds=1)


def parse_time(value: str | None) -> int | None:
    """Epoch milliseconds, or an ISO-8601 time (UTC unless it says otherwise), in exact integer ms."""
    if value is None:
        return None
    if value.lstrip("-").isdigit():
        return int(value)
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is neither epoch milliseconds nor an ISO-8601 time") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return (dt - _EPOCH) // _MS


def _time_option(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    return parse_time(value)


def _write_all(out: TextIO, parts: Iterable[str]) -> None:
    for part in parts:
        out.write(part)


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="FILE|DIR...")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "kafka"]), default="table", show_default=True,
    help="table: readable tables; json: JSON Lines; kafka: the lines of kafka-dump-log.sh.",
)  # fmt: skip
@click.option(
    "--payload", type=click.Choice([e.value for e in PayloadEncoding]), default="text", show_default=True,
    help="How --format json writes keys, values and header values (base64 and hex are exact).",
)  # fmt: skip
@click.option("--max-bytes", type=click.IntRange(min=1), default=64, show_default=True,
              help="Table: cut keys and values to this many bytes.")  # fmt: skip
@click.option("--batches-only", is_flag=True, help="Show batch headers only; records are not decoded.")
@click.option("--from-offset", type=int, help="Only records at or after this offset.")
@click.option("--to-offset", type=int, help="Only records at or before this offset.")
@click.option(
    "--from-time", callback=_time_option, help="Only records at or after this time (ISO-8601 or epoch ms)."
)
@click.option(
    "--to-time", callback=_time_option, help="Only records at or before this time (ISO-8601 or epoch ms)."
)
@click.option(
    "--limit", type=click.IntRange(min=0), help="Stop after N records (N batches with --batches-only)."
)
@click.option("--max-batch-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BATCH_BYTES, show_default=True,
              help="A batch that decompresses past this size is reported as a problem.")  # fmt: skip
@_traceback_option
def dump(
    paths: tuple[str, ...],
    fmt: str,
    payload: str,
    max_bytes: int,
    batches_only: bool,
    from_offset: int | None,
    to_offset: int | None,
    from_time: int | None,
    to_time: int | None,
    limit: int | None,
    max_batch_bytes: int,
    traceback: bool,
) -> None:
    """Show every batch and record of segments, or of a partition directory's segments.

    \b
    Examples:
      kdump dump 00000000000000000000.log
      kdump dump --format json --payload base64 my-topic-0/ > records.jsonl
      kdump dump --format kafka 00000000000000000000.log    # kafka-dump-log.sh lines
      kdump dump --from-time 2024-05-01T12:00:00Z --limit 20 00000000000000000000.log
    """
    rng = RangeFilter(from_offset, to_offset, from_time, to_time, limit)
    summary = Summary()
    events = iter_dump(
        list(paths), rng, summary, with_records=not batches_only, max_batch_bytes=max_batch_bytes
    )
    if progress.wanted():
        events = progress.with_progress(events)
    _run(lambda: _render(fmt, events, payload, max_bytes, batches_only), traceback)
    sys.exit(EXIT_CORRUPT if summary.corrupt else EXIT_OK)


def _render(fmt: str, events: Iterable[object], payload: str, max_bytes: int, batches_only: bool) -> None:
    out = sys.stdout
    if fmt == "table":
        from rich.console import Console
        from rich.text import Text

        from kafka_dump.render.table import TableRenderer

        class _Console(Console):
            def on_broken_pipe(self) -> None:
                raise BrokenPipeError  # ends quietly in _run, as the other formats do

        # Piped output is not cut to 80 columns: COLUMNS, else wide enough for a full row.
        width = None if out.isatty() else int(os.environ.get("COLUMNS", "200"))
        console = _Console(file=out, width=width)
        table = TableRenderer(max_bytes=max_bytes, records=not batches_only)
        for event in events:
            for renderable in _dispatch(table, event):
                if isinstance(renderable, str):
                    out.write(renderable)
                else:
                    # A batch's title line is never wrapped: it is one line to grep.
                    console.print(renderable, soft_wrap=isinstance(renderable, Text))
        return
    if fmt == "json":
        json_renderer = JsonRenderer(PayloadEncoding(payload))
        out.flush()
        raw = out.buffer
        for event in events:
            for line in _dispatch(json_renderer, event):
                raw.write(line)
        return
    renderer = KafkaTextRenderer(records=not batches_only)
    for event in events:
        if isinstance(event, Problem) and event.kind is ProblemKind.CORRUPT:
            sys.stderr.write(f"kdump: {event}\n")
            continue
        _write_all(out, _dispatch(renderer, event))


def _dispatch(renderer: Renderer[T], event: object) -> Sequence[T]:
    if isinstance(event, BatchEvent):
        return renderer.batch(event.batch, event.records)
    if isinstance(event, Problem):
        return renderer.problem(event)
    if isinstance(event, FileStart):
        return renderer.file_start(event.path)
    if isinstance(event, FileEnd):
        return renderer.file_end(event.path, event.trailing)
    raise TypeError(f"unknown event {event!r}")


def _run(work: Callable[[], None], show_traceback: bool) -> None:
    """Run a command's work: library errors become one line and exit 2; a closed pipe ends quietly."""
    try:
        work()
        sys.stdout.flush()
        sys.stdout.buffer.flush()
    except KafkaDumpError as exc:
        if show_traceback:
            traceback.print_exc()
        click.echo(f"kdump: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except BrokenPipeError:
        # Python flushes stdout again at exit; point it at /dev/null so that flush cannot fail.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_OK)


main.add_command(stats)
