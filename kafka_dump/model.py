"""The values that flow from the decoder to every command: batches, records, headers, problems.

Records, headers and problems behave as frozen, slotted dataclasses (``_Frozen``) that the decoders
build through their slots; batches are NamedTuples, cheaper to build (every v0/v1 message is one).
Field names follow Kafka's Java client (baseOffset, partitionLeaderEpoch...) to grep against Kafka.
"""

from __future__ import annotations

from enum import IntEnum
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

if TYPE_CHECKING:
    from dataclasses import Field


class Compression(IntEnum):
    """Codec ids from the attributes' low three bits (Kafka's ``CompressionType``)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4
    UNKNOWN = -1

    @classmethod
    def _missing_(cls, value: object) -> Compression:
        return cls.UNKNOWN

    @property
    def label(self) -> str:
        """Kafka's lower-case ``CompressionType.name`` (``none``, ``gzip``...)."""
        return self.name.lower()


class TimestampType(IntEnum):
    """Kafka's ``TimestampType``; magic 0 has no timestamp at all."""

    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def label(self) -> str:
        """The name Kafka prints: ``CreateTime``, ``LogAppendTime`` or ``NoTimestampType``."""
        return _TIMESTAMP_LABELS[self]


_TIMESTAMP_LABELS = {t: t.name.title().replace("_", "") for t in TimestampType}


class ControlType(IntEnum):
    """Control record types (Kafka's ``ControlRecordType``); others are kept as their number."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


_object_new = object.__new__
_object_setattr = object.__setattr__


class _DataclassFields:
    """A model class's ``__dataclass_fields__``, taken on first use from a throwaway dataclass of the
    same fields, so that ``dataclasses``' functions take it while start-up pays no ``exec``."""

    def __get__(self, obj: object, cls: type[_Frozen]) -> dict[str, Field[Any]]:
        from dataclasses import field, make_dataclass

        owner = next(c for c in cls.__mro__ if "__init__" in vars(c))  # a subclass's are its base's
        names: tuple[str, ...] = vars(owner)["__match_args__"]
        defaults: tuple[Any, ...] = vars(owner)["__init__"].__defaults__ or ()
        first_default = len(names) - len(defaults)
        spec = [
            (name, owner.__annotations__[name])
            if i < first_default
            else (name, owner.__annotations__[name], field(default=defaults[i - first_default]))
            for i, name in enumerate(names)
        ]
        made = make_dataclass(cls.__name__, spec, frozen=True)
        fields: dict[str, Field[Any]] = vars(made)["__dataclass_fields__"]
        type.__setattr__(cls, "__dataclass_fields__", fields)
        return fields


