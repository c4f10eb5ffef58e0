"""State: `kdump state` replaying a `__consumer_offsets` partition against `kdump dump --format json`.

Issue 25: a `__consumer_offsets` partition of 10M records with 100k live keys replays in memory
proportional to the live keys, not the records, and at least at `dump --format json` speed. The
partition is generated here (kafka-python's batch builder, 200 offset commits per batch): `--records`
commits over one live key per ten records, at most 100k keys. The RSS of `state` is shown beside
`dump`'s, whose memory stays flat: the figure to read is how it moves with the live keys.
"""

from __future__ import annotations

import struct
from pathlib import Path

from benchmarks import kdump_side
from benchmarks.cases import Context
from benchmarks.harness import Contender, Ratio, Table, log, measure
from benchmarks.peers import HUGE

NAME = "state"
ABOUT = "kdump state (replay of __consumer_offsets) vs dump --format json"
PER_BATCH = 200
TS0 = 1_700_000_000_000

STATE = "kdump state --format json"
JSON = "kdump dump --format json > /dev/null"
RAW = "kdump dump --format json --decode none"


def _s16(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def offsets_partition(cache: Path, records: int, seed: int) -> tuple[Path, int, int]:
    """(directory, live keys, bytes) of a generated __consumer_offsets partition, made once and cached."""
    from kafka.record.default_records import DefaultRecordBatchBuilder

    keys = max(1, min(100_000, records // 10))
    directory = cache / f"state-offsets-{records}-{keys}-{seed}" / "__consumer_offsets-0"
    log_file = directory / f"{0:020d}.log"
    if not log_file.exists():
        log(f"  state: writing {records:,} offset commits over {keys:,} keys to {directory} ...")
        directory.mkdir(parents=True, exist_ok=True)
        key_bytes = [
            struct.pack(">h", 1) + _s16(f"group-{k % 1000}") + _s16(f"topic-{k // 1000 % 10}")
            + struct.pack(">i", k // 10_000 + seed)
            for k in range(keys)
        ]  # fmt: skip
        tmp = log_file.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            for base in range(0, records, PER_BATCH):
                builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, HUGE)
                for i in range(min(PER_BATCH, records - base)):
                    offset = base + i
                    value = struct.pack(">hqi", 3, offset, 0) + _s16("") + struct.pack(">q", TS0 + offset)
                    builder.append(
                        i, timestamp=TS0 + offset, key=key_bytes[offset % keys], value=value, headers=[]
                    )
                entry = bytearray(builder.build())
                struct.pack_into(">q", entry, 0, base)
                f.write(entry)
        tmp.rename(log_file)
    return directory, keys, log_file.stat().st_size


def run(ctx: Context) -> list[Table] | str:
    why = kdump_side.missing("state")
    if why is not None and not ctx.skip_kdump:
        return why
    kdump = kdump_side.command()
    directory, keys, size = offsets_partition(ctx.cache, ctx.records, ctx.seed)
    title = f"__consumer_offsets: {ctx.records:,} offset commits, {keys:,} live keys, {size / 1e6:,.1f} MB"
    table = Table(NAME, "offsets", title, ctx.records, size)
    path = str(directory)
    contenders = [
        Contender(STATE, "kdump", argv=[*kdump, "state", "--format", "json", path]),
        Contender(JSON, "kdump", argv=[*kdump, "dump", "--format", "json", path]),
        Contender(RAW, "kdump", argv=[*kdump, "dump", "--format", "json", "--decode", "none", path]),
    ]
    ratios = [Ratio(STATE, JSON, at_least=1.0, source="issue 25"), Ratio(STATE, RAW)]
    return [measure(table, ctx.keep(contenders), ctx.repeat, ratios, [])]
