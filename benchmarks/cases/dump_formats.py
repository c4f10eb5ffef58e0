"""Dump formats: `kdump dump` in its three formats, each written to a file, as whole processes.

Issue 6: the default table format reaches 200k records/s and stays within 3x of `--format json`.
Issue 13: `--format json --payload base64` is 3x faster than kafka-python merely iterating the records
(also a whole process) on the v1 files.
"""

from __future__ import annotations

from benchmarks import kdump_side, peers
from benchmarks.cases import Context
from benchmarks.harness import Contender, Ratio, Table, Target, measure

NAME = "dump-formats"
ABOUT = "kdump dump table / json base64 / kafka to a file, and json vs kafka-python iteration"
FILES = ("v2-lz4", "v1-none", "v1-gzip")
BIG = ("big-100m", "big-1g")

TABLE = "kdump dump (table) > file"
JSON = "kdump dump --format json --payload base64 > file"
KAFKA = "kdump dump --format kafka > file"
KP = "kafka-python iteration (process)"


def run(ctx: Context) -> list[Table] | str:
    why = kdump_side.missing("dump", "--format", "--payload")
    if why is not None and not ctx.skip_kdump:
        return why
    kp_cls, _ = peers.kafka_python()
    kdump = [*kdump_side.command(), "dump"]
    tables = []
    for name in ctx.files(FILES, BIG):
        info = ctx.segment(name)
        path, n = info.path, info.records
        out = ctx.scratch() / f"dump-{name}.out"
        contenders = [
            Contender(TABLE, "kdump", argv=[*kdump, path], stdout=out),
            Contender(
                JSON, "kdump", argv=[*kdump, "--format", "json", "--payload", "base64", path], stdout=out
            ),
            Contender(KAFKA, "kdump", argv=[*kdump, "--format", "kafka", path], stdout=out),
        ]
        if kp_cls is not None:
            contenders.append(
                Contender(KP, "peer", argv=kdump_side.child("decode-kafka-python", path, str(n)))
            )
        issue6 = name in ("v2-lz4", "v1-none")
        issue13 = name in ("v1-gzip", "v1-none")
        ratios = [
            Ratio(
                TABLE, JSON, at_most=3.0 if issue6 else None, source="issue 6" if issue6 else "", as_time=True
            ),
            Ratio(JSON, KP, at_least=3.0 if issue13 else None, source="issue 13" if issue13 else ""),
        ]
        targets = [Target(TABLE, min_records_per_s=200_000, source="issue 6")] if issue6 else []
        tables.append(measure(ctx.table(NAME, name), ctx.keep(contenders), ctx.repeat, ratios, targets))
    return tables
