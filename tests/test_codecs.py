"""Codecs: round trips, kafka-python's ``kafka.codec`` as the independent implementation both ways,
the framing quirks of KAFKA-NOTES pitfalls 10-12, decompression bombs, and garbage input.
"""

from __future__ import annotations

import gzip
import os
import struct
import time
import zlib

import lz4.block
import lz4.frame
import pytest
import snappy
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka import codec as kc

from kafka_dump.errors import CompressionError, UnsupportedEncodingError
from kafka_dump.model import Compression
from kafka_dump.wire.codecs import XERIAL_MAGIC, compress, decompress

CODECS = [Compression.GZIP, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]
LIMIT = 1 << 20
BOMB_SIZE = 50 << 20
# magic, FLG (version 1, independent blocks, no content size), BD (64 KiB blocks), HC
_LZ4_HEADER = lz4.frame.compress(b"", block_size=lz4.frame.BLOCKSIZE_MAX64KB, store_size=False)[:7]

# Payloads with different shapes: empty, tiny, compressible, incompressible, several codec blocks.
PAYLOADS = {
    "empty": b"",
    "one": b"x",
    "text": b"the quick brown fox jumps over the lazy dog " * 50,
    "random": os.urandom(5000),
    "blocks": (bytes(range(256)) * 1024) + os.urandom(70_000),  # > 64 KiB and > 32 KiB blocks
}


def _ids(d: dict[str, bytes]) -> list[str]:
    return list(d)


# --- round trips -------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.label)
@pytest.mark.parametrize("data", PAYLOADS.values(), ids=_ids(PAYLOADS))
def test_round_trip(codec: Compression, data: bytes) -> None:
    packed = compress(codec, data)
    assert decompress(codec, packed, max(len(data), 1)) == data
    assert decompress(codec, memoryview(packed), LIMIT) == data


def test_none_is_identity() -> None:
    assert compress(Compression.NONE, b"abc") == b"abc"


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(CODECS), st.binary(max_size=3000), st.integers(0, 4000))
def test_limit_is_exact(codec: Compression, data: bytes, limit: int) -> None:
    """Output up to the limit comes back whole; one byte more raises, never a longer result."""
    packed = compress(codec, data)
    if len(data) <= limit:
        assert decompress(codec, packed, limit) == data
    else:
        with pytest.raises(CompressionError):
            decompress(codec, packed, limit)


# --- kafka-python's codec.py as the other implementation ------------------------------------------------

OURS_TO_THEIRS = {
    Compression.GZIP: kc.gzip_decode,
    Compression.SNAPPY: kc.snappy_decode,
    Compression.LZ4: kc.lz4_decode,
    Compression.ZSTD: kc.zstd_decode,
}


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.label)
@pytest.mark.parametrize("data", PAYLOADS.values(), ids=_ids(PAYLOADS))
def test_kafka_python_reads_ours(codec: Compression, data: bytes) -> None:
    if codec is Compression.SNAPPY and not data:
        # Ours is the bare 16-byte xerial header; kafka-python's _detect_xerial_stream wants more
        # than 16 bytes and then fails on it as raw snappy (a kafka-python limitation).
        assert compress(codec, data) == XERIAL_MAGIC + struct.pack(">ii", 1, 1)
        return
    assert OURS_TO_THEIRS[codec](compress(codec, data)) == data


def test_ours_snappy_is_xerial_framed() -> None:
    packed = compress(Compression.SNAPPY, b"abc" * 100)
    assert packed.startswith(XERIAL_MAGIC)
    assert struct.unpack_from(">ii", packed, 8) == (1, 1)


def test_ours_lz4_has_kafka_frame() -> None:
    packed = compress(Compression.LZ4, b"abc" * 100)
    assert struct.unpack_from("<I", packed)[0] == 0x184D2204
    assert packed[4] & 0x20  # independent blocks: Kafka's Lz4BlockOutputStream writes nothing else


THEIR_ENCODERS = {
    "gzip": (Compression.GZIP, kc.gzip_encode),
    "snappy-xerial": (Compression.SNAPPY, lambda d: kc.snappy_encode(d, xerial_compatible=True)),
    "snappy-xerial-small-blocks": (
        Compression.SNAPPY,
        lambda d: kc.snappy_encode(d, xerial_compatible=True, xerial_blocksize=1000),
    ),
    "snappy-raw": (Compression.SNAPPY, lambda d: kc.snappy_encode(d, xerial_compatible=False)),
    "lz4": (Compression.LZ4, kc.lz4_encode),
    "lz4-old-kafka": (Compression.LZ4, kc.lz4_encode_old_kafka),  # magic 0: wrong header checksum
    "zstd": (Compression.ZSTD, kc.zstd_encode),
}


