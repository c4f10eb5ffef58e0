"""The one output path (render/output.py): widths, colour, text and bytes in order, diagnostics."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from kafka_dump.render import output
from kafka_dump.render.output import Output, color_wanted, terminal_width


class Stream(io.StringIO):
    """A text stream that says whether it is a terminal, with a bytes buffer under it."""

    def __init__(self, tty: bool = False) -> None:
        super().__init__()
        self._tty = tty
        self.raw = io.BytesIO()

    def isatty(self) -> bool:
        return self._tty

    @property
    def buffer(self) -> io.BytesIO:  # type: ignore[override]
        return self.raw


def test_columns_overrides_everything() -> None:
    assert terminal_width(Stream(True), {"COLUMNS": "77"}) == 77
    assert terminal_width(Stream(False), {"COLUMNS": "77"}) == 77


@pytest.mark.parametrize("bad", ["", "0", "-3", "wide"])
def test_a_bad_columns_is_ignored(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "_size_of", lambda s: 91)
    assert terminal_width(Stream(), {"COLUMNS": bad}) is None
    assert terminal_width(Stream(True), {"COLUMNS": bad}) == 91


def test_off_a_terminal_nothing_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipe or a file gets rows at their natural width, whatever terminal stderr is (tests/test_pipes.py)."""
    monkeypatch.setattr(output, "_size_of", lambda s: 91)
    assert terminal_width(Stream(False), {}) is None
    o = Output("never", stdout=Stream(False), stderr=Stream(True), environ={})
    assert o.width is None and o.err_console.width == 91  # stderr's own lines fit stderr's terminal


@pytest.mark.parametrize(
    ("mode", "tty", "env", "expected"),
    [
        ("auto", True, {}, True),
        ("auto", False, {}, False),
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"TERM": "dumb"}, False),
        ("auto", False, {"FORCE_COLOR": "1"}, True),
        ("always", False, {"NO_COLOR": "1"}, True),
        ("never", True, {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour(mode: str, tty: bool, env: dict[str, str], expected: bool) -> None:
    assert color_wanted(mode, Stream(tty), env) is expected  # type: ignore[arg-type]


def test_text_and_bytes_keep_their_order() -> None:
    out, err = Stream(), Stream()
    o = Output("never", stdout=out, stderr=err, environ={"COLUMNS": "80"})
    o.write("a\n")
    o.write_bytes(b"b\n")
    o.write_lines(["c\n"])
    o.flush()
    # The text layer here is a StringIO: what matters is that each switch flushed the other side.
    assert out.getvalue() == "a\nc\n" and out.raw.getvalue() == b"b\n"


def test_diagnostic_is_one_escaped_line_on_stderr() -> None:
    out, err = Stream(), Stream()
    Output("never", stdout=out, stderr=err).diagnostic("bad\x1b[2J file\nname")
    assert err.getvalue() == "kdump: bad\\x1b[2J file\\nname\n"
    assert out.getvalue() == ""


def test_console_never_reads_markup() -> None:
    out = Stream()
    Output("never", stdout=out, stderr=Stream(), environ={"COLUMNS": "80"}).print("[bold]x[/bold] [/]")
    assert out.getvalue() == "[bold]x[/bold] [/]\n"


def test_console_uses_the_theme_and_the_colour_choice() -> None:
    from rich.text import Text

    out = Stream()
    Output("always", stdout=out, stderr=Stream(), environ={"COLUMNS": "80"}).print(
        Text("x", style="kdump.problem")
    )
    assert out.getvalue() == "\x1b[1;31mx\x1b[0m\n"


def test_a_regular_file_is_never_cut_to_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "_size_of", lambda s: 91)
    with open(tmp_path / "out.txt", "w") as f:
        assert terminal_width(f, {}) is None
        assert terminal_width(f, {"COLUMNS": "70"}) == 70


@pytest.mark.parametrize("encoding", ["utf-8", "UTF8", "utf-16", "latin-1"])
def test_utf8_lines_keep_the_streams_encoding_and_order(encoding: str) -> None:
    """The bulk table's UTF-8 lines go straight to the byte buffer only when the stream writes UTF-8."""
    stream = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="replace")
    o = Output("never", stdout=stream, stderr=Stream(), environ={"COLUMNS": "80"})
    o.write("a\n")
    o.write_utf8_lines(["│ b é\n".encode(), b"c\n"])
    o.write("d\n")
    o.flush()
    assert stream.buffer.getvalue() == "a\n│ b é\nc\nd\n".encode(encoding, "replace")  # type: ignore[attr-defined]
