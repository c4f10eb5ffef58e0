"""``kdump upgrade-check``: which partitions still hold v0/v1 entries, and what Kafka 4 will do with them.

Kafka 4 dropped message formats v0 and v1 (KIP-724): it still reads them from disk, and its log
cleaner rewrites them as v2 when it compacts a segment (KAFKA-13093), while a topic that is only
deleted keeps them until retention removes their segments. So what happens to a partition's v0/v1
data follows from its topic's ``cleanup.policy`` and ``retention.ms``, read here from the KRaft
metadata log (``__cluster_metadata-0``): the topic's ``ConfigRecord`` entries, else the cluster's
dynamic defaults in the same log (``log.cleanup.policy``, ``log.retention.ms``...). The listing of
each segment is ``ls``'s (entry headers only); the size after conversion encodes the v0/v1 entries
again as v2 with the writer's encoders, each entry as one v2 batch in its own codec (the cleaner's
rule), optionally for a sample of them. No printing here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kafka_dump.analysis.ls import LegacySpan, Listing
from kafka_dump.model import Batch, Compression
from kafka_dump.wire.codecs import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_RECORDS_PER_BATCH

METADATA_PARTITION = "__cluster_metadata-0"
_TOPIC = 2  # ConfigResource.Type.TOPIC
_BROKER = 4  # ConfigResource.Type.BROKER; the name "" is the cluster-wide default
KAFKA_RETENTION_MS = 7 * 24 * 3600 * 1000  # log.retention.hours=168, Kafka's default
_RETENTION_KEYS = (
    ("log.retention.ms", 1),
    ("log.retention.minutes", 60_000),
    ("log.retention.hours", 3_600_000),
)


@dataclass
class ClusterConfigs:
    """Topic configs and the cluster-wide defaults as the metadata log leaves them."""

    topics: dict[str, dict[str, str]] = field(default_factory=dict)
    defaults: dict[str, str] = field(default_factory=dict)
    source: str = ""  # the directory read

    def apply(self, record: dict[str, object], schema: str) -> None:
        """One decoded metadata record: a config set or deleted, a topic created or removed."""
        if schema == "ConfigRecord":
            kind, name = record.get("resourceType"), record.get("resourceName")
            key, value = str(record.get("name")), record.get("value")
            if kind == _TOPIC and isinstance(name, str):
                target = self.topics.setdefault(name, {})
            elif kind == _BROKER and name == "":
                target = self.defaults
            else:
                return
            if value is None:
                target.pop(key, None)
            else:
                target[key] = str(value)
        elif schema == "TopicRecord":
            self._ids[str(record.get("topicId"))] = str(record.get("name"))
        elif schema == "RemoveTopicRecord":
            removed = self._ids.pop(str(record.get("topicId")), None)
            if removed is not None:
                self.topics.pop(removed, None)

    def __post_init__(self) -> None:
        self._ids: dict[str, str] = {}

    def policy(self, topic: str) -> tuple[str | None, str]:
        """(cleanup.policy, where it comes from); None where neither the topic nor the cluster sets it."""
        own = self.topics.get(topic, {}).get("cleanup.policy")
        if own is not None:
            return own, "topic"
        if "log.cleanup.policy" in self.defaults:
            return self.defaults["log.cleanup.policy"], "cluster default"
        return None, "not in the metadata log"

    def retention(self, topic: str) -> tuple[int | None, str]:
        """(retention.ms, where it comes from); None where neither the topic nor the cluster sets it."""
        own = self.topics.get(topic, {}).get("retention.ms")
        if own is not None:
            return _int(own), "topic"
        for key, scale in _RETENTION_KEYS:
            if key in self.defaults:
                n = _int(self.defaults[key])
                return (None if n is None else n if n < 0 else n * scale), "cluster default"
        return None, "not in the metadata log"


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def metadata_dir(paths: Iterable[str], given: str | None) -> Path | None:
    """The metadata log to read: ``--metadata`` (the partition directory or a log dir holding it), else
    the first log dir given that holds ``__cluster_metadata-0``."""
    if given is not None:
        p = Path(given)
        return p / METADATA_PARTITION if (p / METADATA_PARTITION).is_dir() else p
    for raw in paths:
        p = Path(raw)
        if p.name == METADATA_PARTITION and p.is_dir():
            return p
        if (p / METADATA_PARTITION).is_dir():
            return p / METADATA_PARTITION
    return None


def read_configs(directory: Path, files: list[Path] | None = None) -> ClusterConfigs:
    """Replay the metadata log in ``directory`` (``files``: its segments, when a walk found them): the
    newest snapshot (``*.checkpoint``), then every log segment in offset order; later records win.
    Undecodable records are passed over."""
    from kafka_dump.internal_topics.metadata import decode
    from kafka_dump.log.names import snapshot_id
    from kafka_dump.log.segment import read_segment
    from kafka_dump.log.sources import find

    if files is None:
        files = [Path(s.path) for s in find([str(directory)]).readable()]
    snapshots = sorted(
        (f for f in files if snapshot_id(f) is not None), key=lambda f: snapshot_id(f) or (0, 0)
    )
    logs = [f for f in files if f.suffix == ".log"]
    configs = ClusterConfigs(source=str(directory))
    for f in [*snapshots[-1:], *logs]:
        for item in read_segment(f):
            if not isinstance(item, Batch) or item.isControl or not item.records:
                continue
            for r in item.records:
                value = decode(r).value
                if value is not None and value.schema is not None and value.data is not None:
                    configs.apply(value.data, value.schema)
    return configs


# What Kafka 4 does with a topic's v0/v1 data.
COMPACTION = "compaction"  # rewritten as v2 when the cleaner next compacts the segments
RETENTION = "retention"  # kept until retention deletes the segments
KEPT = "kept"  # retention.ms -1: kept indefinitely
UNKNOWN = "unknown"  # no config: either of the first two


@dataclass
class TopicVerdict:
    """One topic's configs, where they came from, and the outcome for its v0/v1 data. ``deletedAfter``:
    when the newest segment holding v0/v1 data passes ``retention.ms`` (epoch ms), where known."""

    topic: str
    policy: str | None
    policySource: str
    retentionMs: int | None
    retentionSource: str
    outcome: str
    deletedAfter: int | None
    partitions: int
    bytes: int


def topic_verdict(
    topic: str, partitions: int, segments: list[Listing], configs: ClusterConfigs | None
) -> TopicVerdict:
    """The outcome for ``topic`` whose ``segments`` (in ``partitions`` partitions) hold v0/v1 data."""
    policy, policy_source = configs.policy(topic) if configs else (None, "no metadata log")
    retention, retention_source = configs.retention(topic) if configs else (None, "no metadata log")
    policies = {p.strip() for p in (policy or "").split(",")}
    if "compact" in policies:
        outcome = COMPACTION
    elif policy is None:
        outcome = UNKNOWN
    else:
        outcome = KEPT if retention is not None and retention < 0 else RETENTION
    newest = _newest_legacy_time(segments)
    deleted_after = None
    forever = retention is not None and retention < 0  # retention.ms -1: no retention deletes it
    if outcome in (RETENTION, UNKNOWN) and newest is not None and not forever:
        deleted_after = newest + (KAFKA_RETENTION_MS if retention is None else retention)
    return TopicVerdict(
        topic,
        policy,
        policy_source,
        retention,
        retention_source,
        outcome,
        deleted_after,
        partitions,
        sum(s.legacy.bytes for s in segments if s.legacy is not None),
    )


def _newest_legacy_time(segments: list[Listing]) -> int | None:
    """The largest timestamp of the newest segment holding v0/v1 data (Kafka's retention clock for a
    segment: its largest timestamp, or the file's mtime where no entry has one)."""
    newest: int | None = None
    for segment in segments:
        if segment.legacy is None:
            continue
        ts = segment.lastTimestamp if segment.lastTimestamp is not None else segment.modified
        if ts is not None and (newest is None or ts > newest):
            newest = ts
    return newest


@dataclass
class Conversion:
    """v0/v1 entries encoded again as v2 (each one batch, its own codec): the bytes they take on disk
    now and after, for the entries encoded (all, or a sample); ``estimate`` scales to every one."""

    entries: int = 0
    encoded: int = 0
    before: int = 0
    after: int = 0
    total_bytes: int = 0  # the v0/v1 bytes of every entry, encoded or not

    @property
    def estimate(self) -> int:
        if self.before == 0:
            return 0
        if self.encoded == self.entries:
            return self.after
        return round(self.total_bytes * self.after / self.before)

    @property
    def sampled(self) -> bool:
        return self.encoded < self.entries

    def merge(self, other: Conversion) -> None:
        self.entries += other.entries
        self.encoded += other.encoded
        self.before += other.before
        self.after += other.after
        self.total_bytes += other.total_bytes


def convert_size(
    path: Path,
    legacy: LegacySpan,
    sample: int | None,
    base_offset: int | None = None,
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    max_records_per_batch: int = DEFAULT_MAX_RECORDS_PER_BATCH,
) -> Conversion:
    """Encode a segment's v0/v1 entries as the cleaner writes them: each as one v2 batch in its codec.
    ``sample``: only the first entry reaching each of N evenly spaced offsets of the v0/v1 span; the
    others are passed over by their headers (the segment reader's filter), never decoded."""
    from kafka_dump.analysis.compare import as_v2_batch, encoded_sizes
    from kafka_dump.log.segment import read_segment

    out = Conversion(entries=legacy.entries, total_bytes=legacy.bytes)
    keep = None if sample is None or legacy.lastOffset is None else _sampler(legacy, sample, base_offset or 0)
    items = read_segment(
        path, max_batch_bytes=max_batch_bytes, max_records_per_batch=max_records_per_batch, keep=keep
    )
    for item in items:
        if not isinstance(item, Batch) or item.magic >= 2 or not item.records:
            continue
        codec = item.compression if item.compression is not Compression.UNKNOWN else Compression.NONE
        v2 = as_v2_batch(item, item.records)
        out.encoded += 1
        out.before += item.sizeInBytes
        out.after += encoded_sizes(v2, [codec], lambda c: None)[codec]
    return out


def _sampler(legacy: LegacySpan, n: int, base: int) -> Callable[[int, int], bool]:
    """A header filter keeping the first entry whose last offset reaches each of ``n`` points spread
    over the v0/v1 offsets (from the first, or ``base`` where a wrapper's first is unknown, to the last)."""
    low = legacy.firstOffset if legacy.firstOffset is not None else base
    last = legacy.lastOffset if legacy.lastOffset is not None else low
    span = max(last - low + 1, 1)
    points = [low + span * k // n for k in range(n)]
    at = [0]

    def keep(last_offset: int, _max_timestamp: int) -> bool:
        if at[0] >= len(points) or last_offset < points[at[0]]:
            return False
        while at[0] < len(points) and points[at[0]] <= last_offset:
            at[0] += 1
        return True

    return keep
