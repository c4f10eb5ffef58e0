"""The interfaces of the format layer's twins: what each pure module and its compiled twin both provide.

``format/__init__.py`` binds one twin of each pair to a variable of the Protocol's type, so
``mypy --strict`` checks both modules (the compiled one through its ``.pyi`` stub) against the same
signatures: ``_pure`` and ``_speedups`` (``DecoderTwin``), ``_walk_pure`` and ``_walk`` (``WalkTwin``),
``_pure_encoder`` and ``_encoder`` (``EncoderTwin``), ``_gather_pure`` and ``_gather`` (``GatherTwin``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from kafka_dump.errors import CorruptRecordError
from kafka_dump.model import Batch, Compression, Record
from kafka_dump.wire._gather_layout import (
    Gathered,
    GatheredLegacy,
    GatheredWrappers,
    Histograms,
    WrapperHistograms,
)

if TYPE_CHECKING:  # the pure walk's module is imported only when it is the twin chosen
    from kafka_dump.wire._transcode_pure import Failure, Row, Wrapper
    from kafka_dump.wire._walk_pure import Checksum, Decompress, EntryRow, RawEntryWalk, RawWalk


def pure_requested() -> bool:
    """``KDUMP_PURE=1`` (or true, yes): every twin, the decoder's and the renderer's, takes its pure one."""
    return os.environ.get("KDUMP_PURE", "") in ("1", "true", "yes")


class DecoderTwin(Protocol):
    """The decoder's hot loops; see ``_pure.py`` for what each returns."""

    def decode_v2_records(
        self,
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
        self, data: bytes, wrapper_magic: int, wrapper_offset: int, log_append_time: int | None, /
    ) -> tuple[list[Record], CorruptRecordError | None]: ...

    def decode_legacy_run(
        self, file: str, buf: bytes, pos: int, end: int, file_pos: int, with_records: bool, /
    ) -> tuple[list[Batch], int]: ...

    def decode_legacy_wrapper(
        self,
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


class WalkTwin(Protocol):
    """The validating walks: a v2 batch's records, and a segment's sound entries; see ``_walk_pure.py``."""

    def walk_v2_records(
        self, data: bytes, pos: int, end: int, count: int, last_offset_delta: int, /
    ) -> RawWalk: ...

    def walk_entries(
        self,
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


class EncoderTwin(Protocol):
    """The encoder's record loops; see ``_pure_encoder.py`` for what each writes."""

    def encode_v2_records(
        self, records: Sequence[Record], base_offset: int, base_timestamp: int, log_append_time: bool, /
    ) -> bytes: ...

    def v2_records_size(
        self, records: Sequence[Record], base_offset: int, base_timestamp: int, log_append_time: bool, /
    ) -> int: ...

    def encode_v2_entry(
        self,
        header: bytes,
        records: Sequence[Record],
        base_offset: int,
        base_timestamp: int,
        log_append_time: bool,
        /,
    ) -> bytes: ...

    def encode_legacy_messages(
        self,
        records: Sequence[Record],
        magic: int,
        attributes: int,
        offset_shift: int,
        log_append_time: bool,
        /,
    ) -> bytes: ...

    def legacy_messages_size(self, records: Sequence[Record], magic: int, /) -> int: ...

    def v1_inner_to_v2(
        self, data: bytes, wrapper_offset: int, max_records: int, /
    ) -> tuple[bytes, int, int, int, int, int] | None: ...


class RecheckTwin(Protocol):
    """Convert's check of the v2 records it wrote; see ``_recheck_pure.py`` (``format/recheck.py``)."""

    def same_v2_records(
        self,
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
        self, data: bytes, pos: int, end: int, base_offset: int, base_timestamp: int, inner: bytes,
        wrapper_offset: int, /,
    ) -> tuple[int, int, int, int]: ...  # fmt: skip


class TranscodeTwin(Protocol):
    """Convert's fast path, a run of v1 wrappers per call; see ``_transcode_pure.py`` (``format/transcode.py``)."""

    def gunzip(self, payload: bytes | memoryview, limit: int, /) -> bytes | bool | None: ...

    def lz4_frame(self, header: bytes, data: bytes | memoryview, /) -> bytes: ...

    def unlz4_frame(self, header: bytes, payload: bytes | memoryview, limit: int, /) -> bytes | None: ...

    def read_wrappers(
        self,
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
        self,
        items: list[Wrapper],
        codec: int,
        compress: Callable[[bytes], bytes],
        decompress: Callable[[int, memoryview], bytes],
        crc32c: Callable[[memoryview], int],
        same: Callable[[bytes, int, int, int, int, bytes, int], tuple[int, int, int, int]],
        last_offset: int | None,
        /,
    ) -> tuple[bytes, list[Row], int | None, Failure | None]: ...


class GatherTwin(Protocol):
    """The statistics walk, for ``stats``; see ``_gather_pure.py`` (``format/gather.py`` re-exports it)."""

    def gather_v2_records(
        self,
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
        self,
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
        self,
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
