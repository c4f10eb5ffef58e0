"""``kdump upgrade-check``: is any v0/v1 data left before an upgrade to Kafka 4, where, and its fate."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import click

from kafka_dump.analysis.ls import Listing, LsOptions, by_partition, format_mix, iter_listings
from kafka_dump.analysis.upgrade import (
    COMPACTION,
    KEPT,
    METADATA_PARTITION,
    RETENTION,
    ClusterConfigs,
    Conversion,
    TopicVerdict,
    convert_size,
    metadata_dir,
    read_configs,
    topic_verdict,
)
from kafka_dump.commands import EXIT_BAD_INPUT, EXIT_CORRUPT, EXIT_OK
from kafka_dump.commands.options import (
    Limits,
    count_option,
    format_option,
    inputs,
    limit_options,
    output_options,
)
from kafka_dump.commands.walked import no_stdin, report_skipped, skipped_code
from kafka_dump.log.sources import find
from kafka_dump.render.output import UNWRAPPED, Output
from kafka_dump.render.progress import file_size


@click.command("upgrade-check")
@inputs
@format_option(
    "table", "json", help="table: the partitions, the topics and a verdict line; json: JSON Lines."
)
@click.option(
    "--metadata",
    "metadata",
    type=click.Path(file_okay=False),
    help="The KRaft metadata log to read topic configs from (a __cluster_metadata-0 directory or the "
    "log dir holding it). Default: __cluster_metadata-0 in a log dir given.",
)
@count_option("--sample", help="Encode only N v0/v1 entries spread over each segment for the size as v2.")
@click.option("--deep", is_flag=True, help="Read every entry in full (v0/v1 wrappers' first offsets).")
@count_option("-j", "--jobs", default=1, show_default=True, help="Partitions listed by N processes at once.")
@limit_options
@output_options
def upgrade_check(
    paths: tuple[str, ...],
    out: Output,
    fmt: str,
    metadata: str | None,
    sample: int | None,
    deep: bool,
    jobs: int,
    limits: Limits,
) -> int:
    """Find the v0/v1 data Kafka 4 no longer writes, and say what Kafka 4 will do with it.

    FILE|DIR is a log dir (or several), a partition directory or a segment. Each partition that
    holds v0/v1 entries is listed with their bytes, segments, offsets and newest time, and the size
    they take once the cleaner has rewritten them as v2. Per topic, from its cleanup.policy and
    retention.ms in the KRaft metadata log: rewritten at the next compaction, kept until retention
    deletes them, or kept indefinitely. Exit 0 when no v0/v1 data is left, 1 when some is.

    \b
    Examples:
      kdump upgrade-check /var/lib/kafka/data
      kdump upgrade-check --metadata /var/lib/kafka/meta /var/lib/kafka/data
      kdump upgrade-check --sample 100 --format json /data/kafka-1 /data/kafka-2
    """
    no_stdin(paths, "upgrade-check reads log dirs and partition directories")
    found = find(paths)
    sources = found.readable()
    files = [Path(s.path) for s in sources if os.path.basename(s.directory) != METADATA_PARTITION]
    if not files:
        out.diagnostic("no segment to check beside the metadata log")
        return EXIT_BAD_INPUT
    meta = metadata_dir(paths, metadata)
    if meta is None:  # a metadata log the walk found: the first log dir's, below a JBOD parent too
        meta = next(
            (Path(s.directory) for s in sources if os.path.basename(s.directory) == METADATA_PARTITION), None
        )
    configs: ClusterConfigs | None = None
    if meta is not None:
        metadata_files = (
            [Path(s.path) for s in sources if s.directory == str(meta)] if metadata is None else None
        )
        configs = read_configs(meta, metadata_files or None)
    elif fmt == "json" and any(Path(p).is_dir() for p in paths):  # the table says so in its header
        out.diagnostic(f"no {METADATA_PARTITION} here (give --metadata DIR): topic configs unknown")
    options = LsOptions(deep=deep, **limits)
    groups = by_partition(files)
    events = out.track(
        iter_listings(groups, options, jobs), lambda one: (one.name, one.bytes), sum(map(file_size, files))
    )
    segments: list[Listing] = []
    for one in events:
        if one.error is not None:
            out.diagnostic(one.error)
        segments.append(one)
    if all(one.error is not None for one in segments):
        return EXIT_BAD_INPUT
    partitions: dict[str, list[Listing]] = {}
    for one in segments:
        if one.legacy is not None:
            partitions.setdefault(os.path.join(one.dir, one.partition), []).append(one)
    conversions: dict[str, Conversion] = {}
    for key, held in partitions.items():
        c = conversions[key] = Conversion()
        for one in held:
            if one.legacy is not None:
                c.merge(convert_size(Path(one.name), one.legacy, sample, one.baseOffset, **limits))
    topics: dict[str, list[str]] = {}
    for key, held in partitions.items():
        topics.setdefault(held[0].topic, []).append(key)
    verdicts = [
        topic_verdict(topic, len(keys), [s for k in keys for s in partitions[k]], configs)
        for topic, keys in topics.items()
    ]
    rows = [_partition_row(key, held, conversions[key]) for key, held in partitions.items()]
    if fmt == "json":
        _json(out, rows, verdicts, configs)
    else:
        _table(out, paths, rows, verdicts, configs)
    report_skipped(out, found.skipped, as_json=fmt == "json")
    out.flush()
    return max(EXIT_CORRUPT if partitions else EXIT_OK, skipped_code(found.skipped))


def _shown_partition(partition: str, top: str) -> str:
    """A partition as a row names it: below the one directory given, or (that directory is the
    partition) by its own name."""
    if not top:
        return partition
    shown = os.path.relpath(partition, top)
    return os.path.basename(os.path.abspath(partition)) if shown == "." else shown


def _partition_row(key: str, held: list[Listing], c: Conversion) -> dict[str, object]:
    merged = Listing(key, held[0].partition, held[0].topic, held[0].dir, segments=0)
    for one in held:
        merged.merge(one)
    legacy = merged.legacy
    assert legacy is not None  # only partitions holding v0/v1 entries are rows
    return {
        "type": "partition",
        "partition": key,
        "topic": merged.topic,
        "segments": legacy.segments,
        "entries": legacy.entries,
        "bytes": legacy.bytes,
        "firstOffset": legacy.firstOffset,
        "lastOffset": legacy.lastOffset,
        "newestTimestamp": legacy.lastTimestamp,
        "formats": format_mix({k: v for k, v in merged.formats.items() if k[0] < 2}),
        "bytesAsV2": c.estimate,
        "sampled": c.sampled,
        "encodedEntries": c.encoded,
        "files": [one.name for one in held],  # the segments that hold v0/v1 entries, in reading order
    }


def _outcome(v: TopicVerdict) -> str:
    """What Kafka 4 does with the topic's v0/v1 data, in words."""
    from kafka_dump.render.clock import iso

    when = "" if v.deletedAfter is None else f", after {iso(v.deletedAfter)}"
    if v.outcome == COMPACTION:
        return "rewritten as v2 at the next compaction"
    if v.outcome == KEPT:
        return "kept indefinitely (retention.ms -1)"
    if v.outcome == RETENTION:
        if v.deletedAfter is not None and v.deletedAfter < time.time() * 1000:
            return f"past retention since {iso(v.deletedAfter)}: deleted at the next retention check"
        return f"kept until retention deletes them{when}"
    if v.retentionMs is not None and v.retentionMs < 0:
        return "config unknown: rewritten at the next compaction if compacted, else kept indefinitely (retention.ms -1)"
    default = " (Kafka's default retention.ms, 7 days)" if v.retentionMs is None else ""
    return f"config unknown: rewritten at the next compaction if compacted, else kept until retention deletes them{when}{default}"


