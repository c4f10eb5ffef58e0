"""Regenerate every capture of kdump's output in README.md and docs/, and the speed page's chart.

    python tools/screenshots.py                  # rewrite every capture (README.md, docs/**/*.md)
    python tools/screenshots.py --check          # exit 1 when any capture is not what kdump prints today
    python tools/screenshots.py docs/guides/x.md # only these files' captures

A capture is a shell command between markers; the generator runs it and writes what it printed:

    <!-- capture: kdump verify-crc data/ -->                     the output as a text block
    <!-- capture from="Size in every format": kdump stats ... -->  from the line that starts so
    <!-- capture svg="verify": kdump verify-crc data/ -->         an SVG (Rich's export of the colours),
    <!-- /capture -->                                             docs/assets/captures/verify.svg

The commands run through ``sh`` (pipes allowed), at 100 columns, in a temporary directory holding
the log dirs ``make_data`` builds from the bundled fixtures (the fixtures are only read), with a
``kdump`` on PATH that runs this checkout. The chart ``docs/assets/speed.svg`` is drawn from the
benchmark's results file ``docs/assets/speed.json`` (``benchmarks/bench.py --json``).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
README = ROOT / "README.md"
DOCS = ROOT / "docs"
CAPTURES = DOCS / "assets" / "captures"
SPEED_JSON = DOCS / "assets" / "speed.json"
SPEED_SVG = DOCS / "assets" / "speed.svg"
COLUMNS = 100
DAMAGED_AT = 200  # a byte inside the last batch (offsets 15..16) of orders-0's second segment
T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z, as the fixtures

BLOCK = re.compile(
    r"<!-- capture(?P<attrs>(?: [a-z]+=\"[^\"]*\")*): (?P<command>.+?) -->\n(?P<body>.*?)<!-- /capture -->",
    re.S,
)
ATTR = re.compile(r' ([a-z]+)="([^"]*)"')
KNOWN = {"from", "svg"}
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def pages() -> list[Path]:
    """Every Markdown file that may hold captures: README.md and the site's pages."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def make_data(top: Path) -> None:
    """The places the captures look at, all below ``top``:

    - ``data/``, a log dir: ``events-0`` (a v2 segment with headers) and ``orders-0`` (two
      transactional segments with their indexes, one with a byte flipped); ``events-0`` beside it
      links to ``data/events-0``;
    - ``old-0/``, a v1 uncompressed segment (to convert, to compare, before Kafka 4);
    - ``broker/data-1`` and ``broker/data-2``, a JBOD broker's two log dirs;
    - ``replica-a/orders-0`` and ``replica-b/orders-0``, two replicas, b's last segment cut short;
    - ``data/__consumer_offsets-0``, a group's commits (for ``kdump state``);
    - ``broker1/orders-0`` and ``broker2/orders-0``, replicas that diverge (``_diverged``);
    - ``tiered/data``, a tiered partition's log dir with ``__remote_log_metadata`` (``_tiered``);
    - ``cluster/data``, a KRaft broker's log dir with old topics and their configs (``_cluster``);
    - ``fixtures``, a link to the bundled fixtures; ``secret``, a secret for ``redact --secret-file``.
    """
    data = top / "data"
    (data / "events-0").mkdir(parents=True)
    shutil.copy(FIXTURES / "v2-headers.log", data / "events-0" / "00000000000000000000.log")
    shutil.copytree(FIXTURES / "txn-aborted", data / "orders-0", ignore=shutil.ignore_patterns("*.py"))
    (top / "replica-a").mkdir()
    shutil.copytree(data / "orders-0", top / "replica-a" / "orders-0")
    damaged = data / "orders-0" / "00000000000000000013.log"
    raw = bytearray(damaged.read_bytes())
    raw[DAMAGED_AT] ^= 0xFF
    damaged.write_bytes(bytes(raw))
    (top / "old-0").mkdir()
    shutil.copy(FIXTURES / "v1-none.log", top / "old-0" / "00000000000000000000.log")
    os.symlink("data/events-0", top / "events-0")
    for disk, partition, fixture in (
        ("data-1", "events-0", "v2-lz4.log"),
        ("data-2", "old-0", "v1-gzip.log"),
    ):
        (top / "broker" / disk / partition).mkdir(parents=True)
        shutil.copy(FIXTURES / fixture, top / "broker" / disk / partition / "00000000000000000000.log")
    shutil.copytree(top / "replica-a" / "orders-0", top / "replica-b" / "orders-0")
    cut = top / "replica-b" / "orders-0" / "00000000000000000013.log"
    cut.write_bytes(cut.read_bytes()[:-60])
    offsets = data / "__consumer_offsets-0"
    offsets.mkdir()
    (offsets / "00000000000000000000.log").write_bytes(_commits())
    _diverged(top)
    _tiered(top)
    _cluster(top)
    os.symlink(FIXTURES, top / "fixtures")  # the bundled fixtures themselves, read as they are
    (top / "secret").write_text("case 4711\n")  # redact's --secret-file: the same pseudonyms every run


