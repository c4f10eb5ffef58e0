"""Outputs kdump does not own: special files are never replaced, and no temporary file outlives a
signal or a failed write. Every input is built by kafka-python (``tests/batches.py``); everything
happens inside the test's temporary directory."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from tests.batches import legacy_messages, legacy_records

ENV = {"COLUMNS": "120", "NO_COLOR": "1"}
ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args), env=ENV)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.stdout, res.stderr


def _segment(n: int = 5) -> bytes:
    """``n`` v1 entries of 100 plain messages each, offsets 0..100n-1."""
    return b"".join(
        legacy_messages(legacy_records(100, seed=i), magic=1, base_offset=100 * i) for i in range(n)
    )


def _damaged(n: int = 5) -> bytes:
    """``_segment(n)`` with one byte of its second message's value flipped: a CRC failure."""
    data = bytearray(_segment(n))
    second = 12 + int.from_bytes(data[8:12], "big")
    data[second + 40] ^= 0xFF
    return bytes(data)


def _fifo(path: Path) -> str:
    os.mkfifo(path)
    return "a FIFO"


def _link_to_stdout(path: Path) -> str:
    path.symlink_to("/proc/self/fd/1")
    return "a symbolic link"


def _link_to_dev_null(path: Path) -> str:
    path.symlink_to(os.devnull)
    return "a symbolic link"


def _char_device(path: Path) -> str:
    """A character device like /dev/null (1, 3), made inside the temporary directory."""
    try:
        os.mknod(path, 0o666 | 0o020000, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a character device needs CAP_MKNOD (root)")
    return "a character device"


SPECIAL: dict[str, Callable[[Path], str]] = {
    "fifo": _fifo,
    "link-to-stdout": _link_to_stdout,
    "link-to-dev-null": _link_to_dev_null,
    "char-device": _char_device,
}


def _names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.parametrize("force", [True, False])
@pytest.mark.parametrize("kind", list(SPECIAL))
def test_convert_never_replaces_a_special_file(tmp_path: Path, kind: str, force: bool) -> None:
    src = tmp_path / "in" / "00000000000000000000.log"
    src.parent.mkdir()
    src.write_bytes(_segment())
    out = tmp_path / "out"
    out.mkdir()
    target = out / "target"
    what = SPECIAL[kind](target)
    before = os.lstat(target)
    code, stdout, err = run("convert", str(src), "-o", str(target), *(["--force"] if force else []))
    assert (code, stdout) == (2, "")
    assert err == f"kdump: error: {target}: the output is {what}: only a regular file is ever replaced\n"
    assert _names(out) == ["target"]  # no index files beside it, no temporary file
    after = os.lstat(target)
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)


def test_convert_never_replaces_a_special_index_file(tmp_path: Path) -> None:
    src = tmp_path / "00000000000000000000.log"
    src.write_bytes(_segment())
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "00000000000000000000.timeindex")
    target = out / "00000000000000000000.log"
    code, stdout, err = run("convert", str(src), "-o", str(target), "--force")
    assert (code, stdout) == (2, "")
    timeindex = out / "00000000000000000000.timeindex"
    assert err == f"kdump: error: {timeindex}: the output is a FIFO: only a regular file is ever replaced\n"
    assert _names(out) == ["00000000000000000000.timeindex"]


@pytest.mark.parametrize("name", ["00000000000000000000.log", "00000000000000000000.log.salvage.json"])
@pytest.mark.parametrize("kind", list(SPECIAL))
def test_salvage_never_replaces_a_special_file(tmp_path: Path, kind: str, name: str) -> None:
    src = tmp_path / "t-0" / "00000000000000000000.log"
    src.parent.mkdir()
    src.write_bytes(_damaged())
    rescued = tmp_path / "rescued" / "t-0"
    rescued.mkdir(parents=True)
    what = SPECIAL[kind](rescued / name)
    code, _, err = run("verify-crc", "--salvage", str(tmp_path / "rescued"), str(src))
    assert code == 2
    message = f"{rescued / name}: the output is {what}: only a regular file is ever replaced"
    assert err == f"kdump: error: {message}\n"
    assert _names(rescued) == [name]


# --- no temporary file left behind ------------------------------------------------------------------

# Runs kdump with mkstemp sending the process a signal as soon as it has made its first file.
_SIGNALLED = textwrap.dedent(
    """
    import os, signal, sys, tempfile
    real = tempfile.mkstemp
    def mkstemp(*args, **kwargs):
        made = real(*args, **kwargs)
        os.kill(os.getpid(), int(sys.argv[1]))
        return made
    tempfile.mkstemp = mkstemp
    from kafka_dump.cli import main
    main(sys.argv[2:], prog_name="kdump")
    """
)


def _kdump(*args: str, script: str | None = None, **kwargs: object) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", script, *args] if script else [sys.executable, "-m", "kafka_dump", *args]
    env = {**os.environ, **ENV, "PYTHONPATH": str(ROOT)}
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False, **kwargs)  # type: ignore[call-overload, no-any-return]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_convert_leaves_no_temporary_file(tmp_path: Path, signum: int) -> None:
    src = tmp_path / "00000000000000000000.log"
    src.write_bytes(_segment())
    out = tmp_path / "out"
    out.mkdir()
    done = _kdump(str(signum), "convert", str(src), "-o", str(out / src.name), script=_SIGNALLED)
    assert done.returncode == -signum  # it still dies of the signal
    assert _names(out) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_salvage_leaves_no_temporary_file(tmp_path: Path, signum: int) -> None:
    src = tmp_path / "t-0" / "00000000000000000000.log"
    src.parent.mkdir()
    src.write_bytes(_damaged())
    rescued = tmp_path / "rescued"
    done = _kdump(str(signum), "verify-crc", "--salvage", str(rescued), str(src), script=_SIGNALLED)
    assert done.returncode == -signum
    assert _names(rescued / "t-0") == []


def _file_size_limit(limit: int) -> Callable[[], None]:
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_file_size_limit_during_convert_leaves_no_temporary_file(tmp_path: Path) -> None:
    src = tmp_path / "00000000000000000000.log"
    src.write_bytes(_segment(30))  # ~500 KB: its copy passes the 64 KiB limit
    out = tmp_path / "out"
    out.mkdir()
    target = out / src.name
    done = _kdump("convert", str(src), "-o", str(target), preexec_fn=_file_size_limit(1 << 16))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"kdump: error: {target}: File too large\n"
    assert _names(out) == []


def test_a_file_size_limit_during_salvage_leaves_no_temporary_file(tmp_path: Path) -> None:
    src = tmp_path / "t-0" / "00000000000000000000.log"
    src.parent.mkdir()
    src.write_bytes(_damaged(30))
    rescued = tmp_path / "rescued"
    done = _kdump("verify-crc", "--salvage", str(rescued), str(src), preexec_fn=_file_size_limit(1 << 16))
    assert done.returncode == 2
    target = rescued / "t-0" / src.name
    assert done.stderr == f"kdump: error: {target}: cannot write the salvage copy: File too large\n"
    assert _names(rescued / "t-0") == []


def test_a_full_disk_during_convert_leaves_no_temporary_file(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip("a full disk needs a small tmpfs, which only root may mount here")
    try:
        src = tmp_path / "00000000000000000000.log"
        src.write_bytes(_segment(30))
        target = small / src.name
        done = _kdump("convert", str(src), "-o", str(target))
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr == f"kdump: error: {target}: No space left on device\n"
        assert _names(small) == []
    finally:
        subprocess.run(["umount", str(small)], check=False)
