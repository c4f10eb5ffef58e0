"""``kdump dump``: every batch and record of segments, as tables, JSON Lines or Kafka's lines."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

import click

from kafka_dump.analysis.dump import (
    BatchEvent,
    BatchRun,
    DumpEvent,
    FileEnd,
    FileStart,
    RangeFilter,
    SideEntry,
    Summary,
    iter_dump,
    progress_position,
)
from kafka_dump.commands import EXIT_CORRUPT, EXIT_OK
from kafka_dump.commands.options import (
    color_option,
    format_option,
    input_paths,
    max_batch_bytes_option,
    range_options,
    traceback_option,
)
from kafka_dump.internal import DECODE_CHOICES
from kafka_dump.model import Problem, ProblemKind
from kafka_dump.render import Renderer, progress
from kafka_dump.render.jsonl import JsonRenderer
from kafka_dump.render.kafka_text import KafkaTextRenderer
from kafka_dump.render.output import ColorMode, Output
from kafka_dump.render.payload import PayloadEncoding

T = TypeVar("T")


@click.command()
@input_paths
@format_option(
    "table",
    "json",
    "kafka",
    help="table: readable tables; json: JSON Lines; kafka: the lines of kafka-dump-log.sh.",
)
@click.option(
    "--payload", type=click.Choice([e.value for e in PayloadEncoding]), default="text", show_default=True,
    help="How --format json writes keys, values and header values (base64 and hex are exact).",
)  # fmt: skip
@click.option("--max-bytes", type=click.IntRange(min=1), default=64, show_default=True,
              help="Table: cut keys and values to this many bytes.")  # fmt: skip
@click.option("--batches-only", is_flag=True, help="Show batch headers only; records are not decoded.")
@range_options
@max_batch_bytes_option
@click.option(
    "--decode", type=click.Choice(DECODE_CHOICES), default="auto", show_default=True,
    help="Decode Kafka's own records: auto chooses by the directory name (__consumer_offsets-N, "
    "__transaction_state-N, __cluster_metadata-0) or a .checkpoint file; none shows raw bytes.",
)  # fmt: skip
@color_option
@traceback_option
def dump(
    paths: tuple[str, ...],
    fmt: str,
    payload: str,
    max_bytes: int,
    batches_only: bool,
    rng: RangeFilter,
    max_batch_bytes: int,
    decode: str,
    color: ColorMode,
) -> int:
    """Show every batch and record of segments, or of a partition directory's segments;
    and the entries of the files Kafka keeps beside them (.index, .timeindex, .txnindex, .snapshot,
    leader-epoch-checkpoint, partition.metadata).

    \b
    Examples:
      kdump dump 00000000000000000000.log
      kdump dump --format json --payload base64 my-topic-0/ > records.jsonl
      kdump dump --format kafka 00000000000000000000.log    # kafka-dump-log.sh lines
      kdump dump --from-time 2024-05-01T12:00:00Z --limit 20 00000000000000000000.log
      kdump dump --format json __consumer_offsets-12/          # offsets decoded (--decode auto)
      kdump dump 00000000000000000000.index 00000000000000000042.snapshot
    """
    out = Output(color)
    events: Iterable[DumpEvent] = iter_dump(
        list(paths), rng, with_records=not batches_only, max_batch_bytes=max_batch_bytes
    )
    if progress.wanted():
        events = progress.with_progress(events, progress_position, out.err_console)
    stream = _Stream(events)
    if fmt == "json":
        _json(out, stream, PayloadEncoding(payload), decode)
    elif fmt == "kafka":
        _kafka(out, stream, batches_only, decode)
    else:
        _table(out, stream, max_bytes, batches_only, decode)
    out.flush()
    return EXIT_CORRUPT if stream.summary.corrupt else EXIT_OK


class _Stream:
    """The events of a dump up to its closing ``Summary``, which is kept for the exit code."""

    def __init__(self, events: Iterable[DumpEvent]) -> None:
        self._events = events
        self.summary = Summary()

    def __iter__(self) -> Iterator[FileStart | FileEnd | BatchEvent | BatchRun | SideEntry | Problem]:
        for event in self._events:
            if isinstance(event, Summary):
                self.summary = event
                return
            yield event


def _table(out: Output, events: _Stream, max_bytes: int, batches_only: bool, decode: str) -> None:
    from rich.text import Text

    from kafka_dump.render.table import TableRenderer

    table = TableRenderer(max_bytes=max_bytes, records=not batches_only, decode=decode)
    for event in events:
        for renderable in _dispatch(table, event):
            if isinstance(renderable, str):
                out.write(renderable)
            else:
                # A batch's title line is never wrapped: it is one line to grep.
                out.print(renderable, soft_wrap=isinstance(renderable, Text))  # type: ignore[arg-type]


def _json(out: Output, events: _Stream, payload: PayloadEncoding, decode: str) -> None:
    renderer = JsonRenderer(payload, decode)
    write = out.write_bytes
    for event in events:
        if lines := _dispatch(renderer, event):
            write(b"".join(lines))


def _kafka(out: Output, events: _Stream, batches_only: bool, decode: str) -> None:
    renderer = KafkaTextRenderer(records=not batches_only, escape=out.is_terminal, decode=decode)
    for event in events:
        if isinstance(event, Problem) and event.kind is ProblemKind.CORRUPT:
            out.diagnostic(str(event))  # Kafka's lines have no place for corruption: stderr
            continue
        out.write_lines(_dispatch(renderer, event))


def _dispatch(renderer: Renderer[T], event: object) -> Sequence[T]:
    if isinstance(event, BatchEvent):
        return renderer.batch(event.batch, event.records)
    if isinstance(event, BatchRun):
        return [out for b in event.batches for out in renderer.batch(b, b.records)]
    if isinstance(event, Problem):
        return renderer.problem(event)
    if isinstance(event, FileStart):
        return renderer.file_start(event.path, event.base_offset, event.snapshot)
    if isinstance(event, FileEnd):
        return renderer.file_end(event.path, event.trailing)
    if isinstance(event, SideEntry):
        return renderer.side(event.path, event.item)
    raise TypeError(f"unknown event {event!r}")
