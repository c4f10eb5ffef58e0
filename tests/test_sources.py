"""Every command asks ``log/sources.py`` what a path holds and gets one answer: the same segment
files in the same order, for each layout operators keep (a segment, a partition, a log dir, a JBOD
parent, a backup tree, a KRaft metadata log dir, symlinks, an unreadable partition, Kafka's transient
files, nothing at all), what the walk passed over named by kind, and standard input read as a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kafka_dump.log.sources import find
from tests.conftest import FIXTURES
from tests.test_silent_passes import ENV, ROOT, _unprivileged

V1 = (FIXTURES / "v1-gzip.log").read_bytes()  # v1 data: upgrade-check names the segments that hold it
SHARED_REAL = ROOT.parent / "shared" / "fixtures-real"
LOG0 = f"{0:020d}.log"
LOG9 = f"{9:020d}.log"
UID = "0123456789abcdef0123456789abcdef"


def seg(path: Path, data: bytes = V1) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def kdump(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    """kdump in a child process, without root's exemption from file permissions."""
    env = {**os.environ, **ENV, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [*_unprivileged(), sys.executable, "-m", "kafka_dump", *args],
        input=stdin, capture_output=True, env=env, check=False,
        stdin=None if stdin is not None else subprocess.DEVNULL,
    )  # fmt: skip
    err = done.stderr.decode()
    assert "Traceback" not in err, err
    return done.returncode, done.stdout.decode(), err


# --- the layouts: each builds a tree and gives (the path to name, the segments expected below it) ---


def one_segment(root: Path) -> tuple[Path, list[str]]:
    seg(root / "t-0" / LOG0)
    return root / "t-0" / LOG0, [LOG0]


def partition(root: Path) -> tuple[Path, list[str]]:
    part = root / "t-0"
    seg(part / LOG9)
    seg(part / LOG0)
    for side in (f"{0:020d}.index", f"{0:020d}.timeindex", "partition.metadata"):
        (part / side).write_bytes(b"")
    return part, [LOG0, LOG9]


def log_dir(root: Path) -> tuple[Path, list[str]]:
    data = root / "data"
    for name in ("t-10", "t-2", "t-0", "t-1"):
        seg(data / name / LOG0)
    (data / "recovery-point-offset-checkpoint").write_text("0\n0\n")
    return data, [f"t-{n}/{LOG0}" for n in (0, 1, 2, 10)]  # by partition number, not as strings


def jbod(root: Path) -> tuple[Path, list[str]]:
    kafka = root / "kafka"
    for logs, name in (("data-2", "c-0"), ("data-1", "b-0"), ("data-2", "a-1"), ("data-1", "a-0")):
        seg(kafka / logs / name / LOG0)
        (kafka / logs / "meta.properties").write_text("version=1\n")
    return kafka, [f"data-1/a-0/{LOG0}", f"data-1/b-0/{LOG0}", f"data-2/a-1/{LOG0}", f"data-2/c-0/{LOG0}"]


def four_deep(root: Path) -> tuple[Path, list[str]]:
    backup = root / "backup"
    for broker in ("broker-2", "broker-1"):
        seg(backup / "2024-11" / broker / "data" / "t-0" / LOG0)
    return backup, [f"2024-11/{b}/data/t-0/{LOG0}" for b in ("broker-1", "broker-2")]


def kraft(root: Path) -> tuple[Path, list[str]]:
    meta = root / "meta"
    seg(meta / "bootstrap.checkpoint")
    seg(meta / "__cluster_metadata-0" / LOG0)
    seg(meta / "__cluster_metadata-0" / "00000000000000000009-0000000001.checkpoint")
    seg(meta / "t-0" / LOG0)
    return meta, [
        "bootstrap.checkpoint",
        f"__cluster_metadata-0/{LOG0}",
        "__cluster_metadata-0/00000000000000000009-0000000001.checkpoint",
        f"t-0/{LOG0}",
    ]


def symlinks(root: Path) -> tuple[Path, list[str]]:
    data = root / "data"
    seg(data / "t-0" / LOG0)
    seg(root / "elsewhere" / "t-1" / LOG0)
    (data / "t-1").symlink_to(root / "elsewhere" / "t-1")  # a partition moved to another disk
    (data / "loop").symlink_to(".")
    (data / "t-0" / "up").symlink_to("..")
    return data, [f"t-0/{LOG0}", f"t-1/{LOG0}"]


def unreadable(root: Path) -> tuple[Path, list[str]]:
    data = root / "data"
    seg(data / "t-0" / LOG0)
    seg(data / "t-1" / LOG0)
    (data / "t-1").chmod(0)
    return data, [f"t-0/{LOG0}"]


