"""The histogram layout and result shapes both statistics walk twins share (a leaf module, so that the
compiled twin's users need not load the pure one). A histogram is an ``array('q')`` of ``SLOTS``
int64s: ``NBUCKETS`` bucket counts (``bucket_of``: exact below ``EXACT``, then ``SUB`` buckets per
power of two), then count, total, min and max.
"""

from __future__ import annotations

from array import array

from kafka_dump.wire.layout import INT64_MAX

EXACT = 128
SUB_BITS = 6
SUB = 1 << SUB_BITS
NBUCKETS = 3712  # bucket_of(2**63 - 1) + 1
SLOTS = NBUCKETS + 4
COUNT, TOTAL, MIN, MAX = NBUCKETS, NBUCKETS + 1, NBUCKETS + 2, NBUCKETS + 3

# null keys, null values, first offset delta, last offset delta, gaps, missing offsets,
# min timestamp, max timestamp (None when no record has one), others, error reason, error position
Gathered = tuple[int, int, int, int, int, int, "int | None", "int | None", int, "str | None", int]
# record, key, value, header bytes, header count: each an array('q') of SLOTS (``new_histogram``)
Histograms = tuple["array[int]", "array[int]", "array[int]", "array[int]", "array[int]"]


def bucket_of(value: int) -> int:
    if value < EXACT:
        return value
    shift = value.bit_length() - SUB_BITS - 1
    return EXACT + (shift - 1) * SUB + ((value >> shift) - SUB)


def _empty() -> array[int]:
    h = array("q", bytes(8 * SLOTS))
    h[MIN] = INT64_MAX
    h[MAX] = -1
    return h


_EMPTY = _empty()


def new_histogram() -> array[int]:
    return _EMPTY[:]  # a copy of the empty one (a file's section makes seven)


def hist_add(h: array[int], value: int) -> None:
    h[bucket_of(value)] += 1
    h[COUNT] += 1
    h[TOTAL] += value
    if value < h[MIN]:
        h[MIN] = value
    if value > h[MAX]:
        h[MAX] = value


# n, null keys, null values, first offset, last offset, gaps, missing offsets, min timestamp, max timestamp
GatheredLegacy = tuple[int, int, int, int, int, int, int, "int | None", "int | None"]

# (magic, codec id, batches, records, bytes on disk, uncompressed bytes) per format met
FormatFigures = tuple[int, int, int, int, int, int]
# bytes used, time width, batches, records, null keys, null values, gaps, missing offsets, first
# offset, lowest first offset, highest last offset, last offset (the four None when no wrapper was
# counted), min timestamp, max timestamp, formats, wrappers per timestamp type (none, create, append)
GatheredWrappers = tuple[
    int, int, int, int, int, int, int, int, "int | None", "int | None", "int | None", "int | None",
    "int | None", "int | None", tuple[FormatFigures, ...], tuple[int, int, int],
]  # fmt: skip
# Histograms and the two per batch: records per batch, bytes per batch
WrapperHistograms = tuple[
    "array[int]", "array[int]", "array[int]", "array[int]", "array[int]", "array[int]", "array[int]"
]
