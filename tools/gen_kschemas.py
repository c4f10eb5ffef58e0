"""Write ``kafka_dump/wire/kschemas.py`` from Apache Kafka's message schema JSON files.

Usage: python -m tools.gen_kschemas KAFKA_CHECKOUT "SOURCE NOTE" [OLDER_CHECKOUT "OLDER LABEL"]
         > kafka_dump/wire/kschemas.py

Only the field definitions are taken (names, types, version ranges, tags, tagged defaults): no prose,
no code. Common structs are inlined where they are used, so the table needs no name lookups at run time.

Both schema forms are read. Old (Kafka 4.0 and before): coordinator keys and values are ``"type":
"data"`` and a key's ``validVersions`` lists the record types it serves. New (Kafka 4.1 on):
``coordinator-key``/``coordinator-value`` with ``apiKey`` = the record type. Keys are written out in
the new form (valid version 0, every field at version 0), since Kafka reads a key's fields whatever
its record type. From OLDER_CHECKOUT, the value layouts listed in ``OLDER`` are kept as
``Name@LABEL`` when their bytes differ from the newer tree's.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

CLIENTS = "clients/src/main/resources/common/message"
METADATA = "metadata/src/main/resources/common/metadata"
STORAGE = "storage/src/main/resources/message"
COORDINATORS = {  # family -> directory
    "group": "group-coordinator/src/main/resources/common/message",
    "transaction": "transaction-coordinator/src/main/resources/common/message",
    "share": "share-coordinator/src/main/resources/common/message",
}
WANTED_CLIENTS = {
    "LeaderChangeMessage",
    "SnapshotHeaderRecord",
    "SnapshotFooterRecord",
    "KRaftVersionRecord",
    "VotersRecord",
    "ConsumerProtocolSubscription",
    "ConsumerProtocolAssignment",
}
# Values whose layout Kafka changed without a new version (share groups were early access in 4.0).
OLDER = (
    "ShareGroupMetadataValue",
    "ShareGroupStatePartitionMetadataValue",
    "ShareSnapshotValue",
    "ShareUpdateValue",
)
PRIMITIVES = {"bool", "int8", "int16", "int32", "int64", "uint16", "uint32", "float64", "string", "bytes",
              "uuid", "records"}  # fmt: skip


def load(path: Path) -> dict[str, Any]:
    text = re.sub(r"^\s*//.*$", "", path.read_text(), flags=re.M)
    return json.loads(text)  # type: ignore[no-any-return]


def camel(name: str) -> str:
    return name[:1].lower() + name[1:]


def field(f: dict[str, Any], common: dict[str, list[dict[str, Any]]], key: bool = False) -> tuple[Any, ...]:
    typ: str = f["type"]
    children: tuple[Any, ...] = ()
    array = typ.startswith("[]")
    elem = typ[2:] if array else typ
    if elem not in PRIMITIVES:
        sub = f.get("fields") or common[elem]
        children = tuple(field(c, common, key) for c in sub)
        elem = "struct"
    versions = "0" if key else f.get("versions") or f.get("taggedVersions")
    tag = int(f.get("tag", -1))
    spec: tuple[Any, ...] = (
        camel(f["name"]),
        ("[]" if array else "") + elem,
        versions,
        f.get("nullableVersions", ""),
        tag,
        f.get("taggedVersions", "") if tag != -1 else "",
        children,
    )
    if tag != -1 and "default" in f:  # a tagged field is written (and shown by Kafka) only when not default
        default = f["default"]
        spec += ("null" if default is None else str(default).lower(),)
    return spec


def message(d: dict[str, Any], key: bool = False) -> tuple[Any, ...]:
    common = {c["name"]: c["fields"] for c in d.get("commonStructs", [])}
    fields = tuple(field(f, common, key) for f in d["fields"])
    return ("0", "none", fields) if key else (d["validVersions"], d["flexibleVersions"], fields)


def record_types(d: dict[str, Any]) -> list[int]:
    """The record types a coordinator key serves: its apiKey (new form) or its validVersions (old form)."""
    if "apiKey" in d:
        return [int(d["apiKey"])]
    lo, _, hi = d["validVersions"].partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def coordinator_types(
    root: Path, sub: str, messages: dict[str, tuple[Any, ...]]
) -> dict[int, tuple[str, str]]:
    """record type -> (key, value) of one coordinator's directory; its messages go into ``messages``."""
    docs = {d["name"]: d for d in map(load, sorted((root / sub).glob("*.json")))}
    values: dict[int, str] = {}
    keys: dict[int, str] = {}
    for name, d in docs.items():
        if d["type"] in ("coordinator-value", "data") and name.endswith("Value"):
            messages[name] = message(d)
            if "apiKey" in d:
                values[int(d["apiKey"])] = name
        elif d["type"] in ("coordinator-key", "data") and name.endswith("Key"):
            messages[name] = message(d, key=True)
            for t in record_types(d):
                keys[t] = name
    types = {}
    for t, key in keys.items():
        value = values.get(t, key[:-3] + "Value")  # the old form pairs by name
        if value in docs:
            types[t] = (key, value)
    return types


