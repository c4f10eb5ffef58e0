"""Search: `kdump dump --key-re` matching 0.1% of the records, against dumping them all as JSON and
against the JSON piped through jq's select (the way before the search options), as whole processes.

Issue 25: the search is at least 3x faster than `dump --format json` and 10x faster than the jq pipe.
"""

from __future__ import annotations

import shlex
import shutil

from benchmarks import kdump_side
from benchmarks.cases import Context
from benchmarks.harness import Contender, Ratio, Table, measure

NAME = "search"
ABOUT = "kdump dump --key-re matching 0.1% vs dump --format json, and vs json | jq select"
FILES = ("v2-lz4", "v1-gzip")

PATTERN = "999$"  # keys are k%08d: one record in a thousand
SEARCH = f"kdump dump --format json --key-re '{PATTERN}' > file"
JSON = "kdump dump --format json > file"
JQ = f"kdump dump --format json | jq -c (records whose key matches {PATTERN}) > file"
JQ_FILTER = f'.records[]? | select((.key // "") | test("{PATTERN}"))'


def run(ctx: Context) -> list[Table] | str:
    why = kdump_side.missing("dump", "--key-re")
    if why is not None and not ctx.skip_kdump:
        return why
    kdump = [*kdump_side.command(), "dump", "--format", "json"]
    jq = shutil.which("jq")
    tables = []
    for name in ctx.files(FILES):
        path = ctx.segment(name).path
        out = ctx.scratch() / f"search-{name}.out"
        contenders = [
            Contender(SEARCH, "kdump", argv=[*kdump, "--key-re", PATTERN, path], stdout=out),
            Contender(JSON, "kdump", argv=[*kdump, path], stdout=out),
        ]
        ratios = [Ratio(SEARCH, JSON, at_least=3.0, source="issue 25")]
        if jq is not None:  # the jq line is left out where jq is not installed
            pipe = f"{shlex.join([*kdump, path])} | {shlex.join([jq, '-c', JQ_FILTER])}"
            contenders.append(
                Contender(JQ, "kdump", argv=[shutil.which("sh") or "/bin/sh", "-c", pipe], stdout=out)
            )
            ratios.append(Ratio(SEARCH, JQ, at_least=10.0, source="issue 25"))
        tables.append(measure(ctx.table(NAME, name), ctx.keep(contenders), ctx.repeat, ratios, []))
    return tables
