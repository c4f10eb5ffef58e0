"""kdump as the benchmark sees it: the command line to run, and which pieces exist yet.

Every case asks here before it times anything, so a command or function that has not landed is one
skipped line ("`kdump verify-crc` is not there yet"), never a crash. The kdump measured is the one of
the checkout this file sits in (``ROOT``): `bench.py` puts it first on ``PYTHONPATH``.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def command() -> list[str]:
    """How to start kdump: the console script of this interpreter if there is one, else ``-m``.

    With ``ROOT`` first on ``PYTHONPATH`` the console script imports this checkout's kafka_dump, even
    when another checkout is the one installed.
    """
    exe = Path(sys.executable).parent / "kdump"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "kafka_dump"]


def child(task: str, *args: str) -> list[str]:
    """The argv of one of `benchmarks/child.py`'s tasks (peers and baselines as whole processes)."""
    return [sys.executable, "-m", "benchmarks.child", task, *args]


@functools.cache
def help_text(*subcommand: str) -> str | None:
    """`kdump SUBCOMMAND --help`, or None if it fails (the command is not there yet)."""
    import subprocess  # here, not at the top: the timed decode child imports this module too

    try:
        run = subprocess.run(
            [*command(), *subcommand, "--help"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return run.stdout if run.returncode == 0 else None


def missing(subcommand: str, *options: str) -> str | None:
    """Why `kdump SUBCOMMAND [OPTIONS]` cannot be timed yet, or None when it can."""
    text = help_text(subcommand)
    if text is None:
        return f"`kdump {subcommand}` is not there yet (`kdump {subcommand} --help` fails)"
    absent = [o for o in options if o not in text]
    if absent:
        return f"`kdump {subcommand}` has no {', '.join(absent)} yet"
    return None


def under_test(env: dict[str, str] | None = None) -> str:
    """Which kafka_dump the child processes import (with this environment), and its active twin."""
    import subprocess

    code = (  # kafka_dump.native.ACTIVE, or an older checkout's kafka_dump.wire.ACTIVE_TWIN
        "import kafka_dump, kafka_dump.native as n\n"
        "print(kafka_dump.__file__, getattr(n, 'ACTIVE', None) or __import__('kafka_dump.wire').wire.ACTIVE_TWIN)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, env=env)
    return run.stdout.strip() if run.returncode == 0 else f"not importable: {run.stderr.strip()[-200:]}"


def precompile(env: dict[str, str] | None = None) -> None:
    """Byte-compile the kafka_dump under test as ``pip install`` does: a checkout run with
    PYTHONDONTWRITEBYTECODE would otherwise compile every module again in every timed process."""
    import subprocess

    code = "import compileall, os, kafka_dump; compileall.compile_dir(os.path.dirname(kafka_dump.__file__), quiet=1)"
    subprocess.run([sys.executable, "-c", code], capture_output=True, check=False, env=env)


def reader() -> Callable[[str], Any]:
    """`read_segment`, where the checkout keeps it (the package's face, or `log.segment`)."""
    import importlib

    fn = getattr(importlib.import_module("kafka_dump"), "read_segment", None)
    return fn or importlib.import_module("kafka_dump.log.segment").read_segment  # type: ignore[no-any-return]


def decoder() -> tuple[Callable[[str], int] | None, str]:
    """kdump's in-process decoder (every record, every field), or None and why not."""
    try:
        read_segment = reader()
    except Exception as e:
        return None, f"read_segment not importable ({type(e).__name__}: {e})"

    def run(path: str) -> int:
        n = problems = 0
        for item in read_segment(path):
            recs = getattr(item, "records", None)
            if recs is None:
                problems += 1
                continue
            for r in recs:
                r.offset
                r.timestamp
                r.key
                r.value
                r.sequence
                for h in r.headers:
                    h.key
                    h.value
                n += 1
        if problems:
            raise RuntimeError(f"{problems} Problem(s) reported on a file that should be clean")
        return n

    return run, f"{read_segment.__module__}.read_segment"


def batches(path: str) -> list[Any]:
    """Every batch of a (clean) file, decoded by kdump: the encoder's input."""
    return [item for item in reader()(path) if getattr(item, "records", None) is not None]


def encode_all(encode: Callable[..., bytes], batches: list[Any], codec: Any) -> int:
    """Encode every batch with this codec; the records encoded."""
    n = 0
    for b in batches:
        encode(b, compression=codec)
        n += len(b.records)
    return n


def encoder() -> tuple[Callable[..., bytes] | None, str]:
    """`encode_entry` (the package's face, `wire`'s or `wire.encode`'s), or None and why not."""
    import importlib

    try:
        fn = getattr(importlib.import_module("kafka_dump"), "encode_entry", None)
        fn = fn or getattr(importlib.import_module("kafka_dump.wire"), "encode_entry", None)
        fn = fn or importlib.import_module("kafka_dump.wire.encode").encode_entry
    except Exception as e:
        return None, f"encode_entry not importable ({type(e).__name__}: {e})"
    return fn, f"{fn.__module__}.encode_entry"
