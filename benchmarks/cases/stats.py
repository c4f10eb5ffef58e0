"""Stats: `kdump stats` against `kdump dump --format json`, and `stats --compare` against its codecs.

Issue 9: `stats` (sizes and counts, no record objects) runs at least 2x as fast as `dump --format json >
/dev/null` on the same file; `stats --compare` (every magic x codec) takes at most 3x the time the codecs
alone need to compress that data. That floor is measured in-process: the records are first encoded
uncompressed, per batch, as a v0 and a v1 message set and a v2 records section (kafka-python's
builders, not timed); then kdump's own `codecs.compress` runs over them with every codec `stats
--compare` uses (v0/v1: gzip, snappy, lz4; v2: gzip, snappy, lz4, zstd).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import kdump_side
from benchmarks.cases import Context
from benchmarks.harness import Contender, Ratio, Table, Target, log, measure
from benchmarks.peers import HUGE

NAME = "stats"
ABOUT = "kdump stats vs dump --format json; stats --compare vs the codecs alone"
FILES = ("v1-gzip", "v2-lz4")

STATS = "kdump stats"
JSON = "kdump dump --format json > /dev/null"
COMPARE = "kdump stats --compare"
CODECS = "the codecs alone (in-process)"

# (magic, codec names) that `stats --compare` encodes.
COMPARED = (
    (0, ("GZIP", "SNAPPY", "LZ4")),
    (1, ("GZIP", "SNAPPY", "LZ4")),
    (2, ("GZIP", "SNAPPY", "LZ4", "ZSTD")),
)


def uncompressed_blobs(path: str) -> tuple[dict[int, list[bytes]], int]:
    """Per batch of the file, its records encoded uncompressed in each magic; and the record count."""
    from kafka.record import MemoryRecords
    from kafka.record.default_records import DefaultRecordBatchBuilder
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    blobs: dict[int, list[bytes]] = {0: [], 1: [], 2: []}
    n = 0
    mr = MemoryRecords(Path(path).read_bytes())
    while (b := mr.next_batch()) is not None:
        recs = list(b)
        n += len(recs)
        v2 = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, HUGE)
        for i, r in enumerate(recs):
            v2.append(i, r.timestamp, r.key, r.value, list(r.headers))
        blobs[2].append(bytes(v2.build()[61:]))  # the records section, after the 61-byte header
        for magic in (0, 1):
            legacy = LegacyRecordBatchBuilder(magic, 0, HUGE)
            for i, r in enumerate(recs):
                legacy.append(i, r.timestamp if magic else None, r.key, r.value)
            blobs[magic].append(bytes(legacy.build()))
    return blobs, n


def codecs_alone(path: str) -> tuple[Callable[[], int] | None, str]:
    """The in-process floor of `stats --compare` on this file, or None and why not."""
    try:
        from kafka_dump.model import Compression
        from kafka_dump.wire.codecs import compress
    except Exception as e:
        return None, f"kafka_dump.wire.codecs.compress not importable ({type(e).__name__}: {e})"
    log(f"  stats: encoding {path} uncompressed in each magic (not timed) ...")
    blobs, n = uncompressed_blobs(path)
    plan: list[tuple[Any, list[bytes]]] = [
        (Compression[codec], blobs[magic]) for magic, codecs in COMPARED for codec in codecs
    ]

    def run() -> int:
        for codec, parts in plan:
            for part in parts:
                compress(codec, part)
        return n

    return run, ""


def run(ctx: Context) -> list[Table] | str:
    why = kdump_side.missing("stats")
    if why is not None and not ctx.skip_kdump:
        return why
    compare = kdump_side.missing("stats", "--compare") is None and not ctx.skip_compare
    kdump = kdump_side.command()
    tables = []
    for name in ctx.files(FILES):
        info = ctx.segment(name)
        path = info.path
        table = ctx.table(NAME, name)
        contenders = [
            Contender(STATS, "kdump", argv=[*kdump, "stats", path]),
            Contender(JSON, "kdump", argv=[*kdump, "dump", "--format", "json", path]),
        ]
        if compare:
            contenders.append(Contender(COMPARE, "kdump", argv=[*kdump, "stats", "--compare", path]))
            fn, why_not = codecs_alone(path)
            if fn is not None:
                contenders.append(Contender(CODECS, "baseline", fn=fn, expect=info.records))
            else:
                table.notes.append(why_not)
        elif ctx.skip_compare:
            table.notes.append("`stats --compare` left out (--skip-compare)")
        else:
            table.notes.append("`kdump stats` has no --compare yet: those lines are left out")
        ratios = [
            Ratio(STATS, JSON, at_least=2.0, source="issue 9"),
            Ratio(COMPARE, CODECS, at_most=3.0, source="issue 9"),
        ]
        targets = [Target(label, max_rss_mib=200, source="issue 13") for label in (STATS, COMPARE)]
        tables.append(measure(table, ctx.keep(contenders), ctx.repeat, ratios, targets))
    return tables
