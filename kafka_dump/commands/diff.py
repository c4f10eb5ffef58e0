"""``kdump diff``: compare two replicas of a partition and find where they diverge."""

from __future__ import annotations

from collections.abc import Callable

import click

from kafka_dump.analysis.diff import (
    Damage,
    DiffOptions,
    Divergence,
    OneSide,
    diff,
    record_differences,
)
from kafka_dump.commands import EXIT_CORRUPT, EXIT_OK
from kafka_dump.commands.options import Limits, format_option, limit_options, output_options
from kafka_dump.render.output import Output


@click.command("diff")
@click.argument("a", metavar="A", type=click.Path(readable=False))
@click.argument("b", metavar="B", type=click.Path(readable=False))
@format_option(
    "table", "json", help="table: lines and side-by-side entries; json: one JSON object per finding."
)
@click.option("--all", "all_", is_flag=True, help="List every divergent stretch, not only the first.")
@click.option(
    "--records", is_flag=True, help="Decode the divergent entries and show the records that differ."
)
@click.option(
    "--verify", is_flag=True, help="Also compute every entry's CRC (otherwise the stored CRCs are compared)."
)
@limit_options
@output_options
def diff_command(
    a: str, b: str, out: Output, fmt: str, all_: bool, records: bool, verify: bool, limits: Limits
) -> int:
    """Compare two replicas of one partition (A and B: segments or partition directories).

    Both are walked by offset, across their segments (the boundaries may differ), and compared
    entry by entry: offsets, leader epoch, producer id/epoch/sequence, attributes, timestamps,
    record count and the stored CRC (which covers a v2 batch's records), then the bytes. The
    report gives the common offset range, the offsets only one side holds (retention at the
    start, a longer log at the end), the first divergence with both entries side by side, and
    damage on either side (the walk resyncs and goes on). The exit code is 0 when the replicas
    are identical over the common range, 1 when they diverge or one is damaged, 2 when one
    cannot be read.

    \b
    Examples:
      kdump diff broker1/my-topic-0/ broker2/my-topic-0/
      kdump diff --all --records a/my-topic-0/ b/my-topic-0/
      kdump diff --format json --verify a/my-topic-0/ b/my-topic-0/ | jq .
    """
    options = DiffOptions(all_, verify, **limits)
    paths = (a, b)
    first = True
    from kafka_dump.render import diff as render

    report, events = diff(a, b, options)
    say = _writer(out)
    if fmt == "table":
        say([(render.heading(a, b), "kdump.file")])
    for event in events:
        if out.closed:
            break
        if fmt == "json":
            out.write(render.event_json(event, paths) + "\n")
            if isinstance(event, Divergence) and records:
                out.write(render.records_json(event, record_differences(event, options)) + "\n")
        elif isinstance(event, OneSide):
            say([(render.only_line(event), None)])
        elif isinstance(event, Damage):
            say([(render.damage_line(event), "kdump.problem")])
        elif isinstance(event, Divergence):
            say(render.divergence_lines(event, report, first))
            if records:
                say(render.records_lines(record_differences(event, options)))
            first = False
        else:
            say([(line, None) for line in render.summary_lines(event, paths)])
    out.flush()
    return EXIT_OK if report.identical else EXIT_CORRUPT


def _writer(out: Output) -> Callable[[list[tuple[str, str | None]]], None]:
    """Write lines, each in its theme style when stdout shows colour (Rich is loaded only then)."""

    def write(lines: list[tuple[str, str | None]]) -> None:
        if not out.color:
            out.write("".join(text + "\n" for text, _ in lines))
            return
        from kafka_dump.render.theme import sgr

        parts = []
        for text, style in lines:
            start, end = sgr(style) if style else ("", "")
            parts.append(f"{start}{text}{end}\n")
        out.write("".join(parts))

    return write
