"""Compression codecs as Kafka uses them (its ``common/compress/``), each library imported on first use.
A decompressor raises ``CompressionError`` once its output would pass ``limit``: no batch allocates GiBs.
"""

from __future__ import annotations

import functools
import struct
import zlib
from collections.abc import Callable
from typing import Any

from kafka_dump.errors import CompressionError, UnsupportedEncodingError
from kafka_dump.model import Check, Compression
from kafka_dump.native import native

DEFAULT_MAX_BATCH_BYTES = 256 * 1024 * 1024
# The decoder's other limit (not a codec's, but kept beside the first): records a batch may declare.
DEFAULT_MAX_RECORDS_PER_BATCH = 10_000_000

# xerial's SnappyOutputStream framing: magic, int32 version, int32 compatible version (not checked:
# Redpanda wrote them little-endian), then [int32 BE length][raw block]...
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER_SIZE = 16

# Kafka's LZ4 frame (Lz4BlockOutputStream): magic, FLG, BD, [content size], HC, blocks, end mark.
LZ4_MAGIC = 0x184D2204
_LZ4_BLOCK_SIZES = {4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024}
_U32LE = struct.Struct("<I")
_U32BE = struct.Struct(">I")


@functools.cache
def _codec_errors() -> tuple[type[BaseException], ...]:
    """What the codec libraries raise on bad input; evaluated only once an exception is raised."""
    import cramjam
    import lz4.block
    import snappy
    import zstandard

    return (
        zlib.error,
        EOFError,
        OSError,
        snappy.UncompressError,
        cramjam.DecompressionError,
        lz4.block.LZ4BlockError,
        zstandard.ZstdError,
        ValueError,
    )


def decompress(codec: Compression, data: bytes | memoryview, limit: int) -> bytes:
    """Decompress one batch payload, refusing to produce more than ``limit`` bytes."""
    try:
        if codec is Compression.GZIP:
            # The compiled inflater: a sound member's bytes, False past the limit, None for _gunzip to read.
            inflated = native.gunzip(data, limit) if native else None
            if type(inflated) is bytes:
                return inflated
            if inflated is False:
                raise _too_big(limit)
            return _gunzip(data, limit)
        unpack = _DECOMPRESSORS.get(codec)
        if unpack is not None:
            return unpack(data, limit)
    except CompressionError:
        raise
    except _codec_errors() as exc:
        raise _undecodable(f"{codec.label} payload does not decompress: {exc}") from exc
    raise CompressionError(f"unknown compression codec {int(codec)}", check=Check.CODEC, found=int(codec))


def _too_big(limit: int) -> CompressionError:
    return CompressionError(
        f"decompressed size passes the limit of {limit} bytes (--max-batch-bytes)", check=Check.TOO_LARGE,
        expected=limit,
    )  # fmt: skip


def _undecodable(reason: str) -> CompressionError:
    return CompressionError(reason, check=Check.DECOMPRESS)


def _take(parts: list[bytes], part: bytes, total: int, limit: int) -> int:
    """``total`` with ``part`` added to ``parts``, refused once past ``limit``."""
    total += len(part)
    if total > limit:
        raise _too_big(limit)
    parts.append(part)
    return total


_GUNZIP_STEP = 8 << 20  # output asked of zlib at a time: a bomb is refused before a join doubles it


def _gunzip(data: bytes | memoryview, limit: int) -> bytes:
    """gzip, including several concatenated members, as GZIPInputStream reads them; in steps, since
    zlib asked for ``limit`` bytes at once joins its blocks at twice the limit before a bomb is refused."""
    parts: list[bytes] = []
    total = 0
    rest: bytes | memoryview = data
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        pending = rest
        while True:
            want = min(_GUNZIP_STEP, limit + 1 - total)
            part = d.decompress(pending, want)
            total = _take(parts, part, total, limit)
            pending = d.unconsumed_tail
            if d.eof or (not pending and len(part) < want):
                break
        if not d.eof:
            raise _undecodable("gzip payload ends before its end of stream")
        rest = d.unused_data
        if not rest.startswith(b"\x1f\x8b"):
            # GZIPInputStream reads a further member only if one starts here, else it stops.
            return parts[0] if len(parts) == 1 else b"".join(parts)