def _batch(first: int, pairs: list[tuple[bytes | None, bytes | None]], epoch: int = 0) -> bytes:
    """One v2 batch (kdump's encoder) of records at offsets ``first``.., keys and values given, a
    second apart from the fixtures' time."""
    from kafka_dump import Record, encode_entry
    from kafka_dump.wire import new_batch

    records = tuple(
        Record(first + i, T0 + (first + i) * 1000, k, v, (), -1, 0) for i, (k, v) in enumerate(pairs)
    )
    return encode_entry(new_batch(records, magic=2, base_offset=first, partition_leader_epoch=epoch))


def _message(name: str, fields: dict[str, object], version: int = 0, *, head: bytes | None = None) -> bytes:
    """A record of Kafka's own, the schema writer's bytes behind ``head``: by default the frame of the
    metadata and remote log metadata topics (frame version 1, the message's apiKey, ``version``)."""
    from kafka_dump.wire.kmessage import schema
    from kafka_dump.wire.kschemas import METADATA_TYPES, RLMM_TYPES

    if head is None:
        api_key = next(k for k, v in (*METADATA_TYPES.items(), *RLMM_TYPES.items()) if v == name)
        head = bytes([1, api_key, version])
    return head + schema(name).write(fields, version)


def _commits() -> bytes:
    """A ``__consumer_offsets`` segment: group ``billing`` commits on two partitions of ``orders``,
    three times, then ``audit`` commits once and leaves (a tombstone of its commit)."""

    def commit(group: str, partition: int, offset: int) -> tuple[bytes, bytes]:
        # The key: its record type (1, an offset commit) then the struct; the value: its version, then it.
        key = _message("OffsetCommitKey", {"group": group, "topic": "orders", "partition": partition},
                       head=struct.pack(">h", 1))  # fmt: skip
        value = _message("OffsetCommitValue", {"offset": offset, "leaderEpoch": 7, "metadata": "",
                                               "commitTimestamp": T0 + offset * 1000}, 3, head=struct.pack(">h", 3))  # fmt: skip
        return key, value

    pairs: list[tuple[bytes | None, bytes | None]] = [
        commit("billing", p, o) for o in (100, 250, 420) for p in (0, 1)
    ]
    pairs += [commit("audit", 0, 90), (commit("audit", 0, 90)[0], None)]
    return b"".join(_batch(i, [pair]) for i, pair in enumerate(pairs))


def _diverged(top: Path) -> None:
    """``broker1/orders-0`` and ``broker2/orders-0``: one partition on two brokers, in batches of 5.
    Both hold offsets 0..59 (leader epochs 2 then 3 from offset 40). broker1 goes on in epoch 3 to
    offset 99. broker2 was truncated at 60 and re-fetched from a new leader, epoch 4, to offset 109,
    in a segment of its own."""

    def batches(first: int, last: int, epoch: int, side: str) -> bytes:
        return b"".join(
            _batch(base, [(b"order-%d" % o, f"{side} {o}".encode()) for o in range(base, base + 5)], epoch)
            for base in range(first, last + 1, 5)
        )

    def checkpoint(d: Path, epochs: list[tuple[int, int]]) -> None:
        lines = ["0", str(len(epochs)), *(f"{e} {o}" for e, o in epochs)]
        (d / "leader-epoch-checkpoint").write_text("\n".join(lines) + "\n")

    one, two = top / "broker1" / "orders-0", top / "broker2" / "orders-0"
    one.mkdir(parents=True)
    two.mkdir(parents=True)
    common = batches(0, 39, 2, "placed") + batches(40, 59, 3, "placed")
    (one / "00000000000000000000.log").write_bytes(common + batches(60, 99, 3, "placed"))
    checkpoint(one, [(2, 0), (3, 40)])
    (two / "00000000000000000000.log").write_bytes(common)
    (two / "00000000000000000060.log").write_bytes(batches(60, 109, 4, "re-sent"))
    checkpoint(two, [(2, 0), (3, 40), (4, 60)])


