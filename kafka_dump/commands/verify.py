"""``kdump verify-crc``: run ``analysis/verify.py``'s checks over files (shared with worker processes
by ``verify_jobs.py``), show the problems and a summary, and write the salvage copies."""

from __future__ import annotations

import os
from collections.abc import Iterable
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kafka_dump.analysis.verify import (
    WITH_ITS_LOG,
    FileProgress,
    FileReport,
    VerifyEvent,
    VerifyOptions,
    verify_files,
)
from kafka_dump.commands import EXIT_BAD_INPUT, EXIT_CORRUPT, EXIT_OK
from kafka_dump.commands.options import (
    Limits,
    count_option,
    dask_option,
    format_option,
    limit_options,
    only_with_formats,
    output_options,
)
from kafka_dump.commands.verify_jobs import checked, share
from kafka_dump.commands.walked import (
    no_stdin,
    report_skipped,
    skipped_code,
    stdin_name_option,
    store_options,
)
from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.remote import Store
from kafka_dump.log.sources import UNREADABLE, common_dir
from kafka_dump.model import Problem, ProblemKind
from kafka_dump.render.output import UNWRAPPED, Output
from kafka_dump.render.payload import printable
from kafka_dump.render.plain import Justify, middle_cut, number, plain_table, plural

if TYPE_CHECKING:
    from rich.text import Text

    from kafka_dump.log.salvage import SalvageResult


@click.command("verify-crc")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...", type=click.Path(readable=False))
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
@click.option("--force", is_flag=True, help="--salvage: replace copies that exist (never an input).")
@click.option("--all", "show_all", is_flag=True, help="List every file in the summary, clean ones too.")
@click.option("--transient", is_flag=True,
              help="Also check Kafka's transient files and directories (.deleted, .cleaned, .swap, "
                   "-delete, -future, -stray), passed over by default.")  # fmt: skip
@stdin_name_option
@dask_option
@count_option(
    "-j",
    "--jobs",
    help="Processes checking files at once, this one included (default: a core per 16 MiB or 1,024 files).",
)
@limit_options
@store_options
@output_options
def verify_crc(
    paths: tuple[str, ...],
    out: Output,
    store: Store,
    deep: bool,
    no_index: bool,
    fmt: str,
    fail_on_tail: bool,
    salvage_dir: Path | None,
    force: bool,
    show_all: bool,
    transient: bool,
    stdin_name: str | None,
    dask: str | None,
    jobs: int | None,
    limits: Limits,
) -> int:
    """Check the integrity of segments: CRCs, framing, records, offsets, the tail and the indexes.

    PATH is a segment (.log or .checkpoint), a partition directory, a log dir, any directory above
    log dirs (searched to any depth), or - for standard input. Exit code 0: all valid (a zero-filled or partial tail is fine); 1: a CRC or
    structural problem was found, or a path of the scan could not be read; 2: nothing could be read,
    or a bad option.

    \b
    Examples:
      kdump verify-crc /var/lib/kafka/data                 # a whole log dir, every core
      ssh broker cat /var/lib/kafka/data/t-0/00000000000000000000.log | kdump verify-crc -
      kdump verify-crc --shallow my-topic-0/               # CRCs and framing only: fastest
      kdump verify-crc --format json 00000000000000000000.log | jq 'select(.type=="summary")'
      kdump verify-crc --salvage /tmp/rescued my-topic-0/  # copies holding only the valid batches
    """
    only_with_formats(fmt, {"show_all": ("table",)})
    if force and salvage_dir is None:
        raise click.UsageError("--force applies to --salvage only")
    if salvage_dir is not None:
        from kafka_dump.log.writer import check_writable

        check_writable(salvage_dir)
        no_stdin(paths, "--salvage names its copies after the files")
    files, indexes, skipped = verify_files(
        list(paths), transient=transient, stdin_name=stdin_name, store=store
    )
    workers, sizes = share(files, jobs, progress=out.progress)
    # Inflating ahead on a second thread only for one worker: files in parallel take every core.
    logs = frozenset(f.path for f in files if f.path.endswith(".log"))
    options = VerifyOptions(
        deep, not no_index, **limits, inflate_ahead=workers <= 1, logs=logs, indexes=indexes
    )
    events: Iterable[VerifyEvent] = checked(files, sizes, options, workers, dask)
    show: _JsonOut | _TableOut = _JsonOut(out) if fmt == "json" else _TableOut(out, show_all)
    reports: list[FileReport] = []
    refused: list[str] = []  # salvage copies not written
    for event in out.track(events, _position, sum(sizes) if sizes is not None else None, len(files)):
        if isinstance(event, Problem):
            show.problem(event)
        elif isinstance(event, FileReport):
            reports.append(event)
            show.report(event)
            if salvage_dir is not None and event.damaged and event.error is None and event.note is None:
                from kafka_dump.log.salvage import salvage

                try:
                    show.salvaged(salvage(Path(event.file), event.dropped, salvage_dir, overwrite=force))
                except KafkaDumpError as exc:  # this copy is not written; the check goes on
                    refused.append(str(exc))
                    show.refused(str(exc))
    code = EXIT_BAD_INPUT if refused else exit_code(reports, fail_on_tail=fail_on_tail)
    code = max(code, skipped_code(skipped))
    show.finish(reports, code, len(skipped.get(UNREADABLE, ())))
    report_skipped(out, skipped, as_json=fmt == "json", hint="--transient")
    out.flush()
    return code


