"""Decoders of what Kafka itself writes into its logs, built on the schema reader ``wire/kmessage.py``.

A decoder turns one record into a ``Decoded`` value (key and value as named, versioned messages) and
never raises: bytes that do not follow a schema give ``error`` and ``hex``, and the record still shows.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from kafka_dump.model import Record


class Part(NamedTuple):
    """A decoded key or value: which message at which version, and its fields (JSON-ready, bytes aside);
    ``extra``: what frames it (a KRaft metadata record's ``frameVersion``, ``apiKey``, type name);
    ``hex``: the bytes, when they could not be decoded."""

    schema: str | None
    version: int | None
    data: dict[str, Any] | None
    extra: dict[str, Any]
    hex: str | None = None


class Decoded(NamedTuple):
    """One record read by a decoder. ``value`` None with ``tombstone`` True is a deletion."""

    decoder: str
    key: Part | None
    value: Part | None
    tombstone: bool
    error: str | None

    @property
    def ok(self) -> bool:
        """Every part that is there was decoded by a known schema."""
        return self.error is None


Decoder = Callable[[Record], Decoded]

DECODE_CHOICES = (
    "auto",
    "offsets",
    "transactions",
    "share-group-state",
    "remote-log-metadata",
    "metadata",
    "none",
)
_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-\d+$")
_TOPIC_DECODERS = {
    "__consumer_offsets": "offsets",
    "__transaction_state": "transactions",
    "__share_group_state": "share-group-state",
    "__remote_log_metadata": "remote-log-metadata",
    "__cluster_metadata": "metadata",
}


def decoder_for_path(path: str | Path) -> str | None:
    """The decoder Kafka's naming implies: by the partition directory, or a ``.checkpoint`` snapshot."""
    file = os.fspath(path)  # a path as str(Path) writes it: names taken apart without building one
    directory, own = os.path.split(file)
    if os.path.splitext(own)[1] == ".checkpoint":
        return "metadata"
    for name in (own, os.path.basename(directory)):
        m = _PARTITION_DIR.match(name)
        if m is not None and m.group("topic") in _TOPIC_DECODERS:
            return _TOPIC_DECODERS[m.group("topic")]
    return None


def get_decoder(name: str) -> Decoder:
    """The decode function of a ``--decode`` name other than ``auto`` and ``none``."""
    from kafka_dump.internal_topics import metadata, offsets, remote_log, share_state, transactions

    return {
        "offsets": offsets.decode,
        "transactions": transactions.decode,
        "share-group-state": share_state.decode,
        "remote-log-metadata": remote_log.decode,
        "metadata": metadata.decode,
    }[name]


def resolve(choice: str, path: str | Path) -> str | None:
    """The decoder for a file under ``--decode choice``: ``auto`` goes by Kafka's names, ``none`` is None;
    ``metadata`` in a ``__remote_log_metadata-N`` directory reads that topic's own apiKeys."""
    if choice == "auto":
        return decoder_for_path(path)
    if choice == "metadata" and decoder_for_path(path) == "remote-log-metadata":
        return "remote-log-metadata"  # the same frame, but apiKeys of its own: never KRaft records
    return None if choice == "none" else choice


RecordDecoder = Callable[[bool, Record], "Decoded | None"]


def record_decoder(name: str | None, *, control: bool = True) -> RecordDecoder:
    """A function (is the batch a control batch?, record) -> Decoded or None: KRaft control records
    decoded whatever the file (as Kafka's tool does) when ``control``, data records by ``name``'s decoder."""
    from kafka_dump.internal_topics import control as _control

    data = get_decoder(name) if name is not None else None

    def decode(is_control: bool, r: Record) -> Decoded | None:
        if is_control:
            return _control.decode(r) if control else None
        return data(r) if data is not None else None

    return decode
