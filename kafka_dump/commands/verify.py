"""``kdump verify-crc``: check segments, partitions or whole log dirs; report, exit code, salvage.

The checks are ``analysis/verify.py``'s; this module runs them over the files (in parallel worker
processes with ``-j``), shows the problems and a summary, and writes the salvage copies.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kafka_dump.analysis.verify import (
    FileProgress,
    FileReport,
    VerifyEvent,
    VerifyOptions,
    verify_file,
    verify_files,
)
from kafka_dump.commands import EXIT_BAD_INPUT, EXIT_CORRUPT, EXIT_OK
from kafka_dump.errors import KafkaDumpError
from kafka_dump.format.codecs import DEFAULT_MAX_BATCH_BYTES
from kafka_dump.model import Problem, ProblemKind
from kafka_dump.render.jsonl import problem_object
from kafka_dump.salvage import SalvageResult, salvage

if TYPE_CHECKING:
    from rich.text import Text


@click.command("verify-crc")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--deep/--shallow", default=True, show_default=True,
              help="deep: also decompress every batch and check every record and inner message; "
                   "shallow: entry framing, CRCs and batch headers only.")  # fmt: skip
@click.option("--no-index", is_flag=True, help="Do not check the .index, .timeindex and .txnindex files.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table: problems, then a summary table; json: JSON Lines (problems, one summary per file).")  # fmt: skip
@click.option("--fail-on-tail", is_flag=True, help="Exit 1 when a file ends with a partial entry.")
@click.option("--salvage", "salvage_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write a copy of each damaged segment holding only its valid batches into this directory.")  # fmt: skip
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Files checked in parallel (default: the number of cores).")  # fmt: skip
@click.option("--max-batch-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BATCH_BYTES, show_default=True,
              help="A batch that decompresses past this size is reported as a problem.")  # fmt: skip
@click.option(
    "--traceback", "show_traceback", is_flag=True, help="On an error, show the Python traceback too."
)
def verify_crc(
    paths: tuple[str, ...],
    deep: bool,
    no_index: bool,
    fmt: str,
    fail_on_tail: bool,
    salvage_dir: Path | None,
    jobs: int | None,
    max_batch_bytes: int,
    show_traceback: bool,
) -> None:
    """Check the integrity of segments: CRCs, framing, records, offsets, the tail and the indexes.

    PATH is a segment (.log or .checkpoint), a partition directory, or a whole log dir (searched
    recursively). Exit code 0: all valid (a zero-filled or partial tail is fine); 1: a CRC or
    structural problem was found; 2: a path could not be read, or a bad option.

    \b
    Examples:
      kdump verify-crc /var/lib/kafka/data                 # a whole log dir, every core
      kdump verify-crc --shallow my-topic-0/               # CRCs and framing only: fastest
      kdump verify-crc --format json 00000000000000000000.log | jq 'select(.type=="summary")'
      kdump verify-crc --salvage /tmp/rescued my-topic-0/  # copies holding only the valid batches
    """
    try:
        files = verify_files(list(paths))
    except KafkaDumpError as exc:
        click.echo(f"kdump: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    options = VerifyOptions(deep=deep, index=not no_index, max_batch_bytes=max_batch_bytes)
    workers = min(jobs or os.cpu_count() or 1, max(len(files), 1))
    events: Iterable[VerifyEvent] = _events(files, options, workers)
    total = sum(_size(f) for f in files)
    if sys.stderr.isatty():
        events = _with_progress(events, total)
    reports: list[FileReport] = []
    salvaged: list[SalvageResult] = []
    show = _JsonOut() if fmt == "json" else _TableOut()
    try:
        for event in events:
            if isinstance(event, Problem):
                show.problem(event)
            elif isinstance(event, FileReport):
                reports.append(event)
                show.report(event)
                if salvage_dir is not None and event.damaged and event.error is None:
                    result = salvage(Path(event.file), event.dropped, salvage_dir)
                    salvaged.append(result)
                    show.salvaged(result)
        show.finish(reports)
        sys.stdout.flush()
    except KafkaDumpError as exc:
        if show_traceback:
            import traceback

            traceback.print_exc()
        click.echo(f"kdump: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_OK)
    sys.exit(exit_code(reports, fail_on_tail=fail_on_tail))


def exit_code(reports: list[FileReport], *, fail_on_tail: bool) -> int:
    """2 when a file could not be read; 1 for any problem (and a partial tail under --fail-on-tail)."""
    if any(r.error is not None for r in reports):
        return EXIT_BAD_INPUT
    for r in reports:
        if r.problems or r.indexProblems:
            return EXIT_CORRUPT
        if fail_on_tail and r.tail is not None and r.tail.kind is ProblemKind.PARTIAL_TAIL:
            return EXIT_CORRUPT
    return EXIT_OK


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _events(files: list[Path], options: VerifyOptions, workers: int) -> Iterator[VerifyEvent]:
    """Every file's events, in file order: streamed in this process, or gathered per file by workers."""
    if workers <= 1:
        for f in files:
            yield from verify_file(f, options)
        return
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers) as pool:
        for events in pool.map(_check_one, files, [options] * len(files)):
            yield from events


