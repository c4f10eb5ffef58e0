"""`dump --format json` writes a run of batches (``BatchRun``) with one call (``run_json``) and
gathers lines into big writes (``Output.write_byte_lines``): these must write exactly the bytes of
the reference, the pure ``batch_json`` called batch by batch on ``read_segment``'s items."""

from __future__ import annotations

import io
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kafka_dump import native
from kafka_dump.cli import main
from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.segment import read_segment, read_segment_runs
from kafka_dump.model import Batch, Compression, Problem
from kafka_dump.native import reference
from kafka_dump.render import jsonl
from kafka_dump.render.jsonl import JsonRenderer, problem_object
from kafka_dump.render.output import CHUNK_BYTES, Output
from kafka_dump.render.payload import PayloadEncoding
from tests.conftest import FIXTURES, SHARED_REAL
from tests.test_twins import _compiled, batch_headers, json_records

jsonfast = _compiled("kafka_dump.native._native")
# The pure twins (jsonl's names hold the compiled ones where those are in use).
batch_json, run_json, plain_run_json = map(
    reference, (jsonl.batch_json, jsonl.run_json, jsonl.plain_run_json)
)

SEGMENTS = sorted([*FIXTURES.glob("*.log"), *(FIXTURES / "bad").glob("*.log")])
REAL = sorted(SHARED_REAL.rglob("*.log")) if SHARED_REAL.is_dir() else []
FILE_JSON = b'"f \\"q\\""'


def _readable(path: Path) -> bool:
    try:
        next(iter(read_segment(path)), None)
    except KafkaDumpError:
        return False
    return True


READABLE = [p for p in SEGMENTS if _readable(p)]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(batch_headers, st.one_of(st.none(), json_records.map(tuple))), max_size=6),
    st.sampled_from([0, 1, 2]),
)
def test_run_json_twins_write_every_batch_json_line(
    pairs: list[tuple[Batch, tuple[object, ...] | None]], payload: int
) -> None:
    """Any header and record values, each batch with its own records (or None): the lines in order."""
    batches = [b._replace(file="f", records=records) for b, records in pairs]
    expected = b"".join(batch_json(FILE_JSON, b, b.records, payload) for b in batches)
    assert run_json("f", FILE_JSON, batches, payload) == expected
    assert jsonfast.run_json("f", FILE_JSON, batches, payload) == expected


def _runs(path: Path) -> list[list[Batch]]:
    return [[x for x in run if isinstance(x, Batch)] for run in read_segment_runs(path)]


@pytest.mark.parametrize("path", [*READABLE, *REAL], ids=lambda p: p.name)
def test_run_json_twins_on_segments(path: Path) -> None:
    """Every fixture, the bad corpus, hostile.log and the real broker files, a read window at a time."""
    for run in _runs(path):
        for payload in (0, 1, 2) if path in READABLE else (1,):
            expected = b"".join(batch_json(FILE_JSON, b, b.records, payload) for b in run)
            assert run_json(str(path), FILE_JSON, run, payload) == expected
            assert jsonfast.run_json(str(path), FILE_JSON, run, payload) == expected


@pytest.mark.parametrize("twin", ["pure", "compiled"])
def test_run_json_takes_the_batches_of_one_file(twin: str) -> None:
    write = run_json if twin == "pure" else jsonfast.run_json
    (batch,) = _runs(FIXTURES / "v1-none.log")[0][:1]
    assert write(batch.file, b'"x"', [], 0) == b""
    with pytest.raises(ValueError, match="one file"):
        write(batch.file, b'"x"', [batch, batch._replace(file="other.log")], 0)


def _reference(paths: list[Path], payload: PayloadEncoding) -> bytes:
    """The JSON Lines of a dump, batch by batch and problem by problem, through the pure writer."""
    code = list(PayloadEncoding).index(payload)
    out = []
    for path in paths:
        file_json = jsonl._quote(str(path)).encode("utf-8", "backslashreplace")
        for item in read_segment(path):
            if isinstance(item, Problem):
                out.append((jsonl._dumps(problem_object(item)) + "\n").encode("utf-8", "backslashreplace"))
                continue
            records = item.records
            if item.magic >= 2:
                unread = (item.recordCount or 0) > 0
            else:
                unread = item.compression is not Compression.NONE
            out.append(batch_json(file_json, item, None if not records and unread else records, code))
    return b"".join(out)


