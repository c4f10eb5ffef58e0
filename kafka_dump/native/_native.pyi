# The compiled module (one C file per pure module it twins). Each function that a pure module binds
# (kafka_dump.native.bind) has that pure function's signature, which is its interface: re-exported
# here, so the two cannot differ. Below them, what has no pure twin of the same shape.
from collections.abc import Callable
from typing import overload

from kafka_dump.analysis.redact_records import redact_v2_records as redact_v2_records
from kafka_dump.model import Compression
from kafka_dump.render.jsonl import batch_json as batch_json
from kafka_dump.render.jsonl import plain_run_json as plain_run_json
from kafka_dump.render.jsonl import run_json as run_json
from kafka_dump.render.rows import cells as cells
from kafka_dump.render.rows import lines as lines
from kafka_dump.render.rows import messages as messages
from kafka_dump.wire._gather_pure import gather_legacy_inner as gather_legacy_inner
from kafka_dump.wire._gather_pure import gather_legacy_wrappers as gather_legacy_wrappers
from kafka_dump.wire._gather_pure import gather_v2_records as gather_v2_records
from kafka_dump.wire._walk_pure import walk_entries as walk_entries
from kafka_dump.wire._walk_pure import walk_v2_records as walk_v2_records
from kafka_dump.wire.decode import decode_legacy_inner as decode_legacy_inner
from kafka_dump.wire.decode import decode_legacy_run as decode_legacy_run
from kafka_dump.wire.decode import decode_legacy_wrapper as decode_legacy_wrapper
from kafka_dump.wire.decode import decode_v2_records as decode_v2_records
from kafka_dump.wire.encoder import encode_legacy_messages as encode_legacy_messages
from kafka_dump.wire.encoder import encode_v2_entry as encode_v2_entry
from kafka_dump.wire.encoder import encode_v2_records as encode_v2_records
from kafka_dump.wire.encoder import legacy_messages_size as legacy_messages_size
from kafka_dump.wire.encoder import v1_inner_to_v2 as v1_inner_to_v2
from kafka_dump.wire.encoder import v2_records_size as v2_records_size
from kafka_dump.wire.recheck import same_as_v1_inner as same_as_v1_inner
from kafka_dump.wire.recheck import same_v2_records as same_v2_records
from kafka_dump.wire.transcode import gunzip as gunzip
from kafka_dump.wire.transcode import lz4_frame as lz4_frame
from kafka_dump.wire.transcode import read_wrappers as read_wrappers
from kafka_dump.wire.transcode import unlz4_frame as unlz4_frame
from kafka_dump.wire.transcode import write_wrappers as write_wrappers

# decode.c: zlib.crc32 by the decoders' path or by the tables alone (for the tests).
def crc32(data: bytes, table_only: bool = False, /) -> int: ...

# gather.c: its histograms' layout, which must be _gather_layout.py's.
NBUCKETS: int
SLOTS: int

# ahead.c: the inflate-ahead engine (log/ahead.py's Ahead uses it) and its scan.
class InflateEngine:
    def __init__(
        self,
        decompress: Callable[[Compression, bytes | memoryview, int], bytes]
        | Callable[[int, memoryview], bytes],
        limit: int,
        budget: int,
        /,
    ) -> None: ...
    def start(self, window: bytes | bytearray, spans: list[tuple[int, int, int]], /) -> bool: ...
    def scan(self, window: bytes | bytearray, pos: int, end: int, /) -> bool: ...
    @overload
    def take(self, codec: Compression, payload: bytes | memoryview, limit: int, /) -> bytes: ...
    @overload
    def take(self, codec: int, payload: memoryview, /) -> bytes: ...
    def finish(self) -> None: ...
    def close(self) -> None: ...
    def counts(self) -> dict[str, int]: ...

def compressed_spans(data: bytes | bytearray, pos: int, end: int, /) -> list[tuple[int, int, int]]: ...

# redact.c: Pseudonyms.stream by the compiled digests, and which SHA-256 compression they use.
def pseudonym_stream(secret: bytes, domain: int, data: bytes, n: int, portable: bool, /) -> bytes: ...

SHA256_PATH: str