def _values(values: list[bytes]) -> bytes:
    """One batch of keyless records with these values (a topic of Kafka's own), from offset 0."""
    return _batch(0, [(None, v) for v in values])


def _tiered(top: Path) -> None:
    """``tiered/data/orders-3``: offsets 25..44 on disk; ``__remote_log_metadata-7`` says the store
    holds 0..9, 15..24, 25..34 and 40..49 (copied), 50..59 (a copy never finished) and 60..69
    (deleted): a gap at 10..14 and an overlap at 40..44."""

    def segment_id(n: int) -> dict[str, object]:
        tip = {"name": "orders", "id": "AAAAAAAAAAAAAAAAAAAAAQ", "partition": 3}
        return {"topicIdPartition": tip, "id": f"{'ABCDEF'[n] * 21}{'QgwAQg'[n]}"}

    def added(n: int, start: int, end: int) -> bytes:
        return _message("RemoteLogSegmentMetadataRecord", {
            "remoteLogSegmentId": segment_id(n), "startOffset": start, "endOffset": end, "brokerId": 1,
            "maxTimestampMs": T0 + end * 1000, "eventTimestampMs": T0, "segmentSizeInBytes": 577,
            "segmentLeaderEpochs": [{"leaderEpoch": 0, "offset": start}], "customMetadata": None,
            "remoteLogSegmentState": 0, "txnIndexEmpty": True,
        })  # fmt: skip

    def moved(n: int, state: int) -> bytes:
        return _message("RemoteLogSegmentMetadataUpdateRecord", {"remoteLogSegmentId": segment_id(n), "brokerId": 1,
                        "eventTimestampMs": T0, "customMetadata": None, "remoteLogSegmentState": state})  # fmt: skip

    part = top / "tiered" / "data" / "orders-3"
    part.mkdir(parents=True)
    for first, last in ((25, 34), (35, 44)):
        (part / f"{first:020d}.log").write_bytes(
            _batch(first, [(None, b"value %d" % o) for o in range(first, last + 1)])
        )
    values: list[bytes] = []
    for n, (start, end) in enumerate(((0, 9), (15, 24), (25, 34), (40, 49))):
        values += [added(n, start, end), moved(n, 1)]  # COPY_SEGMENT_FINISHED: Kafka serves it
    values += [added(4, 50, 59), added(5, 60, 69), moved(5, 1), moved(5, 3)]  # stuck; deleted
    meta = top / "tiered" / "data" / "__remote_log_metadata-7"
    meta.mkdir()
    (meta / "00000000000000000000.log").write_bytes(_values(values))


