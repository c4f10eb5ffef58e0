"""``kdump ls``: one line per segment (or partition, topic, log dir), read from entry headers alone."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Literal

import click

from kafka_dump.analysis.ls import (
    ROLLUPS,
    SORTS,
    Listing,
    LsOptions,
    by_partition,
    iter_listings,
    rollup,
    sort_key,
    tail_problem,
)
from kafka_dump.commands import EXIT_BAD_INPUT, EXIT_CORRUPT, EXIT_OK
from kafka_dump.commands.filters import search_options
from kafka_dump.commands.options import (
    Limits,
    count_option,
    dask_option,
    format_option,
    inputs,
    limit_options,
    output_options,
    segment_paths,
)
from kafka_dump.commands.walked import no_stdin, report_skipped, skipped_code, store_options
from kafka_dump.log.remote import Store, is_url
from kafka_dump.log.sources import Source, common_dir, find
from kafka_dump.render.output import UNWRAPPED, Output
from kafka_dump.render.plain import Cut, Justify, fit
from kafka_dump.render.progress import file_size
from kafka_dump.wire.match import Match


@click.command()
@inputs
@format_option(
    "table",
    "json",
    "plain",
    help="table: a table and a total line; json: JSON Lines; plain: "
    "tab-separated whole rows for awk (no heading, no total).",
)
@click.option(
    "--by",
    type=click.Choice(ROLLUPS),
    default=None,
    help="One row per segment, partition, topic or log dir. Default: segment for files and partition "
    "directories, partition when a log dir is given.",
)
@click.option(
    "--sort",
    "sort",
    type=click.Choice(SORTS),
    default="offset",
    show_default=True,
    help="offset: directory and offset order; size: largest first; time: oldest first.",
)
@click.option(
    "--deep",
    is_flag=True,
    help="Read every entry in full (decompressing v0/v1 wrappers) to "
    "fill in what headers leave unknown (records: ?).",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Also check each segment's CRCs and framing (verify-crc --shallow); a failure gives exit 1.",
)
@count_option("-j", "--jobs", default=1, show_default=True, help="Partitions listed by N processes at once.")
@click.option(
    "--remote", "remote_url", metavar="URL",
    help="The partition's tiered-storage location: one line of offsets across disk and store (local, remote, both; gaps, overlaps).",
)  # fmt: skip
@click.option(
    "--tiered", is_flag=True,
    help="As --remote, the remote side from __remote_log_metadata in the partition's log dir (its segments in COPY_SEGMENT_FINISHED).",
)  # fmt: skip
@click.option(
    "--metadata", "metadata", multiple=True, metavar="DIR",
    help="Where __remote_log_metadata's partitions are for --tiered (a log dir, a directory above log dirs); implies --tiered.",
)  # fmt: skip
@dask_option
@search_options
@limit_options
@store_options
@output_options
def ls(
    paths: tuple[str, ...],
    out: Output,
    store: Store,
    fmt: str,
    by: str | None,
    sort: str,
    deep: bool,
    verify: bool,
    jobs: int,
    remote_url: str | None,
    tiered: bool,
    metadata: tuple[str, ...],
    dask: str | None,
    match: Match | None,
    limits: Limits,
) -> int:
    """List segments, one line each: offsets, times, size, entries, formats, from entry headers.

    FILE|DIR is a segment, a partition directory or a log dir (several may be given). Only each
    entry's header is read: the cost grows with the number of entries, not the bytes. A fact that
    only a payload holds (a v0/v1 compressed wrapper's record count) shows as ?; --deep reads it.
    With a search option (--key, --grep...), every entry is read and a matches column counts the
    records kept; segments with none are left out.
    Exit 0, or 1 when damage was met (a tail is a fact, not damage), 2 when nothing could be read.

    \b
    Examples:
      kdump ls /var/lib/kafka/data                     # one line per partition
      kdump ls /var/lib/kafka                          # every log dir below it (JBOD: data-1, data-2)
      kdump ls --by segment --sort size my-topic-0/
      kdump ls --by topic /data/kafka-1 /data/kafka-2
      kdump ls --format plain /var/lib/kafka/data | awk -F'\\t' '{s += $7} END {print s}'
      kdump ls --key order-42 /var/lib/kafka/data      # the partitions that hold a key
      kdump ls --remote s3://tiered-bucket/prod/ /var/lib/kafka/data/orders-3   # disk and store
      kdump ls --tiered /var/lib/kafka/data/orders-3   # the store's side from __remote_log_metadata
    """
    no_stdin(paths, "ls lists files it can open again; pipe a segment into dump, verify-crc or stats")
    paths = segment_paths(paths, out)
    if not paths:
        return EXIT_BAD_INPUT
    found = find(paths, transient=True, store=store)  # Kafka's transient files are listed, with their state
    files = found.readable()
    if remote_url is not None and (tiered or metadata):
        raise click.UsageError(
            "--remote reads the store's manifests, --tiered and --metadata read __remote_log_metadata: give one"
        )
    if remote_url is not None or tiered or metadata:
        return _across(out, fmt, files, remote_url, metadata, store)
    states = {s.name: s.state for s in files if s.state is not None}
    if by is None:
        by = "partition" if _holds_partitions(paths, files) else "segment"
    options = LsOptions(deep=deep, verify=verify, match=match, **limits)
    groups = by_partition(files)
    events = out.track(
        iter_listings(groups, options, jobs, dask),
        lambda one: (one.name, one.bytes),
        sum(file_size(f) for f in files),
    )
    common = common_dir([str(f) for f in files])
    whole = Listing("total", segments=0, matches=None if match is None else 0)
    unreadable = damaged = 0

    def counted() -> Iterator[Listing]:
        """The listings as they come, counted into the total (a rollup keeps its rows alone); under a
        search, only those with a match."""
        nonlocal unreadable, damaged
        for one in events:
            one.state = states.get(one.name) if states else None
            if one.error is not None:
                out.diagnostic(one.error)
                unreadable += 1
            hurt = bool(one.error is not None or one.crcErrors or (one.problem and not _only_tail(one)))
            damaged += hurt
            if hurt and one.error is None and match is not None and not one.matches:  # not listed: said here
                what = one.problem.reason if one.problem is not None else f"{one.crcErrors} CRC errors"
                out.diagnostic(f"{one.name}: no matching record, and damaged: {what}")
            if match is None or one.matches:
                whole.merge(one)
                yield one

    rows = rollup(counted(), by, lambda one: _name(one, by, common))
    rows.sort(key=sort_key(sort))
    _render(out, fmt, by, rows, whole, common or (str(files[0]) if len(files) == 1 else ""))
    out.flush()
    if match is not None and not whole.matches:
        out.diagnostic("no record matches the filters given")
    report_skipped(out, found.skipped, as_json=fmt == "json")
    if unreadable == len(files):
        return EXIT_BAD_INPUT
    return max(EXIT_CORRUPT if damaged else EXIT_OK, skipped_code(found.skipped))


def _across(
    out: Output, fmt: str, files: list[Source], url: str | None, metadata: Sequence[str], store: Store
) -> int:
    """``--remote``, ``--tiered``: one partition's offsets across disk and the store (its manifests
    under ``url``, or ``__remote_log_metadata`` under ``metadata``, by default the partition's log
    dir); exit 1 for a gap or an overlap."""
    from kafka_dump.analysis import tiered_span as t

    directories = {f.directory for f in files}
    if len(directories) != 1:
        raise click.UsageError("--remote and --tiered list one partition: give its directory (topic-N) alone")
    directory = directories.pop()
    partition = os.path.basename(directory)
    local, errors = t.local_spans(files)
    if url is not None:
        remote, more = t.remote_spans(url, store, partition)
    else:
        remote, more = t.metadata_spans(list(metadata) or [os.path.dirname(directory) or "."], partition)
    for error in [*errors, *more]:
        out.diagnostic(error)
    rows = t.across(local, remote)
    rows[-1]["remoteFrom"] = url if url is not None else "__remote_log_metadata"
    out.write("".join(t.json_lines(rows) if fmt == "json" else t.table_lines(rows)))
    out.flush()
    summary = rows[-1]
    return EXIT_CORRUPT if summary["gaps"] or summary["overlaps"] or errors or more else EXIT_OK


def _only_tail(one: Listing) -> bool:
    return one.problems == 1 and tail_problem(one.problem)


def _holds_partitions(paths: Sequence[str], files: list[Source]) -> bool:
    """A log dir (or a directory above log dirs) among ``paths``: a walk found segments below it."""
    named = {os.path.normpath(p) if not is_url(p) else p.rstrip("/") for p in paths}
    return any(not f.given and f.directory not in named for f in files)


def _name(one: Listing, by: str, common: str) -> str:
    if by == "topic":
        return one.topic
    where = os.path.join(one.dir, one.partition) if by == "partition" else one.dir
    if not common or by == "dir":
        return where
    rel = os.path.relpath(where, common)
    return one.partition if rel == "." else rel


def _render(out: Output, fmt: str, by: str, rows: list[Listing], all_of: Listing, heading: str) -> None:
    from kafka_dump.render.ls import COLUMNS, OPTIONAL, cells, listing_json, plain_line

    if fmt == "json":
        out.write("".join(listing_json(one, by) for one in rows) + listing_json(all_of, "total"))
        return
    common = heading if len(rows) > 1 or by != "segment" else ""
    labels = [os.path.relpath(one.name, common) if common and by == "segment" else one.name for one in rows]
    if fmt == "plain":
        out.write("".join(plain_line(one, label) for one, label in zip(rows, labels, strict=True)))
        return
    from kafka_dump.render.payload import printable
    from kafka_dump.render.plain import plain_table, plural

    header = [(by, "left"), *COLUMNS]
    table = [cells(one, label) for one, label in zip(rows, labels, strict=True)]
    table.append(cells(all_of, f"total ({plural(all_of.segments, 'segment')})"))
    keep = [
        i
        for i, (name, _) in enumerate(header)
        if not (name == "segments" and by == "segment")
        and (name not in OPTIONAL or any(r[i] != "-" for r in table))
    ]
    columns = [header[i] for i in keep]
    table = [[row[i] for i in keep] for row in table]
    what = (
        printable(heading) + (os.sep if os.path.isdir(heading) else "")
        if heading
        else plural(all_of.segments, "segment")
    )
    title = f"Listing {what}"
    hidden: list[str] = []
    if out.width is not None:
        columns, table, hidden = _fitted(columns, table, out.width, len(table[-1][0]))
    note = f"not shown at {out.width} columns: {', '.join(hidden)} (--format plain has every column)\n"
    if not out.color:  # the table's characters, without loading Rich if it can
        text = plain_table("", columns, table, UNWRAPPED, one_cell="…")
        if text is not None:
            out.write(f"{title}\n{text}{note if hidden else ''}")
            return
    from rich.table import Table
    from rich.text import Text

    t = Table(header_style="kdump.header")
    for name, justify in columns:
        t.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis")
    for i, row in enumerate(table):
        style = "bold" if i == len(table) - 1 else ""
        t.add_row(*(Text(text, style=style) for text in row))
    out.print(Text(title, style="kdump.file"), soft_wrap=True)
    out.print(t)
    if hidden:
        out.print(Text(note.rstrip("\n"), style="kdump.note"), soft_wrap=True)


# How a table too wide for the terminal narrows, step by step: times to the second, names and words
# cut with an ellipsis, times to the minute, the columns a glance can spare left out (named below
# the table), then names to their least and times to the day.
_STEPS: tuple[tuple[tuple[str, ...], int, Literal["end", "middle", "time"]] | str, ...] = (
    (("first time", "last time"), 20, "time"),
    (("",), 14, "middle"),
    (("formats",), 9, "end"),
    (("producer",), 8, "end"),
    (("problem",), 16, "end"),
    (("first time", "last time"), 17, "time"),
    "entries",
    "producer",
    "segments",
    "first time",
    "matches",  # under a search, the answer: the last column to go
    (("",), 0, "middle"),
    (("last time",), 10, "time"),
)


def _fitted(
    columns: list[tuple[str, Justify]], table: list[list[str]], width: int, total: int
) -> tuple[list[tuple[str, Justify]], list[list[str]], list[str]]:
    """``fit``'s table for ``width``; ``total``: the width of the total's name, never cut; a
    segment's path keeps its partition's name in sight until the last steps."""
    names = ["", *(name for name, _ in columns[1:])]  # the first column is named by --by
    segments = columns[0][0] == "segment"
    steps: list[Cut | int] = []
    for step in _STEPS:
        if isinstance(step, str):
            steps += [names.index(step)] if step in names else []
            continue
        group, least, how = step
        if group == ("",):  # the name: never shorter than the total's, nor a segment's file name
            least = max(total, least or (26 if segments else 10), 36 if segments and least else 14)
        steps.append((tuple(names.index(n) for n in group if n in names), least, how))
    return fit(columns, table, width, steps)
