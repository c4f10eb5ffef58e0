"""``__share_group_state``: the share coordinator's log (``--decode share-group-state``).

Record types (``COORDINATOR_TYPES["share"]``): 0 ShareSnapshotKey/Value (a share-partition's whole
state), 1 ShareUpdateKey/Value (a change to it). Kafka 4.0 wrote other value layouts under the same
version (an unsigned 16-bit snapshot epoch, no timestamps); they are read as ``layout`` 4.0.
"""

from __future__ import annotations

from kafka_dump.internal_topics import Decoded, _coordinator
from kafka_dump.model import Record
from kafka_dump.wire.kschemas import COORDINATOR_TYPES

RECORD_TYPES = COORDINATOR_TYPES["share"]


def decode(r: Record) -> Decoded:
    """Decode one ``__share_group_state`` record."""
    return _coordinator.decode("share-group-state", RECORD_TYPES, r)
