"""A schema-driven reader of Kafka's message encoding (the protocol's generated ``Message`` classes).

Kafka's own logs (``__consumer_offsets``, ``__transaction_state``, ``__cluster_metadata``, control
records, producer snapshots) hold messages with field tables in ``kschemas.py``. The wire rules:

    int8 int16 int32 int64 uint16 uint32 float64   big-endian, fixed size; bool: one byte, non-zero = true
    uuid                16 bytes, shown as Kafka's ``Uuid.toString`` (URL-safe base64, no padding)
    string              non-flexible: int16 length, -1 = null; flexible: unsigned varint length+1, 0 = null
    bytes, records      non-flexible: int32 length, -1 = null; flexible: unsigned varint length+1, 0 = null
    []T                 non-flexible: int32 count, -1 = null; flexible: unsigned varint count+1, 0 = null
    struct              its fields in order; a nullable struct is preceded by an int8, -1 = null
    tagged fields       flexible versions only, after a struct's other fields: unsigned varint count,
                        then per field unsigned varint tag, unsigned varint size, the value

Every length and count is checked against the bytes there before it sizes anything; a violation is
a ``KMessageError`` naming the byte position, never an IndexError or a huge allocation. Decoded
fields come out in schema order (tagged ones where the schema declares them, not in wire order).
``Schema.write`` encodes by the same rules (tests build records with it); ``kafka_view`` leaves out
the tagged fields that hold their default, as Kafka's JSON converters do.
"""

from __future__ import annotations

import base64
import struct
from typing import Any

_CODES = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint16": "H", "uint32": "I", "float64": "d"}
_FIXED = {name: struct.Struct(">" + code) for name, code in _CODES.items()}
_I8, _I16, _I32 = _FIXED["int8"], _FIXED["int16"], _FIXED["int32"]

UNKNOWN_TAGS = "_unknownTaggedFields"  # a struct's tagged fields its schema does not name: {tag: hex}

Versions = tuple[int, int]  # inclusive; (0, -1) is empty
_NONE: Versions = (0, -1)
_MAX = 0x7FFF


class KMessageError(ValueError):
    """The bytes do not follow the schema; ``position`` is relative to the start of the message bytes."""

    def __init__(self, reason: str, position: int) -> None:
        super().__init__(f"byte {position}: {reason}")
        self.reason = reason
        self.position = position


def parse_versions(text: str) -> Versions:
    """Kafka's version range strings: ``0+``, ``1-3``, ``2``; ``none`` or empty is no version."""
    if text in ("", "none"):
        return _NONE
    if text.endswith("+"):
        return int(text[:-1]), _MAX
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


class Field:
    """One field definition, compiled from a schema table tuple."""

    __slots__ = ("children", "default", "elem", "is_array", "name", "nullable", "tag", "tagged", "versions")

    def __init__(self, spec: tuple[Any, ...]) -> None:
        name, typ, versions, nullable, tag, tagged, children = spec[:7]
        self.name: str = name
        self.is_array: bool = typ.startswith("[]")
        self.elem: str = typ[2:] if self.is_array else typ
        self.versions = parse_versions(versions)
        self.nullable = parse_versions(nullable)
        self.tag: int = tag
        self.tagged = parse_versions(tagged)
        self.children: tuple[Field, ...] = tuple(Field(c) for c in children)
        self.default: Any = _default(self, spec[7] if len(spec) > 7 else None)


_ZERO = {"bool": False, "uuid": "AAAAAAAAAAAAAAAAAAAAAA", "string": "", "bytes": b"", "records": b""}
_NO_DEFAULT = object()  # a struct's default: never equal to a value, so always shown


def _default(f: Field, text: str | None) -> Any:
    """A field's default as a decoded value: the schema's text, else Kafka's zero of the type."""
    if text == "null":
        return None
    if f.is_array:
        return []
    if f.elem == "struct":
        return _NO_DEFAULT
    if text is None:
        return _ZERO.get(f.elem, 0)
    if f.elem == "bool":
        return text == "true"
    if f.elem == "string":
        return text
    return float(text) if f.elem == "float64" else int(text, 0)


