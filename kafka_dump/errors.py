"""Errors that carry the file and byte position they are about; only ``cli.py`` makes exit codes of them."""

from __future__ import annotations

from typing import TypeVar

_E = TypeVar("_E", bound="KafkaDumpError")


class KafkaDumpError(Exception):
    """Base of every error kdump raises on purpose, with an optional file and byte position."""

    def __init__(
        self,
        reason: str,
        *,
        file: str | None = None,
        position: int | None = None,
        check: str | None = None,
        expected: int | None = None,
        found: int | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.file = file
        self.position = position
        self.check = check  # a ``model.Check`` name, set where the rule is broken
        self.expected = expected
        self.found = found

    def with_location(self: _E, file: str | None = None, position: int | None = None) -> _E:
        """Return a copy of this error that also names a file and/or a position."""
        copy = self.restated(self.reason, self.position if position is None else position)
        copy.file = self.file if file is None else file
        return copy

    def restated(self: _E, reason: str, position: int | None = None) -> _E:
        """A copy with another reason (the same rule broken, told with more context) and position."""
        return type(self)(
            reason,
            file=self.file,
            position=position,
            check=self.check,
            expected=self.expected,
            found=self.found,
        )

    def __str__(self) -> str:
        where = self.file or ""
        if self.position is not None:
            where = f"{where}: byte {self.position}" if where else f"byte {self.position}"
        return f"{where}: {self.reason}" if where else self.reason


class CorruptRecordError(KafkaDumpError):
    """Bytes that do not decode as Kafka's format says they must."""


class CompressionError(CorruptRecordError):
    """A payload that its codec cannot decompress, or that expands past the size bound."""


class NotASegmentError(KafkaDumpError):
    """A file that cannot be a log segment at all (not a file, unreadable, or wrong kind)."""


class UnsupportedEncodingError(KafkaDumpError):
    """Records the asked-for format or codec cannot carry (headers or zstd below v2...), never dropped."""
