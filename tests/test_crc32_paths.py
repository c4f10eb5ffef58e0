"""The compiled twins' CRC-32 (``_wire.h``): its folding path (PCLMULQDQ, where the CPU has it) and its
table path must both give zlib.crc32, at every length around the folding path's block sizes and
thresholds and at every alignment, since the decoders check each v0/v1 message with it."""

from __future__ import annotations

import os
import random
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_twins import speedups


def _both(data: bytes) -> tuple[int, int]:
    return speedups.crc32(data), speedups.crc32(data, True)


@pytest.mark.parametrize("n", range(0, 300))
def test_every_short_length_and_alignment(n: int) -> None:
    """Below, at and above 16 (a block, the folding threshold) and 128 (four blocks in flight), with
    every partial last block: each length from 0 to 299, at each of 8 alignments of a buffer."""
    rng = random.Random(n)
    buf = bytes(rng.randrange(256) for _ in range(n + 8))
    for skip in range(8):
        data = buf[skip : skip + n]
        assert _both(data) == (zlib.crc32(data),) * 2


def test_check_value_and_extremes() -> None:
    assert _both(b"123456789") == (0xCBF43926, 0xCBF43926)
    for n in (32, 64, 127, 128, 4096, 65537):
        for fill in (b"\x00", b"\xff"):
            assert _both(fill * n) == (zlib.crc32(fill * n),) * 2


def test_a_large_buffer() -> None:
    data = os.urandom(3 * 1024 * 1024 + 13)
    assert _both(data) == (zlib.crc32(data),) * 2


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=5000), st.integers(0, 15))
def test_random_lengths_and_alignments(data: bytes, skip: int) -> None:
    view = memoryview(data)[skip:]
    assert _both(bytes(view)) == (zlib.crc32(view),) * 2
    assert speedups.crc32(view) == zlib.crc32(view)