def _raw_snappy_length(block: memoryview) -> int:
    """The uncompressed length that starts every raw snappy block (an unsigned varint)."""
    result = shift = 0
    for i in range(min(5, len(block))):
        b = block[i]
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result
        shift += 7
    raise _undecodable("snappy block has no valid length prefix")


def _unsnappy_block(block: memoryview, limit: int, done: int = 0) -> Any:
    """One raw block, refused before decompressing if it would take the output past ``limit``, as
    cramjam's buffer (python-snappy's decompressor without its copy): the caller's join is the one copy."""
    import cramjam

    if done + _raw_snappy_length(block) > limit:
        raise _too_big(limit)
    return cramjam.snappy.decompress_raw(block)


def _unsnappy(payload: bytes | memoryview, limit: int) -> bytes:
    """Raw snappy, or xerial's framing; the blocks are read in place (no copy of the payload)."""
    data = memoryview(payload)
    if data[: len(XERIAL_MAGIC)] != XERIAL_MAGIC:
        return bytes(_unsnappy_block(data, limit))
    if len(data) < XERIAL_HEADER_SIZE:
        raise _undecodable("xerial snappy header is cut short")
    parts: list[Any] = []
    total = 0
    pos = XERIAL_HEADER_SIZE
    while pos + 4 <= len(data):  # snappy-java ignores fewer than 4 bytes left at the end
        if data[pos : pos + len(XERIAL_MAGIC)] == XERIAL_MAGIC:
            # Concatenated streams: SnappyInputStream reads on through a further header.
            pos += XERIAL_HEADER_SIZE
            continue
        (size,) = _U32BE.unpack_from(data, pos)
        pos += 4
        if size > len(data) - pos:
            raise _undecodable(f"xerial snappy block of {size} bytes runs past the payload")
        parts.append(_unsnappy_block(data[pos : pos + size], limit, total))
        total += len(parts[-1])
        pos += size
    return b"".join(parts)


_LZ4_WINDOW = 64 * 1024  # how far back a linked LZ4 block may refer


def unlz4_frame(header: bytes, payload: bytes | memoryview, limit: int) -> bytes | None:
    """A frame of one compressed block behind ``header``, decompressed; None for any other frame, or
    a block that does not decompress (``_unlz4``'s loop then reads it, or says why not)."""
    import lz4.block

    view = memoryview(payload)
    n, h = len(view), len(header)
    if n <= h + 8 or limit < _LZ4_BLOCK or view[:h] != header or view[n - 4 :] != _LZ4_END:
        return None
    (word,) = _U32LE.unpack_from(view, h)
    if not 0 < word <= _LZ4_BLOCK or word != n - h - 8:
        return None
    try:
        return bytes(lz4.block.decompress(view[h + 4 : n - 4], uncompressed_size=_LZ4_BLOCK))
    except lz4.block.LZ4BlockError:
        return None


