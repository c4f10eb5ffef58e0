# The compiled twin of the statistics walk (_gather.c); _gather_pure.py is the reference.
from collections.abc import Callable

from kafka_dump.model import Compression
from kafka_dump.wire._gather_layout import (
    Gathered,
    GatheredLegacy,
    GatheredWrappers,
    Histograms,
    WrapperHistograms,
)

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
