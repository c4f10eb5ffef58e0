"""``kdump stats`` without colour writes its tables as ``render/stats.py``'s ``stats_text`` lays them
out, without Rich: the very characters Rich prints for ``stats_renderables``, or None (then Rich).

Held to Rich on every fixture, the bad corpus and the real broker files, alone and as a total, with
and without charts, at several widths; on hostile header keys and file names (Rich must take over,
never a raw byte); and on the command's own output, plain and through Rich. A guard checks the plain
path is the one taken where it can be, so the comparison cannot pass by always answering None.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kafka_dump.analysis.compare import Comparison, downgrade_losses
from kafka_dump.analysis.stats import SegmentStats
from kafka_dump.analysis.stats_walk import iter_stats
from kafka_dump.cli import main
from kafka_dump.model import Compression
from kafka_dump.render.compare import compare_renderables, compare_text
from kafka_dump.render.output import UNWRAPPED, make_console
from kafka_dump.render.stats import stats_renderables, stats_text
from tests.batches import v2_batch
from tests.conftest import FIXTURES, SHARED_REAL

SEGMENTS = sorted([*FIXTURES.glob("*.log"), *(FIXTURES / "bad").glob("*.log")]) + (
    sorted(SHARED_REAL.rglob("*.log"))[:20] if SHARED_REAL.is_dir() else []
)
WIDTHS = [UNWRAPPED, 120, 80, 50]


def _stats(path: Path) -> SegmentStats | None:
    try:
        found = [e for e in iter_stats([path], max_batch_bytes=1 << 20) if isinstance(e, SegmentStats)]
    except Exception:  # a file stats refuses: nothing to lay out
        return None
    return found[0] if found else None


def _rich(s: SegmentStats, width: int, *, total: bool, charts: bool) -> str:
    buffer = io.StringIO()
    console = make_console(buffer, False, width)
    for renderable in stats_renderables(s, total=total, charts=charts):
        console.print(renderable)
    return buffer.getvalue()


@pytest.mark.parametrize("path", SEGMENTS, ids=lambda p: p.name)
def test_the_plain_text_is_what_rich_prints(path: Path) -> None:
    s = _stats(path)
    if s is None:
        pytest.skip("stats refuses this file")
    for width in WIDTHS:
        for total in (False, True):
            for charts in (True, False):
                text = stats_text(s, width, total=total, charts=charts)
                if text is not None:
                    assert text == _rich(s, width, total=total, charts=charts), (width, total, charts)


def test_the_plain_text_is_taken_where_it_can_be() -> None:
    """A guard: on ordinary files, unwrapped or 120 wide, no table needs Rich."""
    for name in ("v1-gzip.log", "v2-lz4.log", "v2-none.log", "mixed-magic.log"):  # no wide header key
        s = _stats(FIXTURES / name)
        assert s is not None
        for width in (UNWRAPPED, 120):
            assert stats_text(s, width) is not None, (name, width)
    assert stats_text(s, 30) is None  # too narrow: Rich shrinks or wraps the tables


def test_hostile_header_keys_and_names_go_to_rich(tmp_path: Path) -> None:
    path = tmp_path / "evil\x1b[31m.log"
    records = [(b"k", b"v", [("\x1b]0;pwn\x07", b"x"), ("naïve", b"y"), ("[bold]k", b"")])]
    path.write_bytes(v2_batch(records))
    s = _stats(path)
    assert s is not None
    assert stats_text(s, UNWRAPPED) is None  # the escaped name and keys are Rich's to lay out
    out = CliRunner().invoke(main, ["stats", str(path)]).stdout
    assert "\x1b" not in out and "\x07" not in out and "[bold]k" in out


@pytest.mark.parametrize("name", ["v1-gzip.log", "v2-headers.log"])
def test_the_command_writes_the_same_with_and_without_rich(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ["stats", str(FIXTURES / name), str(FIXTURES / "v2-none.log")]
    plain = CliRunner().invoke(main, args)
    monkeypatch.setattr("kafka_dump.render.stats.stats_text", lambda *a, **k: None)
    rich = CliRunner().invoke(main, args)
    assert plain.exit_code == rich.exit_code == 0
    assert plain.stdout == rich.stdout and "Total: 2 files" in plain.stdout


def _compared(path: Path, **options: Any) -> tuple[SegmentStats, Comparison] | None:
    from kafka_dump.analysis.compare import CompareOptions

    found: list[Comparison] = []

    def listener(p: Path) -> Comparison:
        found.append(Comparison(CompareOptions(**options), file_bytes=p.stat().st_size))
        return found[-1]

    try:
        stats = [e for e in iter_stats([path], listener=listener) if isinstance(e, SegmentStats)]
    except Exception:  # a file stats refuses: nothing to lay out
        return None
    return (stats[0], found[0].finish()) if stats and found else None


COMPARE_OPTIONS: list[dict[str, Any]] = [
    {
        "codecs": (Compression.NONE, Compression.LZ4),
        "level": None,
        "batch_records": None,
        "batch_bytes": 16384,
    },
    {"codecs": (Compression.GZIP,), "level": 3, "batch_records": 2, "batch_bytes": None, "sample": 1},
]


@pytest.mark.parametrize("path", SEGMENTS[:40], ids=lambda p: p.name)
def test_the_plain_compare_text_is_what_rich_prints(path: Path) -> None:
    for options in COMPARE_OPTIONS:
        found = _compared(path, **options)
        if found is None:
            continue
        s, cmp = found
        losses = downgrade_losses(s)
        for width in WIDTHS:
            text = compare_text(cmp, losses, width)
            if text is not None:
                buffer = io.StringIO()
                console = make_console(buffer, False, width)
                for renderable in compare_renderables(cmp, losses):
                    console.print(renderable)
                assert text == buffer.getvalue(), (width, options)


def test_the_plain_compare_text_is_taken_where_it_can_be() -> None:
    found = _compared(FIXTURES / "v2-headers.log", **COMPARE_OPTIONS[0])
    assert found is not None
    s, cmp = found
    assert compare_text(cmp, downgrade_losses(s), UNWRAPPED) is not None
    assert compare_text(cmp, downgrade_losses(s), 60) is None  # Rich wraps the notes


def test_compare_writes_the_same_with_and_without_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["stats", "--compare", str(FIXTURES / "v2-headers.log"), str(FIXTURES / "mixed-magic.log")]
    plain = CliRunner().invoke(main, args)
    monkeypatch.setattr("kafka_dump.render.compare.compare_text", lambda *a, **k: None)
    monkeypatch.setattr("kafka_dump.render.stats.stats_text", lambda *a, **k: None)
    rich = CliRunner().invoke(main, args)
    assert plain.exit_code == rich.exit_code == 0
    assert plain.stdout == rich.stdout and "What a downgrade loses" in plain.stdout


def test_stats_of_many_files_lays_out_no_rich_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Per file, without colour, neither the stats nor the compare tables go through Rich's layout:
    that layout is what made a partition of many small segments crawl."""
    part = tmp_path / "t-0"
    part.mkdir()
    for i in range(5):
        (part / f"{i * 10:020d}.log").write_bytes(v2_batch([(b"k", b"v", [])] * 10, base_offset=i * 10))
    printed: list[object] = []
    monkeypatch.setattr("kafka_dump.render.output.Output.print", lambda self, r, **k: printed.append(r))
    result = CliRunner().invoke(main, ["stats", "--compare", "--per-file", str(part)])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("Size in every format") == 6 and "Total: 5 files" in result.stdout
    assert printed == []
