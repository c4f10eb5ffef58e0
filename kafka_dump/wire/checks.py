"""Which check a decoder's error reason reports, and the two numbers it compared.

Both decoder twins raise ``CorruptRecordError`` with the same reason text at the same position (the
differential tests hold them to that), so the check's name is read from the reason, in one table,
instead of being threaded through two implementations of every hot loop. A test asserts that every
reason the decoders can give maps to a named check.
"""

from __future__ import annotations

import functools
import re

from kafka_dump.model import Check

# (pattern, check, group of the expected number, group of the found number); first match wins.
_RULE_SOURCES: tuple[tuple[str, str, int, int], ...] = (
    (r"^inner message at byte \d+ of the payload: message has magic (-?\d+)", Check.INNER_MAGIC, 0, 1),
    (r"^inner message has magic (-?\d+) in a v(\d+) wrapper", Check.INNER_MAGIC, 2, 1),
    (r"^inner message is itself compressed", Check.CODEC, 0, 0),
    (r"^inner message", Check.INNER_MESSAGE, 0, 0),
    (r"^wrapper offset (-?\d+) is below its last inner offset (-?\d+)", Check.INNER_OFFSET, 2, 1),
    (r"^record offset delta (-?\d+) is not above the previous one \((-?\d+)\)", Check.OFFSET_DELTA, 0, 1),
    (
        r"^record offset delta (-?\d+) is past the batch's lastOffsetDelta (-?\d+)",
        Check.OFFSET_DELTA,
        2,
        1,
    ),
    (r"^batch declares (-?\d+) records but holds (\d+)", Check.COUNT_MISMATCH, 1, 2),
    (r"^(\d+) bytes remain after the batch's (-?\d+) declared records", Check.COUNT_MISMATCH, 0, 0),
    (r"^invalid record count (-?\d+)", Check.COUNT_MISMATCH, 0, 1),
    (r"varint", Check.VARINT, 0, 0),
    (r"^record length (-?\d+) does not fit", Check.RECORD_LENGTH, 0, 1),
    (r"^record declares (-?\d+) bytes but its fields take (-?\d+)", Check.RECORD_LENGTH, 1, 2),
    (r"^invalid header count (-?\d+)", Check.HEADER_COUNT, 0, 1),
    (r"^header key is null", Check.FIELD_LENGTH, 0, 0),
    (r"^(?:header )?(?:key|value) length (-?\d+) runs past the record", Check.FIELD_LENGTH, 0, 1),
    (r"control record|end transaction marker", Check.CONTROL, 0, 0),
    (r"^invalid wrapper compression type (\d+)", Check.CODEC, 0, 1),
    (r"^unknown compression codec(?: id)? (-?\d+)", Check.CODEC, 0, 1),
    (r"^decompressed size passes the limit of (\d+)", Check.TOO_LARGE, 1, 0),
    (
        r"^batch declares (\d+) records, more than --max-records-per-batch \((\d+)\)",
        Check.TOO_LARGE,
        2,
        1,
    ),
    (r"^wrapper holds more than (\d+) inner messages \(--max-records-per-batch", Check.TOO_LARGE, 1, 0),
    (r"gzip|lz4|snappy|zstd|decompress", Check.DECOMPRESS, 0, 0),
    (r"^compressed wrapper message|stray bytes after the last inner message", Check.WRAPPER, 0, 0),
    (r"^message has magic (-?\d+)", Check.BAD_MAGIC, 0, 1),
    (r"^unknown magic (-?\d+)", Check.BAD_MAGIC, 0, 1),
    (r"^message size (-?\d+) is below", Check.BAD_LENGTH, 0, 1),
    (
        r"^message is shorter than|^message ends before|runs past the message|after its value",
        Check.BAD_LENGTH,
        0,
        0,
    ),
    (r"^v2 batch of (\d+) bytes is smaller than its header", Check.BAD_LENGTH, 0, 1),
)


@functools.cache
def _rules() -> tuple[tuple[re.Pattern[str], str, int, int], ...]:
    """The rules, compiled on the first error: a clean file never pays for compiling them."""
    return tuple(
        (re.compile(pattern), check, expected, found) for pattern, check, expected, found in _RULE_SOURCES
    )


def classify(reason: str) -> tuple[str, int | None, int | None]:
    """(check, expected, found) for a decoder error's reason; ``Check.OTHER`` when none matches."""
    for pattern, check, expected, found in _rules():
        match = pattern.search(reason)
        if match is not None:
            return (
                check,
                int(match.group(expected)) if expected else None,
                int(match.group(found)) if found else None,
            )
    return Check.OTHER, None, None
