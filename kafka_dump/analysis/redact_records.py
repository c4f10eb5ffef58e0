"""The records of one v2 batch with their producers' bytes under pseudonyms, in place: each key, value
and header value becomes ``Pseudonyms.replace``'s bytes of the same length; every other byte (lengths,
deltas, attributes, header keys) stays as it was, so an uncompressed batch keeps its exact bytes but
for those. Twin: ``native/redact.c``, which computes the digests itself (hashlib called once a field
from Python was most of ``redact``'s time)."""

from __future__ import annotations

from kafka_dump.analysis.pseudonyms import Pseudonyms
from kafka_dump.errors import CorruptRecordError
from kafka_dump.native import bind, native
from kafka_dump.wire.records import Spans, v2_records


def redact_v2_records(
    secret: bytes, data: bytes, count: int, keep_prefix: int, /
) -> tuple[bytes, dict[str, int], dict[str, int]] | None:
    """``data`` (a batch's records, decompressed) with every field replaced (``keep_prefix`` negative:
    none), the bytes replaced per field and the bytes kept per reason (``Pseudonyms.counts``, ``.kept``);
    None where ``data`` is not ``count`` records as the reader reads them (the caller's slow path)."""
    if count < 0:
        return None
    names = Pseudonyms(secret, keep_prefix=None if keep_prefix < 0 else keep_prefix)
    spans: Spans = []
    try:
        for _ in v2_records(data, 0, len(data), count, spans):
            pass
    except CorruptRecordError:
        return None
    out = bytearray(data)
    for field, start, n in spans:
        out[start : start + n] = names.replace(data[start : start + n], field) or b""
    return bytes(out), names.counts, names.kept


redact_v2_records = bind(redact_v2_records)(native.redact_v2_records if native else None)
