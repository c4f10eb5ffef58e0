"""Runs of batches (issue 13): the segment reader hands its items a list at a time, and ``iter_dump``
passes a run of two or more batches on as one ``BatchRun`` when nothing filters them. Both must be
exactly the item-at-a-time stream regrouped: the same batches and problems, in the same order, with
the same counts in the closing summary."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from kafka_dump import native
from kafka_dump.analysis.dump import BatchEvent, BatchRun, FileEnd, FileStart, RangeFilter, Summary, iter_dump
from kafka_dump.errors import KafkaDumpError
from kafka_dump.log.segment import read_segment, read_segment_runs
from kafka_dump.model import Batch, Problem, ProblemKind
from tests.conftest import FIXTURES

SEGMENTS = sorted([*FIXTURES.glob("*.log"), *(FIXTURES / "bad").glob("*.log")])


def _readable(path: Path) -> bool:
    try:
        next(iter(read_segment(path)), None)
    except KafkaDumpError:
        return False
    return True


READABLE = [p for p in SEGMENTS if _readable(p)]


def test_the_fixtures_hold_runs_to_regroup() -> None:
    """Guard: some fixture has a run of several plain v0/v1 messages, so the fast paths are taken."""
    assert any(len(run) > 1 for p in READABLE for run in read_segment_runs(p))


@pytest.mark.parametrize("path", READABLE, ids=lambda p: p.name)
@pytest.mark.parametrize("with_records", [True, False])
def test_runs_are_the_items_regrouped(path: Path, with_records: bool) -> None:
    items = list(read_segment(path, with_records=with_records))
    runs = list(read_segment_runs(path, with_records=with_records))
    assert all(runs) and [item for run in runs for item in run] == items


@pytest.mark.parametrize("path", READABLE, ids=lambda p: p.name)
@pytest.mark.parametrize("with_records", [True, False])
def test_an_unfiltered_dump_is_every_item_once(path: Path, with_records: bool) -> None:
    events = list(iter_dump([str(path)], RangeFilter(), with_records=with_records))
    assert isinstance(events[0], FileStart) and isinstance(events[-2], FileEnd)
    summary = events[-1]
    assert isinstance(summary, Summary)
    shown: list[Batch | Problem] = []
    for event in events[1:-2]:
        if isinstance(event, BatchRun):
            assert len(event.batches) > 1
            shown.extend(event.batches)
        elif isinstance(event, BatchEvent):
            # the batch's records, or None where none could be read (a codec failed)
            assert event.records is event.batch.records or (event.records is None and not event.batch.records)
            shown.append(event.batch)
        else:
            assert isinstance(event, Problem)
            shown.append(event)
    items = list(read_segment(path, with_records=with_records))
    assert shown == items
    batches = [i for i in items if isinstance(i, Batch)]
    problems = [i for i in items if isinstance(i, Problem)]
    assert summary.batches == len(batches)
    assert summary.records == sum(len(b.records or ()) for b in batches)
    assert summary.corrupt == sum(p.kind is ProblemKind.CORRUPT for p in problems)


def test_a_filtered_dump_sends_no_runs() -> None:
    """--limit and the range filters look at each batch: no BatchRun passes them by."""
    path = str(FIXTURES / "mixed-magic.log")
    for rng in (RangeFilter(limit=2), RangeFilter(from_offset=1)):
        assert not any(isinstance(e, BatchRun) for e in iter_dump([path], rng))


@pytest.mark.skipif(native.ACTIVE != "compiled", reason="the compiled decoder builds untracked objects")
@pytest.mark.parametrize("path", READABLE, ids=lambda p: p.name)
def test_compiled_records_are_tracked_only_when_a_field_is(path: Path) -> None:
    """The compiled decoder leaves records and headers out of the cycle collector unless one of their
    fields is itself tracked (and so could close a cycle); and plain v0/v1 batches, whose enum members
    and untracked records cannot refer back to them, out of it too."""
    for item in read_segment(path):
        if not isinstance(item, Batch):
            continue
        if item.magic < 2 and item.compression == 0 and item.crcValid:
            assert not gc.is_tracked(item)
        for r in item.records or ():
            for obj in (r, r.headers, *r.headers):
                fields = [ref for ref in gc.get_referents(obj) if not isinstance(ref, type)]
                assert gc.is_tracked(obj) == any(gc.is_tracked(ref) for ref in fields), obj