def exit_code(reports: list[FileReport], *, fail_on_tail: bool) -> int:
    """2 when no file could be read; 1 when some could not, and for any problem (and a partial tail
    under --fail-on-tail)."""
    unreadable = sum(r.error is not None for r in reports)
    if unreadable:
        return EXIT_BAD_INPUT if unreadable == len(reports) else EXIT_CORRUPT
    for r in reports:
        if r.problems or r.indexProblems:
            return EXIT_CORRUPT
        if fail_on_tail and r.tail is not None and r.tail.kind is ProblemKind.PARTIAL_TAIL:
            return EXIT_CORRUPT
    return EXIT_OK


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

    def finish(self, reports: list[FileReport], code: int, unreadable: int = 0) -> None:
        """After the last file: ``unreadable`` paths the walk could not read (they count in ``code``)."""


class _JsonOut(_Shown):
    """JSON Lines: each problem as dump writes it, then one summary object per file."""

    def problem(self, p: Problem) -> None:
        from kafka_dump.render.jsonl import problem_object

        self._out.write_bytes(_json(problem_object(p)))

    def report(self, r: FileReport) -> None:
        self._out.write_bytes(_json(summary_object(r)))

    def salvaged(self, s: SalvageResult) -> None:
        self._out.write_bytes(_json(salvage_object(s)))

    def refused(self, reason: str) -> None:
        self._out.diagnostic(f"error: {reason}")


def _json(obj: dict[str, Any]) -> bytes:
    """One JSON line; characters a terminal acts on (C1 controls, direction overrides) escaped."""
    import json

    from kafka_dump.render.jsonl import terminal_safe

    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
    return terminal_safe(text.encode("utf-8", "backslashreplace"))


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
        **({} if r.note is None else {"note": r.note}),
    }


def salvage_object(s: SalvageResult) -> dict[str, Any]:
    from kafka_dump.log.salvage import span_object

    return {
        "type": "salvage",
        "file": s.source,
        "target": s.target,
        "report": s.report,
        "keptBytes": s.kept_bytes,
        "dropped": [span_object(d, lost) for d, lost in zip(s.dropped, s.lost, strict=True)],
    }