@pytest.mark.parametrize("name", THEIR_ENCODERS)
@pytest.mark.parametrize("data", PAYLOADS.values(), ids=_ids(PAYLOADS))
def test_we_read_kafka_python(name: str, data: bytes) -> None:
    codec, encode = THEIR_ENCODERS[name]
    assert decompress(codec, encode(data), LIMIT) == data


def test_old_kafka_lz4_header_checksum_really_is_wrong() -> None:
    """Make sure the magic-0 case tests what it means to: the frame's HC byte is not the correct one."""
    packed = kc.lz4_encode_old_kafka(b"hello" * 100)
    with pytest.raises(RuntimeError):
        lz4.frame.decompress(packed)
    assert decompress(Compression.LZ4, packed, LIMIT) == b"hello" * 100


# --- framing quirks ------------------------------------------------------------------------------------


def _xerial(data: bytes, header_fields: bytes, block: int = 32 * 1024) -> bytes:
    out = bytearray(XERIAL_MAGIC + header_fields)
    for i in range(0, len(data), block):
        chunk = snappy.compress(data[i : i + block])
        out += struct.pack(">i", len(chunk)) + chunk
    return bytes(out)


@pytest.mark.parametrize(
    "fields",
    [struct.pack("<ii", 1, 1), struct.pack(">ii", 1, 1), struct.pack(">ii", 2, 7), bytes(8)],
    ids=["little-endian (redpanda)", "big-endian", "other-version", "zero"],
)
def test_xerial_version_fields_are_not_checked(fields: bytes) -> None:
    data = PAYLOADS["blocks"]
    assert decompress(Compression.SNAPPY, _xerial(data, fields), LIMIT) == data


def test_xerial_concatenated_streams() -> None:
    a, b = b"first stream " * 100, b"second stream " * 100
    packed = kc.snappy_encode(a, xerial_compatible=True) + kc.snappy_encode(b, xerial_compatible=True)
    assert decompress(Compression.SNAPPY, packed, LIMIT) == a + b


@pytest.mark.parametrize("tail", [b"\x00", b"\x00\x00\x00"])
def test_xerial_short_trailing_bytes(tail: bytes) -> None:
    data = b"payload " * 100
    assert (
        decompress(Compression.SNAPPY, kc.snappy_encode(data, xerial_compatible=True) + tail, LIMIT) == data
    )


def test_xerial_with_no_blocks_is_empty() -> None:
    assert decompress(Compression.SNAPPY, XERIAL_MAGIC + struct.pack(">ii", 1, 1), LIMIT) == b""


def test_zstd_several_frames_without_content_size() -> None:
    zc = zstandard.ZstdCompressor(write_content_size=False)
    parts = [b"first frame " * 1000, b"", os.urandom(3000), b"third " * 20_000]
    packed = b"".join(zc.compress(p) for p in parts)
    frame = zc.compress(parts[0])
    assert zstandard.get_frame_parameters(frame).content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert decompress(Compression.ZSTD, packed, LIMIT) == b"".join(parts)


def test_zstd_streamed_frame_without_content_size() -> None:
    """As zstd-jni's ZstdOutputStream writes it: one frame, streamed, with no size in its header."""
    data = PAYLOADS["blocks"] * 3
    cobj = zstandard.ZstdCompressor(write_content_size=False).compressobj()
    packed = cobj.compress(data[:1000]) + cobj.compress(data[1000:]) + cobj.flush()
    assert decompress(Compression.ZSTD, packed, LIMIT) == data


def test_gzip_two_members() -> None:
    a, b = b"member one " * 100, os.urandom(2000)
    packed = gzip.compress(a) + gzip.compress(b)
    assert decompress(Compression.GZIP, packed, LIMIT) == a + b


def test_gzip_member_of_empty_input_then_data() -> None:
    packed = gzip.compress(b"") + gzip.compress(b"data")
    assert decompress(Compression.GZIP, packed, LIMIT) == b"data"


def test_lz4_with_block_and_content_checksums() -> None:
    data = PAYLOADS["blocks"]
    packed = lz4.frame.compress(
        data, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
        block_checksum=True, content_checksum=True,
    )  # fmt: skip
    assert decompress(Compression.LZ4, packed, LIMIT) == data


def test_lz4_linked_blocks() -> None:
    data = PAYLOADS["blocks"] * 2
    packed = lz4.frame.compress(data, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=True)
    assert decompress(Compression.LZ4, packed, LIMIT) == data


def test_lz4_uncompressed_block() -> None:
    """A block with the high bit of its size set is stored as is."""
    data = os.urandom(100)
    frame = lz4.frame.compress(b"", block_size=lz4.frame.BLOCKSIZE_MAX64KB, store_size=False)
    assert frame[:7] == _LZ4_HEADER
    packed = _LZ4_HEADER + struct.pack("<I", 0x80000000 | len(data)) + data + b"\x00\x00\x00\x00"
    assert decompress(Compression.LZ4, packed, LIMIT) == data