class _Frozen:
    """What ``@dataclass(frozen=True, slots=True)`` gives a class, without the ``exec`` every start would
    pay. A subclass lists its fields in ``__slots__`` and ``__match_args__``, ``_values`` gets them."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _values: ClassVar[attrgetter[tuple[Any, ...]]]
    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    else:
        __dataclass_fields__ = _DataclassFields()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(self._values(self) == self._values(other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values(self))

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={value!r}" for name, value in zip(self.__match_args__, self._values(self), strict=True)
        )
        return f"{self.__class__.__qualname__}({fields})"

    def __setattr__(self, name: str, value: object) -> None:
        if name in self.__match_args__:
            from dataclasses import FrozenInstanceError

            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        _object_setattr(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self.__match_args__:
            from dataclasses import FrozenInstanceError

            raise FrozenInstanceError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)

    def __getstate__(self) -> list[Any]:
        return list(self._values(self))

    def __setstate__(self, state: list[Any]) -> None:
        for name, value in zip(self.__match_args__, state, strict=True):
            _object_setattr(self, name, value)


class Header(_Frozen):
    """One record header. Kafka header keys are UTF-8 strings; kept as bytes so nothing is lost."""

    __slots__ = __match_args__ = ("key", "value")
    key: bytes
    value: bytes | None

    def __init__(self, key: bytes, value: bytes | None) -> None:
        _set_header_key(self, key)
        _set_header_value(self, value)


Header._values = attrgetter(*Header.__match_args__)
_set_header_key, _set_header_value = (getattr(Header, name).__set__ for name in Header.__match_args__)


def new_header(key: bytes, value: bytes | None) -> Header:
    """Build a Header through its slots, as ``new_record`` does for records."""
    h = _object_new(Header)
    _set_header_key(h, key)
    _set_header_value(h, value)
    return h


class ControlRecord(NamedTuple):
    """The decoded key (and, for ABORT/COMMIT, value) of a control record."""

    type: int  # a ControlType value, or any other number read from the key
    version: int
    coordinatorEpoch: int | None  # only for ABORT and COMMIT markers

    @property
    def type_name(self) -> str:
        """``COMMIT``, ``LEADER_CHANGE``..., or ``UNKNOWN(n)`` as Kafka prints it."""
        try:
            return ControlType(self.type).name
        except ValueError:
            return f"UNKNOWN({self.type})"


class Record(_Frozen):
    """One record: a v2 record, or a v0/v1 message (inner or standalone); decoders use ``new_record``."""

    __slots__ = __match_args__ = (
        "offset",
        "timestamp",
        "key",
        "value",
        "headers",
        "sequence",
        "sizeInBytes",
        "crc",
        "crcValid",
        "control",
        "storedTimestamp",
    )
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    sequence: int  # -1 when the batch has no producer sequence, and for v0/v1
    sizeInBytes: int
    crc: int | None  # v0/v1 only: the message's stored CRC32
    crcValid: bool | None  # v0/v1 only
    control: ControlRecord | None
    # Under LogAppendTime the batch's time replaces every record's ``timestamp``, but the bytes keep the
    # record's own: a v2 record's baseTimestamp + timestampDelta, a v1 inner message's timestamp field.
    # Kept here (None otherwise) so the encoders can rebuild those bytes; no renderer shows it.
    storedTimestamp: int | None

    def __init__(
        self,
        offset: int,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: tuple[Header, ...],
        sequence: int,
        sizeInBytes: int,
        crc: int | None = None,
        crcValid: bool | None = None,
        control: ControlRecord | None = None,
        storedTimestamp: int | None = None,
    ) -> None:
        values = (offset, timestamp, key, value, headers, sequence, sizeInBytes, crc, crcValid, control,
                  storedTimestamp)  # fmt: skip
        for setter, v in zip(_RECORD_SETTERS, values, strict=True):  # the decoders use new_record
            setter(self, v)


Record._values = attrgetter(*Record.__match_args__)
_RECORD_SETTERS = tuple(getattr(Record, name).__set__ for name in Record.__match_args__)
(_set_offset, _set_timestamp, _set_key, _set_value, _set_headers, _set_sequence, _set_size, _set_crc,
 _set_crc_valid, _set_control, _set_stored_timestamp) = _RECORD_SETTERS  # fmt: skip


def new_record(
    offset: int,
    timestamp: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[Header, ...],
    sequence: int,
    size: int,
    crc: int | None = None,
    crc_valid: bool | None = None,
    control: ControlRecord | None = None,
    stored_timestamp: int | None = None,
) -> Record:
    """Build a Record through its slots, without the frozen ``__init__``'s checks: the same result."""
    r = _object_new(Record)
    _set_offset(r, offset)
    _set_timestamp(r, timestamp)
    _set_key(r, key)
    _set_value(r, value)
    _set_headers(r, headers)
    _set_sequence(r, sequence)
    _set_size(r, size)
    _set_crc(r, crc)
    _set_crc_valid(r, crc_valid)
    _set_control(r, control)
    _set_stored_timestamp(r, stored_timestamp)
    return r


class Batch(NamedTuple):
    """One entry of the log: a v2 RecordBatch, or one outer v0/v1 message; ``records`` None: headers only."""

    file: str
    position: int
    baseOffset: int
    lastOffset: int
    magic: int
    attributes: int
    compression: Compression
    timestampType: TimestampType
    baseTimestamp: int
    maxTimestamp: int
    producerId: int
    producerEpoch: int
    baseSequence: int
    lastSequence: int
    partitionLeaderEpoch: int
    isTransactional: bool
    isControl: bool
    deleteHorizonMs: int | None
    crc: int
    crcValid: bool
    sizeInBytes: int
    recordCount: int | None
    records: tuple[Record, ...] | None


