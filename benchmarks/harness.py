"""The timing harness: contenders run round-robin, medians, each child's peak RSS, declared ratios.

A case builds a list of `Contender`s (in-process callables or whole processes) and the `Ratio`s and
`Target`s it wants checked, and hands them to `measure`. Every round runs each contender once, in the
same order, so a slow spell of the shared machine falls on all of them alike. Ratios name their
subject and baseline contenders explicitly: nothing is inferred from label strings.
"""

from __future__ import annotations

import gc
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the checkout whose kdump is measured


def log(msg: str) -> None:
    """Progress and notes go to stderr, so stdout holds only the results."""
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Contender:
    """One thing to time: an in-process callable (returns the records it saw) or a whole process.

    ``side`` is "kdump", "peer" (kafka-python, aiokafka) or "baseline" (a physical floor such as one
    CRC pass); ``--skip-kdump`` and ``--skip-peers`` drop contenders by side. ``child`` is a process
    that makes an in-process kdump line's timed call itself and prints its seconds: `--old` times it
    so in either checkout (``self_timed``), since one interpreter imports only one kafka_dump.
    """

    label: str
    side: str
    fn: Callable[[], int] | None = None
    argv: Sequence[str] | None = None
    stdout: Path | None = None  # a process's stdout goes to this file (removed after each run)
    cleanup: Callable[[], None] | None = None  # after every run
    expect: int | None = None  # an in-process fn must return this many records
    fallback: Contender | None = None  # timed in its place, and in its ratios, if this one fails
    child: Sequence[str] | None = None  # an in-process line's call, timed inside a process
    self_timed: bool = False  # argv prints its own timed seconds as the last word of its stdout
    env: dict[str, str] | None = None  # a process's environment (default: this one's)
    old_of: str | None = None  # --old: the label of this checkout's contender this line mirrors

    @property
    def how(self) -> str:
        return "in-process" if self.fn is not None else "child" if self.self_timed else "process"


@dataclass(frozen=True)
class Ratio:
    """subject versus baseline. ``at_least``: speed-up (baseline time / subject time) wanted;
    ``at_most``: subject time / baseline time allowed. Neither: shown as a speed-up, no target."""

    subject: str
    baseline: str
    at_least: float | None = None
    at_most: float | None = None
    source: str = ""  # where the target comes from ("issue 8")
    as_time: bool = False  # show subject time / baseline time even without an at_most target


@dataclass(frozen=True)
class Target:
    """A bound on one contender's own figure: records/s at least, or peak RSS at most (MiB)."""

    label: str
    min_records_per_s: float | None = None
    max_rss_mib: float | None = None
    source: str = ""


@dataclass
class Line:
    """One measured contender."""

    label: str
    side: str
    how: str
    times_s: list[float] = field(default_factory=list)
    median_s: float | None = None
    records_per_s: float | None = None
    mb_per_s: float | None = None
    peak_rss_kib: int | None = None
    note: str | None = None  # a failure, or something the reader should know


@dataclass
class Check:
    """A ratio or target, evaluated."""

    text: str
    value: float | None
    target: str
    met: bool | None  # None: no target, or nothing to compare
    subject: str = ""
    baseline: str = ""  # "" for a target on one contender's own figure
    old: str = ""  # --old: "time" or "peak RSS", new / old of one line


@dataclass
class Table:
    """One case on one file: the lines, then the checks."""

    case: str
    file: str  # the segment file's name, or "" for a case without one
    title: str
    records: int | None
    bytes: int | None
    lines: list[Line] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class ChildRun:
    """One finished subprocess."""

    wall_s: float
    returncode: int
    maxrss_kib: int
    stderr_tail: str


# Runs in a small `python -S` process: spawns argv, waits for it with os.wait4, writes
# "wall_s maxrss exitcode" to the file named by argv[1]. See run_child for why the detour.
_SPAWN_WRAPPER = """
import os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.posix_spawn(argv[0], argv, os.environ)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(out, "w") as f:
    f.write("%r %d %d" % (wall, ru.ru_maxrss, os.waitstatus_to_exitcode(status)))
"""


# Seconds one process run may take before it is killed and its line marked failed (--timeout).
TIMEOUT_S: float | None = None