class _TableOut(_Shown):
    """One line per problem as it is found, then a summary table, then the verdict.

    The table lists the files with something to say (every file with ``--all``, or when there is
    one), one row for the clean rest, and totals; paths are shown below their common directory, cut
    in the middle when the terminal is narrow, so that a segment's own name is always whole. Data
    reaches Rich only inside ``Text``, escaped. Without colour the table is ``plain_table``'s text
    when it can be, so a clean check never loads Rich.
    """

    def __init__(self, out: Output, show_all: bool = False) -> None:
        super().__init__(out)
        self._all = show_all

    def _print(self, text: Text) -> None:
        self._out.print(text, soft_wrap=True)

    def problem(self, p: Problem) -> None:
        from rich.text import Text

        style = "kdump.problem" if p.kind is ProblemKind.CORRUPT else "kdump.tail"
        offset = "" if p.baseOffset is None else f", offset {p.baseOffset}"
        where = f"{printable(p.file)}: byte {p.position}{offset} ({plural(p.length, 'byte')}) "
        self._print(Text.assemble(where, (p.check, style), f": {printable(p.reason)}"))

    def report(self, r: FileReport) -> None:
        if r.error is not None:
            from rich.text import Text

            self._print(Text.assemble(("error", "kdump.problem"), f": {printable(r.error)}"))

    def salvaged(self, s: SalvageResult) -> None:
        from rich.text import Text

        from kafka_dump.log.salvage import describe_lost

        dropped = sum(d.end - d.start for d in s.dropped)
        self._print(
            Text.assemble(
                ("salvaged ", "kdump.ok"),
                f"{printable(s.source)} → {printable(s.target)}: kept {plural(s.kept_bytes, 'byte')}, dropped "
                f"{plural(dropped, 'byte')} in {plural(len(s.dropped), 'span')}, {describe_lost(s.lost)} lost "
                f"(report: {printable(s.report)})",
            )
        )

    def refused(self, reason: str) -> None:
        self._out.diagnostic(f"error: {reason}")

    def finish(self, reports: list[FileReport], code: int, unreadable: int = 0) -> None:
        folded = [] if self._all or len(reports) < 2 else [r for r in reports if _clean(r)]
        shown = [r for r in reports if not folded or not _clean(r)]
        common = common_dir([r.file for r in reports]) if len(reports) > 1 else ""
        # The common directory goes on the heading, a line of its own that is never cut.
        heading = f"Checking {printable(common)}{os.sep}" if common else f"Checking {_checked(reports)}"
        rows = [[printable(os.path.relpath(r.file, common) if common else r.file), *_cells(r)] for r in shown]
        styles = [["kdump.file", *_styles(r)] for r in shown]
        if folded:
            more = " more" if shown else ""
            rows.append([f"{number(len(folded))}{more} {'file' if len(folded) == 1 else 'files'} clean"])
            rows[-1] += [""] * (len(_COLUMNS) - 1)
            styles.append(["kdump.ok", *[""] * (len(_COLUMNS) - 1)])
        if len(reports) > 1:
            total = FileReport(f"total ({plural(len(reports), 'file')})")
            summed = zip(*map(attrgetter(*_SUMMED), reports), strict=True)  # each field's values
            for name, values in zip(_SUMMED, summed, strict=True):
                setattr(total, name, sum(values))
            tails = sum(1 for r in reports if r.tail is not None)
            cells = _cells(total)
            cells[5] = plural(tails, "file") if tails else "-"
            rows.append([total.file, *cells])
            styles.append(["bold", *_styles(total)])
            if tails:
                styles[-1][6] = "kdump.tail"
        # A problem column that is all zeros says nothing: dropped, so that names get the room.
        keep = [i for i, (name, _) in enumerate(_COLUMNS) if name not in _OPTIONAL or _any(reports, name)]
        columns = [_COLUMNS[i] for i in keep]
        rows = [[row[i] for i in keep] for row in rows]
        styles = [[style[i] for i in keep] for style in styles]
        width = self._out.width
        if width is not None:
            _fit_names(columns, rows, width)
        verdict = _verdict(reports, code, unreadable)
        with_logs = sum(1 for r in reports if r.note is not None and WITH_ITS_LOG in r.note)
        if with_logs:
            verdict = f"{plural(with_logs, 'index file')} checked with the segment they index\n{verdict}"
        if not self._out.color:  # no style to show: the table's characters, without loading Rich if it can
            plain = plain_table("", columns, rows, width or UNWRAPPED)  # as make_console gives Rich
            if plain is not None:
                self._out.write(f"{heading}\n{plain}{verdict}\n")
                return
        from rich.table import Table
        from rich.text import Text

        table = Table(header_style="kdump.header")
        for name, justify in columns:  # a name longer than its room (fitted above) folds, whole
            table.add_column(name, justify=justify, overflow="fold" if name == "file" else "ellipsis")
        for row, style in zip(rows, styles, strict=True):
            table.add_row(*(Text(text, style=s) for text, s in zip(row, style, strict=True)))
        self._out.print(Text(heading, style="kdump.file"), soft_wrap=True)
        self._out.print(table)
        self._out.print(Text(verdict, style="kdump.problem" if code else "kdump.ok"))


