"""``kdump dump``'s search options: the records each keeps, against an oracle that filters the full
dump's records in the test; goldens; --count; the header rules skipping batches undecoded; and the
compiled decoder's matching held to the pure one's."""

from __future__ import annotations

import base64
import json
import os
import re
import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder

import kafka_dump.wire as wire
from kafka_dump.cli import main
from kafka_dump.commands.filters import record_match
from kafka_dump.native import reference
from kafka_dump.wire import codecs
from kafka_dump.wire.decode import decode_legacy_wrapper, decode_v2_records
from kafka_dump.wire.match import RecordMatch, required_literal
from tests.batches import BIG, GZIP, LZ4, NONE, TS0, fix_v2_crc, legacy_messages, set_offset
from tests.conftest import FIXTURES

GOLDEN = FIXTURES / "golden" / "search"

Headers = list[tuple[str, bytes | None]]
RECORDS: list[tuple[bytes | None, bytes | None, Headers]] = [
    (b"order-1", b'{"status":"ok"}', [("trace-id", b"abc"), ("n", None)]),
    (b"\xff\xferaw", b"\x00\xff not utf-8 \xc3(", [("trace-id", b"")]),
    (None, b'{"status":"failed"}', []),
    (b"order-42", None, [("n", None), ("trace-id", b"abc")]),
    (b"hex:literal", b"status", [("bin", b"\xff")]),
    ("clé".encode(), b"failed again " * 10, [("trace-id", b"xyz")]),
]


def v2_entry(
    records: Sequence[tuple[bytes | None, bytes | None, Headers]],
    *,
    base_offset: int,
    codec: int = NONE,
    producer_id: int = -1,
    transactional: bool = False,
) -> bytes:
    """A v2 batch from kafka-python's builder (an independent writer)."""
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=int(transactional), producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1, base_sequence=0 if producer_id >= 0 else -1,
        batch_size=BIG,
    )  # fmt: skip
    for i, (key, value, headers) in enumerate(records):
        builder.append(i, timestamp=TS0 + base_offset + i, key=key, value=value, headers=headers)
    return set_offset(bytes(builder.build()), base_offset)


def segment() -> bytes:
    """Every reader path: a plain v2 batch, an lz4 one of a transactional producer, a v1 gzip wrapper
    and plain v1 messages."""
    v1 = [(b"order-1", b"v1 status failed"), (None, b"v1 ok"), (b"\xff", b"v1 \xff byte")]
    return b"".join(
        [
            v2_entry(RECORDS, base_offset=0),
            v2_entry(RECORDS, base_offset=6, codec=LZ4, producer_id=4001, transactional=True),
            legacy_messages(v1, magic=1, codec=GZIP, base_offset=12),
            legacy_messages(v1, magic=1, base_offset=15),
            v2_entry(RECORDS[:3], base_offset=18, producer_id=77),
        ]
    )


@pytest.fixture
def seg(tmp_path: Path) -> Path:
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(segment())
    return path


def run(*args: str | Path, code: int = 0) -> Any:
    result = CliRunner().invoke(main, ["dump", *map(str, args)], env={"COLUMNS": "200"})
    assert result.exit_code == code, result.output
    return result


def batches(*args: str | Path) -> list[dict[str, Any]]:
    out = run("--format", "json", "--payload", "base64", *args).stdout
    return [o for o in map(json.loads, out.splitlines()) if o["type"] == "batch"]


