"""``verify-crc --salvage``: a copy of a damaged segment that holds only its valid batches.

The copy is the input's bytes less the spans that hold no valid batch (bad regions, damaged batches,
the tail), so every kept batch is byte for byte what the broker wrote. It goes to a temporary file
in the target directory, is fsynced and then renamed over the target, so a crash leaves either the
old copy or the new one, never half of one; the input is only ever opened for reading.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import BinaryIO, NamedTuple

from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.writer import check_output, discard, temporary

_COPY_CHUNK = 4 * 1024 * 1024


class DroppedSpan(NamedTuple):
    start: int
    end: int
    reason: str


class SalvageResult(NamedTuple):
    """``lost``: for each dropped span, the offsets missing from the copy where it was cut out
    (first, last): from the batch kept before it to the one kept after; None where no batch is kept
    on that side (a damaged start: up to ``last``; a damaged end: from ``first`` on)."""

    source: str
    target: str
    report: str
    kept_bytes: int
    dropped: tuple[DroppedSpan, ...]
    lost: tuple[tuple[int | None, int | None] | None, ...] = ()


def span_object(span: DroppedSpan, lost: tuple[int | None, int | None] | None) -> dict[str, object]:
    """A dropped span in JSON: bytes and the offsets lost with them (``lostOffsets``: null when none)."""
    offsets = None if lost is None else {"first": lost[0], "last": lost[1]}
    return {
        "start": span.start,
        "end": span.end,
        "bytes": span.end - span.start,
        "reason": span.reason,
        "lostOffsets": offsets,
    }


def describe_lost(lost: Sequence[tuple[int | None, int | None] | None]) -> str:
    """``offsets 30..39, 52 on`` for a report line; ``no offsets`` when no cut lost any."""
    parts = []
    for span in lost:
        if span is None:
            continue
        first, last = span
        if first is None:
            parts.append("every offset" if last is None else f"up to {last}")
        elif last is None:
            parts.append(f"{first} on")
        else:
            parts.append(str(first) if first == last else f"{first}..{last}")
    if not parts:
        return "no offsets"
    return f"{'offset' if len(parts) == 1 and parts[0].isdigit() else 'offsets'} {', '.join(parts)}"


def salvage_target(out_dir: Path, source: Path) -> Path:
    """Where the copy of ``source`` goes: ``OUT_DIR/<its directory's name>/<its name>``, so that the
    segments of several partitions (all named by offset) do not collide."""
    return out_dir / (source.resolve().parent.name or "root") / source.name


def merge_spans(spans: Iterable[tuple[int, int, str]]) -> list[DroppedSpan]:
    """The spans sorted, with overlapping or touching ones joined (the first reason kept)."""
    out: list[DroppedSpan] = []
    for start, end, reason in sorted(spans, key=lambda s: (s[0], s[1])):
        if out and start <= out[-1].end:
            last = out[-1]
            out[-1] = DroppedSpan(last.start, max(last.end, end), last.reason)
        else:
            out.append(DroppedSpan(start, end, reason))
    return out


def salvage(
    source: Path, spans: Sequence[tuple[int, int, str]], out_dir: Path, *, overwrite: bool = False
) -> SalvageResult:
    """Write ``source`` less ``spans`` to its target under ``out_dir``, and a JSON report beside it;
    an existing copy or report is replaced only when ``overwrite``, never the input."""
    target = salvage_target(out_dir, source)
    report = target.with_name(target.name + ".salvage.json")
    dropped = merge_spans(spans)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        check_output(target)
        check_output(report)
        if target.exists() and os.path.samefile(target, source):
            raise KafkaDumpError("the salvage copy would overwrite its input", file=str(source))
        for existing in (target, report):
            if existing.exists() and not overwrite:
                raise KafkaDumpError("the salvage copy exists (--force replaces it)", file=str(existing))
        size = os.stat(source).st_size
        with open(source, "rb") as src:
            kept = _write_atomically(target, lambda out: _copy_kept(src, out, size, dropped))
        lost = lost_offsets(target, dropped)
        body = {
            "source": str(source),
            "target": str(target),
            "sourceBytes": size,
            "keptBytes": kept,
            "dropped": [span_object(s, o) for s, o in zip(dropped, lost, strict=True)],
        }
        _write_atomically(report, lambda out: out.write(json.dumps(body, indent=1).encode() + b"\n"))
    except OSError as exc:
        reason = f"cannot write the salvage copy: {exc.strerror or exc}"
        raise KafkaDumpError(reason, file=str(target)) from None
    return SalvageResult(str(source), str(target), str(report), kept, tuple(dropped), tuple(lost))


def lost_offsets(copy: Path, dropped: Sequence[DroppedSpan]) -> list[tuple[int | None, int | None] | None]:
    """For each dropped span, the offsets the copy lacks where it was cut out, read from the copy's
    batches on either side of the cut (one pass over the copy's batch headers)."""
    from kafka_dump.log.segment import read_segment
    from kafka_dump.model import Batch

    cuts: dict[int, list[int]] = {}  # position in the copy -> indexes of the spans cut out there
    removed = 0
    for i, span in enumerate(dropped):
        cuts.setdefault(span.start - removed, []).append(i)
        removed += span.end - span.start
    out: list[tuple[int | None, int | None] | None] = [None] * len(dropped)
    last: int | None = None
    for item in read_segment(copy, with_records=False):
        if not isinstance(item, Batch):
            continue
        for i in cuts.pop(item.position, ()):
            first = None if last is None else last + 1
            if first is None or first <= item.baseOffset - 1:
                out[i] = (first, item.baseOffset - 1)
        last = item.lastOffset
    for indexes in cuts.values():  # cut at the end: everything after the last batch kept
        for i in indexes:
            out[i] = (None if last is None else last + 1, None)
    return out


def _copy_kept(reader: BinaryIO, writer: BinaryIO, size: int, dropped: Sequence[DroppedSpan]) -> int:
    kept = 0
    pos = 0
    for span in [*dropped, DroppedSpan(size, size, "")]:
        end = min(span.start, size)
        reader.seek(pos)
        while pos < end:
            chunk = reader.read(min(_COPY_CHUNK, end - pos))
            if not chunk:
                reason = "file shrank while it was being copied"
                raise KafkaDumpError(reason, file=str(reader.name), position=pos)
            writer.write(chunk)
            pos += len(chunk)
            kept += len(chunk)
        pos = max(pos, span.end)
    return kept


def _write_atomically(target: Path, fill: Callable[[BinaryIO], int | None]) -> int:
    """Run ``fill(file)`` on a temporary file beside ``target``, fsync it, and rename it into place."""
    tmp, fd = temporary(target)
    f = os.fdopen(fd, "wb")
    try:
        result = fill(f) or 0
        f.flush()
        os.fsync(f.fileno())
        f.close()
        check_output(target)  # again, just before: it may have changed since the first check
        os.replace(tmp, target)
    except BaseException:
        discard([f], [tmp])
        raise
    discard([], [tmp])  # renamed: only forgotten
    dir_fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return result
