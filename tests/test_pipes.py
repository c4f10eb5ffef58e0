"""Pipes and terminals: what kdump writes when stdout is a pipe while a terminal is attached.

Every test runs kdump as a child process in a session of its own, so no terminal reaches it but the
pseudo-terminals a test gives it: as stderr, or as its controlling terminal (``/dev/tty``) alone.
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

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
) -> Run:
    """``kdump ARGS`` with stdout a pipe; stderr a pipe or (``err_tty``) a pseudo-terminal of
    ``columns``; with ``dev_tty``, a pseudo-terminal of ``columns`` as its controlling terminal only."""
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

    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_dump", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
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
    return Run(proc.returncode, out, b"".join(seen) if err_tty else err)


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
