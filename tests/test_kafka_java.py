"""kdump against Apache Kafka 3.8.0's own reader, field by field, on segments Kafka's Java classes wrote.

Each ``X.log`` in ``../shared/fixtures-real/kafka-3.8.0-java/`` comes with ``X.log.check.txt``: what
Kafka's ``FileRecords.batches()``, ``ensureValid()`` and record iteration report for the file (the
format is documented in that folder's README.md). This test renders kdump's view of the same file in
the same line format and compares the two lists of lines, so a failure shows a readable diff.

Three Kafka rules shape the rendering, each mirroring what the reference file prints:

* ``REC valid=`` is ``Record.isValid()``. For v0/v1 that is the message's own CRC-32. For v2 it is
  always true: ``DefaultRecord.isValid()`` returns true because "new versions of the message format
  (2 and above) do not contain an individual record checksum; instead they are validated with the
  checksum at the log entry level" (v2_badcrc.log shows ``valid=true`` records in an invalid batch).
* ``BATCH valid=false(CorruptRecordException)``: ``ensureValid()`` throws CorruptRecordException on
  a checksum mismatch. kdump has no exception there; it yields the batch with ``crcValid=False`` and a
  CORRUPT ``Problem`` at the batch's position. We render the suffix only when that Problem exists, so
  a missing Problem shows up in the diff.
* ``ERROR pos=`` lines (Kafka's iteration threw) have no kdump line of their own; they are taken out
  of the line comparison and checked separately: kdump must report a CORRUPT Problem covering that
  position. Conversely every CORRUPT Problem kdump yields must be explained by an invalid batch or an
  ERROR line. (None of the current files has an ERROR line: Kafka reads all of them, treating the
  truncated tail as trailing bytes, not as an error.)
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, ControlType, Problem, ProblemKind

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures-real"
JAVA = REAL / "kafka-3.8.0-java"

if not JAVA.is_dir():
    pytest.skip(f"{JAVA} is absent (Kafka 3.8.0 reference segments)", allow_module_level=True)

LOGS = sorted(p for p in JAVA.glob("*.log") if (JAVA / f"{p.name}.check.txt").is_file())

# The exception Kafka's ensureValid() throws on a checksum mismatch (DefaultRecordBatch.ensureValid,
# AbstractLegacyRecordBatch.ensureValid -> LegacyRecord.ensureValid).
CRC_EXCEPTION = "CorruptRecordException"
_TAIL_KINDS = (ProblemKind.PARTIAL_TAIL, ProblemKind.ZERO_TAIL)
_ERROR_POS = re.compile(r"^ERROR pos=(\d+)\b")


# --- rendering kdump's view in the check format --------------------------------------------------


def _sha1(data: bytes | None) -> str:
    return "-" if data is None else hashlib.sha1(data).hexdigest()


def _size(data: bytes | None) -> int:
    return -1 if data is None else len(data)


def _header_key(key: bytes) -> str:
    """The README's encoding: percent-encode (lower-case hex) bytes outside printable ASCII and % [ ] , : =."""
    return "".join(chr(b) if 0x20 <= b < 0x7F and chr(b) not in "%[],:=" else f"%{b:02x}" for b in key)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def render_kdump(path: Path) -> tuple[list[str], list[Problem]]:
    """kdump's view of a segment as check-format lines, plus the Problems it yielded."""
    items = list(read_segment(path))
    batches = [x for x in items if isinstance(x, Batch)]
    problems = [x for x in items if isinstance(x, Problem)]
    corrupt_at = {p.position for p in problems if p.kind is ProblemKind.CORRUPT}

    lines = [f"FILE name={path.name} size={path.stat().st_size}"]
    n_records = n_control = n_invalid_records = 0
    for b in batches:
        records = b.records or ()
        legacy = b.magic < 2
        valid = _bool(b.crcValid)
        if not b.crcValid:
            valid += f"({CRC_EXCEPTION})" if b.position in corrupt_at else "(no kdump Problem)"
        lines.append(
            f"BATCH pos={b.position} base={b.baseOffset} last={b.lastOffset} magic={b.magic}"
            f" codec={b.compression.label} count={len(records)}"
            f" hdrCount={'null' if legacy else b.recordCount} size={b.sizeInBytes} crc={b.crc}"
            f" valid={valid} tsType={b.timestampType.label} maxTs={b.maxTimestamp}"
            f" pid={b.producerId} epoch={b.producerEpoch} baseSeq={b.baseSequence}"
            f" lastSeq={b.lastSequence} txn={_bool(b.isTransactional)} control={_bool(b.isControl)}"
            f" ple={b.partitionLeaderEpoch}"
        )
        for r in records:
            rec_valid = bool(r.crcValid) if legacy else True  # DefaultRecord.isValid() is always true
            n_invalid_records += not rec_valid
            headers = ",".join(f"{_header_key(h.key)}:{_size(h.value)}" for h in r.headers)
            line = (
                f"REC off={r.offset} ts={r.timestamp} keySize={_size(r.key)} valueSize={_size(r.value)}"
                f" seq={r.sequence} rsize={r.sizeInBytes} valid={_bool(rec_valid)} headers=[{headers}]"
                f" keySha1={_sha1(r.key)} valueSha1={_sha1(r.value)}"
            )
            if b.isControl:
                n_control += 1
            c = r.control
            if c is not None and c.type in (ControlType.ABORT, ControlType.COMMIT):
                line += f" ctrl={c.type_name} coordEpoch={c.coordinatorEpoch}"
            lines.append(line)
        n_records += len(records)

    valid_batches = sum(b.crcValid for b in batches)
    lines.append(
        f"TOTAL batches={len(batches)} records={n_records} dataRecords={n_records - n_control}"
        f" controlRecords={n_control} validBatches={valid_batches}"
        f" invalidBatches={len(batches) - valid_batches} invalidRecords={n_invalid_records}"
        f" batchBytes={sum(b.sizeInBytes for b in batches)}"
        f" trailingBytes={sum(p.length for p in problems if p.kind in _TAIL_KINDS)}"
        f" firstOffset={batches[0].baseOffset if batches else -1}"
        f" lastOffset={batches[-1].lastOffset if batches else -1}"
        f" magics={'+'.join(sorted({str(b.magic) for b in batches}))}"
        f" codecs={'+'.join(sorted({b.compression.label for b in batches}))}"
    )
    return lines, problems


