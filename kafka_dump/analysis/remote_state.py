"""``__remote_log_metadata`` replayed: each remote segment's last state, and that state against a
store's listing (objects laid out as Aiven's plugin lays them out).

The topic's records (``internal_topics/remote_log.py``) add a segment (apiKey 0, COPY_SEGMENT_STARTED),
move it on (1: COPY_SEGMENT_FINISHED, DELETE_SEGMENT_STARTED, DELETE_SEGMENT_FINISHED), or mark a
partition deleted (2); a snapshot record (3) states a segment whole. Against a listing: a segment
whose copy finished but whose objects are not all there is data loss (``missing``); objects that no
live segment names cost money (``orphan``); a segment still in COPY_SEGMENT_STARTED or
DELETE_SEGMENT_STARTED did not get to its end (``stuck``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from typing import Any

from kafka_dump.analysis.replay import Cut, Run, Seen, effective_runs
from kafka_dump.internal_topics.remote_log import PARTITION_STATES, SEGMENT_STATES
from kafka_dump.model import Record

Row = dict[str, Any]
TOPIC = "__remote_log_metadata"

COPY_STARTED, COPY_FINISHED, DELETE_STARTED, DELETE_FINISHED = SEGMENT_STATES
# {prefix}{topic}-{topicId}/{partition}/{offset:020}-{segmentId}.{suffix}: the ids are 22 characters
# of URL-safe base64, which holds "-": the key is taken apart by widths, not at dashes.
_OBJECT_KEY = re.compile(
    r"(?P<topic>[^/]+)-(?P<topic_id>[A-Za-z0-9_-]{22})/(?P<partition>\d+)/"
    r"(?P<offset>\d{20,})-(?P<segment_id>[A-Za-z0-9_-]{22})\.(?P<suffix>log|indexes|rsm-manifest)$"
)
OBJECT_SUFFIXES = ("log", "indexes", "rsm-manifest")


def _state(code: object, names: tuple[str, ...]) -> str:
    return names[code] if isinstance(code, int) and 0 <= code < len(names) else f"unknown ({code})"


def remote_segments(runs: Iterable[Run], decoded: Any) -> list[Row]:
    """One ``remote-segment`` row per segment the records name, in its last state, and one
    ``remote-partition`` row per partition marked deleted. ``decoded(record)``: the record's data
    (``remote_log.decode``), None for one that does not decode."""
    segments: dict[str, Row] = {}
    partitions: dict[tuple[str, int], Row] = {}
    for run in runs:
        for r in run.records:
            d = decoded(r)
            if d is None:
                continue
            name, data = d
            if name in ("RemoteLogSegmentMetadataRecord", "RemoteLogSegmentMetadataSnapshotRecord"):
                seg = _segment_id(data)
                tp = data.get("topicIdPartition") or data.get("remoteLogSegmentId", {}).get(
                    "topicIdPartition", {}
                )
                segments[seg] = {
                    "type": "remote-segment",
                    "topic": tp.get("name"),
                    "topicId": tp.get("id"),
                    "partition": tp.get("partition"),
                    "segmentId": seg,
                    "startOffset": data.get("startOffset"),
                    "endOffset": data.get("endOffset"),
                    "sizeInBytes": data.get("segmentSizeInBytes"),
                    "leaderEpochs": {
                        e["leaderEpoch"]: e["offset"] for e in data.get("segmentLeaderEpochs") or ()
                    },
                    "brokerId": data.get("brokerId"),
                    "eventTimestampMs": data.get("eventTimestampMs"),
                    "state": _state(data.get("remoteLogSegmentState"), SEGMENT_STATES),
                }
            elif name == "RemoteLogSegmentMetadataUpdateRecord":
                row = segments.get(_segment_id(data))
                if row is not None:  # an update of a segment whose add is not in these files: no row
                    row["state"] = _state(data.get("remoteLogSegmentState"), SEGMENT_STATES)
                    row["brokerId"] = data.get("brokerId")
                    row["eventTimestampMs"] = data.get("eventTimestampMs")
            elif name == "RemotePartitionDeleteMetadataRecord":
                tp = data.get("topicIdPartition") or {}
                partitions[(str(tp.get("id")), int(tp.get("partition") or 0))] = {
                    "type": "remote-partition",
                    "topic": tp.get("name"),
                    "topicId": tp.get("id"),
                    "partition": tp.get("partition"),
                    "state": _state(data.get("remotePartitionDeleteState"), PARTITION_STATES),
                    "eventTimestampMs": data.get("eventTimestampMs"),
                }
    for row in segments.values():
        row["stuck"] = row["state"] in (COPY_STARTED, DELETE_STARTED)
    return [*segments.values(), *partitions.values()]


def replayed(files: Sequence[os.PathLike[str] | str], cut: Cut, seen: Seen, **limits: int) -> list[Row]:
    """One partition of ``__remote_log_metadata`` (its segments in offset order) replayed: its
    ``remote-segment`` and ``remote-partition`` rows (``remote_segments``)."""
    from kafka_dump.internal_topics.remote_log import decode

    def decoded(r: Record) -> tuple[str, dict[str, Any]] | None:
        d = decode(r)
        v = d.value
        return (v.schema, v.data) if d.ok and v is not None and v.schema and v.data is not None else None

    return remote_segments(effective_runs(files, cut, seen, **limits), decoded)  # type: ignore[arg-type]


def _segment_id(data: Row) -> str:
    return str((data.get("remoteLogSegmentId") or {}).get("id"))


def object_key(url: str) -> dict[str, str] | None:
    """The parts of an object's key as the plugin writes it (topic, ids, partition, offset, suffix)."""
    m = _OBJECT_KEY.search(url)
    return m.groupdict() if m else None


