"""The adversarial corpus of ``fixtures/bad/`` (issue 11), checked by name.

Each file was crafted by ``fixtures/bad/make_bad.py``; this table says what kdump must make of it
with ``dump --format json``: the exit code, and the first problem's kind, byte position and the words
its reason must hold. Good batches after a damaged one must still be read (``batches``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from tests.conftest import FIXTURES

BAD = FIXTURES / "bad"
ENV = {"COLUMNS": "120", "NO_COLOR": "1"}

# name: (exit code, batches read, (kind, position, words in the reason) of the first problem or None)
EXPECTED: dict[str, tuple[int, int, tuple[str, int, str] | None]] = {
    "empty.log": (0, 0, None),  # a new segment is empty: nothing to report
    "one-byte.log": (0, 0, ("partial-tail", 0, "partial entry")),
    "eleven-bytes.log": (0, 0, ("partial-tail", 0, "partial entry")),
    "all-zeros.log": (0, 0, ("zero-tail", 0, "zero bytes")),
    "magic-3.log": (1, 1, ("corrupt", 0, "magic 3")),
    "magic-255.log": (1, 1, ("corrupt", 0, "magic 255")),
    "length-0.log": (1, 1, ("corrupt", 0, "size 0")),
    "length-minus-1.log": (1, 1, ("corrupt", 0, "size -1")),
    "length-max.log": (1, 1, ("corrupt", 0, "size 2147483647")),
    "count-max.log": (1, 2, ("corrupt", 61, "2147483647")),
    "key-length-minus-2.log": (1, 2, ("corrupt", 61, "")),
    "key-length-past-record.log": (1, 2, ("corrupt", 61, "key length 200")),
    "header-count-minus-1.log": (1, 2, ("corrupt", 61, "header count -1")),
    "header-count-1e9.log": (1, 2, ("corrupt", 61, "header count 1000000000")),
    "varint-10-bytes.log": (0, 2, None),  # a 10-byte varlong is long but legal (Kafka reads it)
    "varint-11-bytes.log": (1, 2, ("corrupt", 61, "varint")),
    "codec-5.log": (1, 2, ("corrupt", 0, "codec")),
    "codec-6.log": (1, 2, ("corrupt", 0, "codec")),
    "codec-7.log": (1, 2, ("corrupt", 0, "codec")),
    "zstd-in-v1-wrapper.log": (1, 2, ("corrupt", 0, "compression type 4")),
    "lz4-bad-magic.log": (1, 2, ("corrupt", 0, "LZ4 frame magic")),
    "lz4-truncated-block.log": (1, 2, ("corrupt", 0, "lz4")),
    "snappy-block-past-end.log": (1, 2, ("corrupt", 0, "snappy")),
    "nested-compressed-wrapper.log": (1, 2, ("corrupt", 0, "itself compressed")),
    "empty-wrapper.log": (1, 2, ("corrupt", 0, "no inner messages")),
    "control-short-key.log": (1, 2, ("corrupt", 0, "shorter than 4 bytes")),
    "control-negative-version.log": (1, 2, ("corrupt", 0, "negative version")),
    "timestamp-minus-2.log": (0, 2, None),
    "timestamp-long-max.log": (0, 2, None),
    "offsets-backwards.log": (0, 2, None),  # dump shows what is there; verify-crc judges the order
}
NOT_A_SEGMENT = ("index-as-log.log", "random-bytes.log")


def dump(path: Path, *extra: str) -> tuple[int, list[dict[str, Any]], str]:
    res = CliRunner().invoke(
        main, ["dump", "--format", "json", "--payload", "hex", *extra, str(path)], env=ENV
    )
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, [json.loads(line) for line in res.stdout.splitlines()], res.stderr


def test_the_corpus_is_complete() -> None:
    made = {p.name for p in BAD.glob("*.log")}
    assert made == {*EXPECTED, *NOT_A_SEGMENT, "gzip-bomb.log", "lz4-linked-bomb.log"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_file(name: str) -> None:
    code, objs, _ = dump(BAD / name)
    want_code, want_batches, want_problem = EXPECTED[name]
    assert code == want_code
    assert sum(o["type"] == "batch" for o in objs) == want_batches
    found = [o for o in objs if o["type"] == "problem"]
    if want_problem is None:
        assert found == []
        return
    kind, position, words = want_problem
    first = found[0]
    assert (first["kind"], first["position"]) == (kind, position)
    assert words in first["reason"]
    size = (BAD / name).stat().st_size
    assert all(p["position"] >= 0 and p["position"] + p["length"] <= size for p in found)


@pytest.mark.parametrize("name", NOT_A_SEGMENT)
def test_not_a_segment(name: str) -> None:
    code, objs, err = dump(BAD / name)
    assert (code, objs) == (2, [])
    assert err.count("\n") == 1 and name in err and "not a Kafka log segment" in err


def test_gzip_bomb_is_cut_off_in_bounded_memory() -> None:
    """1 GiB of zeros in 1 MB of gzip: cut at --max-batch-bytes, and the batch after it is read."""
    code, objs, _ = dump(BAD / "gzip-bomb.log", "--max-batch-bytes", str(8 << 20))
    assert code == 1
    (problem,) = [o for o in objs if o["type"] == "problem"]
    assert problem["position"] == 0 and "--max-batch-bytes" in problem["reason"]
    assert [o["baseOffset"] for o in objs if o["type"] == "batch"][-1] == 1


def test_linked_lz4_blocks_take_linear_time() -> None:
    """1,024 linked LZ4 blocks: each refers back at most 64 KiB (a join of every block was quadratic)."""
    code, objs, _ = dump(BAD / "lz4-linked-bomb.log", "--max-batch-bytes", str(32 << 20))
    assert code == 1
    (problem,) = [o for o in objs if o["type"] == "problem"]
    assert "--max-batch-bytes" in problem["reason"]


def test_more_than_2_gib_sparse(tmp_path: Path) -> None:
    """A segment past 2 GiB (a hole in the middle) is read through, not into memory."""
    good = (FIXTURES / "v2-none.log").read_bytes()
    path = tmp_path / "00000000000000000000.log"
    with open(path, "wb") as f:
        f.write(good)
        f.truncate(2**31 + 4096)
    if os.stat(path).st_blocks * 512 > 1 << 20:
        pytest.skip("this file system does not make sparse files")
    code, objs, _ = dump(path)
    assert code == 0
    assert objs[-1]["kind"] == "zero-tail" and objs[-1]["position"] == len(good)
