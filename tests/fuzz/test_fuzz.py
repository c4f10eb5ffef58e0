"""The fuzzing harness's small budget, run with the test suite (CI also runs ``python -m tests.fuzz``)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings

from tests.fuzz.harness import available_cases, check, work_dir
from tests.fuzz.mutate import entries, fix_checksums, fuzz_input, seeds

_WORK = work_dir("kdump-fuzz-")
_CASES = available_cases()


@settings(
    max_examples=int(os.environ.get("KDUMP_FUZZ_EXAMPLES", "40")),
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@given(fuzz_input())
def test_every_command_keeps_the_promise(inp: tuple[str, bytes]) -> None:
    description, data = inp
    assert check(data, _WORK, _CASES) == [], description


def test_the_harness_sees_the_commands() -> None:
    """Every case's command and options exist: none is silently left out of the fuzzing."""
    from tests.fuzz.harness import CASES

    assert list(CASES) == _CASES


def test_seeds_frame_and_checksums_round_trip() -> None:
    names = {n for n, _ in seeds()}
    assert {"v2-none.log", "v1-gzip.log", "header-count-1e9.log"} <= names
    for _, data in seeds():
        if entries(data) and entries(data)[-1][1] == len(data):
            # A well-framed fixture with valid CRCs is its own re-checksum; a corrupt-crc one is not.
            fixed = fix_checksums(data)
            assert fix_checksums(fixed) == fixed


def test_the_harness_catches_a_broken_promise() -> None:
    """A harness that cannot fail is a defect: a time bound of 0 must be reported."""
    import tests.fuzz.harness as h

    base = h._SECONDS_BASE
    h._SECONDS_BASE = -1.0
    try:
        assert any("took" in p for p in check(b"", _WORK, ["dump-json"]))
    finally:
        h._SECONDS_BASE = base
