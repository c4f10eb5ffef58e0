"""The progress bar passes every event through unchanged; it is only a view on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from kafka_dump.render import progress


def test_progress_changes_nothing_on_stdout(in_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["dump", "--format", "json", "fixtures/mixed-magic.log", "fixtures/zero-tail.log"]
    plain = CliRunner().invoke(main, args)
    monkeypatch.setattr(progress, "wanted", lambda: True)
    shown = CliRunner().invoke(main, args)
    assert shown.exit_code == plain.exit_code == 0
    assert shown.stdout == plain.stdout
    assert "Traceback" not in shown.stderr


def test_progress_is_wanted_only_for_a_terminal_on_stderr_and_not_on_stdout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Stream:
        def __init__(self, tty: bool) -> None:
            self._tty = tty

        def isatty(self) -> bool:
            return self._tty

    for err_tty, out_tty, expected in [(True, False, True), (True, True, False), (False, False, False)]:
        monkeypatch.setattr("sys.stderr", Stream(err_tty))
        monkeypatch.setattr("sys.stdout", Stream(out_tty))
        assert progress.wanted() is expected


def test_progress_advances_by_the_position_the_caller_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One bar per file, advanced by (file, bytes done); no event type is known to the bar."""
    import io

    from rich.console import Console

    a, b = tmp_path / "a[red].log", tmp_path / "b.log"
    a.write_bytes(b"x" * 1000)
    b.write_bytes(b"y" * 500)
    events = [("a", str(a), 0), ("a", str(a), 400), ("b", str(b), 0), ("b", str(b), 500), ("end", "", -1)]
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100, color_system=None)
    monkeypatch.setattr(progress, "_EVERY", 1)
    where = lambda e: None if e[0] == "end" else (e[1], e[2])  # noqa: E731
    assert list(progress.with_progress(events, where, console)) == events
    shown = screen.getvalue()
    assert "a[red].log" in shown and "b.log" in shown  # file names shown as they are, never as markup
    assert "500/500" in shown  # the last position given for b.log
