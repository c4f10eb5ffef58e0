"""``kdump stats``: what segments hold, and (``--compare``) their exact size in every format and codec."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

import click

from kafka_dump.analysis.stats import SegmentStats
from kafka_dump.analysis.stats_walk import FileStart, StatsEvent, iter_stats, progress_position
from kafka_dump.commands import EXIT_BAD_INPUT, EXIT_CORRUPT
from kafka_dump.commands.options import (
    count_option,
    format_option,
    inputs,
    limit_options,
    only_with_formats,
    output_options,
    segment_paths,
    size_option,
)
from kafka_dump.commands.walked import report_skipped, skipped_code, stdin_name_option, store_options
from kafka_dump.log.remote import Store
from kafka_dump.log.sources import find
from kafka_dump.model import Check, Compression, Problem
from kafka_dump.render.output import UNWRAPPED, Output
from kafka_dump.render.progress import file_size

if TYPE_CHECKING:
    from kafka_dump.analysis.compare import Comparison
    from kafka_dump.commands.options import Limits

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
@inputs
@format_option(
    "table", "json", help="table: Rich tables and charts; json: one JSON object per file, then one for the total."
)  # fmt: skip
@click.option("--no-charts", is_flag=True, help="Leave out the record-size histogram and the sparkline.")
@click.option(
    "--per-file", is_flag=True, help="table: a section for each segment of a directory, not one for them all."
)
@limit_options
@click.option(
    "--compare",
    is_flag=True,
    help="Also encode the records in V0, V1 and V2 with every codec and report the exact sizes.",
)
@count_option(
    "--batch-records", help="--compare: group plain v0/v1 messages into batches of at most N records."
)
@size_option(
    "--batch-bytes",
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
@count_option("--sample", help="--compare: encode only N batches spread over each file (the figures say so).")
@stdin_name_option
@store_options
@output_options
def stats(
    paths: tuple[str, ...], out: Output,
    store: Store, fmt: str, no_charts: bool, per_file: bool, limits: Limits, compare: bool,
    batch_records: int | None, batch_bytes: int | None, codecs: tuple[Compression, ...], level: int | None,
    sample: int | None, stdin_name: str | None,
) -> int:  # fmt: skip
    """Count what segments hold: layout, batches, records, overhead per record.

    FILE|DIR is a segment, a partition directory, a log dir or any directory above log dirs
    (searched to any depth), or - for standard input. Tables: each file named gets a section, and so does each directory's set of
    segments (--per-file: each segment), then the total when there are several sections. JSON:
    one object per file, then the total. Corrupt batches are reported on stderr, counted and
    skipped; the exit code stays 0.

    With --compare, the same records (same offsets, timestamps, keys, values, headers and batch
    boundaries) are encoded again in V0/V1 (none, gzip, snappy, lz4) and V2 (none, gzip, snappy,
    lz4, zstd), and a table gives the exact size of each.

    \b
    Examples:
      kdump stats 00000000000000000000.log
      kdump stats --format json /var/lib/kafka/data/my-topic-0/ | jq .
      kdump stats --compare --batch-records 1000 00000000000000000000.log
      kdump stats --compare --codecs lz4,zstd --sample 200 big-topic-0/
    """
    only_with_formats(fmt, {"no_charts": ("table",), "per_file": ("table",)})
    if not compare and (batch_records or batch_bytes or sample or level is not None):
        raise click.UsageError("--batch-records, --batch-bytes, --level and --sample need --compare")
    paths = segment_paths(paths, out)
    if not paths:
        return EXIT_BAD_INPUT
    found = find(paths, stdin_name=stdin_name, store=store)
    files = found.readable()
    comparisons: dict[str, Comparison] = {}
    listener = None
    if compare:
        from kafka_dump.analysis.compare import CompareOptions, Comparison

        options = CompareOptions(codecs, level, batch_records, batch_bytes, sample)
        options.check()

        def listener(path: os.PathLike[str]) -> Comparison:
            c = comparisons[str(path)] = Comparison(options, file_bytes=os.path.getsize(path))
            return c

    # A table's section: a file named, or the segments of one directory, counted together (JSON and
    # --per-file: each file).
    into = None if per_file or fmt == "json" else _Sections({f.name for f in files if f.given}).into
    events: Iterable[StatsEvent] = iter_stats(files, listener=listener, into=into, **limits)
    events = out.track(
        events, progress_position, sum(map(file_size, files)) if out.progress else None, len(files)
    )
    read, unread = _render(out, events, fmt, charts=not no_charts, comparisons=comparisons)
    report_skipped(out, found.skipped, as_json=fmt == "json")
    out.flush()
    if unread:  # each said on stderr; the exit code says so too
        return EXIT_CORRUPT if read else EXIT_BAD_INPUT
    return skipped_code(found.skipped)


def _render(
    out: Output, events: Iterable[StatsEvent], fmt: str, *, charts: bool, comparisons: dict[str, Comparison]
) -> tuple[int, int]:
    """Show each section's figures and the total; (files read, files that could not be read). A
    section's figures come once for each of its files (the same ``SegmentStats``, counting them all),
    and are shown when the next section's come."""
    total = _Total()
    shown = unread = 0
    current: tuple[SegmentStats, Comparison | None] | None = None
    file = ""
    for event in events:
        if isinstance(event, FileStart):
            file = event.path
        elif isinstance(event, Problem):
            unread += event.check == Check.UNREADABLE
            out.diagnostic(str(event))
        elif isinstance(event, SegmentStats):
            cmp = comparisons.pop(file, None)
            if current is not None and current[0] is event:  # the section's next file
                current = event, _sum(current[1], cmp)
                continue
            if current is not None:
                _end(out, fmt, *current, total, charts)
                shown += 1
            current = event, cmp
    if current is not None:
        _end(out, fmt, *current, total, charts)
        shown += 1
    read = total.stats.files
    if not read or out.closed or (fmt == "table" and shown < 2):
        return read, unread  # one section needs no total
    _show(out, fmt, total.stats, total.cmp, total=True, charts=charts)
    return read, unread