def against_store(rows: list[Row], objects: Iterable[str], store_url: str) -> list[Row]:
    """Findings of the remote segments (``rows``) against the objects listed under ``store_url``: one
    ``remote-finding`` row each (missing, orphan, stuck), then a ``remote-verdict``."""
    held: dict[str, dict[str, str]] = {}  # segment id -> suffix -> object URL
    for url in objects:
        key = object_key(url)
        if key is not None:
            held.setdefault(key["segment_id"], {})[key["suffix"]] = url
    findings: list[Row] = []
    live: set[str] = set()
    for row in rows:
        if row["type"] != "remote-segment":
            continue
        seg, state = row["segmentId"], row["state"]
        where = f"{row['topic']}-{row['partition']} offsets {row['startOffset']}..{row['endOffset']}"
        if state != DELETE_FINISHED:
            live.add(seg)
        if state == COPY_FINISHED:
            gone = [s for s in OBJECT_SUFFIXES if s not in held.get(seg, {})]
            if gone:
                findings.append(_finding("missing", seg, where, state, f"no .{', .'.join(gone)} object"))
        elif state in (COPY_STARTED, DELETE_STARTED):
            findings.append(_finding("stuck", seg, where, state, f"still {state}"))
    for seg, found in held.items():
        if seg not in live:
            for suffix in OBJECT_SUFFIXES:
                if suffix in found:
                    findings.append(
                        _finding("orphan", seg, found[suffix], None, "no live remote segment names it")
                    )
    counts = {k: sum(f["finding"] == k for f in findings) for k in ("missing", "orphan", "stuck")}
    verdict = {"type": "remote-verdict", "store": store_url, "ok": not findings, **counts,
               "segments": sum(r["type"] == "remote-segment" for r in rows), "objects": sum(map(len, held.values()))}  # fmt: skip
    return [*findings, verdict]


def _finding(kind: str, seg: str, where: str, state: str | None, why: str) -> Row:
    return {
        "type": "remote-finding",
        "finding": kind,
        "segmentId": seg,
        "where": where,
        "state": state,
        "why": why,
    }
