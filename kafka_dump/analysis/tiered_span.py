"""One partition across disk and store (``kdump ls --remote URL``): which offsets are local, remote
or both, and the gaps and overlaps between the segments.

Local segments are listed by their headers (``analysis/ls.py``); remote ones by their manifests
alone (the plugin's ``.rsm-manifest``: its remoteLogSegmentMetadata's start and end offsets, and the
size), so a store's segments are placed without being fetched; or, with no store named, by what
``__remote_log_metadata`` says was copied (its segments in COPY_SEGMENT_FINISHED, the state in which
Kafka serves them). A remote segment the partition's local log also holds is ``both``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, NamedTuple

from kafka_dump.analysis.ls import LsOptions, list_segment
from kafka_dump.analysis.remote_state import COPY_FINISHED, TOPIC, object_key, replayed
from kafka_dump.analysis.replay import Cut, Seen
from kafka_dump.errors import NotASegmentError
from kafka_dump.log import aiven, remote
from kafka_dump.log.remote import Store
from kafka_dump.log.sources import READ_KINDS, Source, find
from kafka_dump.model import Problem, ProblemKind

Row = dict[str, Any]


class Span(NamedTuple):
    """A segment's offsets on one side: where it is (local, remote), its name, first and last offset."""

    where: str
    name: str
    first: int
    last: int
    bytes: int


def local_spans(sources: Sequence[Source]) -> tuple[list[Span], list[str]]:
    """The local segments' spans (by their headers), and the errors of those that could not be read."""
    spans, errors = [], []
    for s in sources:
        if not s.path.endswith(".log"):
            continue
        one = list_segment(s, LsOptions())
        if one.error is not None:
            errors.append(one.error)
            continue
        first = one.firstOffset if one.firstOffset is not None else one.baseOffset
        if one.entries and first is not None and one.lastOffset is not None:
            spans.append(Span("local", s.name, first, one.lastOffset, one.bytes))
    return spans, errors


def remote_spans(url: str, store: Store, partition: str) -> tuple[list[Span], list[str]]:
    """The spans of the plugin's segments of ``partition`` (``topic-N``) under ``url``, from their
    manifests; and what could not be read (one line each)."""
    topic, _, number = partition.rpartition("-")
    spans, errors = [], []
    for s in find([url], store=store).sources:
        key = object_key(s.path)
        if (
            key is None
            or key["suffix"] != "rsm-manifest"
            or (key["topic"], key["partition"]) != (topic, number)
        ):
            continue
        try:
            m = aiven.parse_manifest(_read_small(s.path, store), s.path, _log_size(s.path, store))
        except NotASegmentError as exc:
            errors.append(str(exc))
            continue
        start = m.metadata.get("startOffset", int(key["offset"]))
        end = m.metadata.get("endOffset")
        if not isinstance(start, int) or not isinstance(end, int):
            errors.append(f"{s.path}: the manifest gives no remoteLogSegmentMetadata offsets")
            continue
        spans.append(Span("remote", s.path[: -len(aiven.MANIFEST)] + ".log", start, end, m.file_size))
    return spans, errors


def metadata_spans(where: Sequence[str], partition: str) -> tuple[list[Span], list[str]]:
    """The spans of ``partition``'s (``topic-N``) remote segments as ``__remote_log_metadata`` under
    ``where`` (log dirs, directories above them, its partitions) has them in COPY_SEGMENT_FINISHED;
    and what could not be read (one line each). No partition of that topic under ``where`` is an error."""
    topic, _, number = partition.rpartition("-")
    found = find(where)
    by_dir: dict[str, list[Source]] = {}
    for s in found.sources:
        if s.kind in READ_KINDS and os.path.basename(s.directory).rpartition("-")[0] == TOPIC:
            by_dir.setdefault(s.directory, []).append(s)
    if not by_dir:
        shown = ", ".join(where)
        raise NotASegmentError(
            f"no {TOPIC} partition below it: name where they are with --metadata DIR, or the store with --remote URL",
            file=shown,
        )
    errors: list[str] = []

    def problem(p: Problem) -> None:
        if p.kind is ProblemKind.CORRUPT:
            errors.append(str(p))

    spans = []
    for files in by_dir.values():
        for row in replayed(files, Cut(), Seen(problem)):
            if (
                row["type"] == "remote-segment"
                and (row["topic"], str(row["partition"])) == (topic, number)
                and row["state"] == COPY_FINISHED
                and isinstance(row["startOffset"], int)
                and isinstance(row["endOffset"], int)
            ):
                size = row["sizeInBytes"] if isinstance(row["sizeInBytes"], int) else 0
                spans.append(
                    Span("remote", str(row["segmentId"]), row["startOffset"], row["endOffset"], size)
                )
    return spans, errors


