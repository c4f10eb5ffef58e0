"""Convert: `kdump convert` of the v1 gzip file to v2 lz4 against the same job done with kafka-python.

Issue 10: at least 5x faster, kdump's own verification pass included, memory flat. kafka-python's
version reads every wrapper with MemoryRecords and writes one v2 lz4 batch per wrapper with
DefaultRecordBatchBuilder (offsets and timestamps kept), to a temporary file, fsynced and renamed.
"""

from __future__ import annotations

from benchmarks import kdump_side, peers
from benchmarks.cases import Context
from benchmarks.harness import Contender, Ratio, Table, Target, measure

NAME = "convert"
ABOUT = "kdump convert v1 gzip -> v2 lz4 vs kafka-python's reader and builders"
FILES = ("v1-gzip",)

KDUMP = "kdump convert --to-magic 2 --compression lz4"
KP = "kafka-python reader + builders (process)"
LZ4 = "3"


def run(ctx: Context) -> list[Table] | str:
    why = kdump_side.missing("convert", "--to-magic", "--compression")
    if why is not None and not ctx.skip_kdump:
        return why
    kp_ok = peers.kafka_python()[0] is not None
    tables = []
    for name in ctx.files(FILES):
        info = ctx.segment(name)
        out_dir = ctx.scratch() / f"convert-{name}"
        out_dir.mkdir(exist_ok=True)
        out = str(out_dir / "00000000000000000000.log")
        argv = [
            *kdump_side.command(),
            "convert",
            info.path,
            "-o",
            out,
            "--to-magic",
            "2",
            "--compression",
            "lz4",
        ]
        contenders = [Contender(KDUMP, "kdump", argv=argv, cleanup=ctx.wipe(out_dir))]
        if kp_ok:
            argv = kdump_side.child("convert-kafka-python", info.path, out, LZ4)
            contenders.append(Contender(KP, "peer", argv=argv, cleanup=ctx.wipe(out_dir)))
        ratios = [Ratio(KDUMP, KP, at_least=5.0, source="issue 10")]
        targets = [Target(KDUMP, max_rss_mib=200, source="issue 13")]
        tables.append(measure(ctx.table(NAME, name), ctx.keep(contenders), ctx.repeat, ratios, targets))
    return tables