def main(root: str, source: str, older: str | None = None, label: str = "older") -> None:
    top = Path(root)
    messages: dict[str, tuple[Any, ...]] = {}
    metadata: dict[int, str] = {}
    rlmm: dict[int, str] = {}
    for sub, table in ((CLIENTS, None), (METADATA, metadata), (STORAGE, rlmm)):
        for path in sorted((top / sub).glob("*.json")):
            d = load(path)
            name = d["name"]
            if sub == CLIENTS and name not in WANTED_CLIENTS:
                continue
            if d["type"] not in ("data", "metadata"):
                continue
            messages[name] = message(d)
            if d["type"] == "metadata" and table is not None:
                table[d["apiKey"]] = name
    families = {fam: coordinator_types(top, sub, messages) for fam, sub in COORDINATORS.items()}
    layouts: dict[str, list[str]] = {}
    if older is not None:
        old: dict[str, tuple[Any, ...]] = {}
        for sub in COORDINATORS.values():
            coordinator_types(Path(older), sub, old)
        for name in OLDER:
            if name in old and _untagged(old[name]) != _untagged(messages[name]):
                messages[f"{name}@{label}"] = old[name]
                layouts[name] = [f"{name}@{label}"]
    _write(source, messages, metadata, rlmm, families, layouts)


def _untagged(spec: tuple[Any, ...]) -> Any:
    """The part of a message's layout that decides its bytes when no tagged field is present."""
    return tuple((f[1], f[2], f[3], _untagged((0, 0, f[6]))) for f in spec[2] if f[4] == -1)


def _write(
    source: str,
    messages: dict[str, tuple[Any, ...]],
    metadata: dict[int, str],
    rlmm: dict[int, str],
    families: dict[str, dict[int, tuple[str, str]]],
    layouts: dict[str, list[str]],
) -> None:
    out = [
        '"""Field definitions of the messages Kafka writes to its own logs, generated by tools/gen_kschemas.py',
        "from Apache Kafka's message schema JSON files; do not edit by hand.",
        "",
        f"Source: {source}",
        "",
        "MESSAGES: name -> (validVersions, flexibleVersions, fields). A field is (jsonName, type,",
        "versions, nullableVersions, tag, taggedVersions, children[, default]); tag -1 is untagged; type",
        "``struct`` or ``[]struct`` has children; versions are Kafka's strings (``0+``, ``1-3``, ``2``,",
        "``none``, empty); a tagged field's default is Kafka's text (``-1``, ``null``, ``true``).",
        "METADATA_TYPES: KRaft metadata record apiKey -> message name.",
        "RLMM_TYPES: remote log metadata apiKey -> message name (the same frame; its own apiKeys).",
        "COORDINATOR_TYPES: coordinator (group, transaction, share) -> record type -> (key, value).",
        "OLDER_LAYOUTS: value -> layouts an older release wrote under the same version, newest first.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        "# fmt: off",
        "MESSAGES: dict[str, tuple[str, str, tuple[Any, ...]]] = {",
    ]
    out += [f"    {name!r}: {messages[name]!r}," for name in sorted(messages)]
    out += ["}", "", "METADATA_TYPES: dict[int, str] = {"]
    out += [f"    {key}: {metadata[key]!r}," for key in sorted(metadata)]
    out += ["}", "", "RLMM_TYPES: dict[int, str] = {"]
    out += [f"    {key}: {rlmm[key]!r}," for key in sorted(rlmm)]
    out += ["}", "", "COORDINATOR_TYPES: dict[str, dict[int, tuple[str, str]]] = {"]
    for fam, types in families.items():
        out.append(f"    {fam!r}: {{")
        out += [f"        {t}: {types[t]!r}," for t in sorted(types)]
        out.append("    },")
    out += ["}", "", "OLDER_LAYOUTS: dict[str, tuple[str, ...]] = {"]
    out += [f"    {name!r}: {tuple(layouts[name])!r}," for name in sorted(layouts)]
    out += ["}", "# fmt: on"]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:5])