def _unlz4(data: bytes | memoryview, limit: int) -> bytes:
    """Kafka's LZ4 frame, block by block (independent or linked), with size checks per block."""
    import lz4.block

    data = memoryview(data)
    one = unlz4_frame(_LZ4_HEADERS[2], data, limit)  # the frame kdump writes for a batch of one block
    if one is not None:
        return one
    if len(data) < 7 or _U32LE.unpack_from(data, 0)[0] != LZ4_MAGIC:
        raise _undecodable("lz4 payload does not start with the LZ4 frame magic")
    flg, bd = data[4], data[5]
    if flg >> 6 != 1:
        raise _undecodable(f"lz4 frame version {flg >> 6} is not supported")
    max_block = _LZ4_BLOCK_SIZES.get((bd >> 4) & 7)
    if max_block is None:
        raise _undecodable(f"lz4 frame has an invalid block size code {(bd >> 4) & 7}")
    independent = bool(flg & 0x20)
    block_checksum = bool(flg & 0x10)
    pos = 6 + (8 if flg & 0x08 else 0)
    if pos + 1 > len(data):
        raise _undecodable("lz4 frame header is cut short")
    # The header checksum byte is not checked: magic 0 computed it over the wrong bytes.
    pos += 1
    blocks: list[bytes] = []
    total = 0
    history = b""
    while True:
        if pos + 4 > len(data):
            raise _undecodable("lz4 frame ends without an end mark")
        (word,) = _U32LE.unpack_from(data, pos)
        pos += 4
        if word == 0:
            return blocks[0] if len(blocks) == 1 else b"".join(blocks)
        size = word & 0x7FFFFFFF
        if size > max_block or size > len(data) - pos:
            raise _undecodable(f"lz4 block of {size} bytes is larger than the frame allows")
        block = data[pos : pos + size]
        pos += size + (4 if block_checksum else 0)
        room = min(max_block, limit - total)
        if word & 0x80000000:
            if size > room:
                raise _too_big(limit)
            blocks.append(bytes(block))
        else:
            if room <= 0:
                raise _too_big(limit)
            try:
                blocks.append(lz4.block.decompress(block, uncompressed_size=room, dict=history))
            except lz4.block.LZ4BlockError as exc:
                if room < max_block:
                    raise _too_big(limit) from exc
                raise
        total += len(blocks[-1])
        if not independent:
            # Linked blocks see the last 64 KiB before them; keep just that, not a join of every block.
            history = (history + blocks[-1])[-_LZ4_WINDOW:]


_ZSTD_MAGIC = 0xFD2FB528
_ZSTD_SKIPPABLE = 0x184D2A50  # ..0x184D2A5F
_ZSTD_FCS_SIZES = (0, 2, 4, 8)
_ZSTD_DICT_ID_SIZES = (0, 1, 2, 4)


def _zstd_frames_complete(data: memoryview) -> None:
    """Raise if the payload is cut short, walking its frame and block headers (RFC 8878): the stream
    decoder stops quietly at the end of its input, where zstd-jni (Kafka's reader) throws."""
    pos, n = 0, len(data)
    while pos < n:
        if n - pos < 4:
            raise _undecodable("zstd payload ends inside a frame header")
        (magic,) = _U32LE.unpack_from(data, pos)
        if magic & 0xFFFFFFF0 == _ZSTD_SKIPPABLE:
            if n - pos < 8:
                raise _undecodable("zstd payload ends inside a skippable frame")
            pos += 8 + _U32LE.unpack_from(data, pos + 4)[0]
            continue
        if magic != _ZSTD_MAGIC:
            raise _undecodable(f"zstd payload has no frame magic at byte {pos}")
        if n - pos < 5:
            raise _undecodable("zstd payload ends inside a frame header")
        fhd = data[pos + 4]
        single = (fhd >> 5) & 1
        fcs = _ZSTD_FCS_SIZES[fhd >> 6] or single
        pos += 5 + (0 if single else 1) + _ZSTD_DICT_ID_SIZES[fhd & 3] + fcs
        while True:
            if n - pos < 3:
                raise _undecodable("zstd payload ends inside a frame")
            header = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            block_type, size = (header >> 1) & 3, header >> 3
            pos += 3 + (1 if block_type == 1 else size)
            if header & 1:
                break
        pos += 4 if fhd & 4 else 0
        if pos > n:
            raise _undecodable("zstd payload ends inside a frame")
    if pos > n:
        raise _undecodable("zstd payload ends inside a skippable frame")


