"""The state a coordinator topic holds, from its live records (``replay.last_per_key``).

Each function turns live records into rows: JSON-ready dicts led by ``type`` (``offset``, ``group``,
``transaction``, ``share-partition``), sorted by their names. A record its decoder cannot read
becomes an ``undecoded`` row with its offset and the reason, never a crash.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from kafka_dump.analysis.replay import Run
from kafka_dump.internal_topics import Decoded, offsets, share_state, transactions
from kafka_dump.model import Record

Row = dict[str, Any]
# Transaction states in which a transaction is still open (its markers not yet all written).
OPEN_STATES = ("Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence")
_GROUP_TYPES = (("ConsumerGroup", "consumer"), ("ShareGroup", "share"), ("StreamsGroup", "streams"))


def undecoded(r: Record, d: Decoded) -> Row:
    """A row for a record its decoder could not read."""
    return {"type": "undecoded", "recordOffset": r.offset, "error": d.error}


def group_state(live: dict[bytes, Record], groups: Collection[str] = ()) -> list[Row]:
    """``__consumer_offsets``: one ``offset`` row per group, topic and partition, and one ``group`` row
    per group (classic, consumer, share or streams) with its members; only ``groups`` when given."""
    commits: list[Row] = []
    by_group: dict[str, Row] = {}
    bad: list[Row] = []
    for r in live.values():
        d = offsets.decode(r)
        if not d.ok or d.key is None or d.value is None or d.key.data is None or d.value.data is None:
            bad.append(undecoded(r, d))
            continue
        key, value = d.key.data, d.value.data
        name: str = key["group"] if "group" in key else key["groupId"]
        if groups and name not in groups:
            continue
        if d.key.schema in ("OffsetCommitKey", "LegacyOffsetCommitKey"):
            commits.append(_commit(name, key, value, r))
        else:
            _fold_group(by_group, name, d.key.schema or "", key, d.value.schema or "", value, r)
    commits.sort(key=lambda c: (c["group"], c["topic"], c["partition"]))
    rows = [*commits, *(by_group[g] for g in sorted(by_group))]
    for g in rows[len(commits) :]:
        g["members"] = [g["members"][m] for m in sorted(g["members"])]
    return rows + bad


def _commit(group: str, key: dict[str, Any], value: dict[str, Any], r: Record) -> Row:
    row: Row = {"type": "offset", "group": group, "topic": key["topic"], "partition": key["partition"]}
    row["offset"] = value["offset"]
    row["leaderEpoch"] = value.get("leaderEpoch", -1)
    row["metadata"] = value.get("metadata")
    row["commitTimestamp"] = value.get("commitTimestamp", -1)
    if value.get("expireTimestamp", -1) != -1:
        row["expireTimestamp"] = value["expireTimestamp"]
    row["recordOffset"] = r.offset
    return row


def _fold_group(
    by_group: dict[str, Row], name: str, key_schema: str, key: dict[str, Any], value_schema: str,
    value: dict[str, Any], r: Record,
) -> None:  # fmt: skip
    """Fold one group record into its group's row: metadata at the top, member records per member."""
    kind = next((k for prefix, k in _GROUP_TYPES if key_schema.startswith(prefix)), "classic")
    g = by_group.setdefault(name, {"type": "group", "group": name, "groupType": kind, "members": {}})
    g["groupType"] = kind
    if key_schema == "GroupMetadataKey":
        members = value.get("members") or []
        g.update({k: v for k, v in value.items() if k != "members"})
        g["members"] = {m["memberId"]: m for m in members}
        g["recordOffset"] = r.offset
    elif value_schema.endswith("GroupMetadataValue"):
        g.update(value)
        g["recordOffset"] = max(g.get("recordOffset", -1), r.offset)
    elif "memberId" in key:
        member = g["members"].setdefault(key["memberId"], {"memberId": key["memberId"]})
        if value_schema.endswith("MemberMetadataValue"):
            member.update(value)
        elif value_schema.endswith("CurrentMemberAssignmentValue"):
            member["assignment"] = value
        else:
            member[_field(value_schema)] = value
    else:
        extra = {k: v for k, v in key.items() if k != "groupId"}
        g.setdefault(_field(value_schema), []).append({**extra, **value} if extra else value)


def _field(value_schema: str) -> str:
    """``ConsumerGroupTargetAssignmentMemberValue`` -> ``targetAssignmentMember``."""
    for prefix, _kind in _GROUP_TYPES:
        if value_schema.startswith(prefix):
            value_schema = value_schema[len(prefix) :]
    name = value_schema.removesuffix("Value")
    return name[:1].lower() + name[1:]


