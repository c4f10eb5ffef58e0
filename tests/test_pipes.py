"""Pipes and terminals: the width of piped output, the exit code when the reader of stdout leaves or
Ctrl-C comes, and the progress bar.

Every test runs kdump as a child process in a session of its own, so no terminal reaches it but the
pseudo-terminals a test gives it: as stderr (and stdout), or as its controlling terminal (``/dev/tty``)
alone. ``KDUMP_PROGRESS_DELAY=0`` lets the bar start at once, as after a second of a long run.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import tty
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from rich.cells import cell_len

from tests.conftest import FIXTURES, ROOT


@dataclass
class Run:
    code: int
    stdout: bytes
    stderr: bytes  # what stderr received: a pipe's bytes, or what the terminal was sent


def _pty(columns: int) -> tuple[int, int]:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    tty.setraw(slave)  # no output processing: the bytes the terminal is sent, as sent
    return master, slave


def _drain(fd: int, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:  # EIO: every holder of the other end closed it
                return
            if not chunk:
                return
            into.append(chunk)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def kdump(
    *args: str,
    err_tty: bool = False,
    dev_tty: bool = False,
    columns: int = 80,
    env: Mapping[str, str] | None = None,
    stdout: Literal["pipe", "file", "tty"] = "pipe",
) -> Run:
    """``kdump ARGS`` with stdout a pipe (or a regular file, or the terminal stderr is); stderr a
    pipe or (``err_tty``) a pseudo-terminal of ``columns``; with ``dev_tty``, a pseudo-terminal of
    ``columns`` as its controlling terminal only. With ``stdout="tty"`` what the terminal is sent is
    ``stderr``."""
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    base.update(PYTHONPATH=str(ROOT), TERM="xterm-256color", **(env or {}))
    master = slave = -1
    if err_tty or dev_tty:
        master, slave = _pty(columns)
    preexec: Callable[[], None] | None = None
    if dev_tty:
        tty_fd = slave

        def preexec() -> None:  # the new session's controlling terminal: what /dev/tty opens
            fcntl.ioctl(tty_fd, termios.TIOCSCTTY, 0)

    with tempfile.TemporaryFile() as file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kafka_dump", *args],
            stdin=subprocess.DEVNULL,
            stdout={"pipe": subprocess.PIPE, "file": file, "tty": slave}[stdout],
            stderr=slave if err_tty else subprocess.PIPE,
            env=base,
            cwd=ROOT,
            start_new_session=True,
            pass_fds=(slave,) if dev_tty else (),
            preexec_fn=preexec,
        )
        seen: list[bytes] = []
        thread = None
        if slave >= 0:
            os.close(slave)
            thread = _drain(master, seen)
        out, err = proc.communicate(timeout=120)
        if thread is not None:
            thread.join(timeout=10)
            os.close(master)
        if stdout == "file":
            file.seek(0)
            out = file.read()
    return Run(proc.returncode, out or b"", b"".join(seen) if err_tty else err)


def _widest(text: bytes) -> int:
    return max(cell_len(line) for line in text.decode().splitlines())


# -- stdout a pipe: rows at their natural width ------------------------------------------------------

WIDE = str(FIXTURES / "v2-headers.log")  # rows wider than 140 columns when nothing cuts them


@pytest.mark.parametrize("where", ["stderr", "dev_tty"])
def test_a_pipe_gets_rows_at_their_natural_width_whatever_terminal_is_attached(where: str) -> None:
    alone = kdump(WIDE)
    assert alone.code == 0 and _widest(alone.stdout) > 140
    attached = kdump(WIDE, err_tty=where == "stderr", dev_tty=where == "dev_tty", columns=80)
    assert attached.code == 0
    assert attached.stdout == alone.stdout  # the same bytes as with no terminal at all: nothing cut


def test_columns_still_sets_the_width_of_a_pipe() -> None:
    run = kdump(WIDE, err_tty=True, columns=200, env={"COLUMNS": "70"})
    rows = [line for line in run.stdout.decode().splitlines() if line.startswith("│")]
    assert rows and all(cell_len(line) == 70 for line in rows)


@pytest.mark.parametrize("args", [("stats",), ("verify-crc",), ("dump", "--format", "kafka")], ids=" ".join)
def test_every_command_writes_a_pipe_as_with_no_terminal(args: tuple[str, ...]) -> None:
    alone = kdump(*args, WIDE)
    attached = kdump(*args, WIDE, err_tty=True, dev_tty=True, columns=60)
    assert (attached.code, attached.stdout) == (alone.code, alone.stdout)


# -- no row padded to a width: COLUMNS=1000 adds no trailing spaces ----------------------------------

_SGR_CODES = re.compile(rb"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("color", ["never", "always"])
@pytest.mark.parametrize("stdout", ["pipe", "tty"])
@pytest.mark.parametrize(
    "args",
    [
        ("dump",),
        ("dump", "-x"),
        ("dump", "--batches-only"),
        ("verify-crc", "--all"),
        ("stats",),
        ("stats", "--compare"),
        ("convert", "--skip-corrupt", "--force"),
    ],
    ids=" ".join,
)
def test_no_line_is_padded_with_spaces_to_a_width(
    args: tuple[str, ...], stdout: Literal["pipe", "tty"], color: str, tmp_path: Path
) -> None:
    """On a terminal of 1000 columns or through a pipe with ``COLUMNS=1000``: a table's title, an empty
    last cell and a side file's empty value end their line; nothing is padded to the width."""
    state = tmp_path / "quorum-state"
    state.write_text('{"clusterId":"","leaderId":1}')
    if args[0] == "convert":
        files: tuple[str, ...] = (DAMAGED, "-o", str(tmp_path / "out.log"))
    elif args[0] == "dump":
        files = (WIDE, DAMAGED, str(state))
    else:
        files = (WIDE, DAMAGED)
    run = kdump(
        *args,
        "--color",
        color,
        "--no-progress",
        *files,
        stdout=stdout,
        err_tty=stdout == "tty",
        columns=1000,
        env={"COLUMNS": "1000"},
    )
    seen = _SGR_CODES.sub(b"", run.stderr if stdout == "tty" else run.stdout).replace(b"\r\n", b"\n")
    assert run.code in (0, 1) and len(seen.splitlines()) > 3
    assert [line for line in seen.splitlines() if line.endswith(b" ")] == []
    assert max(cell_len(line) for line in seen.decode().splitlines()) < 1000


