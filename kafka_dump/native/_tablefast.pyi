# The compiled row formatter (_tablefast.c); render/rows.py is its pure twin.
from collections.abc import Mapping, Sequence

from kafka_dump.model import Batch, Record

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
