"""Renderers take any bytes a producer chose: keys, values, header keys and values, file names.

Through the json and kafka formats, arbitrary data raises nothing and every line stays one
well-formed line: JSON that parses and gives the data back exactly (base64, hex) or as Python's
``backslashreplace`` text; kafka text whose lines, escaped for a terminal, hold no control character.
The JSON writer is the active twin (compiled, or pure under ``KDUMP_PURE=1``; CI runs both).
"""

from __future__ import annotations

import base64
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_dump.model import Batch, Compression, Header, Problem, ProblemKind, Record, TimestampType
from kafka_dump.render.jsonl import JsonRenderer
from kafka_dump.render.kafka_text import KafkaTextRenderer
from kafka_dump.render.payload import PayloadEncoding

# Bytes that break naive output: terminal escapes (ESC, C1 CSI), line breaks, NUL, bidi override,
# quotes and backslashes, invalid and truncated UTF-8, a UTF-8-encoded surrogate.
NASTY = [b"\x1b[2J\x1b]0;x\x07", b"\xc2\x9b31m", b"\n", b"\r\n", b"\x00", b"\xe2\x80\xae", b'"\\', b"\xff\xfe",
         b"\xe2\x82", b"\xed\xa0\x80", b"\x7f", b"\t"]  # fmt: skip
data = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=20).map(str.encode),
    st.lists(st.sampled_from(NASTY), max_size=4).map(b"".join),
)
nullable = st.one_of(st.none(), data)
records = st.lists(
    st.builds(
        Record,
        offset=st.integers(0, 2**63 - 1),
        timestamp=st.integers(-1, 2**63 - 1),
        key=nullable,
        value=nullable,
        headers=st.lists(st.builds(Header, data, nullable), max_size=3).map(tuple),
        sequence=st.integers(-1, 2**31 - 1),
        sizeInBytes=st.integers(0, 2**31 - 1),
        crc=st.integers(0, 2**32 - 1),
        crcValid=st.booleans(),
    ),
    max_size=4,
).map(tuple)
file_names = st.text(alphabet=st.characters(blacklist_categories=()), max_size=12).map(
    lambda t: f"/d/{t}.log"
)


def _batch(file: str, magic: int, found: tuple[Record, ...]) -> Batch:
    return Batch(file, 0, 0, max(len(found) - 1, 0), magic, 0, Compression.NONE, TimestampType.CREATE_TIME,
                 1, 2, -1, -1, -1, -1, 0, False, False, None, 7, True, 100, len(found), found)  # fmt: skip


def _decoded(text: str | None, payload: PayloadEncoding) -> bytes | str | None:
    if text is None or payload is PayloadEncoding.TEXT:
        return text
    return base64.b64decode(text, validate=True) if payload is PayloadEncoding.BASE64 else bytes.fromhex(text)


def _expected(b: bytes | None, payload: PayloadEncoding) -> bytes | str | None:
    return b.decode("utf-8", "backslashreplace") if b is not None and payload is PayloadEncoding.TEXT else b


def _one_json_line(line: bytes) -> dict[str, object]:
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    line.decode("utf-8")  # strict: the line is UTF-8
    obj = json.loads(line)
    assert isinstance(obj, dict)
    return obj


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(file_names, st.sampled_from([0, 1, 2]), records, st.sampled_from(list(PayloadEncoding)), st.text())
def test_json_lines_stay_json_and_give_the_data_back(
    file: str, magic: int, found: tuple[Record, ...], payload: PayloadEncoding, reason: str
) -> None:
    renderer = JsonRenderer(payload)
    (line,) = renderer.batch(_batch(file, magic, found), found)
    obj = _one_json_line(line)
    assert obj["file"] == file
    out = obj["records"]
    assert isinstance(out, list) and len(out) == len(found)
    for r, o in zip(found, out, strict=True):
        assert _decoded(o["key"], payload) == _expected(r.key, payload)
        assert _decoded(o["value"], payload) == _expected(r.value, payload)
        assert [h["key"] for h in o["headers"]] == [
            h.key.decode("utf-8", "backslashreplace") for h in r.headers
        ]
        assert [_decoded(h["value"], payload) for h in o["headers"]] == [
            _expected(h.value, payload) for h in r.headers
        ]
    (problem,) = renderer.problem(Problem(file, 3, 4, ProblemKind.CORRUPT, reason, None))
    assert _one_json_line(problem)["reason"] == reason


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(file_names, st.sampled_from([0, 1, 2]), records, st.booleans(), st.integers(0, 3))
def test_kafka_text_lines_stay_lines(
    file: str, magic: int, found: tuple[Record, ...], print_data: bool, trailing: int
) -> None:
    batch = _batch(file, magic, found)
    # On a terminal (escape=True): one printable line per batch and per record, whatever the data.
    terminal = KafkaTextRenderer(print_data=print_data, escape=True)
    lines = [
        *terminal.file_start(file, 0, None),
        *terminal.batch(batch, found),
        *terminal.file_end(file, trailing),
    ]
    for line in lines:
        assert line.endswith("\n") and line[:-1].isprintable(), repr(line)
    assert sum(line.startswith("| offset: ") for line in lines) == len(found)
    # Piped (escape=False): Kafka's own text, one string per record, the data as Kafka decodes it.
    piped = KafkaTextRenderer(print_data=print_data).batch(batch, found)
    assert len(piped) == 1 + len(found)
    for line, r in zip(piped[1:], found, strict=True):
        assert line.startswith("| offset: ") and line.endswith("\n")
        line.encode("utf-8")  # no lone surrogate: it can be written
        if print_data and r.key is not None:
            assert f" key: {r.key.decode('utf-8', 'replace')}" in line
        if print_data and r.value is not None:
            assert f" payload: {r.value.decode('utf-8', 'replace')}" in line
