"""``__remote_log_metadata``: tiered storage's segment metadata (``--decode remote-log-metadata``).

The value is framed as a KRaft metadata record is (frame version 1, apiKey, version; no key), with
apiKeys of its own (``RLMM_TYPES``): 0 RemoteLogSegmentMetadataRecord, 1 its update, 2 a partition's
deletion, 3 the snapshot form of 0. They collide with KRaft's apiKeys, hence a table of their own.
"""

from __future__ import annotations

from kafka_dump.internal_topics import Decoded
from kafka_dump.internal_topics.metadata import decode_framed
from kafka_dump.model import Record
from kafka_dump.wire.kschemas import RLMM_TYPES

SEGMENT_STATES = (
    "COPY_SEGMENT_STARTED",
    "COPY_SEGMENT_FINISHED",
    "DELETE_SEGMENT_STARTED",
    "DELETE_SEGMENT_FINISHED",
)
PARTITION_STATES = ("DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED")


def decode(r: Record) -> Decoded:
    """Decode one ``__remote_log_metadata`` record."""
    return decode_framed("remote-log-metadata", RLMM_TYPES, r)
