"""``kdump redact``: a segment of the same shape with no producer-chosen bytes in it.

Each entry keeps its place, offsets, timestamps, magic, attributes, codec, producer fields and
record count; only keys, values and header values become pseudonyms of the same length
(``pseudonyms.Pseudonyms``). A valid v2 batch, its records checked by the reader's walk, has them
replaced where they lie (``redact_records``); a v0/v1 entry is encoded again; either is compressed
again with its codec and its CRC computed. An entry that fails its CRC is written the same way but
keeps its stored CRC, so it still fails it. Bytes no entry could be read from (a corrupt header, bytes between
entries, a partial tail) keep their framing fields (offset, length, magic, CRC) and every other
byte becomes a pseudonym byte; a zero-filled tail stays zeros. Control batches and Kafka's own
topics (``__consumer_offsets``...) are Kafka's bytes, kept. The output goes through a temporary
file, renamed into place; the ``.index`` follows the entries' new positions (uncompressed entries
keep theirs), the other side files are copied.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafka_dump.analysis.dump import BatchEvent, BatchRun, DumpEvent, FileStart
from kafka_dump.analysis.pseudonyms import Pseudonyms
from kafka_dump.analysis.redact_names import Renamer
from kafka_dump.analysis.redact_records import redact_v2_records
from kafka_dump.errors import CorruptRecordError, KafkaDumpError, NotASegmentError
from kafka_dump.internal_topics import decoder_for_path
from kafka_dump.log.index import OFFSET_ENTRY, index_entries
from kafka_dump.log.segment import Item, read_segment_runs
from kafka_dump.log.writer import discard, place, same_file, sync_close, temporary
from kafka_dump.model import Batch, Check, Compression, Problem, ProblemKind, Record, new_header, new_record
from kafka_dump.wire import encode_entry, legacy, v2
from kafka_dump.wire import layout as L
from kafka_dump.wire.checksum import crc32, crc32c
from kafka_dump.wire.codecs import compress, decompress
from kafka_dump.wire.encoder import finish_v2_entry

CHUNK = 1 << 20  # bytes of a region read at a time: memory does not follow a region's length
FRAMING = L.MAGIC_OFFSET + 1  # offset, length, then a v0/v1 CRC or a v2 leader epoch, and the magic byte
V2_HEADER = L.V2_HEADER_SIZE  # baseOffset .. recordCount: framing and Kafka's fields, not the producer's
LEGACY_HEADER = {0: L.LEGACY_HEADER_SIZE, 1: L.LEGACY_V1_LAYOUT.size}  # up to the key (v1: the timestamp)
Watch = Callable[[Iterator[Sequence[Item]]], Iterator[Sequence[Item]]]  # a progress bar over the runs


@dataclass
class FileReport:
    """What redacting one file did."""

    src: str
    dst: str
    entries: int = 0
    records: int = 0
    encoded: int = 0  # entries encoded again with pseudonyms (valid or failing their CRC)
    kept: int = 0  # entries kept as they are: control batches, Kafka's own topics
    scrubbed: int = 0  # regions no entry was read from, their bytes replaced
    scrubbed_bytes: int = 0
    problems: dict[str, int] = field(default_factory=dict)  # kind -> count, as read in the input
    bytes_in: int = 0
    bytes_out: int = 0
    copied: bool = False  # a side file copied as it is
    reason: str | None = None  # why no entry could be read at all (the whole file scrubbed)


class _Index:
    """The input's ``.index`` entries (``index.index_entries``), written in order as the log is, each
    moved by the shift of the entry it points at; what follows them (preallocated zeros, a torn entry)
    is copied as it is."""

    def __init__(self, path: Path, out: Path) -> None:
        self._path = path
        self._entries = index_entries(path.open("rb"), OFFSET_ENTRY)
        self._tmp, fd = temporary(out)
        self._out = os.fdopen(fd, "wb")
        self._done = 0  # bytes of the input's entries written
        self._next = next(self._entries, None)

    def up_to(self, position: int, shift: int) -> None:
        """Write the entries that point at or before ``position`` of the input, moved by ``shift``."""
        while self._next is not None and self._next[2] <= position:
            at, relative, pos = self._next
            self._out.write(OFFSET_ENTRY.pack(relative, max(0, pos + shift)))
            self._done = at + OFFSET_ENTRY.size
            self._next = next(self._entries, None)

    def finish(self, shift: int) -> Path:
        self.up_to(1 << 62, shift)
        with self._path.open("rb") as rest:
            rest.seek(self._done)
            shutil.copyfileobj(rest, self._out, CHUNK)
        sync_close(self._out)
        return self._tmp

    def abort(self) -> None:
        self._entries.close()
        discard([self._out], [self._tmp])


def check_paths(src: Path, dst: Path) -> None:
    """Refuse an output that is the input, or lies inside it."""
    if dst.exists() and same_file(src, dst):
        raise KafkaDumpError("refusing to write over the input", file=str(dst))
    a, b = src.resolve(), dst.resolve()
    if a.is_dir() and (b == a or a in b.parents):
        raise KafkaDumpError("refusing to write into the input", file=str(dst))


def redact_segment(
    src: Path,
    dst: Path,
    names: Pseudonyms,
    *,
    force: bool = False,
    max_batch_bytes: int,
    max_records_per_batch: int,
    watch: Watch | None = None,
    renamer: Renamer | None = None,
) -> FileReport:
    """Write the redacted copy of the segment ``src`` (and its ``.index``) to ``dst``; ``watch`` sees
    the input's runs go by (a progress bar); ``renamer`` (--names) replaces the names in Kafka's own
    topics' records."""
    report = FileReport(str(src), str(dst))
    limits = (max_batch_bytes, max_records_per_batch)
    own = decoder_for_path(src)  # Kafka's own topic: kept, but for its names under --names
    internal = (own, renamer) if own is not None else None
    targets = [dst]
    index_src = src.with_suffix(".index")
    has_index = src.suffix == ".log" and index_src.is_file()
    if has_index:
        targets.append(dst.with_suffix(".index"))
    for t in targets:
        if t.exists() and not force:
            raise KafkaDumpError("already exists (not overwritten unless asked)", file=str(t))
    tmp, fd = temporary(dst)
    out = os.fdopen(fd, "wb")
    index = _Index(index_src, targets[1]) if has_index else None
    try:
        with src.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            report.bytes_in = size
            cursor, shift = 0, 0
            # v2 batches walked (their records checked, not built: redact_records replaces them where
            # they lie), v0/v1 entries and control batches decoded
            runs = read_segment_runs(
                str(src), with_records=False, on_walk=_walked, max_batch_bytes=max_batch_bytes,
                max_records_per_batch=max_records_per_batch,
            )  # fmt: skip
            if watch is not None:
                runs = watch(runs)
            try:
                for run in runs:
                    for item, damage in _entries(run):
                        if item.position < cursor:
                            continue
                        if item.position > cursor:  # bytes no item covers: scrubbed, never passed over
                            shift += _scrub(f, out, cursor, item.position, names, report) - (
                                item.position - cursor
                            )
                            cursor = item.position
                        if index is not None:
                            index.up_to(item.position, shift)
                        for problem in damage:
                            _count(report, problem)
                        if isinstance(item, Batch):
                            data = _entry(f, item, damage, names, report, internal, limits)
                            out.write(data)
                            shift += len(data) - item.sizeInBytes
                            cursor = item.position + item.sizeInBytes
                            report.entries += 1
                            continue
                        end = min(size, item.position + max(item.length, 0))
                        if item.kind is ProblemKind.ZERO_TAIL:
                            _copy(f, out, item.position, end)
                        else:
                            shift += _scrub(f, out, item.position, end, names, report) - (end - item.position)
                        cursor = end
            except NotASegmentError as exc:
                if cursor:
                    raise
                report.problems["not-a-segment"] = 1  # no entry at all: the file's bytes, framing kept
                report.reason = exc.reason
            if cursor < size:
                shift += _scrub(f, out, cursor, size, names, report) - (size - cursor)
        sync_close(out)
        moves = [(tmp, dst)]
        if index is not None:
            moves.append((index.finish(shift), targets[1]))
            index = None
        for a, b in moves:
            place(a, b, force, KafkaDumpError("already exists", file=str(b)))
        report.bytes_out = dst.stat().st_size
    except BaseException:
        discard([out], [tmp])
        if index is not None:
            index.abort()
        raise
    return report


