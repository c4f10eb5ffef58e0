"""``kdump state`` output: JSON Lines (one object per row) or plain tables, one section per row type.

Every cell is data from a file, escaped by ``printable`` so that no name can steer a terminal; JSON
writes bytes as base64, as the decoded records of ``dump --format json`` do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import groupby
from typing import Any

from kafka_dump.render.clock import iso
from kafka_dump.render.decoded import kafka_json
from kafka_dump.render.payload import printable

Row = dict[str, Any]
Column = tuple[str, Callable[[Row], Any]]


def json_lines(rows: Sequence[Row]) -> list[bytes]:
    """One compact JSON object a line."""
    return [kafka_json(r).encode() + b"\n" for r in rows]


def _ms(value: int | None) -> str:
    """A duration in ms as ``1h02m03s`` (or ``-`` when unknown)."""
    if value is None:
        return "-"
    s = value // 1000
    h, m = divmod(s // 60, 60)
    return f"{h}h{m:02d}m{s % 60:02d}s" if h else f"{m}m{s % 60:02d}s" if m else f"{value / 1000:g}s"


def _list(values: Any) -> str:
    return ",".join(str(v) for v in values or ())


def _partitions(parts: Any) -> str:
    return " ".join(f"{p['topic']}:{_list(p['partitions'])}" for p in parts or ())


def _batches(batches: Any) -> str:
    return " ".join(
        f"{b['firstOffset']}-{b['lastOffset']}:{b.get('deliveryState')}/{b.get('deliveryCount')}"
        for b in batches or ()
    )


def _group_version(g: Row) -> Any:
    return g.get("generation", g.get("epoch", "-"))


def _members(g: Row) -> str:
    return str(len(g["members"]))


def _flag(row: Row) -> str:
    return "STUCK" if row.get("stuck") or row.get("hanging") else ""


SECTIONS: dict[str, tuple[str, list[Column]]] = {
    "offset": ("Committed offsets", [
        ("GROUP", lambda r: r["group"]), ("TOPIC", lambda r: r["topic"]), ("PARTITION", lambda r: r["partition"]),
        ("OFFSET", lambda r: r["offset"]), ("LEADER EPOCH", lambda r: r["leaderEpoch"]),
        ("METADATA", lambda r: r["metadata"]), ("COMMITTED", lambda r: iso(r["commitTimestamp"])),
    ]),
    "group": ("Groups", [
        ("GROUP", lambda r: r["group"]), ("TYPE", lambda r: r["groupType"]),
        ("PROTOCOL", lambda r: "/".join(str(r[k]) for k in ("protocolType", "protocol") if r.get(k))),
        ("GENERATION/EPOCH", _group_version), ("LEADER", lambda r: r.get("leader") or ""),
        ("MEMBERS", _members),
    ]),
    "transaction": ("Transactions", [
        ("TRANSACTIONAL ID", lambda r: r["transactionalId"]), ("STATE", lambda r: r["state"]),
        ("PRODUCER ID", lambda r: r["producerId"]), ("EPOCH", lambda r: r["producerEpoch"]),
        ("TIMEOUT", lambda r: _ms(r["timeoutMs"])), ("PARTITIONS", lambda r: _partitions(r["partitions"])),
        ("LAST UPDATE", lambda r: iso(r["lastUpdateTimestamp"])), ("OPEN FOR", lambda r: _ms(r["ageMs"])),
        ("", _flag),
    ]),
    "share-partition": ("Share partitions", [
        ("GROUP", lambda r: r["groupId"]), ("TOPIC ID", lambda r: r["topicId"]),
        ("PARTITION", lambda r: r["partition"]), ("START OFFSET", lambda r: r["startOffset"]),
        ("STATE EPOCH", lambda r: r.get("stateEpoch", "-")), ("LEADER EPOCH", lambda r: r["leaderEpoch"]),
        ("STATE BATCHES (first-last:state/count)", lambda r: _batches(r["stateBatches"])),
    ]),
    "broker": ("Brokers", [
        ("BROKER", lambda r: r["brokerId"]), ("EPOCH", lambda r: r["brokerEpoch"]),
        ("ENDPOINTS", lambda r: " ".join(r["endPoints"])), ("RACK", lambda r: r["rack"] or ""),
        ("FENCED", lambda r: "yes" if r["fenced"] else "no"),
        ("SHUTTING DOWN", lambda r: "yes" if r["inControlledShutdown"] else "no"),
    ]),
    "feature": ("Feature levels", [("FEATURE", lambda r: r["name"]), ("LEVEL", lambda r: r["level"])]),
    "topic": ("Topics", [("TOPIC", lambda r: r["topic"]), ("TOPIC ID", lambda r: r["topicId"])]),
    "partition": ("Partitions", [
        ("TOPIC", lambda r: r["topic"]), ("PARTITION", lambda r: r["partition"]), ("LEADER", lambda r: r["leader"]),
        ("LEADER EPOCH", lambda r: r["leaderEpoch"]), ("PARTITION EPOCH", lambda r: r["partitionEpoch"]),
        ("REPLICAS", lambda r: _list(r["replicas"])), ("ISR", lambda r: _list(r["isr"])),
    ]),
    "config": ("Configs", [
        ("RESOURCE", lambda r: f"{r['resourceType']} {r['resourceName']}"), ("CONFIG", lambda r: r["name"]),
        ("VALUE", lambda r: r["value"]),
    ]),
    "partition-end": ("Partition", [
        ("TOPIC", lambda r: r["topic"]), ("PARTITION", lambda r: r["partition"]),
        ("END OFFSET", lambda r: r["endOffset"]), ("LAST STABLE OFFSET", lambda r: r["lastStableOffset"]),
        ("NEWEST", lambda r: iso(r["newestTimestamp"])), ("OPEN TRANSACTIONS", lambda r: r["openTransactions"]),
    ]),
    "open-transaction": ("Open transactions", [
        ("PRODUCER ID", lambda r: r["producerId"]), ("EPOCH", lambda r: r["producerEpoch"]),
        ("FIRST OFFSET", lambda r: r["firstOffset"]), ("LAST OFFSET", lambda r: r.get("lastOffset", "-")),
        ("STARTED", lambda r: iso(r["startTimestamp"])), ("OPEN FOR", lambda r: _ms(r["ageMs"])),
        ("HELD BACK", lambda r: r["heldBackRecords"]),
        ("FROM", lambda r: ".snapshot" if r["fromSnapshot"] else "log"), ("", lambda r: _flag(r) and "HANGING"),
    ]),
    "remote-segment": ("Remote segments (tiered storage)", [
        ("TOPIC", lambda r: r["topic"]), ("PARTITION", lambda r: r["partition"]),
        ("OFFSETS", lambda r: f"{r['startOffset']}..{r['endOffset']}"), ("BYTES", lambda r: r["sizeInBytes"]),
        ("SEGMENT ID", lambda r: r["segmentId"]), ("STATE", lambda r: r["state"]),
        ("SINCE", lambda r: iso(r["eventTimestampMs"])), ("BROKER", lambda r: r["brokerId"]), ("", _flag),
    ]),
    "remote-partition": ("Remote partitions deleted", [
        ("TOPIC", lambda r: r["topic"]), ("PARTITION", lambda r: r["partition"]), ("STATE", lambda r: r["state"]),
        ("SINCE", lambda r: iso(r["eventTimestampMs"])),
    ]),
    "remote-finding": ("The store against the metadata", [
        ("FINDING", lambda r: r["finding"].upper()), ("SEGMENT ID", lambda r: r["segmentId"]),
        ("WHERE", lambda r: r["where"]), ("WHY", lambda r: r["why"]),
    ]),
    "remote-verdict": ("Verdict", [
        ("STORE", lambda r: r["store"]), ("SEGMENTS", lambda r: r["segments"]), ("OBJECTS", lambda r: r["objects"]),
        ("MISSING", lambda r: r["missing"]), ("ORPHANS", lambda r: r["orphan"]), ("STUCK", lambda r: r["stuck"]),
        ("", lambda r: "ok" if r["ok"] else "NOT OK"),
    ]),
    "undecoded": ("Records that could not be decoded", [
        ("RECORD OFFSET", lambda r: r["recordOffset"]), ("ERROR", lambda r: r["error"]),
    ]),
}  # fmt: skip


def table_lines(rows: Sequence[Row]) -> Iterator[str]:
    """Each run of rows of one type as a titled, column-aligned section; the abort commands last."""
    first = True
    for kind, run in groupby(rows, key=lambda r: r["type"]):
        title, columns = SECTIONS[kind]
        cells = [
            [printable("-" if v is None else str(v)) for v in (get(r) for _h, get in columns)] for r in run
        ]
        widths = [max(len(h), *(len(c[i]) for c in cells)) for i, (h, _get) in enumerate(columns)]
        if not first:
            yield "\n"
        first = False
        yield f"{title} ({len(cells)})\n"
        yield _line([h for h, _get in columns], widths)
        for c in cells:
            yield _line(c, widths)
    aborts = [r["abortCommand"] for r in rows if r.get("abortCommand")]
    if aborts:
        yield "\nTo abort the hanging transactions (name a broker for BROKER:9092):\n"
        yield from (f"  {printable(a)}\n" for a in aborts)


def _line(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip() + "\n"
