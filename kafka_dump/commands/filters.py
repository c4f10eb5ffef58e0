"""The search options (``--key``, ``--key-re``, ``--grep``, ``--header``, ``--producer``, ``--transactional``,
``--control``), shared by the commands that read records: the command receives ``match: Match | None``."""

from __future__ import annotations

import binascii
import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

import click

from kafka_dump.commands.options import INT64
from kafka_dump.wire.match import BatchMatch, Match, RecordMatch, required_literal

F = TypeVar("F", bound=Callable[..., Any])

_OPTIONS = (
    click.option(
        "--key", metavar="TEXT", help="Only records whose key is exactly TEXT (or hex:…, base64:…)."
    ),
    click.option(
        "--key-re", metavar="RE", help="Only records whose key holds a match of RE (over its bytes)."
    ),
    click.option(
        "--grep", metavar="RE", help="Only records whose value holds a match of RE (over its bytes)."
    ),
    click.option(
        "--header",
        metavar="NAME[=VALUE]",
        help="Only records with a header NAME (whose value is exactly VALUE).",
    ),
    click.option("--producer", type=INT64, metavar="ID", help="Only records of batches of this producer id."),
    click.option(
        "--transactional", is_flag=True, help="Only records of transactional batches (markers included)."
    ),
    click.option("--control", is_flag=True, help="Only control records (transaction markers)."),
)


def exact_bytes(text: str, what: str) -> bytes:
    """The bytes a command-line word names: ``hex:…`` and ``base64:…`` exactly, ``text:…`` or any other
    word as its UTF-8 (bytes that were not UTF-8 in the argument pass through as they were)."""
    kind, sep, rest = text.partition(":")
    try:
        if sep and kind == "hex":
            return bytes.fromhex(rest)
        if sep and kind == "base64":
            import base64  # not at start-up: a listing loads no base64 module

            return base64.b64decode(rest, validate=True)
    except (ValueError, binascii.Error) as exc:
        raise click.BadParameter(f"{text!r} is not valid {kind}: {exc}", param_hint=what) from None
    if sep and kind == "text":
        text = rest
    return text.encode("utf-8", "surrogateescape")


def _search(pattern: str | None, what: str) -> re.Pattern[bytes] | None:
    """A regular expression over raw bytes: the pattern's UTF-8, so text matches as text and a
    byte that is not UTF-8 is matched as a byte (``\\xff``)."""
    if pattern is None:
        return None
    try:
        return re.compile(pattern.encode("utf-8", "surrogateescape"))
    except re.error as exc:
        raise click.BadParameter(f"{pattern!r} is not a regular expression: {exc}", param_hint=what) from None


def record_match(
    key: str | None, key_re: str | None, grep: str | None, header: str | None
) -> RecordMatch | None:
    """The record rules the options give, or None when they give none."""
    if key is None and key_re is None and grep is None and header is None:
        return None
    header_key = header_value = None
    if header is not None:
        name, sep, value = header.partition("=")
        header_key = name.encode("utf-8", "surrogateescape")
        header_value = exact_bytes(value, "--header") if sep else None
    key_search, value_search = _search(key_re, "--key-re"), _search(grep, "--grep")
    return RecordMatch(
        exact_bytes(key, "--key") if key is not None else None,
        None if key_search is None else key_search.search,
        None if value_search is None else value_search.search,
        header_key,
        header_value,
        None if key_search is None else required_literal(key_search),
        None if value_search is None else required_literal(value_search),
    )


def search_options(f: F) -> F:
    """The search options: the command receives ``match`` (None when no option is given)."""

    @functools.wraps(f)
    def wrapper(
        *args: Any,
        key: str | None,
        key_re: str | None,
        grep: str | None,
        header: str | None,
        producer: int | None,
        transactional: bool,
        control: bool,
        **kwargs: Any,
    ) -> Any:
        match = Match(BatchMatch(producer, transactional, control), record_match(key, key_re, grep, header))
        return f(*args, match=match if match.active else None, **kwargs)

    decorated: Any = wrapper
    for option in reversed(_OPTIONS):
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]
