# The compiled twin of the validating record walk (_walk.c); _walk_pure.py is the reference.
from kafka_dump.format._walk_pure import RawWalk

def walk_v2_records(data: bytes, pos: int, end: int, count: int, last_offset_delta: int, /) -> RawWalk: ...
