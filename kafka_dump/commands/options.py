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
import io
import re
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any, TextIO, TypedDict, TypeVar

import click

from kafka_dump.render.output import COLOR_MODES, ColorMode, Output
from kafka_dump.wire.codecs import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_RECORDS_PER_BATCH

F = TypeVar("F", bound=Callable[..., Any])
TRACEBACK = "kdump.traceback"  # ctx.meta key that --traceback sets, read by cli.py's error edge

INT64 = click.IntRange(-(2**63), 2**63 - 1)  # a value Kafka stores as a 64-bit field (a timestamp)
COUNT = click.IntRange(1, 2**63 - 1)  # a size or count: 1 or more, and no wider than C's ssize_t
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MS = timedelta(milliseconds=1)


def parse_time(value: str | None) -> int | None:
    """Epoch milliseconds, or an ISO-8601 time (UTC unless it says otherwise), in exact integer ms."""
    if value is None:
        return None
    if value.lstrip("-").isdigit():
        ms = int(value)
        if not -(2**63) <= ms < 2**63:
            raise click.BadParameter(f"{value} is not in the range {-(2**63)}<=x<={2**63 - 1}.")
        return ms
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is neither epoch milliseconds nor an ISO-8601 time") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return (dt - _EPOCH) // _MS


def _time_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    return parse_time(value)


def time_option(*names: str, **kwargs: Any) -> Callable[[F], F]:
    """An option that takes a time: ISO-8601 (UTC unless it says) or epoch ms; passed as epoch ms."""
    return click.option(*names, callback=_time_callback, metavar="TIME", **kwargs)


# Binary units, as the README counts bytes; the decimal ones as their names say (kB, MB, GB).
_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3}
_UNITS.update(
    {unit: 1024**power for power, letter in enumerate("kmg", 1) for unit in (letter, f"{letter}ib")}
)
_SIZE = re.compile(r"\s*([0-9]+)\s*([a-z]*)\s*")


class ByteSize(click.ParamType[int]):
    """A size in bytes: ``1048576``, ``256MiB``, ``64k``, ``1GB``; K, M and G are binary (KiB...)."""

    name = "size"

    def __init__(self, min: int = 1) -> None:
        self.min = min

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            n = value
        else:
            match = _SIZE.fullmatch(str(value).lower())
            if match is None or match.group(2) not in _UNITS:
                self.fail(
                    f"{value!r} is not a size (bytes, or a number with KiB, MiB, GiB, kB, MB or GB)",
                    param,
                    ctx,
                )
            n = int(match.group(1)) * _UNITS[match.group(2)]
        if n < self.min:
            self.fail(f"{value!r} is less than {self.min} byte{'s' if self.min != 1 else ''}", param, ctx)
        if n > COUNT.max:  # type: ignore[operator]
            self.fail(f"{n} is not in the range {self.min}<=x<={COUNT.max}.", param, ctx)
        return n


def size_option(*names: str, **kwargs: Any) -> Callable[[F], F]:
    """An option that takes a size in bytes, with or without a unit (``ByteSize``)."""
    return click.option(*names, type=ByteSize(), **kwargs)


def only_with_formats(fmt: str, applies: dict[str, tuple[str, ...]]) -> None:
    """Refuse an option given on the command line that the chosen ``--format`` does not use:
    ``applies`` maps a parameter's name to the formats that use it."""
    ctx = click.get_current_context()
    for name, formats in applies.items():
        if fmt in formats or ctx.get_parameter_source(name) in (None, click.core.ParameterSource.DEFAULT):
            continue
        option = next(p for p in ctx.command.params if p.name == name)
        spelled = max(option.opts, key=len)
        which = " or ".join(f"--format {f}" for f in formats)
        raise click.UsageError(f"{spelled} applies to {which} only, not to --format {fmt}")


def inputs(f: F) -> F:
    """``FILE|DIR...``: segment files, or partition directories (their segments in offset order)."""
    # A click.Path: shell completion offers file names (kdump checks the paths itself, in one line).
    return click.argument(
        "paths", nargs=-1, required=True, metavar="FILE|DIR...", type=click.Path(readable=False)
    )(f)


def segment_paths(paths: Sequence[str], out: Output) -> tuple[str, ...]:
    """``paths`` less the side files named among them (an index, a checkpoint...), each named on stderr
    with where its entries are shown: for the commands that count segments, not read them all."""
    import os

    from kafka_dump.log.names import side_file_kind

    kept = []
    for p in paths:
        kind = None if os.path.isdir(p) else side_file_kind(p)
        if kind is None:
            kept.append(p)
        else:
            out.diagnostic(f"{p}: a side file ({kind}), not a segment: `kdump dump` shows its entries")
    return tuple(kept)


def dask_option(f: F) -> F:
    """``--dask SCHEDULER_ADDRESS``: the per-file work on an existing Dask cluster (the dask extra)."""
    return click.option(
        "--dask", "dask", metavar="SCHEDULER_ADDRESS",
        help="Run the per-file work on this Dask cluster (tcp://host:8786; pip install 'kdump[dask]'); "
        "the output is a local run's.",
    )(f)  # fmt: skip


def count_option(*names: str, **kwargs: Any) -> Callable[[F], F]:
    """An option that takes a whole number, 1 or more (``COUNT``)."""
    return click.option(*names, type=COUNT, **kwargs)


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
    time_option("--from-time", help="Only records at or after this time (ISO-8601 or epoch ms)."),
    time_option("--to-time", help="Only records at or before this time (ISO-8601 or epoch ms)."),
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

        fields = [kwargs.pop(name) for name in ("from_offset", "to_offset", "from_time", "to_time", "limit")]
        for low, high, what in ((*fields[0:2], "offset"), (*fields[2:4], "time")):
            if low is not None and high is not None and low > high:
                raise click.UsageError(f"--from-{what} {low} is past --to-{what} {high}: no record can match")
        return f(*args, rng=RangeFilter(*fields), **kwargs)

    return _stacked(wrapper, _RANGE)  # type: ignore[no-any-return]


_LIMITS = (
    click.option(
        "--max-batch-bytes", type=ByteSize(), default=DEFAULT_MAX_BATCH_BYTES,
        help="A batch that decompresses past this size (default 256MiB) is reported as a problem.",
    ),
    click.option(
        "--max-records-per-batch", type=COUNT, default=DEFAULT_MAX_RECORDS_PER_BATCH,
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
        help="Colour of the tables: auto (a terminal, unless NO_COLOR is set), always (for less -R) or never; "
        "json and Kafka's lines are never coloured.",
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


def escape_unencodable(stream: TextIO) -> None:
    """Write what ``stream``'s encoding cannot hold (``PYTHONIOENCODING=latin-1``, a POSIX locale) as
    backslash escapes, as Python already does on stderr, instead of failing on the first one."""
    if isinstance(stream, io.TextIOWrapper) and stream.errors in ("strict", "surrogateescape"):
        stream.reconfigure(errors="backslashreplace")


def output_options(f: F) -> F:
    """``--color auto|always|never``, ``--progress/--no-progress``: the command receives ``out: Output``;
    ``--traceback``: read by ``cli.py`` alone."""

    @functools.wraps(f)
    def wrapper(*args: Any, color: ColorMode, progress: bool | None, **kwargs: Any) -> Any:
        escape_unencodable(sys.stdout)
        return f(*args, out=Output(color, progress=progress), **kwargs)

    return _stacked(wrapper, _OUTPUT)  # type: ignore[no-any-return]
