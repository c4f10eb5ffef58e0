# The compiled twin of the encoder's record loops (_encoder.c); _pure_encoder.py is the reference.
from collections.abc import Sequence

from kafka_dump.model import Record

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