def _unzstd(data: bytes | memoryview, limit: int) -> bytes:
    """zstd, read as a stream across frames (Java writes several, without a content size)."""
    _zstd_frames_complete(memoryview(data))
    reader = _zstd_decompressor().stream_reader(data, read_across_frames=True)
    parts: list[bytes] = []
    total = 0
    while True:
        # Modest reads: one read(limit) would allocate the whole limit for every batch.
        part = reader.read(min(_ZSTD_READ, limit + 1 - total))
        if not part:
            return parts[0] if len(parts) == 1 else b"".join(parts)
        total = _take(parts, part, total, limit)


@functools.cache
def _zstd_decompressor() -> Any:  # a zstandard.ZstdDecompressor (the library has no type hints)
    import zstandard

    return zstandard.ZstdDecompressor()


_ZSTD_READ = 1 << 20


# Kafka 3.8's levels (KIP-390): None means the codec's default; snappy has no level.
_LEVELS = {Compression.GZIP: (1, 9), Compression.LZ4: (1, 17), Compression.ZSTD: (-131072, 22)}
_LZ4_DEFAULT_LEVEL = 9  # Kafka's default: Lz4BlockOutputStream then uses lz4's fast compressor
_ZSTD_DEFAULT_LEVEL = 3

# java.util.zip.GZIPOutputStream's fixed header: deflate, no flags, mtime 0, XFL 0, OS 255 (unknown).
_JAVA_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
_XERIAL_BLOCK = 32 * 1024  # snappy-java's SnappyOutputStream default block size
_LZ4_BLOCK = 64 * 1024  # Lz4BlockOutputStream.BLOCKSIZE_64KB
_LZ4_FLG = 0x60  # version 1, independent blocks, no checksums, no content size
_LZ4_BD = 0x40  # 64 KiB blocks
_LZ4_UNCOMPRESSED = 0x80000000


def _gzip(data: bytes, level: int | None) -> bytes:
    """gzip as Java's GZIPOutputStream writes it: its header, raw deflate, CRC-32 and size trailer."""
    z = zlib.compressobj(-1 if level is None else level, zlib.DEFLATED, -zlib.MAX_WBITS)
    trailer = struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
    return b"".join((_JAVA_GZIP_HEADER, z.compress(data), z.flush(), trailer))


def _snappy_xerial(data: bytes, level: int | None) -> bytes:
    """Xerial framing as snappy-java's SnappyOutputStream writes it: header, then 32 KiB blocks."""
    import snappy

    parts = [XERIAL_MAGIC, struct.pack(">ii", 1, 1)]
    for i in range(0, len(data), _XERIAL_BLOCK):
        block = snappy.compress(data[i : i + _XERIAL_BLOCK])
        parts += (_U32BE.pack(len(block)), block)
    return b"".join(parts)


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 of fewer than 16 bytes: enough for an LZ4 frame descriptor's header checksum."""
    if len(data) >= 16:
        raise ValueError("xxh32 here only hashes frame descriptors (under 16 bytes)")
    m = 0xFFFFFFFF
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    h = (seed + p5 + len(data)) & m
    i = 0
    while i + 4 <= len(data):
        h = (h + _U32LE.unpack_from(data, i)[0] * p3) & m
        h = (((h << 17) | (h >> 15)) & m) * p4 & m
        i += 4
    for b in data[i:]:
        h = (h + b * p5) & m
        h = (((h << 11) | (h >> 21)) & m) * p1 & m
    h ^= h >> 15
    h = h * p2 & m
    h ^= h >> 13
    h = h * p3 & m
    return h ^ (h >> 16)


def _lz4_header(magic: int) -> bytes:
    """Magic, FLG, BD and the header checksum; magic 0 hashes the frame magic too."""
    head = _U32LE.pack(LZ4_MAGIC) + bytes((_LZ4_FLG, _LZ4_BD))
    hashed = head if magic == 0 else head[4:]
    return head + bytes(((xxh32(hashed) >> 8) & 0xFF,))


