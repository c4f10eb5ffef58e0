"""``redact --names``: the names a cluster's users chose, inside Kafka's own records and in the
partition directories' names: topic names, group ids, transactional ids and a group member's client
names (member id, client id, instance id, client host) become pseudonyms of the same length (``Pseudonyms.name``: letters and digits, a legal topic name; Kafka's own ``__`` topics
kept), the same pseudonym wherever a name appears.

Each record of ``__consumer_offsets``, ``__transaction_state``, ``__share_group_state``,
``__remote_log_metadata`` and ``__cluster_metadata`` is read with its schema (``wire/kmessage``),
its name fields replaced, and written again at its version; a record whose bytes do not come back
the same from the schema writer before any change (bytes the schema does not account for) is kept
as it is, and counted. A consumer group's member subscriptions and assignments (the consumer
protocol's bytes inside ``GroupMetadataValue``) are read and written the same way.
"""

from __future__ import annotations

import re
import struct
from pathlib import PurePath
from typing import Any

from kafka_dump.analysis.pseudonyms import Pseudonyms
from kafka_dump.internal_topics.metadata import _uvarint as uvarint
from kafka_dump.wire.kmessage import Field, KMessageError, schema
from kafka_dump.wire.kschemas import COORDINATOR_TYPES, METADATA_TYPES, OLDER_LAYOUTS, RLMM_TYPES

TOPIC, GROUP, TXN, CLIENT = "topic", "group", "transactional id", "client"
KINDS = (TOPIC, GROUP, TXN, CLIENT)
# Fields (string or array of strings) that hold one kind of name, whatever the message.
_BY_FIELD = {
    "topic": TOPIC, "topicName": TOPIC, "topics": TOPIC, "subscribedTopicNames": TOPIC,
    "sourceTopics": TOPIC, "repartitionSinkTopics": TOPIC,
    "group": GROUP, "groupId": GROUP,
    "transactionalId": TXN,
    # a group member's names, which its application chose (a member id starts with its client id)
    "memberId": CLIENT, "clientId": CLIENT, "groupInstanceId": CLIENT, "instanceId": CLIENT,
    "clientHost": CLIENT,
}  # fmt: skip
# Fields named otherwise: (message, field) -> kind.
_BY_MESSAGE = {
    ("TopicRecord", "name"): TOPIC,
    ("GroupMetadataValue", "leader"): CLIENT,  # the leader's member id
    ("RemoteLogSegmentMetadataRecord", "name"): TOPIC,  # inside topicIdPartition
    ("RemoteLogSegmentMetadataUpdateRecord", "name"): TOPIC,
    ("RemotePartitionDeleteMetadataRecord", "name"): TOPIC,
    ("RemoteLogSegmentMetadataSnapshotRecord", "name"): TOPIC,
}
# A resource's name by its type: ConfigRecord (ConfigResource.Type) and, for a literal pattern,
# AccessControlEntryRecord (ResourceType); a prefixed or wildcard ACL names no one resource.
_CONFIG_RESOURCES = {2: TOPIC, 32: GROUP}
_ACL_RESOURCES = {2: TOPIC, 3: GROUP, 5: TXN}
_LITERAL = 3
_COORDINATORS = {"offsets": "group", "transactions": "transaction", "share-group-state": "share"}
_FRAMED = {"metadata": METADATA_TYPES, "remote-log-metadata": RLMM_TYPES}
_CONSUMER_PROTOCOL = {
    "subscription": "ConsumerProtocolSubscription",
    "assignment": "ConsumerProtocolAssignment",
}
_I16 = struct.Struct(">h")
# topic-7, and the names Kafka gives a partition being deleted or moved: topic-7.<uuid>-delete
_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<rest>\d+(?:\.[0-9a-f]{32}-(?:delete|future|stray))?)$")