# --- decompression bombs -------------------------------------------------------------------------------


def _bombs() -> dict[str, tuple[Compression, bytes]]:
    zeros = bytes(BOMB_SIZE)
    half = bytes(LIMIT // 2 + 1)
    zc = zstandard.ZstdCompressor(write_content_size=False)
    return {
        "gzip": (Compression.GZIP, gzip.compress(zeros)),
        "gzip-members": (Compression.GZIP, gzip.compress(half) * 3),
        "snappy-raw": (Compression.SNAPPY, snappy.compress(zeros)),
        "snappy-xerial": (Compression.SNAPPY, kc.snappy_encode(zeros, xerial_compatible=True)),
        "snappy-xerial-one-block": (
            Compression.SNAPPY,
            kc.snappy_encode(bytes(2 * LIMIT), xerial_compatible=True, xerial_blocksize=4 * LIMIT),
        ),
        "lz4-64k": (Compression.LZ4, compress(Compression.LZ4, zeros)),
        "lz4-4m": (
            Compression.LZ4,
            lz4.frame.compress(zeros, block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False),
        ),
        "lz4-linked": (Compression.LZ4, lz4.frame.compress(zeros, block_linked=True)),
        "zstd": (Compression.ZSTD, zstandard.ZstdCompressor().compress(zeros)),
        "zstd-no-size": (Compression.ZSTD, zc.compress(zeros)),
        "zstd-frames": (Compression.ZSTD, zc.compress(half) * 3),
    }


BOMBS = _bombs()


@pytest.mark.parametrize("name", BOMBS)
def test_bomb_raises_quickly(name: str) -> None:
    codec, packed = BOMBS[name]
    assert len(packed) < LIMIT * 3  # the payload itself is small
    started = time.perf_counter()
    with pytest.raises(CompressionError):
        decompress(codec, packed, LIMIT)
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize(
    "name",
    [n for n in BOMBS],
)
def test_bomb_error_names_the_limit(name: str) -> None:
    codec, packed = BOMBS[name]
    with pytest.raises(CompressionError) as info:
        decompress(codec, packed, LIMIT)
    assert f"limit of {LIMIT} bytes" in str(info.value)


# --- garbage -------------------------------------------------------------------------------------------

LZ4_MAGIC = struct.pack("<I", 0x184D2204)
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_good_lz4 = compress(Compression.LZ4, PAYLOADS["text"])

GARBAGE: dict[str, tuple[Compression, bytes]] = {
    "gzip-empty": (Compression.GZIP, b""),
    "gzip-text": (Compression.GZIP, b"this is not gzip at all"),
    "gzip-header-only": (Compression.GZIP, gzip.compress(b"abc")[:10]),
    "gzip-bad-deflate": (Compression.GZIP, gzip.compress(b"abc")[:10] + b"\xff" * 20),
    "gzip-bad-trailer-crc": (
        Compression.GZIP,
        gzip.compress(b"abc")[:-8] + b"\x00\x00\x00\x00" + gzip.compress(b"abc")[-4:],
    ),
    "gzip-raw-deflate": (Compression.GZIP, zlib.compress(b"abc")),
    "snappy-empty": (Compression.SNAPPY, b""),
    "snappy-text": (Compression.SNAPPY, b"this is not snappy at all, no"),
    "snappy-huge-prefix-no-data": (Compression.SNAPPY, b"\xff\xff\xff\xff\x0f"),
    "snappy-endless-prefix": (Compression.SNAPPY, b"\xff" * 10),
    "snappy-prefix-lies": (Compression.SNAPPY, b"\x10" + snappy.compress(b"abcd")[1:]),
    "xerial-short-header": (Compression.SNAPPY, XERIAL_MAGIC + b"\x00\x00"),
    "xerial-block-past-end": (Compression.SNAPPY, XERIAL_MAGIC + bytes(8) + struct.pack(">i", 100) + b"ab"),
    "xerial-negative-block": (Compression.SNAPPY, XERIAL_MAGIC + bytes(8) + struct.pack(">i", -1) + b"ab"),
    "xerial-garbage-block": (
        Compression.SNAPPY,
        XERIAL_MAGIC + bytes(8) + struct.pack(">i", 4) + b"\xff" * 4,
    ),
    "lz4-empty": (Compression.LZ4, b""),
    "lz4-text": (Compression.LZ4, b"this is not lz4 at all"),
    "lz4-magic-only": (Compression.LZ4, LZ4_MAGIC),
    "lz4-bad-version": (Compression.LZ4, LZ4_MAGIC + b"\x00\x40\x00" + bytes(4)),
    "lz4-bad-block-size-code": (Compression.LZ4, LZ4_MAGIC + b"\x60\x10\x00" + bytes(4)),
    "lz4-no-end-mark": (Compression.LZ4, _good_lz4[:-4]),
    "lz4-cut-end-mark": (Compression.LZ4, _good_lz4[:-1]),
    "lz4-oversize-block": (Compression.LZ4, _LZ4_HEADER + struct.pack("<I", 65537) + bytes(65537) + bytes(4)),
    "lz4-garbage-block": (Compression.LZ4, _LZ4_HEADER + struct.pack("<I", 8) + b"\xff" * 8 + bytes(4)),
    "lz4-content-size-cut": (Compression.LZ4, LZ4_MAGIC + b"\x68\x40" + bytes(3)),
    "zstd-text": (Compression.ZSTD, b"this is not zstd at all"),
    "zstd-magic-garbage": (Compression.ZSTD, ZSTD_MAGIC + b"\xff" * 30),
    "zstd-frame-then-garbage": (Compression.ZSTD, zstandard.ZstdCompressor().compress(b"abc") + b"garbage!"),
}


@pytest.mark.parametrize("name", GARBAGE)
def test_garbage_raises_compression_error(name: str) -> None:
    codec, data = GARBAGE[name]
    with pytest.raises(CompressionError):
        decompress(codec, data, LIMIT)


def _truncations() -> list[object]:
    data = os.urandom(3000) + b"compressible " * 3000
    out: list[object] = []
    for codec in CODECS:
        packed = compress(codec, data)
        for label, cut in (("half", len(packed) // 2), ("minus-one", len(packed) - 1)):
            out.append(pytest.param(codec, packed[:cut], id=f"{codec.label}-{label}"))
    return out


@pytest.mark.parametrize(("codec", "data"), _truncations())
def test_truncated_payload_raises(codec: Compression, data: bytes) -> None:
    with pytest.raises(CompressionError):
        decompress(codec, data, LIMIT)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(CODECS), st.binary(max_size=300))
def test_arbitrary_bytes_raise_only_compression_error(codec: Compression, data: bytes) -> None:
    try:
        out = decompress(codec, data, 10_000)
    except CompressionError:
        return
    assert isinstance(out, bytes)
    assert len(out) <= 10_000


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(CODECS), st.binary(min_size=1, max_size=2000), st.data())
def test_mutated_payload_raises_only_compression_error(
    codec: Compression, data: bytes, draw: st.DataObject
) -> None:
    packed = bytearray(compress(codec, data))
    for _ in range(draw.draw(st.integers(1, 4))):
        i = draw.draw(st.integers(0, len(packed) - 1))
        packed[i] = draw.draw(st.integers(0, 255))
    cut = draw.draw(st.integers(0, len(packed)))
    try:
        out = decompress(codec, bytes(packed[:cut]), 5000)
    except CompressionError:
        return
    assert isinstance(out, bytes)
    assert len(out) <= 5000


# --- unknown codecs ------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_unknown_codec_ids_map_to_unknown(codec_id: int) -> None:
    assert Compression(codec_id) is Compression.UNKNOWN


@pytest.mark.parametrize("codec_id", [5, 6, 7, -1])
def test_unknown_codec_raises(codec_id: int) -> None:
    with pytest.raises(CompressionError):
        decompress(Compression(codec_id), gzip.compress(b"abc"), LIMIT)
    with pytest.raises(UnsupportedEncodingError):
        compress(Compression(codec_id), b"abc")


def test_lz4_block_module_is_what_kdump_uses() -> None:
    # Guard for the bomb tests above: the per-block bound relies on lz4.block's output-size argument.
    assert lz4.block.decompress(lz4.block.compress(b"abc", store_size=False), uncompressed_size=100) == b"abc"


def test_zstd_skippable_frames_are_skipped() -> None:
    data = b"between the frames " * 50
    frame = zstandard.ZstdCompressor(write_content_size=False).compress(data)
    skippable = struct.pack("<II", 0x184D2A5E, 5) + b"12345"
    assert decompress(Compression.ZSTD, skippable + frame + skippable + frame, LIMIT) == data + data


@pytest.mark.parametrize("cut", [1, 3, 4, 5, 7])
def test_zstd_cut_at_any_header_byte_is_an_error(cut: int) -> None:
    frame = zstandard.ZstdCompressor(write_checksum=True).compress(b"abc" * 1000)
    with pytest.raises(CompressionError):
        decompress(Compression.ZSTD, frame + frame[:cut], LIMIT)


def test_zstd_garbage_after_the_last_frame_is_an_error() -> None:
    frame = zstandard.ZstdCompressor().compress(b"abc" * 1000)
    with pytest.raises(CompressionError, match="no frame magic"):
        decompress(Compression.ZSTD, frame + b"garbage!", LIMIT)
