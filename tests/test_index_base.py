"""One rule for the offset a free-form segment name's indexes count from (``index_base_offset``):
the first batch's base offset, in the writer, in ``convert`` and in every reader of an index."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kafka_dump.cli import main
from kafka_dump.log.index import IndexCheck, index_base_offset, seek_position
from kafka_dump.log.segment import read_segment
from kafka_dump.log.sidefiles import OffsetIndexEntry, read_side_file
from kafka_dump.log.writer import write_segment
from kafka_dump.model import Batch

from .batches import default_records, v2_batch

FIRST = 5_000_000_000  # past 2**32: an index relative to 0 cannot even hold these offsets


def far_segment(path: Path) -> Path:
    """40 batches of 10 records from offset FIRST: about 90 KiB, so the indexes get entries."""
    path.write_bytes(b"".join(
        v2_batch(default_records(10, seed=i, compressible=True), base_offset=FIRST + 10 * i) for i in range(40)
    ))  # fmt: skip
    return path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout


def summary(path: Path) -> dict[str, object]:
    code, out = invoke("verify-crc", "--format", "json", str(path))
    assert code == 0, out
    result: dict[str, object] = json.loads(out.splitlines()[-1])
    return result


def test_convert_to_a_free_form_name_verifies_clean(tmp_path: Path) -> None:
    src = far_segment(tmp_path / "in.log")
    for name in ("out.log", "00000000004999999990.log"):
        out = tmp_path / name
        code, _ = invoke("convert", str(src), "-o", str(out))
        assert code == 0
        assert summary(out)["indexFiles"] == 2 and summary(out)["indexProblems"] == 0
    # A Kafka-named input whose first batch is past its name's offset (compaction), to a free-form name.
    named = far_segment(tmp_path / "00000000004999999000.log")
    code, _ = invoke("convert", str(named), "-o", str(tmp_path / "from-named.log"))
    assert code == 0 and summary(tmp_path / "from-named.log")["indexProblems"] == 0


def test_every_reader_counts_a_free_form_index_from_the_first_batch(tmp_path: Path) -> None:
    batches = [b for b in read_segment(far_segment(tmp_path / "src.log")) if isinstance(b, Batch)]
    log = tmp_path / "copy.log"
    write_segment(log, batches)
    assert index_base_offset(log) == FIRST
    assert index_base_offset(tmp_path / "00000000000000000042.log") == 42  # the name, without a read
    assert index_base_offset(tmp_path / "missing.log") == 0
    entries = [e for e in read_side_file(log.with_suffix(".index")) if isinstance(e, OffsetIndexEntry)]
    assert entries and all(e.offset > FIRST for e in entries)
    check = IndexCheck(log)
    for b in batches:
        check.batch(b)
    assert check.finish() == []
    target = FIRST + 305
    position = seek_position(log, from_offset=target, from_time=None)
    assert position > 0
    first = next(b for b in read_segment(log, start=position) if isinstance(b, Batch))
    assert first.baseOffset <= target <= batches[-1].lastOffset
