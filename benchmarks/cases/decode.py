"""Decode: kdump's decoder against kafka-python's and aiokafka's readers, in-process and as processes.

In-process, every decoder reads the file inside the timed region (kdump opens it itself, the peers
get ``Path.read_bytes()``); "read file only" is that part alone. As whole processes (issue 13's view),
start-up and imports count too. Every line touches every field of every record.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import kdump_side, peers
from benchmarks.cases import Context
from benchmarks.harness import Contender, Ratio, Table, measure

NAME = "decode"
ABOUT = "kdump's decoder vs kafka-python and aiokafka (compiled), in-process and as whole processes"
FILES = ("v2-none", "v2-lz4", "v2-gzip", "v2-snappy", "v2-zstd", "v1-gzip", "v1-none", "mixed")
BIG = ("big-100m", "big-1g")

KDUMP = "kdump read_segment"
KP = "kafka-python MemoryRecords"
AIO = "aiokafka MemoryRecords"
AIO_RUNS = "aiokafka, one MemoryRecords per run of equal magic"
KDUMP_P = "kdump decoder (process)"
AIO_P = "aiokafka reader (process)"


def run(ctx: Context) -> list[Table] | str:
    dec, why = kdump_side.decoder()
    if dec is None and not ctx.skip_kdump:
        return why
    kp_cls, _ = peers.kafka_python()
    aio_cls, _ = peers.aiokafka()
    tables = []
    for name in ctx.files(FILES, BIG):
        info = ctx.segment(name)
        path, n = info.path, info.records
        Path(path).read_bytes()  # warm the page cache for everyone
        contenders = [Contender("read file only", "baseline", fn=lambda p=path: len(Path(p).read_bytes()))]
        if dec is not None:
            child = kdump_side.child("decode-kdump-timed", path, str(n))
            contenders.append(Contender(KDUMP, "kdump", fn=lambda p=path: dec(p), expect=n, child=child))
        if kp_cls is not None:
            contenders.append(Contender(KP, "peer", fn=lambda p=path: peers.iterate(kp_cls, p), expect=n))
        if aio_cls is not None:
            runs = Contender(AIO_RUNS, "peer", fn=lambda p=path: peers.iterate_by_magic_runs(aio_cls, p))
            runs.expect = n
            contenders.append(
                Contender(AIO, "peer", fn=lambda p=path: peers.iterate(aio_cls, p), expect=n, fallback=runs)
            )
        contenders.append(Contender(KDUMP_P, "kdump", argv=kdump_side.child("decode-kdump", path, str(n))))
        if aio_cls is not None:
            extra = ["runs"] if name == "mixed" else []
            argv = kdump_side.child("decode-aiokafka", path, str(n), *extra)
            contenders.append(Contender(AIO_P, "peer", argv=argv))
        target = None if name == "mixed" else 1.5  # issue 13: v2 every codec, v1 gzip, v1 uncompressed
        ratios = [
            Ratio(KDUMP, KP),
            Ratio(KDUMP, AIO),
            Ratio(KDUMP_P, AIO_P, at_least=target, source="issue 13" if target else ""),
        ]
        tables.append(measure(ctx.table(NAME, name), ctx.keep(contenders), ctx.repeat, ratios))
    return tables
