"""``kdump dump``: every batch and record of segments, as tables, JSON Lines or Kafka's lines."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from kafka_dump.analysis.dump import (
    AbortedBatchEvent,
    BatchEvent,
    BatchRun,
    DumpEvent,
    FileEnd,
    FileStart,
    Held,
    RangeFilter,
    SideEntry,
    Summary,
    WrittenRun,
    iter_dump,
    progress_position,
)
from kafka_dump.commands import EXIT_BAD_INPUT, EXIT_CORRUPT, EXIT_MEANINGS, EXIT_OK
from kafka_dump.commands.filters import search_options
from kafka_dump.commands.options import (
    Limits,
    count_option,
    format_option,
    inputs,
    limit_options,
    only_with_formats,
    output_options,
    range_options,
)
from kafka_dump.commands.walked import report_skipped, skipped_code, stdin_name_option, store_options
from kafka_dump.errors import KafkaDumpError
from kafka_dump.internal_topics import DECODE_CHOICES
from kafka_dump.log.remote import Store
from kafka_dump.log.sidefiles import side_file_kind
from kafka_dump.log.sources import STDIN, Source, as_sources, find
from kafka_dump.model import Batch, Problem, ProblemKind
from kafka_dump.render import Renderer
from kafka_dump.render.decoded import KAFKA_VERSIONS
from kafka_dump.render.jsonl import JsonRenderer, count_json, terminal_safe
from kafka_dump.render.kafka_text import KafkaTextRenderer
from kafka_dump.render.output import Output
from kafka_dump.render.payload import PayloadEncoding, printable
from kafka_dump.render.rows import TIME_MODES, TimeMode
from kafka_dump.wire.match import Match

T = TypeVar("T")


@click.command()
@inputs
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
@count_option(
    "--max-bytes", default=64, show_default=True, help="Table: cut keys and values to this many bytes."
)
@click.option("--batches-only", is_flag=True, help="Show batch headers only; records are not decoded.")
@click.option(
    "-x",
    "--expanded",
    is_flag=True,
    help="Table: one record at a time, one field a line, whole values and every header (as psql's \\x).",
)
@click.option("--time", "time_mode", type=click.Choice(list(TIME_MODES)), default="iso", show_default=True,
              help="Table: times as ISO-8601 (UTC), epoch ms, or both in one column.")  # fmt: skip
@range_options
@search_options
@click.option(
    "--count", "count_only", is_flag=True, help="Print only the number of matching records of each file."
)
@limit_options
@click.option(
    "--decode", type=click.Choice(DECODE_CHOICES), default="auto", show_default=True,
    help="Decode Kafka's own records: auto chooses by the directory name (__consumer_offsets-N, "
    "__transaction_state-N, __share_group_state-N, __remote_log_metadata-N, __cluster_metadata-0) or a "
    ".checkpoint file; none shows raw bytes.",
)  # fmt: skip
@click.option(
    "--kafka-version", type=click.Choice(KAFKA_VERSIONS), default="4.1", show_default=True,
    help="--format kafka: print the decoder lines of this kafka-dump-log release (4.1: 4.1 to 4.3; 4.4: "
    "transaction states by name; 3.9 and 4.0: the transaction log as text).",
)  # fmt: skip
@click.option(
    "--no-txnindex", is_flag=True,
    help="Do not read .txnindex files: no batch is marked as data of an aborted transaction.",
)  # fmt: skip
@count_option(
    "-j",
    "--jobs",
    default=1,
    show_default=True,
    help="Files read by N processes at once; the output is the same, in the same order.",
)
@click.option("--redact", is_flag=True,
              help="Show keys, values and header values as the pseudonyms kdump redact writes (same length).")  # fmt: skip
@click.option("--secret-file", type=click.Path(dir_okay=False),
              help="--redact: the secret of the pseudonyms, as redact's (default: a random one, never written).")  # fmt: skip
@stdin_name_option
@store_options
@output_options
def dump(
    paths: tuple[str, ...],
    out: Output,
    store: Store,
    fmt: str,
    payload: str,
    max_bytes: int,
    batches_only: bool,
    expanded: bool,
    time_mode: TimeMode,
    rng: RangeFilter,
    match: Match | None,
    count_only: bool,
    limits: Limits,
    decode: str,
    kafka_version: str,
    no_txnindex: bool,
    stdin_name: str | None,
    jobs: int,
    redact: bool,
    secret_file: str | None,
) -> int:
    """Show every batch and record of segments, of a partition directory's segments, of every
    partition directory in a log dir or below (JBOD parents, backup trees), or of standard input (-);
    and the entries of the files Kafka keeps beside them (.index, .timeindex, .txnindex, .snapshot,
    leader-epoch-checkpoint, partition.metadata).

    \b
    Examples:
      kdump dump 00000000000000000000.log
      ssh broker cat /var/lib/kafka/data/t-0/00000000000000000000.log | kdump dump -
      kdump dump --format json --payload base64 my-topic-0/ > records.jsonl
      kdump dump --format kafka 00000000000000000000.log    # kafka-dump-log.sh lines
      kdump dump -x --from-offset 42 --limit 1 00000000000000000000.log   # one record, whole
      kdump dump --from-time 2024-05-01T12:00:00Z --limit 20 00000000000000000000.log
      kdump dump --format json __consumer_offsets-12/          # offsets decoded (--decode auto)
      kdump dump 00000000000000000000.index 00000000000000000042.snapshot
      kdump dump --key order-42 --header trace-id my-topic-0/      # records of one key, with a header
      kdump dump --grep 'status":"failed' --count /var/lib/kafka/data   # matches per file
      kdump dump -j 4 --format json --key order-42 /var/lib/kafka/data   # four processes
    """
    only_with_formats(fmt, {"payload": ("json",), "time_mode": ("table",), "max_bytes": ("table",)})
    if expanded and fmt != "table":
        raise click.UsageError(f"--expanded applies to --format table, not {fmt}")
    if batches_only and match is not None and match.records is not None:
        raise click.UsageError("--key, --key-re, --grep and --header read records: not with --batches-only")
    if secret_file is not None and not redact:
        raise click.UsageError("--secret-file applies to --redact")
    from kafka_dump.analysis.pseudonyms import secret as load_secret

    secret = load_secret(secret_file) if redact else None
    found = find(paths, stdin_name=stdin_name, store=store)
    sources = found.readable()
    for path in paths:
        if _only_bootstrap(path, sources):
            out.diagnostic(
                f"{path}: holds only bootstrap.checkpoint (the KRaft bootstrap snapshot), no partition directory"
            )
    work = DumpWork(
        fmt=fmt,
        payload=payload,
        max_bytes=max_bytes,
        batches_only=batches_only,
        expanded=expanded,
        time_mode=time_mode,
        rng=rng,
        match=match,
        count_only=count_only,
        limits=limits,
        decode=decode,
        kafka_version=kafka_version,
        txn_index=not no_txnindex,
        redact=secret,
    )
    if jobs > 1 and rng.limit is None and len(sources) > 1:  # --limit: the files in turn, where it stops
        from kafka_dump.commands.dump_jobs import dump_in_parallel

        summary = dump_in_parallel(sources, out, work, jobs)
    else:
        summary = write_dump(sources, out, work)
    report_skipped(out, found.skipped, as_json=fmt == "json")
    if count_only:
        return max(EXIT_CORRUPT if summary.corrupt else EXIT_OK, skipped_code(found.skipped))
    out.flush()
    if match is not None and not summary.batches:
        out.diagnostic("no record matches the filters given")
    elif summary.held is not None and not summary.batches:
        out.diagnostic(nothing_in_range(summary.held, summary.files))
    code = max(EXIT_CORRUPT if summary.corrupt else EXIT_OK, skipped_code(found.skipped))
    if summary.unreadable and summary.unreadable == summary.files:
        code = EXIT_BAD_INPUT  # nothing could be read
    if out.err_is_terminal:
        from kafka_dump.render.summary import closing_summary

        counts = {k: v for k, v in vars(summary).items() if k not in ("held", "unreadable")}
        out.err_print(closing_summary(**counts, exit_code=code, meaning=EXIT_MEANINGS[code]))
    return code


@dataclass(frozen=True)
class DumpWork:
    """What ``dump`` was asked for, but the paths and the output: the same for each worker of ``-j``."""

    fmt: str
    payload: str
    max_bytes: int
    batches_only: bool
    expanded: bool
    time_mode: TimeMode
    rng: RangeFilter
    match: Match | None
    count_only: bool
    limits: Limits
    decode: str
    kafka_version: str
    txn_index: bool
    redact: bytes | None = None  # --redact: the pseudonyms' secret (random unless --secret-file)


def write_dump(
    paths: Sequence[str | Source], out: Output, work: DumpWork, *, several: bool = False
) -> Summary:
    """Dump ``paths`` to ``out`` as ``work`` says and return the closing ``Summary``; ``several``: the
    paths are a share of a larger dump (an unreadable file is then reported, not raised)."""
    w = work
    json_renderer = JsonRenderer(PayloadEncoding(w.payload), w.decode) if w.fmt == "json" else None
    events: Iterable[DumpEvent] = iter_dump(
        paths,
        w.rng,
        with_records=not w.batches_only,
        **w.limits,
        # JSON Lines write a run of plain v0/v1 messages straight from its bytes
        plain_run=json_renderer.plain_run
        if json_renderer is not None and not w.count_only and w.redact is None
        else None,
        txn_index=w.txn_index,
        match=w.match,
        several=several,
    )
    if w.count_only:
        try:
            return _count(events, out, w.fmt == "json")
        finally:
            out.flush()  # the lines gathered, also before an error's line on stderr
    if w.redact is not None:
        from kafka_dump.analysis.pseudonyms import Pseudonyms
        from kafka_dump.analysis.redact import redacted_events

        events = redacted_events(events, Pseudonyms(w.redact))
    events = out.track(events, progress_position, _bytes_of(paths) if out.progress else None)
    renderer: Renderer[Any]
    write: Callable[[Sequence[Any]], None] = out.write_utf8_lines
    corrupt: Callable[[str], None] | None = None
    if json_renderer is not None:
        renderer = json_renderer
        # On a terminal, the same JSON with what a terminal would act on escaped.
        write = _terminal_json(out) if out.is_terminal else out.write_byte_lines
    elif w.fmt == "kafka":
        renderer = KafkaTextRenderer(
            records=not w.batches_only, escape=out.is_terminal, decode=w.decode, kafka_version=w.kafka_version
        )
        write, corrupt = out.write_lines, out.diagnostic
    elif w.expanded:
        from kafka_dump.render.expanded import ExpandedRenderer

        renderer = ExpandedRenderer(
            records=not w.batches_only, time=w.time_mode, color=out.color, decode=w.decode
        )
    else:
        from kafka_dump.render.table import TableRenderer  # Rich's cells and box: the table's alone

        renderer = TableRenderer(
            max_bytes=w.max_bytes,
            records=not w.batches_only,
            time=w.time_mode,
            width=out.width,
            color=out.color,
            decode=w.decode,
        )
    try:
        return _render(events, renderer, write, out, corrupt)
    finally:
        out.flush()  # what is gathered for one big write, also before an error's line on stderr


def _count(events: Iterable[DumpEvent], out: Output, as_json: bool) -> Summary:
    """``--count``: one line per segment file, its matching records (batches with ``--batches-only``),
    as ``FILE: N`` or a JSON object; corruption goes to stderr. The ``Summary`` is the dump's (an
    empty one when stdout's reader left)."""
    n = 0
    for event in events:
        if isinstance(event, BatchEvent):
            n += 1 if event.records is None else len(event.records)
        elif isinstance(event, BatchRun):  # plain v0/v1 messages, one record each
            n += len(event.batches)
        elif isinstance(event, FileStart):
            n = 0
        elif isinstance(event, FileEnd) and side_file_kind(Path(event.path)) is None:
            if as_json:
                line = count_json(event.path, n)
                out.write_byte_lines([terminal_safe(line) if out.is_terminal else line])
            else:
                out.write_lines([f"{printable(event.path)}: {n}\n"])
        elif isinstance(event, Problem) and event.kind is ProblemKind.CORRUPT:
            out.diagnostic(str(event))
        elif isinstance(event, Summary):
            out.flush()
            return event
        if out.closed:
            break
    out.flush()
    return Summary()


