"""How keys, values and header values are written: text, base64 or hex; and short previews."""

from __future__ import annotations

import binascii
from collections.abc import Callable
from enum import Enum


class PayloadEncoding(str, Enum):
    """``--payload``: ``base64`` and ``hex`` are exact; ``text`` decodes UTF-8, escaping bad bytes."""

    TEXT = "text"
    BASE64 = "base64"
    HEX = "hex"


def header_key(key: bytes) -> str:
    """Header keys are UTF-8 strings in Kafka; bytes that are not UTF-8 are escaped, not lost."""
    return key.decode("utf-8", "backslashreplace")


ENCODERS: dict[PayloadEncoding, Callable[[bytes], str]] = {
    PayloadEncoding.TEXT: header_key,  # the same UTF-8, bad bytes escaped
    PayloadEncoding.BASE64: lambda data: binascii.b2a_base64(data, newline=False).decode("ascii"),
    PayloadEncoding.HEX: bytes.hex,
}


class _Escapes(dict[int, str]):
    """``str.translate`` table: a printable character stays, any other becomes its Python escape."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        escaped = self[code] = char if char.isprintable() else ascii(char)[1:-1]
        return escaped


_ESCAPES = _Escapes({9: "\\t", 10: "\\n", 13: "\\r"})


def printable(text: str) -> str:
    """``text`` with every control, format or separator character (ESC, CR, tab, bidi overrides,
    zero-width spaces...) shown as a Python escape: what reaches a terminal cannot steer it."""
    return text if text.isprintable() else text.translate(_ESCAPES)


def preview(data: bytes | None, max_bytes: int) -> str:
    """Text when the bytes are printable UTF-8, else hex; cut to ``max_bytes`` with an ellipsis."""
    if data is None:
        return "null"
    cut = data[:max_bytes]
    more = "…" if len(data) > max_bytes else ""
    try:
        text = cut.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A cut through a multi-byte character is still text: drop the partial character.
        if not (more and exc.start >= len(cut) - 3 and exc.reason == "unexpected end of data"):
            return "0x" + cut.hex() + more
        text = cut[: exc.start].decode("utf-8")
    return (text if text.isprintable() else "0x" + cut.hex()) + more