def _plain_segment(path: Path, n: int, value_size: int = 100) -> Path:
    out = bytearray()
    for i in range(n):
        builder = LegacyRecordBatchBuilder(1, 0, 10**9)
        builder.append(
            i, timestamp=1_700_000_000_000 + i, key=b"k%08d" % i, value=bytes([i % 256]) * value_size
        )
        out += bytes(builder.build())
    path.write_bytes(bytes(out))
    return path


@pytest.mark.parametrize("path", READABLE, ids=lambda p: p.name)
def test_the_dump_writes_the_reference_lines(path: Path) -> None:
    """The whole command (runs, one call a run, gathered writes) against the line-by-line reference
    (--payload text is the goldens' and the twins' tests above)."""
    payload = PayloadEncoding.BASE64
    result = CliRunner().invoke(
        main, ["dump", "--format", "json", "--payload", payload.value, "--decode", "none", str(path)]
    )
    assert result.exit_code in (0, 1), result.output
    assert result.stdout_bytes == _reference([path], payload)


def test_many_runs_and_chunks_in_order(tmp_path: Path) -> None:
    """Several read windows of plain messages (runs) and several gathered writes, then a cut tail."""
    path = _plain_segment(tmp_path / "00000000000000000000.log", 6000)
    with path.open("ab") as f:
        f.write(path.read_bytes()[:100])
    result = CliRunner().invoke(main, ["dump", "--format", "json", "--payload", "base64", str(path)])
    assert result.exit_code == 0, result.output
    assert len(result.stdout_bytes) > 3 * CHUNK_BYTES and len(_runs(path)) > 2
    assert result.stdout_bytes == _reference([path], PayloadEncoding.BASE64)


def test_gathered_lines_are_written_before_an_error(tmp_path: Path) -> None:
    """A file that is not a segment ends the dump with exit 2: what came before it is all there."""
    good = _plain_segment(tmp_path / "a.log", 20)
    bad = tmp_path / "b.log"
    bad.write_bytes(b"\xff" * 100)
    result = CliRunner().invoke(main, ["dump", "--format", "json", str(good), str(bad)])
    assert result.exit_code == 2
    assert result.stdout_bytes == _reference([good], PayloadEncoding.TEXT)


def test_a_run_with_decoded_records_goes_batch_by_batch() -> None:
    """--decode on a topic whose records it reads: the run falls back to each batch's own line."""
    renderer = JsonRenderer(PayloadEncoding.TEXT, "none")
    run = _runs(FIXTURES / "v1-none.log")[0]
    assert renderer.run(run) == [b"".join(line for b in run for line in renderer.batch(b, b.records))]


class _Stream(io.StringIO):
    def __init__(self, raw: io.RawIOBase | io.BytesIO) -> None:
        super().__init__()
        self.raw = raw

    @property
    def buffer(self) -> io.RawIOBase | io.BytesIO:  # type: ignore[override]
        return self.raw


