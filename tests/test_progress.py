"""The progress bar (render/progress.py): when it appears, what it says, and that it changes no output.

The bar on a real terminal, for every command, is tested in tests/test_pipes.py.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from kafka_dump.cli import main
from kafka_dump.render import output
from kafka_dump.render.output import Output
from kafka_dump.render.progress import Bar, binary_size, delay_from


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    encoding = "utf-8"  # type: ignore[assignment]

    def isatty(self) -> bool:
        return True


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    a, b = tmp_path / "a[red]\x1b[2J.log", tmp_path / "b.log"
    a.write_bytes(b"x" * 1000)
    b.write_bytes(b"y" * 3000)
    return str(a), str(b)


def test_nothing_is_drawn_before_the_delay_and_all_is_erased_at_the_end(files: tuple[str, str]) -> None:
    clock, screen = Clock(), Terminal()
    bar = Bar(screen, 80, 4000, delay=1.0, clock=clock)
    steps = iter([0.2, 0.5, 0.2, 0.4, 0.3])  # seconds passed before each event

    def where(e: tuple[str, int]) -> tuple[str, int]:
        clock.now += next(steps)
        return e

    events = [(files[0], 0), (files[0], 1000), (files[1], 500), (files[1], 2000), (files[1], 3000)]
    seen = []
    for event in bar.track(events, where):
        seen.append((event, screen.getvalue()))
    assert [e for e, _ in seen] == events
    assert [shown for _, shown in seen[:3]] == ["", "", ""]  # 0.9 s of work: no bar yet
    drawn = seen[3][1]  # 1.3 s: the bar, with 1000 + 2000 bytes of 4000 done
    assert drawn.startswith("\rb.log ") and drawn.endswith(" left\x1b[K")
    assert "2.9 KiB of 3.9 KiB · 2.3 KiB/s · 0:00 left" in drawn
    assert screen.getvalue().endswith("\r\x1b[K")  # erased when done


def test_each_file_is_its_own_total_when_none_is_given(files: tuple[str, str]) -> None:
    clock, screen = Clock(), Terminal()
    bar = Bar(screen, 120, delay=0, clock=clock)
    bar.at(files[0], 0)
    clock.now += 1
    bar.at(files[1], 1500)
    assert "1.5 KiB of 2.9 KiB" in screen.getvalue().rsplit("\r", 1)[-1]


@pytest.mark.parametrize("columns", [20, 40, 60, 80, 200])
def test_the_line_fits_the_terminal_and_a_name_is_shown_as_data(files: tuple[str, str], columns: int) -> None:
    clock, screen = Clock(), Terminal()
    bar = Bar(screen, columns, 4000, delay=0, clock=clock)
    clock.now += 2
    bar.at(files[0], 400)
    line = screen.getvalue()
    assert (
        line.startswith("\r") and line.endswith("\x1b[K") and line.count("\x1b") == 1
    )  # the name's ESC escaped
    assert cell_len(line[1:-3]) < columns
    if columns >= 80:
        assert line.startswith("\ra[red]\\x1b[2J.log ━")


def test_clear_erases_a_shown_bar_once() -> None:
    screen = Terminal()
    bar = Bar(screen, 80, 10, delay=0, clock=Clock())
    bar.clear()
    assert screen.getvalue() == ""
    bar.at("x.log", 5)
    bar.clear()
    bar.clear()
    assert screen.getvalue().endswith(" left\x1b[K\r\x1b[K")


def test_binary_sizes() -> None:
    assert [binary_size(n) for n in (0, 1023, 1024, 5 * 1024**2 + 1, 3 * 1024**4)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "5.0 MiB",
        "3.0 TiB",
    ]


def test_the_delay_is_a_second_unless_the_environment_says() -> None:
    assert delay_from({}) == 1.0
    assert delay_from({"KDUMP_PROGRESS_DELAY": "0"}) == 0.0
    assert delay_from({"KDUMP_PROGRESS_DELAY": "soon"}) == 1.0


def test_a_bar_is_wanted_on_a_terminal_stderr_unless_stdout_is_a_pipe(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        with open(write_end, "w", closefd=False) as pipe, open(tmp_path / "out.txt", "w") as file:
            for stdout, err_tty, expected in [
                (pipe, True, False),
                (file, True, True),
                (Terminal(), True, True),
                (file, False, False),
            ]:
                stderr = Terminal() if err_tty else io.StringIO()
                assert Output(stdout=stdout, stderr=stderr, environ={}).progress is expected
                for forced in (True, False):
                    assert (
                        Output(stdout=stdout, stderr=stderr, environ={}, progress=forced).progress is forced
                    )
    finally:
        os.close(read_end)
        os.close(write_end)


def test_output_erases_the_bar_before_it_writes_to_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "_size_of", lambda s: 80)
    screen = Terminal()
    out = Output("never", stdout=screen, stderr=screen, environ={"KDUMP_PROGRESS_DELAY": "0"})
    for _ in out.track([1], lambda e: ("x.log", 0)):
        out.write("row\n")
    assert screen.getvalue().endswith("left\x1b[K\r\x1b[Krow\n")


@pytest.mark.parametrize("command", ["dump", "stats", "verify-crc"])
def test_progress_changes_nothing_on_stdout(in_root: Path, command: str) -> None:
    args = [command, "--format", "json", "fixtures/mixed-magic.log", "fixtures/zero-tail.log"]
    plain = CliRunner().invoke(main, [*args, "--no-progress"])
    shown = CliRunner().invoke(main, [*args, "--progress"], env={"KDUMP_PROGRESS_DELAY": "0"})
    assert shown.exit_code == plain.exit_code == 0
    assert shown.stdout == plain.stdout
    assert "Traceback" not in shown.stderr and " left\x1b[K" in shown.stderr


def test_an_object_fetched_before_it_is_read_shows_its_bytes_chunks_and_place() -> None:
    clock, screen = Clock(), Terminal()
    bar = Bar(screen, 200, delay=0, files=3, clock=clock)
    bar.fetching("s3://b/t-AAAAAAAAAAAAAAAAAAAAAQ/3/a.log", 0, 4 << 20, "0 of 4 chunks")
    clock.now += 2
    bar.fetching("s3://b/t-AAAAAAAAAAAAAAAAAAAAAQ/3/a.log", 1 << 20, 4 << 20, "1 of 4 chunks")
    line = screen.getvalue().rsplit("\r", 1)[-1]
    assert line.startswith("a.log ━━━━━─")
    assert "object 1 of 3 · fetching 1.0 MiB of 4.0 MiB · 1 of 4 chunks · 512.0 KiB/s · 0:06 left" in line
    clock.now += 1
    bar.at("s3://b/t-AAAAAAAAAAAAAAAAAAAAAQ/3/a.log", 4 << 20)  # then read: the reader's own line
    assert "fetching" not in screen.getvalue().rsplit("\r", 1)[-1]
    clock.now += 1
    bar.fetching("s3://b/t-AAAAAAAAAAAAAAAAAAAAAQ/3/b.log", 0, 100, "")  # the next object
    assert "object 2 of 3 · fetching 0 B of 100 B · 0 B/s" in screen.getvalue().rsplit("\r", 1)[-1]


def test_the_bar_follows_a_tiered_object_restored_chunk_by_chunk(tmp_path: Path) -> None:
    from tests.tiered_writer import upload

    data = (Path(__file__).parent.parent / "fixtures" / "v2-gzip.log").read_bytes()
    log = upload(data, tmp_path, chunk_size=100)
    chunks = -(-len(data) // 100)
    result = CliRunner().invoke(
        main,
        ["verify-crc", "--progress", str(log)],
        env={"KDUMP_PROGRESS_DELAY": "0"},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    # the first line (redrawn at most ten times a second): before the first chunk, with the chunks to come
    assert (
        f"\r00000000000000000000… fetching 0 B of {binary_size(len(data))} · 0 of {chunks} chunks"
        in result.stderr
    )
    assert result.stderr.endswith("\r\x1b[K")
    from kafka_dump.log import copies

    assert copies._WATCHER is None  # the bar no longer follows copies once the command is done