# --- the reference -------------------------------------------------------------------------------


def read_check(path: Path) -> tuple[list[str], list[int]]:
    """The check file's lines without the ERROR lines, and the positions of those ERROR lines."""
    lines: list[str] = []
    errors: list[int] = []
    for line in (JAVA / f"{path.name}.check.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        m = _ERROR_POS.match(line)
        if m:
            errors.append(int(m.group(1)))
        elif line.startswith("ERROR"):
            raise AssertionError(f"unparsable ERROR line in the check file: {line!r}")
        else:
            lines.append(line)
    return lines, errors


def _covers(p: Problem, pos: int, batch_starts: Iterable[int]) -> bool:
    """Does a Problem account for a Kafka ERROR at ``pos``? Yes if its byte range holds ``pos``, or if
    it starts at the entry that holds ``pos`` (kdump places a record error at its batch when the
    records are compressed, where Kafka may name a position inside)."""
    if p.position <= pos < p.position + max(p.length, 1):
        return True
    entry = max((s for s in batch_starts if s <= pos), default=None)
    return entry is not None and p.position == entry


# --- the tests -----------------------------------------------------------------------------------


def test_fixtures_are_there() -> None:
    assert LOGS, f"no X.log with X.log.check.txt in {JAVA}"


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
def test_kdump_agrees_with_kafka(path: Path) -> None:
    expected, error_positions = read_check(path)
    actual, problems = render_kdump(path)

    # Line for line: FILE, every BATCH and REC, TOTAL. pytest shows the difference as a diff.
    assert actual == expected

    # Kafka's ERROR lines: kdump must yield a CORRUPT Problem at or around each position.
    corrupt = [p for p in problems if p.kind is ProblemKind.CORRUPT]
    starts = [int(line.split()[1].removeprefix("pos=")) for line in expected if line.startswith("BATCH ")]
    for pos in error_positions:
        assert any(_covers(p, pos, starts) for p in corrupt), (
            f"Kafka's iteration failed at byte {pos}; kdump yielded no CORRUPT Problem there: {corrupt}"
        )

    # And every CORRUPT Problem is explained: by a batch Kafka calls invalid, or by an ERROR line.
    invalid_at = {
        int(line.split()[1].removeprefix("pos="))
        for line in expected
        if line.startswith("BATCH ") and " valid=false" in line
    }
    unexplained = [
        p
        for p in corrupt
        if p.position not in invalid_at and not any(_covers(p, pos, starts) for pos in error_positions)
    ]
    assert unexplained == [], "kdump reports corruption where Kafka's reader found none"


def test_tail_kinds_match_the_truncated_file() -> None:
    """v2_truncated.log is v2_lz4.log less 10 bytes: Kafka returns 618 trailing bytes and no error;
    kdump must call them a partial tail (not zeros, not corruption) at the cut batch's position."""
    path = JAVA / "v2_truncated.log"
    if not path.is_file():
        pytest.skip("v2_truncated.log absent")
    problems = [x for x in read_segment(path) if isinstance(x, Problem)]
    assert [(p.kind, p.position, p.length) for p in problems] == [(ProblemKind.PARTIAL_TAIL, 2529, 618)]
