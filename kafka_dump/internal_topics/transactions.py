"""``__transaction_state``: the transaction coordinator's log (``--decode transactions``).

Record type 0: TransactionLogKey (transactional id) and TransactionLogValue (producer id and epoch,
timeout, state, partitions, timestamps). ``STATES`` names ``transactionStatus`` as Kafka's
``TransactionState`` does.
"""

from __future__ import annotations

from kafka_dump.internal_topics import Decoded, _coordinator
from kafka_dump.model import Record
from kafka_dump.wire.kschemas import COORDINATOR_TYPES

RECORD_TYPES = COORDINATOR_TYPES["transaction"]
STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead",
          "PrepareEpochFence")  # fmt: skip


def state_name(status: int) -> str:
    """``Ongoing``, ``CompleteCommit``...; ``Unknown(n)`` for a number Kafka does not define."""
    return STATES[status] if 0 <= status < len(STATES) else f"Unknown({status})"


def decode(r: Record) -> Decoded:
    """Decode one ``__transaction_state`` record."""
    return _coordinator.decode("transactions", RECORD_TYPES, r)