def run_child(
    argv: Sequence[str],
    stdout: Path | None = None,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
) -> ChildRun:
    """Run argv with stdout to /dev/null (or a file); its wall time and its own peak RSS (os.wait4).

    Not spawned from this process directly: on Linux a child's ru_maxrss starts from the high-water
    RSS of the address space it was forked/vforked from, i.e. this benchmark's own peak (which holds
    whole files for the peers). A small wrapper interpreter spawns and reaps it instead, so the
    figure is the child's, with the wrapper's ~10 MiB as a floor. The wall time is also taken there.
    The wrapper leads a process group of its own, so a run past ``timeout`` is killed with its child.
    """
    out_path = stdout if stdout is not None else Path(os.devnull)
    with open(out_path, "wb") as out, tempfile.TemporaryFile() as err:
        fd, result = tempfile.mkstemp(prefix="kdump-bench-", suffix=".rusage")
        os.close(fd)
        try:
            wrapper = [sys.executable, "-S", "-c", _SPAWN_WRAPPER, result, *argv]
            proc = subprocess.Popen(
                wrapper, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True, env=env
            )
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return ChildRun(0.0, -signal.SIGKILL, 0, f"timed out after {timeout:g}s (--timeout)")
            fields = Path(result).read_text().split()
        finally:
            Path(result).unlink(missing_ok=True)
        err.seek(0)
        tail = err.read()[-1500:].decode("utf-8", "replace").strip()
    if rc != 0 or len(fields) != 3:
        return ChildRun(0.0, rc or 1, 0, tail or f"spawn wrapper failed (exit {rc})")
    wall, maxrss, code = float(fields[0]), int(fields[1]), int(fields[2])
    rss = maxrss // 1024 if sys.platform == "darwin" else maxrss  # KiB on Linux, bytes on macOS
    return ChildRun(wall, code, rss, tail)


def _error_text(e: BaseException) -> str:
    msg = str(e)
    return msg if msg.startswith(type(e).__name__) else f"{type(e).__name__}: {msg}"


def run_once(c: Contender, line: Line) -> bool:
    """One timed run of c, added to line; False (and a note) if it failed."""
    try:
        if c.fn is not None:
            gc.collect()
            t0 = time.perf_counter()
            seen = c.fn()
            dt = time.perf_counter() - t0
            if c.expect is not None and seen != c.expect:
                line.note = f"saw {seen:,} records, expected {c.expect:,}"
            line.times_s.append(dt)
            return True
        assert c.argv is not None
        stdout = c.stdout
        if c.self_timed:
            fd, name = tempfile.mkstemp(prefix="kdump-bench-", suffix=".seconds")
            os.close(fd)
            stdout = Path(name)
        try:
            run = run_child(c.argv, stdout, TIMEOUT_S, c.env)
            said = stdout.read_text().split()[-1:] if c.self_timed and stdout is not None else []
        finally:
            if c.self_timed and stdout is not None:
                stdout.unlink()
        if run.returncode != 0:
            last = run.stderr_tail.splitlines()[-1:] or ["(no stderr)"]
            line.note = f"failed: exit {run.returncode}: {last[0]}"[:300]
            return False
        line.times_s.append(float(said[0]) if c.self_timed else run.wall_s)
        line.peak_rss_kib = max(line.peak_rss_kib or 0, run.maxrss_kib)
        return True
    except Exception as e:
        line.note = f"failed: {_error_text(e)}"[:300]
        return False
    finally:
        if c.stdout is not None:
            c.stdout.unlink(missing_ok=True)
        if c.cleanup is not None:
            c.cleanup()


def measure(
    table: Table,
    contenders: Sequence[Contender],
    repeat: int,
    ratios: Sequence[Ratio] = (),
    targets: Sequence[Target] = (),
) -> Table:
    """Time every contender `repeat` times, round-robin; fill the table's lines and checks."""
    lines: dict[str, Line] = {}
    alive: list[Contender] = []
    stands_for: dict[str, str] = {}  # a failed contender's label -> its fallback's
    for c in contenders:  # round one: a failure shows here, and its fallback takes its place
        log(f"  {table.case} / {table.file or '-'}: {c.label}")
        line = lines[c.label] = Line(c.label, c.side, c.how)
        if run_once(c, line):
            alive.append(c)
        elif c.fallback is not None:
            fb = c.fallback
            fb_line = lines[fb.label] = Line(fb.label, fb.side, fb.how)
            stands_for[c.label] = fb.label
            if run_once(fb, fb_line):
                alive.append(fb)
    for r in range(1, repeat):
        for c in alternate(alive) if r % 2 else alive:
            if not run_once(c, lines[c.label]):
                alive = [a for a in alive if a is not c]
    for line in lines.values():
        if line.times_s and (line.note or "").startswith("failed"):
            line.times_s = []
        if line.times_s:
            line.median_s = statistics.median(line.times_s)
            if line.median_s > 0 and table.records:
                line.records_per_s = table.records / line.median_s
            if line.median_s > 0 and table.bytes:
                line.mb_per_s = table.bytes / 1e6 / line.median_s
    table.lines = list(lines.values())
    present = {c.label for c in contenders}  # a ratio whose contender was left out is not shown
    table.checks = [
        check_ratio(r, lines, stands_for) for r in ratios if r.subject in present and r.baseline in present
    ]
    table.checks += [check_target(t, lines) for t in targets if t.label in present]
    table.checks += [
        check for c in contenders if c.old_of for check in check_old(lines[c.old_of], lines[c.label])
    ]
    return table


