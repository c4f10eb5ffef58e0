"""The statistics walk (``format/gather.py``): its compiled twin agrees with the pure reference; both
agree with the decoder on every error (reason and position); and ``kdump stats`` gives the same
figures whether it walks the records or decodes them.
"""

from __future__ import annotations

import random
from array import array
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafka_dump.wire.gather as gather
from kafka_dump.analysis.stats import SegmentStats
from kafka_dump.analysis.stats_walk import iter_stats
from kafka_dump.render.stats import stats_json
from kafka_dump.wire import _gather_pure
from kafka_dump.wire import decode as _pure
from tests.batches import default_records, legacy_messages, legacy_records, v2_batch
from tests.conftest import FIXTURES, SHARED_REAL, reference_module

compiled = pytest.importorskip("kafka_dump.native._native")
_gather_pure, _pure = reference_module(_gather_pure), reference_module(_pure)


def run_twin(
    fn: Any, data: bytes, count: int, *, lat: int | None = None, width: int = 1, limit: int = 3
) -> Any:
    hists = tuple(_gather_pure.new_histogram() for _ in range(5))
    times: dict[int, int] = {3: 1}  # earlier counts stay and grow
    keys: dict[bytes, int] = {}
    out = fn(data, 0, len(data), count, 1_700_000_000_000, lat, width, hists, times, keys, limit)
    return out, [h.tobytes() for h in hists], times, keys


def both(data: bytes, count: int, **kw: Any) -> Any:
    pure = run_twin(_gather_pure.gather_v2_records, data, count, **kw)
    fast = run_twin(compiled.gather_v2_records, data, count, **kw)
    assert fast == pure
    return pure


def decoder_error(data: bytes, count: int) -> tuple[str, int] | None:
    _, error = _pure.decode_v2_records(data, 0, len(data), count, 0, 1_700_000_000_000, None, -1)
    return None if error is None else (error.reason, error.position or 0)


def records_of(seed: int, n: int) -> tuple[bytes, int]:
    batch = v2_batch(default_records(n, seed=seed))
    return batch[61:], n