def copy_side_file(src: Path, dst: Path, *, force: bool) -> FileReport:
    """A side file (``.timeindex``, ``.txnindex``, ``.snapshot``, checkpoints) copied as it is:
    offsets, timestamps and producer ids, none of a producer's bytes."""
    if dst.exists() and not force:
        raise KafkaDumpError("already exists (not overwritten unless asked)", file=str(dst))
    tmp, fd = temporary(dst)
    try:
        with src.open("rb") as f, os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(f, out, CHUNK)
            out.flush()
            os.fsync(out.fileno())
        place(tmp, dst, force, KafkaDumpError("already exists", file=str(dst)))
    except BaseException:
        discard([], [tmp])
        raise
    size = dst.stat().st_size
    return FileReport(str(src), str(dst), bytes_in=size, bytes_out=size, copied=True)


def _walked(batch: Batch, found: object) -> None:
    """The walk's findings: not needed, its problems come as items."""


def _count(report: FileReport, problem: Problem) -> None:
    kind = problem.check or problem.kind.label
    report.problems[kind] = report.problems.get(kind, 0) + 1


def _entries(run: Sequence[Item]) -> Iterator[tuple[Item, list[Problem]]]:
    """Each entry of a run with the problems found inside it (at its position, after it), and each
    problem of its own (a region no entry was read from)."""
    i = 0
    while i < len(run):
        item = run[i]
        i += 1
        if isinstance(item, Problem):
            yield item, [item]
            continue
        end = item.position + item.sizeInBytes
        inside: list[Problem] = []
        # inside it, or at its very end with no length (what its records lacked: a count unmet)
        while (
            i < len(run)
            and isinstance(p := run[i], Problem)
            and (p.position < end or (p.position == end and p.length == 0))
        ):
            inside.append(p)
            i += 1
        yield item, inside


