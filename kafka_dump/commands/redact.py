"""``kdump redact``: a copy of a segment, a partition or a log dir that support can read, with the
bytes producers chose replaced by pseudonyms and the damage kept where it was (``analysis/redact.py``).

Exit codes: 0 redacted; 1 redacted, and the input holds damage (kept, as it was, in the output) or
a path of the walk could not be read;
2 a bad option, an unreadable input, a refused output.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from kafka_dump.commands import EXIT_CORRUPT, EXIT_OK
from kafka_dump.commands.options import Limits, format_option, limit_options, output_options
from kafka_dump.commands.walked import skipped_code
from kafka_dump.errors import KafkaDumpError
from kafka_dump.render.output import Output
from kafka_dump.render.progress import file_size

if TYPE_CHECKING:
    from kafka_dump.analysis.pseudonyms import Pseudonyms
    from kafka_dump.analysis.redact import FileReport, Watch
    from kafka_dump.analysis.redact_names import Renamer
    from kafka_dump.log.segment import Item


@click.command()
@click.argument("input_path", metavar="FILE|DIR", type=click.Path(path_type=Path))
@click.option("-o", "--output", required=True, type=click.Path(path_type=Path),
              help="The redacted copy: a file for a segment, a directory of the same shape for a directory.")  # fmt: skip
@click.option("--secret-file", type=click.Path(dir_okay=False, path_type=Path),
              help="The secret the pseudonyms are keyed by (HMAC-SHA256): the same file gives the same "
              "pseudonyms in every run. Default: a random secret, never written anywhere.")  # fmt: skip
@click.option("--keep-prefix", type=click.IntRange(min=0), metavar="N",
              help="Keep the first N bytes of every value (default: a Schema Registry prefix, 5 bytes, where a value has one).")  # fmt: skip
@click.option("--json", "json_values", is_flag=True,
              help="Values that are JSON keep their shape: only their string and number leaves are replaced.")  # fmt: skip
@click.option("--map", "map_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write each pseudonym and its original to this file (mode 0600), to trace a finding back.")  # fmt: skip
@click.option("--names", "names_too", is_flag=True,
              help="Also replace topic names, group ids, transactional ids and group members' client ids and hosts: in "
              "Kafka's own topics' records (__consumer_offsets, __transaction_state, __cluster_metadata...) and in "
              "the partition directories' names.")  # fmt: skip
@click.option("--force", is_flag=True, help="Replace existing output files (never the input).")
@format_option("table", "json", help="The summary: lines on stderr, or one JSON object per file on stdout.")
@limit_options
@output_options
def redact(
    input_path: Path,
    out: Output,
    output: Path,
    secret_file: Path | None,
    keep_prefix: int | None,
    json_values: bool,
    map_path: Path | None,
    names_too: bool,
    force: bool,
    fmt: str,
    limits: Limits,
) -> int:
    """Copy segments with every key, value and header value replaced by a pseudonym.

    FILE|DIR is a segment, a partition directory or a log dir; OUTPUT has the same shape, side files
    included. Offsets, timestamps, attributes, codecs, producer fields, header keys, control batches
    and Kafka's own topics are kept (with --names, not their topic names, group ids and transactional
    ids, nor the partition directories' names); a pseudonym has its original's length, and equal originals get
    equal pseudonyms (null stays null, printable ASCII stays printable ASCII). Damage stays where
    it was: verify-crc reports the same problems on the copy. The input is never written to.

    \b
    Examples:
      kdump redact 00000000000000000000.log -o for-support.log
      kdump redact --secret-file ~/.kdump-secret my-topic-0/ -o my-topic-0.redacted/
      kdump redact --json --map mapping.jsonl /var/lib/kafka/data -o data.redacted/
      kdump redact --names /var/lib/kafka/data -o data.redacted/
    """
    from kafka_dump.analysis import redact as engine
    from kafka_dump.analysis.pseudonyms import Pseudonyms, secret
    from kafka_dump.analysis.redact_names import Renamer
    from kafka_dump.log.sources import SEGMENT, SNAPSHOT, find

    if str(input_path) == "-":
        raise KafkaDumpError("standard input cannot be redacted: give a file or directory", file="-")
    if not input_path.exists():
        raise KafkaDumpError("no such file or directory", file=str(input_path))
    engine.check_paths(input_path, output)
    key = secret(None if secret_file is None else str(secret_file))
    found = find([str(input_path)])
    is_dir = input_path.is_dir()
    if is_dir:
        output.mkdir(parents=True, exist_ok=True)
    elif output.is_dir():
        output = output / input_path.name
    mapping = _open_map(map_path, force) if map_path is not None else None
    names = Pseudonyms(key, keep_prefix=keep_prefix, json_values=json_values, mapping=mapping)
    renamer = Renamer(names) if names_too else None
    reports: list[FileReport] = []
    watch = _watch(out, sum(file_size(s) for s in found.sources if s.kind == SEGMENT))
    try:
        segments = {Path(s.path) for s in found.sources if s.kind == SEGMENT}
        for source in found.sources:
            src = Path(source.path)
            relative = src.relative_to(input_path) if is_dir else None
            if relative is not None and renamer is not None:
                relative = Path(renamer.path(relative))
            dst = (
                output / relative
                if relative is not None
                else (output if src == input_path else output.parent / src.name)
            )
            if src.suffix == ".index" and src.with_suffix(".log") in segments:
                continue  # written with its segment, at the new positions
            dst.parent.mkdir(parents=True, exist_ok=True)
            # a KRaft snapshot holds Kafka's own records: copied, but renamed with the log under --names
            if source.kind == SEGMENT or (source.kind == SNAPSHOT and renamer is not None):
                reports.append(
                    engine.redact_segment(
                        src, dst, names, force=force, watch=watch, renamer=renamer, **limits
                    )
                )
            else:
                reports.append(engine.copy_side_file(src, dst, force=force))
    finally:
        if mapping is not None:
            mapping.close()
    _summary(out, reports, names, renamer, found.skipped, fmt)
    return max(EXIT_CORRUPT if any(r.problems for r in reports) else EXIT_OK, skipped_code(found.skipped))


def _watch(out: Output, total: int) -> Watch | None:
    """The progress bar, when one is wanted: bytes of input done, of ``total``."""
    if not out.progress:
        return None
    from kafka_dump.analysis.convert_run import progress_position

    def watch(runs: Iterator[Sequence[Item]]) -> Iterator[Sequence[Item]]:
        return iter(out.track(runs, lambda run: progress_position(run[-1]), total))

    return watch


def _open_map(path: Path, force: bool) -> TextIO:
    """``--map``'s file, readable by its owner alone (it holds the originals)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (0 if force else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        raise KafkaDumpError("already exists (not overwritten unless asked)", file=str(path)) from None
    except OSError as exc:
        raise KafkaDumpError(exc.strerror or str(exc), file=str(path)) from None
    return os.fdopen(fd, "w", encoding="utf-8")