class Renamer:
    """Names replaced under one ``Pseudonyms``; ``rewritten`` counts the records read by their schemas
    and written again (names replaced, if any), ``kept`` (by why) the ones left as they were."""

    def __init__(self, names: Pseudonyms) -> None:
        self.names = names
        self.rewritten = 0
        self.kept: dict[str, int] = {}

    def keep(self, why: str) -> None:
        """Count a record (or a batch) left with its names, and why."""
        self.kept[why] = self.kept.get(why, 0) + 1

    def path(self, relative: PurePath) -> PurePath:
        """A path below the input with each partition directory's topic replaced (the file name kept)."""
        parts = list(relative.parts)
        for i, part in enumerate(parts[:-1]):
            m = _PARTITION_DIR.match(part)
            if m is not None:
                parts[i] = f"{self.names.name(m['topic'], TOPIC)}-{m['rest']}"
        return PurePath(*parts) if parts else relative

    def record(
        self, decoder: str, key: bytes | None, value: bytes | None
    ) -> tuple[bytes | None, bytes | None]:
        """One record of Kafka's own topic ``decoder`` (a ``--decode`` name) with its names replaced,
        or as it was where it cannot be written again the same (counted in ``kept``)."""
        try:
            if decoder in _COORDINATORS:
                types = COORDINATOR_TYPES[_COORDINATORS[decoder]]
                if key is None or len(key) < 2 or (pair := types.get(_I16.unpack_from(key)[0])) is None:
                    raise KMessageError("no known record type", 0)
                new_key = self._rewrite(key, 2, pair[0], 0)
                new_value = value
                if value is not None:
                    if len(value) < 2:
                        raise KMessageError("no version", 0)
                    new_value = self._layouts(value, 2, pair[1], _I16.unpack_from(value)[0])
            elif decoder in _FRAMED:
                if value is None:
                    raise KMessageError("no value", 0)
                api_key, version, pos = _frame(value)
                name = _FRAMED[decoder].get(api_key)
                if name is None:
                    raise KMessageError(f"unknown apiKey {api_key}", 0)
                new_key, new_value = key, self._rewrite(value, pos, name, version)
            else:
                return key, value
        except KMessageError:
            self.keep("not read by its schema")
            return key, value
        if (new_key is None and key is not None) or (new_value is None and value is not None):
            self.keep("not written again the same by its schema")
            return key, value
        self.rewritten += 1
        return new_key, new_value

    def _layouts(self, data: bytes, pos: int, name: str, version: int) -> bytes | None:
        """``_rewrite`` by the message's layout, else by an older layout of the same version."""
        for layout in (name, *OLDER_LAYOUTS.get(name, ())):
            try:
                return self._rewrite(data, pos, layout, version)
            except KMessageError:
                continue
        raise KMessageError(f"no layout of {name} reads it", pos)

    def _rewrite(self, data: bytes, pos: int, name: str, version: int) -> bytes | None:
        """``data`` (the message ``name`` at ``version`` from ``pos``, framing before it) with its
        names replaced; None when the writer does not give back ``data`` before any change."""
        s = schema(name)
        fields, end = s.read(data, version, pos)
        if end != len(data) or s.write(fields, version) != data[pos:]:
            return None
        base = name.partition("@")[0]
        consumer = base == "GroupMetadataValue" and fields.get("protocolType") == "consumer"
        out = data[:pos] + s.write(self._names_in(base, s.fields, fields, consumer), version)
        return out if len(out) == len(data) else None

    def _names_in(
        self, message: str, fields: tuple[Field, ...], data: dict[str, Any], consumer: bool
    ) -> dict[str, Any]:
        """The fields ``data`` of ``message`` with every name replaced, nested structs included, and
        (``consumer``: a consumer group's members) the consumer protocol's bytes."""
        out = dict(data)
        by_name = {f.name: f for f in fields}
        for key, value in data.items():
            f = by_name.get(key)
            if f is None or value is None:
                continue
            kind = _resource_kind(message, data) if key == "resourceName" else (
                _BY_MESSAGE.get((message, key)) or _BY_FIELD.get(key))  # fmt: skip
            if f.elem == "string" and kind is not None:
                name = self.names.name
                out[key] = [name(v, kind) for v in value] if f.is_array else name(value, kind)
            elif f.elem == "struct":
                out[key] = (
                    [self._names_in(message, f.children, v, consumer) for v in value]
                    if f.is_array
                    else self._names_in(message, f.children, value, consumer)
                )
            elif f.elem == "bytes" and consumer and key in _CONSUMER_PROTOCOL:
                out[key] = self._consumer_protocol(key, value)
        return out

    def _consumer_protocol(self, field: str, raw: bytes) -> bytes:
        """A member's subscription or assignment (int16 version, then the message) with its topics
        replaced; as it was, and counted, where it does not read back the same."""
        try:
            if len(raw) < 2:
                raise KMessageError("no version", 0)
            new = self._rewrite(raw, 2, _CONSUMER_PROTOCOL[field], _I16.unpack_from(raw)[0])
        except KMessageError:
            new = None
        if new is None:
            self.keep(f"a member's {field}, not read by its schema (its topics kept)")
            return raw
        return new


def _frame(value: bytes) -> tuple[int, int, int]:
    """(apiKey, version, where the message starts) of a framed record: frameVersion, apiKey, version."""
    _, pos = uvarint(value, 0)
    api_key, pos = uvarint(value, pos)
    version, pos = uvarint(value, pos)
    return api_key, version, pos


def _resource_kind(message: str, data: dict[str, Any]) -> str | None:
    if message == "ConfigRecord":
        return _CONFIG_RESOURCES.get(data.get("resourceType", -1))
    if message == "AccessControlEntryRecord" and data.get("patternType") == _LITERAL:
        return _ACL_RESOURCES.get(data.get("resourceType", -1))
    return None
