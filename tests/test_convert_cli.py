"""``kdump convert`` as a command: options, the report, exit codes, and above all its safety.

The input is never written; an existing output is refused unless ``--force``, and the input never
even then; a failed verification or a corrupt input leaves no output and no temporary file behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kafka_dump.analysis import convert_run
from kafka_dump.analysis.convert import Converter, ConvertOptions
from kafka_dump.analysis.convert_run import Item, convert_segment, progress_position
from kafka_dump.analysis.verify import FileReport as VerifyReport
from kafka_dump.analysis.verify import VerifyOptions, verify_file
from kafka_dump.cli import main
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Problem, ProblemKind
from tests.conftest import FIXTURES


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["convert", *map(str, args)], env={"NO_COLOR": "1", "COLUMNS": "200"})


def report(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def fingerprint(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_ino


def records(path: Path) -> list[tuple[object, ...]]:
    return [
        (r.offset, r.timestamp, r.key, r.value, r.headers)
        for b in read_segment(path)
        if isinstance(b, Batch)
        for r in b.records or ()
    ]


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".kdump-tmp"))


@pytest.fixture
def src(tmp_path: Path) -> Path:
    """A copy of a fixture in its own directory, so that tests may look at what lies beside it."""
    d = tmp_path / "in"
    d.mkdir()
    p = d / "00000000000000000000.log"
    shutil.copy(FIXTURES / "v1-none.log", p)
    return p


# -- the report ------------------------------------------------------------------------------------


def test_table_report(src: Path, tmp_path: Path) -> None:
    result = run(src, "-o", tmp_path / "out.log")
    assert result.exit_code == 0, result.output
    for word in ("bytes", "batches", "records", "bytes/record", "change", "input", "output"):
        assert word in result.stdout
    assert str(src) in result.stdout
    # The size's change signed as stats --compare signs it: v1 none to v2, a saving, is negative.
    assert "│ change       │       │ -19.0% │" in result.stdout


def test_json_report_counts_both_sides(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.log"
    result = run(src, "-o", out, "--format", "json", "--no-index")
    assert result.exit_code == 0, result.output
    [obj] = report(result)
    n = len(records(src))
    assert obj["type"] == "convert" and obj["toMagic"] == 2
    assert obj["before"] == {"bytes": src.stat().st_size, "batches": n, "records": n,
                             "bytesPerRecord": round(src.stat().st_size / n, 2)}  # fmt: skip
    assert obj["after"]["bytes"] == out.stat().st_size and obj["after"]["records"] == n
    assert obj["after"]["batches"] == sum(1 for b in read_segment(out) if isinstance(b, Batch))
    saving = 100 * (src.stat().st_size - out.stat().st_size) / src.stat().st_size
    assert obj["savingPercent"] == round(saving, 2)
    assert obj["skipped"] == [] and obj["tail"] is None
    assert set(obj["changes"].values()) == {0}
    assert records(out) == records(src)


def test_report_names_what_was_dropped(tmp_path: Path) -> None:
    out = tmp_path / "out.log"
    result = run(FIXTURES / "v2-headers.log", "-o", out, "--to-magic", "0", "--format", "json")
    assert result.exit_code == 0, result.output
    [obj] = report(result)
    n_headers = sum(len(r[4]) for r in records(FIXTURES / "v2-headers.log"))  # type: ignore[arg-type]
    assert obj["changes"]["headersDropped"] == n_headers > 0
    assert obj["changes"]["timestampsDropped"] == obj["after"]["records"]
    table = run(FIXTURES / "v2-headers.log", "-o", tmp_path / "t.log", "--to-magic", "0")
    assert "headers dropped" in table.stdout and "timestamps dropped" in table.stdout


def test_options_reach_the_conversion(tmp_path: Path) -> None:
    out = tmp_path / "out.log"
    result = run(FIXTURES / "v0-none.log", "-o", out, "--compression", "gzip", "--level", "9",
                 "--batch-records", "2", "--timestamp", "1234", "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    batches = [b for b in read_segment(out) if isinstance(b, Batch)]
    assert {b.magic for b in batches} == {2} and {b.compression.label for b in batches} == {"gzip"}
    assert [b.recordCount for b in batches][:-1] == [2] * (len(batches) - 1)
    assert {r[1] for r in records(out)} == {1234}
    assert report(result)[0]["changes"]["timestampsSet"] == len(records(out))


# -- refusals ----------------------------------------------------------------------------------------


def test_zstd_below_v2_is_refused(tmp_path: Path) -> None:
    result = run(
        FIXTURES / "v1-none.log", "-o", tmp_path / "o.log", "--to-magic", "1", "--compression", "zstd"
    )
    assert result.exit_code == 2 and "zstd" in result.stderr
    result = run(FIXTURES / "v2-zstd.log", "-o", tmp_path / "o.log", "--to-magic", "1")
    assert result.exit_code == 2 and "zstd" in result.stderr and "--compression" in result.stderr
    assert not (tmp_path / "o.log").exists() and leftovers(tmp_path) == []


def test_control_batches_are_refused_below_v2_unless_dropped(tmp_path: Path) -> None:
    out = tmp_path / "o.log"
    result = run(FIXTURES / "txn-control.log", "-o", out, "--to-magic", "1")
    assert result.exit_code == 2 and "--drop-control" in result.stderr
    assert "byte 0" in result.stderr
    assert not out.exists() and leftovers(tmp_path) == []
    result = run(
        FIXTURES / "txn-control.log", "-o", out, "--to-magic", "1", "--drop-control", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    changes = report(result)[0]["changes"]
    assert changes["controlBatchesDropped"] > 0 and changes["transactionalBatchesMadePlain"] > 0


def test_missing_input_and_missing_output_directory(tmp_path: Path) -> None:
    result = run(tmp_path / "nope.log", "-o", tmp_path / "o.log")
    assert result.exit_code == 2 and "nope.log" in result.stderr
    result = run(FIXTURES / "v1-none.log", "-o", tmp_path / "no" / "o.log")
    assert result.exit_code == 2 and "does not exist" in result.stderr


# -- safety ------------------------------------------------------------------------------------------


def test_the_input_is_never_written(src: Path, tmp_path: Path) -> None:
    before = fingerprint(src)
    targets = (["--to-magic", "2"], ["--to-magic", "1", "--compression", "lz4"], ["--to-magic", "0"])
    for i, args in enumerate(targets):
        out = tmp_path / f"out{i}.log"
        assert run(src, "-o", out, *args).exit_code == 0
    assert fingerprint(src) == before
    assert sorted(p.name for p in src.parent.iterdir()) == [src.name]


def test_an_existing_output_is_refused_unless_force(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.log"
    out.write_bytes(b"precious")
    result = run(src, "-o", out)
    assert result.exit_code == 2 and "exists" in result.stderr and "--force" in result.stderr
    assert out.read_bytes() == b"precious"
    result = run(src, "-o", out, "--force")
    assert result.exit_code == 0, result.output
    assert records(out) == records(src)


def test_force_never_means_the_input(src: Path) -> None:
    before = fingerprint(src)
    for target in (src, src.parent / ".." / "in" / src.name):
        result = run(src, "-o", target, "--force")
        assert result.exit_code == 2 and "input" in result.stderr
    link = src.parent / "hardlink.log"
    os.link(src, link)
    result = run(src, "-o", link, "--force")
    assert result.exit_code == 2 and "input" in result.stderr
    assert fingerprint(src) == before
    assert leftovers(src.parent) == []


def test_the_inputs_indexes_are_never_overwritten(src: Path) -> None:
    index = src.with_suffix(".index")
    index.write_bytes(b"\0" * 8)
    result = run(src, "-o", src.with_suffix(".converted"), "--force")
    assert result.exit_code == 2 and "input" in result.stderr
    assert index.read_bytes() == b"\0" * 8


def test_a_verification_mismatch_deletes_the_temporary_file(
    src: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = convert_run.encode_entry

    def tampered(batch: Batch, **kw: Any) -> bytes:
        """The right entry with one value changed ("quick" -> "quack"), and its CRC made valid."""
        data = bytearray(real(batch, **kw).replace(b"quick", b"quack", 1))
        if data[16] == 2:
            import crc32c

            struct.pack_into(">I", data, 17, crc32c.crc32c(bytes(data[21:])))
        else:
            struct.pack_into(">I", data, 12, zlib.crc32(bytes(data[16:])))
        return bytes(data)

    monkeypatch.setattr(convert_run, "encode_entry", tampered)
    out = tmp_path / "out.log"
    for args in ((), ("--to-magic", "1")):
        result = run(src, "-o", out, *args)
        assert result.exit_code == 1, result.output
        assert "verification failed" in result.stderr and "differs" in result.stderr
        assert not out.exists() and leftovers(tmp_path) == []


def test_a_converter_whose_batches_lie_consistently_is_caught(
    src: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batches the encoder writes faithfully and that read back as meant, but whose maxTimestamp is
    below their records' times: what verify-crc's deep check finds, the conversion finds too."""
    real = Converter.finish

    def finish(self: Converter) -> list[Batch]:
        return [b._replace(maxTimestamp=b.maxTimestamp - 1) for b in real(self)]

    monkeypatch.setattr(Converter, "finish", finish)
    out = tmp_path / "out.log"
    result = run(src, "-o", out, "--to-magic", "2")
    assert result.exit_code == 1, result.output
    assert "verification failed" in result.stderr and "past its maxTimestamp" in result.stderr
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_file_that_reads_back_otherwise_is_not_renamed(
    src: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_finish = convert_run._TempSegment.finish

    def finish(self: convert_run._TempSegment) -> None:
        assert self._file is not None
        self._file.write(b"\0")  # bytes the checks never saw
        real_finish(self)

    monkeypatch.setattr(convert_run._TempSegment, "finish", finish)
    out = tmp_path / "out.log"
    result = run(src, "-o", out)
    assert result.exit_code == 1 and "read back" in result.stderr
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_corrupt_input_stops_the_conversion_unless_skipped(tmp_path: Path) -> None:
    bad = FIXTURES / "corrupt-crc.log"
    problem = next(i for i in read_segment(bad) if isinstance(i, Problem))
    out = tmp_path / "out.log"
    result = run(bad, "-o", out)
    assert result.exit_code == 1
    assert f"byte {problem.position}" in result.stderr and "--skip-corrupt" in result.stderr
    assert not out.exists() and leftovers(tmp_path) == []
    result = run(bad, "-o", out, "--skip-corrupt", "--format", "json")
    assert result.exit_code == 1, result.output
    [obj] = report(result)
    assert [s["position"] for s in obj["skipped"]] == [problem.position]
    good = [
        (r.offset, r.timestamp, r.key, r.value, r.headers)
        for b in read_segment(bad)
        if isinstance(b, Batch) and b.crcValid
        for r in b.records or ()
    ]
    assert records(out) == good and len(good) < obj["before"]["records"] + len(records(bad))


@pytest.mark.parametrize("name", ["zero-tail.log", "partial-tail.log"])
def test_a_tail_is_reported_and_not_copied(tmp_path: Path, name: str) -> None:
    src = FIXTURES / name
    tail = next(i for i in read_segment(src) if isinstance(i, Problem))
    assert tail.kind is not ProblemKind.CORRUPT
    out = tmp_path / "out.log"
    result = run(src, "-o", out, "--format", "json")
    assert result.exit_code == 0, result.output
    assert report(result)[0]["tail"] == {
        "kind": tail.kind.label,
        "position": tail.position,
        "length": tail.length,
    }
    assert records(out) == records(src)
    assert not [i for i in read_segment(out) if isinstance(i, Problem)]


# -- partition directories ---------------------------------------------------------------------------


def test_a_partition_directory_becomes_a_new_one(tmp_path: Path) -> None:
    part = tmp_path / "topic-0"
    part.mkdir()
    shutil.copy(FIXTURES / "v1-none.log", part / "00000000000000000000.log")
    shutil.copy(FIXTURES / "00000000000000001000.log", part / "00000000000000001000.log")
    (part / "leader-epoch-checkpoint").write_text("0\n0\n")
    out = tmp_path / "topic-0.v2"
    result = run(part, "-o", out, "--format", "json", "--no-index")
    assert result.exit_code == 0, result.output
    objs = report(result)
    assert [o["type"] for o in objs] == ["convert", "convert", "total"]
    assert objs[2]["after"]["records"] == objs[0]["after"]["records"] + objs[1]["after"]["records"]
    assert sorted(p.name for p in out.iterdir()) == ["00000000000000000000.log", "00000000000000001000.log"]
    for p in out.iterdir():
        assert records(p) == records(part / p.name)
    again = run(part, "-o", out)
    assert again.exit_code == 2 and "--force" in again.stderr
    assert run(part, "-o", out, "--force").exit_code == 0
    same = run(part, "-o", part, "--force")
    assert same.exit_code == 2 and "input" in same.stderr


def test_the_watch_sees_the_whole_input_go_by(src: Path, tmp_path: Path) -> None:
    seen: list[tuple[str, int]] = []

    def watch(items: Iterator[Item]) -> Iterator[Item]:
        for item in items:
            seen.append(progress_position(item))
            yield item

    convert_segment(src, tmp_path / "o.log", ConvertOptions(), index=False, watch=watch)
    assert seen[-1] == (str(src), src.stat().st_size)
    assert [n for _, n in seen] == sorted(n for _, n in seen)


# -- indexes -----------------------------------------------------------------------------------------


def _plain_v1_segment(path: Path, n: int = 400) -> Path:
    """n plain v1 messages of ~120 bytes, offsets 5000.. with a gap, written by kafka-python."""
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    out = bytearray()
    for i in range(n):
        b = LegacyRecordBatchBuilder(1, 0, batch_size=1 << 20)
        b.append(5000 + i + (7 if i > n // 2 else 0), timestamp=1_700_000_000_000 + 10 * i,
                 key=b"k%d" % i, value=b"v" * 90)  # fmt: skip
        out += b.build()
    path.write_bytes(bytes(out))
    return path


@pytest.mark.parametrize("magic", ["2", "1"])
def test_indexes_are_the_writers_for_the_same_entries(tmp_path: Path, magic: str) -> None:
    from kafka_dump.log.writer import write_segment

    src = _plain_v1_segment(tmp_path / "00000000000000005000.log")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / src.name
    result = run(src, "-o", out, "--to-magic", magic, "--batch-bytes", "2000")
    assert result.exit_code == 0, result.output
    index, timeindex = out.with_suffix(".index"), out.with_suffix(".timeindex")
    assert index.stat().st_size > 0 and timeindex.stat().st_size > 0
    # The writer, given the entries the output holds, writes the same indexes.
    again = tmp_path / "again" / src.name
    again.parent.mkdir()
    write_segment(again, [b for b in read_segment(out) if isinstance(b, Batch)])
    assert again.read_bytes() == out.read_bytes()
    assert again.with_suffix(".index").read_bytes() == index.read_bytes()
    assert again.with_suffix(".timeindex").read_bytes() == timeindex.read_bytes()
    # verify-crc's index checks pass.
    events = list(verify_file(out, VerifyOptions(index=True)))
    assert not [e for e in events if isinstance(e, Problem)]
    assert [(e.indexFiles, e.indexProblems) for e in events if isinstance(e, VerifyReport)] == [(2, 0)]
    # Every offset entry points at the start of a batch whose last offset it names.
    starts = {b.position: b.lastOffset for b in read_segment(out) if isinstance(b, Batch)}
    data = index.read_bytes()
    for rel, pos in struct.iter_unpack(">ii", data):
        assert starts[pos] == 5000 + rel


def test_no_index_writes_none_and_an_existing_index_is_refused(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.log"
    assert run(src, "-o", out, "--no-index").exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("out")) == ["out.log"]
    out.unlink()
    out.with_suffix(".timeindex").write_bytes(b"old")
    result = run(src, "-o", out)
    assert result.exit_code == 2 and "out.timeindex" in result.stderr and "--force" in result.stderr
    assert not out.exists() and out.with_suffix(".timeindex").read_bytes() == b"old"
    assert run(src, "-o", out, "--force").exit_code == 0
    assert out.with_suffix(".timeindex").read_bytes() != b"old" and out.with_suffix(".index").exists()
    assert leftovers(tmp_path) == []


def test_level_reaches_the_codec_and_is_checked(tmp_path: Path) -> None:
    src = _plain_v1_segment(tmp_path / "in.log", n=300)
    sizes = {}
    for level in ("1", "9"):
        out = tmp_path / f"gzip{level}.log"
        result = run(src, "-o", out, "--compression", "gzip", "--level", level, "--no-index")
        assert result.exit_code == 0, result.output
        assert records(out) == records(src)
        sizes[level] = out.stat().st_size
    assert sizes["1"] != sizes["9"]
    bad = run(src, "-o", tmp_path / "bad.log", "--compression", "gzip", "--level", "10")
    assert bad.exit_code == 2 and "level 10" in bad.stderr
    # Without --compression, a level goes to the batches whose codec has one: plain ones have none.
    assert run(src, "-o", tmp_path / "plain.log", "--level", "9").exit_code == 0


def test_the_checks_across_entries_stop_what_each_entry_alone_cannot_show(tmp_path: Path) -> None:
    """Two sound batches whose offsets overlap: each entry converts faithfully, the file does not."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    data = bytearray()
    for base in (10, 12):
        b = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, batch_size=1 << 20)
        for i in range(3):
            b.append(i, timestamp=1_700_000_000_000 + i, key=None, value=b"v%d" % i, headers=[])
        entry = bytearray(b.build())
        struct.pack_into(">q", entry, 0, base)
        data += entry
    src = tmp_path / "overlap.log"
    src.write_bytes(bytes(data))
    assert all(b.crcValid for b in read_segment(src) if isinstance(b, Batch))
    out = tmp_path / "out.log"
    result = run(src, "-o", out, "--compression", "gzip", "--no-index")
    assert result.exit_code == 1
    assert "verification failed" in result.stderr and "does not follow" in result.stderr
    assert not out.exists() and leftovers(tmp_path) == []
    # With indexes too: a failed verification, placed.
    result = run(src, "-o", out, "--compression", "gzip")
    assert result.exit_code == 1 and "does not follow" in result.stderr
    assert result.stderr.startswith(f"kdump: error: {out}: byte ")
    assert not out.exists() and leftovers(tmp_path) == []


def test_file_names_never_reach_the_report_as_escape_sequences(tmp_path: Path) -> None:
    src = tmp_path / "evil\x1b[31m.log"
    shutil.copy(FIXTURES / "v1-none.log", src)
    result = run(src, "-o", tmp_path / "out\x1b]0;x\x07.log", "--color", "never")
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "evil\\x1b[31m.log" in result.stdout


def test_the_progress_bar_is_there_only_for_a_terminal_stderr(src: Path, tmp_path: Path) -> None:
    import io

    from kafka_dump.commands.convert import _watch
    from kafka_dump.render.output import Output

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert _watch(Output(stdout=io.StringIO(), stderr=io.StringIO()), 0) is None
    watch = _watch(Output(stdout=io.StringIO(), stderr=Terminal()), 0)
    assert watch is not None
    report = convert_segment(src, tmp_path / "o.log", ConvertOptions(), index=False, watch=watch)
    assert report.after.records == len(records(src)) == report.before.records