def _cluster(top: Path) -> None:
    """``cluster/data``: ``__cluster_metadata-0`` with three topics and their configs (``compacted``,
    ``deleted`` after a day, ``forever``: retention -1), each a partition of v0/v1 data, and ``fresh``
    in v2 only; the cluster's default retention is an hour."""
    import base64

    def topic(name: str, n: int) -> bytes:
        topic_id = base64.urlsafe_b64encode(bytes([n]) * 16).rstrip(b"=").decode()
        return _message("TopicRecord", {"name": name, "topicId": topic_id})

    def config(kind: int, resource: str, name: str, value: str) -> bytes:
        fields = {"resourceType": kind, "resourceName": resource, "name": name, "value": value}
        return _message("ConfigRecord", fields)

    data = top / "cluster" / "data"
    values = [
        topic("compacted", 1), config(2, "compacted", "cleanup.policy", "compact"),
        topic("deleted", 2), config(2, "deleted", "retention.ms", "86400000"),
        topic("forever", 3), config(2, "forever", "retention.ms", "-1"),
        topic("fresh", 4), config(4, "", "log.retention.ms", "3600000"),
        config(4, "", "log.cleanup.policy", "delete"),
    ]  # fmt: skip
    (data / "__cluster_metadata-0").mkdir(parents=True)
    (data / "__cluster_metadata-0" / "00000000000000000000.log").write_bytes(_values(values))
    for name, fixture in (("compacted-0", "v1-gzip.log"), ("deleted-0", "v1-none.log"),
                          ("forever-0", "v0-none.log"), ("fresh-0", "v2-lz4.log")):  # fmt: skip
        (data / name).mkdir()
        shutil.copy(FIXTURES / fixture, data / name / "00000000000000000000.log")


def _shim(top: Path) -> Path:
    """A ``kdump`` on PATH that runs this checkout with this interpreter."""
    bin_dir = top / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "kdump"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kafka_dump "$@"\n')
    shim.chmod(0o755)
    return bin_dir


def _env(top: Path, colour: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "KDUMP_PURE")}
    env.update(
        COLUMNS=str(COLUMNS), PYTHONPATH=str(ROOT), PATH=f"{top / '.bin'}{os.pathsep}{env.get('PATH', '')}"
    )
    env.update(
        {"FORCE_COLOR": "1", "TERM": "xterm-256color"} if colour else {"NO_COLOR": "1", "TERM": "dumb"}
    )
    return env


def run(command: str, top: Path, *, colour: bool = False) -> str:
    """What ``command`` prints (stdout, then stderr), its trailing newlines dropped."""
    done = subprocess.run(
        ["sh", "-c", command], cwd=top, env=_env(top, colour), capture_output=True, text=True, check=False
    )
    return f"{done.stdout}{done.stderr}".rstrip("\n")


def excerpt(text: str, start: str | None) -> list[str]:
    lines = text.split("\n")
    if start is None:
        return lines
    at = next((i for i, line in enumerate(lines) if _ANSI.sub("", line).startswith(start)), None)
    if at is None:
        raise SystemExit(f"capture: no line starts with {start!r} in the output")
    return ["...", *lines[at:]]


def text_capture(command: str, start: str | None, top: Path) -> str:
    """``$ COMMAND`` and what it prints, without colour, as a fenced text block."""
    lines = [f"$ {command}", *excerpt(run(command, top), start)]
    return "```text\n" + "".join(f"{line}\n" for line in lines) + "```\n"


def svg_capture(command: str, start: str | None, top: Path) -> str:
    """The same output with its colours, as Rich exports a console to SVG."""
    from rich.console import Console
    from rich.text import Text

    lines = [
        Text(f"$ {command}", style="bold"),
        *map(Text.from_ansi, excerpt(run(command, top, colour=True), start)),
    ]
    width = max(COLUMNS, *(line.cell_len for line in lines))  # a problem's line is wider than a table
    console = Console(
        record=True, width=width, file=io.StringIO(), force_terminal=True, color_system="truecolor"
    )
    for line in lines:
        console.print(line, overflow="ignore", crop=False, no_wrap=True)
    return console.export_svg(title="kdump", unique_id="kdump")


def regenerate(files: Iterable[Path], top: Path) -> tuple[dict[Path, str], dict[Path, str]]:
    """Each file's text with its captures made again, and the SVG files those captures name."""
    texts: dict[Path, str] = {}
    svgs: dict[Path, str] = {}
    made: dict[tuple[str, str | None, bool], str] = {}
    for path in files:
        old = path.read_text(encoding="utf-8")

        def block(m: re.Match[str], path: Path = path) -> str:
            attrs = dict(ATTR.findall(m["attrs"]))
            if set(attrs) - KNOWN or not re.fullmatch(r"[\w-]*", attrs.get("svg", "")):
                raise SystemExit(f'{path}: a capture takes from="TEXT" and svg="NAME", not{m["attrs"]}')
            command, start, svg = m["command"], attrs.get("from"), attrs.get("svg")
            key = (command, start, svg is not None)
            if key not in made:  # a command shown twice runs once: its side effects happen once
                made[key] = (text_capture if svg is None else svg_capture)(command, start, top)
            if svg is None:
                body = made[key]
            else:
                target = CAPTURES / f"{svg}.svg"
                if target in svgs:
                    raise SystemExit(f"{path}: two captures write {svg}.svg")
                svgs[target] = made[key]
                link = os.path.relpath(target, path.parent).replace(os.sep, "/")
                body = f"![$ {command}]({link})\n"
            head = m.group(0)[: m.start("body") - m.start()]
            return f"{head}{body}<!-- /capture -->"

        texts[path] = BLOCK.sub(block, old)
    return texts, svgs


