"""Encode: kdump's `encode_entry` against kafka-python's DefaultRecordBatchBuilder (issue 8: >= 8x).

Both encode the same records (those of the v2-lz4 file: 1000 records a batch, 100-byte values, some
headers) as v2 uncompressed and as v2 lz4, in-process, one batch per input batch. That file only
carries the workload, so ``--only`` does not apply to this case. The inputs are
decoded once beforehand (kdump's Batch values for kdump, plain tuples for kafka-python) and not timed.
"""

from __future__ import annotations

from benchmarks import kdump_side, peers
from benchmarks.cases import Context
from benchmarks.harness import Contender, Ratio, Table, log, measure

NAME = "encode"
ABOUT = "kafka_dump.wire.encode_entry vs kafka-python's DefaultRecordBatchBuilder, v2 none and lz4"
SOURCE = "v2-lz4"  # the workload's records; not a file under test, so --only does not apply


def run(ctx: Context) -> list[Table] | str:
    encode, why = kdump_side.encoder()
    if encode is None and not ctx.skip_kdump:
        return why
    from kafka_dump.model import Compression

    kp_ok = peers.kafka_python()[0] is not None
    info = ctx.segment(SOURCE)
    log(f"  encode: decoding {info.path} (not timed) ...")
    mine = kdump_side.batches(info.path) if encode is not None else []
    theirs = peers.plain_batches(info.path) if kp_ok else []
    contenders = []
    ratios = []
    for codec, label in ((Compression.NONE, "v2 none"), (Compression.LZ4, "v2 lz4")):
        k, p = f"kdump encode_entry, {label}", f"kafka-python builder, {label}"
        if encode is not None:
            fn = lambda c=codec: kdump_side.encode_all(encode, mine, c)  # noqa: E731
            child = kdump_side.child("encode-kdump-timed", info.path, str(info.records), codec.name)
            contenders.append(Contender(k, "kdump", fn=fn, expect=info.records, child=child))
        if kp_ok:
            fn = lambda c=int(codec): peers.encode_all(theirs, c)  # noqa: E731
            contenders.append(Contender(p, "peer", fn=fn, expect=info.records))
        ratios.append(Ratio(k, p, at_least=8.0, source="issue 8"))
    table = ctx.table(NAME, SOURCE)
    table.bytes = None  # MB/s of the input file would mislead here
    if encode is not None and kp_ok and mine:
        # Same work on both sides: an uncompressed batch is the same size from either encoder.
        ours, base = len(encode(mine[0], compression=Compression.NONE)), theirs[0][0]
        if ours != len(peers.build_v2(base, theirs[0][1], 0)):
            table.notes.append(
                f"first batch, v2 none: kdump wrote {ours} bytes, kafka-python a different size"
            )
    return [measure(table, ctx.keep(contenders), ctx.repeat, ratios)]