def transient(root: Path) -> tuple[Path, list[str]]:
    data = root / "data"
    seg(data / "t-0" / LOG0)
    seg(data / "t-0" / LOG9)
    for name in (
        "00000000000000000005.log.deleted",
        "00000000000000000007.log.cleaned",
        f"{11:020d}.log.swap",
    ):
        seg(data / "t-0" / name)
    seg(data / f"t-1.{UID}-delete" / LOG0)
    seg(data / f"t-2.{UID}-future" / LOG0)
    seg(data / "t-3" / LOG0)
    return data, [f"t-0/{LOG0}", f"t-0/{LOG9}", f"t-3/{LOG0}"]


LAYOUTS: dict[str, Callable[[Path], tuple[Path, list[str]]]] = {
    "one segment": one_segment,
    "a partition": partition,
    "a log dir": log_dir,
    "a JBOD parent of two log dirs": jbod,
    "a tree four levels deep": four_deep,
    "a KRaft metadata log dir": kraft,
    "a symlinked partition and a symlink loop": symlinks,
    "an unreadable partition": unreadable,
    "transient files and directories": transient,
}


@pytest.fixture
def built(tmp_path: Path) -> Iterator[Callable[[str], tuple[Path, list[str]]]]:
    def build(name: str) -> tuple[Path, list[str]]:
        return LAYOUTS[name](tmp_path)

    yield build
    for p in [tmp_path, *tmp_path.rglob("*")]:
        if p.is_dir() and not p.is_symlink():
            p.chmod(0o755)


def _lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def named(command: str, path: Path) -> tuple[int, list[str], dict[str, object], list[dict[str, object]]]:
    """(exit code, the segment files a command's JSON names in order, its ``skipped`` object, all lines)."""
    extra = {"ls": ["--by", "segment"], "verify-crc": ["-j", "1"]}.get(command, [])
    code, out, _ = kdump(command, "--format", "json", *extra, str(path))
    lines = _lines(out)
    files: list[str] = []
    for o in lines:
        if (
            (command == "ls" and o["type"] == "segment" and "state" not in o)
            or (
                command == "verify-crc"
                and o["type"] == "summary"
                and str(o["file"]).endswith((".log", ".checkpoint"))
            )
            or (command == "stats" and o["type"] == "file")
        ):
            files.append(str(o["file"]))
        elif command == "upgrade-check" and o["type"] == "partition":
            files += [str(f) for f in o["files"]]  # type: ignore[attr-defined]
        elif command == "dump" and "file" in o and (not files or files[-1] != o["file"]):
            files.append(str(o["file"]))
    skipped = next((o["skipped"] for o in lines if o["type"] == "skipped"), {})
    assert isinstance(skipped, dict)
    return code, files, skipped, lines


COMMANDS = ("ls", "verify-crc", "stats", "upgrade-check", "dump")


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_command_names_the_same_segments_in_the_same_order(
    layout: str, built: Callable[[str], tuple[Path, list[str]]]
) -> None:
    path, expected = built(layout)
    base = path.parent if path.is_file() else path
    want = [str(base / rel) for rel in expected]
    for command in COMMANDS:
        code, files, skipped, _ = named(command, path)
        if command == "upgrade-check":  # the metadata log is read for topic configs, not as data
            assert files == [f for f in want if "__cluster_metadata-0" not in f], (command, files)
        else:
            assert files == want, (command, files)
        if layout == "an unreadable partition":
            assert code == 1, command
            assert skipped["unreadable"] == {"count": 1, "paths": [str(path / "t-1")]}, command
        elif layout == "a symlinked partition and a symlink loop":
            assert skipped["loop"]["count"] == 2, (command, skipped)  # type: ignore[index]
        elif layout == "transient files and directories" and command != "ls":
            assert skipped["transient"]["count"] == 5, (command, skipped)  # type: ignore[index]
        elif layout != "a partition" and layout != "a log dir":  # Kafka's side files are no skip
            assert not skipped, (command, skipped)


def test_ls_shows_kafkas_transient_files_with_their_state(
    built: Callable[[str], tuple[Path, list[str]]],
) -> None:
    path, _ = built("transient files and directories")
    _, _, skipped, lines = named("ls", path)
    states = {os.path.relpath(str(o["file"]), path): o.get("state") for o in lines if o["type"] == "segment"}
    assert states == {
        f"t-0/{LOG0}": None,
        "t-0/00000000000000000005.log.deleted": "deleted",
        "t-0/00000000000000000007.log.cleaned": "cleaned",
        f"t-0/{LOG9}": None,
        f"t-0/{11:020d}.log.swap": "swap",
        f"t-1.{UID}-delete/{LOG0}": "delete",
        f"t-2.{UID}-future/{LOG0}": "future",
        f"t-3/{LOG0}": None,
    }
    assert not skipped
    code, out, _ = kdump("ls", "--by", "partition", str(path))
    assert code == 0 and "future" in out and "delete" in out
    # verify-crc checks them when asked, and then passes over nothing
    code, out, _ = kdump("verify-crc", "--format", "json", "--transient", str(path))
    checked = [o["file"] for o in _lines(out) if o["type"] == "summary"]
    assert len(checked) == 8 and not any(o["type"] == "skipped" for o in _lines(out))