@pytest.mark.parametrize("n", [0, 1, 3, 70, 200])
def test_valid_batches_agree_and_count_everything(n: int) -> None:
    data, count = records_of(n, n)
    (result, hists, times, keys) = both(data, count)
    assert result[-2] is None
    record_sizes = array("q", hists[0])
    assert record_sizes[gather.COUNT] == n and record_sizes[gather.TOTAL] == len(data)
    assert sum(times.values()) == n + 1
    if n >= 2:
        assert keys == {b"h": n // 2, b"n": n // 2}  # default_records: headers on odd records


def test_key_limit_and_width_and_log_append_time() -> None:
    data, count = records_of(1, 50)
    (result, _, times, keys) = both(data, count, width=7, limit=1, lat=1_800_000_000_000)
    assert len(keys) == 1 and result[8] == 50 // 2 * 2 - keys[b"h"]  # "n" headers counted as others
    assert times == {3: 1, 1_800_000_000_000 // 7: 50}
    assert result[6] == result[7] == 1_800_000_000_000


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.integers(1, 40), st.data())
def test_corrupt_records_agree_with_each_other_and_with_the_decoder(
    seed: int, n: int, draw: st.DataObject
) -> None:
    data, count = records_of(seed % 7, n)
    rng = random.Random(seed)
    b = bytearray(data)
    kind = draw.draw(st.sampled_from(["cut", "flip", "count", "byte"]))
    if kind == "cut":
        b = b[: rng.randrange(len(b))]
    elif kind == "flip":
        for _ in range(rng.randrange(1, 4)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif kind == "byte":
        b[rng.randrange(len(b))] = rng.choice([0x00, 0x7F, 0x80, 0xFF, 0x01])
    else:
        count = count + rng.choice([-1, 1])
    data = bytes(b)
    result, hists, times, keys = both(data, count)
    expected = decoder_error(data, count)
    if expected is None:
        assert result[9] is None
    else:
        assert (result[9], result[10]) == expected
        # On an error nothing is added.
        assert hists == [_gather_pure.new_histogram().tobytes()] * 5 and times == {3: 1} and keys == {}


def test_bad_arguments_are_refused_alike() -> None:
    for fn in (_gather_pure.gather_v2_records, compiled.gather_v2_records):
        hists = tuple(_gather_pure.new_histogram() for _ in range(5))
        with pytest.raises(ValueError):
            fn(b"abc", 2, 1, 0, 0, None, 1, hists, {}, {}, 1)
        with pytest.raises(ValueError):
            fn(b"abc", 0, 3, 0, 0, None, 0, hists, {}, {}, 1)
    with pytest.raises(ValueError):
        compiled.gather_v2_records(b"", 0, 0, 0, 0, None, 1, (array("q", [0]),) * 5, {}, {}, 1)


# --- walked or decoded: the same figures ----------------------------------------------------------------


def figures(path: Path, *, walk: bool) -> list[dict[str, Any]]:
    """Every file's stats JSON, by the walk (the default) or by decoding (a listener forces it)."""
    listener = None if walk else (lambda p: lambda b: None)
    return [stats_json(e) for e in iter_stats([path], listener=listener) if isinstance(e, SegmentStats)]


SEGMENTS = sorted(FIXTURES.glob("*.log"))


@pytest.mark.parametrize("path", SEGMENTS, ids=lambda p: p.name)
def test_walked_and_decoded_figures_agree_on_fixtures(path: Path) -> None:
    assert figures(path, walk=True) == figures(path, walk=False)


def test_walked_and_decoded_agree_on_mixed_and_damaged_files(tmp_path: Path) -> None:
    parts = [
        v2_batch(default_records(30, seed=1), base_offset=0),
        legacy_messages(legacy_records(5), magic=1, base_offset=30),
        legacy_messages(legacy_records(4), magic=1, codec=1, base_offset=35),
        v2_batch(default_records(9, seed=2), base_offset=50, codec=0),
        v2_batch(default_records(200, seed=3, compressible=True), base_offset=59, codec=1),
    ]
    whole = b"".join(parts)
    path = tmp_path / "00000000000000000000.log"
    rng = random.Random(5)
    for trial in range(25):
        b = bytearray(whole)
        if trial:
            b[rng.randrange(len(b))] ^= 0xFF
        if trial % 3 == 2:
            b = b[: rng.randrange(len(b))]
        path.write_bytes(bytes(b))
        assert figures(path, walk=True) == figures(path, walk=False), trial


@pytest.mark.skipif(not SHARED_REAL.is_dir(), reason="../shared/fixtures-real is absent")
def test_walked_and_decoded_agree_on_real_segments() -> None:
    for path in sorted(SHARED_REAL.rglob("*.log"))[:40]:
        if path.stat().st_size < 50_000_000:
            assert figures(path, walk=True) == figures(path, walk=False), path


# --- the inner messages of a v0/v1 wrapper --------------------------------------------------------------


def inner_set(magic: int, n: int, seed: int) -> bytes:
    """An uncompressed message set as a wrapper holds it: relative offsets in v1, absolute in v0."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
    for i, (key, value) in enumerate(legacy_records(n, seed=seed)):
        builder.append(
            i if magic else 100 + i, timestamp=1_700_000_000_000 + i if magic else None, key=key, value=value
        )
    return bytes(builder.build())


def run_legacy(fn: Any, data: bytes, magic: int, wrapper: int, lat: int | None = None, width: int = 1) -> Any:
    hists = tuple(_gather_pure.new_histogram() for _ in range(5))
    times: dict[int, int] = {}
    out = fn(data, magic, wrapper, lat, width, hists, times)
    return out, [h.tobytes() for h in hists], times


def legacy_both(data: bytes, magic: int, wrapper: int, **kw: Any) -> Any:
    pure = run_legacy(_gather_pure.gather_legacy_inner, data, magic, wrapper, **kw)
    fast = run_legacy(compiled.gather_legacy_inner, data, magic, wrapper, **kw)
    assert fast == pure
    return pure


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("wrapper", [0, 9, 500])
def test_plain_inner_sets_agree_with_the_decoder(magic: int, wrapper: int) -> None:
    data = inner_set(magic, 10, seed=wrapper)
    (result, hists, times) = legacy_both(data, magic, wrapper, lat=None)
    records, error = _pure.decode_legacy_inner(data, magic, wrapper, None)
    assert error is None and result is not None  # wrapper 9 is the last relative offset of 10: valid
    n, null_keys, null_values, first, last, gaps, missing, min_ts, max_ts = result
    assert (n, first, last) == (len(records), records[0].offset, records[-1].offset)
    assert null_keys == sum(r.key is None for r in records) and null_values == 0
    assert gaps == missing == 0
    assert array("q", hists[0])[gather.TOTAL] == len(data) == sum(r.sizeInBytes for r in records)
    stamps = [r.timestamp for r in records if r.timestamp >= 0]
    assert (min_ts, max_ts) == ((min(stamps), max(stamps)) if stamps else (None, None))
    assert sum(times.values()) == len(stamps)


def test_log_append_time_and_a_wrapper_below_its_last_offset() -> None:
    data = inner_set(1, 5, seed=1)
    result, _, times = legacy_both(data, 1, 100, lat=1_800_000_000_000, width=1000)
    assert result is not None and times == {1_800_000_000: 5} and (result[3], result[4]) == (96, 100)
    assert legacy_both(data, 1, 3)[0] is None  # 3 < 4, the last relative offset: the decoder reports it


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.sampled_from([0, 1]), st.integers(1, 12))
def test_damaged_inner_sets_agree_and_add_nothing_when_refused(seed: int, magic: int, n: int) -> None:
    rng = random.Random(seed)
    b = bytearray(inner_set(magic, n, seed % 5))
    for _ in range(rng.randrange(1, 3)):
        if not b:  # cut to nothing already
            break
        if rng.random() < 0.3:
            b = b[: rng.randrange(len(b))]
        else:
            b[rng.randrange(len(b))] = rng.choice([0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF, rng.randrange(256)])
    data = bytes(b)
    result, hists, times = legacy_both(data, magic, rng.choice([0, n - 1, n + 7]))
    if result is None:
        assert hists == [_gather_pure.new_histogram().tobytes()] * 5 and times == {}
    else:
        records, error = _pure.decode_legacy_inner(data, magic, 0, None)
        assert error is None and result[0] == len(records)