def _read_small(path: str, store: Store) -> bytes:
    if remote.is_url(path):
        return remote.read(store, path, 0, min(remote.size(store, path), aiven.MAX_MANIFEST))
    with open(path, "rb") as f:
        return f.read(aiven.MAX_MANIFEST)


def _log_size(manifest: str, store: Store) -> int:
    log = manifest[: -len(aiven.MANIFEST)] + ".log"
    try:
        return remote.size(store, log) if remote.is_url(log) else os.path.getsize(log)
    except OSError:
        raise NotASegmentError("no .log object beside the manifest", file=manifest) from None


def across(local: list[Span], remote_: list[Span]) -> list[Row]:
    """Rows in offset order: each segment (``where``: local, remote, both), then the gaps and overlaps
    between consecutive ones, then one ``tiered`` row with each side's log start and end."""
    rows: list[Row] = []
    both = {(r.first, r.last) for r in remote_} & {(s.first, s.last) for s in local}
    spans = sorted([*local, *(r for r in remote_)], key=lambda s: (s.first, s.last, s.where))
    shown: list[Span] = []
    for s in spans:
        if s.where == "local" and (s.first, s.last) in both:
            continue  # shown once, as the remote segment it is a copy of
        shown.append(s)
    end: int | None = None
    for s in shown:
        where = "both" if (s.first, s.last) in both else s.where
        if end is not None and s.first > end + 1:
            rows.append(
                {
                    "type": "gap",
                    "firstOffset": end + 1,
                    "lastOffset": s.first - 1,
                    "offsets": s.first - end - 1,
                }
            )
        elif end is not None and s.first <= end:
            rows.append({"type": "overlap", "firstOffset": s.first, "lastOffset": min(end, s.last),
                         "segment": s.name})  # fmt: skip
        rows.append({"type": "span", "where": where, "segment": s.name, "firstOffset": s.first,
                     "lastOffset": s.last, "bytes": s.bytes})  # fmt: skip
        end = s.last if end is None else max(end, s.last)
    summary: Row = {"type": "tiered"}
    for side, group in (("local", local), ("remote", remote_)):
        summary[f"{side}Start"] = min((s.first for s in group), default=None)
        summary[f"{side}End"] = max((s.last for s in group), default=None)
        summary[f"{side}Segments"] = len(group)
    summary["gaps"] = sum(r["type"] == "gap" for r in rows)
    summary["overlaps"] = sum(r["type"] == "overlap" for r in rows)
    return [*rows, summary]


def table_lines(rows: list[Row]) -> list[str]:
    """The rows as a table: one line a segment, a gap or an overlap; then the two sides' ranges."""
    from kafka_dump.render.payload import printable
    from kafka_dump.render.plain import plural

    lines = []
    for r in rows:
        if r["type"] == "span":
            lines.append(f"{r['where']:<7} {r['firstOffset']}..{r['lastOffset']}  {printable(r['segment'])}")
        elif r["type"] == "gap":
            lines.append(
                f"GAP     {r['firstOffset']}..{r['lastOffset']}  ({r['offsets']:,} offsets on neither side)"
            )
        elif r["type"] == "overlap":
            lines.append(f"OVERLAP {r['firstOffset']}..{r['lastOffset']}  ({printable(r['segment'])})")
        else:
            for side in ("local", "remote"):
                start, end = r[f"{side}Start"], r[f"{side}End"]
                held = "-" if start is None else f"{start}..{end}"
                lines.append(f"{side}: {held} in {plural(r[f'{side}Segments'], 'segment')}")
            lines.append(f"{plural(r['gaps'], 'gap')}, {plural(r['overlaps'], 'overlap')}")
    return [line + "\n" for line in lines]


def json_lines(rows: list[Row]) -> list[str]:
    return [json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows]
