"""The two checksums of Kafka's formats: CRC-32 (v0/v1 messages) and CRC-32C (v2 batches)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import zlib
from collections.abc import Callable


def _load_crc32c() -> Callable[..., int]:
    """The ``crc32c`` package's compiled function, loaded without the package's ``__init__`` (which
    scans every installed distribution for its version); the plain import where that cannot be."""
    package = importlib.util.find_spec("crc32c")
    if package is not None and package.submodule_search_locations:
        spec = importlib.machinery.PathFinder.find_spec(
            "crc32c._crc32c", list(package.submodule_search_locations)
        )
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            function: Callable[..., int] = module.crc32c
            return function
    import crc32c

    return crc32c.crc32c


_crc32c = _load_crc32c()


def crc32(data: bytes | bytearray | memoryview) -> int:
    """IEEE CRC-32, as ``LegacyRecord.computeChecksum`` (unsigned)."""
    return zlib.crc32(data) & 0xFFFFFFFF


def crc32c(data: bytes | bytearray | memoryview, value: int = 0) -> int:
    """Castagnoli CRC-32C, as ``DefaultRecordBatch.computeChecksum`` (unsigned); ``value`` continues one."""
    return int(_crc32c(data, value)) & 0xFFFFFFFF
