"""``kdump diff``'s output: lines and side-by-side entries (table format), or one JSON object per event.

The table format is plain lines, each with the theme style it is shown in on a colour terminal
(``Line``): no Rich is loaded for it. Every string from a file or a path goes through ``printable``.
"""

from __future__ import annotations

from typing import Any

from kafka_dump.analysis.diff import (
    Damage,
    DiffReport,
    Divergence,
    Entry,
    EpochStart,
    OneSide,
    RecordDifference,
    epoch_at,
    first_epoch_difference,
)
from kafka_dump.render.payload import preview, printable

Line = tuple[str, str | None]  # text, theme style (None: plain)

_ROWS = (
    "file",
    "position",
    "baseOffset",
    "lastOffset",
    "leaderEpoch",
    "magic",
    "size",
    "crc",
    "attributes",
    "baseTimestamp",
    "maxTimestamp",
    "producerId",
    "producerEpoch",
    "baseSequence",
    "records",
)


def heading(a: str, b: str) -> str:
    return f"Comparing {printable(a)} with {printable(b)}"


def only_line(o: OneSide) -> str:
    other = "B" if o.side == "A" else "A"
    span = f"offsets {o.first}..{o.last}"
    if o.where == "start":
        return f"Only on {o.side}: {span}, before {other}'s first offset ({other}'s start was deleted: retention)"
    return (
        f"Only on {o.side}: {span}, after {other}'s last offset ({o.side}'s log is longer: {other} is behind)"
    )


def damage_line(d: Damage) -> str:
    after = "" if d.after is None else f" (after offset {d.after})"
    return f"Damage on {d.side}: {printable(d.file)} byte {d.position}{after}: {printable(d.reason)}"


def divergence_lines(d: Divergence, report: DiffReport, first: bool) -> list[Line]:
    """The divergence's line, its two entries side by side (the fields that differ styled), the epochs."""
    head = "First divergence" if first else "Divergence"
    span = f"offset {d.first}" if d.first == d.last else f"offsets {d.first}..{d.last}"
    out: list[Line] = [(f"{head} at {span}: {printable(d.reason)}", "kdump.problem")]
    differs = {name for name, _, _ in d.differs}
    rows = [(name, _cell(d.a, name), _cell(d.b, name)) for name in _ROWS]
    out += _columns([("", "A", "B"), *rows], {i + 1 for i, row in enumerate(rows) if row[0] in differs})
    line = epochs_line(report, d.first)
    if line:
        out.append((line, None))
    return out


def _columns(rows: list[tuple[str, str, str]], marked: set[int]) -> list[Line]:
    """Rows as left-aligned columns two spaces apart; the first row is the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    lines: list[Line] = []
    for n, (label, a, b) in enumerate(rows):
        text = f"  {label.ljust(widths[0])}  {a.ljust(widths[1])}  {b}".rstrip()
        lines.append((text, "kdump.header" if n == 0 else "kdump.problem" if n in marked else None))
    return lines


def _cell(e: Entry | None, name: str) -> str:
    if e is None:
        return "(none)"
    value = getattr(e, name)
    return printable(value) if isinstance(value, str) else str(value)


def epochs_line(report: DiffReport, offset: int) -> str | None:
    """What each side's leader-epoch-checkpoint says of ``offset``, and where the checkpoints part."""
    a, b = report.epochs["A"], report.epochs["B"]
    if a is None and b is None:
        return None
    parts = [f"{s}: {_epoch(report.epochs[s], offset)}" for s in ("A", "B")]
    line = f"leader-epoch-checkpoint at offset {offset}: " + "; ".join(parts)
    if a is not None and b is not None:
        x, y = first_epoch_difference(a, b)
        if x is not None or y is not None:
            line += f"; the checkpoints part at A {_start(x)}, B {_start(y)}"
    return line


def _epoch(epochs: list[EpochStart] | None, offset: int) -> str:
    if epochs is None:
        return "no checkpoint"
    e = epoch_at(epochs, offset)
    return "no epoch yet" if e is None else f"epoch {e.epoch} (from offset {e.startOffset})"


