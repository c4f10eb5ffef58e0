"""jbod: `kdump ls` over a broker's data the way operators lay it out (issue 35).

10,000 partitions of one small segment each (scaled: records / 10 below 100,000 records), listed as
one log dir, and the same partitions split between two log dirs under one JBOD parent
(`jbod/data-1`, `jbod/data-2`), named by the parent: the walk of the parent (any depth, one listing a
directory) costs no more than one log dir's, and stays under 2 s on this machine.
"""

from __future__ import annotations

import struct
from pathlib import Path

from benchmarks import kdump_side
from benchmarks.cases import Context
from benchmarks.cases.ls import _batch
from benchmarks.harness import Check, Contender, Ratio, Table, measure

NAME = "jbod"
ABOUT = "kdump ls over 10,000 partitions: a JBOD parent of two log dirs against one log dir"

ONE = "kdump ls LOG_DIR (one log dir)"
JBOD = "kdump ls PARENT (two log dirs under it)"
LIMIT_S = 2.0


def layouts(ctx: Context) -> tuple[Path, Path, int]:
    """(one log dir, a JBOD parent of two log dirs, partitions): the same partitions in both."""
    n = min(10_000, max(20, ctx.records // 10))
    root = ctx.cache / f"jbod-{n}"
    one, parent = root / "one", root / "jbod"
    if not (root / "done").exists():
        small = bytearray(_batch(0, 1, 20, ctx.seed))
        for p in range(n):
            struct.pack_into(">q", small, 0, p)
            name = f"topic-{p % 50}-{p}"
            for d in (one / name, parent / f"data-{1 + p % 2}" / name):
                d.mkdir(parents=True, exist_ok=True)
                (d / "00000000000000000000.log").write_bytes(small)
        (root / "done").write_text("")
    return one, parent, n


def run(ctx: Context) -> list[Table] | str:
    why = kdump_side.missing("ls")
    if why is not None and not ctx.skip_kdump:
        return why
    ls = [*kdump_side.command(), "ls", "--no-progress"]
    one, parent, n = layouts(ctx)
    table = Table(NAME, "partitions", f"{n:,} partitions of one small segment each", None, None)
    contenders = [
        Contender(ONE, "kdump", argv=[*ls, str(one)]),
        Contender(JBOD, "kdump", argv=[*ls, str(parent)]),
    ]
    measure(table, ctx.keep(contenders), ctx.repeat, [Ratio(JBOD, ONE, as_time=True)])
    medians = {x.label: x.median_s for x in table.lines}
    for label in (ONE, JBOD):
        s = medians.get(label)
        if s is not None:
            table.checks.append(
                Check(f"{label}: {s:.2f} s", s, f"< {LIMIT_S:g} s, issue 35", s < LIMIT_S, label)
            )
    table.notes.append("whole processes on a warm page cache, start-up included")
    return [table]
