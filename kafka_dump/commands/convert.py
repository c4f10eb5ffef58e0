"""``kdump convert``: rewrite a segment, or a partition directory's segments, in another message format.

The rules are ``analysis/convert.py``'s and the run ``analysis/convert_run.py``'s. Exit codes: 0
converted; 1 corrupt input or an output that failed verification; 2 a bad option, an unreadable
input, a refused output, or a record the target cannot carry.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kafka_dump.analysis.convert import Changes, ConversionError, ConvertOptions
from kafka_dump.analysis.convert_fast import Item
from kafka_dump.analysis.convert_run import (
    CorruptInputError,
    FileReport,
    Side,
    VerificationError,
    Watch,
    convert_segment,
    plan,
    progress_position,
)
from kafka_dump.commands import EXIT_CORRUPT, EXIT_OK
from kafka_dump.commands.options import (
    Limits,
    count_option,
    format_option,
    limit_options,
    output_options,
    size_option,
    time_option,
)
from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.writer import check_writable
from kafka_dump.model import Compression
from kafka_dump.render.output import Output
from kafka_dump.render.payload import printable
from kafka_dump.render.plain import decimal, percent
from kafka_dump.render.progress import file_size
from kafka_dump.render.theme import number, plural
from kafka_dump.wire.codecs import level_problem

if TYPE_CHECKING:
    from rich.table import Table

_CODECS = [c.label for c in Compression if c is not Compression.UNKNOWN]
_COUNTS = ("bytes", "batches", "records")  # of each Side, input and output


@click.command()
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path),
              help="The new segment file (or, for a directory INPUT, the new directory).")  # fmt: skip
@click.option("--to-magic", type=click.Choice(["2", "1", "0"]), default="2", show_default=True,
              help="The message format to write.")  # fmt: skip
@click.option("--compression", type=click.Choice(_CODECS),
              help="The codec of every data batch (default: each batch keeps its own).")  # fmt: skip
@click.option("--level", type=int,
              help="The compression level of every gzip, lz4 or zstd batch (Kafka's ranges).")  # fmt: skip
@count_option("--batch-records", help="Re-batch: at most N records per batch.")
@size_option("--batch-bytes",
              help="Re-batch: at most this many bytes per batch (uncompressed; plain v0/v1 messages: 16KiB).")  # fmt: skip
@click.option(
    "--batching",
    type=click.Choice(["producer", "cleaner"]),
    default="producer",
    show_default=True,
    help="producer: plain v0/v1 messages grouped as a producer fills a batch; cleaner: each "
    "v0/v1 entry one v2 batch, as Kafka 4's log cleaner writes them.",
)
@click.option("--index/--no-index", default=True, show_default=True,
              help="Also write the new segment's .index and .timeindex.")  # fmt: skip
@click.option("--force", is_flag=True, help="Replace an existing OUTPUT (never the input).")
@click.option("--skip-corrupt", is_flag=True, help="Leave corrupt input batches out, and report them.")
@click.option("--drop-control", is_flag=True,
              help="Below magic 2: leave control batches out and write transactional ones as plain data.")  # fmt: skip
@time_option("--timestamp",
             help="The timestamp (ISO-8601 or epoch ms) given to v0 records, which have none (default -1).")  # fmt: skip
@format_option("table", "json", help="The report: a table, or one JSON object per file.")
@limit_options
@output_options
def convert(
    input_path: Path,
    out: Output,
    output: Path,
    to_magic: str,
    compression: str | None,
    level: int | None,
    batch_records: int | None,
    batch_bytes: int | None,
    batching: str,
    index: bool,
    force: bool,
    skip_corrupt: bool,
    drop_control: bool,
    timestamp: int | None,
    fmt: str,
    limits: Limits,
) -> int:
    """Rewrite old v0/v1 segments as v2 (or back), keeping every offset, key, value and timestamp.

    The input is never written to. The output is written to a temporary file beside it, verified
    (read back: every record equal to the input's, every CRC valid), then renamed into place.

    \b
    Examples:
      kdump convert 00000000000000000000.log -o new/00000000000000000000.log
      kdump convert --compression lz4 my-topic-0/ -o my-topic-0.v2/
      kdump convert --to-magic 1 --drop-control 00000000000000000000.log -o v1.log
      kdump convert --batching cleaner old-topic-0/ -o old-topic-0.v2/   # as Kafka 4 compacts it
    """
    codec = None if compression is None else Compression[compression.upper()]
    options = ConvertOptions(
        int(to_magic), codec, batch_records, batch_bytes, drop_control, timestamp, batching
    )
    options.check()
    if level is not None and options.compression is not None:
        problem = level_problem(options.compression, level)
        if problem is not None:
            raise ConversionError(f"--level: {problem}")
    pairs = plan(input_path, output, force=force, index=index)
    check_writable(output if input_path.is_dir() else output.parent)  # before any work
    reports: list[FileReport] = []
    code = EXIT_OK
    failure: str | None = None
    watch = _watch(out, sum(file_size(src) for src, _ in pairs))
    try:
        if input_path.is_dir():
            output.mkdir(exist_ok=True)
        for src, dst in pairs:
            reports.append(convert_segment(
                src, dst, options, level=level, index=index, force=force, skip_corrupt=skip_corrupt,
                watch=watch, **limits,
            ))  # fmt: skip
    except (CorruptInputError, VerificationError) as exc:
        failure = str(exc)
        code = EXIT_CORRUPT
    except OSError as exc:
        # A failed write (a full disk) names no file: it was the output's.
        raise KafkaDumpError(exc.strerror or str(exc), file=exc.filename or str(output)) from None
    if reports:  # the files converted before a failure; no total then, and the failure comes last
        _print_report(out, reports, fmt, total=failure is None)
    if any(r.skipped for r in reports):
        code = EXIT_CORRUPT
    out.flush()
    if failure is not None:
        left = len(pairs) - len(reports) - 1
        after = f" ({plural(left, 'file')} after it not converted)" if left > 0 else ""
        out.diagnostic(f"error: {failure}{after}")
    return code


def _watch(out: Output, total: int) -> Watch | None:
    """The progress bar, when one is wanted: bytes of input done, of ``total``."""
    if not out.progress:
        return None

    def watch(items: Iterator[Item]) -> Iterator[Item]:
        return iter(out.track(items, progress_position, total))

    return watch


def _total(reports: list[FileReport]) -> FileReport:
    before, after, changes = Side(), Side(), Changes()
    for r in reports:
        for total, side in ((before, r.before), (after, r.after)):
            for name in _COUNTS:
                setattr(total, name, getattr(total, name) + getattr(side, name))
        for name, n in r.changes.as_dict().items():
            setattr(changes, name, getattr(changes, name) + n)
    skipped = [p for r in reports for p in r.skipped]
    return FileReport("(all)", "(all)", reports[0].to_magic, before, after, changes, skipped)


def _print_report(out: Output, reports: list[FileReport], fmt: str, *, total: bool = True) -> None:
    rows = [(r, "convert") for r in reports]
    if total and len(reports) > 1:
        rows.append((_total(reports), "total"))
    if fmt == "json":
        for r, kind in rows:
            out.write(json.dumps(_json(r, kind), separators=(",", ":")) + "\n")
        return
    from rich.text import Text

    for r, kind in rows:
        # File names are data: control characters escaped. One line to grep, never wrapped.
        what = f"Total: {len(reports):,} files" if kind == "total" else f"Converting {printable(r.input)}"
        title = what if kind == "total" else f"{what} → {printable(r.output)} (magic {r.to_magic})"
        out.print(Text(title, style="kdump.file"), soft_wrap=True)
        out.print(_table(r))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


def _json(r: FileReport, kind: str) -> dict[str, object]:
    def side(s: Side) -> dict[str, object]:
        bpr = s.bytes_per_record
        counts = {name: getattr(s, name) for name in _COUNTS}
        return {**counts, "bytesPerRecord": None if bpr is None else round(bpr, 2)}

    saving = r.saving
    tail = r.tail
    return {
        "type": kind,
        "input": r.input,
        "output": r.output,
        "toMagic": r.to_magic,
        "before": side(r.before),
        "after": side(r.after),
        "savingPercent": None if saving is None else round(saving, 2),
        "changes": {_camel(k): v for k, v in r.changes.as_dict().items()},
        "skipped": [{"position": p.position, "length": p.length, "reason": p.reason} for p in r.skipped],
        "tail": None
        if tail is None
        else {"kind": tail.kind.label, "position": tail.position, "length": tail.length},
    }


def _table(r: FileReport) -> Table:
    from rich.table import Table
    from rich.text import Text

    table = Table(header_style="kdump.header")
    table.add_column("")
    table.add_column("input", justify="right", style="kdump.number")
    table.add_column("output", justify="right", style="kdump.number")
    for name in _COUNTS:
        table.add_row(name, number(getattr(r.before, name)), number(getattr(r.after, name)))
    bpr = [s.bytes_per_record for s in (r.before, r.after)]
    table.add_row("bytes/record", *("-" if b is None else decimal(b) for b in bpr))
    saving = r.saving
    # The size's change, signed as stats --compare signs it: a saving is negative.
    table.add_row("change", "", "-" if saving is None else percent(-saving / 100, signed=True))
    for what, n in r.changes.lines():
        table.add_row(Text(what, style="kdump.tail"), "", number(n))
    for p in r.skipped:
        reason = printable(f"skipped corrupt: byte {p.position}, {p.length} bytes: {p.reason}")
        table.add_row(Text(reason, style="kdump.problem"), "", "")
    if r.tail is not None:
        table.add_row(Text(printable(f"not copied: {r.tail.reason}"), style="kdump.tail"), "", "")
    return table
