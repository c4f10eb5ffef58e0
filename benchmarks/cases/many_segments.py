"""Many segments: a partition of one-batch segments against the same batches in one segment (issue 28).

Each command (`stats --compare`, its JSON, `stats`, `verify-crc`, `dump` as a table and as JSON) runs
on a partition directory of N segments holding one v2 lz4 batch each (with the `.index` and
`.timeindex` a broker leaves), and on a directory holding the same batches in one segment. Per-file
cost must be small: the N-segment run takes at most 4x the one-segment run, and 5,000 segments take
under 10 s (stated as records/s: the records over 10 s).
"""

from __future__ import annotations

from benchmarks import gen, kdump_side
from benchmarks.cases import Context
from benchmarks.harness import Contender, Ratio, Table, Target, measure

NAME = "many-segments"
ABOUT = "stats, verify-crc and dump over N one-batch segments vs the same batches in one segment"

PER_BATCH = 10  # records a batch: a quiet topic whose segments roll on time
SEGMENTS = (1000, 5000)
UNDER_S = 10.0  # the 5,000-segment partition, per command

COMMANDS = (
    ("stats --compare", ["stats", "--compare"]),
    ("stats --compare --format json", ["stats", "--compare", "--format", "json"]),
    ("stats", ["stats"]),
    ("verify-crc", ["verify-crc"]),
    ("dump", ["dump"]),
    ("dump --format json", ["dump", "--format", "json"]),
)


def counts(records: int) -> tuple[int, ...]:
    """The segment counts measured: 1,000 and 5,000; fewer for a quick look (--records under 50,000)."""
    return SEGMENTS if records >= 50_000 else (max(2, records // PER_BATCH),)


def run(ctx: Context) -> list[Table] | str:
    why = kdump_side.missing("stats", "--compare") or kdump_side.missing("verify-crc")
    if why is not None and not ctx.skip_kdump:
        return why
    kdump = kdump_side.command()
    tables = []
    for n in counts(ctx.records):
        info = gen.ensure_partitions(ctx.cache, n, PER_BATCH, ctx.seed)
        title = (
            f"{n:,} one-batch segments ({PER_BATCH} records, v2 lz4) vs one segment; {info.records:,} records"
        )
        table = Table(NAME, f"{n}-segments", title, info.records, info.bytes)
        contenders, ratios, targets = [], [], []
        for label, args in COMMANDS:
            if ctx.skip_compare and "--compare" in args:
                continue
            one, many = f"{label}, 1 segment", f"{label}, {n:,} segments"
            contenders.append(Contender(one, "kdump", argv=[*kdump, *args, info.one]))
            contenders.append(Contender(many, "kdump", argv=[*kdump, *args, info.many]))
            ratios.append(Ratio(many, one, at_most=4.0, source="issue 28"))
            if n >= 5000:
                targets.append(
                    Target(many, min_records_per_s=info.records / UNDER_S, source="issue 28: < 10 s")
                )
        if ctx.skip_compare:
            table.notes.append("`stats --compare` left out (--skip-compare)")
        tables.append(measure(table, ctx.keep(contenders), ctx.repeat, ratios, targets))
    return tables
