"""Compression codecs as Kafka uses them, decompressing with a bound on the output size.

Every decompressor here is given ``limit`` and raises ``CompressionError`` as soon as the output would
pass it, so a small corrupt or hostile batch can never make kdump allocate gigabytes.
Sources: Kafka's ``common/compress/`` (GzipCompression, SnappyCompression, Lz4BlockInputStream,
ZstdCompression); kafka-python's ``codec.py``.
"""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Callable

import lz4.block
import snappy
import zstandard

from kafka_dump.errors import CompressionError
from kafka_dump.model import Compression

DEFAULT_MAX_BATCH_BYTES = 256 * 1024 * 1024

# Snappy in Java producers is framed by xerial's SnappyOutputStream:
#   magic "\x82SNAPPY\0", int32 version, int32 compatible version, then [int32 BE length][raw block]...
# The version fields are not checked: Redpanda wrote them little-endian (KAFKA-NOTES pitfall 10).
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER_SIZE = 16

# Kafka's LZ4 frame (Lz4BlockOutputStream): magic, FLG, BD, [content size], HC, blocks, end mark.
LZ4_MAGIC = 0x184D2204
_LZ4_BLOCK_SIZES = {4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024}
_U32LE = struct.Struct("<I")
_U32BE = struct.Struct(">I")

_CODEC_ERRORS: tuple[type[BaseException], ...] = (
    zlib.error,
    EOFError,
    OSError,
    snappy.UncompressError,
    lz4.block.LZ4BlockError,
    zstandard.ZstdError,
    ValueError,
)


def decompress(codec: Compression, data: bytes | memoryview, limit: int) -> bytes:
    """Decompress one batch payload, refusing to produce more than ``limit`` bytes."""
    try:
        if codec is Compression.GZIP:
            return _gunzip(data, limit)
        if codec is Compression.SNAPPY:
            return _unsnappy(bytes(data), limit)
        if codec is Compression.LZ4:
            return _unlz4(data, limit)
        if codec is Compression.ZSTD:
            return _unzstd(data, limit)
    except CompressionError:
        raise
    except _CODEC_ERRORS as exc:
        raise CompressionError(f"{codec.label} payload does not decompress: {exc}") from exc
    raise CompressionError(f"unknown compression codec {int(codec)}")


def _too_big(limit: int) -> CompressionError:
    return CompressionError(f"decompressed size passes the limit of {limit} bytes (--max-batch-bytes)")


def _gunzip(data: bytes | memoryview, limit: int) -> bytes:
    """gzip, including several concatenated members, as GZIPInputStream reads them."""
    parts: list[bytes] = []
    total = 0
    rest: bytes | memoryview = data
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        part = d.decompress(rest, limit + 1 - total)
        total += len(part)
        parts.append(part)
        if total > limit or d.unconsumed_tail:
            raise _too_big(limit)
        if not d.eof:
            raise CompressionError("gzip payload ends before its end of stream")
        rest = d.unused_data
        if not rest.startswith(b"\x1f\x8b"):
            # GZIPInputStream reads a further member only if one starts here, else it stops.
            return parts[0] if len(parts) == 1 else b"".join(parts)


def _raw_snappy_length(block: bytes) -> int:
    """The uncompressed length that starts every raw snappy block (an unsigned varint)."""
    result = shift = 0
    for i in range(min(5, len(block))):
        b = block[i]
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result
        shift += 7
    raise CompressionError("snappy block has no valid length prefix")


def _unsnappy_block(block: bytes, limit: int, done: int = 0) -> bytes:
    """One raw block, refused before decompressing if it would take the output past ``limit``."""
    if done + _raw_snappy_length(block) > limit:
        raise _too_big(limit)
    return bytes(snappy.uncompress(block))


def _unsnappy(data: bytes, limit: int) -> bytes:
    if not data.startswith(XERIAL_MAGIC):
        return _unsnappy_block(data, limit)
    if len(data) < XERIAL_HEADER_SIZE:
        raise CompressionError("xerial snappy header is cut short")
    parts: list[bytes] = []
    total = 0
    pos = XERIAL_HEADER_SIZE
    while pos + 4 <= len(data):  # snappy-java ignores fewer than 4 bytes left at the end
        if data.startswith(XERIAL_MAGIC, pos):
            # Concatenated streams: SnappyInputStream reads on through a further header.
            pos += XERIAL_HEADER_SIZE
            continue
        (size,) = _U32BE.unpack_from(data, pos)
        pos += 4
        if size > len(data) - pos:
            raise CompressionError(f"xerial snappy block of {size} bytes runs past the payload")
        parts.append(_unsnappy_block(data[pos : pos + size], limit, total))
        total += len(parts[-1])
        pos += size
    return b"".join(parts)


_LZ4_WINDOW = 64 * 1024  # how far back a linked LZ4 block may refer