def chart(results: dict[str, object]) -> str:
    """A bar chart of records per second, kdump against its peers, from the benchmark's results."""
    rows: list[tuple[str, str, float]] = []  # (group, label, records/s)
    cases = results.get("cases", {})
    assert isinstance(cases, dict)
    for case in cases.values():
        for table in case.get("tables", []):
            group = f"{table['case']} · {table['file']}"
            for line in table["lines"]:
                if line["side"] in ("kdump", "peer") and line.get("records_per_s"):
                    how = (
                        ""
                        if line.get("how") == "process" or "(process)" in line["label"]
                        else " (in process)"
                    )
                    rows.append((group, line["label"] + how, float(line["records_per_s"])))
    width, bar_x, row_h = 900, 420, 22
    top_pad, groups = 40, list(dict.fromkeys(g for g, _, _ in rows))
    height = top_pad + sum(row_h * (1 + sum(1 for g, _, _ in rows if g == grp)) for grp in groups) + 20
    most = max((r for _, _, r in rows), default=1.0)
    env, settings = results.get("environment", {}), results.get("settings", {})
    commit = env.get("commit", "?") if isinstance(env, dict) else "?"
    runs = settings.get("repeat", "?") if isinstance(settings, dict) else "?"
    records = settings.get("records", 0) if isinstance(settings, dict) else 0
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="22" font-size="14" font-weight="bold">Records per second: median of {runs} runs, '
        f"{records:,} records a file, kdump at {_esc(str(commit))} (blue) and its peers (grey)</text>",
    ]
    y = top_pad
    for grp in groups:
        out.append(f'<text x="10" y="{y + 15}" font-weight="bold">{_esc(grp)}</text>')
        y += row_h
        for g, label, rate in rows:
            if g != grp:
                continue
            w = max(1.0, (width - bar_x - 110) * rate / most)
            colour = "#1f77b4" if label.startswith("kdump") else "#aaaaaa"
            out.append(f'<text x="20" y="{y + 15}">{_esc(label[:60])}</text>')
            out.append(
                f'<rect x="{bar_x}" y="{y + 4}" width="{w:.1f}" height="{row_h - 8}" fill="{colour}"/>'
            )
            out.append(f'<text x="{bar_x + w + 6:.1f}" y="{y + 15}">{rate / 1e6:.2f}M/s</text>')
            y += row_h
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def everything(files: list[Path]) -> dict[Path, str]:
    """Every generated file's new content: the Markdown files, their SVGs, the speed chart."""
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp)
        _shim(top)
        make_data(top)
        texts, svgs = regenerate(files, top)
    made = {**texts, **svgs}
    if SPEED_JSON.exists():
        made[SPEED_SVG] = chart(json.loads(SPEED_JSON.read_text(encoding="utf-8")))
    return made


def main(argv: list[str]) -> int:
    args = argv[1:]
    check = "--check" in args
    named = [Path(a).resolve() for a in args if a != "--check"]
    made = everything(named or pages())
    stale = [p for p, text in made.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    if not named:  # a capture's SVG that no page makes any more
        stale += [p for p in CAPTURES.glob("*.svg") if p not in made]
    if check:
        for p in stale:
            print(f"{p.relative_to(ROOT)}: stale; run python tools/screenshots.py")
        return 1 if stale else 0
    for p in stale:
        if p not in made:
            p.unlink()
            continue
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(made[p], encoding="utf-8")
        tmp.replace(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