class Schema:
    """A message: its valid and flexible version ranges and its fields."""

    __slots__ = ("fields", "flexible", "name", "valid")

    def __init__(self, name: str, spec: tuple[str, str, tuple[Any, ...]]) -> None:
        valid, flexible, fields = spec
        self.name = name
        self.valid = parse_versions(valid)
        self.flexible = parse_versions(flexible)
        self.fields = tuple(Field(f) for f in fields)

    def read(
        self, data: bytes, version: int, pos: int = 0, end: int | None = None
    ) -> tuple[dict[str, Any], int]:
        """Decode one message at ``version`` from ``data[pos:end]``: (fields, position after it)."""
        if not _within(self.valid, version):
            raise KMessageError(f"{self.name} has no version {version}", pos)
        cur = _Cursor(data, pos, len(data) if end is None else end)
        out = _read_struct(self.fields, version, _within(self.flexible, version), cur)
        return out, cur.pos

    def write(self, fields: dict[str, Any], version: int) -> bytes:
        """Encode ``fields`` (as ``read`` returns them) at ``version``; absent tagged fields are left out."""
        out = bytearray()
        _write_struct(out, self.fields, fields, version, _within(self.flexible, version))
        return bytes(out)

    def kafka_view(self, fields: dict[str, Any]) -> dict[str, Any]:
        """``fields`` as Kafka's JSON converter shows them: tagged fields only when not their default."""
        return _view(self.fields, fields)


def _within(r: Versions, v: int) -> bool:
    return r[0] <= v <= r[1]


class _Cursor:
    __slots__ = ("data", "end", "pos")

    def __init__(self, data: bytes, pos: int, end: int) -> None:
        self.data = data
        self.pos = pos
        self.end = min(end, len(data))

    def take(self, n: int, what: str) -> int:
        """Reserve ``n`` bytes; return where they start."""
        start = self.pos
        if n < 0 or n > self.end - start:
            raise KMessageError(f"{what} needs {n} bytes, {self.end - start} left", start)
        self.pos = start + n
        return start

    def fixed(self, s: struct.Struct, what: str) -> Any:
        return s.unpack_from(self.data, self.take(s.size, what))[0]

    def uvarint(self, what: str) -> int:
        value = shift = 0
        start = self.pos
        while True:
            if self.pos >= self.end:
                raise KMessageError(f"{what}: unsigned varint runs past the end", start)
            b = self.data[self.pos]
            self.pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 28:
                raise KMessageError(f"{what}: unsigned varint longer than 5 bytes", start)


def _length(cur: _Cursor, f: Field, version: int, flexible: bool, wide: bool) -> int | None:
    """A length or count prefix; None for null (refused unless the field is nullable at this version)."""
    n = cur.uvarint(f.name) - 1 if flexible else cur.fixed(_I32 if wide else _I16, f.name)
    if n < 0:
        if not _within(f.nullable, version):
            raise KMessageError(f"{f.name}: null in a non-nullable field", cur.pos)
        return None
    return n


def _scalar(cur: _Cursor, f: Field, elem: str, version: int, flexible: bool) -> Any:
    s = _FIXED.get(elem)
    if s is not None:
        return cur.fixed(s, f.name)
    if elem == "bool":
        return cur.data[cur.take(1, f.name)] != 0
    if elem == "uuid":
        start = cur.take(16, f.name)
        return base64.urlsafe_b64encode(cur.data[start : start + 16]).rstrip(b"=").decode("ascii")
    if elem in ("string", "bytes", "records"):
        n = _length(cur, f, version, flexible, wide=elem != "string")
        if n is None:
            return None
        start = cur.take(n, f.name)
        raw = bytes(cur.data[start : start + n])
        return raw.decode("utf-8", "replace") if elem == "string" else raw
    if elem == "struct":
        return _read_struct(f.children, version, flexible, cur)
    raise KMessageError(f"{f.name}: unknown type {elem}", cur.pos)


def _value(cur: _Cursor, f: Field, version: int, flexible: bool) -> Any:
    if f.is_array:
        n = _length(cur, f, version, flexible, wide=True)
        if n is None:
            return None
        if n > cur.end - cur.pos:  # every element takes at least one byte
            raise KMessageError(f"{f.name}: {n} elements cannot fit in {cur.end - cur.pos} bytes", cur.pos)
        return [_scalar(cur, f, f.elem, version, flexible) for _ in range(n)]
    if f.elem == "struct" and _within(f.nullable, version):
        present = cur.fixed(_I8, f.name)
        if present < 0:
            return None
    return _scalar(cur, f, f.elem, version, flexible)