def _unlz4(data: bytes | memoryview, limit: int) -> bytes:
    """Kafka's LZ4 frame, block by block (independent or linked), with size checks per block."""
    data = memoryview(data)
    if len(data) < 7 or _U32LE.unpack_from(data, 0)[0] != LZ4_MAGIC:
        raise CompressionError("lz4 payload does not start with the LZ4 frame magic")
    flg, bd = data[4], data[5]
    if flg >> 6 != 1:
        raise CompressionError(f"lz4 frame version {flg >> 6} is not supported")
    max_block = _LZ4_BLOCK_SIZES.get((bd >> 4) & 7)
    if max_block is None:
        raise CompressionError(f"lz4 frame has an invalid block size code {(bd >> 4) & 7}")
    independent = bool(flg & 0x20)
    block_checksum = bool(flg & 0x10)
    pos = 6 + (8 if flg & 0x08 else 0)
    if pos + 1 > len(data):
        raise CompressionError("lz4 frame header is cut short")
    # The header checksum byte is not checked: magic 0 computed it over the wrong bytes (KAFKA-3160),
    # and the block sizes and the decompressor's own bounds catch a damaged frame anyway.
    pos += 1
    blocks: list[bytes] = []
    total = 0
    history = b""
    while True:
        if pos + 4 > len(data):
            raise CompressionError("lz4 frame ends without an end mark")
        (word,) = _U32LE.unpack_from(data, pos)
        pos += 4
        if word == 0:
            return blocks[0] if len(blocks) == 1 else b"".join(blocks)
        size = word & 0x7FFFFFFF
        if size > max_block or size > len(data) - pos:
            raise CompressionError(f"lz4 block of {size} bytes is larger than the frame allows")
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
    """Walk the frames' headers and block headers (RFC 8878) and raise if the payload is cut short.

    The stream decoder below stops quietly at the end of its input, so a truncated frame would
    otherwise pass for a shorter payload; zstd-jni (Kafka's reader) throws there.
    """
    pos, n = 0, len(data)
    while pos < n:
        if n - pos < 4:
            raise CompressionError("zstd payload ends inside a frame header")
        (magic,) = _U32LE.unpack_from(data, pos)
        if magic & 0xFFFFFFF0 == _ZSTD_SKIPPABLE:
            if n - pos < 8:
                raise CompressionError("zstd payload ends inside a skippable frame")
            pos += 8 + _U32LE.unpack_from(data, pos + 4)[0]
            continue
        if magic != _ZSTD_MAGIC:
            raise CompressionError(f"zstd payload has no frame magic at byte {pos}")
        if n - pos < 5:
            raise CompressionError("zstd payload ends inside a frame header")
        fhd = data[pos + 4]
        single = (fhd >> 5) & 1
        fcs = _ZSTD_FCS_SIZES[fhd >> 6] or single
        pos += 5 + (0 if single else 1) + _ZSTD_DICT_ID_SIZES[fhd & 3] + fcs
        while True:
            if n - pos < 3:
                raise CompressionError("zstd payload ends inside a frame")
            header = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            block_type, size = (header >> 1) & 3, header >> 3
            pos += 3 + (1 if block_type == 1 else size)
            if header & 1:
                break
        pos += 4 if fhd & 4 else 0
        if pos > n:
            raise CompressionError("zstd payload ends inside a frame")
    if pos > n:
        raise CompressionError("zstd payload ends inside a skippable frame")


def _unzstd(data: bytes | memoryview, limit: int) -> bytes:
    """zstd, read as a stream across frames (Java writes several, without a content size)."""
    _zstd_frames_complete(memoryview(data))
    reader = _ZSTD.stream_reader(data, read_across_frames=True)
    parts: list[bytes] = []
    total = 0
    while True:
        # Modest reads: one read(limit) would allocate the whole limit for every batch.
        part = reader.read(min(_ZSTD_READ, limit + 1 - total))
        if not part:
            return parts[0] if len(parts) == 1 else b"".join(parts)
        total += len(part)
        if total > limit:
            raise _too_big(limit)
        parts.append(part)


_ZSTD = zstandard.ZstdDecompressor()
_ZSTD_READ = 1 << 20


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def _snappy_xerial(data: bytes) -> bytes:
    """Xerial framing as Java's SnappyOutputStream writes it (32 KiB blocks)."""
    out = bytearray(XERIAL_MAGIC + struct.pack(">ii", 1, 1))
    for i in range(0, len(data), 32 * 1024):
        block = snappy.compress(data[i : i + 32 * 1024])
        out += _U32BE.pack(len(block)) + block
    return bytes(out)


def _lz4_frame(data: bytes) -> bytes:
    import lz4.frame

    return bytes(lz4.frame.compress(data, block_size=lz4.frame.BLOCKSIZE_MAX64KB, content_checksum=False))


def _zstd(data: bytes) -> bytes:
    return bytes(zstandard.ZstdCompressor(level=3).compress(data))


_COMPRESSORS: dict[Compression, Callable[[bytes], bytes]] = {
    Compression.GZIP: _gzip,
    Compression.SNAPPY: _snappy_xerial,
    Compression.LZ4: _lz4_frame,
    Compression.ZSTD: _zstd,
}


def compress(codec: Compression, data: bytes) -> bytes:
    """Compress as a Java producer would, so that Kafka and kafka-python read the result."""
    if codec is Compression.NONE:
        return data
    try:
        return _COMPRESSORS[codec](data)
    except KeyError:
        raise CompressionError(f"cannot compress with codec {int(codec)}") from None
