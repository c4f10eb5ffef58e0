"""``kdump ls`` rows: a table's cells, a JSON Lines object and a plain tab-separated line per listing.

Names come from the file system, so every one is shown through ``printable``; JSON escapes by itself.
"""

from __future__ import annotations

import os
from typing import Any

from kafka_dump.analysis.ls import Listing, codec_name, format_mix
from kafka_dump.render.clock import iso
from kafka_dump.render.payload import printable
from kafka_dump.render.plain import Justify, number

# (header, justify, JSON field) of each column after the name; "segments" only in a rollup.
COLUMNS: tuple[tuple[str, Justify], ...] = (
    ("state", "left"),
    ("segments", "right"),
    ("offsets", "left"),
    ("first time", "left"),
    ("last time", "left"),
    ("bytes", "right"),
    ("entries", "right"),
    ("records", "right"),
    ("matches", "right"),
    ("formats", "left"),
    ("producer", "left"),
    ("CRC", "left"),
    ("problem", "left"),
)
OPTIONAL = ("state", "matches", "CRC", "problem")  # left out when no row has anything to say in them


def _offsets(one: Listing, sep: str = "..") -> str:
    if one.lastOffset is None:
        return "-"
    first = "?" if one.firstOffset is None else str(one.firstOffset)
    return f"{first}{sep}{one.lastOffset}"  # offsets raw, as the number style says


def _time(ts: int | None) -> str:
    return "-" if ts is None else iso(ts)


def writers(one: Listing) -> str:
    """``producer,txn,control``: what wrote the entries, beyond plain producers (``-`` for nothing)."""
    words = [
        w
        for w, on in (("producer", one.producers), ("txn", one.transactional), ("control", one.control))
        if on
    ]
    return ",".join(words) or "-"


def problem_text(one: Listing) -> str:
    """``partial-tail at byte 4,424``, ``(+2 more)`` where there are more; the error of an unreadable file."""
    if one.error is not None:
        return f"unreadable: {printable(one.error)}"
    p = one.problem
    if p is None:
        return "-"
    more = f" (+{number(one.problems - 1)} more)" if one.problems > 1 else ""
    where = "" if one.name == p.file else f" of {printable(os.path.basename(p.file))}"  # a rollup's
    return f"{p.check} at byte {p.position}{where}{more}"


def crc_text(one: Listing) -> str:
    if one.crcErrors is None:
        return "-"
    return "ok" if not one.crcErrors else f"{number(one.crcErrors)} bad"


def cells(one: Listing, name: str) -> list[str]:
    """A table row: the name, then each of ``COLUMNS``."""
    return [
        printable(name),
        one.state or "-",
        number(one.segments),
        _offsets(one),
        _time(one.firstTimestamp),
        _time(one.lastTimestamp),
        number(one.bytes),
        number(one.entries),
        "?" if one.records is None else number(one.records),
        "-" if one.matches is None else number(one.matches),
        format_mix(one.formats),
        writers(one),
        crc_text(one),
        problem_text(one),
    ]


def plain_line(one: Listing, name: str) -> str:
    """A whole row for ``awk -F'\\t'``: numbers without separators, times in epoch ms, ``?`` or ``-``
    where unknown or none; the columns of ``--format table``, every one of them, in the same order,
    but ``matches`` (under a search) last, so that the fields before it keep their numbers."""

    def n(v: int | None, unknown: str = "-") -> str:
        return unknown if v is None else str(v)

    fields = [
        printable(name),
        str(one.segments),
        n(one.firstOffset, "?" if one.entries else "-"),
        n(one.lastOffset),
        n(one.firstTimestamp),
        n(one.lastTimestamp),
        str(one.bytes),
        str(one.entries),
        n(one.records, "?"),
        format_mix(one.formats).replace(" + ", ","),
        writers(one),
        crc_text(one),
        problem_text(one).replace(",", ""),
        *([] if one.matches is None else [str(one.matches)]),
    ]
    return "\t".join(f.replace("\t", "\\t") for f in fields) + "\n"


PLAIN_FIELDS = (
    "name",
    "segments",
    "firstOffset",
    "lastOffset",
    "firstTimestamp",
    "lastTimestamp",
    "bytes",
    "entries",
    "records",
    "formats",
    "producer",
    "crc",
    "problem",
    "matches",  # under a search
)


def listing_json(one: Listing, kind: str) -> str:
    """One JSON Lines object: ``kind`` is segment, partition, topic, dir or total."""
    import json  # only for --format json: a share of a listing's start-up

    obj: dict[str, Any] = {"type": kind, "name": one.name}
    if kind == "segment":
        obj.update(
            file=one.name, partition=one.partition, topic=one.topic, dir=one.dir, baseOffset=one.baseOffset
        )
        del obj["name"]
    elif kind in ("partition", "topic"):
        obj.update(topic=one.topic, dir=one.dir) if kind == "partition" else obj.update(topic=one.topic)
    obj.update(
        segments=one.segments,
        firstOffset=one.firstOffset,
        lastOffset=one.lastOffset,
        firstTimestamp=one.firstTimestamp,
        lastTimestamp=one.lastTimestamp,
        bytes=one.bytes,
        entries=one.entries,
        records=one.records,
        formats=[
            {"magic": magic, "codec": codec_name(codec), "entries": e, "bytes": b}
            for (magic, codec), (e, b) in sorted(one.formats.items())
        ],
        producers=one.producers,
        transactional=one.transactional,
        control=one.control,
        problems=one.problems,
        problem=None
        if one.problem is None
        else {"check": one.problem.check, "position": one.problem.position, "reason": one.problem.reason},
        crcErrors=one.crcErrors,
        error=one.error,
    )
    if one.matches is not None:  # under a search
        obj["matches"] = one.matches
    if one.state is not None:  # Kafka's transient files and directories
        obj["state"] = one.state
    return json.dumps(obj, separators=(",", ":")) + "\n"
