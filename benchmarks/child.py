"""Tasks run as whole processes, so they can be timed like a `kdump` command (start-up included).

    python -m benchmarks.child TASK ARG...

decode-kdump FILE N, decode-kafka-python FILE N, decode-aiokafka FILE N [runs]: iterate every record
of FILE touching every field, and fail (exit 3) unless N records were seen; ``runs`` feeds aiokafka one
MemoryRecords per run of equal magic (for the mixed file). crc32c FILE: read the file and run one
``crc32c.crc32c()`` over all its bytes, the floor of a shallow CRC check. convert-kafka-python IN OUT
CODEC: the convert case's job with kafka-python's reader and builders.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


def main(argv: Sequence[str]) -> int:
    task, args = argv[0], list(argv[1:])
    if task == "crc32c":
        import crc32c

        crc32c.crc32c(Path(args[0]).read_bytes())
        return 0
    if task == "convert-kafka-python":
        from benchmarks import peers

        peers.convert_to_v2(args[0], args[1], int(args[2]))
        return 0
    path, expected = args[0], int(args[1])
    if task == "decode-kdump":
        from benchmarks import kdump_side

        fn, why = kdump_side.decoder()
        if fn is None:
            print(why, file=sys.stderr)
            return 2
        seen = fn(path)
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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
