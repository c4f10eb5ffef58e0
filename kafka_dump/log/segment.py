"""Reading a segment file: frame its entries, dispatch on each entry's magic, report the tail.

The file is read in chunks, so memory holds one chunk (or one larger entry) whatever the file's
size. Corruption becomes a ``Problem`` in the stream and reading goes on: after the entry when its
size still frames it, else at the next position where a valid entry starts. An entry that fails its
CRC (or its magic) may owe that to a damaged size that would swallow the good entries after it, so
its claimed span is searched too: when a valid entry starts inside it and the chain of valid entries
from there reaches the claimed end, the bytes before it are one bad region. Every byte of a file
thus ends up in a batch, in a bad region (a CORRUPT Problem with no batch), or in the tail.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any, ParamSpec

from kafka_dump import wire as _twins
from kafka_dump.errors import CorruptRecordError, NotASegmentError
from kafka_dump.log.window import CHUNK_SIZE, FileShrankError, Window, open_segment, shrank_tail
from kafka_dump.model import Batch, Check, Problem, ProblemKind
from kafka_dump.wire import layout as L
from kafka_dump.wire import legacy, v2
from kafka_dump.wire.checksum import crc32, crc32c
from kafka_dump.wire.codecs import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_RECORDS_PER_BATCH, decompress
from kafka_dump.wire.match import Match, RecordMatch, matching
from kafka_dump.wire.v2 import RecordWalk, walk_batch

if TYPE_CHECKING:  # log/ahead.py is imported when a read first needs it
    from kafka_dump.log.ahead import Inflating, Unpack

# Read windows (or one whole entry, if larger) and runs of plain v0/v1 messages decoded at a time (at
# least one entry): small enough that their bytes and objects are still in the CPU's cache when used.
_READ_SIZE = 256 * 1024
_RUN_BYTES = 16 * 1024
_ENTRY_PREFIX = L.MAGIC_OFFSET + 1  # bytes needed to read offset, size and magic
_LEGACY_MIN_ENTRY = L.LOG_OVERHEAD + L.LEGACY_V0_MIN_SIZE

Item = Batch | Problem
P = ParamSpec("P")
# A filter that may skip a batch by its header alone: (lastOffset, maxTimestamp) -> keep?
HeaderFilter = Callable[[int, int], bool]
# Told what the validating walk found in each v2 batch's records: (batch, walk).
WalkListener = Callable[[Batch, RecordWalk], None]
# Takes a run of plain v0/v1 messages instead of the decoder, with decode_legacy_run's arguments
# (file, data, pos, end, file position, with_records): (items to pass on as they are, bytes used),
# or None to leave the run to the decoder. dump --format json writes such a run straight from its bytes.
PlainRunReader = Callable[[str, bytes, int, int, int, bool], "tuple[Sequence[Any], int] | None"]


def read_segment_runs(
    path: str | os.PathLike[str],
    *,
    with_records: bool = True,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    start: int = 0,
    keep: HeaderFilter | None = None,
    on_walk: WalkListener | None = None,
    max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH,
    plain_run: PlainRunReader | None = None,
    inflating: Inflating | None = None,
    size: int | None = None,
    match: Match | None = None,
) -> Iterator[Sequence[Item]]:
    """Every batch and problem of a segment file, in file order, from byte ``start``, a list at a
    time: an entry's batch and its problems, or a run of plain v0/v1 messages decoded in one call (a
    generator step saved per message); ``read_segment`` gives the items one by one.

    ``keep`` sees (lastOffset, maxTimestamp) of each entry before its records are decoded, and may
    skip it. ``on_walk`` (with ``with_records=False``) is told what the walk of each v2 data batch's
    records found (``v2.walk_batch``), their problems yielded as decoding would. A batch declaring
    more than ``max_records_per_batch`` records comes without them, then a problem. ``plain_run`` is
    offered each run of plain messages first; ``inflating`` decompresses each window's payloads
    (closed at the end): by default ``Ahead`` when every record is decoded, else ``Inline``.
    ``size``: the file's size when a caller first opened it (a reader taking over from a walk of its
    own), so that the two read the same bytes; by default its size now. ``match``: a search; an entry
    whose header rules it out is skipped undecoded, a batch comes with only the records it keeps (the
    compiled decoder checks them before building them), and one that keeps none comes not at all
    (its problems still do).
    """
    name = str(path)
    f, now = open_segment(path)
    size = now if size is None else size
    if inflating is None:
        from kafka_dump.log.ahead import inflating_for

        ahead = (
            with_records and keep is None and on_walk is None and (match is None or not match.batches.active)
        )
        inflating = inflating_for(size, max_batch_bytes, ahead=ahead)
    with f:
        try:
            yield from _walk(
                name,
                Window(f, size, _READ_SIZE),
                start,
                with_records,
                max_batch_bytes,
                keep,
                on_walk,
                max_records_per_batch,
                plain_run,
                inflating,
                match,
            )
        finally:
            inflating.close()


def _one_by_one(runs: Callable[P, Iterator[Sequence[Item]]]) -> Callable[P, Iterator[Item]]:
    def read_segment(*args: P.args, **kwargs: P.kwargs) -> Iterator[Item]:
        """Every batch and problem of a segment file, in file order, one by one: ``read_segment_runs``'
        items, with its arguments."""
        # chain (in C) passes the runs' items on without a generator step each. Still lazy: the file
        # is opened, and errors raised, at the first item, as a generator would.
        return chain.from_iterable(runs(*args, **kwargs))

    read_segment.__wrapped__ = runs  # type: ignore[attr-defined]  # inspect.signature shows its arguments
    return read_segment


read_segment = _one_by_one(read_segment_runs)


def _walk(
    name: str,
    win: Window[bytes],
    pos: int,
    with_records: bool,
    max_batch_bytes: int,
    keep: HeaderFilter | None,
    on_walk: WalkListener | None,
    max_records: int,
    plain_run: PlainRunReader | None,
    inflating: Inflating,
    match: Match | None = None,
) -> Iterator[Sequence[Item]]:
    size = win.size
    records_match = match.records if match is not None else None
    entry_limit = max(max_batch_bytes, CHUNK_SIZE)
    started: bytes | None = None  # the window ``inflating`` was last started on
    unpack: Unpack = decompress
    try:
        while pos < size:
            remaining = size - pos
            if remaining < _ENTRY_PREFIX:
                yield [_tail(name, win, pos)]
                return
            buf, i = win.span(pos, _ENTRY_PREFIX)
            offset, length = L.LOG_ENTRY.unpack_from(buf, i)
            magic = buf[i + L.MAGIC_OFFSET]
            entry = L.LOG_OVERHEAD + length
            if entry > remaining or length < _LEGACY_MIN_ENTRY - L.LOG_OVERHEAD:
                if offset == 0 and length == 0 and win.all_zero(pos):
                    yield [_tail(name, win, pos)]
                    return
                next_pos = _resync(win, pos + 1)
                if next_pos is None:
                    if pos == 0 and (magic > 2 or length < _LEGACY_MIN_ENTRY - L.LOG_OVERHEAD):
                        raise NotASegmentError(
                            "not a Kafka log segment: no valid entry in the file", file=name
                        )
                    # Nothing valid follows: the last entry was cut short (an unclean shutdown).
                    yield [_tail(name, win, pos)]
                    return
                reason = (
                    f"entry size {length} is invalid; skipped {next_pos - pos} bytes to the next valid entry"
                )
                problem = Problem(
                    name,
                    pos,
                    next_pos - pos,
                    ProblemKind.CORRUPT,
                    reason,
                    offset,
                    Check.BAD_LENGTH,
                    None,
                    length,
                )
                yield [problem]
                pos = next_pos
                continue
            if entry > entry_limit:
                reason = (
                    f"entry of {entry} bytes is larger than --max-batch-bytes ({max_batch_bytes}); skipped"
                )
                problem = Problem(
                    name,
                    pos,
                    entry,
                    ProblemKind.CORRUPT,
                    reason,
                    offset,
                    Check.TOO_LARGE,
                    max_batch_bytes,
                    entry,
                )
                yield [problem]
                pos += entry
                continue
            buf, i = win.span(pos, entry)
            # A batch the search does not want is passed over if sound; a damaged one is decoded below
            # for its problems alone (never passed over in silence), its records not shown.
            unwanted = match is not None and not match.batches.keep(buf, i, entry, magic)
            if unwanted and _entry_crc_ok(win, pos, entry, magic):
                pos += entry
                continue
            if magic < 2 and keep is None and not unwanted:
                # Old segments hold one message per entry: decode the whole run in one call.
                run_end = min(len(buf), i + max(entry, _RUN_BYTES))
                # Plain messages hold nothing to walk: their records are built only when asked for.
                taken = plain_run(name, buf, i, run_end, pos, with_records) if plain_run is not None else None
                batches, used = taken or _twins.decode_legacy_run(name, buf, i, run_end, pos, with_records)
                if used:
                    if records_match is not None and with_records:
                        batches = [
                            b._replace(records=k)
                            for b in batches
                            if (k := matching(records_match, b.records or ()))
                        ]
                    if batches:
                        yield batches
                    pos += used
                    continue
            if keep is not None and not _keep(keep, buf, i, entry, magic, offset):
                pos += entry
                continue
            if buf is not started:
                started = buf  # the first entry of this window to decode: inflate from here on
                unpack = inflating.start(buf, i)
            items, broken, found = _decode_entry(
                name,
                buf,
                i,
                pos,
                entry,
                magic,
                with_records,
                max_batch_bytes,
                on_walk,
                max_records,
                unpack,
                records_match,
            )
            if broken is not None:
                inner = _resync_inside(win, pos, entry)
                if inner is not None:
                    reason = (
                        f"{broken.reason}; a valid entry starts at byte {inner}, inside the {entry} bytes this "
                        f"entry claims: skipped {inner - pos} bytes to it"
                    )
                    yield [
                        Problem(
                            name, pos, inner - pos, ProblemKind.CORRUPT, reason, offset, broken.check,
                            broken.expected, broken.found,
                        )
                    ]  # fmt: skip
                    pos = inner
                    continue
            if found is not None and on_walk is not None and isinstance(items[0], Batch):
                on_walk(items[0], found)
            if unwanted:
                items = [x for x in items if isinstance(x, Problem)]
            elif records_match is not None and with_records:
                items = _searched(items, records_match)
            if items:
                yield items
            pos += entry

    except FileShrankError as exc:
        # The file is shorter than when opened: what was not read is its tail.
        yield [shrank_tail(name, pos, exc)]


def _keep(keep: HeaderFilter, buf: bytes, i: int, entry: int, magic: int, offset: int) -> bool:
    """Ask the filter about an entry from its header alone (v2 header; v0/v1 offset and timestamp)."""
    if magic == 2 and entry >= L.V2_HEADER_SIZE:
        last = offset + L.INT32.unpack_from(buf, i + L.V2_LAST_OFFSET_DELTA_OFFSET)[0]
        return keep(last, L.INT64.unpack_from(buf, i + L.V2_MAX_TIMESTAMP_OFFSET)[0])
    if magic > 1 or entry < L.LOG_OVERHEAD + L.LEGACY_MIN_SIZE[magic]:
        return True
    if offset == 0 and buf[i + L.LEGACY_ATTRIBUTES_OFFSET] & L.COMPRESSION_MASK:
        offset = _UNKNOWN_LAST_OFFSET  # a v1 wrapper at 0 holds offsets 0..n-1, n unknown here
    if magic == 1:
        return keep(offset, L.INT64.unpack_from(buf, i + L.LEGACY_V1_TIMESTAMP_OFFSET)[0])
    return keep(offset, -1)


_UNKNOWN_LAST_OFFSET = 2**63 - 1


def _decode_entry(
    name: str,
    buf: bytes,
    i: int,
    pos: int,
    entry: int,
    magic: int,
    with_records: bool,
    max_batch_bytes: int,
    on_walk: WalkListener | None,
    max_records: int,
    unpack: Unpack = decompress,
    match: RecordMatch | None = None,
) -> tuple[list[Item], Problem | None, RecordWalk | None]:
    """The batch and problems of one framed entry, the problem that breaks its frame (it cannot be
    read as an entry at all, or its CRC fails), and what the walk of its records found, if walked.
    Compressed payloads are decompressed by ``unpack`` (``codecs.decompress``'s signature)."""
    batch: Batch | None = None
    error: CorruptRecordError | None = None
    found: RecordWalk | None = None
    try:
        if magic == 2:
            if entry < L.V2_HEADER_SIZE:
                raise CorruptRecordError(
                    f"v2 batch of {entry} bytes is smaller than its header", position=pos, check=Check.BAD_LENGTH,
                    found=entry,
                )  # fmt: skip
            walk = on_walk is not None and not with_records
            if walk and buf[i + L.V2_ATTRIBUTES_OFFSET + 1] & L.CONTROL_BIT:
                with_records = True  # a control batch holds one record, decoded to check it
                walk = False
            count = L.INT32.unpack_from(buf, i + L.V2_RECORD_COUNT_OFFSET)[0]
            too_many = count > max_records
            batch, error = v2.decode_batch(
                name, buf, i, pos, with_records=with_records and not too_many, max_batch_bytes=max_batch_bytes,
                unpack=unpack, match=match,
            )  # fmt: skip
            if too_many:
                reason = f"batch declares {count} records, more than --max-records-per-batch ({max_records})"
                error = CorruptRecordError(
                    reason, position=pos, check=Check.TOO_LARGE, expected=max_records, found=count
                )
                if with_records:
                    batch = batch._replace(records=())
            elif walk:
                found, error = walk_batch(buf, i, pos, batch, max_batch_bytes)
        elif magic in (0, 1):
            batch, error = legacy.decode_message(
                name, buf, i, i + entry, pos, with_records=with_records or on_walk is not None,
                max_batch_bytes=max_batch_bytes, max_records=max_records, unpack=unpack, match=match,
            )  # fmt: skip
        else:
            raise CorruptRecordError(
                f"unknown magic {magic}", position=pos, check=Check.BAD_MAGIC, found=magic
            )
    except CorruptRecordError as exc:
        offset = L.LOG_ENTRY.unpack_from(buf, i)[0]
        broken = problem_from_error(name, pos, entry, exc, offset)
        return [broken], broken, None
    items: list[Item] = [batch]
    crc_problem = None
    if not batch.crcValid:
        kind = "CRC-32C" if magic == 2 else "CRC-32"
        computed = _computed_crc(buf, i, entry, magic)
        reason = f"{kind} mismatch: stored {batch.crc}, computed {computed}"
        crc_problem = Problem(
            name, pos, entry, ProblemKind.CORRUPT, reason, batch.baseOffset, Check.CRC_MISMATCH, batch.crc,
            computed,
        )  # fmt: skip
        items.append(crc_problem)
    if error is not None:
        where = error.position if error.position is not None else pos
        items.append(problem_from_error(name, where, entry - (where - pos), error, batch.baseOffset))
    return items, crc_problem, found


def _searched(items: list[Item], match: RecordMatch) -> list[Item]:
    """An entry's items under a search: its batch with only the records ``match`` keeps (a v2 batch's
    decoder kept them already), or its problems alone when it keeps none."""
    batch = items[0]
    if not isinstance(batch, Batch) or batch.records is None:
        return items
    records = batch.records if batch.magic >= 2 else matching(match, batch.records)
    if not records:
        return items[1:]
    return items if records is batch.records else [batch._replace(records=records), *items[1:]]


def problem_from_error(
    name: str, pos: int, length: int, error: CorruptRecordError, base_offset: int | None
) -> Problem:
    """A CORRUPT Problem for a decoder's error, naming the check it broke."""
    return Problem(
        name, pos, length, ProblemKind.CORRUPT, error.reason, base_offset, error.check or Check.OTHER,
        error.expected, error.found,
    )  # fmt: skip


def _computed_crc(buf: bytes, i: int, entry: int, magic: int) -> int:
    view = memoryview(buf)
    if magic == 2:
        return crc32c(view[i + L.V2_ATTRIBUTES_OFFSET : i + entry])
    return crc32(view[i + L.MAGIC_OFFSET : i + entry])


def _tail(name: str, win: Window[bytes], pos: int) -> Problem:
    n = win.size - pos
    if win.all_zero(pos):
        reason = f"{n} zero bytes at the end (preallocated space)"
        return Problem(name, pos, n, ProblemKind.ZERO_TAIL, reason, None, Check.ZERO_TAIL)
    reason = f"{n} bytes at the end are a partial entry"
    return Problem(name, pos, n, ProblemKind.PARTIAL_TAIL, reason, None, Check.PARTIAL_TAIL)


# Where an entry could start: a size below 16 MiB (high byte 0) and, at byte 16, magic 2 with the high
# byte of its int16 attributes 0, or magic 0/1 with codec bits only. A CRC check confirms each one.
# The size's low three bytes are not all zero (no entry is that small), so zero runs never match.
_CANDIDATE = re.compile(
    rb"(?=[\s\S]{%d}\x00(?!\x00\x00\x00)[\s\S]{%d}(?:\x02[\s\S]{%d}\x00|[\x00\x01][\x00-\x0f]))"
    % (
        L.LOG_ENTRY_SIZE_OFFSET,
        L.MAGIC_OFFSET - L.LOG_ENTRY_SIZE_OFFSET - 1,
        L.V2_ATTRIBUTES_OFFSET - L.MAGIC_OFFSET - 1,
    )
)
_CANDIDATE_SPAN = L.V2_LAST_OFFSET_DELTA_OFFSET  # through the v2 attributes
_SIZE_END = L.LOG_OVERHEAD  # an entry's size field ends where the log overhead does


def _resync(win: Window[bytes], pos: int, limit: int | None = None) -> int | None:
    """The next position from ``pos`` (and before ``limit``) where a whole entry with a valid CRC starts:
    a regular expression finds candidates (in C), the CRC makes a false match unlikely."""
    size = win.size
    stop = size if limit is None else min(size, limit - 1 + _CANDIDATE_SPAN)
    while (pos := win.next_data(pos)) + _ENTRY_PREFIX <= stop:
        n = min(CHUNK_SIZE, stop - pos)
        buf, i = win.span(pos, n)
        window = buf[i : i + n]
        zeros = n - len(window.lstrip(b"\x00"))
        if zeros > _CANDIDATE_SPAN:
            # No entry starts where its size field would be zero: skip a zero run, cheaply.
            pos += zeros - _SIZE_END
            continue
        for match in _CANDIDATE.finditer(window):
            p = pos + match.start()
            if p + _CANDIDATE_SPAN > size or (limit is not None and p >= limit):
                break
            if _valid_entry_end(win, p) is not None:
                return p
        if pos + n >= stop:
            return None
        pos += n - _CANDIDATE_SPAN
    return None


def _resync_inside(win: Window[bytes], pos: int, entry: int) -> int | None:
    """A position inside ``(pos, pos + entry)`` where a valid entry starts, if the entry's size lied.

    The candidate counts only when the chain of valid entries from it reaches the claimed end or
    passes it (or reaches the end of the file, or a zero tail): a run of entries that ends inside the
    span is more likely data inside a sound entry (an embedded message) than the next entries.
    """
    end = pos + entry
    q = _resync(win, pos + 1, limit=end)
    if q is None:
        return None
    p = q
    while p < end:
        nxt = _valid_entry_end(win, p)
        if nxt is None:
            return None
        p = nxt
    return q


def _valid_entry_end(win: Window[bytes], p: int) -> int | None:
    """The end of the whole, CRC-valid entry that starts at ``p``, or None."""
    if win.size - p < _CANDIDATE_SPAN:
        return None
    head, j = win.span(p, _CANDIDATE_SPAN)
    magic = head[j + L.MAGIC_OFFSET]
    entry = L.LOG_OVERHEAD + L.INT32.unpack_from(head, j + L.LOG_ENTRY_SIZE_OFFSET)[0]
    if magic > 2 or entry < _LEGACY_MIN_ENTRY or entry > win.size - p:
        return None
    if magic == 2 and entry < L.V2_HEADER_SIZE:
        return None
    return p + entry if _entry_crc_ok(win, p, entry, magic) else None


def _entry_crc_ok(win: Window[bytes], pos: int, entry: int, magic: int) -> bool:
    buf, i = win.span(pos, entry)
    stored_at = L.V2_CRC_OFFSET if magic == 2 else L.LEGACY_CRC_OFFSET
    stored: int = L.UINT32.unpack_from(buf, i + stored_at)[0]
    return _computed_crc(buf, i, entry, magic) == stored
