# The compiled decoder twin (_speedups.c); the pure twin _pure.py documents each function.
from collections.abc import Callable

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Batch, Compression, Record

def decode_v2_records(
    data: bytes,
    pos: int,
    end: int,
    count: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    base_sequence: int,
    /,
) -> tuple[list[Record], CorruptRecordError | None]: ...
def decode_legacy_inner(
    data: bytes, wrapper_magic: int, wrapper_offset: int, log_append_time: int | None, /
) -> tuple[list[Record], CorruptRecordError | None]: ...
def decode_legacy_run(
    file: str, buf: bytes, pos: int, end: int, file_pos: int, with_records: bool, /
) -> tuple[list[Batch], int]: ...
def decode_legacy_wrapper(
    file: str,
    buf: bytes,
    pos: int,
    end: int,
    file_pos: int,
    with_records: bool,
    max_batch_bytes: int,
    max_records: int,
    decompress: Callable[[Compression, bytes, int], bytes],
    /,
) -> Batch | None: ...
def crc32(data: bytes, table_only: bool = False, /) -> int: ...
