"""``kdump state``: replay Kafka's own topics into the state they hold, or find open transactions."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from kafka_dump.analysis.replay import Cut, Items, Seen, effective_runs, last_per_key
from kafka_dump.commands import EXIT_CORRUPT, EXIT_OK
from kafka_dump.commands.options import (
    INT64,
    Limits,
    format_option,
    inputs,
    limit_options,
    output_options,
    time_option,
)
from kafka_dump.commands.walked import no_stdin, report_skipped, skipped_code, store_options
from kafka_dump.internal_topics import resolve
from kafka_dump.log.remote import Store
from kafka_dump.log.sources import READ_KINDS, Found, find
from kafka_dump.model import Problem, ProblemKind, item_end
from kafka_dump.render.output import Output

KINDS = ("auto", "offsets", "transactions", "metadata", "share-group-state", "remote-log-metadata")
REPLAYED = KINDS[1:]
_DURATION = re.compile(r"\s*([0-9]+)\s*(ms|s|m|h|)\s*")
_UNIT_MS = {"": 1, "ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}


class Duration(click.ParamType[int]):
    """A duration: ``900000`` (ms), ``30s``, ``15m``, ``1h``; passed as milliseconds."""

    name = "duration"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        m = _DURATION.fullmatch(str(value))
        if m is None:
            self.fail(f"{value!r} is not a duration (ms, or a number with ms, s, m or h)", param, ctx)
        return int(m.group(1)) * _UNIT_MS[m.group(2)]


@click.command()
@inputs
@format_option("table", "json", help="table: a section per kind of state; json: JSON Lines, one object each.")
@click.option("--at-offset", type=INT64, help="The state after this offset (later records are not replayed).")
@time_option(
    "--at-time", help="The state at this time: records stamped later are left out (ISO-8601 or epoch ms)."
)
@click.option(
    "--group", "groups", multiple=True, help="Only this group (repeatable): offsets, groups, share state."
)
@click.option("--topic", "topics", multiple=True, help="__cluster_metadata: only this topic (repeatable).")
@click.option("--transactional-id", "txn_ids", multiple=True, help="Only this transactional id (repeatable).")
@click.option(
    "--kind", type=click.Choice(KINDS), default="auto", show_default=True,
    help="Which of Kafka's topics the files hold: auto goes by the directory name (__consumer_offsets-N...).",
)  # fmt: skip
@click.option(
    "--transactions", "open_txns", is_flag=True,
    help="The paths are data partitions: show their open transactions (no COMMIT/ABORT marker yet).",
)  # fmt: skip
@click.option(
    "--timeout", type=Duration(), default="15m", show_default=True,
    help="--transactions: an open transaction older than this (ms, or 30s, 15m, 1h) is hanging.",
)  # fmt: skip
@click.option(
    "--store", "store_url", metavar="URL",
    help="remote-log-metadata: compare the segments' states with the objects under URL (missing, orphan, stuck).",
)  # fmt: skip
@limit_options
@store_options
@output_options
def state(
    paths: tuple[str, ...],
    out: Output,
    fmt: str,
    at_offset: int | None,
    at_time: int | None,
    groups: tuple[str, ...],
    topics: tuple[str, ...],
    txn_ids: tuple[str, ...],
    kind: str,
    open_txns: bool,
    timeout: int,
    store_url: str | None,
    limits: Limits,
    store: Store,
) -> int:
    """Replay Kafka's own topics into the state they hold: committed offsets and groups
    (__consumer_offsets), transactions (__transaction_state), the cluster (__cluster_metadata: a
    .checkpoint snapshot, then the log after it), share-partition state (__share_group_state), the
    remote segments of tiered storage (__remote_log_metadata; with --store URL, against the objects
    there). With --transactions, the open and hanging transactions of data partitions.

    \b
    Examples:
      kdump state __consumer_offsets-12/ --group billing
      kdump state __consumer_offsets-12/ --at-time 2024-05-01T02:00:00Z --format json
      kdump state __transaction_state-3/
      kdump state __cluster_metadata-0/ --topic orders
      kdump state --transactions orders-0/ --timeout 5m
      kdump state __remote_log_metadata-0/ --store s3://tiered-bucket/prod/
    """
    no_stdin(paths, "state replays partition directories and segments it can open again")
    problems: list[Problem] = []
    found = find(paths)
    partitions = _partitions(found)
    seen = Seen(problems.append, _progress(out, [f for _d, files, _s in partitions for f in files]))
    cut = Cut(at_offset, at_time)
    rows: list[dict[str, Any]] = []
    replayed = 0
    for directory, files, snapshots in partitions:
        if open_txns:
            from kafka_dump.analysis.open_txns import open_transactions

            rows += open_transactions(directory, files, snapshots, cut, seen, timeout, **limits)
            continue
        name = resolve(kind, files[0])
        if name in REPLAYED:
            rows += _replay(name, files, cut, seen, groups, topics, txn_ids, limits)
            replayed += 1
        elif len(partitions) > 1:
            out.diagnostic(f"{directory}: skipped, not a partition of one of Kafka's own topics")
    if not open_txns and not replayed:
        raise click.UsageError(
            f"{partitions[0][0]}: not a partition of __consumer_offsets, __transaction_state, __cluster_metadata, "
            "__share_group_state or __remote_log_metadata (name its kind with --kind, or give --transactions for a data partition)"
        )
    verdict_ok = True
    if store_url is not None:
        from kafka_dump.analysis.remote_state import against_store

        if not any(r["type"] == "remote-segment" for r in rows):
            raise click.UsageError("--store compares __remote_log_metadata's segments: give its partitions")
        objects = [s.path for s in find([store_url], store=store).sources]
        rows += against_store(rows, objects, store_url)
        verdict_ok = rows[-1]["ok"]
    for p in problems:
        if p.kind is ProblemKind.CORRUPT:
            out.diagnostic(str(p))
    _write(out, fmt, rows)
    report_skipped(out, found.skipped, as_json=fmt == "json")
    if not rows:
        out.diagnostic(f"nothing to show: {seen.records} records replayed")
    corrupt = any(p.kind is ProblemKind.CORRUPT for p in problems) or not verdict_ok
    return max(EXIT_CORRUPT if corrupt else EXIT_OK, skipped_code(found.skipped))


def _replay(
    name: str, files: list[Path], cut: Cut, seen: Seen, groups: tuple[str, ...], topics: tuple[str, ...],
    txn_ids: tuple[str, ...], limits: Limits,
) -> list[dict[str, Any]]:  # fmt: skip
    from kafka_dump.analysis import state as st

    if name == "metadata":
        from kafka_dump.analysis.metadata_state import cluster_state

        return cluster_state(files, cut, seen, topics, **limits)
    if name == "remote-log-metadata":
        from kafka_dump.analysis.remote_state import replayed

        rows = replayed(files, cut, seen, **limits)
        return [r for r in rows if not topics or r["topic"] in topics]
    runs = effective_runs(files, cut, seen, **limits)
    if name == "share-group-state":
        return st.share_state_rows(runs, groups)
    live = last_per_key(runs)
    if name == "transactions":
        return st.transaction_state(live, seen.newest, txn_ids)
    return st.group_state(live, groups)


def _partitions(found: Found) -> list[tuple[Path, list[Path], list[Path]]]:
    """The files to read, a partition at a time: its directory, its segments in offset order, and its
    producer snapshots (``.snapshot``); a log dir's ``bootstrap.checkpoint`` only when it is all there
    is (the cluster's first metadata)."""
    segments: dict[str, list[Path]] = {}
    snapshots: dict[str, list[Path]] = {}
    for s in found.sources:
        if s.kind in READ_KINDS or s.given:
            segments.setdefault(s.directory, []).append(Path(s.path))
        elif s.file_name.endswith(".snapshot"):
            snapshots.setdefault(s.directory, []).append(Path(s.path))
    parts = [(Path(d), fs, snapshots.get(d, [])) for d, fs in segments.items()]
    rest = [p for p in parts if [f.name for f in p[1]] != ["bootstrap.checkpoint"]]
    return rest or parts


def _progress(out: Output, files: list[Path]) -> Callable[[Items], Items] | None:
    """Items through ``out``'s progress bar, when it shows one: (file, bytes read) of each."""
    if not out.progress:
        return None
    from kafka_dump.render.progress import file_size

    total = sum(file_size(f) for f in files)

    def track(items: Items) -> Items:
        return out.track(items, lambda item: (item.file, item_end(item)), total)

    return track


def _write(out: Output, fmt: str, rows: list[dict[str, Any]]) -> None:
    from kafka_dump.render import state as render

    rank = {kind: i for i, kind in enumerate(render.SECTIONS)}
    rows.sort(key=lambda r: rank[r["type"]])
    if fmt == "json":
        from kafka_dump.render.jsonl import terminal_safe

        lines = render.json_lines(rows)
        safe: Callable[[bytes], bytes] = terminal_safe if out.is_terminal else bytes
        out.write_byte_lines([safe(line) for line in lines])
    else:
        out.write_lines(render.table_lines(rows))
    out.flush()
