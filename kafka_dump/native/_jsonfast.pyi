# The compiled JSON writer (_jsonfast.c); render/jsonl.py's batch_json is its pure twin.
from collections.abc import Sequence

from kafka_dump.model import Batch, Record

def batch_json(
    file_json: bytes, batch: Batch, records: Sequence[Record] | None, payload: int, /
) -> bytes: ...
def run_json(file: str, file_json: bytes, batches: Sequence[Batch], payload: int, /) -> bytes: ...
def plain_run_json(
    file_json: bytes, data: bytes, pos: int, end: int, file_pos: int, with_records: bool, payload: int, /
) -> tuple[bytes, int, int]: ...