def _read_struct(fields: tuple[Field, ...], version: int, flexible: bool, cur: _Cursor) -> dict[str, Any]:
    out: dict[str, Any] = {}
    tagged: dict[int, Field] = {}
    for f in fields:
        if not _within(f.versions, version):
            continue
        if f.tag >= 0 and flexible and _within(f.tagged, version):
            tagged[f.tag] = f
            continue
        out[f.name] = _value(cur, f, version, flexible)
    if not flexible:
        return out
    unknown: dict[int, str] = {}
    for _ in range(cur.uvarint("tagged field count")):
        tag = cur.uvarint("tag")
        size = cur.uvarint("tagged field size")
        start = cur.take(size, f"tagged field {tag}")
        f_ = tagged.get(tag)
        if f_ is None:
            unknown[tag] = cur.data[start : start + size].hex()
            continue
        sub = _Cursor(cur.data, start, start + size)
        out[f_.name] = _value(sub, f_, version, flexible)
        if sub.pos != start + size:
            raise KMessageError(f"tagged field {f_.name}: {start + size - sub.pos} bytes left over", sub.pos)
    if len(out) > 1 and tagged:  # schema order, whatever order the tags came in
        out = {f.name: out[f.name] for f in fields if f.name in out}
    if unknown:
        out[UNKNOWN_TAGS] = unknown
    return out


def _view(fields: tuple[Field, ...], data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    by_name = {f.name: f for f in fields}
    for name, value in data.items():
        f = by_name.get(name)
        if f is None:
            out[name] = value
            continue
        if f.tag >= 0 and value == f.default:
            continue
        if f.elem == "struct" and value is not None:
            value = [_view(f.children, v) for v in value] if f.is_array else _view(f.children, value)
        out[name] = value
    return out


def _uvarint_bytes(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _write_length(out: bytearray, n: int, flexible: bool, wide: bool) -> None:
    if flexible:
        out += _uvarint_bytes(n + 1)
    else:
        out += (_I32 if wide else _I16).pack(n)


def _write_scalar(out: bytearray, f: Field, elem: str, value: Any, version: int, flexible: bool) -> None:
    s = _FIXED.get(elem)
    if s is not None:
        out += s.pack(value)
    elif elem == "bool":
        out.append(1 if value else 0)
    elif elem == "uuid":
        out += base64.urlsafe_b64decode(value + "==")
    elif elem in ("string", "bytes", "records"):
        if value is None:
            _write_length(out, -1, flexible, elem != "string")
            return
        raw = value.encode("utf-8") if elem == "string" else value
        _write_length(out, len(raw), flexible, elem != "string")
        out += raw
    else:
        _write_struct(out, f.children, value, version, flexible)


def _write_value(out: bytearray, f: Field, value: Any, version: int, flexible: bool) -> None:
    if f.is_array:
        _write_length(out, -1 if value is None else len(value), flexible, True)
        for v in value or ():
            _write_scalar(out, f, f.elem, v, version, flexible)
        return
    if f.elem == "struct" and _within(f.nullable, version):
        out.append(0xFF if value is None else 1)
        if value is None:
            return
    _write_scalar(out, f, f.elem, value, version, flexible)


def _write_struct(
    out: bytearray, fields: tuple[Field, ...], data: dict[str, Any], version: int, flexible: bool
) -> None:
    tagged: dict[int, bytes] = {}
    for f in fields:
        if not _within(f.versions, version):
            continue
        if f.tag >= 0 and flexible and _within(f.tagged, version):
            if f.name in data:
                one = bytearray()
                _write_value(one, f, data[f.name], version, flexible)
                tagged[f.tag] = bytes(one)
            continue
        _write_value(out, f, data[f.name], version, flexible)
    if not flexible:
        return
    for tag, hexed in data.get(UNKNOWN_TAGS, {}).items():
        tagged[int(tag)] = bytes.fromhex(hexed)
    out += _uvarint_bytes(len(tagged))
    for tag in sorted(tagged):
        out += _uvarint_bytes(tag) + _uvarint_bytes(len(tagged[tag])) + tagged[tag]


_SCHEMAS: dict[str, Schema] = {}


def schema(name: str) -> Schema:
    """The compiled schema of a message named in ``kschemas`` (compiled once)."""
    s = _SCHEMAS.get(name)
    if s is None:
        from kafka_dump.wire.kschemas import MESSAGES

        s = _SCHEMAS[name] = Schema(name, MESSAGES[name])
    return s
