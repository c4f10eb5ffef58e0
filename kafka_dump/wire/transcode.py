"""The reference twin of ``transcode.c``: ``kdump convert``'s fast path, a run of v1 wrappers per call.

``read_wrappers`` takes the sound v1 CreateTime wrappers of one codec at a window's start, each with
its inflated inner messages and v2 records (``v1_inner_to_v2``); ``write_wrappers`` makes each a v2
entry and checks it in place: header, CRC-32C, records against the inner messages, growing offsets.
"""

from __future__ import annotations

from collections.abc import Callable

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Compression
from kafka_dump.native import bind, native
from kafka_dump.wire import codecs
from kafka_dump.wire import layout as L
from kafka_dump.wire.checksum import crc32
from kafka_dump.wire.codecs import decompress

# (position in the file, size, wrapper offset, inner messages, v2 records, record count, baseOffset,
#  lastOffset, baseTimestamp, maxTimestamp): one wrapper read.
Wrapper = tuple[int, int, int, bytes, bytes, int, int, int, int, int]
# (entry size, first offset, last offset, maxTimestamp, records): one entry written.
Row = tuple[int, int, int, int, int]
# (index of the failing wrapper, bytes of the good entries before it, why).
Failure = tuple[int, int, str]
Codec = Callable[[int, memoryview], bytes]
Transcode = Callable[[bytes, int, int], "tuple[bytes, int, int, int, int, int] | None"]
Same = Callable[[bytes, int, int, int, int, bytes, int], tuple[int, int, int, int]]

_SMALLEST = L.LOG_OVERHEAD + L.LEGACY_MIN_SIZE[1]
_KEY_AT = L.LEGACY_V1_TIMESTAMP_OFFSET + L.INT64.size  # the key's length, after the timestamp
_WRAPPER_CODECS = (1, 2, 3)  # gzip, snappy, lz4
_V2_CRC = 4  # the CRC's index among V2_HEADER's fields


def gunzip(payload: bytes | memoryview, limit: int, /) -> bytes | bool | None:
    """A gzip payload as ``codecs.decompress`` inflates it, or None where that raises (the compiled
    twin also where it cannot vouch for the answer: its caller then asks codecs)."""
    try:
        return decompress(Compression.GZIP, payload, limit)
    except CorruptRecordError:
        return None


def lz4_frame(header: bytes, data: bytes | memoryview, /) -> bytes:
    """Kafka's LZ4 frame of ``data`` behind ``header``, at lz4's default level."""
    return codecs.lz4_frame(header, data)


def unlz4_frame(header: bytes, payload: bytes | memoryview, limit: int, /) -> bytes | None:
    """A frame of one compressed block behind ``header``, decompressed, or None (``codecs.unlz4_frame``)."""
    return codecs.unlz4_frame(header, payload, limit)


def read_wrappers(
    buf: bytes | bytearray,
    pos: int,
    end: int,
    file_pos: int,
    entry_limit: int,
    max_records: int,
    run_limit: int,
    decompress: Codec,
    transcode: Transcode,
    /,
) -> tuple[int, int, int, list[Wrapper]]:
    """(bytes used from ``pos``, ``want``, the run's codec, the wrappers) at ``buf[pos:end]``, taken
    until ``run_limit`` bytes are used; ``want`` is where the window must end to hold the entry it
    stopped at (0: none)."""
    if not 0 <= pos <= end <= len(buf):
        raise ValueError("pos and end must satisfy 0 <= pos <= end <= len(data)")
    start, want, run_codec = pos, 0, 0
    items: list[Wrapper] = []
    view = memoryview(buf)
    while pos < end and pos - start < run_limit:
        if end - pos < _SMALLEST:
            want = pos + _SMALLEST
            break
        offset, length, crc, magic, attributes = L.LEGACY_HEADER.unpack_from(buf, pos)
        entry = L.LOG_OVERHEAD + length
        codec = attributes & L.COMPRESSION_MASK
        if magic != 1 or length < L.LEGACY_MIN_SIZE[1] or entry > entry_limit:
            break
        if attributes & ~L.COMPRESSION_MASK or codec not in _WRAPPER_CODECS or (items and codec != run_codec):
            break  # LogAppendTime, bits the fast path does not vouch for, zstd, or another codec's run
        key_len = L.INT32.unpack_from(buf, pos + _KEY_AT)[0]
        value_len = L.INT32.unpack_from(buf, pos + _KEY_AT + 4)[0]
        if key_len != -1 or value_len < 0 or _SMALLEST + value_len != entry:
            break
        if entry > end - pos:
            want = pos + entry
            break
        if crc32(view[pos + L.MAGIC_OFFSET : pos + entry]) != crc:
            break
        try:
            inner = decompress(codec, view[pos + _SMALLEST : pos + entry])
        except CorruptRecordError:
            break
        found = transcode(inner, offset, max_records)
        if found is None:
            break
        items.append((file_pos + pos, entry, offset, inner, *found))
        run_codec = codec
        pos += entry
    return pos - start, want, run_codec, items


