"""Diff: `kdump diff` of two identical replicas against `kdump verify-crc --shallow` of one (issue 26).

Replica A is the generated segment; replica B a partition directory holding the same bytes cut into
three segments at other boundaries (made once, beside the cache's files). Comparing headers and
stored CRCs, then bytes, of both must take no longer than the shallow check (which computes every
CRC) of one, as whole processes. Peak RSS stays under 200 MB.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import kdump_side
from benchmarks.cases import Context
from benchmarks.harness import Contender, Ratio, Table, Target, measure

NAME = "diff"
ABOUT = "kdump diff of two identical replicas vs kdump verify-crc --shallow of one"
FILES = ("v2-lz4", "v1-gzip")
BIG = ("big-100m", "big-200m", "big-1g")

DIFF = "kdump diff (two identical replicas)"
SHALLOW = "kdump verify-crc --shallow (one replica)"


def replica(ctx: Context, path: str) -> Path:
    """A partition directory with the bytes of the segment at ``path`` cut into three segments at
    entry boundaries near a third and two thirds of it; reused while the segment is unchanged."""
    from kafka_dump.log.segment import read_segment
    from kafka_dump.model import Batch

    source = Path(path)
    size = source.stat().st_size
    out = ctx.cache / "replicas" / source.stem
    marker = out / "source-size"
    if marker.exists() and marker.read_text() == str(size):
        return out
    cuts: list[tuple[int, int]] = []  # (position, baseOffset) where a segment starts
    wanted = [0, size // 3, 2 * size // 3]
    for item in read_segment(source, with_records=False):
        if isinstance(item, Batch) and len(cuts) < len(wanted) and item.position >= wanted[len(cuts)]:
            cuts.append((item.position, item.baseOffset))
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.log"):
        old.unlink()
    ends = [c[0] for c in cuts[1:]] + [size]
    with source.open("rb") as f:
        for (start, base), end in zip(cuts, ends, strict=True):
            f.seek(start)
            with (out / f"{base:020d}.log").open("wb") as w:
                left = end - start
                while left:
                    chunk = f.read(min(left, 1 << 24))
                    w.write(chunk)
                    left -= len(chunk)
    marker.write_text(str(size))
    return out


def run(ctx: Context) -> list[Table] | str:
    why = kdump_side.missing("diff") or kdump_side.missing("verify-crc", "--shallow")
    if why is not None and not ctx.skip_kdump:
        return why
    kdump = kdump_side.command()
    tables = []
    for name in ctx.files(FILES, BIG):
        info = ctx.segment(name)
        b = replica(ctx, info.path)
        contenders = [
            Contender(DIFF, "kdump", argv=[*kdump, "diff", info.path, str(b)]),
            Contender(SHALLOW, "kdump", argv=[*kdump, "verify-crc", "--shallow", "--no-index", info.path]),
        ]
        ratios = [Ratio(DIFF, SHALLOW, at_most=1.0, source="issue 26")]
        targets = [Target(DIFF, max_rss_mib=200, source="issue 26")]
        table = ctx.table(NAME, name)
        if name not in BIG:
            table.notes.append(
                "the 1.0x target is on ~1 GiB replicas (--big); on a file this size both processes are mostly start-up"
            )
        tables.append(measure(table, ctx.keep(contenders), ctx.repeat, ratios, targets))
    return tables
