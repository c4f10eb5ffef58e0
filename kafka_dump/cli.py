"""The ``kdump`` group and the error and exit-code edge; each command lives in ``commands/NAME.py``.

Exit codes: 0 all good; 1 corrupt data was found (and reported in place); 2 the input could not be
read at all (missing file, not a segment, bad option). A command returns 0 or 1; the group turns a
``KafkaDumpError`` into one line on stderr and exit 2, and ends quietly on a closed pipe.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Any

import click

from kafka_dump import __version__
from kafka_dump.commands import EXIT_BAD_INPUT, EXIT_OK
from kafka_dump.commands.convert import convert
from kafka_dump.commands.dump import dump
from kafka_dump.commands.options import TRACEBACK, parse_time
from kafka_dump.commands.stats import stats
from kafka_dump.commands.verify import verify_crc
from kafka_dump.errors import KafkaDumpError
from kafka_dump.format import ACTIVE_TWIN
from kafka_dump.render.payload import printable

__all__ = ["main", "parse_time"]


class _Kdump(click.Group):
    """``kdump FILE`` means ``kdump dump FILE``; and the one place where errors become exit codes."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = next((a for a in args if not a.startswith("-")), None)
        wants_help = any(a in ("--help", "-h", "--version") for a in args)
        if not wants_help and args and (first is None or first not in self.commands):
            args = ["dump", *args]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command: its returned code is the exit code; library errors are one line and exit 2."""
        try:
            code = super().invoke(ctx)
            sys.stdout.flush()
        except KafkaDumpError as exc:
            if ctx.meta.get(TRACEBACK):
                traceback.print_exc()
            click.echo(f"kdump: error: {printable(str(exc))}", err=True)
            ctx.exit(EXIT_BAD_INPUT)
        except BrokenPipeError:
            # Python flushes stdout again at exit; point it at /dev/null so that flush cannot fail.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(EXIT_OK)
        if isinstance(code, int) and code != EXIT_OK:
            ctx.exit(code)
        return code


@click.group(cls=_Kdump, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, message=f"kdump %(version)s (decoder: {ACTIVE_TWIN})")
def main() -> None:
    """Inspect Apache Kafka log segments: every message format (v0, v1, v2) and codec.

    \b
    Example:
      kdump 00000000000000000000.log            # same as: kdump dump FILE
      kdump dump --format json my-topic-0/ | jq .
    """


main.add_command(dump)
main.add_command(convert)
main.add_command(stats)
main.add_command(verify_crc)