class _Trickle(io.RawIOBase):
    """A raw file (stdout under ``python -u``) that takes at most 1000 bytes a write."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.writes = 0

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        self.writes += 1
        self.data += bytes(b)[:1000]
        return min(len(b), 1000)


def test_lines_are_gathered_into_big_writes_and_none_is_lost() -> None:
    raw = _Trickle()
    out = Output("never", stdout=_Stream(raw), stderr=io.StringIO(), environ={})
    lines = [b"%d\n" % i for i in range(100_000)]
    for i in range(0, len(lines), 7):
        out.write_byte_lines(lines[i : i + 7])
    writes = raw.writes
    out.write("text\n")  # a switch to text writes what was gathered first
    out.flush()
    assert bytes(raw.data) == b"".join(lines)
    assert writes < len(b"".join(lines)) // 1000 + 10  # big writes (each cut to 1000 bytes here)


def test_lines_on_a_terminal_are_not_held() -> None:
    raw = io.BytesIO()

    class _Tty(_Stream):
        def isatty(self) -> bool:
            return True

    out = Output("never", stdout=_Tty(raw), stderr=io.StringIO(), environ={})
    out.write_byte_lines([b"a\n"])
    assert raw.getvalue() == b"a\n"


def _plain_messages(magic: int, n: int, log_append_time: bool = False) -> bytes:
    out = b""
    for i in range(n):
        builder = LegacyRecordBatchBuilder(magic, 0, 10**9)
        key = b"k\n\xff%d" % i if i % 3 else None
        builder.append(i * 7, timestamp=1_700_000_000_000 + i, key=key, value=b"v\x00" * i)
        message = bytearray(builder.build())
        if log_append_time:  # attribute bit 3, and the CRC (of the bytes from the magic on) again
            message[17] |= 8
            message[12:16] = zlib.crc32(message[16:]).to_bytes(4, "big")
        out += bytes(message)
    return out


def _both_plain(data: bytes, pos: int, end: int, with_records: bool, payload: int) -> None:
    expected = plain_run_json(FILE_JSON, data, pos, end, 1000, with_records, payload)
    assert jsonfast.plain_run_json(FILE_JSON, data, pos, end, 1000, with_records, payload) == expected
    # and the reference is the decoder's run, written batch by batch
    batches, used = _speedups_or_pure_run(data, pos, end, with_records)
    assert expected == (
        b"".join(batch_json(FILE_JSON, b, b.records, payload) for b in batches),
        len(batches),
        used,
    )


def _speedups_or_pure_run(data: bytes, pos: int, end: int, with_records: bool) -> tuple[list[Batch], int]:
    from kafka_dump.wire import decode as _pure

    return native.reference(_pure.decode_legacy_run)("f", data, pos, end, 1000, with_records)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_plain_run_json_twins_agree_on_damaged_runs(data: st.DataObject) -> None:
    """Runs of v0/v1 messages (create or append time), damaged anywhere: the same lines and the same stop."""
    magic = data.draw(st.sampled_from([0, 1]))
    raw = bytearray(_plain_messages(magic, data.draw(st.integers(0, 6)), data.draw(st.booleans())))
    builder = LegacyRecordBatchBuilder(1, 1, 10**9)  # a gzip wrapper ends the run
    builder.append(0, timestamp=5, key=b"a", value=b"b")
    raw += bytes(builder.build())[: data.draw(st.integers(0, 60))]
    for _ in range(data.draw(st.integers(0, 3)) if raw else 0):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    pos = data.draw(st.integers(0, min(3, len(raw))))
    end = data.draw(st.integers(pos, len(raw)))
    _both_plain(bytes(raw), pos, end, data.draw(st.booleans()), data.draw(st.sampled_from([0, 1, 2])))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.booleans(), st.sampled_from([0, 1, 2]))
def test_plain_run_json_twins_agree_on_arbitrary_bytes(data: bytes, with_records: bool, payload: int) -> None:
    _both_plain(data, 0, len(data), with_records, payload)


@pytest.mark.parametrize("path", READABLE, ids=lambda p: p.name)
def test_plain_run_json_twins_on_segments(path: Path) -> None:
    """Each file from every position an entry starts at, to its end."""
    data = path.read_bytes()
    starts = [0]
    for run in read_segment_runs(path):
        starts += [b.position for b in run if isinstance(b, Batch)]
    for pos in sorted(set(starts))[:50]:
        for payload in (0, 1, 2):
            _both_plain(data, pos, len(data), True, payload)


def test_plain_run_json_checks_its_window() -> None:
    """As the compiled decoder does: a window outside the buffer is a ValueError, never a read."""
    for pos, end in ((2, 1), (-1, 2), (0, 4)):
        with pytest.raises(ValueError):
            jsonfast.plain_run_json(b'"f"', b"abc", pos, end, 0, True, 0)


def test_a_renderer_that_decodes_records_leaves_plain_runs_to_the_decoder(tmp_path: Path) -> None:
    data = _plain_messages(1, 3)
    renderer = JsonRenderer(PayloadEncoding.TEXT, "none")
    assert renderer.plain_run("f.log", data, 0, len(data), 0, True) is not None
    renderer._decodes_data = True  # what file_start sets for a topic whose records --decode reads
    assert renderer.plain_run("f.log", data, 0, len(data), 0, True) is None


def test_big_lines_are_written_one_by_one_in_order() -> None:
    """Lines of batches of many records (tens of KiB) go out as they are, small ones gathered, in order."""
    raw = _Trickle()
    out = Output("never", stdout=_Stream(raw), stderr=io.StringIO(), environ={})
    lines = [bytes([65 + i % 26]) * (40_000 if i % 3 else 10) + b"\n" for i in range(40)]
    for line in lines:
        out.write_byte_lines([line])
    out.flush()
    assert bytes(raw.data) == b"".join(lines)