def raw(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


Rule = Callable[[dict[str, Any], dict[str, Any]], bool]


def header(name: bytes, value: bytes | None = None, *, any_value: bool = True) -> Rule:
    def rule(b: dict[str, Any], r: dict[str, Any]) -> bool:
        return any(
            h["key"].encode() == name and (any_value or raw(h["value"]) == value)
            for h in r.get("headers", [])
        )

    return rule


# Each search, and what it means in the test's own words over the full dump's records.
SEARCHES: dict[str, tuple[list[str], Rule]] = {
    "key": (["--key", "order-42"], lambda b, r: raw(r["key"]) == b"order-42"),
    "key-hex": (["--key", "hex:fffe726177"], lambda b, r: raw(r["key"]) == b"\xff\xferaw"),
    "key-base64": (["--key", "base64:b3JkZXItMQ=="], lambda b, r: raw(r["key"]) == b"order-1"),
    "key-text-prefix": (["--key", "text:hex:literal"], lambda b, r: raw(r["key"]) == b"hex:literal"),
    "key-utf8": (["--key", "clé"], lambda b, r: raw(r["key"]) == "clé".encode()),
    "key-re": (
        ["--key-re", "^order-[0-9]+$"],
        lambda b, r: re.search(rb"^order-[0-9]+$", raw(r["key"]) or b"\n"),
    ),
    "key-re-bytes": (["--key-re", r"\xff"], lambda b, r: b"\xff" in (raw(r["key"]) or b"")),
    "grep": (["--grep", "failed"], lambda b, r: b"failed" in (raw(r["value"]) or b"")),
    "grep-bytes": (["--grep", r"\x00\xff"], lambda b, r: b"\x00\xff" in (raw(r["value"]) or b"")),
    "header": (["--header", "trace-id"], header(b"trace-id")),
    "header-value": (["--header", "trace-id=abc"], header(b"trace-id", b"abc", any_value=False)),
    "header-empty": (["--header", "trace-id="], header(b"trace-id", b"", any_value=False)),
    "header-null-any": (["--header", "n"], header(b"n")),
    "header-hex": (["--header", "bin=hex:ff"], header(b"bin", b"\xff", any_value=False)),
    "producer": (["--producer", "4001"], lambda b, r: b["producerId"] == 4001),
    "transactional": (["--transactional"], lambda b, r: b["isTransactional"]),
    "combined": (
        ["--grep", "failed", "--header", "trace-id", "--from-offset", "4"],
        lambda b, r: b"failed" in (raw(r["value"]) or b"") and header(b"trace-id")(b, r) and r["offset"] >= 4,
    ),
    "producer-key": (
        ["--producer", "77", "--key-re", "order"],
        lambda b, r: b["producerId"] == 77 and b"order" in (raw(r["key"]) or b""),
    ),
}


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_search_keeps_what_the_oracle_keeps(name: str, seg: Path) -> None:
    args, rule = SEARCHES[name]
    full = batches(seg)
    expected = [{**b, "records": kept} for b in full if (kept := [r for r in b["records"] if rule(b, r)])]
    assert expected, "each search matches something"
    assert batches(*args, seg) == expected


def test_search_combines_with_limit_and_to_offset(seg: Path) -> None:
    found = batches("--grep", "status", "--to-offset", "16", "--limit", "3", seg)
    assert [r["offset"] for b in found for r in b["records"]] == [0, 2, 4]
    found = batches("--grep", "status", "--from-offset", "7", "--to-offset", "16", seg)
    assert [r["offset"] for b in found for r in b["records"]] == [8, 10, 12, 15]


def test_nothing_matches(seg: Path) -> None:
    result = run("--key", "absent", seg)
    assert "kdump: no record matches the filters given" in result.stderr
    assert "offset" not in result.stdout


@pytest.mark.parametrize("fmt", ["table", "expanded", "json", "kafka"])
def test_search_goldens(fmt: str, in_root: Path) -> None:
    """One search in every format on the bundled fixtures: the batch header as it is, then only the
    matching records."""
    shape = ["-x"] if fmt == "expanded" else ["--format", fmt]
    args = [
        "--header",
        "trace-id",
        "--grep",
        "fox",
        *shape,
        "fixtures/v2-headers.log",
        "fixtures/v1-gzip.log",
    ]
    result = run(*args)
    golden = GOLDEN / f"header-grep.{fmt}.txt"
    if os.environ.get("KDUMP_UPDATE_GOLDENS") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_bytes(result.stdout_bytes)
    assert result.stdout_bytes == golden.read_bytes()


@pytest.mark.parametrize("fmt", ["table", "kafka"])
def test_control_golden(fmt: str, in_root: Path) -> None:
    result = run("--control", "--format", fmt, "fixtures/txn-control.log", "fixtures/v2-none.log")
    golden = GOLDEN / f"control.{fmt}.txt"
    if os.environ.get("KDUMP_UPDATE_GOLDENS") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_bytes(result.stdout_bytes)
    assert result.stdout_bytes == golden.read_bytes()
    assert b"isControl: false" not in result.stdout_bytes


def test_count_per_file_across_partitions_and_log_dirs(tmp_path: Path) -> None:
    for part, copies in (("orders-0", 1), ("orders-1", 2)):
        d = tmp_path / part
        d.mkdir()
        for n in range(copies):
            (d / f"{n * 100:020d}.log").write_bytes(segment())
    result = run("--count", "--grep", "failed", tmp_path)
    per = 7  # offsets 2, 5, 8, 11, 12, 15 and 20
    assert result.stdout.splitlines() == [
        f"{tmp_path / 'orders-0' / '00000000000000000000.log'}: {per}",
        f"{tmp_path / 'orders-1' / '00000000000000000000.log'}: {per}",
        f"{tmp_path / 'orders-1' / '00000000000000000100.log'}: {per}",
    ]
    result = run(
        "--count", "--control", "--format", "json", tmp_path / "orders-0", FIXTURES / "txn-control.log"
    )
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"file": str(tmp_path / "orders-0" / "00000000000000000000.log"), "count": 0},
        {"file": str(FIXTURES / "txn-control.log"), "count": 2},
    ]


