"""The model's hand-written frozen classes behave as the frozen, slotted dataclasses they replace.

``Reference*`` below are those dataclasses, as the model declared them; each behaviour a caller can
see (construction, defaults, ``==``, ``hash``, ``repr``, assignment, pickling, ``dataclasses``'
functions) is compared between the two on the same values.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_dump.model import (
    Check,
    ControlRecord,
    Header,
    Problem,
    ProblemKind,
    Record,
    new_header,
    new_record,
)
from tests.conftest import ROOT


@dataclasses.dataclass(frozen=True, slots=True)
class ReferenceHeader:
    key: bytes
    value: bytes | None


@dataclasses.dataclass(frozen=True, slots=True)
class ReferenceRecord:
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    sequence: int
    sizeInBytes: int
    crc: int | None = None
    crcValid: bool | None = None
    control: ControlRecord | None = None
    storedTimestamp: int | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ReferenceProblem:
    file: str
    position: int
    length: int
    kind: ProblemKind
    reason: str
    baseOffset: int | None = None
    check: str = Check.OTHER
    expected: int | None = None
    found: int | None = None


PAIRS = [(Header, ReferenceHeader), (Record, ReferenceRecord), (Problem, ReferenceProblem)]

_opt_bytes = st.none() | st.binary(max_size=6)
_opt_int = st.none() | st.integers(-(2**63), 2**63)
_headers = st.lists(st.builds(new_header, st.binary(max_size=4), _opt_bytes), max_size=2).map(tuple)
_controls = st.none() | st.builds(ControlRecord, st.integers(0, 9), st.integers(0, 3), _opt_int)
_record_args = st.tuples(
    st.integers(-1, 2**63),
    st.integers(-1, 2**62),
    _opt_bytes,
    _opt_bytes,
    _headers,
    st.integers(-1, 2**31),
    st.integers(0, 2**31),
    _opt_int,
    st.none() | st.booleans(),
    _controls,
    _opt_int,
)
_problem_args = st.tuples(
    st.text(max_size=8),
    st.integers(0, 2**40),
    st.integers(0, 2**40),
    st.sampled_from(ProblemKind),
    st.text(max_size=12),
    _opt_int,
    st.sampled_from([Check.OTHER, Check.CRC_MISMATCH, Check.ZERO_TAIL]),
    _opt_int,
    _opt_int,
)


def _same_behaviour(ours: Any, ref: Any, other_ours: Any, other_ref: Any) -> None:
    name, ref_name = type(ours).__qualname__, type(ref).__qualname__
    assert repr(ours) == repr(ref).replace(ref_name, name, 1)
    assert (ours == other_ours) == (ref == other_ref)
    assert (ours != other_ours) == (ref != other_ref)
    assert hash(ours) == hash(ref)
    assert (ours == 1) == (ref == 1) is False
    assert ours.__eq__(ref) is NotImplemented  # another class is never equal, as for a dataclass
    assert dataclasses.asdict(ours) == dataclasses.asdict(ref)
    assert dataclasses.astuple(ours) == dataclasses.astuple(ref)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(ours, protocol)) == ours
    assert copy.copy(ours) == ours == copy.deepcopy(ours)


@given(_record_args, _record_args)
def test_a_record_behaves_as_the_dataclass(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    _same_behaviour(Record(*a), ReferenceRecord(*a), Record(*b), ReferenceRecord(*b))
    _same_behaviour(new_record(*a), ReferenceRecord(*a), Record(*a), ReferenceRecord(*a))
    assert Record(*a[:7]) == Record(*a[:7], None, None, None, None)
    changed = dataclasses.replace(Record(*a), offset=b[0], control=b[9])
    assert changed == Record(b[0], *a[1:9], b[9], a[10])


@given(_problem_args, _problem_args)
def test_a_problem_behaves_as_the_dataclass(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
    _same_behaviour(Problem(*a), ReferenceProblem(*a), Problem(*b), ReferenceProblem(*b))
    assert Problem(*a[:5]) == Problem(*a[:5], None, Check.OTHER, None, None)
    assert str(Problem(*a)) == f"{a[0]}: byte {a[1]}: {a[4]}"
    assert dataclasses.replace(Problem(*a), reason=b[4]) == Problem(*a[:4], b[4], *a[5:])


@given(st.binary(max_size=4), _opt_bytes, st.binary(max_size=4), _opt_bytes)
def test_a_header_behaves_as_the_dataclass(k: bytes, v: bytes | None, k2: bytes, v2: bytes | None) -> None:
    _same_behaviour(Header(k, v), ReferenceHeader(k, v), Header(k2, v2), ReferenceHeader(k2, v2))
    assert new_header(k, v) == Header(k, v)


@pytest.mark.parametrize(("ours", "ref"), PAIRS)
def test_the_classes_have_the_dataclass_s_shape(ours: type[Any], ref: type[Any]) -> None:
    assert str(inspect.signature(ours)).replace("'", "") == str(inspect.signature(ref)).replace("'", "")
    assert ours.__slots__ == ours.__match_args__ == ref.__match_args__ == tuple(ref.__slots__)
    assert dataclasses.is_dataclass(ours)
    assert [(f.name, f.default) for f in dataclasses.fields(ours)] == [
        (f.name, f.default) for f in dataclasses.fields(ref)
    ]
    assert not hasattr(ours(*_some_args(ours)), "__dict__")


def _some_args(cls: type[Any]) -> tuple[Any, ...]:
    return {
        Header: (b"k", None),
        Record: (1, 2, b"k", b"v", (), -1, 9),
        Problem: ("f", 0, 1, ProblemKind.CORRUPT, "r"),
    }[cls]


@pytest.mark.parametrize(("ours", "ref"), PAIRS)
def test_fields_cannot_be_assigned_or_deleted(ours: type[Any], ref: type[Any]) -> None:
    mine, theirs = ours(*_some_args(ours)), ref(*_some_args(ours))
    for obj in (mine, theirs):
        name = type(obj).__match_args__[0]
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{name}'"):
            setattr(obj, name, 1)
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{name}'"):
            delattr(obj, name)
    with pytest.raises(AttributeError):
        mine.not_a_field = 1  # no __dict__ to put it in


def test_a_subclass_keeps_the_base_s_fields() -> None:
    class Sub(Record):
        __slots__ = ("extra",)

    sub = Sub(1, 2, b"k", None, (), 3, 4)
    sub.extra = [sub]  # not a field: a subclass's own slot is assignable, as on a dataclass's subclass
    assert dataclasses.replace(sub, offset=5).offset == 5
    assert [f.name for f in dataclasses.fields(sub)] == list(Record.__match_args__)
    assert sub != Record(1, 2, b"k", None, (), 3, 4)  # another class


def test_importing_the_model_does_not_load_dataclasses() -> None:
    """The point of writing the classes out: no dataclass is made (nor ``dataclasses`` imported) at import."""
    code = "import sys, kafka_dump.model; print('dataclasses' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.stdout == "False\n", result.stderr