_LZ4_HEADERS = {magic: _lz4_header(magic) for magic in (0, 1, 2)}
_LZ4_END = b"\x00\x00\x00\x00"


def lz4_frame_header(magic: int) -> bytes:
    """The 7 bytes every LZ4 frame written for ``magic`` starts with (for a writer of its own)."""
    return _LZ4_HEADERS[magic]


def lz4_frame(header: bytes, data: bytes | memoryview, level: int | None = None) -> bytes:
    """Kafka's LZ4 frame (Lz4BlockOutputStream) of ``data`` behind ``header``: independent 64 KiB blocks
    (raw when they do not shrink), an end mark; Kafka's default level fast, any other high-compression."""
    import lz4.block

    fast = level is None or level == _LZ4_DEFAULT_LEVEL
    if fast and 0 < len(data) <= _LZ4_BLOCK:  # one block (the common batch): no loop, no slicing
        block = lz4.block.compress(data, store_size=False)
        if len(block) < len(data):
            return b"".join((header, _U32LE.pack(len(block)), block, _LZ4_END))
    parts = [bytes(header)]
    view = memoryview(data)
    high: dict[str, Any] = {} if fast else {"mode": "high_compression", "compression": level}
    for i in range(0, len(view), _LZ4_BLOCK):
        chunk = view[i : i + _LZ4_BLOCK]
        block = lz4.block.compress(chunk, store_size=False, **high)
        if len(block) >= len(chunk):
            parts += (_U32LE.pack(len(chunk) | _LZ4_UNCOMPRESSED), bytes(chunk))
        else:
            parts += (_U32LE.pack(len(block)), block)
    parts.append(_LZ4_END)
    return b"".join(parts)


def _zstd(data: bytes, level: int | None) -> bytes:
    import zstandard

    cctx = zstandard.ZstdCompressor(level=_ZSTD_DEFAULT_LEVEL if level is None else level)
    return bytes(cctx.compress(data))


def level_problem(codec: Compression, level: int | None) -> str | None:
    """Why ``level`` is no level for ``codec`` in Kafka (None when it is, or when no level is asked)."""
    if level is None:
        return None
    bounds = _LEVELS.get(codec)
    if bounds is None:
        return f"{codec.label} has no compression level"
    if not bounds[0] <= level <= bounds[1]:
        return f"{codec.label} level {level} is outside Kafka's range {bounds[0]}..{bounds[1]}"
    return None


def compress(codec: Compression, data: bytes, *, level: int | None = None, magic: int = 2) -> bytes:
    """Compress a batch payload as Kafka's producers do, at ``level`` (None: Kafka's default); ``magic``
    for LZ4's header checksum (magic 0's readers expect a wrong one); raises for what Kafka refuses."""
    return compressor(codec, level=level, magic=magic)(data)


def compressor(codec: Compression, *, level: int | None = None, magic: int = 2) -> Callable[[bytes], bytes]:
    """``compress`` with its codec, level and magic bound and checked once: for a writer that calls
    it once per batch, with nothing to decide again. Raises as ``compress`` does."""
    problem = level_problem(codec, level)
    if problem is not None:
        raise UnsupportedEncodingError(problem)
    if codec is Compression.NONE:
        return bytes
    if codec is Compression.LZ4:
        return functools.partial(lz4_frame, _LZ4_HEADERS[magic], level=level)
    if codec in (Compression.GZIP, Compression.SNAPPY, Compression.ZSTD):
        return functools.partial(_COMPRESSORS[codec], level=level)
    raise UnsupportedEncodingError(f"cannot compress with codec {int(codec)}")


_COMPRESSORS = {Compression.GZIP: _gzip, Compression.SNAPPY: _snappy_xerial, Compression.ZSTD: _zstd}
_DECOMPRESSORS = {Compression.SNAPPY: _unsnappy, Compression.LZ4: _unlz4, Compression.ZSTD: _unzstd}
