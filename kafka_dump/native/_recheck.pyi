# The compiled twin of convert's record check (_recheck.c); _recheck_pure.py is the reference.
from kafka_dump.model import Record

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
