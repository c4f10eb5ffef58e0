"""Option decorators shared by the commands, so every command spells, parses and documents them alike.

Stack them under ``@click.command()``::

    @click.command()
    @inputs                 # gives ``paths``
    @format_option("table", "json")
    @range_options          # gives the command one ``rng: RangeFilter`` argument
    @limit_options          # gives ``limits: Limits``
    @output_options         # gives ``out: Output`` (--color, --progress); --traceback is read by cli.py
    def verify(paths, out, fmt, rng, limits) -> int: ...
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, TypedDict, TypeVar

import click

from kafka_dump.render.output import COLOR_MODES, ColorMode, Output
from kafka_dump.wire.codecs import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_RECORDS_PER_BATCH

F = TypeVar("F", bound=Callable[..., Any])
TRACEBACK = "kdump.traceback"  # ctx.meta key that --traceback sets, read by cli.py's error edge

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MS = timedelta(milliseconds=1)


def parse_time(value: str | None) -> int | None:
    """Epoch milliseconds, or an ISO-8601 time (UTC unless it says otherwise), in exact integer ms."""
    if value is None:
        return None
    if value.lstrip("-").isdigit():
        return int(value)
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is neither epoch milliseconds nor an ISO-8601 time") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return (dt - _EPOCH) // _MS


def inputs(f: F) -> F:
    """``FILE|DIR...``: segment files, or partition directories (their segments in offset order)."""
    return click.argument("paths", nargs=-1, required=True, metavar="FILE|DIR...")(f)


def count_option(*names: str, **kwargs: Any) -> Callable[[F], F]:
    """An option that takes a whole number, 1 or more."""
    return click.option(*names, type=click.IntRange(min=1), **kwargs)


def format_option(
    *choices: str, default: str | None = None, help: str = "Output format."
) -> Callable[[F], F]:
    """``--format`` among ``choices`` (the first is the default unless ``default`` says); passed as ``fmt``."""
    return click.option(
        "--format", "fmt", type=click.Choice(list(choices)), default=default or choices[0],
        show_default=True, help=help,
    )  # fmt: skip


_RANGE = (
    click.option("--from-offset", type=int, help="Only records at or after this offset."),
    click.option("--to-offset", type=int, help="Only records at or before this offset."),
    *(
        click.option(
            f"--{end}-time",
            callback=lambda ctx, param, value: parse_time(value),
            help=f"Only records at or {when} this time (ISO-8601 or epoch ms).",
        )
        for end, when in (("from", "after"), ("to", "before"))
    ),
    click.option(
        "--limit", type=click.IntRange(min=0), help="Stop after N records (N batches with --batches-only)."
    ),
)


def _stacked(f: Any, options: Sequence[Callable[[Any], Any]]) -> Any:
    for option in reversed(options):
        f = option(f)
    return f


def range_options(f: F) -> F:
    """``--from/--to-offset``, ``--from/--to-time``, ``--limit``: the command receives ``rng: RangeFilter``."""

    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        # Imported here: a command without range options (stats) need not load the dump analysis.
        from kafka_dump.analysis.dump import RangeFilter

        fields = (kwargs.pop(name) for name in ("from_offset", "to_offset", "from_time", "to_time", "limit"))
        return f(*args, rng=RangeFilter(*fields), **kwargs)

    return _stacked(wrapper, _RANGE)  # type: ignore[no-any-return]


_LIMITS = (
    click.option(
        "--max-batch-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BATCH_BYTES, show_default=True,
        help="A batch that decompresses past this size is reported as a problem.",
    ),
    click.option(
        "--max-records-per-batch", type=click.IntRange(min=1), default=DEFAULT_MAX_RECORDS_PER_BATCH,
        show_default=True,
        help="A batch declaring more records (a wrapper holding more messages) is reported as a problem.",
    ),
)  # fmt: skip


class Limits(TypedDict):
    """What a batch may hold before it is a problem, not a crash; the readers take it as ``**limits``."""

    max_batch_bytes: int
    max_records_per_batch: int


def limit_options(f: F) -> F:
    """``--max-batch-bytes``, ``--max-records-per-batch``: the command receives ``limits: Limits``."""

    @functools.wraps(f)
    def wrapper(*args: Any, max_batch_bytes: int, max_records_per_batch: int, **kwargs: Any) -> Any:
        limits = Limits(max_batch_bytes=max_batch_bytes, max_records_per_batch=max_records_per_batch)
        return f(*args, limits=limits, **kwargs)

    return _stacked(wrapper, _LIMITS)  # type: ignore[no-any-return]


def _set_traceback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[TRACEBACK] = True


_OUTPUT = (
    click.option(
        "--color", type=click.Choice(list(COLOR_MODES)), default="auto", show_default=True,
        help="Colour: auto (a terminal, unless NO_COLOR is set), always (for less -R) or never.",
    ),
    click.option(
        "--progress/--no-progress", default=None,
        help="A progress bar on stderr (file, bytes done of the total, rate, time left), or none. "
        "Default: when stderr is a terminal and stdout is not a pipe, after a second of work.",
    ),
    click.option(
        "--traceback", is_flag=True, expose_value=False, callback=_set_traceback,
        help="On an error, show the Python traceback instead of one line.",
    ),
)  # fmt: skip


def output_options(f: F) -> F:
    """``--color auto|always|never``, ``--progress/--no-progress``: the command receives ``out: Output``;
    ``--traceback``: read by ``cli.py`` alone."""

    @functools.wraps(f)
    def wrapper(*args: Any, color: ColorMode, progress: bool | None, **kwargs: Any) -> Any:
        return f(*args, out=Output(color, progress=progress), **kwargs)

    return _stacked(wrapper, _OUTPUT)  # type: ignore[no-any-return]