def _only_bootstrap(path: str, sources: list[Source]) -> bool:
    """A directory whose only segment (of ``sources``, found under the paths) is ``bootstrap.checkpoint``:
    a log dir with no partition yet, or a path that names the log dir where a partition was meant."""
    top = os.path.normpath(path)
    if path == STDIN or not os.path.isfile(os.path.join(top, "bootstrap.checkpoint")):
        return False  # most paths: no look at the sources needed to tell
    below = top + os.sep
    under = [s for s in sources if top == "." or s.path.startswith(below)]
    return [s.file_name for s in under] == ["bootstrap.checkpoint"]


def nothing_in_range(held: Held, files: int) -> str:
    """Why a filtered dump showed nothing: what the files hold."""
    from kafka_dump.render.clock import iso

    what = "the segment holds" if files == 1 else f"the {files} files hold"
    if held.last_offset is None:
        return f"no record in the range given: {what} offsets from {held.first_offset}"
    return (
        f"no record in the range given: {what} offsets {held.first_offset}..{held.last_offset}, "
        f"with batch times up to {iso(held.last_time)} ({held.last_time})"
    )


def _render(
    events: Iterable[DumpEvent],
    renderer: Renderer[T],
    write: Callable[[Sequence[T]], None],
    out: Output,
    corrupt: Callable[[str], None] | None = None,
) -> Summary:
    """Feed every event to ``renderer``, write what it answers, and return the closing ``Summary``;
    ``corrupt``: where corruption goes when the format has no place for it (Kafka's lines). When
    stdout's reader leaves (``| head``), the rest is read without being shown, for the verdict."""
    events = iter(events)
    batch = renderer.batch
    # A renderer may take a BatchRun whole (TableRenderer.run); else each of its batches in turn.
    run: Callable[[Sequence[Batch]], Sequence[T]] | None = getattr(renderer, "run", None)
    for event in events:
        if type(event) is BatchEvent:  # the hot case first: one per batch, or per v0/v1 message
            lines = batch(event[0], event[1])
        elif type(event) is BatchRun:  # a run of plain v0/v1 messages: one write for them all
            lines = run(event[0]) if run is not None else [ln for b in event[0] for ln in batch(b, b.records)]
        elif type(event) is WrittenRun:  # a run of plain v0/v1 messages, written from their bytes
            lines = (event.output,)  # type: ignore[assignment]  # only the JSON renderer writes runs
        elif type(event) is AbortedBatchEvent:  # data of an aborted transaction (from the .txnindex)
            lines = renderer.aborted_batch(event[0], event[1])
        elif type(event) is Summary:
            return event
        elif isinstance(event, Problem):
            if corrupt is not None and event.kind is ProblemKind.CORRUPT:
                corrupt(str(event))
                continue
            lines = renderer.problem(event)
        elif isinstance(event, FileStart):
            lines = renderer.file_start(event.path, event.base_offset, event.snapshot)
        elif isinstance(event, FileEnd):
            lines = renderer.file_end(event.path, event.trailing)
        elif isinstance(event, SideEntry):
            lines = renderer.side(event.path, event.item)
        else:
            raise TypeError(f"unknown event {event!r}")
        if lines:
            write(lines)
            if out.closed:
                return _unshown(events, corrupt)
    return Summary()


def _unshown(events: Iterator[DumpEvent], corrupt: Callable[[str], None] | None) -> Summary:
    """Read the rest of ``events`` for the closing ``Summary`` alone (corruption still to ``corrupt``)."""
    for event in events:
        if type(event) is Summary:
            return event
        if corrupt is not None and isinstance(event, Problem) and event.kind is ProblemKind.CORRUPT:
            corrupt(str(event))
    return Summary()


def _bytes_of(paths: Sequence[str | Source]) -> int | None:
    """The bytes of every segment that ``paths`` name, for the progress bar's total."""
    from kafka_dump.render.progress import file_size

    try:
        return sum(file_size(f) for f in as_sources(paths))
    except KafkaDumpError:
        return None  # reported when the dump comes to it


def _terminal_json(out: Output) -> Callable[[Sequence[bytes]], None]:
    def write(lines: Sequence[bytes]) -> None:
        out.write_byte_lines([terminal_safe(line) for line in lines])

    return write
