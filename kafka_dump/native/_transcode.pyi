# The compiled twin of convert's fast path (_transcode.c); _transcode_pure.py is the reference.
from collections.abc import Callable

from kafka_dump.wire._transcode_pure import Failure, Row, Wrapper

def gunzip(payload: bytes | memoryview, limit: int, /) -> bytes | bool | None: ...
def lz4_frame(header: bytes, data: bytes | memoryview, /) -> bytes: ...
def unlz4_frame(header: bytes, payload: bytes | memoryview, limit: int, /) -> bytes | None: ...
def read_wrappers(
    buf: bytes | bytearray,
    pos: int,
    end: int,
    file_pos: int,
    entry_limit: int,
    max_records: int,
    run_limit: int,
    decompress: Callable[[int, memoryview], bytes],
    transcode: Callable[[bytes, int, int], tuple[bytes, int, int, int, int, int] | None],
    /,
) -> tuple[int, int, int, list[Wrapper]]: ...
def write_wrappers(
    items: list[Wrapper],
    codec: int,
    compress: Callable[[bytes], bytes],
    decompress: Callable[[int, memoryview], bytes],
    crc32c: Callable[[memoryview], int],
    same: Callable[[bytes, int, int, int, int, bytes, int], tuple[int, int, int, int]],
    last_offset: int | None,
    /,
) -> tuple[bytes, list[Row], int | None, Failure | None]: ...
