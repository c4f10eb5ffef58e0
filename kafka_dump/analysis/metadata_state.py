"""The KRaft cluster's state from ``__cluster_metadata``: a ``.checkpoint`` snapshot, then the log after it.

Metadata records are changes, not keyed values, so each is applied in order (as the controller's
image does; a metadata transaction's records at its end, none when aborted): brokers register, fence and unregister; topics are created and removed with their
partitions and configs; a partition change replaces the fields it carries (leader ``-2`` and null
lists mean no change), a new leader starts a new leader epoch and every change a new partition epoch.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

from kafka_dump.analysis.replay import Cut, Run, Seen, effective_runs
from kafka_dump.analysis.state import Row, undecoded
from kafka_dump.internal_topics import metadata
from kafka_dump.log.names import snapshot_id
from kafka_dump.log.segment import read_segment
from kafka_dump.model import ControlType, Problem

NO_LEADER_CHANGE = -2
_CHANGED_LISTS = ("isr", "replicas", "removingReplicas", "addingReplicas", "directories",
                  "eligibleLeaderReplicas", "lastKnownElr")  # fmt: skip
_RESOURCE_TYPES = {2: "topic", 4: "broker", 8: "broker-logger", 16: "client-metrics", 32: "group"}


def metadata_files(files: list[Path], cut: Cut) -> tuple[Path | None, list[Path]]:
    """The snapshot to start from (the newest one the cut reaches) and the log files to read after it."""
    snapshots = [(snapshot_id(f), f) for f in files if f.suffix == ".checkpoint"]
    logs = [f for f in files if f.suffix != ".checkpoint"]
    usable = [(sid[0], f) for sid, f in snapshots if sid is not None and _reached(sid[0], f, cut)]
    plain = [f for sid, f in snapshots if sid is None]  # bootstrap.checkpoint and other names
    if usable:
        return max(usable)[1], logs
    return (plain[0] if plain else None), logs


def _reached(end_offset: int, f: Path, cut: Cut) -> bool:
    """The snapshot holds nothing past the cut: its end offset (exclusive) and its last record's time."""
    if cut.offset is not None and end_offset > cut.offset + 1:
        return False
    return cut.time is None or _snapshot_time(f) <= cut.time


def _snapshot_time(f: Path) -> int:
    """The ``lastContainedLogTimestamp`` of a snapshot's header record (its first batch)."""
    for item in read_segment(f):
        if isinstance(item, Problem) or not item.records:
            break
        r = item.records[0]
        if r.control is not None and r.control.type == ControlType.SNAPSHOT_HEADER:
            from kafka_dump.internal_topics import control

            d = control.decode(r)
            if d is not None and d.value is not None and d.value.data is not None:
                return int(d.value.data.get("lastContainedLogTimestamp", 2**63 - 1))
        break
    return 2**63 - 1