def _start(e: EpochStart | None) -> str:
    return "(none)" if e is None else f"epoch {e.epoch} from offset {e.startOffset}"


def records_lines(found: list[RecordDifference]) -> list[Line]:
    """The records that differ, offset by offset, A's then B's."""
    if not found:
        return [("  No record differs (the entries differ in their headers only).", None)]
    lines: list[Line] = []
    for r in found:
        lines.append((f"  offset {r.offset}", "kdump.header"))
        lines.append((f"    A: {_record(r.a)}", None))
        lines.append((f"    B: {_record(r.b)}", None))
    return lines


def _record(r: Any) -> str:
    if r is None:
        return "(none)"
    return printable(
        f"ts {r.timestamp} key {preview(r.key, 32)} value {preview(r.value, 48)} headers {len(r.headers)}"
    )


def summary_lines(report: DiffReport, paths: tuple[str, str]) -> list[str]:
    lines = []
    for side, path in zip(("A", "B"), paths, strict=True):
        first, last = report.first[side], report.last[side]
        held = "no entries" if first is None else f"offsets {first}..{last}"
        lines.append(f"{side}: {printable(path)}: {held} in {report.entries[side]:,} entries")
    common = report.common
    lines.append(
        "Common range: none" if common is None else f"Common range: offsets {common[0]}..{common[1]}"
    )
    verdict = (
        "divergent"
        if report.divergences
        else "damaged"
        if report.damage
        else "identical over the common range"
    )
    extra = ""
    if report.divergences > 1:
        extra = f" ({report.divergences:,} divergent stretches)"
    if report.damage:
        extra += f" ({report.damage:,} damaged stretch{'es' if report.damage > 1 else ''})"
    lines.append(f"Verdict: {verdict}{extra}, {report.compared:,} entry pairs compared")
    return lines


# --- JSON Lines ---


def _entry_json(e: Entry | None) -> dict[str, Any] | None:
    return None if e is None else e._asdict()


def event_json(event: OneSide | Damage | Divergence | DiffReport, paths: tuple[str, str]) -> str:
    if isinstance(event, OneSide):
        obj: dict[str, Any] = {"type": "only", **event._asdict()}
    elif isinstance(event, Damage):
        obj = {"type": "damage", **event._asdict()}
    elif isinstance(event, Divergence):
        obj = {
            "type": "divergence",
            "first": event.first,
            "last": event.last,
            "kind": event.kind,
            "reason": event.reason,
            "differs": [list(d) for d in event.differs],
            "a": _entry_json(event.a),
            "b": _entry_json(event.b),
        }
    else:
        common = event.common
        obj = {
            "type": "summary",
            "a": {
                "path": paths[0],
                "first": event.first["A"],
                "last": event.last["A"],
                "entries": event.entries["A"],
            },
            "b": {
                "path": paths[1],
                "first": event.first["B"],
                "last": event.last["B"],
                "entries": event.entries["B"],
            },
            "common": None if common is None else {"first": common[0], "last": common[1]},
            "compared": event.compared,
            "divergences": event.divergences,
            "damage": event.damage,
            "identical": event.identical,
            "epochs": {
                s.lower(): None if v is None else [list(e) for e in v] for s, v in event.epochs.items()
            },
        }
    return _dumps(obj)


def _dumps(obj: object) -> str:
    import json  # only for --format json

    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def records_json(d: Divergence, found: list[RecordDifference]) -> str:
    from kafka_dump.render.payload import ENCODERS, PayloadEncoding

    enc = ENCODERS[PayloadEncoding.TEXT]

    def rec(r: Any) -> dict[str, Any] | None:
        if r is None:
            return None
        return {
            "timestamp": r.timestamp,
            "key": None if r.key is None else enc(r.key),
            "value": None if r.value is None else enc(r.value),
            "headers": len(r.headers),
        }

    return _dumps(
        {
            "type": "records",
            "first": d.first,
            "records": [{"offset": r.offset, "a": rec(r.a), "b": rec(r.b)} for r in found],
        }
    )
