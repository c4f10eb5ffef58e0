"""The package root is the library's public face: its names are the ones scripts import."""

from __future__ import annotations

import subprocess
import sys

import pytest

import kafka_dump
from kafka_dump.log.segment import read_segment
from kafka_dump.model import Batch, Compression, Header, Problem, Record
from kafka_dump.wire.encode import encode_entry
from tests.conftest import FIXTURES, ROOT


def test_the_public_names_are_the_library_objects() -> None:
    from kafka_dump import Batch as B
    from kafka_dump import Compression as C
    from kafka_dump import Header as H
    from kafka_dump import Problem as P
    from kafka_dump import Record as R
    from kafka_dump import encode_entry as e
    from kafka_dump import read_segment as r

    assert (r, e, B, R, H, P, C) == (read_segment, encode_entry, Batch, Record, Header, Problem, Compression)
    assert sorted(n for n in kafka_dump.__all__ if n != "__version__") == sorted(kafka_dump._HOMES)


def test_a_script_reads_and_writes_through_the_public_face() -> None:
    """Read a fixture, re-encode each batch, and find the same bytes (a script's round trip)."""
    code = (
        "from kafka_dump import read_segment, encode_entry, Batch\n"
        f"data = open({str(FIXTURES / 'v2-none.log')!r}, 'rb').read()\n"
        f"batches = [b for b in read_segment({str(FIXTURES / 'v2-none.log')!r}) if isinstance(b, Batch)]\n"
        "assert batches and b''.join(encode_entry(b) for b in batches) == data\n"
        "print(sum(len(b.records) for b in batches))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) > 0


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        kafka_dump.no_such_name  # noqa: B018
