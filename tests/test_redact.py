"""``kdump redact``: no producer-chosen byte of 4 or more survives, in the file nor in any payload it
decompresses to; the damage stays (the same problem kinds at the same offsets for ``verify-crc``);
kafka-python reads every valid batch of the copy with the input's offsets, timestamps and header
keys; pseudonyms keep lengths, equality and nulls, and follow the secret."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_dump import Batch, read_segment
from kafka_dump.analysis.pseudonyms import Pseudonyms
from tests.batches import GZIP, LZ4, NONE, SNAPPY, ZSTD, legacy_messages, set_offset, v2_batch
from tests.conftest import ROOT
from tests.test_state import commit_key, commit_value, segment

FIXTURES = ROOT / "fixtures"
SECRET = b"support-case-4711"


def kdump(*args: str | Path, code: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "kafka_dump", *map(str, args)], capture_output=True,
                          text=True, env=env, check=False)  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    if code is not None:
        assert done.returncode == code, done.stderr
    return done


def _mixed() -> bytes:
    """v0, v1 and v2 entries with every codec (kafka-python's builders), headers, tombstones and keys
    that repeat across batches; a corrupt header between entries; a truncated last entry."""

    def recs(
        seed: int, n: int = 4
    ) -> list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
        return [(b"customer-%d" % (i % 3) if i != 1 else None,
                 None if i == 2 else b"secret order %d/%d " % (seed, i) * 6,
                 [("trace", b"tr-%d-%d-abcdef" % (seed, i)), ("null-h", None)]) for i in range(n)]  # fmt: skip

    def legacy(seed: int) -> list[tuple[bytes | None, bytes | None]]:
        return [(k, v) for k, v, _ in recs(seed)]

    parts = [
        legacy_messages(legacy(0), magic=0, base_offset=0),
        legacy_messages(legacy(1), magic=0, codec=GZIP, base_offset=4),
        legacy_messages(legacy(2), magic=1, codec=SNAPPY, base_offset=8),
        legacy_messages(legacy(3), magic=1, codec=LZ4, base_offset=12),
        legacy_messages(legacy(4), magic=1, base_offset=16),
    ]
    base = 20
    for seed, codec in ((5, NONE), (6, GZIP), (7, SNAPPY), (8, LZ4), (9, ZSTD)):
        parts.append(v2_batch(recs(seed), codec=codec, base_offset=base))
        base += 4
    garbage = b"\x00\x00\x00\x00\x00\x00\x00\x2a" + b"\xff\xff\xff\xf0" + b"customer-data-in-garbage" * 3
    tail = v2_batch(recs(10), base_offset=base)
    return b"".join(parts[:7]) + garbage + b"".join(parts[7:]) + tail[: len(tail) - 30]


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """A log dir: a mixed partition, a transactional one, a damaged one, and ``__consumer_offsets``."""
    data = tmp_path / "data"
    (data / "mixed-0").mkdir(parents=True)
    (data / "mixed-0" / "00000000000000000000.log").write_bytes(_mixed())
    shutil.copytree(FIXTURES / "txn-aborted", data / "orders-0", ignore=shutil.ignore_patterns("*.py"))
    (data / "bad-0").mkdir()
    shutil.copy(FIXTURES / "corrupt-crc.log", data / "bad-0" / "00000000000000000000.log")
    shutil.copy(FIXTURES / "txn-control.log", data / "bad-0" / "00000000000000000100.log")
    offsets = data / "__consumer_offsets-0"
    offsets.mkdir()
    segment(offsets, 0, v2_batch([(commit_key("billing", "orders", 0), commit_value(42, 1), [])]))
    (data / "orders-0" / "notes.txt").write_text("the operator's notes: not Kafka's, not copied")
    return data


def _producer_bytes(path: Path) -> set[bytes]:
    """Every key, value and header value of 4 bytes or more in a segment's data batches."""
    found: set[bytes] = set()
    for item in read_segment(path):
        if isinstance(item, Batch) and item.records and not item.isControl:
            for r in item.records:
                found.update(x for x in (r.key, r.value, *(h.value for h in r.headers)) if x and len(x) >= 4)
    return found


def _payloads(path: Path) -> bytes:
    """The file's bytes and every record's bytes as read back (the decompressed payloads)."""
    parts = [path.read_bytes()]
    for item in read_segment(path):
        if isinstance(item, Batch) and item.records:
            for r in item.records:
                parts += [r.key or b"", r.value or b"", *(h.value or b"" for h in r.headers)]
    return b"\n".join(parts)


def _problems(path: Path) -> tuple[int, list[tuple[str, str, Any]]]:
    done = kdump("verify-crc", "--format", "json", path)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, sorted(
        (r["file"].split("/")[-1], r["kind"], r.get("baseOffset")) for r in rows if r["type"] == "problem"
    )


def test_no_producer_byte_survives_and_the_damage_stays(log_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = kdump("redact", "--secret-file", _secret(tmp_path), log_dir, "-o", out, code=1)
    assert "values:" in done.stderr and "problems in the input, kept" in done.stderr
    for part in ("mixed-0", "orders-0", "bad-0"):
        for seg in sorted((log_dir / part).glob("*.log")):
            copy = out / part / seg.name
            secrets = _producer_bytes(seg)
            assert secrets, seg
            blob = _payloads(copy)
            assert [s for s in secrets if s in blob] == [], seg
    assert b"customer-data-in-garbage" not in (out / "mixed-0" / "00000000000000000000.log").read_bytes()
    code_in, problems_in = _problems(log_dir)
    code_out, problems_out = _problems(out)
    assert (code_out, problems_out) == (code_in, problems_in)
    assert {p[1] for p in problems_in} == {"corrupt", "partial-tail"}
    # Kafka's own topic and the side files: as they were.
    name = "__consumer_offsets-0/00000000000000000000.log"
    assert (out / name).read_bytes() == (log_dir / name).read_bytes()
    for side in ("00000000000000000000.txnindex", "00000000000000000013.timeindex"):
        assert (out / "orders-0" / side).read_bytes() == (log_dir / "orders-0" / side).read_bytes()
    assert not (out / "orders-0" / "notes.txt").exists()
    assert f"not copied (other): {log_dir / 'orders-0' / 'notes.txt'}" in done.stderr


def test_kafka_python_reads_the_copy_as_the_input(tmp_path: Path) -> None:
    from kafka.record import MemoryRecords

    seg = tmp_path / "in.log"
    seg.write_bytes(b"".join(v2_batch(
        [(b"k%d" % (i % 2), b"payload %d of customer x" % i, [("h", b"header value %d" % i)]) for i in range(5)],
        codec=codec, base_offset=5 * n) for n, codec in enumerate((NONE, GZIP, SNAPPY, LZ4, ZSTD))))  # fmt: skip
    out = tmp_path / "out.log"
    kdump("redact", seg, "-o", out, code=0)

    def read(path: Path) -> list[tuple[int, int, list[str], int | None, int | None]]:
        got, records = [], MemoryRecords(path.read_bytes())
        while (batch := records.next_batch()) is not None:
            for r in batch:
                got.append((r.offset, r.timestamp, [k for k, _ in r.headers],
                            None if r.key is None else len(r.key), None if r.value is None else len(r.value)))  # fmt: skip
        return got

    assert read(out) == read(seg) and len(read(seg)) == 25
    keys = [r.key for item in read_segment(out) if isinstance(item, Batch) for r in item.records or ()]
    assert len(set(keys)) == 2 and b"k0" not in keys and all(len(k) == 2 for k in keys)  # equal stay equal


def test_uncompressed_entries_keep_their_positions_and_the_index_follows(tmp_path: Path) -> None:
    from kafka_dump import Record
    from kafka_dump.log.writer import write_segment
    from kafka_dump.model import Compression
    from kafka_dump.wire import new_batch

    batches = []
    for n in range(40):
        records = tuple(Record(n * 10 + i, 1_700_000_000_000 + n, b"key-%d" % i, b"value %d " % i * 40, (), -1, 0)
                        for i in range(10))  # fmt: skip
        codec = Compression.GZIP if n % 4 == 0 else Compression.NONE
        batches.append(
            new_batch(records, magic=2, compression=codec, base_offset=n * 10, partition_leader_epoch=0)
        )
    part = tmp_path / "t-0"
    part.mkdir()
    write_segment(part / "00000000000000000000.log", batches)
    assert (part / "00000000000000000000.index").stat().st_size > 16
    out = tmp_path / "out"
    kdump("redact", part, "-o", out, code=0)
    assert kdump("verify-crc", out).returncode == 0  # the index points at the new entries
    before = [
        (i.position, i.baseOffset)
        for i in read_segment(part / "00000000000000000000.log")
        if isinstance(i, Batch)
    ]
    after = [
        (i.position, i.baseOffset)
        for i in read_segment(out / "00000000000000000000.log")
        if isinstance(i, Batch)
    ]
    assert [b for _, b in before] == [b for _, b in after]
    assert before[1][0] != after[1][0] or before[0] == after[0]  # a gzip entry first: positions move


def test_one_secret_one_file_two_secrets_two(tmp_path: Path) -> None:
    seg = FIXTURES / "v2-headers.log"
    a, b, c = tmp_path / "a.log", tmp_path / "b.log", tmp_path / "c.log"
    secret = _secret(tmp_path)
    kdump("redact", "--secret-file", secret, seg, "-o", a, code=0)
    kdump("redact", "--secret-file", secret, seg, "-o", b, code=0)
    other = tmp_path / "other"
    other.write_bytes(b"another secret")
    kdump("redact", "--secret-file", other, seg, "-o", c, code=0)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    positions = [[i.position for i in read_segment(f) if isinstance(i, Batch)] for f in (seg, a)]
    assert positions[0] == positions[1] == [0, 697]  # the uncompressed entry keeps its length
    d = tmp_path / "d.log"
    kdump("redact", seg, "-o", d, code=0)  # no secret: a random one
    assert d.read_bytes() != a.read_bytes()


def test_pseudonyms_are_keyed_by_hmac_sha256() -> None:
    import hashlib
    import hmac

    for secret in (SECRET, b"k" * 64, b"long secret " * 20):
        p = Pseudonyms(secret)
        for message in (b"", b"order-42", bytes(range(256)) * 3):
            assert p._mac(message) == hmac.digest(secret, message, "sha256")
        seed = hmac.digest(secret, b"b\0" + b"x" * 100, "sha256")
        more = b"".join(hashlib.sha256(seed + bytes([0, 0, 0, i])).digest() for i in (1, 2, 3))
        assert p.stream(b"x" * 100, 100) == (seed + more)[:100]
        assert p.stream(b"x" * 100, 20) == seed[:20]


def test_pseudonyms_keep_length_nulls_ascii_and_schema_ids() -> None:
    p = Pseudonyms(SECRET)
    assert p.replace(None, "key") is None and p.replace(b"", "value") == b""
    one = p.replace(b"order-42", "key")
    assert one is not None and len(one) == 8 and one != b"order-42" and one.isalnum()
    assert p.replace(b"order-42", "key") == one  # equal originals, equal pseudonyms
    assert Pseudonyms(b"other").replace(b"order-42", "key") != one
    framed = b"\x00\x00\x00\x01\x2a" + b"avro bytes of a customer"
    out = p.replace(framed, "value")
    assert out is not None and out[:5] == framed[:5] and b"customer" not in out and len(out) == len(framed)
    binary = bytes(range(256))
    assert len(p.replace(binary, "value") or b"") == 256
    kept = Pseudonyms(SECRET, keep_prefix=3).replace(b"abcdefgh", "value")
    assert kept is not None and kept[:3] == b"abc" and kept[3:] != b"defgh"


def test_json_values_keep_their_shape() -> None:
    p = Pseudonyms(SECRET, json_values=True)
    value = b'{"name": "Jane Doe", "age": 42, "tags": ["vip", "caf\\u00e9"], "ok": true, "n": null}'
    out = p.replace(value, "value")
    assert out is not None and len(out) == len(value)
    a, b = json.loads(value), json.loads(out)
    assert list(a) == list(b) and b["ok"] is True and b["n"] is None
    assert isinstance(b["age"], int) and len(str(b["age"])) == 2 and b["name"] != "Jane Doe"
    assert len(b["tags"]) == 2 and b"Jane" not in out and b"vip" not in out
    assert Pseudonyms(SECRET, json_values=True).replace(b"not json {", "value") != b"not json {"


def test_refusals_and_the_map(log_dir: Path, tmp_path: Path) -> None:
    seg = log_dir / "mixed-0" / "00000000000000000000.log"
    before = seg.read_bytes()
    done = kdump("redact", log_dir, "-o", log_dir / "inside", code=2)
    assert "refusing to write into the input" in done.stderr
    done = kdump("redact", seg, "-o", seg, code=2)
    assert "refusing to write over the input" in done.stderr
    assert seg.read_bytes() == before
    out, mapping = tmp_path / "o.log", tmp_path / "map.jsonl"
    kdump("redact", "--map", mapping, seg, "-o", out, code=1)
    assert stat.S_IMODE(mapping.stat().st_mode) == 0o600
    rows = [json.loads(line) for line in mapping.read_text().splitlines()]
    assert {"field": "key", "pseudonym": rows[0]["pseudonym"], "original": "customer-0"} in rows
    assert "standard input cannot be redacted" in kdump("redact", "-", "-o", out, code=2).stderr
    kdump("redact", seg, "-o", out, code=2)  # exists: not overwritten unless asked
    kdump("redact", "--force", seg, "-o", out, code=1)
    assert seg.read_bytes() == before


def _secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret"
    path.write_bytes(SECRET + b"\n")
    return path


def test_problems_are_counted_in_the_json_summary(tmp_path: Path) -> None:
    done = kdump("redact", "--format", "json", FIXTURES / "corrupt-crc.log", "-o", tmp_path / "x.log", code=1)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert rows[0]["problems"] == {"crc-mismatch": 1} and rows[0]["encoded"] == 3
    assert rows[-1]["type"] == "summary" and rows[-1]["redactedBytes"]["value"] > 0


def test_dump_redact_shows_what_redact_writes(log_dir: Path, tmp_path: Path) -> None:
    secret, out = _secret(tmp_path), tmp_path / "out"
    kdump("redact", "--secret-file", secret, log_dir, "-o", out, code=1)

    def records(*args: str | Path) -> list[tuple[object, ...]]:
        rows = [
            json.loads(line)
            for line in kdump("dump", "--format", "json", "--payload", "hex", *args).stdout.splitlines()
        ]
        return [(r["offset"], r["key"], r["value"], json.dumps(r["headers"])) for row in rows if row["type"] == "batch"
                for r in row.get("records") or []]  # fmt: skip

    for part in ("mixed-0", "orders-0", "__consumer_offsets-0"):
        shown = records("--redact", "--secret-file", secret, log_dir / part)
        assert shown == records(out / part) and shown, part
    assert records("--redact", log_dir / "__consumer_offsets-0") == records(log_dir / "__consumer_offsets-0")
    assert records("--redact", log_dir / "mixed-0") != records(log_dir / "mixed-0")
    table = kdump("dump", "--redact", log_dir / "mixed-0").stdout
    assert "customer-" not in table and "secret order" not in table
    done = kdump("dump", "--secret-file", secret, log_dir / "mixed-0", code=2)
    assert "--secret-file applies to --redact" in done.stderr


def test_a_batch_that_holds_fewer_records_than_it_declares_stays_so(tmp_path: Path) -> None:
    """The problem is found at the batch's end (no length): it belongs to the batch, which is scrubbed
    rather than encoded again (which would write the count it holds, the damage gone)."""
    from tests.batches import fix_v2_crc, patch

    good = v2_batch([(b"k", b"customer value %d" % i, []) for i in range(3)])
    empty = fix_v2_crc(patch(v2_batch([(b"k", b"v", [])])[:61], 8, ">i", 49))  # 1 record declared, none held
    seg = tmp_path / "in.log"
    seg.write_bytes(good + set_offset(empty, 3) + set_offset(good, 7))
    out = tmp_path / "out.log"
    kdump("redact", seg, "-o", out, code=1)
    (code_in, before), (code_out, after) = _problems(seg), _problems(out)
    assert (code_in, [p[1:] for p in before]) == (code_out, [p[1:] for p in after]) == (1, [("corrupt", 3)])
    assert b"customer value" not in _payloads(out)


def test_a_scrubbed_legacy_message_keeps_its_lengths_and_a_crc_that_held() -> None:
    """A damaged v0/v1 entry: its header, its key's and value's lengths kept; their bytes replaced;
    the CRC computed again when it held (so only its own damage remains)."""
    import zlib

    from kafka_dump.analysis.redact import FileReport, _scrubbed

    for magic in (0, 1):
        raw = legacy_messages([(b"customer-key", b"customer value, private")], magic=magic)
        head = 18 if magic == 0 else 26
        out = _scrubbed(raw, Pseudonyms(SECRET), FileReport("in", "out"), crc_valid=True)
        assert len(out) == len(raw) and out[:12] == raw[:12] and out[16:head] == raw[16:head]
        assert out[head : head + 4] == raw[head : head + 4] == (12).to_bytes(4, "big")  # the key's length
        at = head + 4 + 12
        assert out[at : at + 4] == raw[at : at + 4] == (23).to_bytes(4, "big")  # the value's length
        assert b"customer" not in out
        assert int.from_bytes(out[12:16], "big") == zlib.crc32(out[16:])
