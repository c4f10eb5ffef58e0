"""Bounded summaries of a stream of numbers: memory stays flat whatever the file's size.

``SizeHistogram`` keeps sizes in fixed log-spaced buckets (exact below 128, within 1/64 above),
with the exact count, total, min and max, so that percentiles need no list of every size.
``TimeHistogram`` keeps records per time bucket in at most a fixed number of buckets, doubling the
bucket width (merging neighbours exactly) whenever the span of the timestamps needs more.
``BoundedCounter`` counts keys exactly until it has seen a fixed number of distinct ones.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from operator import add
from typing import Generic, TypeVar

from kafka_dump.wire._gather_layout import COUNT, MAX, MIN, TOTAL, bucket_of, new_histogram

K = TypeVar("K", bound=Hashable)

_EXACT = 128  # values below this have a bucket each
_SUB = 64  # sub-buckets per power of two above it: a bucket is under 1/64 of its values wide


def bucket_low(index: int) -> int:
    """The smallest value of a bucket."""
    if index < _EXACT:
        return index
    shift, sub = divmod(index - _EXACT, _SUB)
    return (sub + _SUB) << (shift + 1)


class SizeHistogram:
    """Count, total, min, max and log-spaced bucket counts of non-negative integers, in one
    ``array('q')`` (buckets, then count, total, min, max) that ``wire/_gather_pure.py`` adds to."""

    __slots__ = ("slots",)

    def __init__(self) -> None:
        self.slots = new_histogram()

    @property
    def count(self) -> int:
        return self.slots[COUNT]

    @property
    def total(self) -> int:
        return self.slots[TOTAL]

    @property
    def min(self) -> int | None:
        return self.slots[MIN] if self.slots[COUNT] else None

    @property
    def max(self) -> int | None:
        return self.slots[MAX] if self.slots[COUNT] else None

    def _span(self) -> range:
        """The buckets that can be non-empty: those of min to max (a few for a small file, not all
        of them, so that a summary costs little per file)."""
        h = self.slots
        return range(bucket_of(h[MIN]), bucket_of(h[MAX]) + 1) if h[COUNT] else range(0)

    @property
    def buckets(self) -> dict[int, int]:
        """The non-empty buckets: {index: count}."""
        h = self.slots
        return {b: h[b] for b in self._span() if h[b]}

    def add(self, value: int, n: int = 1) -> None:
        self.add_counts({value: n})

    def add_all(self, values: Iterable[int]) -> None:
        self.add_counts(Counter(values))

    def add_counts(self, counts: Mapping[int, int]) -> None:
        """Add each value ``counts`` holds, as many times as it says (sizes repeat: one step per size)."""
        if not counts:
            return
        h = self.slots
        total = 0
        for value, n in counts.items():
            h[bucket_of(value)] += n
            h[COUNT] += n
            total += value * n
        h[TOTAL] += total
        lo, hi = min(counts), max(counts)
        if lo < h[MIN]:
            h[MIN] = lo
        if hi > h[MAX]:
            h[MAX] = hi

    def merge(self, other: SizeHistogram) -> None:
        h, o = self.slots, other.slots
        n = o[COUNT]
        if not n:
            return
        low, high = o[MIN], o[MAX]
        lo, hi = bucket_of(low), bucket_of(high) + 1  # the buckets other uses (``_span``), added in C
        h[lo:hi] = array("q", map(add, h[lo:hi], o[lo:hi]))
        h[COUNT] += n
        h[TOTAL] += o[TOTAL]
        if low < h[MIN]:
            h[MIN] = low
        if high > h[MAX]:
            h[MAX] = high

    def percentile(self, percent: int) -> int | None:
        """The nearest-rank percentile (1-100): exact below 128; above, the low end of its bucket
        (under 1/64 below the true value), except that the last rank gives the maximum; never
        outside [min, max]. None when empty."""
        lo, hi = self.min, self.max
        if lo is None or hi is None:
            return None
        rank = max(1, -(-percent * self.count // 100))
        if rank >= self.count:
            return hi  # a known value: its bucket's low end would understate it
        seen = 0
        for b, n in sorted(self.buckets.items()):
            seen += n
            if seen >= rank:
                return max(bucket_low(b), lo)
        return hi

    def bands(self) -> list[tuple[int, int, int]]:
        """(low, high, count) per power-of-two band from the smallest to the largest value, for a
        bar chart: 0, 1, 2-3, 4-7, ... Empty bands inside the range are kept."""
        lo, hi = self.min, self.max
        if lo is None or hi is None:
            return []
        counts: dict[int, int] = {}
        for b, n in self.buckets.items():
            band = bucket_low(b).bit_length()
            counts[band] = counts.get(band, 0) + n
        first, last = lo.bit_length(), hi.bit_length()
        return [
            (0 if band == 0 else 1 << (band - 1), 0 if band == 0 else (1 << band) - 1, counts.get(band, 0))
            for band in range(first, last + 1)
        ]


class TimeHistogram:
    """Records per time bucket, at most ``limit`` buckets across the span of the timestamps.

    Bucket ``k`` holds ``[k * width, (k + 1) * width)``; when the span needs more buckets the width
    doubles and bucket ``k`` becomes ``k // 2``, an exact merge. Negative timestamps are left out.
    """

    __slots__ = ("counts", "limit", "width")

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self.width = 1
        self.counts: dict[int, int] = {}

    def add_counts(self, timestamps: Mapping[int, int]) -> None:
        counts = self.counts
        width = self.width
        for t, n in timestamps.items():
            if t < 0:
                continue
            k = t // width
            counts[k] = counts.get(k, 0) + n
        self.fit()

    def add_buckets(self, buckets: Mapping[int, int]) -> None:
        """Add counts already keyed by bucket at the current width (``t // width``, t >= 0)."""
        counts = self.counts
        for k, n in buckets.items():
            counts[k] = counts.get(k, 0) + n
        self.fit()

    def merge(self, other: TimeHistogram) -> None:
        while self.width < other.width:
            self._double()
        shift = (self.width // other.width).bit_length() - 1
        for k, n in other.counts.items():
            self.counts[k >> shift] = self.counts.get(k >> shift, 0) + n
        self.fit()

    def fit(self) -> None:
        """Double the width until the span fits (after counts were added at the current width)."""
        while self.counts and max(self.counts) - min(self.counts) + 1 > self.limit:
            self._double()

    def _double(self) -> None:
        merged: dict[int, int] = {}
        for k, n in self.counts.items():
            merged[k >> 1] = merged.get(k >> 1, 0) + n
        self.counts = merged
        self.width *= 2

    def series(self) -> tuple[int, int, list[int]]:
        """(start in ms, bucket width in ms, records per bucket), every bucket of the span present."""
        if not self.counts:
            return 0, self.width, []
        lo, hi = min(self.counts), max(self.counts)
        return lo * self.width, self.width, [self.counts.get(k, 0) for k in range(lo, hi + 1)]


class BoundedCounter(Generic[K]):
    """Exact counts of at most ``limit`` distinct keys; keys first seen after that are only counted
    together (``others``), so that a stream of unique keys cannot grow memory."""

    __slots__ = ("counts", "limit", "others")

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self.counts: dict[K, int] = {}
        self.others = 0

    def add_counts(self, counts: Mapping[K, int]) -> None:
        mine = self.counts
        for key, n in counts.items():
            if key in mine:
                mine[key] += n
            elif len(mine) < self.limit:
                mine[key] = n
            else:
                self.others += n

    def merge(self, other: BoundedCounter[K]) -> None:
        self.add_counts(other.counts)
        self.others += other.others

    @property
    def complete(self) -> bool:
        return self.others == 0

    def most_common(self, n: int) -> list[tuple[K, int]]:
        return Counter(self.counts).most_common(n)