def transaction_state(live: dict[bytes, Record], newest: int, ids: Collection[str] = ()) -> list[Row]:
    """``__transaction_state``: one row per transactional id. One in an open state (``OPEN_STATES``)
    for longer than its timeout, measured to ``newest`` (the newest timestamp replayed), is ``stuck``."""
    rows: list[Row] = []
    bad: list[Row] = []
    for r in live.values():
        d = transactions.decode(r)
        if not d.ok or d.key is None or d.value is None or d.key.data is None or d.value.data is None:
            bad.append(undecoded(r, d))
            continue
        tid = d.key.data["transactionalId"]
        if ids and tid not in ids:
            continue
        v = d.value.data
        state = transactions.state_name(v["transactionStatus"])
        start = v.get("transactionStartTimestampMs", -1)
        age = newest - start if state in OPEN_STATES and start >= 0 and newest >= 0 else None
        rows.append({
            "type": "transaction", "transactionalId": tid, "state": state, "producerId": v["producerId"],
            "producerEpoch": v["producerEpoch"], "timeoutMs": v["transactionTimeoutMs"],
            "partitions": [
                {"topic": p["topic"], "partitions": p["partitionIds"]} for p in v.get("transactionPartitions") or []
            ],
            "startTimestamp": start, "lastUpdateTimestamp": v.get("transactionLastUpdateTimestampMs", -1),
            "ageMs": age, "stuck": age is not None and age > v["transactionTimeoutMs"], "recordOffset": r.offset,
        })  # fmt: skip
    rows.sort(key=lambda t: t["transactionalId"])
    return rows + bad


def share_state_rows(runs: Iterable[Run], groups: Collection[str] = ()) -> list[Row]:
    """``__share_group_state``: per share partition, its state batches now: the last snapshot, then
    each update after it in order (a newer start offset drops the batches below it; an update's
    batches replace the offsets they cover)."""
    parts: dict[tuple[str, str, int], Row] = {}
    bad: list[Row] = []
    for r in (r for run in runs for r in run.records):
        d = share_state.decode(r)
        if not d.ok or d.key is None or d.key.data is None:
            bad.append(undecoded(r, d))
            continue
        k = d.key.data
        where = (k["groupId"], k["topicId"], k["partition"])
        if groups and where[0] not in groups:
            continue
        if d.tombstone or d.value is None or d.value.data is None:
            parts.pop(where, None)
            continue
        v = d.value.data
        if d.key.schema == "ShareSnapshotKey":
            row: Row = {
                "type": "share-partition",
                "groupId": where[0],
                "topicId": where[1],
                "partition": where[2],
            }
            row.update(v)
            row["stateBatches"] = sorted(v["stateBatches"], key=lambda b: b["firstOffset"])
            row["recordOffset"] = r.offset
            parts[where] = row
        elif where in parts:
            _update(parts[where], v, r.offset)
    rows = [parts[p] for p in sorted(parts)]
    return rows + bad


def _update(row: Row, v: dict[str, Any], offset: int) -> None:
    """Apply a ShareUpdate as the share coordinator merges one: -1 (start offset, leader epoch) keeps
    the value; the snapshot epoch and state epoch stay the snapshot's."""
    start = v.get("startOffset", -1)
    batches = row["stateBatches"]
    if start >= 0:
        row["startOffset"] = start
        batches = [b for b in batches if b["lastOffset"] >= start]
        batches = [{**b, "firstOffset": max(b["firstOffset"], start)} for b in batches]
    for new in v.get("stateBatches") or ():
        lo, hi = new["firstOffset"], new["lastOffset"]
        kept = []
        for b in batches:
            if b["lastOffset"] < lo or b["firstOffset"] > hi:
                kept.append(b)
                continue
            if b["firstOffset"] < lo:
                kept.append({**b, "lastOffset": lo - 1})
            if b["lastOffset"] > hi:
                kept.append({**b, "firstOffset": hi + 1})
        batches = [*kept, dict(new)]
    row["stateBatches"] = _joined(sorted(batches, key=lambda b: b["firstOffset"]))
    for field in ("leaderEpoch", "deliveryCompleteCount"):
        if v.get(field, -1) != -1:
            row[field] = v[field]
    row["recordOffset"] = offset


def _joined(batches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Neighbouring batches in the same delivery state and count, as one."""
    out: list[dict[str, Any]] = []
    for b in batches:
        last = out[-1] if out else None
        same = last is not None and all(last[k] == b[k] for k in ("deliveryState", "deliveryCount"))
        if last is not None and same and last["lastOffset"] + 1 == b["firstOffset"]:
            out[-1] = {**last, "lastOffset": b["lastOffset"]}
        else:
            out.append(b)
    return out