def test_a_table_names_what_was_passed_over_on_stderr(built: Callable[[str], tuple[Path, list[str]]]) -> None:
    path, _ = built("transient files and directories")
    (path / "t-3" / "notes.txt").write_text("not Kafka's")
    code, out, err = kdump("verify-crc", str(path))
    assert code == 0
    said = [line for line in err.splitlines() if line.startswith("kdump: ")]
    assert said == [
        "kdump: 5 transient files and directories of Kafka's (.deleted, .cleaned, .swap, -delete, -future, "
        f"-stray), passed over (--transient reads them): {path}/t-0/00000000000000000005.log.deleted, "
        f"{path}/t-0/00000000000000000007.log.cleaned, {path}/t-0/{11:020d}.log.swap and 2 more",
        f"kdump: 1 file that is not Kafka's, passed over: {path}/t-3/notes.txt",
    ]
    assert "skipped" not in out


def test_a_directory_with_no_segment_at_any_depth_is_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "a" / "b").mkdir(parents=True)
    (empty / "README.md").write_text("nothing here")
    for command in COMMANDS:
        code, _, err = kdump(command, str(empty))
        assert code == 2, command
        assert err.strip().endswith(
            f"{empty}: directory holds no .log or .checkpoint segment in it or 2 levels below it"
        ), (command, err)


def test_a_file_reached_twice_is_read_once(tmp_path: Path) -> None:
    path, _ = partition(tmp_path)
    found = find([str(path), str(path / LOG0), str(path)])
    assert [os.path.basename(s.path) for s in found.readable()] == [LOG0, LOG9]
    assert found.skipped == {"twice": [str(path / LOG0), str(path)]}


# --- standard input ---------------------------------------------------------------------------------


def _cases(tmp_path: Path) -> dict[str, Path]:
    """A healthy, a corrupt and a truncated segment, named freely (the base offset comes from the batches)."""
    healthy = (FIXTURES / "v2-gzip.log").read_bytes()
    corrupt = bytearray(healthy)
    corrupt[30] ^= 0xFF
    cases = {"healthy": healthy, "corrupt": bytes(corrupt), "truncated": healthy[:-7]}
    for name, data in cases.items():
        (tmp_path / f"{name}.log").write_bytes(data)
    return {name: tmp_path / f"{name}.log" for name in cases}


@pytest.mark.parametrize("command", ["dump", "verify-crc", "stats"])
@pytest.mark.parametrize("fmt", ["json", "table"])
def test_standard_input_reads_as_the_file(tmp_path: Path, command: str, fmt: str) -> None:
    """``cat seg | kdump CMD --name seg -`` writes what ``kdump CMD seg`` writes, byte for byte, with the
    same exit code: a pipe is read as a file is, a stream cut short a partial tail."""
    for case, path in _cases(tmp_path).items():
        on_file = kdump(command, "--format", fmt, str(path))
        piped = kdump(command, "--format", fmt, "--name", str(path), "-", stdin=path.read_bytes())
        assert piped == on_file, (case, piped, on_file)
        code, out, _ = kdump(command, "--format", "json", "-", stdin=path.read_bytes())
        assert code == on_file[0] and out.count(f'"{path}"') == 0, case
        if command == "dump" and case == "healthy":
            assert {o.get("file") for o in _lines(out)} == {"-"}


def test_commands_that_need_a_file_or_a_directory_refuse_standard_input(tmp_path: Path) -> None:
    path = _cases(tmp_path)["healthy"]
    for args in (
        ["diff", "-", str(path)],
        ["ls", "-"],
        ["upgrade-check", "-"],
        ["state", "-"],
        ["convert", "-", "-o", str(tmp_path / "o.log")],
    ):
        code, _, err = kdump(*args, stdin=path.read_bytes())
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and "standard input" in lines[0], (args, err)
    assert not (tmp_path / "o.log").exists()


# --- the real fixtures --------------------------------------------------------------------------------


@pytest.mark.skipif(not SHARED_REAL.is_dir(), reason="../shared/fixtures-real is absent")
def test_ls_lists_every_log_that_verify_reads_in_the_real_fixtures() -> None:
    listed = [
        o["file"]
        for o in _lines(kdump("ls", "--by", "segment", "--format", "json", str(SHARED_REAL))[1])
        if o["type"] == "segment"
    ]
    checked = [
        o["file"]
        for o in _lines(kdump("verify-crc", "--format", "json", str(SHARED_REAL))[1])
        if o["type"] == "summary"
    ]
    logs = sorted(str(p) for p in SHARED_REAL.rglob("*.log"))
    assert sorted(f for f in listed if str(f).endswith(".log")) == logs
    assert [f for f in listed] == [f for f in checked if str(f).endswith((".log", ".checkpoint"))]
