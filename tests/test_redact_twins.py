"""redact's in-place record replacement: the compiled twin (``native/redact.c``, its own SHA-256 with
and without the CPU's SHA extensions, two fields hashed side by side) gives ``Pseudonyms``' bytes, on
records that kafka-python writes; the pure twin does too; both refuse the same damaged bytes; and a
file redacted in place is the file the record-by-record encoder writes (``--map`` takes that path)."""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

from kafka_dump.analysis import redact_records
from kafka_dump.analysis.pseudonyms import Pseudonyms
from kafka_dump.native import reference
from kafka_dump.wire.records import v2_records
from tests.batches import LZ4, NONE, ZSTD, v2_batch
from tests.test_redact import kdump

try:
    from kafka_dump.native import _native
except ImportError:  # no compiler: only the pure twin is checked
    _native = None  # type: ignore[assignment]

PURE = reference(redact_records.redact_v2_records)
TWINS = [("pure", PURE)] + ([("compiled", _native.redact_v2_records)] if _native else [])
compiled = pytest.mark.skipif(_native is None, reason="the compiled module is not built")

_BYTES = (
    st.none()
    | st.just(b"")
    | st.binary(min_size=1, max_size=140)
    | st.text("abcdefghij 0123456789", min_size=1, max_size=140).map(str.encode)
)
_SAME = st.sampled_from([b"k0000001", b"k0000002", b"order-7", b"\x00\x00\x00\x00\x07{json}", bytes(100)])
_FIELD = _BYTES | _SAME  # equal lengths in a row: the compiled twin hashes those two at a time
_RECORD = st.tuples(_FIELD, _FIELD, st.lists(st.tuples(st.sampled_from(["trace", "h"]), _FIELD), max_size=3))


def _records(specs: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]]) -> bytes:
    """kafka-python's v2 records for the specs (the bytes after the 61-byte header)."""
    builder = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, batch_size=1 << 30)
    for i, (key, value, headers) in enumerate(specs):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=key, value=value, headers=headers)
    return bytes(builder.build())[61:]


@compiled
@settings(max_examples=300, deadline=None)
@given(
    secret=st.binary(min_size=1, max_size=130),
    seed=st.binary(max_size=300),
    n=st.integers(0, 400),
    domain=st.sampled_from(b"bnrs"),
    portable=st.booleans(),
)
def test_compiled_stream_is_hmac_then_sha256_counter_blocks(
    secret: bytes, seed: bytes, n: int, domain: int, portable: bool
) -> None:
    mac = hmac.digest(secret, bytes([domain, 0]) + seed, "sha256")
    more = b"".join(hashlib.sha256(mac + i.to_bytes(4, "big")).digest() for i in range(1, n // 32 + 1))
    want = (mac + more)[:n]
    assert Pseudonyms(secret).stream(seed, n, bytes([domain])) == want
    assert _native.pseudonym_stream(secret, domain, seed, n, portable) == want


@settings(max_examples=200, deadline=None)
@given(specs=st.lists(_RECORD, max_size=25), keep=st.sampled_from([-1, -1, 0, 3, 5, 200]))
def test_both_twins_replace_each_field_with_its_pseudonym(specs: list, keep: int) -> None:  # type: ignore[type-arg]
    data = _records(specs)
    names = Pseudonyms(b"s3cret", keep_prefix=None if keep < 0 else keep)
    want_fields = [
        (names.replace(k, "key"), names.replace(v, "value"), [names.replace(hv, "header") for _, hv in hs])
        for k, v, hs in specs
    ]
    for name, twin in TWINS:
        got = twin(b"s3cret", data, len(specs), keep)
        assert got is not None, name
        out, counts, kept = got
        assert len(out) == len(data), name
        read = list(v2_records(out, 0, len(out), len(specs)))
        assert [(r[5], r[6], [h.value for h in r[7]]) for r in read] == want_fields, name
        assert [[h.key for h in r[7]] for r in read] == [[k.encode() for k, _ in hs] for _, _, hs in specs]
        assert (counts, kept) == (names.counts, names.kept), name


@settings(max_examples=200, deadline=None)
@given(specs=st.lists(_RECORD, min_size=1, max_size=8), cut=st.integers(0, 400), flip=st.integers(0, 400),
       extra=st.integers(-1, 1))  # fmt: skip
def test_both_twins_refuse_the_same_damaged_records(specs: list, cut: int, flip: int, extra: int) -> None:  # type: ignore[type-arg]
    data = bytearray(_records(specs))
    data[flip % len(data)] ^= 0x41
    del data[len(data) - cut % len(data) :]  # fmt: skip
    answers = [twin(b"s3cret", bytes(data), len(specs) + extra, -1) for _, twin in TWINS]
    assert all(a == answers[0] for a in answers)


def test_in_place_and_the_encoder_write_the_same_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """kdump's own batches (canonical varints): the file written in place (the default) and the one
    the record-by-record encoder writes (``--map`` needs each original, so it takes that path) are
    the same bytes, and so is the pure build's."""
    recs = [(b"user-%d" % (i % 7), b"\x00\x00\x00\x00\x2a" + b"payload %d " % i * (i % 5), [("trace", b"t-%d" % i)])
            for i in range(40)]  # fmt: skip
    seg = tmp_path / "in" / "t-0" / "00000000000000000000.log"
    seg.parent.mkdir(parents=True)
    seg.write_bytes(b"".join(v2_batch(recs[i : i + 10], codec=c, base_offset=i)
                             for i, c in zip(range(0, 40, 10), (NONE, LZ4, ZSTD, NONE), strict=True)))  # fmt: skip
    secret = tmp_path / "secret"
    secret.write_text("one secret\n")
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    kdump("redact", "--secret-file", secret, seg, "-o", a, code=0)
    kdump("redact", "--secret-file", secret, "--map", tmp_path / "map.jsonl", seg, "-o", b, code=0)
    monkeypatch.setenv("KDUMP_PURE", "1")
    c = tmp_path / "c.log"
    kdump("redact", "--secret-file", secret, seg, "-o", c, code=0)
    assert a.read_bytes() == b.read_bytes() == c.read_bytes()
    assert a.read_bytes() != seg.read_bytes()
