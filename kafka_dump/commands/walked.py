"""What every command says of the files its walk passed over (``sources.Found.skipped``), in one
vocabulary: one stderr line per kind after a table, one ``skipped`` object at the end of JSON Lines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from kafka_dump.commands import EXIT_CORRUPT, EXIT_OK
from kafka_dump.errors import NotASegmentError
from kafka_dump.log.sources import LOOP, OTHER, STDIN, TRANSIENT, TWICE, UNREADABLE
from kafka_dump.render.output import Output

_SAID = {
    UNREADABLE: "could not be read (passed over)",
    LOOP: "a symlink loop (not followed)",
    TWICE: "reached a second time (read once)",
    TRANSIENT: "Kafka's transient files and directories (.deleted, .cleaned, .swap, -delete, -future, -stray; passed over)",
    OTHER: "not Kafka's files (passed over)",
}
_NAMED = 3  # paths named in a table's line; JSON names them all


def report_skipped(out: Output, skipped: dict[str, list[str]], *, as_json: bool, hint: str = "") -> None:
    """Say what was passed over: a ``{"type": "skipped"}`` line for JSON, else a line per kind on
    stderr. ``hint``: what reads Kafka's transient files in this command (``--transient``)."""
    if not skipped:
        return
    if as_json:
        obj = {"type": "skipped", "skipped": {k: {"count": len(v), "paths": v} for k, v in skipped.items()}}
        out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        return
    for kind, paths in skipped.items():
        names = ", ".join(paths[:_NAMED]) + (f" and {len(paths) - _NAMED} more" if len(paths) > _NAMED else "")
        said = _SAID[kind] + (f"; {hint} reads them" if kind == TRANSIENT and hint else "")
        out.diagnostic(f"{len(paths)} {said}: {names}")


def skipped_code(skipped: dict[str, list[str]]) -> int:
    """EXIT_CORRUPT when something could not be read, as for a file that cannot be opened."""
    return EXIT_CORRUPT if UNREADABLE in skipped else EXIT_OK


def no_stdin(paths: Sequence[str], why: str) -> None:
    """Refuse ``-`` for a command that needs a seekable file or a directory, in one line."""
    if STDIN in paths:
        raise NotASegmentError(f"standard input cannot be read here: {why}", file=STDIN)


def stdin_name_option(f: Any) -> Any:
    """``--name NAME``: what standard input (``-``) is called in the output."""
    return click.option(
        "--name", "stdin_name", metavar="NAME", help="The name shown for standard input (-); by default -."
    )(f)