def _outcome_cell(v: TopicVerdict) -> str:
    """``_outcome`` for a table cell: times to the minute, an unknown config in fewer words."""
    from kafka_dump.render.clock import iso

    when = "" if v.deletedAfter is None else iso(v.deletedAfter)[:16] + "Z"
    if v.outcome not in (COMPACTION, KEPT, RETENTION):
        if v.retentionMs is not None and v.retentionMs < 0:
            return "if compacted: rewritten as v2 at the next compaction; else kept indefinitely (retention.ms -1)"
        after = f" after {when}" if when else ""
        default = " (7 days by default)" if v.retentionMs is None else ""
        return (
            f"if compacted: rewritten as v2 at the next compaction; else deleted by retention{after}{default}"
        )
    if v.outcome == RETENTION and when:
        if v.deletedAfter is not None and v.deletedAfter < time.time() * 1000:
            return f"past retention since {when}: deleted at the next retention check"
        return f"kept until retention deletes them, after {when}"
    return _outcome(v)


def _json(
    out: Output, rows: list[dict[str, object]], verdicts: list[TopicVerdict], configs: ClusterConfigs | None
) -> None:
    lines = [json.dumps(r, separators=(",", ":")) for r in rows]
    for v in verdicts:
        obj = {"type": "topic", **vars(v), "kafka4": _outcome(v)}
        lines.append(json.dumps(obj, separators=(",", ":")))
    verdict = {
        "type": "verdict",
        "ready": not rows,
        "partitions": len(rows),
        "metadata": configs.source if configs else None,
    }
    lines.append(json.dumps(verdict, separators=(",", ":")))
    out.write("\n".join(lines) + "\n")