def _summary(
    out: Output,
    reports: list[FileReport],
    names: Pseudonyms,
    renamer: Renamer | None,
    skipped: dict[str, list[str]],
    fmt: str,
) -> None:
    """What was replaced, what was kept and why, per field: lines on stderr, or JSON on stdout."""
    if fmt == "json":
        for r in reports:
            out.write(json.dumps({"type": "file", "file": r.src, "output": r.dst, "copied": r.copied,
                                  "entries": r.entries, "records": r.records, "encoded": r.encoded,
                                  "kept": r.kept, "scrubbed": r.scrubbed, "scrubbedBytes": r.scrubbed_bytes,
                                  "problems": r.problems, "bytesIn": r.bytes_in, "bytesOut": r.bytes_out}) + "\n")  # fmt: skip
        renamed = (
            {} if renamer is None else {"rewrittenRecords": renamer.rewritten, "keptRecords": renamer.kept}
        )
        out.write(json.dumps({"type": "summary", "redactedBytes": names.counts, "keptBytes": names.kept,
                              **renamed, "skipped": skipped}) + "\n")  # fmt: skip
        out.flush()
        return
    from kafka_dump.render.theme import number, plural

    segs = [r for r in reports if not r.copied]
    entries = sum(r.entries for r in segs)
    lines = [f"Redacted {plural(len(segs), 'segment')} ({number(entries)} {'entry' if entries == 1 else 'entries'}, "
             f"{plural(sum(r.records for r in segs), 'record')}); {plural(len(reports) - len(segs), 'side file')} copied"]  # fmt: skip
    for field_name in ("key", "value", "header"):
        lines.append(f"  {field_name}s: {number(names.counts.get(field_name, 0))} bytes replaced")
    if renamer is not None:
        from kafka_dump.analysis.redact_names import KINDS

        told = ", ".join(f"{kind}s {number(names.counts.get(kind, 0))} bytes" for kind in KINDS)
        lines.append(
            f"  names replaced: {told}, in {plural(renamer.rewritten, 'record')} of Kafka's own topics"
        )
        for why, n in renamer.kept.items():
            lines.append(f"  names kept: {plural(n, 'record')} ({why})")
    kept = sum(r.kept for r in segs)
    if kept:
        lines.append(
            f"  kept as they are: {number(kept)} {'entry' if kept == 1 else 'entries'} (control batches, Kafka's own topics)"
        )
    for why, n in names.kept.items():
        lines.append(f"  kept: {number(n)} bytes ({why})")
    scrubbed = sum(r.scrubbed for r in segs)
    if scrubbed:
        lines.append(f"  damaged regions: {plural(scrubbed, 'region')}, framing kept, "
                     f"{number(sum(r.scrubbed_bytes for r in segs))} bytes replaced")  # fmt: skip
    problems: dict[str, int] = {}
    for r in segs:
        for k, v in r.problems.items():
            problems[k] = problems.get(k, 0) + v
    if problems:
        lines.append(
            "  problems in the input, kept: " + ", ".join(f"{k} {v}" for k, v in sorted(problems.items()))
        )
    for kind, paths in skipped.items():
        lines.append(f"  not copied ({kind}): {', '.join(paths[:3])}{' …' if len(paths) > 3 else ''}")
    for line in lines:
        out.write_err(line + "\n")