# A batch read from no file, for those that make one by ``_replace``-ing the fields they know.
NEW_BATCH = Batch("", 0, 0, 0, 2, 0, Compression.NONE, TimestampType.CREATE_TIME, -1, -1, -1, -1, -1, -1, -1, False,
                  False, None, 0, True, 0, 0, None)  # fmt: skip


class ProblemKind(IntEnum):
    """What a Problem is about; the tail kinds are facts, not corruption."""

    CORRUPT = 0
    ZERO_TAIL = 1
    PARTIAL_TAIL = 2

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", "-")


class Check:
    """Names of the checks a Problem can report (its ``check`` field), one per rule broken: entry
    framing, records, v0/v1 wrappers (INNER_*), order, index files and the tail. For CRC_MISMATCH
    ``expected`` is the stored CRC and ``found`` the computed one."""

    CRC_MISMATCH = "crc-mismatch"
    BAD_LENGTH = "bad-length"
    BAD_MAGIC = "bad-magic"
    TOO_LARGE = "too-large"
    COUNT_MISMATCH = "count-mismatch"
    VARINT = "varint"
    RECORD_LENGTH = "record-length"
    FIELD_LENGTH = "field-length"
    HEADER_COUNT = "header-count"
    CONTROL = "control"
    DECOMPRESS = "decompress"
    CODEC = "codec"
    INNER_MESSAGE = "inner-message"
    INNER_CRC = "inner-crc"
    INNER_MAGIC = "inner-magic"
    INNER_OFFSET = "inner-offset"
    WRAPPER = "wrapper"
    OFFSET_ORDER = "offset-order"
    OFFSET_DELTA = "offset-delta"
    MAX_TIMESTAMP = "max-timestamp"
    TIMESTAMP = "timestamp"
    INDEX_MISMATCH = "index-mismatch"
    INDEX_ORDER = "index-order"
    INDEX_SIZE = "index-size"
    ZERO_TAIL = "zero-tail"
    PARTIAL_TAIL = "partial-tail"
    UNREADABLE = "unreadable"  # a file of a scan that could not be opened for reading
    CHUNK = "chunk"  # a chunk of a tiered-storage object that could not be restored (log/aiven.py)
    MANIFEST = "manifest"  # a tiered-storage manifest that disagrees with the segment it describes
    OTHER = "other"


class Problem(_Frozen):
    """Something wrong or notable at a byte position of a file; ``check`` names the rule broken (a
    ``Check``), ``expected`` and ``found`` the two numbers it compared, where it compared two."""

    __slots__ = __match_args__ = (
        "file",
        "position",
        "length",
        "kind",
        "reason",
        "baseOffset",
        "check",
        "expected",
        "found",
    )
    file: str
    position: int
    length: int
    kind: ProblemKind
    reason: str
    baseOffset: int | None
    check: str
    expected: int | None
    found: int | None

    def __init__(
        self,
        file: str,
        position: int,
        length: int,
        kind: ProblemKind,
        reason: str,
        baseOffset: int | None = None,
        check: str = Check.OTHER,
        expected: int | None = None,
        found: int | None = None,
    ) -> None:
        values = (file, position, length, kind, reason, baseOffset, check, expected, found)
        for name, value in zip(self.__match_args__, values, strict=True):
            _object_setattr(self, name, value)

    def __str__(self) -> str:
        return f"{self.file}: byte {self.position}: {self.reason}"


Problem._values = attrgetter(*Problem.__match_args__)


def not_one_marker(records: tuple[Record, ...]) -> bool:
    """A control batch's records break its rule: none at all, or a transaction marker among others
    (a marker batch holds exactly one; KRaft's control batches may hold several records)."""
    markers = sum(1 for r in records if r.control is not None and r.control.type in _MARKERS)
    return not records or bool(markers and len(records) != 1)


_MARKERS = (ControlType.ABORT, ControlType.COMMIT)


def item_end(item: Batch | Problem) -> int:
    """Where a reader goes on after an item: past its entry (a problem covers the bytes it skipped)."""
    return item.position + (item.length if isinstance(item, Problem) else item.sizeInBytes)
