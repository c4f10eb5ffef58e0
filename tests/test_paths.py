"""Files and paths (issue 11): directory walks that meet symlink loops, output directories that
cannot be written, and a disk that fills up while an output is written."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from tests.batches import v2_batch
from tests.conftest import FIXTURES

ENV = {"COLUMNS": "120", "NO_COLOR": "1"}


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args), env=ENV)
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "Traceback" not in res.stdout + res.stderr
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture
def looped_log_dir(tmp_path: Path) -> Path:
    """A log dir whose walk meets loops: ``t-0/up -> ..``, ``self -> .``, ``a/b -> ../a``, and
    ``t-1 -> t-0`` (the same partition under a second name)."""
    logs = tmp_path / "logs"
    (logs / "t-0").mkdir(parents=True)
    (logs / "a").mkdir()
    (logs / "t-0" / "00000000000000000000.log").write_bytes((FIXTURES / "v2-gzip.log").read_bytes())
    (logs / "t-0" / "up").symlink_to("..")
    (logs / "self").symlink_to(".")
    (logs / "a" / "b").symlink_to("../a")
    (logs / "t-1").symlink_to("t-0")
    return logs


def test_verify_crc_walk_does_not_follow_symlink_loops(looped_log_dir: Path) -> None:
    code, out, _ = run("verify-crc", "--format", "json", "-j", "1", str(looped_log_dir))
    assert code == 0
    *summaries, skipped = [json.loads(line) for line in out.splitlines()]
    assert [Path(s["file"]).relative_to(looped_log_dir).as_posix() for s in summaries] == [
        "t-0/00000000000000000000.log"
    ]
    assert skipped["type"] == "skipped" and skipped["skipped"]["loop"]["count"] >= 1, skipped


def test_stats_walk_counts_each_segment_once(looped_log_dir: Path) -> None:
    code, out, _ = run("stats", "--format", "json", str(looped_log_dir))
    assert code == 0
    *files, total, skipped = (json.loads(line) for line in out.splitlines())
    assert len(files) == 1 and total["files"] == 1 and total["layout"]["records"] == 10
    assert skipped["type"] == "skipped" and set(skipped["skipped"]) == {"loop", "twice"}, skipped


# --- an output directory that cannot be written -------------------------------------------------


@contextlib.contextmanager
def _read_only_dir(base: Path) -> Iterator[Path]:
    """A directory nobody can write into: a read-only tmpfs (root, where mount is allowed; root
    ignores permission bits), or mode 0555 (anyone else)."""
    target = base / "ro"
    target.mkdir()
    if os.geteuid() != 0:
        target.chmod(0o555)
        try:
            yield target
        finally:
            target.chmod(0o755)
        return
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(target)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip("running as root where tmpfs cannot be mounted: no way to refuse a write")
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=False)


def test_salvage_into_an_unwritable_directory_fails_before_any_work(tmp_path: Path) -> None:
    with _read_only_dir(tmp_path) as ro:
        for target in (ro, ro / "new" / "deeper"):
            code, out, err = run("verify-crc", "--salvage", str(target), str(FIXTURES / "corrupt-crc.log"))
            assert (code, out) == (2, "")  # not a line of verifying was done
            assert err.count("\n") == 1 and err.startswith(f"kdump: error: {ro}: cannot write here (")


def test_salvage_to_a_file_is_refused(tmp_path: Path) -> None:
    a_file = tmp_path / "x"
    a_file.write_bytes(b"")
    code, out, err = run("verify-crc", "--salvage", str(a_file / "sub"), str(FIXTURES / "corrupt-crc.log"))
    assert (code, out, err) == (2, "", f"kdump: error: {a_file}: not a directory\n")


# --- a disk that fills up -------------------------------------------------------------------------


class _DiskFills(io.BufferedWriter):
    """A file whose disk fills up after ``budget`` bytes: later writes fail with ENOSPC."""

    budget = 0

    def write(self, data: bytes) -> int:  # type: ignore[override]
        _DiskFills.budget -= len(memoryview(data))
        if _DiskFills.budget < 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return super().write(data)


def full_disk(monkeypatch: pytest.MonkeyPatch, budget: int) -> None:
    """Every ``os.fdopen(fd, "wb")`` (how temporary output files are opened) gets a disk that fills."""
    real = os.fdopen
    _DiskFills.budget = budget

    def fdopen(fd: int, mode: str = "r", *args: object, **kwargs: object) -> object:
        if mode == "wb":
            return _DiskFills(io.FileIO(fd, "wb"))
        return real(fd, mode, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "fdopen", fdopen)


def test_salvage_on_a_full_disk_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC in the middle of the copy: one line, exit 2, and no partial file nor temporary file."""
    batches = [v2_batch([(b"k", b"v" * 100, [])] * 3, base_offset=3 * i) for i in range(201)]
    src = tmp_path / "in" / "00000000000000000000.log"
    src.parent.mkdir()
    src.write_bytes(b"".join(batches[:200]) + b"garbage!" * 2 + batches[200])
    out_dir = tmp_path / "out"
    full_disk(monkeypatch, len(batches[0]) * 50)
    code, _, err = run("verify-crc", "--format", "json", "-j", "1", "--salvage", str(out_dir), str(src))
    monkeypatch.undo()
    assert code == 2
    assert (
        err
        == f"kdump: error: {out_dir / 'in' / src.name}: cannot write the salvage copy: No space left on device\n"
    )
    assert [p for p in out_dir.rglob("*") if p.is_file()] == []


