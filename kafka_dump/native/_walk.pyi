# The compiled twin of the validating record walk (_walk.c); _walk_pure.py is the reference.
from kafka_dump.wire._walk_pure import Checksum, Decompress, EntryRow, RawEntryWalk, RawWalk

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
