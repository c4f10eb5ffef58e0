"""``render.plain.plain_table`` writes, character for character, what Rich prints for the same table
without colour, or declines (None) and leaves it to Rich; and a clean ``verify-crc`` loads no Rich."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Sequence

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.table import Table
from rich.text import Text

from kafka_dump.cli import main
from kafka_dump.render.output import make_console
from kafka_dump.render.plain import Justify, plain_table
from tests.conftest import FIXTURES, ROOT


def _rich(
    title: str, columns: Sequence[tuple[str, Justify]], rows: Sequence[Sequence[str]], width: int
) -> str:
    out = io.StringIO()
    table = Table(title=title, title_justify="left", header_style="kdump.header")
    for header, justify in columns:
        table.add_column(header, justify=justify)
    for row in rows:
        table.add_row(*(Text(cell, style="kdump.number") for cell in row))
    make_console(out, False, width).print(table)
    return out.getvalue()


_ascii = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12).map(str.strip)
_any = st.text(max_size=12)  # non-ASCII, control characters, spaces at the ends: plain_table declines


@st.composite
def _tables(draw: st.DrawFn) -> tuple[str, list[tuple[str, Justify]], list[list[str]], int]:
    """Mostly tables of printable ASCII (which plain_table writes where they fit), some of any text."""
    cells = draw(st.sampled_from([_ascii] * 4 + [_ascii | _any]))
    columns = draw(st.lists(st.tuples(cells, st.sampled_from(["left", "right"])), min_size=1, max_size=6))
    rows = draw(st.lists(st.lists(cells, min_size=len(columns), max_size=len(columns)), max_size=5))
    return draw(cells), columns, rows, draw(st.integers(min_value=5, max_value=120) | st.just(1000))


@settings(max_examples=400, deadline=None)
@given(_tables())
def test_plain_table_writes_what_rich_prints(
    table: tuple[str, list[tuple[str, Justify]], list[list[str]], int],
) -> None:
    title, columns, rows, width = table
    plain = plain_table(title, columns, rows, width)
    if plain is not None:
        assert plain == _rich(title, columns, rows, width)


def test_the_verify_summary_is_written_plain_at_its_width_and_by_rich_past_it() -> None:
    columns: list[tuple[str, Justify]] = [("file", "left"), ("batches", "right"), ("tail", "left")]
    rows = [["00000000000000000000.log", "1,234", "-"], ["total (2 files)", "", "partial-tail 9 bytes"]]
    width = 1 + (24 + 3) + (7 + 3) + (20 + 3)
    for w in (width, width + 1, 1000):
        assert plain_table("verify-crc", columns, rows, w) == _rich("verify-crc", columns, rows, w)
    assert plain_table("verify-crc", columns, rows, width - 1) is None  # Rich shrinks it: Rich's to do
    assert plain_table("verify-crc", columns, [["é", "1", "-"]], 1000) is None
    assert plain_table("verify-crc", columns, [[" a", "1", "-"]], 1000) is None


@pytest.mark.parametrize("columns", ["", "60", "1000"])
def test_verify_writes_the_table_rich_would(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole output of a run, with the plain table and with Rich's (plain_table declining)."""
    from kafka_dump.commands import verify

    monkeypatch.setenv("COLUMNS", columns)
    args = ["verify-crc", *(str(FIXTURES / f) for f in ("v2-lz4.log", "v1-gzip.log", "partial-tail.log"))]
    outputs = []
    for decline in (False, True):
        if decline:
            monkeypatch.setattr(verify, "plain_table", lambda *args: None)
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    assert ("total (3 files)" in outputs[0]) == (columns != "60")  # at 60 columns Rich wraps it


def test_a_clean_verify_loads_no_rich() -> None:
    code = (
        "import sys\n"
        "from kafka_dump.cli import main\n"
        "sys.argv = ['kdump', 'verify-crc', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'rich'), file=sys.stderr)\n"
    )
    for args in (["--shallow", "v2-lz4.log"], ["v2-lz4.log", "v1-gzip.log"], ["partial-tail.log"]):
        paths = [a if a.startswith("-") else str(FIXTURES / a) for a in args]
        result = subprocess.run(
            [sys.executable, "-c", code, *paths], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert result.stdout.splitlines()[0].startswith("Checking ") or "partial-tail" in args[0]
        loaded = result.stderr.strip().splitlines()[-1]
        assert (loaded == "[]") == ("partial-tail.log" not in args)  # a problem line is Rich's Text


@pytest.mark.parametrize("cell", ["a\nb", "\n", " a", "a ", "a\n ", "é", "\t"])
def test_plain_table_declines_a_cell_rich_would_lay_out(cell: str) -> None:
    """The cells are checked together (one pass over them joined): a line break, a space at an end
    or a character that is not printable ASCII in any one of them still sends the table to Rich."""
    assert plain_table("t", [("a", "left"), ("b", "right")], [["x", "y"], ["z", cell]], 80) is None
    assert plain_table("t", [("a", "left"), ("b", "right")], [["x", "y"], ["z", "w"]], 80) is not None