def test_convert_into_an_unwritable_directory_fails_before_any_work(tmp_path: Path) -> None:
    with _read_only_dir(tmp_path) as ro:
        code, out, err = run(
            "convert", str(FIXTURES / "v1-gzip.log"), "-o", str(ro / "00000000000000000000.log")
        )
        assert (code, out) == (2, "")
        assert err.count("\n") == 1 and err.startswith(f"kdump: error: {ro}: cannot write here (")


@pytest.mark.parametrize("extra", [None, 0, 8], ids=["at-once", "after-the-segment", "in-the-index"])
def test_convert_on_a_full_disk_leaves_nothing_behind(
    extra: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC while the segment (or its indexes) is written: one line naming the output, exit 2,
    and neither the output nor a temporary file left in its directory."""
    batches = [v2_batch([(b"k", b"v" * 100, [])] * 3, base_offset=3 * i) for i in range(100)]
    src = tmp_path / "in" / "00000000000000000000.log"
    src.parent.mkdir()
    src.write_bytes(b"".join(batches))
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "00000000000000000000.log"
    full_disk(monkeypatch, 0 if extra is None else src.stat().st_size + extra)
    code, out, err = run("convert", str(src), "-o", str(target), "--compression", "none")
    monkeypatch.undo()
    assert (code, out) == (2, "")
    assert err == f"kdump: error: {target}: No space left on device\n"
    assert list(out_dir.iterdir()) == []


# --- a whole log dir ------------------------------------------------------------------------------


@pytest.mark.parametrize("short", [True, False])
def test_dump_of_a_log_dir_dumps_every_partition(tmp_path: Path, short: bool) -> None:
    """``kdump LOGDIR`` and ``kdump dump LOGDIR``: the log dir's own bootstrap.checkpoint, then every
    partition directory in it, as ``stats`` searches it."""
    for part in ("t-0", "t-1"):
        (tmp_path / part).mkdir()
        (tmp_path / part / "00000000000000000000.log").write_bytes((FIXTURES / "v2-none.log").read_bytes())
    (tmp_path / "bootstrap.checkpoint").write_bytes((FIXTURES / "v2-none.log").read_bytes())
    code, out, err = run(*([] if short else ["dump"]), "--format", "json", str(tmp_path))
    assert code == 0 and err == ""
    files = list(dict.fromkeys(json.loads(line)["file"] for line in out.splitlines()))
    assert [Path(f).relative_to(tmp_path).as_posix() for f in files] == [
        "bootstrap.checkpoint",
        "t-0/00000000000000000000.log",
        "t-1/00000000000000000000.log",
    ]


def test_dump_of_a_directory_with_only_the_bootstrap_snapshot_says_so(tmp_path: Path) -> None:
    (tmp_path / "bootstrap.checkpoint").write_bytes((FIXTURES / "v2-none.log").read_bytes())
    code, out, err = run("--format", "json", str(tmp_path))
    assert code == 0 and out
    assert err.splitlines() == [
        f"kdump: {tmp_path}: holds only bootstrap.checkpoint (the KRaft bootstrap snapshot), "
        "no partition directory"
    ]