def test_count_names_a_file_safely(tmp_path: Path) -> None:
    d = tmp_path / "x\x1b[31m"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(segment())
    result = run("--count", d)
    assert "\x1b" not in result.stdout and "\\x1b[31m" in result.stdout
    assert result.stdout.endswith(": 21\n")


def test_header_rules_skip_batches_undecoded(tmp_path: Path) -> None:
    """A batch of another producer whose records are garbage (its CRC made valid again) is never
    decoded under --producer: no problem, exit 0; read whole, the garbage is corruption."""
    bad = bytearray(v2_entry(RECORDS, base_offset=6, producer_id=9))
    bad[61:70] = b"\x7f" * 9  # the first record's length and fields
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(v2_entry(RECORDS, base_offset=0, producer_id=4001) + fix_v2_crc(bad))
    assert run(path, code=1)
    found = batches("--producer", "4001", path)
    assert [b["baseOffset"] for b in found] == [0]
    run("--producer", "9", path, code=1)
    result = run("--transactional", path)
    assert result.stderr.strip() == "kdump: no record matches the filters given"


def test_a_damaged_batch_of_another_producer_is_still_reported(tmp_path: Path) -> None:
    """Skipped by its header, a batch's CRC is still checked: its damage is a problem (and exit 1),
    its records are not shown."""
    bad = bytearray(v2_entry(RECORDS, base_offset=6, producer_id=9))
    bad[-3] ^= 0xFF  # inside its last record: the header intact, the CRC now fails
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(v2_entry(RECORDS, base_offset=0, producer_id=4001) + bytes(bad))
    for extra in ([], ["--batches-only"]):
        result = run("--format", "json", "--producer", "4001", *extra, path, code=1)
        rows = [json.loads(line) for line in result.stdout.splitlines()]
        assert [(r["type"], r.get("baseOffset"), r.get("check")) for r in rows] == [
            ("batch", 0, None),
            ("problem", 6, "crc-mismatch"),
        ], extra


def test_problems_stay_under_a_search(tmp_path: Path) -> None:
    bad = bytearray(v2_entry(RECORDS, base_offset=0))
    bad[61:70] = b"\x7f" * 9
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(fix_v2_crc(bad))
    result = run("--format", "json", "--key", "order-1", path, code=1)
    assert [json.loads(line)["type"] for line in result.stdout.splitlines()] == ["problem"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--key", "hex:zz"], "is not valid hex"),
        (["--header", "h=base64:!!"], "is not valid base64"),
        (["--grep", "("], "is not a regular expression"),
        (["--key", "x", "--batches-only"], "not with --batches-only"),
    ],
)
def test_bad_search_options(args: list[str], message: str, seg: Path) -> None:
    result = run(*args, seg, code=2)
    assert message in result.stderr and "Traceback" not in result.stderr


def test_batches_only_takes_the_header_rules(seg: Path) -> None:
    found = batches("--batches-only", "--producer", "4001", seg)
    assert [(b["baseOffset"], b["records"]) for b in found] == [(6, None)]


# The compiled decoder's matching, held to the pure one's on every record of every batch above.
MATCHES = [
    RecordMatch(key=b"order-42"),
    RecordMatch(key=b""),
    RecordMatch(key_search=re.compile(rb"\xff").search),
    RecordMatch(value_search=re.compile(rb"fail").search),
    RecordMatch(header_key=b"trace-id"),
    RecordMatch(header_key=b"trace-id", header_value=b""),
    RecordMatch(header_key=b"n", header_value=b""),
    RecordMatch(
        key=b"order-1", header_key=b"trace-id", header_value=b"abc", value_search=re.compile(b"ok").search
    ),
    # As the options build them: the bytes every match holds, looked for before the search is called.
    record_match(None, "42$", None, None),
    record_match(None, "^order-", "fa(il)?", None),
    record_match(None, None, "\\.\\*no such", None),
]


def _records_of(entry: bytes) -> tuple[bytes, int, int, int]:
    base_ts, count = struct.unpack_from(">q", entry, 27)[0], struct.unpack_from(">i", entry, 57)[0]
    return entry, count, base_ts, struct.unpack_from(">i", entry, 23)[0]


@pytest.mark.parametrize("m", range(len(MATCHES)))
def test_compiled_matching_is_the_pure_matching(m: int) -> None:
    match = MATCHES[m]
    entry, count, base_ts, last_delta = _records_of(v2_entry(RECORDS, base_offset=100))
    for data, end in ((entry, len(entry)), (entry[: len(entry) - 3], len(entry) - 3)):  # whole, then cut
        args = (data, 61, end, count, 100, base_ts, None, -1, last_delta, match)
        compiled, pure = decode_v2_records(*args), reference(decode_v2_records)(*args)
        assert compiled[0] == pure[0]
        assert (compiled[1] and (compiled[1].reason, compiled[1].position)) == (
            pure[1] and (pure[1].reason, pure[1].position)
        )
        unfiltered = reference(decode_v2_records)(*args[:-1])[0]
        assert pure[0] == [r for r in unfiltered if _oracle(match, r)]