def _check_one(path: Path, options: VerifyOptions) -> list[VerifyEvent]:
    """A worker's whole answer for one file (progress events are dropped: the file is the step)."""
    return [e for e in verify_file(path, options) if not isinstance(e, FileProgress)]


def _with_progress(events: Iterable[VerifyEvent], total: int) -> Iterator[VerifyEvent]:
    """Bytes done of the total, rate and time left, on stderr (only called when it is a terminal)."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    columns = (BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn())
    done_before = 0  # bytes of the files already finished
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("verify", total=total)
        for event in events:
            if isinstance(event, FileProgress):
                progress.update(task, completed=done_before + event.done)
            elif isinstance(event, FileReport):
                done_before += event.bytes
                progress.update(task, completed=done_before)
            yield event


class _JsonOut:
    """JSON Lines: each problem as dump writes it, then one summary object per file."""

    def __init__(self) -> None:
        self._out = sys.stdout

    def problem(self, p: Problem) -> None:
        self._out.write(_json(problem_object(p)))

    def report(self, r: FileReport) -> None:
        self._out.write(_json(summary_object(r)))

    def salvaged(self, s: SalvageResult) -> None:
        self._out.write(_json(salvage_object(s)))

    def finish(self, reports: list[FileReport]) -> None:
        pass


def _json(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"


def summary_object(r: FileReport) -> dict[str, Any]:
    tail = None
    if r.tail is not None:
        tail = {"kind": r.tail.kind.label, "position": r.tail.position, "bytes": r.tail.length}
    return {
        "type": "summary",
        "file": r.file,
        "bytes": r.bytes,
        "batches": r.batches,
        "records": r.records,
        "crcErrors": r.crcErrors,
        "problems": r.problems,
        "badRegions": r.badRegions,
        "badRegionBytes": r.badRegionBytes,
        "offsetGaps": r.gaps,
        "tail": tail,
        "indexFiles": r.indexFiles,
        "indexProblems": r.indexProblems,
        "error": r.error,
    }


def salvage_object(s: SalvageResult) -> dict[str, Any]:
    return {
        "type": "salvage",
        "file": s.source,
        "target": s.target,
        "report": s.report,
        "keptBytes": s.kept_bytes,
        "dropped": [
            {"start": d.start, "end": d.end, "bytes": d.end - d.start, "reason": d.reason} for d in s.dropped
        ],
    }


class _TableOut:
    """One line per problem as it is found, then a Rich summary table: one row per file, then totals."""

    def __init__(self) -> None:
        from rich.console import Console

        width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS", "200"))
        self._console = Console(file=sys.stdout, width=width, highlight=False)

    def _line(self, *parts: tuple[str, str]) -> None:
        from rich.text import Text

        self._console.print(Text.assemble(*parts), soft_wrap=True)

    def problem(self, p: Problem) -> None:
        style = "red" if p.kind is ProblemKind.CORRUPT else "yellow"
        self._line(
            (f"{p.file}: byte {p.position} ({p.length} bytes) ", ""), (p.check, style), (f": {p.reason}", "")
        )

    def report(self, r: FileReport) -> None:
        if r.error is not None:
            self._line(("kdump: error: ", "red"), (r.error, ""))

    def salvaged(self, s: SalvageResult) -> None:
        dropped = sum(d.end - d.start for d in s.dropped)
        self._line(
            (f"salvaged {s.source} -> {s.target}: kept {s.kept_bytes} bytes, dropped {dropped} bytes "
             f"in {len(s.dropped)} spans (report: {s.report})", "green"),
        )  # fmt: skip

    def finish(self, reports: list[FileReport]) -> None:
        from rich.table import Table
        from rich.text import Text

        columns = ("file", "batches", "records", "bytes", "CRC failures", "structural", "tail", "bad regions",
                   "index problems")  # fmt: skip
        table = Table(title="verify-crc summary", title_justify="left")
        for name in columns:
            table.add_column(name, justify="left" if name in ("file", "tail") else "right")
        for r in reports:
            table.add_row(Text(r.file), *_cells(r))
        if len(reports) > 1:
            total = FileReport(f"total ({len(reports)} files)")
            for r in reports:
                for name in (
                    "bytes",
                    "batches",
                    "records",
                    "crcErrors",
                    "problems",
                    "badRegions",
                    "indexProblems",
                ):
                    setattr(total, name, getattr(total, name) + getattr(r, name))
            tails = sum(1 for r in reports if r.tail is not None)
            cells = _cells(total)
            cells[5] = Text(f"{tails} files" if tails else "-")
            table.add_row(Text(total.file, style="bold"), *cells)
        self._console.print(table)


def _cells(r: FileReport) -> list[Text]:
    from rich.text import Text

    def n(value: int, bad: bool = False) -> Text:
        return Text(f"{value:,}", style="red" if bad and value else "")

    if r.error is not None:
        return [Text("-")] * 4 + [Text("unreadable", style="red")] + [Text("-")] * 3
    tail = Text("-") if r.tail is None else Text(f"{r.tail.kind.label} {r.tail.length:,} B", style="yellow")
    return [
        n(r.batches),
        n(r.records),
        n(r.bytes),
        n(r.crcErrors, True),
        n(r.problems - r.crcErrors, True),
        tail,
        n(r.badRegions, True),
        n(r.indexProblems, True),
    ]
