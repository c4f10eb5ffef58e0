"""What every command says of the files its walk passed over (``sources.Found.skipped``), in one
vocabulary: one stderr line per kind after a table, one ``skipped`` object at the end of JSON Lines."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from kafka_dump.commands import EXIT_CORRUPT, EXIT_OK
from kafka_dump.errors import NotASegmentError
from kafka_dump.log.sources import LOOP, OTHER, STDIN, TRANSIENT, TWICE, UNREADABLE
from kafka_dump.render.output import Output

# What each kind is called on a table's stderr line: (one, several).
_SAID = {
    UNREADABLE: ("path that could not be read", "paths that could not be read"),
    LOOP: ("symlink loop, not followed", "symlink loops, not followed"),
    TWICE: (
        "path reached again through a symlink, read once",
        "paths reached again through a symlink, read once",
    ),
    TRANSIENT: (
        "transient file or directory of Kafka's (.deleted, .cleaned, .swap, -delete, -future, -stray), passed over",
        "transient files and directories of Kafka's (.deleted, .cleaned, .swap, -delete, -future, -stray), passed over",
    ),
    OTHER: ("file that is not Kafka's, passed over", "files that are not Kafka's, passed over"),
}
_NAMED = 3  # paths named in a table's line; JSON names them all


def report_skipped(out: Output, skipped: dict[str, list[str]], *, as_json: bool, hint: str = "") -> None:
    """Say what was passed over: a ``{"type": "skipped"}`` line for JSON, else a line per kind on
    stderr. ``hint``: the option that reads Kafka's transient files in this command."""
    if not skipped:
        return
    if as_json:
        import json

        from kafka_dump.render.jsonl import terminal_safe

        obj = {"type": "skipped", "skipped": {k: {"count": len(v), "paths": v} for k, v in skipped.items()}}
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"
        out.write_bytes(terminal_safe(text.encode("utf-8", "backslashreplace")))
        return
    for kind, paths in skipped.items():
        names = ", ".join(paths[:_NAMED]) + (
            f" and {len(paths) - _NAMED:,} more" if len(paths) > _NAMED else ""
        )
        said = _SAID[kind][len(paths) > 1] + (f" ({hint} reads them)" if kind == TRANSIENT and hint else "")
        out.diagnostic(f"{len(paths):,} {said}: {names}")


def skipped_code(skipped: dict[str, list[str]]) -> int:
    """EXIT_CORRUPT when something could not be read, as for a file that cannot be opened."""
    return EXIT_CORRUPT if UNREADABLE in skipped else EXIT_OK


def no_stdin(paths: Sequence[str], why: str) -> None:
    """Refuse ``-`` for a command that needs a seekable file or a directory, in one line."""
    if STDIN in paths:
        raise NotASegmentError(f"standard input cannot be read here: {why}", file=STDIN)


def store_options(f: Any) -> Any:
    """``--storage-option KEY=VALUE`` (for fsspec) and ``--rsa-key [ID=]PEM`` (a tiered-storage key
    pair's private key): how the sources in object stores are reached and read, as ``store``."""
    import functools

    @click.option(
        "--storage-option",
        "storage_options",
        multiple=True,
        metavar="KEY=VALUE",
        help="An option for the object store's fsspec backend (s3://, gs://, az://); repeatable.",
    )
    @click.option(
        "--rsa-key",
        "rsa_keys",
        multiple=True,
        metavar="[ID=]PEM",
        help="The RSA private key (PEM) of a tiered-storage key pair, for encrypted objects; repeatable.",
    )
    @functools.wraps(f)
    def wrapper(
        *args: Any, storage_options: tuple[str, ...], rsa_keys: tuple[str, ...], **kwargs: Any
    ) -> Any:
        from kafka_dump.log.remote import Store

        return f(*args, store=Store(_pairs(storage_options, "--storage-option"), _keys(rsa_keys)), **kwargs)

    return wrapper


def _pairs(given: tuple[str, ...], option: str) -> dict[str, str]:
    out = {}
    for item in given:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint=option)
        out[key] = value
    return out


def _keys(given: tuple[str, ...]) -> dict[str, str]:
    """``ID=PEM`` or ``PEM`` (for any key id) -> {id: PEM file}; a PEM file that holds = is taken whole
    when it exists."""
    import os

    out = {}
    for item in given:
        key_id, sep, pem = item.partition("=")
        if not sep or os.path.exists(item):
            key_id, pem = "", item
        if not os.path.isfile(pem):
            raise click.BadParameter(f"{pem!r}: no such key file", param_hint="--rsa-key")
        out[key_id] = pem
    return out


def stdin_name_option(f: Any) -> Any:
    """``--name NAME``: what standard input (``-``) is called in the output."""
    return click.option(
        "--name", "stdin_name", metavar="NAME", help="The name shown for standard input (-); by default -."
    )(f)
