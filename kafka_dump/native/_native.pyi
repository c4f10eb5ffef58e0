# The compiled module (one C file per pure module it twins); each function is bound by its pure twin.
from collections.abc import Callable, Mapping, Sequence
from typing import overload

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Batch, Compression, Record
from kafka_dump.wire._gather_layout import (
    Gathered,
    GatheredLegacy,
    GatheredWrappers,
    Histograms,
    WrapperHistograms,
)
from kafka_dump.wire._transcode_pure import Failure, Row, Wrapper
from kafka_dump.wire._walk_pure import Checksum, Decompress, EntryRow, RawEntryWalk, RawWalk

# _speedups.c: the decoder (wire/_pure.py)
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

# _walk.c: the validating walks (wire/_walk_pure.py)
def walk_v2_records(data: bytes, pos: int, end: int, count: int, last_offset_delta: int, /) -> RawWalk: ...
def walk_entries(
    data: bytes | bytearray,
    pos: int,
    end: int,
    file_pos: int,
    deep: bool,
    last: int | None,
    after_damage: bool,
    max_records: int,
    entry_limit: int,
    crc32c: Checksum,
    crc32: Checksum,
    decompress: Decompress,
    rows: list[EntryRow] | None,
    /,
) -> RawEntryWalk: ...

# _gather.c: the statistics walk (wire/_gather_pure.py)
NBUCKETS: int
SLOTS: int

def gather_v2_records(
    data: bytes | memoryview,
    pos: int,
    end: int,
    count: int,
    base_timestamp: int,
    log_append_time: int | None,
    width: int,
    hists: Histograms,
    times: dict[int, int],
    header_keys: dict[bytes, int],
    key_limit: int,
    /,
) -> Gathered: ...
def gather_legacy_inner(
    data: bytes | memoryview,
    magic: int,
    wrapper_offset: int,
    log_append_time: int | None,
    width: int,
    hists: Histograms,
    times: dict[int, int],
    /,
) -> GatheredLegacy | None: ...
def gather_legacy_wrappers(
    data: bytes,
    pos: int,
    end: int,
    max_batch_bytes: int,
    max_records: int,
    width: int,
    time_limit: int,
    hists: WrapperHistograms,
    times: dict[int, int],
    unpack: Callable[[Compression, bytes | memoryview, int], bytes] | None = None,
    /,
) -> GatheredWrappers: ...

# _encoder.c: the encoder's record loops (wire/_pure_encoder.py)
def encode_v2_records(
    records: Sequence[Record], base_offset: int, base_timestamp: int, log_append_time: bool, /
) -> bytes: ...
def v2_records_size(
    records: Sequence[Record], base_offset: int, base_timestamp: int, log_append_time: bool, /
) -> int: ...
def encode_v2_entry(
    header: bytes, records: Sequence[Record], base_offset: int, base_timestamp: int, log_append_time: bool, /
) -> bytes: ...
def encode_legacy_messages(
    records: Sequence[Record], magic: int, attributes: int, offset_shift: int, log_append_time: bool, /
) -> bytes: ...
def legacy_messages_size(records: Sequence[Record], magic: int, /) -> int: ...
def v1_inner_to_v2(
    data: bytes, wrapper_offset: int, max_records: int, /
) -> tuple[bytes, int, int, int, int, int] | None: ...

# _recheck.c: convert's record check (wire/_recheck_pure.py)
def same_v2_records(
    data: bytes,
    pos: int,
    end: int,
    base_offset: int,
    base_timestamp: int,
    log_append_time: int | None,
    expected: tuple[Record, ...],
    /,
) -> int: ...
def same_as_v1_inner(
    data: bytes,
    pos: int,
    end: int,
    base_offset: int,
    base_timestamp: int,
    inner: bytes,
    wrapper_offset: int,
    /,
) -> tuple[int, int, int, int]: ...

# _transcode.c: convert's fast path (wire/_transcode_pure.py)
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

# _ahead.c: the inflate-ahead engine (log/ahead.py's InflateAhead is the pure one)
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

# _jsonfast.c: the JSON writer (render/jsonl.py)
def batch_json(
    file_json: bytes, batch: Batch, records: Sequence[Record] | None, payload: int, /
) -> bytes: ...
def run_json(file: str, file_json: bytes, batches: Sequence[Batch], payload: int, /) -> bytes: ...
def plain_run_json(
    file_json: bytes, data: bytes, pos: int, end: int, file_pos: int, with_records: bool, payload: int, /
) -> tuple[bytes, int, int]: ...

# _tablefast.c: the table's rows (render/rows.py)
def cells(
    records: Sequence[Record], max_bytes: int, time_mode: int, first: int, columns: Sequence[list[str]], /
) -> tuple[list[int], list[int]]: ...
def lines(
    columns: Sequence[Sequence[str]],
    widths: Sequence[int],
    drawn: Mapping[int, str],
    sections: Sequence[tuple[int, str]],
    /,
) -> bytes: ...
def messages(batches: Sequence[Batch], start: int, stop: int, /) -> tuple[list[Record], list[int], int]: ...
