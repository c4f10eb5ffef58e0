"""``kdump verify-crc``: run ``analysis/verify.py``'s checks over files (in worker processes with
``-j``), show the problems and a summary, and write the salvage copies."""

from __future__ import annotations

import os
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
from kafka_dump.commands.options import Limits, count_option, format_option, limit_options, output_options
from kafka_dump.model import Problem, ProblemKind
from kafka_dump.render.output import UNWRAPPED, Output
from kafka_dump.render.payload import printable
from kafka_dump.render.plain import Justify, number, plain_table, plural

if TYPE_CHECKING:
    from rich.text import Text

    from kafka_dump.log.salvage import SalvageResult


@click.command("verify-crc")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--deep/--shallow", default=True, show_default=True,
              help="deep: also decompress every batch and check every record and inner message; "
                   "shallow: entry framing, CRCs and batch headers only.")  # fmt: skip
@click.option("--no-index", is_flag=True, help="Do not check the .index, .timeindex and .txnindex files.")
@format_option(
    "table",
    "json",
    help="table: problems, then a summary table; json: JSON Lines (problems, one summary per file).",
)
@click.option("--fail-on-tail", is_flag=True, help="Exit 1 when a file ends with a partial entry.")
@click.option("--salvage", "salvage_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write a copy of each damaged segment holding only its valid batches into this directory.")  # fmt: skip
@count_option("-j", "--jobs", help="Files checked in parallel (default: the number of cores).")
@limit_options
@output_options
def verify_crc(
    paths: tuple[str, ...],
    out: Output,
    deep: bool,
    no_index: bool,
    fmt: str,
    fail_on_tail: bool,
    salvage_dir: Path | None,
    jobs: int | None,
    limits: Limits,
) -> int:
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
    if salvage_dir is not None:
        from kafka_dump.log.writer import check_writable

        check_writable(salvage_dir)
    files = verify_files(list(paths))
    workers = min(jobs or os.cpu_count() or 1, max(len(files), 1))
    # Inflating ahead on a second thread only for one worker: files in parallel take every core.
    options = VerifyOptions(deep, not no_index, **limits, inflate_ahead=workers <= 1)
    events: Iterable[VerifyEvent] = _events(files, options, workers)
    show: _JsonOut | _TableOut = _JsonOut(out) if fmt == "json" else _TableOut(out)
    reports: list[FileReport] = []
    for event in out.track(events, _position, sum(_size(f) for f in files)):
        if isinstance(event, Problem):
            show.problem(event)
        elif isinstance(event, FileReport):
            reports.append(event)
            show.report(event)
            if salvage_dir is not None and event.damaged and event.error is None:
                from kafka_dump.log.salvage import salvage

                show.salvaged(salvage(Path(event.file), event.dropped, salvage_dir))
    show.finish(reports)
    out.flush()
    return exit_code(reports, fail_on_tail=fail_on_tail)


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


def _position(event: VerifyEvent) -> tuple[str, int] | None:
    """(file, bytes checked) that an event shows, for the progress bar."""
    if isinstance(event, FileProgress):
        return event.file, event.done
    if isinstance(event, FileReport):
        return event.file, event.bytes
    return None


class _Shown:
    """Where the events go: ``out`` (which erases a progress bar on the same terminal first)."""

    def __init__(self, out: Output) -> None:
        self._out = out

    def finish(self, reports: list[FileReport]) -> None:
        pass


class _JsonOut(_Shown):
    """JSON Lines: each problem as dump writes it, then one summary object per file."""

    def problem(self, p: Problem) -> None:
        from kafka_dump.render.jsonl import problem_object

        self._out.write_bytes(_json(problem_object(p)))

    def report(self, r: FileReport) -> None:
        self._out.write_bytes(_json(summary_object(r)))

    def salvaged(self, s: SalvageResult) -> None:
        self._out.write_bytes(_json(salvage_object(s)))


def _json(obj: dict[str, Any]) -> bytes:
    import json

    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
    return text.encode("utf-8", "backslashreplace")


def summary_object(r: FileReport) -> dict[str, Any]:
    """The JSON summary of one file (README: "verify-crc")."""
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


class _TableOut(_Shown):
    """One line per problem as it is found, then a summary table (a row per file, then totals); data
    reaches Rich only inside ``Text``, and a clean check without colour never loads Rich."""

    def _print(self, text: Text) -> None:
        self._out.print(text, soft_wrap=True)

    def problem(self, p: Problem) -> None:
        from rich.text import Text

        style = "kdump.problem" if p.kind is ProblemKind.CORRUPT else "kdump.tail"
        where = f"{printable(p.file)}: byte {number(p.position)} ({plural(p.length, 'byte')}) "
        self._print(Text.assemble(where, (p.check, style), f": {printable(p.reason)}"))

    def report(self, r: FileReport) -> None:
        if r.error is not None:
            from rich.text import Text

            self._print(Text.assemble(("error", "kdump.problem"), f": {printable(r.error)}"))

    def salvaged(self, s: SalvageResult) -> None:
        from rich.text import Text

        dropped = sum(d.end - d.start for d in s.dropped)
        self._print(
            Text.assemble(
                ("salvaged ", "kdump.ok"),
                f"{printable(s.source)} -> {printable(s.target)}: kept {plural(s.kept_bytes, 'byte')}, dropped "
                f"{plural(dropped, 'byte')} in {plural(len(s.dropped), 'span')} (report: {printable(s.report)})",
            )
        )

    def finish(self, reports: list[FileReport]) -> None:
        rows = [[(printable(r.file), "kdump.file"), *_cells(r)] for r in reports]
        if len(reports) > 1:
            total = FileReport(f"total ({plural(len(reports), 'file')})")
            for r in reports:
                for name in _SUMMED:
                    setattr(total, name, getattr(total, name) + getattr(r, name))
            tails = sum(1 for r in reports if r.tail is not None)
            cells = _cells(total)
            cells[5] = (plural(tails, "file"), "kdump.tail") if tails else ("-", "")
            rows.append([(total.file, "bold"), *cells])
        if not self._out.color:  # no style to show: the table's characters, without loading Rich if it can
            width = self._out.width or UNWRAPPED  # as make_console gives Rich
            plain = plain_table(_TITLE, _COLUMNS, [[text for text, _ in row] for row in rows], width)
            if plain is not None:
                self._out.write(plain)
                return
        from rich.table import Table
        from rich.text import Text

        table = Table(title=_TITLE, title_justify="left", header_style="kdump.header")
        for name, justify in _COLUMNS:
            table.add_column(name, justify=justify)
        for row in rows:
            table.add_row(*(Text(text, style=style) for text, style in row))
        self._out.print(table)


_SUMMED = ("bytes", "batches", "records", "crcErrors", "problems", "badRegions", "indexProblems")
_TITLE = "verify-crc"
_COLUMNS: tuple[tuple[str, Justify], ...] = tuple(
    (name, "left" if name in ("file", "tail") else "right")
    for name in ("file", "batches", "records", "bytes", "CRC failures", "structural", "tail", "bad regions",
                 "index problems")
)  # fmt: skip


def _cells(r: FileReport) -> list[tuple[str, str]]:
    """A file's cells after its name, each (text, theme style)."""

    def n(value: int, bad: bool = False) -> tuple[str, str]:
        return number(value), "kdump.problem" if bad and value else "kdump.number"

    if r.error is not None:
        return [("-", "")] * 4 + [("unreadable", "kdump.problem")] + [("-", "")] * 3
    tail = ("-", "")
    if r.tail is not None:
        tail = (f"{r.tail.kind.label} {plural(r.tail.length, 'byte')}", "kdump.tail")
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
