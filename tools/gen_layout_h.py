"""Writes ``_layout.h``, the C twin's copy of ``layout.py``: ``python -m tools.gen_layout_h``.

The header is generated, committed, and checked current by a test, so the compiled twins read
the same offsets as the Python decoders. ``--check`` exits 1 when the committed header is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from kafka_dump.wire import layout as L

HEADER_PATH = Path(__file__).parent.parent / "kafka_dump" / "native" / "_layout.h"
_C_TYPES = {"q": "int64", "i": "int32", "I": "uint32", "h": "int16", "b": "int8"}


def render() -> str:
    """The text of ``_layout.h`` for the layouts and constants of ``layout.py``."""
    lines = [
        "/* Generated from kafka_dump/wire/layout.py by `python -m tools.gen_layout_h`: do not edit.",
        " * Offsets count from the start of each header (the log entry's, for the first four);",
        " * every integer is big-endian on the wire. */",
        "#ifndef KDUMP_LAYOUT_H",
        "#define KDUMP_LAYOUT_H",
    ]
    for layout in L.LAYOUTS:
        lines += ["", f"/* {layout.title} (Kafka's {layout.java}) */"]
        for f in layout.own_fields:
            stem = layout.constant(f.name)
            lines.append(
                f"#define {stem}_OFFSET {layout.offsets[f.name]} /* {_C_TYPES[f.code]} {f.name}: {f.doc} */"
            )
            lines.append(f"#define {stem}_LENGTH {layout.lengths[f.name]}")
        lines.append(f"#define {layout.size_name} {layout.size}")
    lines += ["", "/* Sizes, limits and attribute bits */"]
    for name in L.C_CONSTANTS:
        value = getattr(L, name)
        if not isinstance(value, int):
            raise TypeError(f"layout.{name} is not an int")
        text = (
            f"0x{value:02x}"
            if name.endswith(("_MASK", "_BIT"))
            else str(value)
            if value >= 0
            else f"({value})"
        )
        lines.append(f"#define {name} {text}")
    lines += ["", "#endif", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        current = HEADER_PATH.read_text() if HEADER_PATH.exists() else ""
        if current != text:
            print(f"{HEADER_PATH} is stale: run python -m tools.gen_layout_h", file=sys.stderr)
            return 1
        return 0
    HEADER_PATH.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