def _entry(f: object, batch: Batch, damage: list[Problem], names: Pseudonyms, report: FileReport,
           internal: tuple[str, Renamer | None] | None, limits: tuple[int, int]) -> bytes:  # fmt: skip
    """The entry's new bytes: encoded again with pseudonyms, or its own where nothing is the producer's;
    an entry with damage other than its CRC (its records, its wrapper) has its payload scrubbed.
    ``internal``: Kafka's own topic (its decoder, and the renamer of --names); ``limits``:
    --max-batch-bytes and --max-records-per-batch."""
    raw = _read(f, batch.position, batch.position + batch.sizeInBytes)
    crc_only = all(p.check == Check.CRC_MISMATCH for p in damage)
    renamer = internal[1] if internal is not None and not batch.isControl else None
    if renamer is not None and damage:
        renamer.keep("a damaged batch, kept as it is")
        renamer = None
    # The walk checked a sound v2 batch's records without building them; they are replaced where they
    # lie. Any other entry's records are read here: a plain v0/v1 message, a batch failing its CRC, a
    # batch whose records are encoded one by one (--map, --json, --names).
    walked = batch.magic == 2 and batch.records is None and not damage
    wanted = not walked or renamer is not None or (internal is None and not names.in_place)
    if batch.records is None and crc_only and wanted:
        try:
            batch, error = _decoded(raw, batch, limits)
            crc_only = error is None
        except KafkaDumpError:  # its records cannot be read: scrubbed
            crc_only = False
    report.records += (batch.recordCount or 0) if batch.records is None else len(batch.records)
    data: bytes | None = None
    records: tuple[Record, ...] | None = None
    if internal is not None and renamer is not None and batch.records is not None and crc_only:
        records = tuple(_renamed(r, internal[0], renamer) for r in batch.records)
    elif internal is not None or (batch.isControl and not damage):
        report.kept += 1
        return raw
    elif (
        (batch.records is None and not walked)
        or not crc_only
        or (batch.magic < 2 and any(r.crcValid is False for r in batch.records or ()))  # an inner message's
    ):
        return _scrubbed(raw, names, report, crc_valid=batch.crcValid)
    elif batch.magic == 2 and names.in_place:
        data = _in_place(raw, batch, names, limits[0])
        if data is None and batch.records is None:  # walked, but the records are not as the walk read them
            return _scrubbed(raw, names, report, crc_valid=batch.crcValid)
    # What cannot be written again is scrubbed; Kafka's own records are kept as they are.
    unwritten = raw if internal is not None else None
    if data is None:
        if records is None:
            records = tuple(_record(r, names) for r in batch.records or ())
        try:
            data = encode_entry(batch._replace(records=records))
        except KafkaDumpError:  # a codec no encoder has (an unknown one, zstd below v2)
            return unwritten or _scrubbed(raw, names, report, crc_valid=batch.crcValid)
    if batch.magic < 2:  # the wrapper's own offset field as it was (Kafka's rule for offset 0: absolute)
        data = raw[:8] + data[8:]
    if batch.magic < 2 and not _reads_back(data, raw, batch):  # a wrapper the encoder would normalise
        return unwritten or _scrubbed(raw, names, report, crc_valid=batch.crcValid)
    report.encoded += 1
    if not batch.crcValid:  # still fails its CRC: the stored one is kept
        at = L.V2_CRC_OFFSET if batch.magic == 2 else L.LEGACY_CRC_OFFSET
        data = data[:at] + L.UINT32.pack(batch.crc) + data[at + 4 :]
    return data