def _table(
    out: Output,
    paths: tuple[str, ...],
    rows: list[dict[str, object]],
    verdicts: list[TopicVerdict],
    configs: ClusterConfigs | None,
) -> None:
    from kafka_dump.render.clock import iso
    from kafka_dump.render.payload import printable
    from kafka_dump.render.plain import Cut, Justify, fit, number, plain_table, plural

    def n(v: object) -> str:
        return "?" if v is None else number(int(v))  # type: ignore[call-overload]

    def raw(v: object) -> str:  # offsets are written raw, as the number style says
        return "?" if v is None else str(v)

    first = paths[0].rstrip(os.sep) or os.sep  # "broker/" is shown "broker/", not "broker//"
    where = (
        printable(first) + (os.sep if os.path.isdir(first) and first != os.sep else "")
        if len(paths) == 1
        else plural(len(paths), "path")
    )
    parts = [f"Checking {where} for v0/v1 data (Kafka 4 writes v2 only)\n"]
    if configs is not None:
        parts.append(f"topic configs from {printable(configs.source)}\n")
    elif rows:
        parts.append("topic configs unknown: no metadata log (give --metadata DIR)\n")
    width = out.width or UNWRAPPED
    top = paths[0] if len(paths) == 1 and os.path.isdir(paths[0]) else ""  # partitions are named below it
    tables: list[tuple[list[tuple[str, Justify]], list[list[str]]]] = []
    if rows:
        columns: list[tuple[str, Justify]] = [
            ("partition", "left"),
            ("segments", "right"),
            ("entries", "right"),
            ("bytes", "right"),
            ("offsets", "left"),
            ("newest time", "left"),
            ("formats", "left"),
            ("as v2", "right"),
        ]
        cells = [
            [
                printable(_shown_partition(str(r["partition"]), top)),
                n(r["segments"]),
                n(r["entries"]),
                n(r["bytes"]),
                f"{raw(r['firstOffset'])}..{raw(r['lastOffset'])}",
                "-" if r["newestTimestamp"] is None else iso(int(r["newestTimestamp"])),  # type: ignore[call-overload]
                str(r["formats"]),
                ("≈" if r["sampled"] else "") + n(r["bytesAsV2"]),
            ]
            for r in rows
        ]
        if out.width is not None:  # cut and left out step by step, never folded (render/plain.py fit)
            steps: list[Cut | int] = [
                ((5,), 20, "time"),
                ((0,), 14, "middle"),
                ((6,), 9, "end"),
                ((5,), 17, "time"),
                2,  # entries
                1,  # segments
            ]
            columns, cells, _ = fit(columns, cells, out.width, steps)
        tables.append((columns, cells))
        topic_columns: list[tuple[str, Justify]] = [
            ("topic", "left"),
            ("partitions", "right"),
            ("bytes", "right"),
            ("cleanup.policy", "left"),
            ("retention.ms", "right"),
            ("Kafka 4", "left"),
        ]
        topic_cells = [
            [
                printable(v.topic),
                n(v.partitions),
                n(v.bytes),
                f"{printable(v.policy)} ({v.policySource})"
                if v.policy is not None
                else "?"
                if configs is None  # said once, above the tables
                else f"? ({v.policySource})",
                n(v.retentionMs) if v.retentionMs is not None else "?",
                _outcome_cell(v),
            ]
            for v in verdicts
        ]
        if out.width is not None:  # the names cut to leave the outcome (prose, wrapped) 32 cells
            _, short, _ = fit(
                topic_columns[:-1],
                [row[:-1] for row in topic_cells],
                out.width - 35,
                [((0,), 14, "middle"), ((3,), 14, "end")],
            )
            topic_cells = [[*row, whole[-1]] for row, whole in zip(short, topic_cells, strict=True)]
        tables.append((topic_columns, topic_cells))
    verdict = (
        f"{plural(len(rows), 'partition')} hold v0/v1 data · exit 1"
        if rows
        else "ready: no v0/v1 data · exit 0"
    )
    if len(rows) == 1:
        verdict = "1 partition holds v0/v1 data · exit 1"
    out.write("".join(parts))
    for columns, cells in tables:
        text = None if out.color else plain_table("", columns, cells, width, one_cell="…≈")
        if text is not None:
            out.write(text)
            continue
        from rich.table import Table
        from rich.text import Text

        t = Table(header_style="kdump.header")
        for name, justify in columns:  # the outcome is prose: it alone wraps, at words
            t.add_column(name, justify=justify, no_wrap=name != "Kafka 4", overflow="ellipsis")
        for row in cells:
            t.add_row(*(Text(c) for c in row))
        out.print(t)
    out.write(verdict + "\n")