class _Sections:
    """The figures each file is counted into, in a table: those of the file alone when it was named,
    else those of its directory's segments (named by its one file, then by the directory)."""

    def __init__(self, named: set[str]) -> None:
        self._named = named
        self._key: str | None = None
        self._stats = SegmentStats("", files=0)

    def into(self, path: os.PathLike[str]) -> SegmentStats:
        file = str(path)
        key = file if file in self._named else os.path.dirname(file)
        if key != self._key or file == key:
            self._key, self._stats = key, SegmentStats(file, files=0)
        elif self._stats.files == 1:
            self._stats.path = key  # a second file: the section is the directory's
        return self._stats


class _Total:
    """Every section's figures, summed."""

    def __init__(self) -> None:
        self.stats = SegmentStats("total", files=0)
        self.cmp: Comparison | None = None

    def add(self, s: SegmentStats, cmp: Comparison | None) -> None:
        self.stats.merge(s)
        self.cmp = _sum(self.cmp, cmp)


def _sum(a: Comparison | None, b: Comparison | None) -> Comparison | None:
    """Two files' (or sections') comparisons, summed; the one there is when the other is None."""
    if a is None or b is None:
        return a or b
    if a.files == 1:  # a file's own: summed in a new one
        a, first = type(a)(a.options, files=0), a
        a.merge(first)
    a.merge(b)
    return a


def _end(out: Output, fmt: str, s: SegmentStats, cmp: Comparison | None, total: _Total, charts: bool) -> None:
    """Show a section (unless stdout's reader left: read on, for the exit code) and add it to the total."""
    if not out.closed:
        _show(out, fmt, s, cmp.finish() if cmp else None, total=False, charts=charts)
    total.add(s, cmp)


def _show(
    out: Output, fmt: str, s: SegmentStats, cmp: Comparison | None, *, total: bool, charts: bool
) -> None:
    from kafka_dump.render.stats import stats_json, stats_renderables, stats_text

    losses = []
    if cmp is not None:
        from kafka_dump.analysis.compare import downgrade_losses
        from kafka_dump.render.compare import compare_json, compare_renderables, compare_text

        losses = downgrade_losses(s)
    if fmt == "json":
        obj = stats_json(s, total=total)
        if cmp is not None:
            obj["compare"] = compare_json(cmp, losses)
        out.write(json.dumps(obj, separators=(",", ":")) + "\n")
        return
    text = None
    if not out.color:  # no style to show: the characters, without Rich's layout (or import) if it can
        text = stats_text(s, out.width or UNWRAPPED, total=total, charts=charts)
    if text is not None:
        out.write(text)
    else:
        for renderable in stats_renderables(s, total=total, charts=charts):
            out.print(renderable)
    if cmp is not None:
        text = compare_text(cmp, losses, out.width or UNWRAPPED) if not out.color else None
        if text is not None:
            out.write(text)
        else:
            for renderable in compare_renderables(cmp, losses):
                out.print(renderable)
    if not total:
        out.write("\n")