def _renamed(r: Record, decoder: str, renamer: Renamer) -> Record:
    """A record of Kafka's own topic with its names replaced (``redact_names``)."""
    key, value = renamer.record(decoder, r.key, r.value)
    return new_record(r.offset, r.timestamp, key, value, r.headers, r.sequence, r.sizeInBytes, r.crc, r.crcValid,
                      r.control, r.storedTimestamp)  # fmt: skip


def _decoded(raw: bytes, batch: Batch, limits: tuple[int, int]) -> tuple[Batch, CorruptRecordError | None]:
    """The entry ``raw`` read again with its records (and the error in them, or None)."""
    if batch.magic == 2:
        return v2.decode_batch(
            batch.file, raw, 0, batch.position, with_records=True, max_batch_bytes=limits[0]
        )
    return legacy.decode_message(batch.file, raw, 0, len(raw), batch.position, with_records=True,
                                 max_batch_bytes=limits[0], max_records=limits[1])  # fmt: skip


def _in_place(raw: bytes, batch: Batch, names: Pseudonyms, max_batch_bytes: int) -> bytes | None:
    """A v2 batch whose records were read whole, with its records' fields replaced where they lie
    (``redact_records``), compressed again with its codec, its length and CRC computed; its header
    otherwise its own. None where the records are not as read (then they are encoded again)."""
    body = memoryview(raw)[V2_HEADER:]
    count = L.INT32.unpack_from(raw, V2_HEADER - 4)[0]
    codec = batch.compression
    try:
        plain = bytes(body) if codec is Compression.NONE else decompress(codec, body, max_batch_bytes)
    except KafkaDumpError:
        return None
    got = redact_v2_records(
        names.secret, plain, count, -1 if names.keep_prefix is None else names.keep_prefix
    )
    if got is None:
        return None
    records, counts, kept = got
    names.add(counts, kept)
    payload = records if codec is Compression.NONE else compress(codec, records, magic=2)
    return finish_v2_entry(raw[:V2_HEADER], payload)


def redacted_events(events: Iterable[DumpEvent], names: Pseudonyms) -> Iterator[DumpEvent]:
    """``dump --redact``: the dump's events with the records of producers' batches under pseudonyms
    (the same as ``redact`` writes for the same secret); Kafka's own topics (told once a file, by its
    ``FileStart``) and control batches kept."""
    internal = False
    for event in events:
        if isinstance(event, FileStart):
            internal = decoder_for_path(event.path) is not None
        elif internal:
            pass
        elif isinstance(event, BatchEvent):
            if event.records and not event.batch.isControl:
                event = event._replace(records=tuple(_record(r, names) for r in event.records))
        elif isinstance(event, BatchRun):  # plain v0/v1 messages: never control batches
            event = BatchRun([
                b._replace(records=tuple(_record(r, names) for r in b.records)) if b.records else b
                for b in event.batches
            ])  # fmt: skip
        yield event


def _reads_back(data: bytes, raw: bytes, batch: Batch) -> bool:
    """Whether a v0/v1 entry encoded again keeps the input's offset field, attributes, and its records'
    offsets and timestamps (a wrapper whose inner offsets were damaged would come out repaired, its
    damage gone)."""
    from kafka_dump.wire.legacy import decode_message

    if data[:8] != raw[:8]:
        return False
    try:
        got, error = decode_message("", data, 0, len(data), 0, with_records=True,
                                    max_batch_bytes=max(len(data), 1) * 64 + (1 << 20))  # fmt: skip
    except KafkaDumpError:
        return False
    if (
        error is not None
        or got.records is None
        or batch.records is None
        or got.attributes != batch.attributes
    ):
        return False
    return [(r.offset, r.timestamp) for r in got.records] == [(r.offset, r.timestamp) for r in batch.records]