def write_wrappers(
    items: list[Wrapper],
    codec: int,
    compress: Callable[[bytes], bytes],
    decompress: Codec,
    crc32c: Callable[[memoryview], int],
    same: Same,
    last_offset: int | None,
    /,
) -> tuple[bytes, list[Row], int | None, Failure | None]:
    """(the entries, their index rows, the last offset written, None), or (b"", [], None, the failure)."""
    out = bytearray()
    rows: list[Row] = []
    previous = last_offset
    for i, item in enumerate(items):
        _, _, wrapper_offset, inner, records, count, first, last, base_ts, max_ts = item
        where = f"the entry at offset {first}"
        body = compress(records) if codec else records
        size = L.V2_HEADER_SIZE + len(body)
        meant = [
            first, size - L.LOG_OVERHEAD, -1, 2, 0, codec, last - first, base_ts, max_ts, -1, -1, -1, count,
        ]  # fmt: skip
        if meant[1] > L.INT32_MAX:
            return b"", [], None, (i, len(out), f"{where} does not fit Kafka's 32-bit batch length")
        at = len(out)
        out += L.V2_HEADER.pack(*meant)
        out += body
        view = memoryview(out)
        meant[_V2_CRC] = crc32c(view[at + L.V2_ATTRIBUTES_OFFSET :]) & 0xFFFFFFFF
        L.UINT32.pack_into(out, at + L.V2_CRC_OFFSET, meant[_V2_CRC])
        why = _check(view, at, size, meant, inner, wrapper_offset, codec, decompress, crc32c, same)
        if why is None:
            why = _check_next(first, last, previous)
        view.release()
        if why is not None:
            return b"", [], None, (i, at, why)
        previous = last
        rows.append((size, first, last, max_ts, count))
    return bytes(out), rows, previous, None


def _check(
    view: memoryview,
    at: int,
    size: int,
    meant: list[int],
    inner: bytes,
    wrapper_offset: int,
    codec: int,
    decompress: Codec,
    crc32c: Callable[[memoryview], int],
    same: Same,
) -> str | None:
    """Why the entry at ``view[at:at+size]`` does not read back as meant: every header field, the
    CRC-32C, every record against the wrapper's inner messages."""
    first, base_ts, max_ts, count, last = meant[0], meant[7], meant[8], meant[12], meant[0] + meant[6]
    where = f"the entry at offset {first}"
    entry = view[at : at + size]
    got = L.V2_HEADER.unpack_from(entry)
    if crc32c(entry[L.V2_ATTRIBUTES_OFFSET :]) & 0xFFFFFFFF != got[_V2_CRC]:
        return f"{where} fails its CRC-32C"
    if list(got) != meant:
        return f"{where} has other batch fields than the input's"
    records: bytes | memoryview = entry
    start, end = L.V2_HEADER_SIZE, size
    if codec:
        try:
            records = decompress(codec, entry[L.V2_HEADER_SIZE :])
        except CorruptRecordError:
            return f"{where} does not decompress"
        start, end = 0, len(records)
    i, n, latest, last_read = same(records, start, end, first, base_ts, inner, wrapper_offset)  # type: ignore[arg-type]
    if i >= 0:
        return (
            f"the record at index {i} of {where} differs from the input's, or does not follow the one before"
        )
    if n != count:
        return f"{where} holds {n} records, not the {count} its header declares"
    if latest > max_ts:
        return f"{where} holds a record time past its maxTimestamp {max_ts}"
    if last_read > last:
        return f"{where} holds a record offset past its lastOffset {last}"
    return None


def _check_next(first: int, last: int, previous: int | None) -> str | None:
    """The entry's offsets grow from the previous entry's."""
    if last < first:
        return f"the entry at offset {first}: lastOffset {last} is below its baseOffset"
    if previous is not None and first <= previous:
        return f"the entry at offset {first} does not follow the previous entry's last offset {previous}"
    return None


gunzip = bind(gunzip)(native.gunzip if native else None)
lz4_frame = bind(lz4_frame)(native.lz4_frame if native else None)
unlz4_frame = bind(unlz4_frame)(native.unlz4_frame if native else None)
read_wrappers = bind(read_wrappers)(native.read_wrappers if native else None)
write_wrappers = bind(write_wrappers)(native.write_wrappers if native else None)
