"""Run one input through every kdump command in-process and list what broke the promise.

The promise (issue 11): exit code 0, 1 or 2; no traceback; every problem names a byte range inside
the file; the run ends within a time bound proportional to the file's size; ``convert`` either
refuses or writes an output that verifies clean; JSON output is one well-formed object per line,
its numbers inside int64.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import click
from click.testing import CliRunner

from kafka_dump.cli import main

# Each case: the arguments, with IN for the input file and OUT for an output path.
CASES: dict[str, tuple[str, ...]] = {
    "dump-json": ("dump", "--format", "json", "--payload", "hex", "IN"),
    "dump-table": ("dump", "--max-bytes", "16", "IN"),
    "dump-kafka": ("dump", "--format", "kafka", "IN"),
    "dump-batches": ("dump", "--batches-only", "--format", "json", "IN"),
    "verify-crc": ("verify-crc", "--format", "json", "-j", "1", "IN"),
    "stats": ("stats", "--format", "json", "IN"),
    "stats-compare": ("stats", "--compare", "--format", "json", "IN"),
    "convert": ("convert", "IN", "-o", "OUT", "--skip-corrupt", "--force"),
    "convert-v1-gzip": ("convert", "IN", "-o", "OUT", "--to-magic", "1", "--compression", "gzip",
                        "--drop-control", "--skip-corrupt", "--force"),
    "redact": ("redact", "IN", "-o", "OUT", "--force", "--format", "json"),
}  # fmt: skip
ENV = {"COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
_SECONDS_BASE, _SECONDS_PER_MIB = 10.0, 2.0  # generous: CI machines are noisy


def work_dir(prefix: str) -> Path:
    """A scratch directory, in memory where there is one (outputs are fsynced: free on tmpfs),
    removed when the process exits (a pool worker removes its own: ``remove_work_dir``)."""
    shm = Path("/dev/shm")
    where = shm if shm.is_dir() and os.access(shm, os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=where))
    atexit.register(remove_work_dir, path)
    return path


def remove_work_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def available_cases() -> list[str]:
    """The cases whose command and options exist in this build of kdump."""
    out = []
    for name, args in CASES.items():
        cmd = main.commands.get(args[0])
        if cmd is None:
            continue
        opts = {o for p in cmd.params if isinstance(p, click.Option) for o in (*p.opts, *p.secondary_opts)}
        if all(a in opts for a in args[1:] if a.startswith("-")):
            out.append(name)
    return out


def _argv(args: Sequence[str], src: Path, out: Path) -> list[str]:
    return [str(src) if a == "IN" else str(out) if a == "OUT" else a for a in args]


def check(data: bytes, workdir: Path, cases: Sequence[str]) -> list[str]:
    """Violations of the promise for ``data`` under each case (empty when all is well)."""
    src = workdir / "00000000000000000000.log"
    out = workdir / "out" / "00000000000000000000.log"
    out.parent.mkdir(exist_ok=True)
    # A new file each time: rewriting one in place makes ext4 flush it on close (auto_da_alloc), 7 ms.
    src.unlink(missing_ok=True)
    src.write_bytes(data)
    problems: list[str] = []
    runner = CliRunner()
    limit = _SECONDS_BASE + _SECONDS_PER_MIB * len(data) / 2**20
    for case in cases:
        out.unlink(missing_ok=True)
        start = time.perf_counter()
        res = runner.invoke(main, _argv(CASES[case], src, out), env=ENV)
        took = time.perf_counter() - start
        where = f"{case}"
        if res.exit_code not in (0, 1, 2):
            problems.append(
                f"{where}: exit code {res.exit_code} ({type(res.exception).__name__}: {res.exception})"
            )
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            problems.append(f"{where}: raised {type(res.exception).__name__}: {res.exception}")
        if "Traceback" in res.stdout or "Traceback" in res.stderr:
            problems.append(f"{where}: printed a traceback")
        if took > limit:
            problems.append(f"{where}: took {took:.1f} s on {len(data)} bytes (bound {limit:.1f} s)")
        if "--format" in CASES[case] and "json" in CASES[case]:
            problems += _json_problems(where, res.stdout, len(data))
        problems += _stderr_problems(where, res.stderr, len(data))
        if case.startswith("convert") and res.exit_code in (0, 1) and out.exists():
            problems += _output_verifies(runner, out)
        if case == "redact" and res.exit_code in (0, 1):
            problems += _same_damage(runner, src, out)
    return problems


def _kinds(runner: CliRunner, path: Path) -> tuple[int, list[tuple[str, int]]]:
    """verify-crc's exit code and the (kind, offset) of its problems, each once."""
    res = runner.invoke(main, ["verify-crc", "--format", "json", "--no-index", str(path)], env=ENV)
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    return res.exit_code, sorted(
        {(r["kind"], r.get("baseOffset")) for r in rows if r.get("type") == "problem"}
    )


def _same_damage(runner: CliRunner, src: Path, out: Path) -> list[str]:
    """A redacted copy holds the input's damage: verify-crc's verdict and problem kinds. (Its offsets
    too, but for a v0/v1 wrapper whose inner message fails its CRC: the copy's wrapper is scrubbed,
    and verify-crc names a wrapper it cannot read by its last offset, not its first.)"""
    (code_in, before), (code_out, after) = _kinds(runner, src), _kinds(runner, out)
    if code_in == code_out and {k for k, _ in before} == {k for k, _ in after}:
        return []
    return [f"redact: verify-crc of the copy says {code_out} {after}, of the input {code_in} {before}"]


def _json_problems(where: str, stdout: str, size: int) -> list[str]:
    found = []
    numbers: list[int] = []
    for line in stdout.splitlines():
        try:
            obj = json.loads(line, parse_int=lambda t: numbers.append(int(t)) or int(t))
        except ValueError:
            found.append(f"{where}: a line is not JSON: {line[:120]!r}")
            continue
        if isinstance(obj, dict) and obj.get("type") == "problem" and obj.get("file", "").endswith(".log"):
            pos, length = obj.get("position"), obj.get("length")
            if (
                not isinstance(pos, int)
                or not 0 <= pos <= size
                or (isinstance(length, int) and pos + length > size)
            ):
                found.append(f"{where}: problem outside the file ({size} bytes): {line[:200]}")
    if any(not _INT64_MIN <= n <= _INT64_MAX for n in numbers):
        found.append(f"{where}: a JSON number outside int64")
    return found


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


_AT_BYTE = re.compile(r"\.log: byte (-?\d+)[: ]")


def _stderr_problems(where: str, stderr: str, size: int) -> list[str]:
    """Problems reported on stderr (``kdump: FILE: byte N: reason``, as stats does) lie in the file."""
    return [
        f"{where}: problem outside the file ({size} bytes) on stderr: {line[:200]}"
        for line in stderr.splitlines()
        if (m := _AT_BYTE.search(line)) and not 0 <= int(m.group(1)) <= size
    ]


def _output_verifies(runner: CliRunner, out: Path) -> list[str]:
    """A converted segment must decode (and verify, where verify-crc exists) with no problem at all."""
    args = (
        ["verify-crc", str(out)] if "verify-crc" in main.commands else ["dump", "--format", "json", str(out)]
    )
    res = runner.invoke(main, args, env=ENV)
    if res.exit_code != 0:
        return [
            f"convert: its output does not verify clean ({' '.join(args[:1])} exit {res.exit_code}): "
            f"{(res.stdout + res.stderr)[-300:]!r}"
        ]
    return []
