"""A partition of many small segments (issue 28, "Scale"): what each command does once per file.

A partition directory of one-batch segments must cost little more than one segment holding the same
batches. Time is not measured here (``benchmarks/cases/many_segments.py`` does); the calls to the
file system that each command makes for every segment are counted instead, on two partitions of
different sizes, so that the count per segment is exact: a directory is listed once, and a file is
opened, not looked up first.
"""

from __future__ import annotations

import builtins
import json
import os
import struct
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kafka_dump.cli import main
from tests.batches import LZ4, v2_batch

ENV = {"COLUMNS": "120", "NO_COLOR": "1"}
PER_BATCH = 10
TS0 = 1_700_000_000_000
WATCHED = ((os, "stat"), (os, "lstat"), (os, "open"), (os, "listdir"), (os, "scandir"), (builtins, "open"))


def partition(d: Path, segments: int) -> Path:
    """A partition directory of one-batch v2 lz4 segments, each with the .index and .timeindex a broker
    leaves (its one batch is under index.interval.bytes: an empty .index, one .timeindex entry)."""
    d.mkdir(parents=True)
    for i in range(segments):
        base = i * PER_BATCH
        records = [(b"key-%d" % j, b"value-%d" % j, []) for j in range(PER_BATCH)]
        stem = d / f"{base:020d}"
        stem.with_suffix(".log").write_bytes(v2_batch(records, codec=LZ4, base_offset=base, timestamp=TS0))
        stem.with_suffix(".index").write_bytes(b"")
        stem.with_suffix(".timeindex").write_bytes(struct.pack(">qi", TS0 + PER_BATCH - 1, PER_BATCH - 1))
    return d


@pytest.fixture(scope="module")
def partitions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("many")
    return partition(root / "few" / "t-0", 4), partition(root / "more" / "t-0", 12)


