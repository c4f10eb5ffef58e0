"""The report: a header with the environment, one plain-text table per case and file, and the JSON."""

from __future__ import annotations

import json
import os
import platform
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.harness import Check, Table


def environment(notes: dict[str, str]) -> dict[str, Any]:
    """Versions and switches that change the numbers."""
    env: dict[str, Any] = {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "executable": sys.executable,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        **notes,
    }
    return env


def print_header(env: dict[str, Any], repeat: int, skipped: list[str]) -> None:
    print("kdump benchmark")
    for k, v in env.items():
        print(f"  {k}: {v}")
    print(
        f"  repeat: {repeat}, round-robin, median. In-process times include reading the file from a warm "
        "page cache; process times are wall clock including interpreter start-up."
    )
    for s in skipped:
        print(f"  ! {s}")
    sys.stdout.flush()


def _fmt(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def _verdict(c: Check) -> str:
    if c.met is None:
        return "" if c.target == "no target" else "  (not measured)"
    return "  MET" if c.met else "  NOT MET"


def print_table(t: Table) -> None:
    """One case on one file: the lines, then every ratio and target with its verdict."""
    print()
    print(f"== {t.case} · {t.title}")
    head = f"{'measurement':<52} {'how':<10} {'median s':>9} {'records/s':>12} {'MB/s':>8} {'peak RSS':>10}"
    print(head)
    print("-" * len(head))
    for line in t.lines:
        rss = f"{line.peak_rss_kib / 1024:,.0f} MiB" if line.peak_rss_kib else "-"
        print(
            f"{line.label:<52} {line.how:<10} {_fmt(line.median_s, '.3f'):>9} "
            f"{_fmt(line.records_per_s, ',.0f'):>12} {_fmt(line.mb_per_s, ',.1f'):>8} {rss:>10}"
        )
        if line.note:
            print(f"    ! {line.note}")
    for c in t.checks:
        target = "" if c.target == "no target" else f" (target {c.target})"
        print(f"  > {c.text}{target}{_verdict(c)}")
    for note in t.notes:
        print(f"  ! {note}")
    sys.stdout.flush()


def print_summary(tables: list[Table]) -> None:
    """Every check with a target, in one list at the end."""
    checks = [(t, c) for t in tables for c in t.checks if c.target != "no target" and not c.old]
    if not checks:
        return
    print()
    print("== targets")
    for t, c in checks:
        verdict = {True: "MET", False: "NOT MET", None: "not measured"}[c.met]
        print(f"  {verdict:<12} {t.case} · {t.file or t.title}: {c.text} (target {c.target})")


def print_old(tables: list[Table]) -> None:
    """--old: every kdump line before (the old checkout) and after (this one), with both ratios."""
    rows = []
    for t in tables:
        lines = {line.label: line for line in t.lines}
        rss = {c.subject: c for c in t.checks if c.old == "peak RSS"}
        for c in (c for c in t.checks if c.old == "time"):
            new, old, r = lines[c.subject], lines[c.baseline], rss.get(c.subject)
            verdicts = [v for v in (c.met, r.met if r else None) if v is not None]
            rows.append(
                (
                    f"{t.case} · {t.file}" if t.file else t.case,
                    c.subject,
                    _fmt(old.median_s, ".3f"),
                    _fmt(new.median_s, ".3f"),
                    _fmt(c.value, ".3f"),
                    f"{old.peak_rss_kib / 1024:,.0f}" if old.peak_rss_kib else "-",
                    f"{new.peak_rss_kib / 1024:,.0f}" if new.peak_rss_kib else "-",
                    _fmt(r.value if r else None, ".3f"),
                    "not measured" if c.met is None else "MET" if all(verdicts) else "NOT MET",
                )
            )
    if not rows:
        return
    print()
    print("== new / old (--old): median s, peak RSS MiB; within 5% in time and 10% in RSS (issue 21)")
    head = (
        "case · file",
        "measurement",
        "old s",
        "new s",
        "new/old s",
        "old RSS",
        "new RSS",
        "new/old RSS",
        "",
    )
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    for row in (head, *rows):
        cells = [
            cell.ljust(w) if i in (0, 1, 8) else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  " + " ".join(cells).rstrip())
    met = sum(row[-1] == "MET" for row in rows)
    print(f"  {met} of {len(rows)} lines within both bounds")


def write_json(path: Path, meta: dict[str, Any], cases: dict[str, list[Table] | str]) -> None:
    """Every raw time and derived figure."""
    out = {
        **meta,
        "cases": {
            name: ({"skipped": r} if isinstance(r, str) else {"tables": [asdict(t) for t in r]})
            for name, r in cases.items()
        },
    }
    path.write_text(json.dumps(out, indent=2) + "\n")
