"""Start-up: `kdump --version` against a bare `python -c pass` (issue 13: at most 2x)."""

from __future__ import annotations

import sys

from benchmarks import kdump_side
from benchmarks.cases import Context
from benchmarks.harness import Contender, Ratio, Table, measure

NAME = "startup"
ABOUT = "kdump --version vs python -c pass, as whole processes"

KDUMP = "kdump --version"
PYTHON = "python -c pass"


def run(ctx: Context) -> list[Table] | str:
    if kdump_side.help_text() is None and not ctx.skip_kdump:
        return "`kdump --help` fails: nothing to start"
    contenders = [
        Contender(KDUMP, "kdump", argv=[*kdump_side.command(), "--version"]),
        Contender(PYTHON, "baseline", argv=[sys.executable, "-c", "pass"]),
    ]
    table = Table(NAME, "", f"start-up of `{' '.join(kdump_side.command())}`", None, None)
    ratios = [Ratio(KDUMP, PYTHON, at_most=2.0, source="issue 13")]
    return [measure(table, ctx.keep(contenders), ctx.repeat, ratios)]