_SUMMED = ("bytes", "batches", "records", "crcErrors", "problems", "badRegions", "indexProblems")
_COLUMNS: tuple[tuple[str, Justify], ...] = tuple(
    (name, "left" if name in ("file", "tail") else "right")
    for name in (
        "file",
        "batches",
        "records",
        "bytes",
        "CRC errors",
        "structural",
        "tail",
        "bad regions",
        "index problems",
    )
)
_OPTIONAL = ("CRC errors", "structural", "tail", "bad regions", "index problems")


def _clean(r: FileReport) -> bool:
    """Nothing to say about the file: readable, no problem, no tail."""
    return r.error is None and not r.problems and not r.indexProblems and r.tail is None


def _damaged(r: FileReport) -> bool:
    return r.error is None and (r.problems > 0 or r.indexProblems > 0)


def _verdict(reports: list[FileReport], code: int, passed_over: int = 0) -> str:
    """``2 of 88 files damaged · exit 1``; ``all 88 files valid · exit 0``; ``passed_over``: paths of
    the walk that could not be read (a dangling link, a directory that cannot be listed)."""
    n = len(reports)
    parts = []
    damaged = sum(map(_damaged, reports))
    unreadable = sum(r.error is not None for r in reports)
    if damaged:
        parts.append(f"{number(damaged)} of {plural(n, 'file')} damaged")
    if unreadable:
        parts.append(f"{number(unreadable)} of {plural(n, 'file')} unreadable")
    if not parts:
        tails = sum(r.tail is not None for r in reports)
        word = "the file is" if n == 1 else f"all {plural(n, 'file')}"
        parts.append(f"{word} valid" + (f" ({plural(tails, 'tail')} reported)" if tails else ""))
        if passed_over:
            parts.append(f"{plural(passed_over, 'path')} of the walk unreadable")
        elif code:
            parts[-1] += ", a partial tail failed by --fail-on-tail"
    return " · ".join([*parts, f"exit {code}"])


def _checked(reports: list[FileReport]) -> str:
    """What the heading names where no directory is common: the one file, or how many."""
    return printable(reports[0].file) if len(reports) == 1 else plural(len(reports), "file")


def _any(reports: list[FileReport], column: str) -> bool:
    """Whether any file has something in this problem column."""
    if column == "tail":
        return any(r.tail is not None for r in reports)
    if column == "CRC errors":
        return any(r.crcErrors or r.error is not None for r in reports)
    if column == "structural":
        return any(r.problems > r.crcErrors or r.error is not None for r in reports)
    if column == "bad regions":
        return any(r.badRegions for r in reports)
    return any(r.indexProblems for r in reports)


def _name_room(columns: list[tuple[str, Justify]], rows: list[list[str]], width: int) -> int:
    """The cells left for names in a table ``width`` wide, beside the other columns at their width."""
    others = sum(max(len(h), *(len(row[i]) for row in rows)) + 3 for i, (h, _) in enumerate(columns) if i)
    own = max(len(os.path.basename(row[0])) + 2 for row in rows)  # the ellipsis and the separator
    return max(width - others - 4, min(own, width // 2))


def _fit_names(columns: list[tuple[str, Justify]], rows: list[list[str]], width: int) -> None:
    """Cut the middle of names too wide for ``width`` beside the other columns, never the file's own name."""
    room = _name_room(columns, rows, width)
    for row in rows:
        row[0] = middle_cut(row[0], room)


def _cells(r: FileReport) -> list[str]:
    """A file's cells after its name."""
    if r.error is not None:
        return ["-"] * 4 + ["unreadable"] + ["-"] * 3
    if r.note is not None:  # a side file: no batches
        return [
            "-",
            "-",
            number(r.bytes),
            number(r.crcErrors),
            number(r.problems),
            "-",
            "0",
            number(r.indexProblems),
        ]
    tail = "-"
    if r.tail is not None:
        tail = f"{r.tail.kind.label} {plural(r.tail.length, 'byte')}"
    return [
        number(r.batches),
        number(r.records),
        number(r.bytes),
        number(r.crcErrors),
        number(r.problems - r.crcErrors),
        tail,
        number(r.badRegions),
        number(r.indexProblems),
    ]


def _styles(r: FileReport) -> list[str]:
    """The theme style of each of ``_cells``."""
    if r.error is not None:
        return [""] * 4 + ["kdump.problem"] + [""] * 3

    def n(value: int, bad: bool = False) -> str:
        return "kdump.problem" if bad and value else "kdump.number"

    tail = "kdump.tail" if r.tail is not None else ""
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