# -- exit codes: a closed pipe keeps the verdict; Ctrl-C is 130 -------------------------------------

CLEAN, DAMAGED = str(FIXTURES / "v2-none.log"), str(FIXTURES / "corrupt-crc.log")


def _closed_pipe_run(*args: str) -> tuple[int, bytes]:
    """``kdump ARGS`` writing to a pipe whose reader has already left: every write to stdout fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run(
        [sys.executable, "-m", "kafka_dump", *args],
        stdin=subprocess.DEVNULL,
        stdout=write_end,
        stderr=subprocess.PIPE,
        env={**env, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        start_new_session=True,
        timeout=120,
    )
    os.close(write_end)
    return proc.returncode, proc.stderr


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("verify-crc", DAMAGED), 1),
        (("verify-crc", "--format", "json", CLEAN, DAMAGED), 1),  # the damage comes after the first write
        (("verify-crc", CLEAN), 0),
        (("dump", DAMAGED), 1),
        (("dump", "--format", "json", CLEAN, DAMAGED), 1),
        (("dump", "--format", "kafka", DAMAGED), 1),
        (("dump", CLEAN), 0),
        (("stats", CLEAN, DAMAGED), 0),  # stats counts corruption and exits 0
        (("stats", "--format", "json", CLEAN, "missing.log"), 2),
    ],
    ids=lambda v: " ".join(Path(a).name for a in v) if isinstance(v, tuple) else str(v),
)
def test_a_closed_pipe_ends_quietly_and_keeps_the_verdict(args: tuple[str, ...], code: int) -> None:
    rc, err = _closed_pipe_run(*args)
    assert rc == code, err
    # Nothing about the pipe: only what a run with a reader puts on stderr (problems, a bad path).
    assert all(line.startswith(b"kdump: ") for line in err.splitlines()), err
    assert b"Broken" not in err and b"Exception" not in err


def test_head_reads_one_line_of_a_big_dump_and_the_damage_at_its_end_still_counts(tmp_path: Path) -> None:
    """``kdump dump BIG | head -1``: the reader leaves after a line, long before the damaged batch."""
    from tests.batches import v2_batch

    batches = [v2_batch([(b"k%d" % i, b"v" * 200, [])] * 50, base_offset=50 * i) for i in range(60)]
    last = bytearray(batches[-1])
    last[-1] ^= 0xFF  # the CRC covers the records: the last batch fails its check
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(b"".join(batches[:-1]) + bytes(last))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_dump", "dump", str(seg)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**env, "PYTHONPATH": str(ROOT)},
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"Dumping")
    proc.stdout.close()  # more than a pipe's buffer is still to come: kdump's writes fail
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 1, err
    assert err == b""


def _blocked_reading(pid: int) -> None:
    """Return once process ``pid`` sleeps in a read of a pipe (Linux's /proc says where it waits):
    a signal then interrupts that read, with no window in which it could be missed."""
    import time

    wchan = Path(f"/proc/{pid}/wchan")
    if not wchan.exists():
        pytest.skip("needs /proc/PID/wchan to know when kdump waits on the FIFO")
    for _ in range(6000):
        if "pipe" in wchan.read_text():
            return
        time.sleep(0.01)
    raise AssertionError("kdump never waited on the FIFO")


def _sigint_default() -> None:
    """In the child: SIGINT at its default, as in a terminal's foreground job. A job started with
    ``&`` by a non-interactive shell (CI runs the suite so) inherits it ignored, and Python then
    installs no handler: kdump would rightly go on, as under ``nohup``."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def foreground(*args: str) -> subprocess.Popen[bytes]:
    """``kdump ARGS`` as a terminal's foreground job, in a process group of its own (so that a signal
    can go to the whole group) with SIGINT at its default; stdout and stderr piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "kafka_dump", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        start_new_session=True,
        preexec_fn=_sigint_default,
    )


def _interrupted(fifo: Path, *args: str, signal_group: bool) -> tuple[int, bytes]:
    """``kdump ARGS`` reading ``fifo``: once it waits for the FIFO's first bytes (which never come),
    SIGINT goes to it (or to its whole process group, as Ctrl-C in a terminal sends it)."""
    import errno
    import signal
    import time

    os.mkfifo(fifo)
    proc = foreground(*args, str(fifo))
    while True:  # a FIFO opens for writing without blocking only once a reader holds it open
        try:
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            assert exc.errno == errno.ENXIO
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.01)
    _blocked_reading(proc.pid)
    if signal_group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    os.close(writer)
    return proc.returncode, err


@pytest.mark.parametrize("signal_group", [False, True], ids=["process", "group"])
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_ctrl_c_exits_130_with_one_line(tmp_path: Path, fmt: str, signal_group: bool) -> None:
    rc, err = _interrupted(
        tmp_path / "00000000000000000000.log", "dump", "--format", fmt, signal_group=signal_group
    )
    assert (rc, err) == (130, b"kdump: interrupted\n")


# -- the progress bar -----------------------------------------------------------------------------

NOW = {"KDUMP_PROGRESS_DELAY": "0"}  # the bar may start at once, as after a second of a long run
BAR_LINE = re.compile(rb"\r([^\r\n\x1b]*)\x1b\[K")  # a bar drawn ("\r" text "erase to the end"), or erased


def _bars(terminal: bytes) -> list[str]:
    """The bar lines a terminal was sent; asserting each is erased before anything else is written."""
    shown, drawn = False, []
    at = 0
    while at < len(terminal):
        m = BAR_LINE.match(terminal, at)
        if m is not None:
            shown = bool(m.group(1))
            if shown:
                drawn.append(m.group(1).decode())
            at = m.end()
            continue
        assert not shown, f"output written over the bar at byte {at}: {terminal[at - 80 : at + 40]!r}"
        at += 1
    assert not shown, "the bar is left on the terminal"
    return drawn


def _bar_says(line: str, name: str, columns: int) -> None:
    """One bar design: the file's name, bytes done of the total, rate, time left, within the width."""
    assert line.startswith(name[:10]), line
    assert re.search(
        r" \d+(\.\d)? (B|KiB|MiB) of \d+(\.\d)? (B|KiB|MiB) · [\d.]+ (B|KiB|MiB|GiB)/s · ", line
    ), line
    assert line.endswith(" left"), line
    assert cell_len(line) < columns


COMMANDS = [
    ("dump", CLEAN),
    ("dump", "--format", "json", CLEAN),
    ("verify-crc", CLEAN),
    ("verify-crc", "-j", "2", CLEAN, DAMAGED),
    ("stats", CLEAN),
    ("stats", "--compare", CLEAN),
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(Path(x).name for x in a))
def test_one_bar_on_a_terminal_when_stdout_is_a_file(args: tuple[str, ...]) -> None:
    run = kdump(*args, err_tty=True, stdout="file", columns=100, env=NOW)
    bars = _bars(run.stderr)
    assert bars, run.stderr
    for line in bars:
        _bar_says(line, Path(args[-1]).name if "-j" not in args else "", 100)
    plain = kdump(*args, stdout="file", env=NOW)
    assert (run.code, run.stdout) == (plain.code, plain.stdout)  # the bar changes nothing else


def test_convert_draws_the_same_bar(tmp_path: Path) -> None:
    out = tmp_path / "out.log"
    run = kdump("convert", CLEAN, "-o", str(out), err_tty=True, stdout="file", columns=100, env=NOW)
    assert run.code == 0 and out.exists()
    bars = _bars(run.stderr)
    assert bars and all(_bar_says(line, "v2-none.log", 100) is None for line in bars)


@pytest.mark.parametrize(
    "args", COMMANDS[:2] + COMMANDS[4:5], ids=lambda a: " ".join(Path(x).name for x in a)
)
def test_no_bar_when_stdout_is_a_pipe(args: tuple[str, ...]) -> None:
    """``kdump … | less``: less owns the terminal; a bar would be drawn over it."""
    run = kdump(*args, err_tty=True, stdout="pipe", env=NOW)
    assert b"\x1b[K" not in run.stderr and b"\r" not in run.stderr
    forced = kdump(*args, "--progress", err_tty=True, stdout="pipe", env=NOW)
    assert _bars(forced.stderr) and forced.stdout == run.stdout


def test_no_progress_wins() -> None:
    run = kdump("stats", "--no-progress", CLEAN, err_tty=True, stdout="file", env=NOW)
    assert run.code == 0 and b"\x1b[K" not in run.stderr


@pytest.mark.parametrize("args", [("dump", CLEAN), ("verify-crc", CLEAN, DAMAGED), ("stats", CLEAN, WIDE)])
def test_on_the_terminal_of_stdout_the_bar_is_erased_before_each_write(args: tuple[str, ...]) -> None:
    """stdout and stderr are one terminal: every line of output is written where no bar is."""
    run = kdump(*args, err_tty=True, stdout="tty", columns=140, env=NOW)
    assert _bars(run.stderr)  # and, checked there, never a byte written over the bar
    alone = kdump(*args, "--no-progress", err_tty=True, stdout="tty", columns=140, env=NOW)
    assert BAR_LINE.sub(b"", run.stderr) == alone.stderr


def test_ctrl_c_under_a_bar_erases_it_and_says_one_line(tmp_path: Path) -> None:
    """The bar is on the terminal when Ctrl-C comes: the line is cleared, then one line is written."""
    import errno
    import signal
    import time

    from tests.batches import v2_batch

    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    master, slave = _pty(100)
    with tempfile.TemporaryFile() as file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kafka_dump", "dump", str(fifo)],
            stdin=subprocess.DEVNULL,
            stdout=file,
            stderr=slave,
            env={**os.environ, "PYTHONPATH": str(ROOT), **NOW},
            cwd=ROOT,
            start_new_session=True,
            preexec_fn=_sigint_default,
        )
        os.close(slave)
        while True:  # the FIFO opens for writing without blocking once kdump holds it open
            try:
                writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as exc:
                assert exc.errno == errno.ENXIO and proc.poll() is None
                time.sleep(0.01)
        os.write(writer, v2_batch([(b"k", b"v", [])] * 3))
        seen = b""
        while b" left\x1b[K" not in seen:  # the bar is on the terminal
            seen += os.read(master, 1 << 16)
        _blocked_reading(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)
        rest: list[bytes] = []
        _drain(master, rest).join(timeout=60)
        assert proc.wait(timeout=60) == 130
        os.close(writer)
        os.close(master)
    terminal = seen + b"".join(rest)
    _bars(terminal)  # nothing written over the bar
    assert BAR_LINE.sub(b"", terminal) == b"kdump: interrupted\n"


