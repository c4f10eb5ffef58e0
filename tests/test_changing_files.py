"""Segments that change while they are read: a broker truncates them (retention, log truncation
after a leader change) or appends to the active one while kdump reads it.

The change happens at a known point, not by timing: the moment the first read window over the file
is made (its size already taken), a hook cuts the file inside one entry or appends bytes to it. Every
command then reads the bytes the file held when opened: a cut file ends in a partial tail that says
the file changed, as a file cut before the read ends in a partial tail; an appended file gives what
it gave before the append. The segments are kafka-python's (``tests/batches.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from kafka_dump.cli import main
from kafka_dump.log import window
from tests.batches import GZIP, default_records, entry_bounds, legacy_messages, legacy_records, v2_batch

ENV = {"COLUMNS": "120", "NO_COLOR": "1"}


def _segment(kind: str) -> bytes:
    if kind == "v2":
        return b"".join(v2_batch(default_records(10, seed=i), base_offset=10 * i) for i in range(300))
    if kind == "v1-gzip":
        return b"".join(
            legacy_messages(legacy_records(10, seed=i), magic=1, codec=GZIP, base_offset=10 * i)
            for i in range(300)
        )
    return b"".join(
        legacy_messages(legacy_records(10, seed=i), magic=0, base_offset=10 * i) for i in range(300)
    )


KINDS = ["v2", "v1-gzip", "v0"]
SEGMENTS = {kind: _segment(kind) for kind in KINDS}

COMMANDS: dict[str, list[str]] = {
    "dump-table": ["dump"],
    "dump-json": ["dump", "--format", "json"],
    "dump-kafka": ["dump", "--format", "kafka"],
    "verify-crc": ["verify-crc", "--format", "json", "-j", "1"],
    "verify-crc-shallow": ["verify-crc", "--format", "json", "-j", "1", "--shallow"],
    "stats": ["stats", "--format", "json"],
    "stats-compare": ["stats", "--format", "json", "--compare", "--codecs", "gzip"],
    "convert": ["convert", "--format", "json"],
}


def _on_first_window(monkeypatch: pytest.MonkeyPatch, change: Callable[[str], None]) -> None:
    """Run ``change(path)`` once, when the first read window over a file is made."""
    made = window.Window.__init__
    done: list[bool] = []

    def init(self: Any, f: Any, *args: Any, **kwargs: Any) -> None:
        made(self, f, *args, **kwargs)
        if not done:
            done.append(True)
            change(f.name)

    monkeypatch.setattr(window.Window, "__init__", init)


def _run(name: str, path: Path, out: Path) -> Result:
    args = [*COMMANDS[name], str(path)]
    if name == "convert":
        args += ["-o", str(out), "--force"]
    res = CliRunner().invoke(main, args, env=ENV)
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def _json(res: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in res.stdout.splitlines()]


def _batches(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in o.items() if k != "file"} for o in objs if o["type"] == "batch"]


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("kind", KINDS)
def test_a_segment_cut_while_read(
    kind: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cut inside an entry of the second half: read as the file cut before the read is, up
    to that entry, which starts a partial tail saying the file changed; exit 0 as for any tail."""
    data = SEGMENTS[kind]
    bounds = entry_bounds(data)
    start, _ = next(b for b in bounds if b[0] >= len(data) // 2)
    cut = start + 20
    ref = tmp_path / "ref" / "00000000000000000000.log"
    ref.parent.mkdir()
    ref.write_bytes(data[:cut])
    expected = _run(name, ref, tmp_path / "ref.out")
    assert expected.exit_code == 0

    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(data)
    _on_first_window(monkeypatch, lambda p: os.truncate(p, cut))
    res = _run(name, seg, tmp_path / "seg.out")
    assert res.exit_code == 0
    said = res.stdout + res.stderr
    if name == "convert":
        assert (tmp_path / "seg.out").read_bytes() == (tmp_path / "ref.out").read_bytes()
        tail = _json(res)[0]["tail"]
        assert (tail["kind"], tail["position"], tail["length"]) == ("partial-tail", start, len(data) - start)
    elif name == "dump-kafka":  # kafka-dump-log.sh's line for a tail
        assert said.endswith(f"Found {len(data) - start} invalid bytes at the end of {seg.name}\n")
    else:
        assert "file changed while read" in said and str(start) in said, said[-500:]
    if name.startswith("dump-json"):
        got, want = _json(res), _json(expected)
        assert _batches(got) == _batches(want)
        (tail,) = [o for o in got if o["type"] == "problem"]
        assert (tail["kind"], tail["position"], tail["length"]) == ("partial-tail", start, len(data) - start)
    if name.startswith("verify-crc"):
        (got,), (want,) = ([o for o in _json(r) if o["type"] == "summary"] for r in (res, expected))
        assert (got["batches"], got["records"]) == (want["batches"], want["records"])
        problems = [o for o in _json(res) if o["type"] == "problem"]
        assert [(p["check"], p["position"]) for p in problems] == [("partial-tail", start)]
    if name.startswith("stats"):
        got, want = _json(res)[0]["layout"], _json(expected)[0]["layout"]
        assert (got["batches"], got["records"]) == (want["batches"], want["records"])


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("kind", KINDS)
def test_a_segment_appended_to_while_read(
    kind: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The active segment of a running broker: what the file held when opened, as if nothing was
    appended (a whole entry and the start of another are)."""
    data = SEGMENTS[kind]
    more = data[: entry_bounds(data)[1][1]]
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(data)
    out = tmp_path / "out.log"
    expected = _run(name, seg, out)
    written = out.read_bytes() if name == "convert" else b""

    def append(path: str) -> None:
        with open(path, "ab") as f:
            f.write(more + more[:30])

    _on_first_window(monkeypatch, append)
    res = _run(name, seg, out)
    assert (res.exit_code, res.stdout, res.stderr) == (expected.exit_code, expected.stdout, expected.stderr)
    assert seg.stat().st_size > len(data)  # the hook did append
    if name == "convert":
        assert out.read_bytes() == written


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_reads_cut_short_are_read_on(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A read that returns fewer bytes than asked before the end of the file (a signal, a network file
    system) is read on from where it stopped: the output is a whole read's, no tail, no shrunk file."""
    seg = tmp_path / "00000000000000000000.log"
    seg.write_bytes(SEGMENTS["v1-gzip"])
    out = tmp_path / "out.log"
    expected = _run(name, seg, out)
    written = out.read_bytes() if name == "convert" else b""
    short: list[int] = []
    real_pread, real_preadv = os.pread, os.preadv

    def pread(fd: int, n: int, at: int) -> bytes:
        short.append(n)
        return real_pread(fd, max(1, n // 3), at)  # a third of what is asked, at least a byte

    def preadv(fd: int, buffers: list[Any], at: int) -> int:
        short.append(len(buffers[0]))
        with memoryview(buffers[0]) as view, view[: max(1, len(view) // 3)] as part:
            return real_preadv(fd, [part], at)

    monkeypatch.setattr(window.os, "pread", pread)
    monkeypatch.setattr(window.os, "preadv", preadv)
    res = _run(name, seg, out)
    assert short  # the reads were cut
    assert (res.exit_code, res.stdout, res.stderr) == (expected.exit_code, expected.stdout, expected.stderr)
    if name == "convert":
        assert out.read_bytes() == written


def test_stats_compare_reads_a_pipe_whole(tmp_path: Path) -> None:
    """A pipe has no size to read up to: it is read to its end (spooled), as before."""
    import threading

    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    data = SEGMENTS["v2"]

    def feed() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=feed)
    writer.start()
    res = _run("stats-compare", fifo, tmp_path / "unused")
    writer.join()
    assert res.exit_code == 0
    assert _json(res)[0]["layout"]["records"] == 3000