def alternate(contenders: Sequence[Contender]) -> list[Contender]:
    """The order with every --old line moved before its new twin: every other round runs so, so
    neither checkout always goes second (warm caches, the machine's drift)."""
    out = list(contenders)
    for i in range(len(out) - 1):
        if out[i + 1].old_of == out[i].label:
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


def _median(lines: dict[str, Line], label: str, stands_for: dict[str, str]) -> tuple[str, float | None]:
    label = stands_for.get(label, label)
    line = lines.get(label)
    return label, (line.median_s if line is not None and line.median_s else None)


def check_ratio(r: Ratio, lines: dict[str, Line], stands_for: dict[str, str]) -> Check:
    """Evaluate one declared ratio on the medians."""
    subject, s = _median(lines, r.subject, stands_for)
    baseline, b = _median(lines, r.baseline, stands_for)
    source = f", {r.source}" if r.source else ""
    if r.at_most is not None or r.as_time:
        value = s / b if s and b else None
        met = None if value is None or r.at_most is None else value <= r.at_most
        target = f"<= {r.at_most:g}x the time{source}" if r.at_most is not None else "no target"
        text = f"{subject} vs {baseline}: " + (f"{value:.2f}x the time" if value else "n/a")
    else:
        value = b / s if s and b else None
        met = None if value is None or r.at_least is None else value >= r.at_least
        target = f">= {r.at_least:g}x faster{source}" if r.at_least is not None else "no target"
        shown = "n/a" if not value else f"{value:.2f}x faster" if value >= 1 else f"{1 / value:.2f}x slower"
        text = f"{subject} vs {baseline}: {shown}"
    return Check(text, value, target, met, subject, baseline)


def check_target(t: Target, lines: dict[str, Line]) -> Check:
    """Evaluate one contender's own bound."""
    line = lines.get(t.label)
    source = f", {t.source}" if t.source else ""
    if t.min_records_per_s is not None:
        value = line.records_per_s if line else None
        met = None if value is None else value >= t.min_records_per_s
        shown = f"{value:,.0f} records/s" if value else "n/a"
        target = f">= {t.min_records_per_s:,.0f} records/s{source}"
        return Check(f"{t.label}: {shown}", value, target, met, t.label)
    value = line.peak_rss_kib / 1024 if line and line.peak_rss_kib else None
    met = None if value is None or t.max_rss_mib is None else value <= t.max_rss_mib
    shown = f"peak RSS {value:,.0f} MiB" if value else "peak RSS n/a"
    return Check(f"{t.label}: {shown}", value, f"<= {t.max_rss_mib:g} MiB{source}", met, t.label)


# Issue 21: against the old checkout (--old), time within 5% and peak RSS within 10%.
OLD_TIME, OLD_RSS = 1.05, 1.10


def check_old(new: Line, old: Line) -> list[Check]:
    """This checkout's line against the same line of the old checkout: time, and peak RSS if taken."""
    checks = []
    for what, n, o, bound in (
        ("time", new.median_s, old.median_s, OLD_TIME),
        ("peak RSS", new.peak_rss_kib, old.peak_rss_kib, OLD_RSS),
    ):
        if what == "peak RSS" and not (n and o):
            continue  # in-process lines have no RSS of their own
        value = n / o if n and o else None
        shown = f"{value:.3f}x the {what}" if value else "n/a"
        met = None if value is None else value <= bound
        text, target = f"{new.label}: new / old: {shown}", f"<= {bound:g}x, issue 21"
        checks.append(Check(text, value, target, met, new.label, old.label, what))
    return checks