class ClusterImage:
    """Brokers, topics, partitions, configs and feature levels, as records change them."""

    def __init__(self) -> None:
        self.brokers: dict[int, Row] = {}
        self.topics: dict[str, Row] = {}  # by topic id
        self.partitions: dict[tuple[str, int], Row] = {}
        self.configs: dict[tuple[int, str], dict[str, str]] = {}
        self.features: dict[str, int] = {}
        self.bad: list[Row] = []

    def apply(self, runs: Iterable[Run]) -> None:
        """Apply each record; those between BeginTransaction and EndTransaction records together at
        the end, or none of them after an AbortTransaction record (KIP-868)."""
        held: list[tuple[str, dict[str, Any]]] | None = None
        for r in (r for run in runs for r in run.records):
            d = metadata.decode(r)
            if not d.ok or d.value is None or d.value.data is None:
                self.bad.append(undecoded(r, d))
                continue
            name = d.value.schema or ""
            if name == "BeginTransactionRecord":
                held = []
            elif name == "AbortTransactionRecord":
                held = None
            elif name == "EndTransactionRecord":
                for change in held or ():
                    self._change(*change)
                held = None
            elif held is not None:
                held.append((name, d.value.data))
            else:
                self._change(name, d.value.data)

    def _change(self, name: str, data: dict[str, Any]) -> None:
        handler = getattr(self, f"_{name}", None)
        if handler is not None:
            handler(data)

    def _RegisterBrokerRecord(self, v: dict[str, Any]) -> None:
        self.brokers[v["brokerId"]] = {
            "type": "broker", "brokerId": v["brokerId"], "brokerEpoch": v["brokerEpoch"],
            "endPoints": [f"{e['name']}://{e['host']}:{e['port']}" for e in v.get("endPoints") or ()],
            "rack": v.get("rack"), "fenced": bool(v.get("fenced", True)),
            "inControlledShutdown": bool(v.get("inControlledShutdown", False)),
        }  # fmt: skip

    def _UnregisterBrokerRecord(self, v: dict[str, Any]) -> None:
        self.brokers.pop(v["brokerId"], None)

    def _FenceBrokerRecord(self, v: dict[str, Any]) -> None:
        if v["id"] in self.brokers:
            self.brokers[v["id"]]["fenced"] = True

    def _UnfenceBrokerRecord(self, v: dict[str, Any]) -> None:
        if v["id"] in self.brokers:
            self.brokers[v["id"]]["fenced"] = False

    def _BrokerRegistrationChangeRecord(self, v: dict[str, Any]) -> None:
        b = self.brokers.get(v["brokerId"])
        if b is None:
            return
        if v.get("fenced", 0) != 0:  # 1: fenced, -1: unfenced, 0: no change
            b["fenced"] = v["fenced"] == 1
        if v.get("inControlledShutdown", 0) != 0:
            b["inControlledShutdown"] = v["inControlledShutdown"] == 1

    def _TopicRecord(self, v: dict[str, Any]) -> None:
        self.topics[v["topicId"]] = {"type": "topic", "topic": v["name"], "topicId": v["topicId"]}

    def _RemoveTopicRecord(self, v: dict[str, Any]) -> None:
        topic = self.topics.pop(v["topicId"], None)
        for key in [k for k in self.partitions if k[0] == v["topicId"]]:
            del self.partitions[key]
        if topic is not None:
            self.configs.pop((2, topic["topic"]), None)

    def _PartitionRecord(self, v: dict[str, Any]) -> None:
        row: Row = {"topicId": v["topicId"], "partition": v["partitionId"]}
        row.update({k: v.get(k) for k in ("leader", "leaderEpoch", "partitionEpoch", "replicas", "isr")})
        for k in ("removingReplicas", "addingReplicas", "eligibleLeaderReplicas", "lastKnownElr"):
            if v.get(k):
                row[k] = v[k]
        self.partitions[(v["topicId"], v["partitionId"])] = row

    def _PartitionChangeRecord(self, v: dict[str, Any]) -> None:
        row = self.partitions.get((v["topicId"], v["partitionId"]))
        if row is None:
            return
        for k in _CHANGED_LISTS:
            if v.get(k) is not None and k != "directories":
                row[k] = v[k]
        if v.get("leader", NO_LEADER_CHANGE) != NO_LEADER_CHANGE:
            row["leader"] = v["leader"]
            row["leaderEpoch"] += 1
        row["partitionEpoch"] += 1

    def _ConfigRecord(self, v: dict[str, Any]) -> None:
        configs = self.configs.setdefault((v["resourceType"], v["resourceName"]), {})
        if v.get("value") is None:
            configs.pop(v["name"], None)
        else:
            configs[v["name"]] = v["value"]

    def _FeatureLevelRecord(self, v: dict[str, Any]) -> None:
        if v["featureLevel"] == 0:
            self.features.pop(v["name"], None)
        else:
            self.features[v["name"]] = v["featureLevel"]

    def rows(self, topics: Collection[str] = ()) -> list[Row]:
        """Brokers, features, topics with their partitions and configs (only ``topics`` when given)."""
        out: list[Row] = []
        if not topics:
            out += [self.brokers[b] for b in sorted(self.brokers)]
            out += [{"type": "feature", "name": n, "level": lvl} for n, lvl in sorted(self.features.items())]
        shown = [
            t
            for t in sorted(self.topics.values(), key=lambda t: t["topic"])
            if not topics or t["topic"] in topics
        ]
        out += shown
        by_topic: dict[str, list[Row]] = {}
        for (topic_id, _n), p in sorted(self.partitions.items()):
            by_topic.setdefault(topic_id, []).append(p)
        for t in shown:
            out += [{"type": "partition", "topic": t["topic"], **p} for p in by_topic.get(t["topicId"], ())]
        for (rtype, rname), values in sorted(self.configs.items()):
            is_topic = rtype == 2
            if (topics and not (is_topic and rname in topics)) or not values:
                continue
            resource = _RESOURCE_TYPES.get(rtype, str(rtype))
            out += [
                {"type": "config", "resourceType": resource, "resourceName": rname, "name": k, "value": val}
                for k, val in sorted(values.items())
            ]
        return out + self.bad


def cluster_state(
    files: list[Path], cut: Cut, seen: Seen, topics: Collection[str] = (), **limits: Any
) -> list[Row]:
    """Replay a snapshot and the log after it into the cluster's state."""
    snapshot, logs = metadata_files(files, cut)
    image = ClusterImage()
    start = None
    if snapshot is not None:
        image.apply(effective_runs([snapshot], Cut(), seen, **limits))
        sid = snapshot_id(snapshot)
        start = sid[0] if sid is not None else None
    image.apply(effective_runs(logs, cut, seen, start=start, **limits))
    return image.rows(topics)
