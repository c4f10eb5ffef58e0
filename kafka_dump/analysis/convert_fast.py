"""``kdump convert``'s fast path: runs of v1 CreateTime wrappers straight to v2 records, building no Record.

The common old segment is v1 wrappers of compressed inner messages. Written as v2 with the default
batching each wrapper becomes one v2 batch holding the same records (``analysis/convert.py``), so
the sound wrappers at the start of each read window go to the transcode twin (``wire/transcode.py``)
in one call: their inner messages, inflated by ``inflater``, become v2 records (``v1_inner_to_v2``),
which the writer later checks against them. Only an entry the segment reader would read as one
sound batch with no problem is taken; anything else is read by the segment reader from there, so
the items are the reader's, but for the Records not built and a run of wrappers per item.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from kafka_dump import wire as _twins
from kafka_dump.log import ahead
from kafka_dump.log.ahead import Inflating
from kafka_dump.log.segment import read_segment, read_segment_runs
from kafka_dump.log.window import CHUNK_SIZE, Window, open_segment
from kafka_dump.model import Batch, Compression, Problem, item_end
from kafka_dump.wire.codecs import decompress, lz4_frame_header
from kafka_dump.wire.layout import MAX_DECODED_PER_BATCH
from kafka_dump.wire.transcode import Wrapper, read_wrappers, unlz4_frame

Codec = Callable[[int, memoryview], bytes]  # (codec id, payload) -> the payload decompressed
_CODECS = {int(c): c for c in Compression}
_LZ4 = int(Compression.LZ4)
_LZ4_HEADER = lz4_frame_header(2)  # also magic 1's: only magic 0 hashes its frame header otherwise
_WINDOW = 1 << 20  # the input is read a MiB at a time (an entry larger than that, whole)
_RUN = 128 * 1024  # input bytes of wrappers per run (a call of each twin)


class TranscodedRun(NamedTuple):
    """Consecutive v1 CreateTime wrappers of one codec, their inner messages already v2 records."""

    file: str
    position: int
    sizeInBytes: int
    codec: Compression  # the wrappers'
    wrappers: list[Wrapper]  # see wire/transcode.py
    recordCount: int


Item = Batch | Problem | TranscodedRun


def inflater(max_batch_bytes: int) -> Codec:
    """The one place a wrapper's inflated bytes come from: ``codecs.decompress``, bounded by
    ``--max-batch-bytes`` (CorruptRecordError leaves the wrapper to the slow path); one-block LZ4
    frames through the transcode twin first (the same bytes), codecs where it declines."""

    def inflate(codec: int, payload: memoryview) -> bytes:
        if codec == _LZ4:
            inflated = unlz4_frame(_LZ4_HEADER, payload, max_batch_bytes)
            if inflated is not None:
                return inflated
        return decompress(_CODECS[codec], payload, max_batch_bytes)

    return inflate


class Inline(ahead.Inline):
    """Each wrapper inflated where it is asked (``inflater``)."""

    def __init__(self, max_batch_bytes: int) -> None:
        super().__init__(inflater(max_batch_bytes))


class Ahead(ahead.Ahead):
    """The window's gzip wrappers inflated ahead, on a second thread, while the runs before them are
    written (``log/ahead.py``: the bytes are ``inflater``'s either way)."""

    def __init__(self, max_batch_bytes: int) -> None:
        super().__init__(max_batch_bytes, inflater(max_batch_bytes))


def read_input(
    path: Path,
    *,
    fast: bool,
    max_batch_bytes: int,
    max_records_per_batch: int,
    inflating: Inflating | None = None,
) -> Iterator[Item]:
    """``read_segment(path)``'s items, with every run of sound v1 CreateTime wrappers a TranscodedRun
    instead of Batches when ``fast`` (and ``path`` a regular file, which the reader may open again).
    Runs hold at most ``_RUN`` input bytes, so that ``inflating`` (by default ``Ahead``) works ahead."""
    if not fast or not path.is_file():
        yield from read_segment(
            path, max_batch_bytes=max_batch_bytes, max_records_per_batch=max_records_per_batch
        )
        return
    source = inflating or Ahead(max_batch_bytes)
    try:
        yield from _read_fast(path, source, max_batch_bytes, max_records_per_batch)
    finally:
        source.close()


def _read_fast(path: Path, source: Inflating, max_batch_bytes: int, max_records: int) -> Iterator[Item]:
    name = str(path)
    entry_limit = max(max_batch_bytes, CHUNK_SIZE)
    # A wrapper of more inner messages than the decoder builds goes the slow way, which reports it.
    fast_records = min(max_records, MAX_DECODED_PER_BATCH)
    f, size = open_segment(path)
    with f:
        win = Window(f, size, _WINDOW, reuse=True)
        pos = want = 0
        runs: Iterator[Sequence[Batch | Problem]] | None = None
        while pos < size:
            got = win.fill(pos, want)  # ``want``: an entry larger than the window, read whole
            window = win.buf
            inflate = source.start(window, 0, got)
            at, want = 0, 0
            try:
                while at < got:
                    used, want, codec, wrappers = read_wrappers(
                        window, at, got, pos, entry_limit, fast_records, _RUN, inflate, _twins.v1_inner_to_v2
                    )  # (pos: the window's place in the file)
                    if not wrappers:
                        break
                    runs = None
                    yield TranscodedRun(
                        name, pos + at, used, _CODECS[codec], wrappers, sum(w[5] for w in wrappers)
                    )
                    at += used
            finally:
                source.finish()
            if at:  # the window's wrappers taken: read on from the first entry not taken
                pos += at
                want = 0
                continue
            if want > len(window) and want <= size - pos:
                continue  # one entry larger than the window: read it whole
            want = 0
            if runs is None:
                runs = read_segment_runs(
                    path,
                    start=pos,
                    max_batch_bytes=max_batch_bytes,
                    max_records_per_batch=max_records,
                    size=size,
                )
            run = next(runs, None)
            if run is None:
                return
            yield from run
            pos = max(map(item_end, run))