def calls(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[Counter[str], str]:
    """The calls to the file system that ``kdump ARGS`` makes (by name), and its output."""
    counts: Counter[str] = Counter()

    def counted(name: str, fn: object) -> object:
        def call(*a: object, **k: object) -> object:
            counts[name] += 1
            return fn(*a, **k)  # type: ignore[operator]

        return call

    with monkeypatch.context() as m:
        for module, name in WATCHED:
            m.setattr(module, name, counted(f"{module.__name__}.{name}", getattr(module, name)))
        result = CliRunner().invoke(main, list(args), env=ENV)
    assert result.exit_code == 0, result.output
    return counts, result.stdout


def per_file(monkeypatch: pytest.MonkeyPatch, partitions: tuple[Path, Path], *args: str) -> dict[str, float]:
    """The calls a command makes for each segment more: the difference between the two partitions."""
    few, more = partitions
    calls(monkeypatch, *args, str(few))  # what is done once (imports) is done before counting
    a, _ = calls(monkeypatch, *args, str(few))
    b, _ = calls(monkeypatch, *args, str(more))
    added = len(os.listdir(more)) // 3 - len(os.listdir(few)) // 3
    return {name: (b[name] - a[name]) / added for name in sorted(a | b) if b[name] != a[name]}


COMMANDS = {
    "dump": ["dump"],
    "dump json": ["dump", "--format", "json"],
    "stats": ["stats"],
    "stats json": ["stats", "--format", "json"],
    "verify-crc": ["verify-crc", "-j", "1"],
}
# Each segment is opened once to be read (verify-crc: with its .index and .timeindex), and looked up
# and tried once where a scan of several files tells an unreadable one from the others (dump, stats).
# Nothing else: no directory is listed again, no other file looked for.
EXPECTED = {
    "dump": {"builtins.open": 1, "os.open": 1, "os.stat": 1},
    "dump json": {"builtins.open": 1, "os.open": 1, "os.stat": 1},
    "stats": {"builtins.open": 1, "os.open": 1, "os.stat": 1},
    "stats json": {"builtins.open": 1, "os.open": 1, "os.stat": 1},
    "verify-crc": {"builtins.open": 1, "os.open": 2},  # the index files: an open, a read, a close
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_what_a_command_does_for_each_segment(
    command: str, monkeypatch: pytest.MonkeyPatch, partitions: tuple[Path, Path]
) -> None:
    assert per_file(monkeypatch, partitions, *COMMANDS[command]) == EXPECTED[command]


def test_the_default_pool_size_looks_up_a_sample_of_the_files(
    monkeypatch: pytest.MonkeyPatch, partitions: tuple[Path, Path]
) -> None:
    """How many workers to start (none, for small files) is told from the sizes of a few files, not
    by looking up each: past the sample, a segment costs what it costs with ``-j 1``."""
    from kafka_dump.commands import verify_jobs as verify

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(verify, "SAMPLED", 2)
    assert per_file(monkeypatch, partitions, "verify-crc") == EXPECTED["verify-crc"]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_partition_directory_is_listed_once(
    command: str, monkeypatch: pytest.MonkeyPatch, partitions: tuple[Path, Path]
) -> None:
    calls(monkeypatch, *COMMANDS[command], str(partitions[0]))  # imports first
    counts, _ = calls(monkeypatch, *COMMANDS[command], str(partitions[1]))
    # dump lists it once for its segments and once for the .txnindex files beside them
    assert counts["os.scandir"] + counts["os.listdir"] == (2 if command.startswith("dump") else 1)


def test_an_index_file_the_listing_did_not_find_is_not_looked_for(
    monkeypatch: pytest.MonkeyPatch, partitions: tuple[Path, Path]
) -> None:
    looked: list[str] = []

    def watched(fn: Any) -> Any:
        def call(file: object, *a: object, **k: object) -> object:
            looked.append(str(file))
            return fn(file, *a, **k)

        return call

    monkeypatch.setattr(builtins, "open", watched(builtins.open))
    monkeypatch.setattr(os, "open", watched(os.open))
    result = CliRunner().invoke(main, ["verify-crc", "-j", "1", str(partitions[0])], env=ENV)
    assert result.exit_code == 0, result.output
    assert not [f for f in looked if f.endswith(".txnindex")]
    assert sorted(Path(f).suffix for f in looked if Path(f).parent == partitions[0]) == sorted(
        [".log", ".index", ".timeindex"] * 4
    )


def test_a_txnindex_the_listing_found_is_read(tmp_path: Path) -> None:
    """The listing decides which .txnindex files are read: one there is read (and checked)."""
    d = partition(tmp_path / "t-0", 3)
    (d / f"{PER_BATCH:020d}.txnindex").write_bytes(b"\x00\x01")  # a partial entry: a problem
    result = CliRunner().invoke(main, ["verify-crc", "-j", "1", "--format", "json", str(d)], env=ENV)
    problems = [json.loads(x) for x in result.stdout.splitlines() if '"type":"problem"' in x]
    assert result.exit_code == 1 and [p["file"] for p in problems] == [str(d / f"{PER_BATCH:020d}.txnindex")]
    dumped = CliRunner().invoke(main, ["dump", "--format", "json", str(d)], env=ENV)
    assert dumped.exit_code == 0  # a tail of a .txnindex is no corruption
    assert [json.loads(x)["file"] for x in dumped.stdout.splitlines() if '"type":"problem"' in x] == [
        str(d / f"{PER_BATCH:020d}.txnindex")
    ]


def files_of(lines: Iterator[str]) -> list[str]:
    return [Path(json.loads(x)["file"]).name for x in lines]


def test_the_files_come_in_offset_order_whatever_the_listing(tmp_path: Path) -> None:
    d = partition(tmp_path / "t-0", 12)
    (d / "notes.checkpoint").write_bytes(b"")  # no Kafka name: after the segments, by name
    expected = [*(f"{i * PER_BATCH:020d}.log" for i in range(12)), "notes.checkpoint"]
    result = CliRunner().invoke(main, ["verify-crc", "-j", "1", "--format", "json", str(d)], env=ENV)
    assert files_of(iter(result.stdout.splitlines())) == expected
    result = CliRunner().invoke(main, ["stats", "--format", "json", str(d)], env=ENV)
    assert files_of(iter(result.stdout.splitlines()[:-1])) == expected


# --- stats: one section for a directory's segments ------------------------------------------------


def stats(*args: str) -> str:
    result = CliRunner().invoke(main, ["stats", *args], env=ENV)
    assert result.exit_code == 0, result.output
    return result.stdout


def sections(out: str) -> dict[str, str]:
    """A table's sections by their title line (``Measuring …`` or ``Total: …``), each without it."""
    found: dict[str, str] = {}
    title = None
    for line in out.splitlines(keepends=True):
        if line.startswith(("Measuring ", "Total: ")):
            title = line.rstrip("\n")
            found[title] = ""
        elif title is not None:
            found[title] += line
    return {t: body.strip("\n") for t, body in found.items()}


def test_a_partition_is_one_section_the_sum_of_its_segments(partitions: tuple[Path, Path]) -> None:
    part = partitions[1]
    shown = sections(stats(str(part)))
    assert list(shown) == [f"Measuring {part}{os.sep} (12 files)"]  # one section, so no total either
    each = sections(stats("--per-file", str(part)))
    assert list(each) == [
        *(f"Measuring {part / f'{i * PER_BATCH:020d}.log'}" for i in range(12)),
        "Total: 12 files",
    ]
    assert shown[f"Measuring {part}{os.sep} (12 files)"] == each["Total: 12 files"]
    assert "│ records           │                   120 │" in each["Total: 12 files"]


def test_each_partition_of_a_log_dir_and_each_file_named_is_a_section(
    partitions: tuple[Path, Path], tmp_path: Path
) -> None:
    few, more = partitions
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a-0").symlink_to(few)
    (logs / "b-0").symlink_to(more)
    named = more / f"{0:020d}.log"
    shown = sections(stats("--no-charts", str(logs), str(named)))
    assert list(shown) == [
        f"Measuring {logs / 'a-0'}{os.sep} (4 files)",
        f"Measuring {logs / 'b-0'}{os.sep} (12 files)",
        "Total: 16 files",  # the file named is b-0's first segment: read once, in b-0's section
    ]
    shown = sections(stats("--no-charts", str(few), str(named)))
    assert list(shown) == [f"Measuring {few}{os.sep} (4 files)", f"Measuring {named}", "Total: 5 files"]


def test_a_partition_of_one_segment_is_that_segments_section(tmp_path: Path) -> None:
    part = partition(tmp_path / "t-0", 1)
    assert list(sections(stats(str(part)))) == [f"Measuring {part / f'{0:020d}.log'}"]


def test_compare_sums_a_partition_too(partitions: tuple[Path, Path]) -> None:
    out = stats("--compare", "--codecs", "lz4", str(partitions[0]))
    assert out.count("Size in every format") == 1 and "Total:" not in out
    assert "40 data records in 4 of 4 batches" in out


def test_json_stays_one_object_per_file(partitions: tuple[Path, Path]) -> None:
    objects = [json.loads(x) for x in stats("--format", "json", str(partitions[0])).splitlines()]
    assert [o["type"] for o in objects] == ["file"] * 4 + ["total"]
    result = CliRunner().invoke(
        main, ["stats", "--format", "json", "--per-file", str(partitions[0])], env=ENV
    )
    assert result.exit_code == 2 and "--per-file applies to --format table only" in result.output


# --- verify-crc: small files are checked in the one process, unless they are many -----------------


class NoWorkers:
    """A multiprocessing context that starts no process."""

    def __init__(self, *args: object) -> None:
        pass

    def Process(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("a worker process was started")

    def Pipe(self, duplex: bool = True) -> object:
        import multiprocessing

        return multiprocessing.Pipe(duplex)


def test_small_files_are_checked_in_one_process_by_default(
    monkeypatch: pytest.MonkeyPatch, partitions: tuple[Path, Path]
) -> None:
    import multiprocessing

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    serial = CliRunner().invoke(
        main, ["verify-crc", "--format", "json", "-j", "1", str(partitions[1])], env=ENV
    )
    monkeypatch.setattr(multiprocessing, "get_context", NoWorkers)
    result = CliRunner().invoke(main, ["verify-crc", "--format", "json", str(partitions[1])], env=ENV)
    assert result.exit_code == 0 and result.stdout == serial.stdout
    asked = CliRunner().invoke(main, ["verify-crc", "-j", "2", str(partitions[1])], env=ENV)
    assert isinstance(asked.exception, AssertionError)  # -j given: as many workers as asked


def test_files_worth_sharing_are_checked_in_parallel_by_default(
    monkeypatch: pytest.MonkeyPatch, partitions: tuple[Path, Path]
) -> None:
    import multiprocessing

    from kafka_dump.commands import verify_jobs as verify

    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(multiprocessing, "get_context", NoWorkers)
    with monkeypatch.context() as m:
        m.setattr(verify, "TASK_BYTES", 100)  # every file is worth a worker
        result = CliRunner().invoke(main, ["verify-crc", str(partitions[1])], env=ENV)
        assert isinstance(result.exception, AssertionError)
    monkeypatch.setattr(verify, "WORKER_FILES", 4)  # many small files: worth a worker each few
    result = CliRunner().invoke(main, ["verify-crc", str(partitions[1])], env=ENV)
    assert isinstance(result.exception, AssertionError)


def test_many_small_files_are_shared_with_workers_and_come_out_in_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """This process checks every third task itself, and takes the workers' answers in their turn: the
    output is the serial one, damaged files and index problems included, in every format."""
    from kafka_dump.commands import verify_jobs as verify

    d = partition(tmp_path / "t-0", 40)
    for i in (
        3,
        17,
        30,
    ):  # a flipped byte in a log (its CRC and its lz4), a time index naming another timestamp
        log = d / f"{i * PER_BATCH:020d}.log"
        data = bytearray(log.read_bytes())
        data[-3] ^= 1
        log.write_bytes(bytes(data))
        (d / f"{(i + 1) * PER_BATCH:020d}.timeindex").write_bytes(struct.pack(">qi", TS0, PER_BATCH - 1))
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    monkeypatch.setattr(verify, "WORKER_FILES", 4)
    monkeypatch.setattr(verify, "TASK_FILES", 3)
    for fmt in ("table", "json"):
        serial = CliRunner().invoke(main, ["verify-crc", "--format", fmt, "-j", "1", str(d)], env=ENV)
        shared = CliRunner().invoke(main, ["verify-crc", "--format", fmt, str(d)], env=ENV)
        assert (shared.exit_code, shared.stdout) == (
            serial.exit_code,
            serial.stdout,
        ) and serial.exit_code == 1
    assert serial.stdout.count('"type":"summary"') == 40 and serial.stdout.count('"type":"problem"') == 9


def test_a_stop_in_this_process_stops_the_workers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Ctrl-C (or a failure) in this process's own task ends the check: the workers, waiting to send
    answers nobody will read, are stopped and reaped; none is left behind."""
    import multiprocessing

    from kafka_dump.commands import verify_jobs as verify

    d = partition(tmp_path / "t-0", 30)
    files = [str(f) for f in sorted(d.glob("*.log"))]
    real = verify.verify_file

    def interrupted(path: str, options: object) -> Iterator[object]:
        if path == files[6]:  # the first file of this process's second task
            raise KeyboardInterrupt
        return real(path, options)  # type: ignore[arg-type]

    monkeypatch.setattr(verify, "verify_file", interrupted)
    monkeypatch.setattr(verify, "TASK_FILES", 2)
    events = verify.checked(files, None, verify.VerifyOptions(), 3)
    with pytest.raises(KeyboardInterrupt):
        for _ in events:
            pass
    assert multiprocessing.active_children() == []


def test_what_start_up_made_is_left_out_of_the_collectors_walks(partitions: tuple[Path, Path]) -> None:
    """A full collection of a run over many files does not walk the modules and the command tree again."""
    import gc

    assert CliRunner().invoke(main, ["stats", "--format", "json", str(partitions[0])], env=ENV).exit_code == 0
    assert gc.get_freeze_count() > 0


def test_files_counted_together_give_the_merge_of_their_own_figures() -> None:
    """A section counts its files into one ``SegmentStats`` (``next_file``): the same figures as each
    file counted alone and merged, corruption, tails, control batches and v0/v1 wrappers included."""
    from kafka_dump.analysis.stats import SegmentStats
    from kafka_dump.analysis.stats_walk import iter_stats
    from kafka_dump.render.stats import stats_json
    from tests.conftest import FIXTURES

    names = [
        "v2-none.log",
        "v1-gzip.log",
        "corrupt-crc.log",
        "txn-control.log",
        "zero-tail.log",
        "mixed-magic.log",
    ]
    files = [FIXTURES / n for n in names]
    merged = SegmentStats("sum", files=0)
    for s in iter_stats(files):
        if isinstance(s, SegmentStats):
            merged.merge(s)
    together = SegmentStats("sum", files=0)
    seen = [s for s in iter_stats(files, into=lambda _: together) if isinstance(s, SegmentStats)]
    assert len(seen) == len(files) and all(s is together for s in seen)
    assert stats_json(together.finish()) == stats_json(merged)


@pytest.mark.parametrize("how", ["raises", "dies"])
def test_a_worker_that_fails_is_no_silent_pass(
    how: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A worker's failure (a bug, or a worker killed) ends the check with an error naming it, never
    with its files left out of the report."""
    from kafka_dump.commands import verify_jobs as verify

    d = partition(tmp_path / "t-0", 12)
    files = [str(f) for f in sorted(d.glob("*.log"))]
    real = verify.verify_file

    def failing(path: str, options: object) -> Iterator[object]:
        if path == files[3]:  # in the worker's share: tasks of two files, every other one
            if how == "dies":
                os._exit(3)
            raise ValueError("a bug")
        return real(path, options)  # type: ignore[arg-type]

    monkeypatch.setattr(verify, "verify_file", failing)
    monkeypatch.setattr(verify, "TASK_FILES", 2)
    expected = "ValueError: a bug" if how == "raises" else "ended before its answer"
    with pytest.raises(RuntimeError, match=expected):
        list(verify.checked(files, None, verify.VerifyOptions(), 2))


@pytest.fixture(scope="module")
def large_partition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough one-batch segments that a shared check runs a few tenths of a second past its first lines."""
    return partition(tmp_path_factory.mktemp("large") / "t-0", 5000)


def _group(pgid: int) -> list[str]:
    """The live processes of a process group, from /proc."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            found.append(pid)
    return found


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="no /proc to find a process group's processes")
@pytest.mark.parametrize("signal_group", [False, True], ids=["process", "group"])
def test_ctrl_c_while_workers_check(signal_group: bool, large_partition: Path) -> None:
    """Ctrl-C once the shared check has written its first lines (its worker at work): exit 130 and
    one line, and no process of the command left behind."""
    import signal

    from tests.test_pipes import foreground

    proc = foreground("verify-crc", "--format", "json", "-j", "2", str(large_partition))
    assert proc.stdout is not None and proc.stdout.read(1)  # the first lines are out
    (os.killpg if signal_group else os.kill)(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (130, b"kdump: interrupted\n")
    assert _group(proc.pid) == []