def _record(r: Record, names: Pseudonyms) -> Record:
    headers = tuple(new_header(h.key, names.replace(h.value, "header")) for h in r.headers)
    key, value = names.replace(r.key, "key"), names.replace(r.value, "value")
    return new_record(r.offset, r.timestamp, key, value, headers, r.sequence, r.sizeInBytes, r.crc, r.crcValid,
                      r.control, r.storedTimestamp)  # fmt: skip


def _read(f: object, start: int, end: int) -> bytes:
    fd = f.fileno()  # type: ignore[attr-defined]
    return os.pread(fd, end - start, start)


def _copy(f: object, out: object, start: int, end: int) -> None:
    for a in range(start, end, CHUNK):
        out.write(_read(f, a, min(end, a + CHUNK)))  # type: ignore[attr-defined]


def _scrub(f: object, out: object, start: int, end: int, names: Pseudonyms, report: FileReport) -> int:
    """Write the region ``start..end`` with its framing kept and its other bytes replaced; its length."""
    head = _read(f, start, min(end, start + V2_HEADER))
    out.write(_scrubbed(head, names, report, whole=end - start))  # type: ignore[attr-defined]
    for a in range(start + len(head), end, CHUNK):
        chunk = _read(f, a, min(end, a + CHUNK))
        out.write(names.stream(chunk, len(chunk), b"r"))  # type: ignore[attr-defined]
        report.scrubbed_bytes += len(chunk)
    return end - start


def _scrubbed(
    head: bytes, names: Pseudonyms, report: FileReport, whole: int | None = None, crc_valid: bool = False
) -> bytes:
    """The first bytes of a region no entry was read from (or a damaged entry whole): offset, length
    and, where a known magic is where it would be, the rest of the header kept (a v0/v1 message's key
    and value lengths too); every other byte replaced. ``crc_valid``: the entry's CRC held, and is
    computed again over the new bytes, so that only its own damage remains."""
    report.scrubbed += 1
    magic = head[L.MAGIC_OFFSET] if len(head) > L.MAGIC_OFFSET else None
    keep = {2: V2_HEADER, **LEGACY_HEADER}.get(magic, FRAMING) if magic is not None else FRAMING
    keep = min(keep, len(head))
    out = bytearray(head[:keep]) + names.stream(head[keep:], len(head) - keep, b"r")
    report.scrubbed_bytes += len(head) - keep
    if magic in LEGACY_HEADER and whole is None:  # a whole message: its two lengths are framing
        at = LEGACY_HEADER[magic]  # the key's length, then (after the key) the value's
        for _ in range(2):
            if at + 4 > len(head):
                break
            out[at : at + 4] = head[at : at + 4]
            n = int.from_bytes(head[at : at + 4], "big", signed=True)
            at += 4 + max(0, n)
    if crc_valid and magic in (0, 1, 2) and whole is None:
        out = _with_crc(out, magic)
    return bytes(out)


def _with_crc(data: bytearray, magic: int) -> bytearray:
    """The entry with its CRC computed (v2: CRC-32C from the attributes; v0/v1: CRC-32 from the magic)."""
    if magic == 2 and len(data) >= V2_HEADER:
        data[L.V2_CRC_OFFSET : L.V2_CRC_OFFSET + 4] = L.UINT32.pack(crc32c(data[L.V2_ATTRIBUTES_OFFSET :]))
    elif magic < 2 and len(data) >= LEGACY_HEADER[magic]:
        data[L.LEGACY_CRC_OFFSET : L.LEGACY_CRC_OFFSET + 4] = L.UINT32.pack(crc32(data[L.MAGIC_OFFSET :]))
    return data


def walk_outputs(src: Path, dst: Path, files: list[Path]) -> Iterator[tuple[Path, Path]]:
    """Each input file and where its copy goes: OUT itself for a file, OUT/relative for a directory."""
    for file in files:
        yield file, (dst if file == src else dst / file.relative_to(src))