def test_a_pipe_is_spooled_as_its_bytes_come(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spooling a pipe takes each time what it holds (one read), not a whole chunk: a reader blocked
    on a writer that sends little returns to Python, where Ctrl-C is seen, after each piece."""
    import io

    from kafka_dump.log import window

    class Trickle(io.RawIOBase):
        def __init__(self) -> None:
            self.pieces = [b"a" * 10, b"b" * 7, b"c" * 3]

        def readable(self) -> bool:
            return True

        def readinto(self, b: Any) -> int:
            if not self.pieces:
                return 0
            piece = self.pieces.pop(0)
            b[: len(piece)] = piece
            return len(piece)

    writes: list[bytes] = []
    real = tempfile.TemporaryFile

    def recording() -> Any:
        tmp = real()
        write = tmp.write

        def record(data: bytes) -> int:
            writes.append(bytes(data))
            return write(data)

        tmp.write = record
        return tmp

    monkeypatch.setattr(tempfile, "TemporaryFile", recording)
    tmp, size = window._spool(Trickle())  # unbuffered, as open_segment opens it
    with tmp:
        assert (size, tmp.read()) == (20, b"a" * 10 + b"b" * 7 + b"c" * 3)
    assert writes == [b"a" * 10, b"b" * 7, b"c" * 3]
