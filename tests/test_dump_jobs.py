"""``kdump dump -j N``: files read by N processes, the output byte for byte what one process writes, in
every format; the same exit code; and the temporary files gone on every exit, signals included."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kafka_dump.cli import main
from tests.batches import GZIP, LZ4, ZSTD, default_records, legacy_messages, legacy_records, v2_batch
from tests.conftest import FIXTURES
from tests.test_pipes import _sigint_default
from tests.test_search import segment
from tests.test_silent_passes import kdump

ROOT = Path(__file__).resolve().parent.parent
ENV = {"COLUMNS": "120", "NO_COLOR": "1"}


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["dump", *map(str, args)], env=ENV)


def log_dir(root: Path, records: int = 20) -> Path:
    """Partitions of several segments in every format, a corrupt one, and side files."""
    data = root / "data"
    for p in range(4):
        d = data / f"t{p % 2}-{p}"
        d.mkdir(parents=True)
        base = 0
        for s in range(3):
            body = b"".join(
                v2_batch(
                    default_records(records, seed=p * 10 + s + j), codec=codec, base_offset=base + j * records
                )
                for j, codec in enumerate((0, LZ4, 0))
            )
            (d / f"{base:020d}.log").write_bytes(body)
            base += 3 * records
        (d / f"{base:020d}.log").write_bytes(
            legacy_messages(legacy_records(5, seed=p), magic=1, codec=GZIP, base_offset=base)
            + legacy_messages(legacy_records(3, seed=p), magic=0, base_offset=base + 5)
        )
    shutil.copy(FIXTURES / "corrupt-crc.log", data / "t0-0" / f"{10**6:020d}.log")
    (data / "t1-1" / f"{10**6:020d}.log").write_bytes(segment())
    (data / "t1-3" / f"{10**6:020d}.log").write_bytes(
        v2_batch(default_records(50, compressible=True), codec=ZSTD)
    )
    shutil.copy(FIXTURES / "00000000000000001000.log", data / "t0-2" / f"{10**7:020d}.log")
    for side in FIXTURES.glob("00000000000000001000.*index"):
        shutil.copy(side, data / "t0-2" / f"{10**7:020d}{side.suffix}")
    return data


SHAPES = [
    [],
    ["-x"],
    ["--format", "json"],
    ["--format", "json", "--payload", "hex"],
    ["--format", "kafka"],
    ["--batches-only"],
    ["--count"],
    ["--count", "--format", "json", "--grep", "value 1"],
    ["--format", "json", "--key-re", "key-1", "--from-offset", "10"],
    ["--format", "kafka", "--producer", "4001"],
    ["--to-time", "0"],  # nothing in range: the line that says so
]


@pytest.mark.parametrize("shape", SHAPES, ids=" ".join)
def test_jobs_write_what_one_process_writes(
    shape: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    data = log_dir(tmp_path)
    one = run(*shape, data)
    skips = {"--from-offset"} & set(shape)  # the corrupt batch outside the range asked for (a search sees it)
    assert one.exit_code == (0 if skips else 1), one.stderr
    assert one.stdout_bytes
    for jobs in ("2", "5"):
        many = run("-j", jobs, *shape, data)
        assert (many.exit_code, many.stdout_bytes, many.stderr) == (
            one.exit_code,
            one.stdout_bytes,
            one.stderr,
        )
    assert not list((tmp_path / "tmp").iterdir())  # nothing left behind


def test_an_error_stops_the_dump_where_one_process_stops(tmp_path: Path) -> None:
    """A file that is no segment at all ends the dump (exit 2) after what came before it, whatever -j."""
    data = log_dir(tmp_path)
    shutil.copy(FIXTURES / "bad" / "random-bytes.log", data / "t0-2" / f"{10**8:020d}.log")
    for shape in ([], ["--format", "json"], ["--count"]):
        one = run(*shape, data)
        assert one.exit_code == 2 and "not a Kafka log segment" in one.stderr
        many = run("-j", "3", *shape, data)
        assert (many.exit_code, many.stdout_bytes, many.stderr) == (
            one.exit_code,
            one.stdout_bytes,
            one.stderr,
        )


def test_an_unreadable_file(tmp_path: Path) -> None:
    data = log_dir(tmp_path)
    locked = data / "t1-1" / "00000000000000000000.log"
    locked.chmod(0)
    try:
        for shape in ([], ["--format", "json"], ["--count"]):
            one = kdump("dump", *shape, str(data))
            assert one[0] == 1 and "Permission denied" in one[1] + one[2]
            assert kdump("dump", "-j", "3", *shape, str(data)) == one
        only = [str(locked), str(data / "t1-1" / "00000000000000000060.log")]
        (data / "t1-1" / "00000000000000000060.log").chmod(0)
        one = kdump("dump", *only)
        assert one[0] == 2  # nothing could be read
        assert kdump("dump", "-j", "2", *only) == one
    finally:
        for f in data.rglob("*.log"):
            f.chmod(0o644)


def test_limit_reads_the_files_in_turn(tmp_path: Path) -> None:
    data = log_dir(tmp_path)
    one = run("--format", "json", "--limit", "7", data)
    assert one.exit_code == 0 and len(one.stdout.splitlines()) > 0
    assert run("-j", "4", "--format", "json", "--limit", "7", data).stdout_bytes == one.stdout_bytes


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_leaves_no_temporary_file(signum: int, tmp_path: Path) -> None:
    """Stopped while it waits for stdout's reader: the workers and their files are gone; SIGTERM ends
    the command as it would with no handler, Ctrl-C with kdump's line and 130."""
    data = log_dir(tmp_path, records=400)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, **ENV, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafka_dump", "dump", "-j", "2", "--format", "json", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=_sigint_default,  # a suite run as a background job ignores SIGINT
    )
    try:
        assert proc.stdout is not None
        proc.stdout.read(1)  # under way, then blocked on the full pipe
        deadline = time.monotonic() + 30
        while not any(tmp.rglob("*.out")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(tmp.rglob("*.out"))
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    if signum == signal.SIGTERM:
        assert proc.returncode == -signal.SIGTERM
    else:
        assert proc.returncode == 130 and b"kdump: interrupted" in err
    assert b"Traceback" not in err
    assert not list(tmp.iterdir())


@pytest.mark.parametrize(
    "shape", [[], ["--format", "json"], ["--format", "kafka"], ["--count"]], ids=" ".join
)
def test_on_a_terminal_the_same_escaped_output(shape: list[str], tmp_path: Path) -> None:
    """On a real pseudo-terminal the workers write as the terminal's output would be written: colour,
    width and escapes; a hostile name and hostile records reach it escaped, whatever -j."""
    from tests.test_search import v2_entry
    from tests.test_terminal_safety import HOSTILE, HOSTILE_NAME, assert_safe, on_terminal

    d = tmp_path / "t-0"
    d.mkdir()
    hostile = [(k.encode(), v.encode(), [(v, v.encode())]) for k, v in HOSTILE.items()]
    (d / "00000000000000000000.log").write_bytes(v2_entry(hostile, base_offset=0))
    (d / f"{10**6:020d}.log").write_bytes(segment())
    (d / f"{10**7:020d}.log").write_bytes(v2_entry(hostile, base_offset=10**7))
    (tmp_path / HOSTILE_NAME).write_bytes(segment())
    args = ["dump", *shape, str(d), str(tmp_path / HOSTILE_NAME)]
    one = on_terminal(*args)
    assert_safe(*one)
    assert on_terminal(*args[:1], "-j", "3", *args[1:]) == one