def _oracle(m: RecordMatch, r: Any) -> bool:
    if m.key is not None and r.key != m.key:
        return False
    if m.header_key is not None and not any(
        h.key == m.header_key and (m.header_value is None or h.value == m.header_value) for h in r.headers
    ):
        return False
    if m.key_search and (r.key is None or not m.key_search(r.key)):
        return False
    return not m.value_search or (r.value is not None and bool(m.value_search(r.value)))


@pytest.mark.parametrize("m", range(len(MATCHES)))
def test_compiled_wrapper_matching_is_the_pure_matching(m: int) -> None:
    """A v1 gzip wrapper (kafka-python's), and a v0 one: the compiled twin builds only the records
    kept, with the batch's offsets and count those of the whole wrapper."""
    v1 = [(b"order-42", b"v1 fail"), (None, b"ok"), (b"\xff\xferaw", None), (b"", b"x"), (b"order-1", b"ok")]
    for magic in (0, 1):
        entry = legacy_messages(v1, magic=magic, codec=GZIP, base_offset=40)
        args = ("f", entry, 0, len(entry), 7, True, 1 << 20, 1000, codecs.decompress, MATCHES[m])
        compiled, pure = decode_legacy_wrapper(*args), reference(decode_legacy_wrapper)(*args)
        assert compiled == pure
        whole = reference(decode_legacy_wrapper)(*args[:-1])
        assert pure is not None and whole is not None
        assert pure.records == tuple(r for r in whole.records or () if _oracle(MATCHES[m], r))
        assert pure._replace(records=None) == whole._replace(records=None)


def test_pure_reader_gives_the_same_dump(seg: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole search through the pure decoder: the same output bytes, in every format."""
    for shape in (["--format", "json"], ["--format", "kafka"], ["--format", "table"]):
        for search in (
            ["--grep", "fail|ok", "--header", "trace-id"],
            ["--key-re", "order|\xff"],
            ["--key", ""],
        ):
            args = [*shape, *search, seg]
            with monkeypatch.context() as patched:
                patched.setattr(wire, "decode_v2_records", reference(decode_v2_records))
                patched.setattr(wire, "decode_legacy_wrapper", reference(decode_legacy_wrapper))
                pure = run(*args).stdout_bytes
            assert run(*args).stdout_bytes == pure


@pytest.mark.parametrize("args", [("--count",), ("--count", "--format", "json"), ("--format", "kafka"), ()])
def test_a_search_on_a_terminal(args: tuple[str, ...], tmp_path: Path) -> None:
    """On a real pseudo-terminal, a hostile file name and hostile records found by a search reach it
    escaped, --count's lines included."""
    from tests.test_terminal_safety import HOSTILE, HOSTILE_NAME, assert_safe, on_terminal

    path = tmp_path / HOSTILE_NAME
    path.write_bytes(
        v2_entry([(k.encode(), v.encode(), [(v, v.encode())]) for k, v in HOSTILE.items()], base_offset=0)
    )
    plain = assert_safe(*on_terminal("dump", "--grep", r"\x1b", *args, str(path)))
    if "--count" in args:
        assert plain.rstrip().endswith(("2", '"count":2}'))
    else:
        assert "csi" in plain and "osc8" in plain and "markup" not in plain


_PIECES = st.sampled_from(
    ["a", "b", "ab", ".", "^", "$", "a*", "b?", "(a|b)", "[ab]", "\\n", "a{2}", "(?:ba)+", "\\b"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=6), st.lists(st.binary(max_size=12), min_size=1, max_size=8))
def test_the_required_literal_is_in_every_match(pieces: list[str], texts: list[bytes]) -> None:
    """A text the pattern matches holds the literal, so looking for it first never loses a match."""
    try:
        pattern = re.compile("".join(pieces).encode())
    except re.error:
        return
    literal = required_literal(pattern)
    for text in (*texts, *(t + b"ab\n" for t in texts)):
        if pattern.search(text) is not None:
            assert literal is None or literal in text, (pattern, text)


def test_required_literals() -> None:
    assert required_literal(re.compile(rb"999$")) == b"999"
    assert required_literal(re.compile(rb"^order-42")) == b"order-42"
    assert required_literal(re.compile(rb"foo(bar)?bazz")) == b"bazz"
    assert required_literal(re.compile(rb"ab\.cd")) == b"ab.cd"
    for none in (rb"abc|def", rb"(?i)abc", rb"x*", rb"[ab]"):
        assert required_literal(re.compile(none)) is None, none
