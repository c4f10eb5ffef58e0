"""Tasks run as whole processes, so they can be timed like a `kdump` command (start-up included).

    python -m benchmarks.child TASK ARG...

decode-kdump FILE N, decode-kafka-python FILE N, decode-aiokafka FILE N [runs]: iterate every record
of FILE touching every field, and fail (exit 3) unless N records were seen; ``runs`` feeds aiokafka one
MemoryRecords per run of equal magic (for the mixed file). crc32c FILE: read the file and run one
``crc32c.crc32c()`` over all its bytes, the floor of a shallow CRC check. convert-kafka-python IN OUT
CODEC: the convert case's job with kafka-python's reader and builders. decode-kdump-timed FILE N and
encode-kdump-timed FILE N CODEC: an in-process kdump line's call, its setup untimed, printing the
seconds the call took (how `--old` times in-process lines in either checkout). ls-rchar DIR: list
every segment under DIR as `kdump ls` does, in-process, and print the bytes it read through system
calls (``/proc/self/io`` rchar), imports apart.
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path


def timed(call: Callable[[], int]) -> int:
    """Run call once after a gc.collect(), as the harness does in-process; print its seconds."""
    gc.collect()
    t0 = time.perf_counter()
    seen = call()
    print(time.perf_counter() - t0)
    return seen


def main(argv: Sequence[str]) -> int:
    task, args = argv[0], list(argv[1:])
    if task == "crc32c":
        import crc32c

        crc32c.crc32c(Path(args[0]).read_bytes())
        return 0
    if task == "ls-rchar":
        print(ls_rchar(args[0]))
        return 0
    if task == "convert-kafka-python":
        from benchmarks import peers

        peers.convert_to_v2(args[0], args[1], int(args[2]))
        return 0
    path, expected = args[0], int(args[1])
    if task in ("decode-kdump", "decode-kdump-timed"):
        from benchmarks import kdump_side

        fn, why = kdump_side.decoder()
        if fn is None:
            print(why, file=sys.stderr)
            return 2
        seen = timed(lambda: fn(path)) if task == "decode-kdump-timed" else fn(path)
    elif task == "encode-kdump-timed":
        from benchmarks import kdump_side
        from kafka_dump.model import Compression

        encode, why = kdump_side.encoder()
        if encode is None:
            print(why, file=sys.stderr)
            return 2
        batches, codec = kdump_side.batches(path), Compression[args[2]]
        seen = timed(lambda: kdump_side.encode_all(encode, batches, codec))
    elif task in ("decode-kafka-python", "decode-aiokafka"):
        from benchmarks import peers

        cls, why = peers.kafka_python() if task == "decode-kafka-python" else peers.aiokafka()
        if cls is None:
            print(why, file=sys.stderr)
            return 2
        seen = peers.iterate_by_magic_runs(cls, path) if args[2:] == ["runs"] else peers.iterate(cls, path)
    else:
        print(f"unknown task {task}", file=sys.stderr)
        return 2
    if seen != expected:
        print(f"saw {seen:,} records, expected {expected:,}", file=sys.stderr)
        return 3
    return 0


def _rchar() -> int:
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["rchar"])


def ls_rchar(path: str) -> int:
    from kafka_dump.analysis.ls import LsOptions, by_partition, iter_listings
    from kafka_dump.log.sources import find

    groups = by_partition(find([path]).readable())
    before = _rchar()
    for _ in iter_listings(groups, LsOptions()):
        pass
    return _rchar() - before


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
