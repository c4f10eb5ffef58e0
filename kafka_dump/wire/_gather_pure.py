"""The statistics walk for ``kdump stats`` (twin: ``native/gather.c``): sizes and counts added to
histograms (``_gather_layout.py``) without a Record, v2 records all validated first by ``v2_records``.
Timestamps go to ``times`` as ``{t // width: count}`` (none below 0), header keys to ``header_keys``
until it holds ``key_limit`` (later new ones are counted as ``others``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Check, Compression, Header
from kafka_dump.native import bind, native
from kafka_dump.wire import layout as L
from kafka_dump.wire._gather_layout import (
    NBUCKETS,
    SLOTS,
    Gathered,
    GatheredLegacy,
    GatheredWrappers,
    Histograms,
    WrapperHistograms,
    hist_add,
    new_histogram,
)
from kafka_dump.wire.layout import INT64_MAX, INT64_MIN
from kafka_dump.wire.message import WRAPPER_CODECS, inner_base, inner_messages, sound_wrapper
from kafka_dump.wire.records import past_int64, v2_records

__all__ = ["gather_legacy_inner", "gather_legacy_wrappers", "gather_v2_records", "new_histogram"]


def gather_v2_records(
    data: bytes | memoryview,
    pos: int,
    end: int,
    count: int,
    base_timestamp: int,
    log_append_time: int | None,
    width: int,
    hists: Histograms,
    times: dict[int, int],
    header_keys: dict[bytes, int],
    key_limit: int,
    last_offset_delta: int = INT64_MAX,
    /,
) -> Gathered:
    """Validate, then add to ``hists`` (record, key, value, header bytes, header count), ``times``
    and ``header_keys``, the ``count`` records in ``data[pos:end]``: none may have an offset delta
    past ``last_offset_delta``, or a timestamp past int64."""
    if pos < 0 or end < pos or end > len(data) or width < 1:
        raise ValueError("need 0 <= pos <= end <= len(data) and width >= 1")
    try:
        for start, _, _, ts, od, _, _, _ in v2_records(data, pos, end, count):  # type: ignore[arg-type]
            if od > last_offset_delta:
                raise CorruptRecordError(
                    f"record offset delta {od} is past the batch's lastOffsetDelta {last_offset_delta}",
                    position=start,
                )
            if not L.INT64_MIN <= base_timestamp + ts <= L.INT64_MAX:
                raise past_int64("timestamp", ts, "baseTimestamp", base_timestamp, start, Check.TIMESTAMP)
    except CorruptRecordError as err:
        return 0, 0, 0, 0, 0, 0, None, None, 0, err.reason, err.position or 0
    lat = log_append_time
    rows = (
        (end - start, key, value, headers, od, base_timestamp + ts if lat is None else lat)
        for start, end, _, ts, od, key, value, headers in v2_records(data, pos, end, count)  # type: ignore[arg-type]
    )
    nk, nv, first_od, last_od, gaps, missing, min_ts, max_ts, others = _tally(
        rows, width, hists, times, header_keys, key_limit
    )
    return nk, nv, first_od, last_od, gaps, missing, min_ts, max_ts, others, None, 0


# size, key, value, headers, offset (or offset delta), timestamp: what the histograms take of a record.
_Row = tuple[int, "bytes | memoryview | None", "bytes | memoryview | None", tuple[Header, ...], int, int]


def _tally(
    rows: Iterable[_Row],
    width: int,
    hists: Histograms,
    times: MutableMapping[int, int],
    header_keys: MutableMapping[bytes, int],
    key_limit: int,
) -> tuple[int, int, int, int, int, int, int | None, int | None, int]:
    """Add each record to ``hists``, ``times`` and ``header_keys``: (null keys, null values, first
    offset, last offset, gaps, missing offsets, min timestamp, max timestamp, header keys past the limit)."""
    record, keys, values, header_bytes, header_counts = hists
    null_keys = null_values = gaps = missing = others = first = prev = 0
    min_ts: int | None = None
    max_ts: int | None = None
    for i, (size, key, value, headers, offset, t) in enumerate(rows):
        for h in headers:
            k = bytes(h.key)
            if k in header_keys:
                header_keys[k] += 1
            elif len(header_keys) < key_limit:
                header_keys[k] = 1
            else:
                others += 1
        hist_add(record, size)
        if key is None:
            null_keys += 1
        else:
            hist_add(keys, len(key))
        if value is None:
            null_values += 1
        else:
            hist_add(values, len(value))
        if headers:
            hist_add(header_bytes, sum(len(h.key) + len(h.value or b"") for h in headers))
        hist_add(header_counts, len(headers))
        if i == 0:
            first = offset
        elif offset != prev + 1:
            gaps += 1
            if offset > prev + 1:
                missing += offset - prev - 1
        prev = offset
        if 0 <= t <= INT64_MAX:
            times[t // width] = times.get(t // width, 0) + 1
            min_ts = t if min_ts is None or t < min_ts else min_ts
            max_ts = t if max_ts is None or t > max_ts else max_ts
    return null_keys, null_values, first, prev, gaps, missing, min_ts, max_ts, others


def _plain_inner(data: bytes, magic: int, wrapper_offset: int) -> tuple[int, int, int, int, int] | None:
    """(count, first and last inner offsets, base added to them, missing offsets inside) when ``data``
    is the plain case that ``gather_legacy_inner`` describes, with every figure within int64; else
    None. The messages are read one at a time, never held together."""
    count = first = last = total = 0
    top = INT64_MIN
    try:
        for m in inner_messages(data, magic):
            if count:
                gap = m.offset - last  # gaps must be countable in int64 too
                if not INT64_MIN <= gap <= INT64_MAX:
                    return None
                total += max(0, gap - 1)
                if total > INT64_MAX:
                    return None
            else:
                first = m.offset
            count += 1
            last = m.offset
            top = max(top, m.offset)
    except CorruptRecordError:
        return None
    if not count:
        return None
    base, sound = inner_base(magic, wrapper_offset, last)
    if not sound or base > INT64_MAX or top + base > INT64_MAX:
        return None  # offsets past int64 (the compiled twin's integers): the decoder reads them
    return count, first, last, base, total


def _add_inner(
    data: bytes,
    magic: int,
    base: int,
    lat: int | None,
    width: int,
    hists: Histograms,
    times: MutableMapping[int, int],
) -> tuple[int, int, int, int, int | None, int | None]:
    """Add the inner messages of ``data`` (``lat``: their LogAppendTime), which ``_plain_inner`` has
    read whole, to ``hists`` and ``times``: (null keys, null values, gaps, missing offsets, min
    timestamp, max timestamp)."""
    rows = (
        (m.size, m.key, m.value, (), m.offset + base, m.timestamp if lat is None else lat)
        for m in inner_messages(data, magic)
    )
    nk, nv, _, _, gaps, missing, min_ts, max_ts, _ = _tally(rows, width, hists, times, {}, 0)
    return nk, nv, gaps, missing, min_ts, max_ts


def gather_legacy_inner(
    data: bytes | memoryview,
    magic: int,
    wrapper_offset: int,
    log_append_time: int | None,
    width: int,
    hists: Histograms,
    times: dict[int, int],
    /,
) -> GatheredLegacy | None:
    """Add to ``hists`` and ``times`` the inner messages of a decompressed v0/v1 wrapper when they are
    the plain case (at least one, each whole, uncompressed, of the wrapper's magic, placed by
    ``message.inner_base`` with a sound wrapper offset); None (nothing added) for anything else."""
    if magic not in (0, 1) or width < 1:
        raise ValueError("magic must be 0 or 1 and width at least 1")
    data = bytes(data)
    plain = _plain_inner(data, magic, wrapper_offset)
    if plain is None:
        return None
    count, first, last, base, _ = plain
    null_keys, null_values, gaps, missing, min_ts, max_ts = _add_inner(
        data, magic, base, log_append_time, width, hists, times
    )
    return count, null_keys, null_values, first + base, last + base, gaps, missing, min_ts, max_ts


def gather_legacy_wrappers(
    data: bytes,
    pos: int,
    end: int,
    max_batch_bytes: int,
    max_records: int,
    width: int,
    time_limit: int,
    hists: WrapperHistograms,
    times: dict[int, int],
    unpack: Callable[[Compression, bytes | memoryview, int], bytes] | None = None,
    /,
) -> GatheredWrappers:
    """Count the run of sound compressed v0/v1 wrappers at ``data[pos:end]`` of plain inner messages
    (``gather_legacy_inner``, at most ``max_records``, gaps within int64, ``V2_HEADER_SIZE`` bytes left
    each) and stop before anything else; ``width`` doubles whenever ``times`` spans more than
    ``time_limit`` buckets (``histogram.TimeHistogram``); ``unpack`` may have inflated values ahead."""
    from kafka_dump.wire.codecs import decompress

    if pos < 0 or end < pos or end > len(data) or width < 1 or time_limit < 2:
        raise ValueError("need 0 <= pos <= end <= len(data), width >= 1 and time_limit >= 2")
    start = pos
    inner_hists: Histograms = hists[:5]
    per_batch, batch_bytes = hists[5], hists[6]
    formats: dict[tuple[int, int], list[int]] = {}
    ts_types = [0, 0, 0]
    batches = records = null_keys = null_values = gaps = missing = 0
    first: int | None = None
    low: int | None = None
    high: int | None = None
    last: int | None = None
    min_ts: int | None = None
    max_ts: int | None = None
    while end - pos >= L.V2_HEADER_SIZE:
        length = L.INT32.unpack_from(data, pos + L.LOG_ENTRY_SIZE_OFFSET)[0]
        if length < L.LEGACY_V0_MIN_SIZE or length > end - pos - L.LOG_OVERHEAD:
            break
        entry_end = pos + L.LOG_OVERHEAD + length
        magic = data[pos + L.MAGIC_OFFSET]
        attributes = data[pos + L.LEGACY_ATTRIBUTES_OFFSET]
        if magic > 1 or attributes & L.COMPRESSION_MASK not in WRAPPER_CODECS:
            break  # not a wrapper: not read as one
        wrapper = sound_wrapper(data, pos, entry_end, max_batch_bytes, unpack or decompress)
        if wrapper is None:
            break
        msg, inner = wrapper
        inner = bytes(inner)
        plain = _plain_inner(inner, magic, msg.offset)
        if plain is None or plain[0] > max_records:
            break
        n, f, la, base, inner_missing = plain
        f, la = f + base, la + base
        seam_gap = seam_missing = 0
        if last is not None:
            if last + 1 > INT64_MAX or not INT64_MIN <= f - (last + 1) <= INT64_MAX:
                break
            if f != last + 1:
                seam_gap = 1
                seam_missing = max(0, f - last - 1)
        if missing + seam_missing + inner_missing > INT64_MAX:
            break
        lat = msg.timestamp if magic == 1 and attributes & L.TIMESTAMP_TYPE_BIT else None
        nk, nv, g, m, lo_ts, hi_ts = _add_inner(inner, magic, base, lat, width, inner_hists, times)
        width = _fit(times, width, time_limit)
        hist_add(per_batch, n)
        hist_add(batch_bytes, entry_end - pos)
        fig = formats.setdefault((magic, attributes & L.COMPRESSION_MASK), [0, 0, 0, 0])
        for i, add in enumerate((1, n, entry_end - pos, len(inner))):
            fig[i] += add
        ts_types[0 if magic == 0 else 2 if attributes & L.TIMESTAMP_TYPE_BIT else 1] += 1
        batches += 1
        records += n
        null_keys += nk
        null_values += nv
        gaps += g + seam_gap
        missing += m + seam_missing
        first = f if first is None else first
        low = f if low is None else min(low, f)
        high = la if high is None else max(high, la)
        last = la
        if lo_ts is not None and hi_ts is not None:
            min_ts = lo_ts if min_ts is None else min(min_ts, lo_ts)
            max_ts = hi_ts if max_ts is None else max(max_ts, hi_ts)
        pos = entry_end
    return (
        pos - start, width, batches, records, null_keys, null_values, gaps, missing, first, low, high,
        last, min_ts, max_ts, tuple((m, c, *fig) for (m, c), fig in sorted(formats.items())),  # type: ignore[misc]
        (ts_types[0], ts_types[1], ts_types[2]),
    )  # fmt: skip


def _fit(times: dict[int, int], width: int, limit: int) -> int:
    """Double ``width`` (merging buckets in place) until the span of ``times`` needs at most
    ``limit`` buckets, as ``TimeHistogram.fit`` does; the new width."""
    while times and max(times) - min(times) + 1 > limit:
        merged: dict[int, int] = {}
        for k, n in times.items():
            merged[k >> 1] = merged.get(k >> 1, 0) + n
        times.clear()
        times.update(merged)
        width *= 2
    return width


# The compiled walk only where its histograms have this layout.
_same = native is not None and (native.NBUCKETS, native.SLOTS) == (NBUCKETS, SLOTS)
gather_v2_records = bind(gather_v2_records)(native.gather_v2_records if _same else None)
gather_legacy_inner = bind(gather_legacy_inner)(native.gather_legacy_inner if _same else None)
gather_legacy_wrappers = bind(gather_legacy_wrappers)(native.gather_legacy_wrappers if _same else None)
