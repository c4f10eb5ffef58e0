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
